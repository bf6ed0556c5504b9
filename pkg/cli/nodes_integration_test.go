package cli_test

import (
	"net/http"
	"path/filepath"
	"testing"

	"github.com/mqctl/mqctl/internal/faultproxy"
)

// A plan saved for a later apply records the cluster's nodes; the facts
// the plan reads first list them already: the plan asks GET /api/nodes
// once, on every version (3.10's listing of the nodes that run, where a
// plan needs it, lists them again, and so would a user without the
// monitoring tag, whose facts' listing is refused).
func TestSavedPlanListsNodesOnce(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	p := newProxy(t, h.b.URL)
	file := h.write("topology.yaml", faultSmallFile)
	if r := h.through([]string{p.URL}, "plan", "-f", file, "--out", filepath.Join(h.dir, "release.plan")); r.code != 0 {
		t.Fatalf("plan --out:\n%s", r)
	}
	if n := p.Count(func(e faultproxy.Entry) bool { return e.Method == http.MethodGet && e.Path == "nodes" }); n != 1 {
		t.Errorf("plan --out asked GET /api/nodes %d times, want once:\n%v", n, p.Log())
	}
}
