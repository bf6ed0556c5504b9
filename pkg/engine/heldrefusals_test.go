package engine_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	rabbithole "github.com/michaelklishin/rabbit-hole/v2"

	"github.com/mqctl/mqctl/pkg/engine"
	"github.com/mqctl/mqctl/pkg/plan"
	"github.com/mqctl/mqctl/pkg/rmqversion"
)

// TestHeldRefusalsAreNotes: what RabbitMQ 4.3.6 refuses to declare, but a
// broker already holds exactly as the file declares it (made before an
// upgrade: 4.3.5+ refuses only new declarations), refuses no plan that
// does not declare it: the plan is empty, and a note says what the broker
// holds, what it means and the fix that loses nothing. A plan that
// declares it (a replace of the queue, or of the queue a binding binds,
// which puts the binding back) is still refused. The broker here holds
// the objects because it is 4.0.5 or 3.10.8, which take them, and the
// plan is judged as for 4.3.6 (engine.AsVersion); 4.3.6 itself refuses
// to declare them (HTTP 400), so it never holds them but by an upgrade,
// and the test says so.
func TestHeldRefusalsAreNotes(t *testing.T) {
	t.Parallel()
	const topicFile = "version: 1\nvhosts:\n  ${VHOST}:\n    exchanges:\n      t: { type: topic }\n    queues:\n      q:\n        arguments: { %s }\n        bindings: [{ exchange: t, routing_key: \"#.a.#.b.#\" }]\n"
	const timeoutFile = "version: 1\nvhosts:\n  ${VHOST}:\n    queues:\n      c.q:\n        type: classic\n        arguments: { x-consumer-timeout: %s }\n"
	as := rmqversion.MustParse("4.3.6")
	for _, tc := range []struct {
		name string
		// held is the file the broker holds; same is the file as the
		// broker holds it, changed the one that declares the object again.
		held, same, changed string
		// note is what the note on the held object says, past the
		// refusal's own words.
		note []string
	}{{
		name:    "a topic key with three '#' words",
		held:    strings.Replace(topicFile, "%s", "x-max-length: 10", 1),
		same:    strings.Replace(topicFile, "%s", "x-max-length: 10", 1),
		changed: strings.Replace(topicFile, "%s", "x-max-length: 10, x-queue-mode: lazy", 1), // the queue replaced, its binding put back
		note:    []string{`binding from "t" to queue "q"`, `routing key "#.a.#.b.#"`, "holds it exactly as the file declares it", "would refuse to declare it again", "no queue is replaced", `bind with "#.a.#"`},
	}, {
		name:    "a consumer timeout on a classic queue",
		held:    strings.Replace(timeoutFile, "%s", "60000", 1),
		same:    strings.Replace(timeoutFile, "%s", "60000", 1),
		changed: strings.Replace(timeoutFile, "%s", "90000", 1), // the queue replaced
		note:    []string{`queue "c.q"`, "x-consumer-timeout", "nothing times out a consumer of this queue", "leave it in the file as the broker holds it", "messages, consumers and bindings go with it", "declare a new one under another name"},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := newFixture(t)
			ctx := context.Background()
			_, err := f.eng.Apply(ctx, engine.ApplyInput{Desired: f.desired(tc.held)}, engine.ApplyOptions{})
			if f.c.RabbitMQVersion().AtLeast(4, 3) {
				// 4.3.6 refuses to declare it: only an upgrade makes a
				// broker hold it.
				var refused *plan.RefusedError
				if !errors.As(err, &refused) || refused.Plan.Refusals[0].Cause != plan.RefusedVersion {
					t.Fatalf("RabbitMQ %s: apply: %v, want the version's refusal", f.c.RabbitMQVersion(), err)
				}
				return
			}
			if err != nil { // 4.0.5, 3.10.8
				t.Fatalf("RabbitMQ %s: apply: %v", f.c.RabbitMQVersion(), err)
			}
			engine.AsVersion(f.eng, as)
			f.notes = nil
			res, err := f.eng.Plan(ctx, f.desired(tc.same), engine.PlanOptions{})
			if err != nil {
				t.Fatalf("RabbitMQ %s held, judged as %s: plan refused: %v", f.c.RabbitMQVersion(), as, err)
			}
			if !res.Plan.Empty() || len(res.Plan.Refusals) != 0 {
				t.Errorf("plan %v, refusals %v: want an empty plan", changes(res.Plan), res.Plan.Refusals)
			}
			var found bool
			for _, n := range f.ownNotes() {
				if !strings.Contains(n, "topology.yaml:") || !strings.Contains(n, tc.note[0]) {
					continue
				}
				found = true
				for _, part := range tc.note {
					if !strings.Contains(n, part) {
						t.Errorf("the note does not say %q: %s", part, n)
					}
				}
			}
			if !found {
				t.Errorf("no note on %s: %q", tc.note[0], f.ownNotes())
			}
			// apply, which diffs as plan does, has nothing to do either.
			if _, err := f.eng.Apply(ctx, engine.ApplyInput{Desired: f.desired(tc.same)}, engine.ApplyOptions{}); err != nil {
				t.Errorf("apply of the file as the broker holds it, judged as %s: %v", as, err)
			}
			_, err = f.eng.Plan(ctx, f.desired(tc.changed), engine.PlanOptions{})
			var refused *plan.RefusedError
			if !errors.As(err, &refused) || refused.Plan.Refusals[0].Cause != plan.RefusedVersion || !strings.Contains(err.Error(), tc.note[0]) {
				t.Errorf("a plan that declares %s again: %v, want the version's refusal of it", tc.note[0], err)
			}
		})
	}
	// A topic key on a topic exchange the file does not declare and the
	// broker has (CheckBrokerTopicKeys).
	t.Run("a topic key on the broker's exchange", func(t *testing.T) {
		t.Parallel()
		f := newFixture(t)
		ctx := context.Background()
		resp, err := f.c.RabbitHole().DeclareExchange(f.vhost, "ext", rabbithole.ExchangeSettings{Type: "topic", Durable: true})
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		file := "version: 1\nvhosts:\n  ${VHOST}:\n    queues:\n      q:\n        arguments: { %s }\n        bindings: [{ exchange: ext, routing_key: \"#.a.#.b.#\" }]\n"
		_, err = f.eng.Apply(ctx, engine.ApplyInput{Desired: f.desired(strings.Replace(file, "%s", "x-max-length: 10", 1))}, engine.ApplyOptions{})
		if f.c.RabbitMQVersion().AtLeast(4, 3) {
			var refused *plan.RefusedError
			if !errors.As(err, &refused) || refused.Plan.Refusals[0].Cause != plan.RefusedBrokerState {
				t.Fatalf("RabbitMQ %s: apply: %v, want the refusal of the key", f.c.RabbitMQVersion(), err)
			}
			return
		}
		if err != nil {
			t.Fatalf("RabbitMQ %s: apply: %v", f.c.RabbitMQVersion(), err)
		}
		engine.AsVersion(f.eng, as)
		res, err := f.eng.Plan(ctx, f.desired(strings.Replace(file, "%s", "x-max-length: 10", 1)), engine.PlanOptions{})
		if err != nil || !res.Plan.Empty() {
			t.Fatalf("plan: %v, want an empty plan", err)
		}
		if !strings.Contains(strings.Join(f.ownNotes(), "\n"), `binding from "ext" to queue "q" in vhost`) {
			t.Errorf("no note on the binding: %q", f.ownNotes())
		}
		_, err = f.eng.Plan(ctx, f.desired(strings.Replace(file, "%s", "x-max-length: 20", 1)), engine.PlanOptions{})
		var refused *plan.RefusedError
		if !errors.As(err, &refused) || refused.Plan.Refusals[0].Cause != plan.RefusedBrokerState {
			t.Errorf("a plan that replaces the queue, and puts the binding back: %v, want the refusal of the key", err)
		}
	})
}
