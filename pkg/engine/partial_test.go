package engine_test

import (
	"context"
	"strings"
	"testing"

	"github.com/mqctl/mqctl/pkg/engine"
	"github.com/mqctl/mqctl/pkg/kind"
	"github.com/mqctl/mqctl/pkg/plan"
)

// TestApplyStoppedAtAQueue: an apply the broker stops part way, at a queue
// it refuses (without the preflight, and without the version table, which
// refuses x-overflow "bogus" first: what no table knows reaches the
// broker), reports what was done, what failed and what was left; what was
// done is recorded as mqctl's, and a re-run with the cause fixed
// converges, on every version (was partial_queue.txtar; a policy the
// broker stops the apply at is partial_policy.txtar, through the CLI).
func TestApplyStoppedAtAQueue(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	engine.WithoutTable(f.eng)
	ctx := context.Background()
	file := func(overflow string) string {
		return `version: 1
vhosts:
  ${VHOST}:
    exchanges:
      ex: { type: direct }
    queues:
      good: { bindings: [{ exchange: ex, routing_key: good }] }
      bogus:
        arguments: { x-overflow: ` + overflow + ` }
        bindings: [{ exchange: ex, routing_key: bogus }]
    policies:
      cap: { pattern: "^good$", definition: { max-length: 10 } }
`
	}
	out, err := f.eng.Apply(ctx, engine.ApplyInput{Desired: f.desired(file("bogus"))}, engine.ApplyOptions{NoPreflight: true})
	if err == nil || out == nil || out.Result == nil {
		t.Fatalf("the apply did not stop: %v", err)
	}
	steps := func(from []string) string { return strings.Join(from, "; ") }
	var done, left []string
	for _, s := range out.Result.Done {
		done = append(done, s.String())
	}
	for _, s := range out.Result.Remaining {
		left = append(left, s.String())
	}
	if d := steps(done); !strings.Contains(d, `declare exchange "ex"`) || !strings.Contains(d, `declare queue "good"`) || len(done) != 2 {
		t.Errorf("done: %s; want the exchange and the good queue", d)
	}
	if len(out.Result.Failed) != 1 || !strings.Contains(out.Result.Failed[0].Err.Error(), "invalid arg 'x-overflow' for queue 'bogus'") {
		t.Errorf("failed: %+v; want the queue bogus, in the broker's words", out.Result.Failed)
	}
	if l := steps(left); len(left) != 3 || !strings.Contains(l, "create binding ex -> queue bogus [bogus]") || !strings.Contains(l, "create binding ex -> queue good [good]") || !strings.Contains(l, `put policy "cap"`) {
		t.Errorf("not done: %s; want both bindings and the policy", l)
	}
	// What was done is mqctl's: dropping the good queue would delete it.
	rec := f.record()
	for _, ref := range []plan.ObjectRef{{Kind: kind.Exchange, Vhost: f.vhost, Name: "ex"}, {Kind: kind.Queue, Vhost: f.vhost, Name: "good"}} {
		if _, ok := rec.Managed[ref]; !ok {
			t.Errorf("the record lacks %v, which the apply made", ref)
		}
	}
	// With the cause fixed, apply converges.
	fixed := f.desired(file("reject-publish"))
	if _, err := f.eng.Apply(ctx, engine.ApplyInput{Desired: fixed}, engine.ApplyOptions{}); err != nil {
		t.Fatalf("the fixed file: %v", err)
	}
	if p := f.plan(f.desired(file("reject-publish"))); !p.Empty() {
		t.Errorf("the plan after the fixed apply: %v", changes(p))
	}
}
