package engine

import (
	"fmt"
	"net/http"
	"runtime"
	"testing"

	"github.com/mqctl/mqctl/pkg/plan"
	"github.com/mqctl/mqctl/pkg/topology"
)

// TestStoppedQuorumQueuesSortsNoNames: on a broker with the leader health
// check (4.1+), the check for quorum queues without a Raft server picks
// the file's quorum queues from its queues as they come, sorting only
// those it picked: a no-op plan of 50,002 objects without one quorum
// queue sorted all 25,000 names of the file (QueueNames) for nothing,
// 9-11 ms on its way to the flows. Measured in bytes allocated: the
// sorted names of 20,000 queues are 320 KB; nothing is asked of the
// broker (no quorum queue), and a request would fail (the fake answers 404).
// Not parallel: it reads the process's allocation counter.
func TestStoppedQuorumQueuesSortsNoNames(t *testing.T) {
	c := fakeAPI(t, "4.3.6", "rabbit@a", func(w http.ResponseWriter, r *http.Request) bool {
		t.Errorf("unexpected request %s %s", r.Method, r.URL.Path)
		return false
	})
	var notes []string
	e := New(c, Options{Note: func(n string) { notes = append(notes, n) }})
	desired, state := topology.New(), topology.New()
	dv, sv := topology.NewVhost("v"), topology.NewVhost("v")
	for i := range 20000 {
		name := fmt.Sprintf("q%05d", i)
		dv.Queues[name] = &topology.Queue{Name: name, Durable: true}
		sv.Queues[name] = &topology.Queue{Name: name, Durable: true}
	}
	desired.Vhosts["v"], state.Vhosts["v"] = dv, sv
	l := &Live{current: plan.Current{Live: topology.Live{State: state}}}
	p := &plan.Plan{}
	ctx := t.Context()
	e.noteStoppedQuorumQueues(ctx, desired, p, l) // warm
	var before, after runtime.MemStats
	const runs = 10
	runtime.ReadMemStats(&before)
	for range runs {
		e.noteStoppedQuorumQueues(ctx, desired, p, l)
	}
	runtime.ReadMemStats(&after)
	if per := (after.TotalAlloc - before.TotalAlloc) / runs; per > 64<<10 {
		t.Errorf("the check allocated %d bytes a run for 20,000 classic queues; want under %d (no name sorted)", per, 64<<10)
	}
	if len(notes) > 0 {
		t.Errorf("notes for a file without quorum queues: %q", notes)
	}
}
