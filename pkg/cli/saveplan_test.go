package cli

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mqctl/mqctl/pkg/plan"
	"github.com/mqctl/mqctl/pkg/topology"
)

// TestSavePlanRefusedLeavesTheFile: a plan that may not be saved (a
// secret written in the file) writes nothing: no empty file, and an
// earlier plan of that name is kept whole; one that may is written.
func TestSavePlanRefusedLeavesTheFile(t *testing.T) {
	const pw = "pw-s4ve"
	mk := func(refs map[string]string) *plan.Plan {
		it := &topology.Item{Kind: "shovel", Name: "s", Settings: topology.Args{"src-uri": "amqp://u:" + pw + "@h/v", "src-queue": "q"},
			Secret: []string{"src-uri"}, Refs: refs}
		return &plan.Plan{FormatVersion: plan.FormatVersion, Changes: []plan.Change{{Action: plan.Create, Kind: "shovel", Vhost: "v", Name: "s", After: plan.ItemObject{Item: it}}}}
	}
	dir := t.TempDir()
	// The plan passes through a temporary file, removed whatever happens.
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	earlier := filepath.Join(dir, "earlier.plan")
	if err := os.WriteFile(earlier, []byte("the earlier plan"), 0o644); err != nil {
		t.Fatal(err)
	}
	fresh := filepath.Join(dir, "fresh.plan")
	for _, file := range []string{earlier, fresh} {
		err := savePlan(file, mk(nil))
		if err == nil || strings.Contains(err.Error(), pw) {
			t.Fatalf("save %s: error %v, want a refusal naming no secret", file, err)
		}
	}
	if got, _ := os.ReadFile(earlier); string(got) != "the earlier plan" {
		t.Errorf("the earlier plan is now %q", got)
	}
	if _, err := os.Stat(fresh); !os.IsNotExist(err) {
		t.Errorf("a refused plan left %s (%v)", fresh, err)
	}
	if err := savePlan(fresh, mk(map[string]string{"src-uri": "SRC_URI"})); err != nil {
		t.Fatal(err)
	}
	got, _ := os.ReadFile(fresh)
	if !strings.Contains(string(got), "SRC_URI") || strings.Contains(string(got), pw) {
		t.Errorf("saved plan:\n%s", got)
	}
	var want bytes.Buffer
	if err := plan.WriteSaved(&want, mk(map[string]string{"src-uri": "SRC_URI"})); err != nil {
		t.Fatal(err)
	}
	if string(got) != want.String() {
		t.Errorf("saved plan:\n%s\nwant\n%s", got, want.String())
	}
	if left, _ := os.ReadDir(tmp); len(left) > 0 {
		t.Errorf("temporary files left: %v", left)
	}
}
