package main

import (
	"bytes"
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mqctl/mqctl/pkg/cli"
)

func corpusDir(t *testing.T) string {
	t.Helper()
	dir := os.Getenv("MQCTL_CORPUS")
	if dir == "" {
		dir = filepath.Join("..", "..", "..", "shared", "corpus")
	}
	if fi, err := os.Stat(filepath.Join(dir, "definitions")); err != nil || !fi.IsDir() {
		t.Skipf("corpus of definitions files not found at %s (set MQCTL_CORPUS to its path)", dir)
	}
	return dir
}

func mqctl(t *testing.T, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	var out, errb bytes.Buffer
	env := cli.Env{Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errb, LookupEnv: func(string) (string, bool) { return "", false }}
	code = cli.Main(context.Background(), args, env)
	return out.String(), errb.String(), code
}

// TestCorpusThroughTheCLI runs every definitions file of the shared corpus
// through `export --from`, then `validate`, `lint` and `graph` (both
// formats), as a user would. Files RabbitMQ itself rejects must be rejected
// with a one-line reason naming the file; every other file must pass every
// command without error. (pkg/export's corpus test checks that the export
// holds exactly the source's objects.)
func TestCorpusThroughTheCLI(t *testing.T) {
	dir := filepath.Join(corpusDir(t), "definitions")
	var files []string
	if err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			files = append(files, p)
		}
		return err
	}); err != nil {
		t.Fatal(err)
	}
	if len(files) < 60 {
		t.Fatalf("found %d corpus files under %s, expected the 62 of SOURCES.md", len(files), dir)
	}
	accepted := 0
	for _, path := range files {
		base := filepath.Base(path)
		t.Run(base, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "topology.yaml")
			_, stderr, code := mqctl(t, "export", "--from", path, "--out", out)
			rejected := strings.HasPrefix(base, "failing_case") || strings.HasSuffix(base, ".tpl")
			if rejected {
				if code != 1 || !strings.Contains(stderr, base) || strings.Contains(stderr, "goroutine") {
					t.Fatalf("RabbitMQ rejects this file: want exit 1 with a message naming it, got %d:\n%s", code, stderr)
				}
				return
			}
			if code != 0 {
				t.Fatalf("export --from: exit %d\n%s", code, stderr)
			}
			accepted++
			for _, args := range [][]string{
				{"validate", "-f", out},
				{"lint", "-f", out, "--fail-on", "none"},
				{"lint", "-f", out, "--format", "sarif", "--fail-on", "none"},
				{"graph", "-f", out, "--format", "mermaid"},
				{"graph", "-f", out, "--format", "dot"},
			} {
				stdout, stderr, code := mqctl(t, args...)
				if code != 0 {
					t.Errorf("mqctl %s: exit %d\n%s", args[0], code, stderr)
				}
				if stdout == "" {
					t.Errorf("mqctl %v printed nothing", args)
				}
			}
		})
	}
	if accepted < 45 {
		t.Errorf("only %d corpus files were accepted", accepted)
	}
}
