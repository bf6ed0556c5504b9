package engine_test

import (
	"runtime"
	"testing"
	"weak"

	"github.com/mqctl/mqctl/pkg/engine"
	"github.com/mqctl/mqctl/pkg/plan"
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
