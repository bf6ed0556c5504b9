package flow

import (
	"runtime"
	"strings"
	"testing"

	"github.com/mqctl/mqctl/internal/gentopo"
	"github.com/mqctl/mqctl/pkg/rmqversion"
)

// TestFlowsHoldLittleAfterMake: what a comparison remembers of its flows
// (c.flows) once the classes of the bench's replace change are made is
// the patterns (one entry per binding key of both sides), not also an
// index of them that nothing reads: under 60 bytes a binding of the
// 2,500-queue topology (33 on Go 1.26). With the index it held 98.
func TestFlowsHoldLittleAfterMake(t *testing.T) {
	const n = 2500
	y := gentopo.YAML("/", n)
	r := strings.Replace(y, "events: { type: topic }", "events: { type: headers }", 1)
	r = strings.Replace(r, "events.dlx: { type: direct }", "events.dlx: { type: fanout }", 1)
	before, after := load(t, y), load(t, r)
	c := newVhostCompare("/", before.Vhosts["/"], after.Vhosts["/"], rmqversion.Version{}, defaultMaxClasses, &Diff{})
	c.routes()
	c.classMemo = nil
	var with, without runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&with)
	c.flows = nil
	runtime.GC()
	runtime.ReadMemStats(&without)
	perBinding := (int64(with.HeapAlloc) - int64(without.HeapAlloc)) / (2 * n)
	t.Logf("the flows hold %d bytes a binding", perBinding)
	if perBinding >= 60 {
		t.Errorf("the flows hold %d bytes a binding, want under 60", perBinding)
	}
	runtime.KeepAlive(c)
}
