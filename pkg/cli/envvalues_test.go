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

// TestDiffAndExpandedEnvValues: diff (text, JSON, markdown) shows what the
// file wrote for values it took from the environment in the changes it
// lists (a queue's argument, short or long, a binding's key), as plan does.
// validate --expanded and -o json print the expanded topology the user
// asked to see, values from the environment included (SPEC §3): that is
// their purpose; secrets (a password) stay masked.
func TestDiffAndExpandedEnvValues(t *testing.T) {
	dir := t.TempDir()
	old, file := filepath.Join(dir, "old.yaml"), filepath.Join(dir, "topology.yaml")
	const content = `version: 1
vhosts:
  /:
    exchanges:
      tp: { type: topic }
    queues:
      q:
        arguments:
          x-max-length: ${N}
          x-tok: ${TOK}
        bindings: [{ exchange: tp, routing_key: "${KEY}" }]
users:
  svc:
    password: ${PW}
`
	for p, c := range map[string]string{file: content, old: "version: 1\nvhosts:\n  /: {}\n"} {
		if err := os.WriteFile(p, []byte(c), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	vars := map[string]string{"N": "1234567", "TOK": "tok-secret-value", "KEY": "rk-secret-9", "PW": "pw-secret-value"}
	for _, args := range [][]string{{"diff", old, file}, {"diff", old, file, "-o", "json"}, {"diff", old, file, "-o", "markdown"}} {
		stdout, stderr, code := runMain(vars, args...)
		for _, secret := range vars {
			if strings.Contains(stdout+stderr, secret) {
				t.Errorf("%v shows %q:\n%s\n%s", args, secret, stdout, stderr)
			}
		}
		if code != 0 || !strings.Contains(stdout, "${TOK}") {
			t.Errorf("%v: exit %d, want 0 and ${TOK}:\n%s\n%s", args, code, stdout, stderr)
		}
	}
	for _, args := range [][]string{{"validate", "-f", file, "--expanded"}, {"validate", "-f", file, "-o", "json"}} {
		stdout, stderr, code := runMain(vars, args...)
		if code != 0 || !strings.Contains(stdout, "tok-secret-value") || !strings.Contains(stdout, "1234567") || strings.Contains(stdout, "pw-secret-value") {
			t.Errorf("%v: exit %d, want the expanded topology with its values, the password masked:\n%s\n%s", args, code, stdout, stderr)
		}
	}
}
