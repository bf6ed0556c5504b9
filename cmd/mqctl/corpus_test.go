package main

import (
	"bytes"
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mqctl/mqctl/internal/corpus"

	"github.com/mqctl/mqctl/pkg/cli"
)

func mqctl(t *testing.T, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	return mqctlEnv(t, nil, args...)
}

// mqctlEnv runs mqctl with the environment variables vars and no other.
func mqctlEnv(t *testing.T, vars map[string]string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	var out, errb bytes.Buffer
	env := cli.Env{Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errb, LookupEnv: func(k string) (string, bool) { v, ok := vars[k]; return v, ok }}
	code = cli.Main(context.Background(), args, env)
	return out.String(), errb.String(), code
}

// exportNote is what export prints on stderr before the variables its
// placeholders (passwords, URIs with credentials) name, one a line.
const exportNote = "mqctl: note: the export holds no secret; set these variables before applying it:\n"

// exportVariables gives each variable export's stderr names a value, as a
// user sets them before using the export: a URI one (validate judges a
// URI as RabbitMQ does) for a URI, any other a word.
func exportVariables(t *testing.T, stderr string) map[string]string {
	t.Helper()
	vars := map[string]string{}
	i := strings.Index(stderr, exportNote)
	if i < 0 {
		return vars
	}
	for _, line := range strings.Split(stderr[i+len(exportNote):], "\n") {
		if !strings.HasPrefix(line, "  ") {
			break
		}
		name, what, ok := strings.Cut(strings.TrimSpace(line), ": ")
		if !ok || name == "" {
			t.Fatalf("note line %q is not NAME: WHAT", line)
		}
		vars[name] = "value-of-" + name
		if strings.Contains(what, "uri of ") {
			vars[name] = "amqp://user:value-of-" + name + "@host"
		}
	}
	return vars
}

// TestCorpusThroughTheCLI runs every definitions file of the shared corpus
// through `export --from`, then `validate`, `lint` and `graph` (both
// formats), as a user would, with the variables export names set. Files RabbitMQ itself rejects must be rejected
// with a one-line reason naming the file; every other file must pass every
// command without error. (pkg/export's corpus test checks that the export
// holds exactly the source's objects.)
func TestCorpusThroughTheCLI(t *testing.T) {
	t.Parallel()
	dir, files := corpus.Files(t)
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
			// The export's ${VAR} placeholders: every variable export
			// names on stderr is set; the commands then need no other.
			vars := exportVariables(t, stderr)
			// validate judges for the target version: refused on a line
			// that would refuse the file before anything changes, fine on
			// the others.
			for line, refused := range corpus.Refused {
				_, stderr, code := mqctlEnv(t, vars, "validate", "-f", out, "--rabbitmq-version", line)
				if r, ok := refused[base]; ok && r.AtPlan && !r.Live {
					if code != 1 || !strings.Contains(stderr, r.Want) || !strings.Contains(stderr, "RabbitMQ "+line+" would refuse") {
						t.Errorf("validate --rabbitmq-version %s: want exit 1 saying %q, got %d:\n%s", line, r.Want, code, stderr)
					}
				} else if code != 0 {
					t.Errorf("validate --rabbitmq-version %s: exit %d\n%s", line, code, stderr)
				}
			}
			for _, args := range [][]string{
				{"lint", "-f", out, "--fail-on", "none"},
				{"lint", "-f", out, "--format", "sarif", "--fail-on", "none"},
				{"graph", "-f", out, "--format", "mermaid"},
				{"graph", "-f", out, "--format", "dot"},
			} {
				stdout, stderr, code := mqctlEnv(t, vars, args...)
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
