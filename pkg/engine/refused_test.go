package engine_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/mqctl/mqctl/pkg/engine"
	"github.com/mqctl/mqctl/pkg/plan"
)

// TestRefusedPlanCarriesRefusals: every refusal of a plan comes back as a
// *plan.RefusedError whose plan (no changes) carries each refused object,
// with its cause, place in the file, reason and fix, for the JSON plan;
// its error is the one a person reads. Where the broker's versions answer
// differently the case says each answer: a topic key with three '#' words
// is refused from 4.3.5 (4.3.6 here), taken by 4.0.5 and 3.10.8.
func TestRefusedPlanCarriesRefusals(t *testing.T) {
	t.Parallel()
	const teamA = "version: 1\nowner: team-a\nvhosts:\n  ${VHOST}:\n    queues:\n      a.q: {}\n"
	for _, tc := range []struct {
		name string
		// before is applied first ("" for nothing).
		before, file string
		// cause is the refusals' cause ("" where this broker takes the
		// file); kind, ref (its name), object, owners and line what the
		// first names.
		cause             func(f *fixture) string
		kind, ref, object string
		owners            []string
		line              int
	}{{
		name:   "another owner's queue changed",
		before: teamA,
		file:   "version: 1\nowner: team-b\nvhosts:\n  ${VHOST}:\n    queues:\n      a.q:\n        limits: { max_length: 10 }\n",
		cause:  func(*fixture) string { return plan.RefusedOwnership }, kind: "queue", ref: "a.q", object: `queue "a.q"`, owners: []string{"team-a"}, line: 6,
	}, {
		name: "an argument the queue type refuses",
		file: "version: 1\nvhosts:\n  ${VHOST}:\n    queues:\n      q:\n        type: quorum\n        arguments: { x-max-priority: 5 }\n",
		// At the argument (line 7), not the queue's name (line 5).
		cause: func(*fixture) string { return plan.RefusedVersion }, kind: "queue", ref: "q", object: `queue "q"`, line: 7,
	}, {
		name:  "a binding from an exchange neither the file nor the broker has",
		file:  "version: 1\nvhosts:\n  ${VHOST}:\n    queues:\n      q: { bindings: [{ exchange: nowhere, routing_key: k }] }\n",
		cause: func(*fixture) string { return plan.RefusedBrokerState }, kind: "binding", ref: "nowhere -> queue q [k]", object: `binding from "nowhere" to queue "q"`, line: 5,
	}, {
		name: "a topic key with three '#' words",
		file: "version: 1\nvhosts:\n  ${VHOST}:\n    exchanges:\n      t: { type: topic }\n    queues:\n      q: { bindings: [{ exchange: t, routing_key: \"#.a.#.b.#\" }] }\n",
		cause: func(f *fixture) string {
			if f.c.RabbitMQVersion().TopicHashLimit() {
				return plan.RefusedVersion // 4.3.6
			}
			return "" // 4.0.5, 3.10.8
		},
		kind: "binding", ref: "t -> queue q [#.a.#.b.#]", object: `binding from "t" to queue "q"`, line: 7,
	}} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := newFixture(t)
			ctx := context.Background()
			if tc.before != "" {
				if _, err := f.eng.Apply(ctx, engine.ApplyInput{Desired: f.desired(tc.before)}, engine.ApplyOptions{}); err != nil {
					t.Fatal(err)
				}
			}
			res, err := f.eng.Plan(ctx, f.desired(tc.file), engine.PlanOptions{})
			cause := tc.cause(f)
			if cause == "" {
				if err != nil {
					t.Fatalf("RabbitMQ %s: plan refused: %v", f.c.RabbitMQVersion(), err)
				}
				if res.Plan.Empty() || len(res.Plan.Refusals) != 0 {
					t.Errorf("RabbitMQ %s: plan %v, refusals %v: want the changes, no refusal", f.c.RabbitMQVersion(), changes(res.Plan), res.Plan.Refusals)
				}
				return
			}
			var refused *plan.RefusedError
			if !errors.As(err, &refused) {
				t.Fatalf("RabbitMQ %s: plan error %v (%T), want a *plan.RefusedError", f.c.RabbitMQVersion(), err, err)
			}
			if !strings.HasPrefix(err.Error(), "plan refused, nothing was changed") {
				t.Errorf("the refusal reads %q", err)
			}
			p := refused.Plan
			if len(p.Changes) != 0 || len(p.Refusals) == 0 || !slices.Equal(p.Vhosts, []string{f.vhost}) {
				t.Fatalf("the refused plan: changes %v, refusals %v, vhosts %v: want no changes, the refusals, the file's vhost", changes(p), p.Refusals, p.Vhosts)
			}
			r := p.Refusals[0]
			if r.Cause != cause || string(r.Kind) != tc.kind || r.Name != tc.ref || r.Object != tc.object || r.Vhost != f.vhost || r.Pos.Line != tc.line || r.Pos.File != "topology.yaml" || !slices.Equal(r.Owners, tc.owners) || r.Reason == "" || r.Fix == "" {
				t.Errorf("the refusal: %+v, want cause %s, %s %q (%s) in vhost %s at topology.yaml:%d, owners %v, a reason and a fix", r, cause, tc.kind, tc.ref, tc.object, f.vhost, tc.line, tc.owners)
			}
			for _, part := range []string{r.Reason, r.Fix, r.Pos.String()} {
				if !strings.Contains(err.Error(), part) {
					t.Errorf("the error does not say %q of the refusal: %v", part, err)
				}
			}
		})
	}
}
