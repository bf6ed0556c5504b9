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

// TestDiffFlowsJSONShowsEnvMillis: diff -o json showed a flow's
// milliseconds taken from the environment as numbers (a delay tier's
// "delay_ms": 4000, an expiring queue's "after_ms": 6000) where the text
// says "${TTL} ms" and the field changes show "${TTL}": they are now the
// string the file wrote, with "from_env": true (docs/plan-json.md), and a
// value of the file's own stays a number.
func TestDiffFlowsJSONShowsEnvMillis(t *testing.T) {
	dir := t.TempDir()
	old, file := filepath.Join(dir, "old.yaml"), filepath.Join(dir, "new.yaml")
	const before = `version: 1
vhosts:
  /:
    queues:
      work: {}
      tier: { limits: { message_ttl: 5000 }, dead_letter: { exchange: "", routing_key: work } }
      temp: { limits: { expires: "${EXP0}" } }
      mine: { limits: { expires: 321000 } }
`
	const after = `version: 1
vhosts:
  /:
    queues:
      work: {}
      other: {}
      tier: { limits: { message_ttl: "${TTL}" }, dead_letter: { exchange: "", routing_key: other } }
      temp: { limits: { expires: "${EXP}" } }
      mine: { limits: { expires: 123000 } }
`
	for p, c := range map[string]string{old: before, file: after} {
		if err := os.WriteFile(p, []byte(c), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	vars := map[string]string{"TTL": "4000", "EXP0": "9000", "EXP": "6000"}
	stdout, stderr, code := runMain(vars, "diff", old, file, "-o", "json")
	if code != 0 {
		t.Fatalf("exit %d:\n%s\n%s", code, stdout, stderr)
	}
	var doc struct {
		Flows struct {
			DelayTiers []map[string]any `json:"delay_tiers"`
			Expiring   []map[string]any `json:"expiring"`
		} `json:"flows"`
	}
	if err := json.Unmarshal([]byte(stdout), &doc); err != nil {
		t.Fatalf("%v:\n%s", err, stdout)
	}
	entry := func(list []map[string]any, queue string) map[string]any {
		for _, e := range list {
			if e["queue"] == queue {
				return e
			}
		}
		t.Fatalf("no flow of queue %q:\n%s", queue, stdout)
		return nil
	}
	for _, tc := range []struct {
		entry   map[string]any
		field   string
		want    any
		fromEnv any
	}{
		{entry(doc.Flows.DelayTiers, "tier"), "delay_ms", "${TTL}", true},
		{entry(doc.Flows.Expiring, "temp"), "after_ms", "${EXP}", true},
		{entry(doc.Flows.Expiring, "temp"), "before_ms", "${EXP0}", true},
		{entry(doc.Flows.Expiring, "mine"), "after_ms", float64(123000), nil},
		{entry(doc.Flows.Expiring, "mine"), "before_ms", float64(321000), nil},
	} {
		if got := tc.entry[tc.field]; got != tc.want || tc.entry["from_env"] != tc.fromEnv {
			t.Errorf("queue %v: %s = %#v, from_env = %v; want %#v, from_env %v", tc.entry["queue"], tc.field, got, tc.entry["from_env"], tc.want, tc.fromEnv)
		}
	}
	for _, v := range vars {
		if strings.Contains(stdout, v) {
			t.Errorf("the JSON shows %s, a value from the environment:\n%s", v, stdout)
		}
	}
}

// TestDiffShowsLiteralsAsWritten: a literal equal to a value from the
// environment for another object's same field (q2's max_length: 1000
// beside q1's ${N}, 1000) is shown as the file wrote it, in the object
// changes and the flows' words, in every output; it was shown as ${N}.
// q3 takes ${N} too: hidden.
func TestDiffShowsLiteralsAsWritten(t *testing.T) {
	dir := t.TempDir()
	old, file := filepath.Join(dir, "old.yaml"), filepath.Join(dir, "new.yaml")
	const before = "version: 1\nvhosts:\n  v:\n    queues: { q1: {}, q2: {}, q3: {} }\n"
	const after = `version: 1
vhosts:
  v:
    queues:
      q1: { limits: { max_length: "${N}" } }
      q2: { limits: { max_length: 1000 } }
      q3:
        arguments:
          x-max-length: ${N}
`
	for p, c := range map[string]string{old: before, file: after} {
		if err := os.WriteFile(p, []byte(c), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct {
		out  string
		want []string
	}{
		{"text", []string{"arguments.x-max-length: (none) → 1000  (forces replace)", "arguments.x-max-length: (none) → ${N} (its value not shown)"}},
		{"json", []string{`"after": 1000`, `"x-max-length": 1000`, `"after": "${N}"`}},
		{"markdown", []string{"arguments.x-max-length: (none) → 1000  (forces replace)", "arguments.x-max-length: (none) → ${N} (its value not shown)"}},
	} {
		t.Run(tc.out, func(t *testing.T) {
			stdout, stderr, code := runMain(map[string]string{"N": "1000"}, "diff", old, file, "-o", tc.out)
			if code != 0 {
				t.Fatalf("exit %d:\n%s\n%s", code, stdout, stderr)
			}
			for _, w := range tc.want {
				if !strings.Contains(stdout, w) {
					t.Errorf("no %q in:\n%s", w, stdout)
				}
			}
			if n := strings.Count(stdout, "length limit of ${N} messages"); n != 2 {
				t.Errorf("%d flows say ${N}'s limit, want 2 (q1, q3):\n%s", n, stdout)
			}
			if n := strings.Count(stdout, "length limit of 1000 messages"); n != 1 {
				t.Errorf("%d flows say the literal's limit, want 1 (q2):\n%s", n, stdout)
			}
			if strings.ContainsAny(stdout, "\x00\x1f") {
				t.Errorf("the output holds a mark:\n%q", stdout)
			}
		})
	}
}
