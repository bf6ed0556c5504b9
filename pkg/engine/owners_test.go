package engine_test

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/mqctl/mqctl/pkg/engine"
	"github.com/mqctl/mqctl/pkg/plan"
)

// TestTwoOwnersShareAVhost: two teams apply their own files, each with its
// own "owner:", to one vhost. Before owners, the second team's apply
// deleted every object of the first (mqctl's one record of the vhost
// listed them, and the second file did not name them), and the first
// team's next plan deleted the second's (measured on 4.3.6). Now each
// plan shows only its own changes, a file that would change the other
// team's queue is refused before anything changes, naming both owners, a
// queue declared alike in both files is shared, and the file that drops a
// shared queue leaves it to the other.
func TestTwoOwnersShareAVhost(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ctx := context.Background()
	const teamA = "version: 1\nowner: team-a\nvhosts:\n  ${VHOST}:\n    exchanges:\n      a.x: { type: topic }\n" +
		"    queues:\n      a.q:\n        bindings: [{ exchange: a.x, routing_keys: [a.#] }]\n"
	const teamB = "version: 1\nowner: team-b\nvhosts:\n  ${VHOST}:\n    queues:\n      b.q: {}\n"
	apply := func(src string) {
		t.Helper()
		// Through a saved plan: the owner travels with it.
		p := f.plan(f.desired(src))
		if _, err := f.eng.Apply(ctx, engine.ApplyInput{Saved: p}, engine.ApplyOptions{}); err != nil {
			t.Fatalf("apply: %v", err)
		}
	}
	others := func(p *plan.Plan) (left, shared []string) {
		for _, o := range p.Others {
			s := string(o.Kind) + " " + o.Name + " " + strings.Join(o.Owners, ",")
			if o.Shared {
				shared = append(shared, s)
			} else {
				left = append(left, s)
			}
		}
		return left, shared
	}
	teamAObjects := []string{"binding a.x -> queue a.q [a.#] team-a", "exchange a.x team-a", "queue a.q team-a"}

	apply(teamA)
	p := f.plan(f.desired(teamB))
	if got := changes(p); !slices.Equal(got, []string{"create queue b.q"}) {
		t.Errorf("team-b's plan: %v, want only its queue created", got)
	}
	if left, _ := others(p); !slices.Equal(left, teamAObjects) {
		t.Errorf("team-b's plan leaves alone %q, want %q", left, teamAObjects)
	}
	apply(teamB)
	if p := f.plan(f.desired(teamA)); !p.Empty() {
		t.Errorf("team-a's plan after team-b's apply: %v", changes(p))
	}
	if p := f.plan(f.desired(teamB)); !p.Empty() {
		t.Errorf("team-b's second plan: %v", changes(p))
	}

	// team-b declares team-a's queue otherwise: refused, nothing changed.
	conflicting := teamB + "      a.q: { limits: { max_length: 10 } }\n"
	_, err := f.eng.Plan(ctx, f.desired(conflicting), engine.PlanOptions{})
	if err == nil || !strings.Contains(err.Error(), `queue "a.q" in vhost "`+f.vhost+`" is managed by "team-a", and this file (owner "team-b") declares it otherwise: arguments.x-max-length: (none) on the broker, 10 in this file`) ||
		!strings.Contains(err.Error(), "topology.yaml:7:7") || !strings.Contains(err.Error(), "nothing was changed") {
		t.Errorf("conflicting plan: %v", err)
	}
	if _, err := f.eng.Apply(ctx, engine.ApplyInput{Desired: f.desired(conflicting)}, engine.ApplyOptions{}); err == nil {
		t.Error("the conflicting apply was not refused")
	}
	if q, err := f.c.GetQueue(ctx, f.vhost, "a.q"); err != nil || len(q.Arguments) != 0 {
		t.Errorf("team-a's queue after the refused apply: %+v, %v", q, err)
	}

	// team-b declares it alike: shared.
	alike := teamB + "      a.q: {}\n"
	p = f.plan(f.desired(alike))
	if _, shared := others(p); !p.Empty() || !slices.Equal(shared, []string{"queue a.q team-a"}) {
		t.Errorf("team-b declaring team-a's queue alike: changes %v, shared %q", changes(p), shared)
	}
	apply(alike)
	// team-b then changes something else in the vhost: the shared queue
	// stays in its record. The apply dropped it from there (b68e4c0), the
	// next plan adopted it again, and team-a's file dropping it in
	// between deleted it (4.3.6).
	alike += "      b.more: {}\n"
	apply(alike)
	if p := f.plan(f.desired(alike)); !p.Empty() || p.Records() {
		t.Errorf("team-b's plan after another apply of the file sharing a.q: %v, record changes %v", changes(p), p.RecordChanges())
	}

	// team-a drops it: its binding goes (team-a's alone), the queue stays
	// for team-b, and neither plan then has a change.
	p = f.plan(f.desired("version: 1\nowner: team-a\nvhosts:\n  ${VHOST}:\n    exchanges:\n      a.x: { type: topic }\n"))
	if got := changes(p); !slices.Equal(got, []string{"delete binding a.x -> queue a.q [a.#]"}) {
		t.Errorf("team-a dropping the shared queue: %v", changes(p))
	}
	apply("version: 1\nowner: team-a\nvhosts:\n  ${VHOST}:\n    exchanges:\n      a.x: { type: topic }\n")
	if _, err := f.c.GetQueue(ctx, f.vhost, "a.q"); err != nil {
		t.Errorf("the queue team-b still declares is gone: %v", err)
	}
	if p := f.plan(f.desired(alike)); !p.Empty() {
		t.Errorf("team-b's plan after team-a dropped the shared queue: %v", changes(p))
	}
	if p := f.plan(f.desired("version: 1\nowner: team-a\nvhosts:\n  ${VHOST}:\n    exchanges:\n      a.x: { type: topic }\n")); !p.Empty() {
		t.Errorf("team-a's plan after it dropped the shared queue: %v", changes(p))
	}
}
