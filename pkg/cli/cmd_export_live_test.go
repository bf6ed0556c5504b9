package cli

import (
	"bytes"
	"context"
	"os"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/mqctl/mqctl/internal/testbroker"
	"github.com/mqctl/mqctl/pkg/loader"
	"github.com/mqctl/mqctl/pkg/topology"
)

func runLive(t *testing.T, args ...string) (string, string, int) {
	t.Helper()
	var out, errb bytes.Buffer
	env := Env{Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errb, LookupEnv: func(string) (string, bool) { return "", false }}
	code := Main(context.Background(), args, env)
	return out.String(), errb.String(), code
}

// TestExportLive applies a file with DLQ pairs and delay tiers to a fresh
// vhost, exports the vhost from the broker, and checks that the export is
// written with sugar, loads into the same topology, and plans no changes.
func TestExportLive(t *testing.T) {
	br := testbroker.New(t)
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

	want, err := loader.LoadBytes("src.yaml", []byte(src), loader.Options{})
	if err != nil {
		t.Fatal(err)
	}
	got, err := loader.LoadBytes("export.yaml", []byte(out), loader.Options{})
	if err != nil {
		t.Fatalf("the export does not load: %v\n%s", err, out)
	}
	opts := cmp.Options{
		cmpopts.IgnoreFields(topology.Queue{}, "Meta", "Role", "Origin", "Delay"),
		cmpopts.IgnoreFields(topology.Exchange{}, "Meta"),
		cmpopts.IgnoreFields(topology.Binding{}, "Meta"),
		cmpopts.IgnoreFields(topology.Policy{}, "Meta"),
		cmpopts.IgnoreFields(topology.Vhost{}, "Meta", "Description"),
		cmpopts.SortSlices(func(a, b *topology.Binding) bool { return a.Key() < b.Key() }),
		cmpopts.EquateEmpty(),
	}
	if diff := cmp.Diff(want.Vhosts, got.Vhosts, opts); diff != "" {
		t.Errorf("exported topology differs from the applied one (-applied +exported):\n%s", diff)
	}

	exported := t.TempDir() + "/exported.yaml"
	writeFile(t, exported, out)
	if out, errs, code := runLive(t, append([]string{"plan", "-f", exported, "--detailed-exitcode"}, conn...)...); code != 0 {
		t.Errorf("plan of the export against its source: exit %d, want 0 (no changes)\n%s\n%s", code, out, errs)
	}
}

func TestExportLiveUnknownVhost(t *testing.T) {
	br := testbroker.New(t)
	_, errs, code := runLive(t, "export", "--vhost", "no-such-vhost-here", "--server", br.URL, "--username", br.Username, "--password", br.Password)
	if code != 1 || !strings.Contains(errs, `vhost "no-such-vhost-here" does not exist`) {
		t.Errorf("exit %d, stderr %q", code, errs)
	}
}

func writeFile(t *testing.T, path, data string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
}
