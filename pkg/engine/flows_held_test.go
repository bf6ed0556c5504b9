package engine_test

import (
	"runtime"
	"testing"
	"weak"

	"github.com/mqctl/mqctl/internal/testbroker"
	"github.com/mqctl/mqctl/pkg/engine"
	"github.com/mqctl/mqctl/pkg/topology"
)

// TestPlanLetsGoOfDesiredBeforeFlows: by the time a plan's flows run (its
// peak of memory: two simulators of every changed vhost), the engine no
// longer holds the desired topology; only the objects the plan's changes
// keep stay reachable. The caller lets go of it as the CLI does (no use
// after the call).
func TestPlanLetsGoOfDesiredBeforeFlows(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	// jobs exists with another length limit: the plan replaces it.
	testbroker.Declare(t, f.c, f.vhost, &topology.Vhost{Queues: map[string]*topology.Queue{
		"jobs": {Name: "jobs", Type: topology.QueueClassic, Durable: true, Arguments: topology.Args{"x-max-length": 10}}}})
	for _, tc := range []struct {
		name string
		src  string
		opts engine.PlanOptions
	}{
		{"creates", twoQueues, engine.PlanOptions{}},
		{"creates, saved", twoQueues, engine.PlanOptions{Save: true}},
		{"replaces", "version: 1\nvhosts:\n  ${VHOST}:\n    queues:\n      jobs: { limits: { max_length: 20 } }\n", engine.PlanOptions{}},
	} {
		held, called := true, false
		w := weak.Make(f.desired(tc.src))
		engine.WithBeforeFlows(f.eng, func() {
			runtime.GC()
			held, called = w.Value() != nil, true
		})
		if _, err := f.eng.Plan(t.Context(), w.Value(), tc.opts); err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if !called {
			t.Fatalf("%s: the plan did not reach its flows", tc.name)
		}
		if held {
			t.Errorf("%s: the desired topology is still held when the flows run", tc.name)
		}
	}
}
