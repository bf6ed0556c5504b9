package apply_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/mqctl/mqctl/pkg/apply"
	"github.com/mqctl/mqctl/pkg/plan"
)

// Two applies planned from the same state (no lock between them: the
// first one's lost, or a paused apply's write let through) both write
// the next generation of the vhost's ownership record. The broker keeps
// the first declaration and takes the second, with another list, without
// a word (it compares no argument of an exchange but alternate-exchange):
// the second apply must not take its record as written.
func TestRecordWriteRacedFails(t *testing.T) {
	t.Parallel()
	e := newFaultEnv(t)
	const base = "version: 1\nvhosts:\n  ${VHOST}:\n    queues:\n      base: {}\n"
	if res := e.apply(base); !res.OK() {
		t.Fatalf("first apply: %+v", res)
	}
	pa, recs, live := e.plan(base + "      a: {}\n")
	pb, recsB, liveB := e.plan(base + "      b: {}\n")
	opts := apply.Options{Records: recs, PropertiesKey: live.PropertiesKey,
		Current: func(k plan.Kind, vh, name string) plan.Object { return plan.ObjectOf(live.State, k, vh, name) }}
	if res := apply.Execute(context.Background(), e.direct, pa, opts); !res.OK() {
		t.Fatalf("apply a: %+v", res)
	}
	winner := recordNames(t, e)
	opts = apply.Options{Records: recsB, PropertiesKey: liveB.PropertiesKey,
		Current: func(k plan.Kind, vh, name string) plan.Object { return plan.ObjectOf(liveB.State, k, vh, name) }}
	res := apply.Execute(context.Background(), e.direct, pb, opts)
	if len(res.Done) != 1 || len(res.Failed) != 0 {
		t.Fatalf("apply b: done %v, failed %v; want its queue declared", res.Done, res.Failed)
	}
	if !errors.Is(res.RecordErr, apply.ErrRecordRaced) {
		t.Fatalf("apply b's record error = %v; want it to say another apply wrote the record", res.RecordErr)
	}
	for _, want := range []string{"another apply wrote the ownership record of vhost", "run mqctl plan again"} {
		if !strings.Contains(res.RecordErr.Error(), want) {
			t.Errorf("apply b's record error = %v; want it to say %q", res.RecordErr, want)
		}
	}
	if got := recordNames(t, e); got != winner {
		t.Errorf("the loser changed the record: %s, then %s", winner, got)
	}
	// The next plan sees b's queue, not recorded: the next apply adopts
	// it.
	if p, _, _ := e.plan(base + "      a: {}\n      b: {}\n"); len(p.Changes) != 0 || len(p.Adopt) != 1 {
		t.Errorf("plan after the race: changes %v, adopt %v; want queue b adopted", p.Changes, p.Adopt)
	}
}
