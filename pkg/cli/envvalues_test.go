package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
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

// TestGraphAndRouteHideEnvValues: graph (both formats) and route (text and
// JSON) show a binding key and a header a file takes from the environment
// as the file wrote them, never their values (found, not fixed, by the
// test-command hunt); the JSON stays JSON.
func TestGraphAndRouteHideEnvValues(t *testing.T) {
	const file = `version: 1
vhosts:
  /:
    exchanges:
      tp: { type: topic }
      hx: { type: headers }
    queues:
      q: { bindings: [{ exchange: tp, routing_key: "${KEY}" }, { exchange: hx, arguments: { x-match: all, token: "${TOKEN}" } }] }
`
	path := filepath.Join(t.TempDir(), "topology.yaml")
	if err := os.WriteFile(path, []byte(file), 0o644); err != nil {
		t.Fatal(err)
	}
	vars := map[string]string{"KEY": "orders-secret-key", "TOKEN": "s3cr3t-T0KEN-value"}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"graph", "-f", path}, "${KEY}"},
		{[]string{"graph", "-f", path, "--format", "dot"}, "${TOKEN}"},
		{[]string{"route", "-f", path, "--exchange", "tp", "--routing-key", "orders-secret-key"}, "${KEY}"},
		{[]string{"route", "-f", path, "--exchange", "hx", "--header", "token=s3cr3t-T0KEN-value", "-o", "json"}, "${TOKEN}"},
	} {
		stdout, stderr, code := runMain(vars, tc.args...)
		for _, secret := range vars {
			if strings.Contains(stdout+stderr, secret) {
				t.Errorf("%v shows %q:\nstdout:\n%s\nstderr:\n%s", tc.args, secret, stdout, stderr)
			}
		}
		if code != 0 || !strings.Contains(stdout, tc.want) {
			t.Errorf("%v: exit %d, want 0 and %s in:\n%s\nstderr:\n%s", tc.args, code, tc.want, stdout, stderr)
		}
		if slices.Contains(tc.args, "json") && !json.Valid([]byte(stdout)) {
			t.Errorf("%v: not JSON:\n%s", tc.args, stdout)
		}
	}
}
