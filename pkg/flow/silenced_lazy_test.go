package flow

import (
	"strings"
	"testing"

	"github.com/mqctl/mqctl/internal/gentopo"
	"github.com/mqctl/mqctl/pkg/rmqversion"
)

// TestSilencedLooksAfterOnlyWhenAsked: where every queue whose dead
// letters changed is still bound after the change (the bench's replace
// plan: a direct dead-letter exchange made fanout, every queue rebound),
// silenced works out where those dead letters went before, to find its
// candidates, and never where they go after: it costs about what the
// before side's reach costs, not that and the after side's too (12,500
// simulated dead letters and their index at 50,002 objects).
func TestSilencedLooksAfterOnlyWhenAsked(t *testing.T) {
	const n = 200
	y := gentopo.YAML("/", n)
	r := strings.Replace(y, "events.dlx: { type: direct }", "events.dlx: { type: fanout }", 1)
	if r == y {
		t.Fatal("the exchange to replace is not in the generated file")
	}
	before, after := load(t, y), load(t, r)
	d := &Diff{}
	c := newVhostCompare("/", before.Vhosts["/"], after.Vhosts["/"], rmqversion.Version{}, defaultMaxClasses, d)
	c.routes()
	c.findDeadLetterChanges()
	if len(c.dlChanged) != n {
		t.Fatalf("%d queues' dead letters changed, want %d", len(c.dlChanged), n)
	}
	changed := sortedKeys(c.dlChanged)
	reachBefore := testing.AllocsPerRun(5, func() { c.b.deadLetterReach(changed) })
	reachAfter := testing.AllocsPerRun(5, func() { c.a.deadLetterReach(changed) })
	silenced := testing.AllocsPerRun(5, func() { c.d.Silenced = nil; c.silenced() })
	t.Logf("allocations: before's reach %.0f, after's %.0f, silenced %.0f", reachBefore, reachAfter, silenced)
	if len(c.d.Silenced) != 0 {
		t.Fatalf("silenced %+v, want none", c.d.Silenced)
	}
	if silenced >= reachBefore+reachAfter/2 {
		t.Errorf("silenced made %.0f allocations, want under %.0f: the before side's reach (%.0f) and not the after side's (%.0f)", silenced, reachBefore+reachAfter/2, reachBefore, reachAfter)
	}
}
