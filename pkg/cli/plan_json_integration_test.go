package cli_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mqctl/mqctl/pkg/plan"
)

// The three contracts of a plan run against a live broker: -o json is the
// public JSON plan (format_version, positions from the file, no internal
// fingerprint, no empty pos), --out writes the private saved plan, and
// apply takes only the saved plan, refusing the JSON plan by name.
func TestPlanJSONAndSavedPlan(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.mustApply(savedBefore)
	f := h.write("file.yaml", savedFile)

	r := h.run("plan", "-f", f, "-o", "json")
	if r.code != 0 {
		t.Fatalf("plan -o json:\n%s", r)
	}
	var doc map[string]any
	if err := json.Unmarshal([]byte(r.stdout), &doc); err != nil {
		t.Fatalf("plan -o json is not JSON: %v\n%s", err, r)
	}
	if doc["format_version"] != plan.FormatVersion {
		t.Errorf("format_version = %v, want %q", doc["format_version"], plan.FormatVersion)
	}
	for _, s := range []string{`"fingerprint"`, `"pos": {}`, `"kind": "mqctl-saved-plan"`} {
		if strings.Contains(r.stdout, s) {
			t.Errorf("plan -o json carries %s:\n%s", s, r.stdout)
		}
	}
	p, err := plan.ReadJSON(strings.NewReader(r.stdout))
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Changes) != 1 || p.Changes[0].Name != "b" || p.Changes[0].Pos.File != f || p.Changes[0].Pos.Line != 6 || p.Changes[0].Pos.Col != 7 {
		t.Errorf("want the create of b at %s:6:7, got %+v", f, p.Changes)
	}

	// plan -o json --out prints the JSON plan and saves the saved plan.
	saved := filepath.Join(h.dir, "saved.plan")
	r = h.run("plan", "-f", f, "-o", "json", "--out", saved)
	if r.code != 0 {
		t.Fatalf("plan -o json --out:\n%s", r)
	}
	if _, err := plan.ReadJSON(strings.NewReader(r.stdout)); err != nil {
		t.Errorf("plan -o json --out does not print the JSON plan: %v\n%s", err, r)
	}
	data, err := os.ReadFile(saved)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(data), `"kind": "mqctl-saved-plan"`) || !strings.Contains(string(data), `"fingerprint": "sha256`) {
		t.Errorf("the saved plan lacks its kind or its fingerprint:\n%s", data)
	}

	// The JSON plan is not something apply takes.
	public := h.write("public.json", r.stdout)
	r = h.run("apply", public, "--auto-approve")
	if r.code != 1 || !strings.Contains(r.stderr, public+" is a JSON plan") || !strings.Contains(r.stderr, `mqctl plan --out `+public) {
		t.Errorf("apply of the JSON plan was not refused by name:\n%s", r)
	}

	r = h.run("apply", saved, "--auto-approve")
	if r.code != 0 || !strings.Contains(r.stdout, "Apply complete: 1 created") {
		t.Fatalf("apply of the saved plan:\n%s", r)
	}
	h.assertNoChanges(savedFile)
}
