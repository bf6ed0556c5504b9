package apply_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"

	"github.com/mqctl/mqctl/pkg/apply"
	"github.com/mqctl/mqctl/pkg/plan"
)

// TestGuardStopsApply: when the guard reports the apply lock lost, apply
// starts no further step, says why, and the ownership record lists exactly
// what was done — so a re-run converges.
func TestGuardStopsApply(t *testing.T) {
	t.Parallel()
	e := newFaultEnv(t)
	p, recs, live := e.plan(faultFile)
	lost := errors.New("the apply lock of vhost was lost")
	var calls atomic.Int32
	res := apply.Execute(context.Background(), e.direct, p, apply.Options{
		Parallelism: 1, Records: recs, PropertiesKey: live.PropertiesKey,
		VhostTags: func(vh string) []string { return live.Vhosts[vh].Tags },
		Guard: func() error {
			if calls.Add(1) > 3 {
				return lost
			}
			return nil
		},
	})
	if !errors.Is(res.Stopped, lost) || res.OK() {
		t.Fatalf("Stopped = %v, OK = %v; want the guard's error", res.Stopped, res.OK())
	}
	if len(res.Done) == 0 || len(res.Remaining) == 0 || len(res.Failed) != 0 {
		t.Errorf("done %d, remaining %d, failed %d: want some done, the rest not started, none failed", len(res.Done), len(res.Remaining), len(res.Failed))
	}
	// The record lists what was done: the re-plan creates only the rest.
	again, _, _ := e.plan(faultFile)
	if n := len(again.Changes); n != len(res.Remaining) {
		t.Errorf("after the stop, the plan has %d changes, want the %d steps not done", n, len(res.Remaining))
	}
	for _, c := range again.Changes {
		if c.Action != plan.Create {
			t.Errorf("unexpected %s %s %s after a stopped apply", c.Action, c.Kind, c.Name)
		}
	}
	if len(again.Adopt) != 0 {
		t.Errorf("objects created before the stop are not in the record: adopt %v", again.Adopt)
	}
	if res := e.apply(faultFile); !res.OK() {
		t.Fatalf("re-run: %+v", res)
	}
	e.converged(faultFile)
}
