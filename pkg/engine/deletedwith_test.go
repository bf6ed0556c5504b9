package engine_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/mqctl/mqctl/pkg/apply"
	"github.com/mqctl/mqctl/pkg/engine"
	"github.com/mqctl/mqctl/pkg/kind"
	"github.com/mqctl/mqctl/pkg/plan"
)

// TestDeleteRefusesBindingsNotMade: a team's file drops an exchange that
// an application's queue, made by hand, is bound to, and another one
// dead-letters to. The broker deletes that binding with the exchange, and
// the other queue's dead letters are dropped from then on: the plan must not count it among the
// unmanaged objects left alone, it notes the loss, and apply refuses
// before anything changes without AllowDataLoss; with it, the exchange
// goes and the hand-made queue stays. Before, the plan listed the binding
// both under the delete and among the unmanaged objects "left alone", and
// apply deleted it without a word (4.3.6).
func TestDeleteRefusesBindingsNotMade(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ctx := context.Background()
	const before = "version: 1\nowner: team-a\nvhosts:\n  ${VHOST}:\n    exchanges:\n      orders: { type: topic }\n    queues:\n      a.q: { bindings: [{ exchange: orders, routing_key: \"order.#\" }] }\n"
	if _, err := f.eng.Apply(ctx, engine.ApplyInput{Desired: f.desired(before)}, engine.ApplyOptions{}); err != nil {
		t.Fatal(err)
	}
	ch := f.b.Channel(t, f.vhost)
	if _, err := ch.QueueDeclare("hand.q", true, false, false, false, nil); err != nil {
		t.Fatal(err)
	}
	if err := ch.QueueBind("hand.q", "x", "orders", false, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := ch.QueueDeclare("hand.dl", true, false, false, false, amqp.Table{"x-dead-letter-exchange": "orders"}); err != nil {
		t.Fatal(err)
	}

	after := f.desired("version: 1\nowner: team-a\nvhosts:\n  ${VHOST}:\n    queues:\n      a.q: {}\n")
	f.notes = nil
	p := f.plan(after)
	binding := plan.ObjectRef{Kind: kind.Binding, Vhost: f.vhost, Name: "orders -> queue hand.q [x]"}
	if slices.Contains(p.Unmanaged, binding) {
		t.Errorf("the plan counts %s among the unmanaged objects left alone, but its exchange's delete deletes it", binding.Name)
	}
	if !slices.Contains(p.Unmanaged, plan.ObjectRef{Kind: kind.Queue, Vhost: f.vhost, Name: "hand.q"}) {
		t.Errorf("unmanaged %v: want queue hand.q, left alone", p.Unmanaged)
	}
	want := `exchange "orders" in vhost "` + f.vhost + `" is deleted, and what mqctl did not make and no file declares (made by hand or by an application) loses its way: the broker deletes with it 1 binding: orders -> queue hand.q [x]; the messages it matches no longer reach its destination; ` +
		`and queue "hand.dl", whose dead-letter exchange it is, sends messages to it, dropped once it is gone`
	if notes := strings.Join(f.ownNotes(), "\n"); !strings.Contains(notes, want) || !strings.Contains(notes, "apply refuses this without --allow-data-loss") {
		t.Errorf("plan's notes:\n%s\nwant one saying %s, and that apply refuses it", notes, want)
	}

	_, err := f.eng.Apply(ctx, engine.ApplyInput{Desired: after}, engine.ApplyOptions{})
	if !errors.Is(err, apply.ErrRefused) || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), "nothing was changed") {
		t.Fatalf("apply: %v, want a refusal saying %s", err, want)
	}
	if got := f.exchangeType("orders"); got != "topic" {
		t.Errorf("exchange orders is %q after the refusal, want topic (nothing changed)", got)
	}

	if _, err := f.eng.Apply(ctx, engine.ApplyInput{Desired: after}, engine.ApplyOptions{AllowDataLoss: true}); err != nil {
		t.Fatalf("apply with AllowDataLoss: %v", err)
	}
	if got := f.exchangeType("orders"); got != "" {
		t.Errorf("exchange orders is still there (%s) after apply with AllowDataLoss", got)
	}
	if _, err := ch.QueueDeclarePassive("hand.q", true, false, false, false, nil); err != nil {
		t.Errorf("queue hand.q, made by hand: %v", err)
	}
	if p := f.plan(after); !p.Empty() {
		t.Errorf("the second plan is not empty: %v", changes(p))
	}
}
