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

// lintTestFile has one warning (MQ101 on "email") and one info (MQ301 on
// "email").
const lintTestFile = `version: 1
vhosts:
  /:
    exchanges:
      jobs: { type: direct }
    queues:
      email:
        bindings: [{ exchange: jobs, routing_key: email }]
`

func runLint(t *testing.T, file string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "topology.yaml")
	if err := os.WriteFile(path, []byte(file), 0o644); err != nil {
		t.Fatal(err)
	}
	var out, errb bytes.Buffer
	code = Main(context.Background(), append([]string{"lint", "-f", path}, args...), Env{Stdout: &out, Stderr: &errb})
	return out.String(), errb.String(), code
}

func TestLintCommand(t *testing.T) {
	for _, tc := range []struct {
		name     string
		file     string
		args     []string
		code     int
		stdout   []string
		stderr   []string
		noStdout []string
	}{
		{name: "text, warnings do not fail by default", file: lintTestFile,
			stdout: []string{"topology.yaml:7:7: warning MQ101 queue \"email\"", "info MQ301", "0 errors, 1 warning, 1 info\n"}},
		{name: "fail on warning", file: lintTestFile, args: []string{"--fail-on", "warning"}, code: 1,
			stdout: []string{"warning MQ101"}},
		{name: "fail on info", file: lintTestFile, args: []string{"--fail-on", "info"}, code: 1},
		{name: "fail on none", file: lintTestFile + "\n    bindings: [{ source: ghost, destination: email, destination_type: queue, routing_key: x }]\n",
			args: []string{"--fail-on", "none"}, stdout: []string{"error MQ401"}},
		{name: "errors fail by default", file: lintTestFile + "\n    bindings: [{ source: ghost, destination: email, destination_type: queue, routing_key: x }]\n",
			code: 1, stdout: []string{"error MQ401", "1 error, 1 warning, 1 info"}},
		{name: "severity from the file", file: lintTestFile + "lint: { rules: { MQ101: error, MQ301: off } }\n", code: 1,
			stdout: []string{"error MQ101", "1 error, 0 warnings, 0 infos"}, noStdout: []string{"MQ301"}},
		{name: "ignore comment", file: strings.Replace(lintTestFile, "      email:\n", "      email: # mqctl:ignore MQ101 MQ301\n", 1),
			stdout: []string{"no findings\n"}},
		{name: "json via -o", file: lintTestFile, args: []string{"-o", "json"}, stdout: []string{`"format_version": "1"`, `"id": "MQ101"`}},
		{name: "sarif", file: lintTestFile, args: []string{"--format", "sarif"}, stdout: []string{`"version": "2.1.0"`, `"ruleId": "MQ101"`}},
		{name: "github", file: lintTestFile, args: []string{"--format", "github"}, stdout: []string{"::warning file=", ",line=7,col=7,title=MQ101 no-dead-letter-exchange::"}},
		{name: "unknown format", file: lintTestFile, args: []string{"--format", "xml"}, code: 1, stderr: []string{`unknown format "xml"`}},
		{name: "-o and --format disagree", file: lintTestFile, args: []string{"-o", "json", "--format", "sarif"}, code: 1, stderr: []string{"disagree"}},
		{name: "bad --fail-on", file: lintTestFile, args: []string{"--fail-on", "fatal"}, code: 1, stderr: []string{"--fail-on \"fatal\""}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, errOut, code := runLint(t, tc.file, tc.args...)
			if code != tc.code {
				t.Errorf("exit %d, want %d\nstdout:\n%s\nstderr:\n%s", code, tc.code, out, errOut)
			}
			for _, s := range tc.stdout {
				if !strings.Contains(out, s) {
					t.Errorf("stdout lacks %q:\n%s", s, out)
				}
			}
			for _, s := range tc.noStdout {
				if strings.Contains(out, s) {
					t.Errorf("stdout has %q:\n%s", s, out)
				}
			}
			for _, s := range tc.stderr {
				if !strings.Contains(errOut, s) {
					t.Errorf("stderr lacks %q:\n%s", s, errOut)
				}
			}
		})
	}
}

func TestLintCommandJSONIsValid(t *testing.T) {
	out, _, code := runLint(t, lintTestFile, "--format", "json")
	if code != 0 {
		t.Fatalf("exit %d", code)
	}
	var rep struct {
		Findings []struct{ ID string }
		Summary  struct{ Errors, Warnings, Infos int }
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, out)
	}
	if len(rep.Findings) != 2 || rep.Summary.Warnings != 1 || rep.Summary.Infos != 1 {
		t.Errorf("unexpected report %+v", rep)
	}
}

func TestLintCommandBrokenRetry(t *testing.T) {
	path := filepath.Join("..", "..", "testdata", "broken-retry", "topology.yaml")
	var out, errb bytes.Buffer
	code := Main(context.Background(), []string{"lint", "-f", path}, Env{Stdout: &out, Stderr: &errb})
	if code != 1 {
		t.Fatalf("exit %d, want 1 (MQ201 is an error)\n%s%s", code, out.String(), errb.String())
	}
	if n := strings.Count(out.String(), "error MQ201"); n != 2 {
		t.Errorf("want MQ201 on both retry tiers, got %d:\n%s", n, out.String())
	}
}
