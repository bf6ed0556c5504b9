package cli

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	gold "github.com/mqctl/mqctl/internal/golden"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/mqctl/mqctl/pkg/loader"
	"github.com/mqctl/mqctl/pkg/topology"
)

const validateTestFile = `version: 1
vhosts:
  /:
    exchanges:
      orders: { type: topic }
      orders.dlx: { type: topic }
    queues:
      orders.shipping:
        type: quorum
        bindings:
          - exchange: orders
            routing_keys: [order.created, order.paid]
        dead_letter:
          exchange: orders.dlx
          queue: orders.shipping.dlq
        retry:
          delays: [10s, 1m]
    policies:
      cap: { pattern: "^orders\\.", definition: { max-length: 100000 } }
`

func runValidate(t *testing.T, env Env, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	var out, errb bytes.Buffer
	env.Stdout, env.Stderr = &out, &errb
	code = Main(context.Background(), append([]string{"validate"}, args...), env)
	return out.String(), errb.String(), code
}

func writeTopology(t *testing.T, name, body string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestValidateSummary(t *testing.T) {
	path := writeTopology(t, "topology.yaml", validateTestFile)
	out, errOut, code := runValidate(t, Env{}, "-f", path)
	want := path + ": OK — 1 vhost, 2 exchanges, 4 queues, 3 bindings, 1 policy\n"
	if code != 0 || out != want || errOut != "" {
		t.Errorf("exit %d\nstdout: %q\nwant:   %q\nstderr: %s", code, out, want, errOut)
	}
}

func TestValidateStdinAndSeveralFiles(t *testing.T) {
	extra := writeTopology(t, "audit.yaml", "version: 1\nvhosts:\n  audit:\n    queues:\n      log: {}\n      trail: {}\n")
	out, errOut, code := runValidate(t, Env{Stdin: strings.NewReader(validateTestFile)}, "-f", "-", "-f", extra)
	want := "<stdin>, " + extra + ": OK — 2 vhosts, 2 exchanges, 6 queues, 3 bindings, 1 policy\n"
	if code != 0 || out != want {
		t.Errorf("exit %d\nstdout: %q\nwant:   %q\nstderr: %s", code, out, want, errOut)
	}
}

func TestValidateErrors(t *testing.T) {
	path := writeTopology(t, "bad.yaml", `version: 1
vhosts:
  /:
    queues:
      email:
        max_priority: ${PRIO}
        bindings:
          - exchange: jobs
            routing_kye: email
`)
	out, errOut, code := runValidate(t, Env{}, "-f", path)
	want := path + ":6:23: environment variable PRIO is not set (set PRIO, or give a default: ${PRIO:-value})\n" +
		path + `:9:13: queue "email": bindings[0]: unknown field "routing_kye" (did you mean "routing_key"?)` + "\n" +
		"mqctl: 2 errors\n"
	if code != 1 || out != "" || errOut != want {
		t.Errorf("exit %d\nstdout: %q\nstderr:\n%s\nwant:\n%s", code, out, errOut, want)
	}

	// The environment comes from Env.LookupEnv.
	env := Env{LookupEnv: func(k string) (string, bool) { return "10", k == "PRIO" }}
	_, errOut, code = runValidate(t, env, "-f", path)
	if code != 1 || strings.Contains(errOut, "PRIO") || !strings.Contains(errOut, "routing_kye") {
		t.Errorf("exit %d, stderr:\n%s", code, errOut)
	}
}

func TestValidateMissingDefaultFile(t *testing.T) {
	t.Chdir(t.TempDir())
	_, errOut, code := runValidate(t, Env{})
	want := "topology.yaml: cannot read: no such file or directory (check the path, or pass the topology file with -f)\n"
	if code != 1 || errOut != want {
		t.Errorf("exit %d, stderr %q, want %q", code, errOut, want)
	}
}

func TestValidateBadOutput(t *testing.T) {
	path := writeTopology(t, "topology.yaml", validateTestFile)
	_, errOut, code := runValidate(t, Env{}, "-f", path, "-o", "yaml")
	if code != 1 || !strings.Contains(errOut, `--output "yaml" is not supported here`) {
		t.Errorf("exit %d, stderr %q", code, errOut)
	}
}

// The expanded YAML and JSON views hold the expanded topology: the YAML
// loads back into the same topology, and the JSON matches the golden file.
func TestValidateExpanded(t *testing.T) {
	path := writeTopology(t, "topology.yaml", validateTestFile)
	want, err := loader.Load([]string{path}, loader.Options{})
	if err != nil {
		t.Fatal(err)
	}

	out, errOut, code := runValidate(t, Env{}, "-f", path, "--expanded")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	for _, s := range []string{"orders.shipping.dlq:", "orders.shipping.retry.10s:", "orders.shipping.retry.1m:"} {
		if !strings.Contains(out, s) {
			t.Errorf("--expanded output lacks %q:\n%s", s, out)
		}
	}
	if strings.Contains(out, "queue: orders.shipping.dlq") || strings.Contains(out, "retry:") {
		t.Errorf("--expanded output still has sugar:\n%s", out)
	}
	checkExpandedLoadsBack(t, want, out)

	out, errOut, code = runValidate(t, Env{}, "-f", path, "-o", "json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	// The versioned document (docs/validate-json.md): positions as
	// file/line/column, the temporary directory left out of the golden file.
	if !strings.Contains(out, `"format_version": "1"`) || strings.Contains(out, `"pos": {}`) {
		t.Errorf("validate -o json needs a format_version and no empty pos:\n%s", out)
	}
	checkValidateGolden(t, "expanded.json", []byte(strings.ReplaceAll(out, filepath.Dir(path)+string(filepath.Separator), "")))
}

// checkExpandedLoadsBack checks that the --expanded YAML out loads into
// topology want: it holds every setting of the file.
func checkExpandedLoadsBack(t *testing.T, want *topology.Topology, out string) {
	t.Helper()
	got, err := loader.LoadBytes("expanded.yaml", []byte(out), loader.Options{})
	if err != nil {
		t.Fatalf("expanded output does not load: %v\n%s", err, out)
	}
	ignore := cmpopts.IgnoreFields(topology.Meta{}, "Pos", "Ignore", "ArgPos")
	// Where a queue came from is the file's (the expanded YAML spells
	// its sugar out); its alert and backoff must load back.
	roleless := cmpopts.IgnoreFields(topology.Queue{}, "Role", "Origin", "Delay", "TypeFromVhost", "FromDefaults")
	if diff := cmp.Diff(want, got, ignore, roleless, cmpopts.IgnoreFields(topology.Topology{}, "Lint")); diff != "" {
		t.Errorf("expanded YAML loads into another topology (-want +got):\n%s\n%s", diff, out)
	}
}

// TestValidateExpandedAlert: a queue's alert (status --check's
// thresholds), set on the queue or by defaults.queue, is in the expanded
// YAML, which loads back into the same topology, and in the JSON.
func TestValidateExpandedAlert(t *testing.T) {
	for _, tc := range []struct {
		name, file string
		yaml, json []string
	}{
		{name: "on the queue", file: `version: 1
vhosts:
  /:
    queues: { a: { alert: { max_depth: 100 } }, b: {} }
`, yaml: []string{"a: {alert: {max_depth: 100}}", "b: {}"}, json: []string{`"alert":{"max_depth":100}`}},
		{name: "by defaults.queue, with other defaults", file: `version: 1
vhosts:
  /:
    defaults:
      queue: { alert: { max_depth: 100 }, limits: { max_length: 50, overflow: reject-publish }, dead_letter: { exchange: "", queue: "{queue}.dlq" } }
    queues: { a: {}, b: { alert: { max_depth: 7 } } }
`, yaml: []string{"alert: {max_depth: 100}", "alert: {max_depth: 7}", "limits: {max_length: 50, overflow: reject-publish}"},
			json: []string{`"alert":{"max_depth":100}`, `"alert":{"max_depth":7}`}},
		{name: "zero", file: `version: 1
vhosts:
  /:
    queues: { a: { alert: { max_depth: 0 } } }
`, yaml: []string{"a: {alert: {max_depth: 0}}"}, json: []string{`"alert":{"max_depth":0}`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, flat := expandedAndJSON(t, tc.file)
			for _, w := range tc.yaml {
				if !strings.Contains(out, w) {
					t.Errorf("--expanded lacks %q:\n%s", w, out)
				}
			}
			for _, w := range tc.json {
				if !strings.Contains(flat, w) {
					t.Errorf("-o json lacks %s:\n%s", w, flat)
				}
			}
		})
	}
}

// expandedAndJSON validates file with --expanded, checks that the
// expanded YAML loads back into the file's topology, and validates it
// with -o json: the YAML and the JSON without white space.
func expandedAndJSON(t *testing.T, file string) (expanded, flatJSON string) {
	t.Helper()
	path := writeTopology(t, "topology.yaml", file)
	want, err := loader.Load([]string{path}, loader.Options{})
	if err != nil {
		t.Fatal(err)
	}
	expanded, errOut, code := runValidate(t, Env{}, "-f", path, "--expanded")
	if code != 0 {
		t.Fatalf("--expanded: exit %d: %s", code, errOut)
	}
	checkExpandedLoadsBack(t, want, expanded)
	out, errOut, code := runValidate(t, Env{}, "-f", path, "-o", "json")
	if code != 0 {
		t.Fatalf("-o json: exit %d: %s", code, errOut)
	}
	return expanded, strings.Join(strings.Fields(out), "")
}

func checkValidateGolden(t *testing.T, name string, got []byte) {
	t.Helper()
	gold.Check(t, filepath.Join("testdata", "validate", name), got)
}

// TestValidateVhostTags: a vhost's tags are in the expanded YAML, which
// loads back into the same topology ([] as [], left out as left out), and
// in the JSON.
func TestValidateVhostTags(t *testing.T) {
	for _, tc := range []struct {
		name, tags string
		yaml, json string // "": none
	}{
		{"a list", "tags: [prod, team-a]", "tags: [prod, team-a]", `"tags":["prod","team-a"]`},
		{"none", "tags: []", "tags: []", `"tags":[]`},
		{"left out", "description: d", "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, flat := expandedAndJSON(t, "version: 1\nvhosts:\n  v:\n    "+tc.tags+"\n")
			if tc.yaml != "" && !strings.Contains(out, tc.yaml) || tc.yaml == "" && strings.Contains(out, "tags") {
				t.Errorf("--expanded, want %q:\n%s", tc.yaml, out)
			}
			if tc.json != "" && !strings.Contains(flat, tc.json) || tc.json == "" && strings.Contains(flat, `"tags"`) {
				t.Errorf("-o json, want %s:\n%s", tc.json, flat)
			}
		})
	}
}
