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

// A file that does not load is reported as such, not as the broker being
// unreachable (plan loads the file while it connects).
func TestPlanBadFileBeforeBroker(t *testing.T) {
	t.Parallel()
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
