package cli_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mqctl/mqctl/pkg/cli"
)

// plan reads the broker while the file's objects are still being built,
// for the vhosts the file declares narrowed by --vhost; the plan is the
// same as one read afterwards.
func TestPlanScope(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	const file = `version: 1
vhosts:
  ${VHOST}:
    queues:
      a: {}
  ${VHOST}-not-there:
    queues:
      b: {}
`
	f := h.write("two.yaml", file)
	if r := h.run("apply", "-f", f, "--vhost", h.vhost, "--auto-approve"); r.code != 0 {
		t.Fatalf("apply --vhost:\n%s", r)
	}
	if r := h.run("plan", "-f", f, "--vhost", h.vhost, "--detailed-exitcode"); r.code != 0 || !strings.Contains(r.stdout, "No changes") {
		t.Errorf("plan --vhost of the applied vhost is not empty:\n%s", r)
	}
	r := h.run("plan", "-f", f, "--detailed-exitcode")
	if r.code != 2 || !strings.Contains(r.stdout, `+ vhost "`+h.vhost+`-not-there"`) || strings.Contains(r.stdout, `queue "a"`) {
		t.Errorf("plan of both vhosts should create only the other vhost and its queue:\n%s", r)
	}
}

// A file that does not load is reported as such, not as the broker being
// unreachable (plan loads the file while it connects).
func TestPlanBadFileBeforeBroker(t *testing.T) {
	f := filepath.Join(t.TempDir(), "bad.yaml")
	if err := os.WriteFile(f, []byte("version: 1\nvhosts:\n  v:\n    queues:\n      a: {type: nope}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	var out, errb bytes.Buffer
	code := cli.Main(context.Background(), []string{"plan", "-f", f, "--server", "http://127.0.0.1:1"},
		cli.Env{Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errb, LookupEnv: func(string) (string, bool) { return "", false }})
	if code != 1 || !strings.Contains(errb.String(), "bad.yaml:5:") || strings.Contains(errb.String(), "management API") {
		t.Errorf("exit %d, want 1 and the file's error only:\n%s", code, errb.String())
	}
}
