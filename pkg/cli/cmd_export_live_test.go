package cli

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	rabbithole "github.com/michaelklishin/rabbit-hole/v2"
	amqp "github.com/rabbitmq/amqp091-go"
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

// exportedUsers are the names in the export's users section, sorted.
func exportedUsers(t *testing.T, export string) []string {
	t.Helper()
	var doc struct {
		Users map[string]any `yaml:"users"`
	}
	if err := yaml.Unmarshal([]byte(export), &doc); err != nil {
		t.Fatal(err)
	}
	var out []string
	for name := range doc.Users {
		out = append(out, name)
	}
	slices.Sort(out)
	return out
}

// TestExportLive applies a file with DLQ pairs and delay tiers to a fresh
// vhost, exports the vhost from the broker, and checks that the export is
// written with sugar, loads into the same topology, and plans no changes.
//
// The export holds the users with permissions or topic permissions in the
// vhost, each password a ${VAR} placeholder that export names on stderr;
// no password hash appears anywhere. The users without access there (other
// teams', guest's on another broker) are left out and named on stderr, so
// that the plan of the export needs only its own users' passwords and is
// empty; an export without --vhost keeps every user. The export's users
// section speaks for every user mqctl made, so the test holds the users
// lock.
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

	// Users made without mqctl: one with a permission in the vhost, one
	// with only a topic permission there, one with a permission in
	// another vhost only, one with none.
	permitted, permittedPw := br.User(t, "management")
	br.Permit(t, permitted, vh)
	topicOnly, topicOnlyPw := br.User(t)
	if resp, err := br.RH.UpdateTopicPermissionsIn(vh, topicOnly, rabbithole.TopicPermissions{Exchange: "orders", Write: ".*", Read: ".*"}); err != nil {
		t.Fatal(err)
	} else {
		resp.Body.Close()
	}
	elsewhere, _ := br.User(t)
	br.Permit(t, elsewhere, br.Vhost(t))
	none, _ := br.User(t, "management")

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
	// Users mqctl manages are kept too, named on stderr: a test whose
	// cleanup could not delete its protected user (4.2+) leaves one.
	var leftovers []string
	for _, l := range strings.Split(errs, "\n") {
		if names, ok := strings.CutPrefix(l, "mqctl: note: kept, without permissions in the exported vhosts, as mqctl manages them (a plan of the export would otherwise delete them): "); ok {
			for _, n := range strings.Split(names, ", ") {
				leftovers = append(leftovers, strings.Trim(n, `"`))
			}
		}
	}
	wantUsers := append([]string{br.Username, permitted, topicOnly}, leftovers...)
	slices.Sort(wantUsers)
	if got := exportedUsers(t, out); !slices.Equal(got, wantUsers) {
		t.Errorf("exported users %v, want those with access to the vhost: %v\n%s", got, wantUsers, errs)
	}
	left := []string{elsewhere, none}
	slices.Sort(left)
	// Other tests' users may be on the broker, and left out too.
	noted := slices.ContainsFunc(strings.Split(errs, "\n"), func(l string) bool {
		return strings.HasPrefix(l, "mqctl: note: ") && strings.Contains(l, " no permissions or topic permissions in the exported vhosts and are left out (with their limits): ") &&
			strings.HasSuffix(l, ". Export without --vhost to include every user of the broker") &&
			strings.Contains(l, fmt.Sprintf("%q", left[0])) && strings.Contains(l, fmt.Sprintf("%q", left[1]))
	})
	if !noted {
		t.Errorf("stderr lacks the note that users %v are left out, and how to include them:\n%s", left, errs)
	}
	// Before applying the export, a user sets its variables, those of
	// the exported users only. The CLI reads nothing else from the
	// environment.
	passwords := map[string]string{br.Username: br.Password, permitted: permittedPw, topicOnly: topicOnlyPw}
	if len(vars) != len(passwords)+len(leftovers) {
		t.Errorf("variables %v, want one for each exported user's password", vars)
	}
	lookup := func(name string) (string, bool) {
		for user, pw := range passwords {
			if vars[fmt.Sprintf("the password of user %q", user)] == name {
				return pw, true
			}
		}
		for _, user := range leftovers {
			if vars[fmt.Sprintf("the password of user %q", user)] == name {
				return "unknown", true
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
	// So are the users made here without mqctl.
	for k, user := range map[kind.Kind]string{kind.Permission: permitted, kind.TopicPermission: topicOnly} {
		if got.Vhosts[vh].Items.Get(k, user) == nil {
			t.Errorf("the loaded export has no %s of user %s in %s:\n%s", k.Label(), user, vh, out)
		}
		got.Vhosts[vh].Items.Delete(k, user)
	}
	if diff := cmp.Diff(want.Vhosts, got.Vhosts, opts); diff != "" {
		t.Errorf("exported topology differs from the applied one (-applied +exported):\n%s", diff)
	}

	// Other users on the broker, left out of the export, have passwords
	// no one here knows: the plan of the export needs none of them. It
	// changes no object, and adopts none of the users and permissions made
	// here without mqctl: they were on the broker before mqctl, and a
	// later file that drops them must not delete them. The plan says so,
	// and changes nothing (the broker-wide record may list users other
	// tests deleted since: apply would drop them from it, exit 2).
	exported := t.TempDir() + "/exported.yaml"
	writeFile(t, exported, out)
	planOut, planErrs, planCode := runLiveEnv(t, lookup, append([]string{"plan", "-f", exported, "--detailed-exitcode"}, conn...)...)
	empty := (planCode == 0 && strings.HasPrefix(planOut, "No changes.") || planCode == 2 && strings.HasPrefix(planOut, "Only mqctl's ownership record changes:")) &&
		!strings.Contains(planOut, "recorded as managed")
	for _, user := range []string{permitted, topicOnly} {
		if empty && !strings.Contains(planOut, fmt.Sprintf("%q in vhost %q", user, vh)) {
			t.Errorf("the plan of the export does not list the access of user %s, made without mqctl, as on the broker before mqctl:\n%s", user, planOut)
		}
	}
	if !empty && len(leftovers) == 0 {
		t.Errorf("plan of the export against its source: exit %d, want no object to change and none to adopt\n%s\n%s", planCode, planOut, planErrs)
	} else if !empty {
		t.Logf("users %v that other tests left behind have passwords no one here knows: the plan of the export is not checked empty\n%s", leftovers, planOut)
	}

	// An export of every vhost keeps every user.
	all, errs, code := runLive(t, append([]string{"export"}, conn...)...)
	if code != 0 {
		t.Fatalf("export: exit %d: %s", code, errs)
	}
	if got := exportedUsers(t, all); !slices.Contains(got, none) || !slices.Contains(got, elsewhere) || strings.Contains(errs, "left out") {
		t.Errorf("an export without --vhost has users %v, want every user (%s and %s included), none said left out:\n%s", got, none, elsewhere, errs)
	}
}

func writeFile(t *testing.T, path, data string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestExportSaysUsersNotRead: RabbitMQ lets only an administrator list
// users and their limits (401 on 3.10.8, 4.0.5 and 4.3.6), so an export
// by any other user has no users section, which a plan then leaves the
// users alone for. export named each vhost-level kind it could not read
// (permissions, shovels) on stderr, but not the users: the file said
// nothing of them, and nothing said why. An administrator's export reads
// them, and says nothing of the kind.
func TestExportSaysUsersNotRead(t *testing.T) {
	t.Parallel()
	br := testbroker.New(t)
	vh := br.Vhost(t)
	user, pw := br.User(t, "management")
	br.Permit(t, user, vh)
	for _, tc := range []struct {
		name, user, password string
		notRead              bool
	}{
		{"a management user", user, pw, true},
		{"an administrator", br.Username, br.Password, false},
	} {
		out, errs, code := runLive(t, "export", "--vhost", vh, "--server", br.URL, "--username", tc.user, "--password", tc.password)
		if code != 0 {
			t.Fatalf("%s: export: exit %d: %s", tc.name, code, errs)
		}
		for _, k := range []string{"users", "user limits"} {
			note := fmt.Sprintf("mqctl: note: %s not exported: ", k)
			if got := strings.Contains(errs, note); got != tc.notRead {
				t.Errorf("%s: stderr holds %q: %v, want %v\n%s", tc.name, note, got, tc.notRead, errs)
			}
		}
		if got := strings.Contains(out, "\nusers:"); got == tc.notRead {
			t.Errorf("%s: the export has a users section: %v, want %v\n%s", tc.name, got, !tc.notRead, out)
		}
	}
}

// TestExportSaysExclusiveQueuesLeftOut: export leaves clients' exclusive
// queues out, with their bindings (a client connection's own, which only
// it may declare or bind), as it should, but said nothing: a team adopting
// its broker while its applications ran found queues of the broker
// missing from the file, and nothing said why. It now names them on
// stderr; once the client is gone, there is nothing to say.
func TestExportSaysExclusiveQueuesLeftOut(t *testing.T) {
	t.Parallel()
	br := testbroker.New(t)
	vh := br.Vhost(t)
	conn, err := amqp.Dial(br.AMQPURL(vh))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	ch, err := conn.Channel()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ch.QueueDeclare("client.q", false, false, true, false, nil); err != nil {
		t.Fatal(err)
	}
	if err := ch.QueueBind("client.q", "k", "amq.direct", false, nil); err != nil {
		t.Fatal(err)
	}
	args := []string{"export", "--vhost", vh, "--server", br.URL, "--username", br.Username, "--password", br.Password}
	note := fmt.Sprintf(`mqctl: note: vhost %q: 1 exclusive queue not exported, nor its bindings: "client.q" (a client connection's own, which only it may declare or bind, and which goes with it)`, vh)
	out, errs, code := runLive(t, args...)
	if code != 0 {
		t.Fatalf("export: exit %d: %s", code, errs)
	}
	if strings.Contains(out, "client.q") {
		t.Errorf("the export holds the client's queue:\n%s", out)
	}
	if !strings.Contains(errs, note) {
		t.Errorf("stderr lacks %q:\n%s", note, errs)
	}
	if err := conn.Close(); err != nil {
		t.Fatal(err)
	}
	// The broker deletes the queue a moment after the close.
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		if _, err := br.RH.GetQueue(vh, "client.q"); err != nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("client.q is still there 10 s after its connection closed")
		}
	}
	if _, errs, code := runLive(t, args...); code != 0 || strings.Contains(errs, "exclusive") {
		t.Errorf("export once the client is gone: exit %d, stderr:\n%s\nwant no note on exclusive queues", code, errs)
	}
}

// TestExportUnknownVhostListsNoVhosts: export --vhost naming a vhost the
// user is not shown listed every vhost of the broker, other teams'
// included. It now says the vhost does not exist (to an administrator), or
// that it cannot tell (to a user who is not one), and names at most a near
// miss among the vhosts the user sees: never the list, never a vhost the
// user may not see. RabbitMQ 4.3.6, 4.0.5 and 3.10.8 answer alike.
func TestExportUnknownVhostListsNoVhosts(t *testing.T) {
	t.Parallel()
	br := testbroker.New(t)
	seen, hidden := br.Vhost(t), br.Vhost(t)
	user, pw := br.User(t, "management")
	br.Permit(t, user, seen)
	admin := []string{"--server", br.URL, "--username", br.Username, "--password", br.Password}
	mgmt := []string{"--server", br.URL, "--username", user, "--password", pw}
	for _, tc := range []struct {
		name  string
		vhost string
		as    []string
		want  string
		never []string
	}{
		{"an administrator, a near miss", seen + "x", admin, fmt.Sprintf(`vhost %q does not exist on %s; did you mean %q?`, seen+"x", br.URL, seen), []string{hidden, "it has"}},
		{"an administrator, nothing near", "no-such-vhost-at-all", admin, fmt.Sprintf(`vhost "no-such-vhost-at-all" does not exist on %s`+"\n", br.URL), []string{seen, hidden, `"/"`, "did you mean"}},
		{"a management user, a near miss it sees", seen + "x", mgmt, fmt.Sprintf(`did you mean %q?`, seen), []string{hidden, "does not exist on"}},
		{"a management user, a near miss it may not see", hidden + "x", mgmt, fmt.Sprintf(`user %q is not shown vhost %q: it does not exist, or the user has no permissions on it`, user, hidden+"x"), []string{seen, `"` + hidden + `"`, "did you mean"}},
	} {
		_, errs, code := runLive(t, append([]string{"export", "--vhost", tc.vhost}, tc.as...)...)
		if code != 1 || !strings.Contains(errs, tc.want) {
			t.Errorf("%s: want exit 1 and %q, got exit %d:\n%s", tc.name, tc.want, code, errs)
		}
		for _, s := range tc.never {
			if strings.Contains(errs, s) {
				t.Errorf("%s: the error names %q:\n%s", tc.name, s, errs)
			}
		}
	}
}
