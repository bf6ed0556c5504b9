package cli

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const graphTestFile = `version: 1
vhosts:
  /:
    exchanges:
      orders: { type: topic }
      orders.dlx: { type: topic }
    queues:
      orders.shipping:
        bindings: [{ exchange: orders, routing_key: order.created }]
        dead_letter: { exchange: orders.dlx, queue: orders.shipping.dlq }
        retry: { delays: [10s] }
  other:
    exchanges:
      jobs: { type: direct }
    queues:
      email:
        bindings: [{ exchange: jobs, routing_key: email }]
`

func runGraph(t *testing.T, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	dir := t.TempDir()
	path := filepath.Join(dir, "topology.yaml")
	if err := os.WriteFile(path, []byte(graphTestFile), 0o644); err != nil {
		t.Fatal(err)
	}
	var out, errb bytes.Buffer
	code = Main(context.Background(), append([]string{"graph", "-f", path}, args...), Env{Stdout: &out, Stderr: &errb})
	return out.String(), errb.String(), code
}

func TestGraphCommand(t *testing.T) {
	for _, tc := range []struct {
		name      string
		args      []string
		code      int
		prefix    string   // stdout starts with
		contains  []string // stdout or stderr contains
		notOutput []string // stdout does not contain
	}{
		{name: "default is mermaid", prefix: "flowchart LR\n",
			contains: []string{`-.->|"after 10s"|`, `-.->|"dead-letter: orders.shipping"|`, `subgraph V1["vhost other"]`}},
		{name: "dot", args: []string{"--format", "dot"}, prefix: "digraph mqctl {\n",
			contains: []string{`label="after 10s", style=dotted`, `"cluster_V0"`}},
		{name: "vhost filter", args: []string{"--vhost", "other"}, prefix: "flowchart LR\n",
			contains: []string{`email`}, notOutput: []string{"orders"}},
		{name: "unknown format", args: []string{"--format", "svg"}, code: 1,
			contains: []string{`graph format "svg" is not supported; use one of: mermaid, dot`}},
		{name: "unknown vhost", args: []string{"--vhost", "nope"}, code: 1, contains: []string{`vhost "nope" is not declared`}},
		{name: "json output refused", args: []string{"-o", "json"}, code: 1, contains: []string{`--output "json" is not supported`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			stdout, stderr, code := runGraph(t, tc.args...)
			if code != tc.code {
				t.Fatalf("exit code %d, want %d; stderr:\n%s", code, tc.code, stderr)
			}
			if !strings.HasPrefix(stdout, tc.prefix) {
				t.Errorf("stdout starts %q, want prefix %q", stdout[:min(len(stdout), 40)], tc.prefix)
			}
			for _, s := range tc.contains {
				if !strings.Contains(stdout+stderr, s) {
					t.Errorf("output does not contain %q:\nstdout:\n%s\nstderr:\n%s", s, stdout, stderr)
				}
			}
			for _, s := range tc.notOutput {
				if strings.Contains(stdout, s) {
					t.Errorf("stdout contains %q although it was filtered out", s)
				}
			}
		})
	}
}

func TestGraphCommandMissingFile(t *testing.T) {
	var out, errb bytes.Buffer
	code := Main(context.Background(), []string{"graph", "-f", filepath.Join(t.TempDir(), "none.yaml")}, Env{Stdout: &out, Stderr: &errb})
	if code != 1 || out.Len() != 0 || !strings.Contains(errb.String(), "none.yaml") {
		t.Errorf("code %d, stdout %q, stderr %q: want exit 1, no diagram, an error naming the file", code, out.String(), errb.String())
	}
}
