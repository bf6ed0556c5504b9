package cli_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mqctl/mqctl/pkg/cli"
)

// A saved plan without the broker's fingerprint (every plan --out writes
// one: such a file was made or edited by hand) is refused by apply with
// what to do, before any broker is asked; it was refused further on in
// an API's words ("make it to be saved (PlanOptions.Save)").
func TestApplyRefusesASavedPlanWithoutFingerprint(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "edited.plan")
	if err := os.WriteFile(path, []byte(`{"kind":"mqctl-saved-plan","version":3,"changes":[{"action":"create"}]}`), 0o600); err != nil {
		t.Fatal(err)
	}
	r := runRaw(nil, "apply", path, "--auto-approve", "--server", "http://127.0.0.1:1")
	want := path + ` is not a valid saved plan (it holds no fingerprint of the broker's state, which apply checks the broker against before it changes anything): make it again with "mqctl plan --out ` + path + `"`
	if r.code != 1 || !strings.Contains(r.stderr, want) || strings.Contains(r.stderr, "PlanOptions") {
		t.Errorf("apply of a saved plan without a fingerprint: exit %d\n%s\nwant exit 1 and %q", r.code, r.stderr, want)
	}
}

// Ctrl-C while the management API does not answer ends the command at
// once, saying what it was waiting for and, for apply, that nothing was
// changed; it said "mqctl: log in: context canceled".
func TestInterruptedWhileTheBrokerIsSilent(t *testing.T) {
	t.Parallel()
	silent := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		<-r.Context().Done()
	}))
	t.Cleanup(silent.Close)
	dir := t.TempDir()
	file := filepath.Join(dir, "topology.yaml")
	if err := os.WriteFile(file, []byte("version: 1\nvhosts:\n  v:\n    queues:\n      q: {}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	waiting := "mqctl: log in: interrupted while waiting for the management API at " + silent.URL + " to answer"
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"plan", "-f", file}, waiting + "\n"},
		{[]string{"status", "-f", file}, waiting + "\n"},
		{[]string{"apply", "-f", file, "--auto-approve"}, waiting + "; nothing was changed\n"},
	} {
		t.Run(tc.args[0], func(t *testing.T) {
			t.Parallel()
			var stdout, stderr strings.Builder
			ctx, cancel := context.WithCancel(context.Background())
			time.AfterFunc(200*time.Millisecond, cancel) // Ctrl-C
			code := cli.Main(ctx, append(tc.args, "--server", silent.URL), cli.Env{Stdin: strings.NewReader(""), Stdout: &stdout, Stderr: &stderr,
				LookupEnv: func(string) (string, bool) { return "", false }})
			if code != 1 || stderr.String() != tc.want {
				t.Errorf("exit %d, stderr:\n%s\nwant exit 1 and:\n%s", code, stderr.String(), tc.want)
			}
		})
	}
}
