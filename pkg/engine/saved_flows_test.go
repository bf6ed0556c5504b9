package engine_test

import (
	"bytes"
	"fmt"
	"runtime"
	"slices"
	"strings"
	"testing"
	"weak"

	"github.com/mqctl/mqctl/pkg/engine"
	"github.com/mqctl/mqctl/pkg/plan"
	"github.com/mqctl/mqctl/pkg/topology"
)

// TestApplySavedPlanLetsGoOfFlows: a saved plan's flows are shown (Show
// sees them) and let go of before the changes are made: nothing after
// Show reads them, and they were 11 MB and more of the 50,002-object
// replace plan that apply PLANFILE held while it made its changes.
func TestApplySavedPlanLetsGoOfFlows(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	saved := f.plan(f.desired(twoQueues))
	if saved.Flows == nil {
		t.Fatal("the saved plan has no flows")
	}
	w := weak.Make(saved.Flows)
	var shown, held bool
	out, err := f.eng.Apply(t.Context(), engine.ApplyInput{Saved: saved}, engine.ApplyOptions{
		Show: func(p *plan.Plan) error { shown = p.Flows != nil; return nil },
		Confirm: func(*plan.Plan) error {
			runtime.GC()
			held = w.Value() != nil
			return nil
		},
	})
	if err != nil || out.Result == nil || len(out.Result.Done) == 0 {
		t.Fatalf("apply the saved plan: %+v, %v", out, err)
	}
	if !shown {
		t.Error("Show was not given the saved plan's flows")
	}
	if held {
		t.Error("the saved plan's flows are still held when its changes are made")
	}
	if out.Plan.Flows != nil {
		t.Error("the plan applied still has its flows")
	}
}

// TestApplySavedPlanHoldsTheBrokersObjects: a saved plan read from its
// file holds copies of the broker's objects (what each change replaces,
// the bindings a replace takes down) and a print of each object read.
// Once the broker is found as the plan saw it, apply holds the objects it
// read instead, as a plan apply makes itself does, and lets go of the
// copies and the prints (12 MB of the 50,002-object replace plan's 45,
// held from the broker's read to the end). The replace applies as it
// did.
func TestApplySavedPlanHoldsTheBrokersObjects(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	const file = `version: 1
vhosts:
  ${VHOST}:
    exchanges:
      events: { type: topic }
    queues:
      jobs:
        bindings: [{ exchange: events, routing_key: "jobs.#" }]
        limits: { max_length: %d }
`
	if _, err := f.eng.Apply(t.Context(), engine.ApplyInput{Desired: f.desired(fmt.Sprintf(file, 10))}, engine.ApplyOptions{}); err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := plan.WriteSaved(&buf, f.plan(f.desired(fmt.Sprintf(file, 20)))); err != nil {
		t.Fatal(err)
	}
	saved, err := plan.ReadSaved(&buf, "replace.plan")
	if err != nil {
		t.Fatal(err)
	}
	i := slices.IndexFunc(saved.Changes, func(c plan.Change) bool { return c.Action == plan.Replace && c.Name == "jobs" })
	if i < 0 || len(saved.Changes[i].Bindings) != 1 || len(saved.ObjectPrints) == 0 {
		t.Fatalf("the saved plan has no replace of queue jobs taking down its binding, or no prints: %v", changes(saved))
	}
	before := weak.Make(saved.Changes[i].Before.(*topology.Queue))
	binding := weak.Make(saved.Changes[i].Bindings[0])
	var held []string
	out, err := f.eng.Apply(t.Context(), engine.ApplyInput{Saved: saved}, engine.ApplyOptions{
		AllowReplace: true,
		Confirm: func(p *plan.Plan) error {
			runtime.GC()
			if before.Value() != nil {
				held = append(held, "its copy of queue jobs as it was")
			}
			if binding.Value() != nil {
				held = append(held, "its copy of the binding the replace takes down")
			}
			if p.ObjectPrints != nil {
				held = append(held, "the prints of the broker's objects")
			}
			return nil
		},
	})
	if err != nil || out.Result == nil || !out.Result.OK() {
		t.Fatalf("apply the saved plan: %+v, %v", out, err)
	}
	if len(held) > 0 {
		t.Errorf("the saved plan still holds, when its changes are made: %s", strings.Join(held, "; "))
	}
	if p := f.plan(f.desired(fmt.Sprintf(file, 20))); !p.Empty() {
		t.Errorf("the plan after the apply: %v", changes(p))
	}
}
