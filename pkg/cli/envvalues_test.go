package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// envValueFile takes an argument the target version refuses from the
// environment: any value from the environment may be a secret.
const envValueFile = `version: 1
vhosts:
  /:
    queues:
      q: { arguments: { x-overflow: "${OVF}" } }
`

// envValueSecret is what OVF holds in the tests: no output may show it.
const envValueSecret = "tokenvalue-secret1"

// TestOfflineOutputsHideEnvValues: validate, lint (every format) and diff
// (every output) refuse or flag an argument taken from the environment
// without showing its value, naming ${OVF} instead, as the loader's
// errors do.
func TestOfflineOutputsHideEnvValues(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "topology.yaml")
	old := filepath.Join(dir, "old.yaml")
	for p, content := range map[string]string{file: envValueFile, old: "version: 1\nvhosts:\n  /: {}\n"} {
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	vars := map[string]string{"OVF": envValueSecret}
	for _, tc := range []struct {
		args []string
		code int
	}{
		{[]string{"validate", "-f", file}, ExitError},
		{[]string{"validate", "-f", file, "-o", "json"}, ExitError},
		{[]string{"lint", "-f", file}, ExitError},
		{[]string{"lint", "-f", file, "-o", "json"}, ExitError},
		{[]string{"lint", "-f", file, "--format", "sarif"}, ExitError},
		{[]string{"lint", "-f", file, "--format", "github"}, ExitError},
		{[]string{"diff", old, file}, ExitError},
		{[]string{"diff", old, file, "-o", "json"}, ExitError},
		{[]string{"diff", old, file, "-o", "markdown"}, ExitError},
	} {
		stdout, stderr, code := runMain(vars, tc.args...)
		out := stdout + stderr
		if code != tc.code || strings.Contains(out, envValueSecret) || !strings.Contains(out, "${OVF} (its value not shown)") {
			t.Errorf("%v: exit %d (want %d), want ${OVF} (its value not shown) and never %s:\nstdout:\n%s\nstderr:\n%s", tc.args, code, tc.code, envValueSecret, stdout, stderr)
		}
	}
}
