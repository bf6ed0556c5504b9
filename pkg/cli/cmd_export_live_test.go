package cli

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"go.yaml.in/yaml/v3"

	"github.com/mqctl/mqctl/internal/testbroker"
	"github.com/mqctl/mqctl/pkg/kind"
	"github.com/mqctl/mqctl/pkg/loader"
	"github.com/mqctl/mqctl/pkg/topology"
)

func runLive(t *testing.T, args ...string) (string, string, int) {
	t.Helper()
	return runLiveEnv(t, func(string) (string, bool) { return "", false }, args...)
}

func runLiveEnv(t *testing.T, lookup func(string) (string, bool), args ...string) (string, string, int) {
	t.Helper()
	var out, errb bytes.Buffer
	env := Env{Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errb, LookupEnv: lookup}
	code := Main(context.Background(), args, env)
	return out.String(), errb.String(), code
}

// exportVariables reads the variables export names on stderr after its
// note ("  NAME: the password of user \"u\""), by what they stand for.
func exportVariables(t *testing.T, stderr string) map[string]string {
	t.Helper()
	const note = "mqctl: note: the export holds no secret; set these variables before applying it:\n"
	i := strings.Index(stderr, note)
	if i < 0 {
		t.Fatalf("stderr lacks the note %q:\n%s", note, stderr)
	}
	out := map[string]string{}
	for _, line := range strings.Split(stderr[i+len(note):], "\n") {
		if !strings.HasPrefix(line, "  ") {
			break
		}
		name, what, ok := strings.Cut(strings.TrimSpace(line), ": ")
		if !ok {
			t.Fatalf("note line %q is not NAME: WHAT", line)
		}
		out[what] = name
	}
	return out
}

// onlyUser removes from the export's users section every user but name.
func onlyUser(t *testing.T, export, name string) string {
	t.Helper()
	var doc yaml.Node
	if err := yaml.Unmarshal([]byte(export), &doc); err != nil {
		t.Fatal(err)
	}
	root := doc.Content[0]
	for i := 0; i+1 < len(root.Content); i += 2 {
		if root.Content[i].Value != "users" {
			continue
		}
		users := root.Content[i+1]
		var kept []*yaml.Node
		for j := 0; j+1 < len(users.Content); j += 2 {
			if users.Content[j].Value == name {
				kept = append(kept, users.Content[j], users.Content[j+1])
			}
		}
		users.Content = kept
	}
	data, err := yaml.Marshal(&doc)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

// TestExportLive applies a file with DLQ pairs and delay tiers to a fresh
// vhost, exports the vhost from the broker, and checks that the export is
// written with sugar, loads into the same topology, and plans no changes.
//
// The export holds the broker's users, each password a ${VAR} placeholder
// that export names on stderr; no password hash appears anywhere. The
// export's users section speaks for every user mqctl made, so the test
// holds the users lock.
func TestExportLive(t *testing.T) {
	t.Parallel()
	br := testbroker.New(t)
	br.UsersSection(t)
	vh := br.Vhost(t)
	conn := []string{"--server", br.URL, "--username", br.Username, "--password", br.Password}
	src := strings.ReplaceAll(`version: 1
vhosts:
  VHOST:
    exchanges:
      orders: { type: topic }
      orders.dlx: { type: topic }
      audit: { type: fanout, internal: true }
    queues:
      orders.shipping:
        type: quorum
        bindings: [{ exchange: orders, routing_keys: [order.created, order.paid] }]
        dead_letter: { exchange: orders.dlx, queue: orders.shipping.dlq }
        retry: { delays: [10s, 1m] }
        limits: { max_length: 1000, overflow: reject-publish }
    bindings:
      - { source: orders, destination: audit, destination_type: exchange, routing_key: "#" }
    policies:
      cap: { pattern: "^orders\\.", apply_to: queues, definition: { max-length-bytes: 1048576 } }
`, "VHOST", vh)
	file := t.TempDir() + "/topology.yaml"
	writeFile(t, file, src)
	if out, errs, code := runLive(t, append([]string{"apply", "-f", file, "--auto-approve", "--quiet"}, conn...)...); code != 0 {
		t.Fatalf("apply: exit %d\n%s\n%s", code, out, errs)
	}

	out, errs, code := runLive(t, append([]string{"export", "--vhost", vh}, conn...)...)
	if code != 0 {
		t.Fatalf("export: exit %d: %s", code, errs)
	}
	for _, want := range []string{"queue: orders.shipping.dlq", "retry: {delays: [10s, 1m]}", "internal: true"} {
		if !strings.Contains(out, want) {
			t.Errorf("export lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "mqctl.ownership") || strings.Contains(out, "mqctl.lock") {
		t.Errorf("export must leave out mqctl's own bookkeeping:\n%s", out)
	}
	// The broker's user is exported with a placeholder for its password,
	// named on stderr; its hash is nowhere.
	vars := exportVariables(t, errs)
	pwVar, ok := vars[fmt.Sprintf("the password of user %q", br.Username)]
	if !ok {
		t.Fatalf("the note names no variable for the password of user %q:\n%s", br.Username, errs)
	}
	if !strings.Contains(out, "\n  "+br.Username+":\n    password: \"${"+pwVar+"}\"\n") {
		t.Errorf("export lacks user %s with password ${%s}:\n%s", br.Username, pwVar, out)
	}
	info, err := br.RH.GetUser(br.Username)
	if err != nil {
		t.Fatal(err)
	}
	if info.PasswordHash == "" {
		t.Fatalf("user %s has no password hash on the broker", br.Username)
	}
	if strings.Contains(out, info.PasswordHash) || strings.Contains(errs, info.PasswordHash) {
		t.Errorf("the export or its report holds the password hash of user %s:\n%s\n%s", br.Username, out, errs)
	}
	// Before applying the export, a user sets its variables: the broker
	// user's real password; any other a value of its own. The CLI reads
	// nothing else from the environment.
	lookup := func(name string) (string, bool) {
		if name == pwVar {
			return br.Password, true
		}
		for _, v := range vars {
			if v == name {
				return "value-of-" + name, true
			}
		}
		return "", false
	}

	want, err := loader.LoadBytes("src.yaml", []byte(src), loader.Options{})
	if err != nil {
		t.Fatal(err)
	}
	got, err := loader.LoadBytes("export.yaml", []byte(out), loader.Options{LookupEnv: lookup})
	if err != nil {
		t.Fatalf("the export does not load: %v\n%s", err, out)
	}
	opts := cmp.Options{
		cmpopts.IgnoreFields(topology.Queue{}, topology.QueueFileFields...),
		cmpopts.IgnoreFields(topology.Exchange{}, "Meta"),
		cmpopts.IgnoreFields(topology.Binding{}, "Meta"),
		cmpopts.IgnoreFields(topology.Policy{}, "Meta"),
		cmpopts.IgnoreFields(topology.Vhost{}, "Meta", "Description"),
		cmpopts.SortSlices(func(a, b *topology.Binding) bool { return a.Key() < b.Key() }),
		cmpopts.EquateEmpty(),
	}
	// The broker user's permission on the vhost (testbroker grants it) is
	// exported under the user; the source does not declare it.
	perm := got.Vhosts[vh].Items.Get(kind.Permission, br.Username)
	if perm == nil {
		t.Errorf("the loaded export has no permission of user %s in %s:\n%s", br.Username, vh, out)
	} else {
		got.Vhosts[vh].Items.Delete(kind.Permission, br.Username)
	}
	if diff := cmp.Diff(want.Vhosts, got.Vhosts, opts); diff != "" {
		t.Errorf("exported topology differs from the applied one (-applied +exported):\n%s", diff)
	}

	// Other users on the broker (other tests', made without mqctl) have
	// passwords no one here knows: the plan runs on the export with the
	// broker user only (a users section leaves users mqctl did not make
	// alone).
	exported := t.TempDir() + "/exported.yaml"
	writeFile(t, exported, onlyUser(t, out, br.Username))
	if out, errs, code := runLiveEnv(t, lookup, append([]string{"plan", "-f", exported, "--detailed-exitcode"}, conn...)...); code != 0 {
		t.Errorf("plan of the export against its source: exit %d, want 0 (no changes)\n%s\n%s", code, out, errs)
	}
}

func writeFile(t *testing.T, path, data string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
}
