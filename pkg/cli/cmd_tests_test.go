package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const testsTestFile = `version: 1
vhosts:
  /:
    exchanges:
      orders: { type: topic }
      orders.dlx: { type: topic }
    queues:
      shipping:
        bindings: [{ exchange: orders, routing_key: order.created }]
        dead_letter: { exchange: orders.dlx, queue: shipping.dlq }
        retry: { delays: [10s] }
tests:
  - name: created reaches shipping
    publish: { exchange: orders, routing_key: order.created }
    expect: { queues: [shipping] }
  - name: rejected lands in the DLQ
    reject: shipping
    expect: { queues: [shipping.dlq] }
  - name: retry comes back
    retry: { queue: shipping, delay: 10s }
    expect: { queues: [shipping] }
`

// byTypeDLX dead-letters a classic queue through a policy that applies
// by queue type (RabbitMQ 3.12+).
const byTypeDLX = `version: 1
vhosts:
  /:
    exchanges:
      dlx: { type: fanout }
    queues:
      jobs: {}
      jobs.dlq: { bindings: [{ exchange: dlx }] }
    policies:
      dlx:
        pattern: "^jobs$"
        apply_to: classic_queues
        definition: { dead-letter-exchange: dlx }
tests:
  - name: rejected lands in the DLQ
    reject: jobs
    expect: { queues: [jobs.dlq] }
`

func runTestCmd(t *testing.T, file string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "topology.yaml")
	if err := os.WriteFile(path, []byte(file), 0o644); err != nil {
		t.Fatal(err)
	}
	var out, errb bytes.Buffer
	code = Main(context.Background(), append([]string{"test", "-f", path}, args...), Env{Stdout: &out, Stderr: &errb})
	return out.String(), strings.ReplaceAll(errb.String(), path, "topology.yaml"), code
}

func TestTestCommand(t *testing.T) {
	failing := strings.Replace(testsTestFile, "expect: { queues: [shipping.dlq] }", "expect: { queues: [] }", 1)
	for _, tc := range []struct {
		name     string
		file     string
		args     []string
		code     int
		stdout   string   // exactly, when set
		contains []string // in stdout or stderr
	}{
		{name: "all pass", file: testsTestFile,
			stdout: "PASS created reaches shipping\nPASS rejected lands in the DLQ\nPASS retry comes back\n3 passed, 0 failed\n"},
		{name: "a failure exits 1 and explains", file: failing, code: 1,
			contains: []string{"FAIL rejected lands in the DLQ: expected [], got [shipping.dlq]; \"shipping.dlq\" gets it (the hops show how): add it to expect.queues if that is right, else change the binding or dead-letter wiring that leads there (hops: (default exchange) [shipping] -> shipping; shipping rejected: orders.dlx [shipping] -> shipping.dlq)\n", "    at ", "topology.yaml:16:5\n", "2 passed, 1 failed\n"}},
		{name: "--run selects by name", file: failing, args: []string{"--run", "^retry"},
			stdout: "PASS retry comes back\n1 passed, 0 failed\n"},
		{name: "bad --run", file: testsTestFile, args: []string{"--run", "("}, code: 1,
			contains: []string{`mqctl: --run "(" is not a regular expression`}},
		{name: "bad output", file: testsTestFile, args: []string{"-o", "yaml"}, code: 1,
			contains: []string{`--output "yaml" is not supported here; use one of [text json]`}},
		{name: "bad --wait", file: testsTestFile, args: []string{"--live", "--wait", "0s"}, code: 1,
			contains: []string{"--wait 0s: give a positive duration"}},
		// A run that tests nothing fails: a CI job on a file without tests,
		// or with a --run that matches none (a typo), passed before.
		{name: "no tests", file: strings.Split(testsTestFile, "tests:")[0], code: 1,
			contains: []string{"mqctl: topology.yaml has no tests (no tests: section, or an empty one), so there is nothing to test; add some, such as\n  tests:\n", "(mqctl test --help explains each kind of test)"}},
		{name: "an empty tests: section", file: strings.Split(testsTestFile, "tests:")[0] + "tests: []\n", code: 1,
			contains: []string{"mqctl: topology.yaml has no tests (no tests: section, or an empty one)"}},
		{name: "--run matching no test", file: testsTestFile, args: []string{"--run", "^retried"}, code: 1,
			contains: []string{`mqctl: --run "^retried" matches no test; the tests are "created reaches shipping", "rejected lands in the DLQ", "retry comes back": fix the pattern`}},
		{name: "--run near a test's name", file: testsTestFile, args: []string{"--run", "retry comes bak"}, code: 1,
			contains: []string{`mqctl: --run "retry comes bak" matches no test (did you mean "retry comes back"?); the tests are`}},
		{name: "--run near a word of a test's name", file: testsTestFile, args: []string{"--run", "rejectd"}, code: 1,
			contains: []string{`mqctl: --run "rejectd" matches no test (did you mean "rejected"?)`}},
		{name: "--run matching no test, -o json", file: testsTestFile, args: []string{"--run", "nothing", "-o", "json"}, code: 1,
			contains: []string{`mqctl: --run "nothing" matches no test`}},
		{name: "--vhost without tests", file: strings.ReplaceAll(strings.Replace(testsTestFile, "vhosts:\n", "vhosts:\n  other: {}\n", 1), "  - name:", "  - vhost: /\n    name:"), args: []string{"--vhost", "other"}, code: 1,
			contains: []string{`mqctl: no test runs in --vhost "other": the file's tests run in "/"`}},
		// What the target version refuses of the tests' vhost, a --live run
		// on it is refused: the offline run is refused alike, not answered
		// from wiring the broker never holds (before, 3.10 passed the test
		// through a policy it refuses, and 4.3 one whose dead-letter
		// exchange came from an operator policy it refuses).
		{name: "a policy the target refuses", file: byTypeDLX, args: []string{"--rabbitmq-version", "3.10"}, code: 1,
			contains: []string{`topology.yaml:10:7: policy "dlx" in vhost "/": apply_to: classic_queues: apply-to by queue type arrived in RabbitMQ 3.12`,
				"the tests cannot run against a broker that refuses their vhost", "(judged for RabbitMQ 3.10"}},
		{name: "the same policy on a target that takes it", file: byTypeDLX, args: []string{"--rabbitmq-version", "4.0"},
			stdout: "PASS rejected lands in the DLQ\n1 passed, 0 failed\n"},
		{name: "an operator policy every target refuses", file: strings.Replace(byTypeDLX, "    policies:", "    operator_policies:", 1), args: []string{"--rabbitmq-version", "4.3"}, code: 1,
			contains: []string{`operator policy "dlx" in vhost "/": dead-letter-exchange: RabbitMQ 4.3 refuses the whole operator policy`}},
		{name: "a bad test is a load error", file: strings.Replace(testsTestFile, "reject: shipping", "reject: shiping", 1), code: 1,
			contains: []string{`topology.yaml:17:13: test "rejected lands in the DLQ": reject: queue "shiping" is not declared in vhost "/" (did you mean "shipping"?)`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			stdout, stderr, code := runTestCmd(t, tc.file, tc.args...)
			if code != tc.code {
				t.Errorf("exit %d, want %d\nstdout:\n%s\nstderr:\n%s", code, tc.code, stdout, stderr)
			}
			if tc.stdout != "" && stdout != tc.stdout {
				t.Errorf("stdout:\n%s\nwant:\n%s", stdout, tc.stdout)
			}
			for _, want := range tc.contains {
				if !strings.Contains(stdout+stderr, want) {
					t.Errorf("output lacks %q\nstdout:\n%s\nstderr:\n%s", want, stdout, stderr)
				}
			}
		})
	}
}

func TestTestCommandJSON(t *testing.T) {
	stdout, _, code := runTestCmd(t, testsTestFile, "-o", "json")
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, stdout)
	}
	var r struct {
		FormatVersion string `json:"format_version"`
		Passed        int    `json:"passed"`
		Tests         []struct {
			Name   string   `json:"name"`
			Passed bool     `json:"passed"`
			Got    []string `json:"got"`
		} `json:"tests"`
	}
	if err := json.Unmarshal([]byte(stdout), &r); err != nil {
		t.Fatalf("%v\n%s", err, stdout)
	}
	if r.FormatVersion != "1" || r.Passed != 3 || len(r.Tests) != 3 || r.Tests[1].Got[0] != "shipping.dlq" {
		t.Errorf("report: %s", stdout)
	}
}

// TestTestCommandHidesEnvValues: a value the file takes from the
// environment may be a secret (a token in a header, a tenant in a routing
// key), and mqctl test shows what the file wrote, ${VAR}, in its place in
// every output: PASS and FAIL lines (a name derived from the publish),
// messages and hops, -o json, and its errors. Before, it printed the
// values. Names of the file's objects are shown (the report lists them).
func TestTestCommandHidesEnvValues(t *testing.T) {
	const file = `version: 1
vhosts:
  /:
    exchanges:
      ev: { type: headers }
      tp: { type: topic }
    queues:
      q1: { bindings: [{ exchange: ev, arguments: { x-match: all, token: "${TOKEN}", n: "${N}" } }] }
      q2: { bindings: [{ exchange: tp, routing_key: "${REGION}.orders" }] }
      "${QUEUE}": {}
tests:
  - name: the token reaches q2
    publish: { exchange: ev, headers: { token: "${TOKEN}", n: "${N}" } }
    expect: { queues: [q2] }
  - name: "${TENANT} orders reach q1"
    publish: { exchange: tp, routing_key: "${REGION}.orders" }
    expect: { queues: ["${QUEUE}"] }
  - publish: { exchange: tp, routing_key: "${REGION}" }
    expect: { queues: [] }
  - name: another token
    publish: { exchange: ev, headers: { token: "${OTHER_TOKEN}", n: "${N}" } }
    expect: { queues: [q1] }
`
	env := map[string]string{"TOKEN": "s3cr3t-T0KEN-value", "OTHER_TOKEN": "0ther-s3cr3t", "N": "73",
		"REGION": "eu-zz", "TENANT": "acme-tenant", "QUEUE": "audit"}
	secrets := []string{"s3cr3t-T0KEN-value", "0ther-s3cr3t", "73", "eu-zz", "acme-tenant"}
	path := filepath.Join(t.TempDir(), "topology.yaml")
	if err := os.WriteFile(path, []byte(file), 0o644); err != nil {
		t.Fatal(err)
	}
	lookup := func(k string) (string, bool) { v, ok := env[k]; return v, ok }
	for _, tc := range []struct {
		name     string
		args     []string
		code     int
		contains []string
	}{
		{name: "text", code: 1, contains: []string{
			`FAIL the token reaches q2: expected [q2], got [q1]`,
			`(hops: ev {"n":${N},"token":${TOKEN},"x-match":"all"} -> q1)`,
			`FAIL ${TENANT} orders reach q1: expected [audit], got [q2]`,
			`"q2" is bound from tp [${REGION}.orders]`,
			`PASS publish to tp with key ${REGION}`,
			`no binding of exchange "ev" matches headers {n=${N}, token=${OTHER_TOKEN}}`}},
		{name: "json", args: []string{"-o", "json"}, code: 1, contains: []string{
			`"name": "${TENANT} orders reach q1"`, `"expected": [` + "\n        \"audit\"", `"name": "publish to tp with key ${REGION}"`,
			`"ev {\"n\":${N},\"token\":${TOKEN},\"x-match\":\"all\"} -\u003e q1"`}},
		{name: "--run matching no test names the tests", args: []string{"--run", "nothing"}, code: 1, contains: []string{
			`the tests are "the token reaches q2", "${TENANT} orders reach q1", "publish to tp with key ${REGION}"`}},
		{name: "--run near a word of a value", args: []string{"--run", "acme-tenamt"}, code: 1, contains: []string{
			`--run "acme-tenamt" matches no test; the tests are`}},
		{name: "--run near a test's name as shown", args: []string{"--run", "${TENANT} orders reach q"}, code: 1, contains: []string{
			`matches no test (did you mean "${TENANT} orders reach q1"?)`}},
		{name: "--run by the name shown", args: []string{"--run", `^\$\{TENANT\} orders`}, code: 1, contains: []string{
			"FAIL ${TENANT} orders reach q1", "0 passed, 1 failed\n"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var out, errb bytes.Buffer
			code := Main(context.Background(), append([]string{"test", "-f", path}, tc.args...), Env{Stdout: &out, Stderr: &errb, LookupEnv: lookup})
			stdout, stderr := out.String(), errb.String()
			if code != tc.code {
				t.Errorf("exit %d, want %d\nstdout:\n%s\nstderr:\n%s", code, tc.code, stdout, stderr)
			}
			// The file's path, a random temporary folder, may hold the
			// digits of a value (73): it is not the value.
			stdout, stderr = strings.ReplaceAll(stdout, path, "topology.yaml"), strings.ReplaceAll(stderr, path, "topology.yaml")
			for _, s := range secrets {
				if strings.Contains(stdout+stderr, s) {
					t.Errorf("the output shows the value of a variable, %q:\nstdout:\n%s\nstderr:\n%s", s, stdout, stderr)
				}
			}
			for _, want := range tc.contains {
				if !strings.Contains(stdout+stderr, want) {
					t.Errorf("output lacks %q\nstdout:\n%s\nstderr:\n%s", want, stdout, stderr)
				}
			}
		})
	}
}

// TestNoTestsAdviceRuns: the tests: section a file without tests is told
// to start from names the file's own exchange and queues, and passes as
// it is once added to the file. Before, it was the same example for every
// file (exchange orders, queue orders.shipping), which a file without
// them refuses.
func TestNoTestsAdviceRuns(t *testing.T) {
	for _, tc := range []struct {
		name    string
		file    string
		example string // the advice, exactly
	}{
		{name: "a topic binding with wildcards, the queues it reaches",
			file:    "version: 1\nvhosts:\n  /:\n    exchanges:\n      ev: { type: topic }\n    queues:\n      a: { bindings: [{ exchange: ev, routing_key: \"order.*\" }] }\n      b: { bindings: [{ exchange: ev, routing_key: \"#\" }] }\n",
			example: "  tests:\n    - name: \"ev order.x reaches a, b\"\n      publish: {exchange: ev, routing_key: order.x}\n      expect: {queues: [a, b]}"},
		{name: "several vhosts: the test names its own",
			file:    "version: 1\nvhosts:\n  one: {}\n  two:\n    exchanges:\n      \"fan out\": { type: fanout }\n    queues:\n      \"true\": { bindings: [{ exchange: \"fan out\" }] }\n",
			example: "  tests:\n    - name: \"fan out reaches true\"\n      vhost: two\n      publish: {exchange: \"fan out\", routing_key: \"\"}\n      expect: {queues: [\"true\"]}"},
		{name: "no binding a message can follow without headers: the generic example",
			file:    "version: 1\nvhosts:\n  /:\n    exchanges:\n      h: { type: headers }\n    queues:\n      a: { bindings: [{ exchange: h, arguments: { x-match: all, k: v } }] }\n",
			example: testsExample},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, stderr, code := runTestCmd(t, tc.file)
			before, after, ok := strings.Cut(stderr, "add some, such as\n")
			advice, _, ok2 := strings.Cut(after, "\n(mqctl test --help")
			if code != 1 || !ok || !ok2 {
				t.Fatalf("exit %d, stderr %q: want the no-tests refusal (%s)", code, stderr, before)
			}
			if advice != tc.example {
				t.Fatalf("advice:\n%s\nwant:\n%s", advice, tc.example)
			}
			if advice == testsExample {
				return
			}
			var file strings.Builder
			file.WriteString(tc.file)
			for _, l := range strings.Split(advice, "\n") {
				file.WriteString(strings.TrimPrefix(l, "  ") + "\n")
			}
			stdout, stderr, code := runTestCmd(t, file.String())
			if code != 0 || !strings.HasSuffix(stdout, "1 passed, 0 failed\n") {
				t.Errorf("the advice added to the file: exit %d\n%s%s", code, stdout, stderr)
			}
		})
	}
}
