package engine_test

import (
	"context"
	"errors"
	"maps"
	"sync"
	"testing"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/mqctl/mqctl/pkg/apply"
	"github.com/mqctl/mqctl/pkg/engine"
)

const bindingOnA = `version: 1
vhosts:
  ${VHOST}:
    exchanges:
      orders: {type: direct}
    queues:
      a: {}
      b: {}
    bindings:
      - {source: orders, destination: a, routing_key: k}
`

const bindingMovedToB = `version: 1
vhosts:
  ${VHOST}:
    exchanges:
      orders: {type: direct}
    queues:
      a: {}
      b: {}
      c: {}
    bindings:
      - {source: orders, destination: b, routing_key: k}
`

// publisher returns a function that publishes one mandatory message with
// key k to exchange x on ch (in confirm mode: testbroker.Channel), and says whether the broker
// routed it to a queue.
func publisher(t *testing.T, ch *amqp.Channel, x string) func() bool {
	t.Helper()
	returns := ch.NotifyReturn(make(chan amqp.Return, 4))
	return func() bool {
		t.Helper()
		dc, err := ch.PublishWithDeferredConfirmWithContext(t.Context(), x, "k", true, false, amqp.Publishing{Body: []byte("m")})
		if err != nil {
			t.Fatal(err)
		}
		if !dc.Wait() {
			t.Fatal("the broker nacked the message")
		}
		select {
		case <-returns:
			return false
		default:
			return true
		}
	}
}

// publishingAt are apply options that publish once (publish) when each
// step that a label of at matches is done, and the answers so far: per
// label, whether the message reached a queue.
func publishingAt(publish func() bool, at map[string]func(apply.Step) bool) (engine.ApplyOptions, func() map[string]bool) {
	var mu sync.Mutex
	routed := map[string]bool{}
	opts := engine.ApplyOptions{Progress: func(ev apply.Event) {
		if ev.Err != nil {
			return
		}
		mu.Lock()
		defer mu.Unlock()
		for label, match := range at {
			if _, done := routed[label]; !done && match(ev.Step) {
				routed[label] = publish()
			}
		}
	}}
	return opts, func() map[string]bool {
		mu.Lock()
		defer mu.Unlock()
		return maps.Clone(routed)
	}
}

// checkRouted fails t for each label of want that routed did not get to,
// or whose message came back unroutable.
func checkRouted(t *testing.T, routed map[string]bool, want ...string) {
	t.Helper()
	for _, label := range want {
		if ok, tried := routed[label]; !tried {
			t.Errorf("no message published once %s", label)
		} else if !ok {
			t.Errorf("the message published once %s came back unroutable", label)
		}
	}
}

// checkDepths fails t for each queue of want that does not hold as many
// messages.
func checkDepths(t *testing.T, ch *amqp.Channel, want map[string]int) {
	t.Helper()
	for q, n := range want {
		qi, err := ch.QueueDeclarePassive(q, true, false, false, false, nil)
		if err != nil {
			t.Fatalf("queue %s: %v", q, err)
		}
		if qi.Messages != n {
			t.Errorf("queue %s holds %d messages, want %d", q, qi.Messages, n)
		}
	}
}

// step matches a step done of operation op on the object named name.
func step(op apply.Op, name string) func(apply.Step) bool {
	return func(s apply.Step) bool { return s.Op() == op && s.Name == name }
}

// TestBindingMovedNeverRoutesNowhere: a binding moved from queue a to
// queue b is created before the old one is deleted (kind.LatePhase: make
// before break). A message published with its key while the apply declares
// the plan's queues, between the phases, reaches a queue. When apply
// deleted bindings first, it came back unroutable (a publisher without
// mandatory loses it: 681 of 14,476 messages on 4.3.6 with 300 queues
// declared in between).
func TestBindingMovedNeverRoutesNowhere(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ctx := context.Background()
	if _, err := f.eng.Apply(ctx, engine.ApplyInput{Desired: f.desired(bindingOnA)}, engine.ApplyOptions{}); err != nil {
		t.Fatal(err)
	}
	ch := f.b.Channel(t, f.vhost)
	publish := publisher(t, ch, "orders")
	opts, routed := publishingAt(publish, map[string]func(apply.Step) bool{"queue c declared": step(apply.OpDeclareQueue, "c")})
	out, err := f.eng.Apply(ctx, engine.ApplyInput{Desired: f.desired(bindingMovedToB)}, opts)
	if err != nil || out.Result == nil || !out.Result.OK() {
		t.Fatalf("apply: %+v, %v", out, err)
	}
	// Unroutable once queue c was declared: the old binding was deleted
	// before the new one was made.
	checkRouted(t, routed(), "queue c declared")
	if !publish() {
		t.Error("after the apply, a message with key k came back unroutable")
	}
	// Where each copy went: the one midway to a (its binding still
	// there), the one after to b alone.
	checkDepths(t, ch, map[string]int{"a": 1, "b": 1})
}

const queueA = `version: 1
vhosts:
  ${VHOST}:
    exchanges:
      orders: {type: direct}
    queues:
      a: {}
    bindings:
      - {source: orders, destination: a, routing_key: k}
`

const queueRenamedToB = `version: 1
vhosts:
  ${VHOST}:
    exchanges:
      orders: {type: direct}
    queues:
      b: {}
    bindings:
      - {source: orders, destination: b, routing_key: k}
`

// TestQueueRenamedLosesNothing: a queue renamed from a to b (a deleted for
// good, b declared) while a publisher sends with its key. b is declared
// and bound before a's binding and a go (kind.Spec.DeleteLate: make
// before break), so a message published meanwhile is routed to a queue:
// to a before b is bound, and its copy to both after. a, holding the
// first, is then refused its delete (it holds a message), and nothing is
// lost; once drained, the next apply deletes it. When apply deleted a
// first, the message published while it declared b came back unroutable,
// and the apply succeeded: lost without a word, --allow-data-loss or not.
func TestQueueRenamedLosesNothing(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ctx := context.Background()
	if _, err := f.eng.Apply(ctx, engine.ApplyInput{Desired: f.desired(queueA)}, engine.ApplyOptions{}); err != nil {
		t.Fatal(err)
	}
	ch := f.b.Channel(t, f.vhost)
	opts, routed := publishingAt(publisher(t, ch, "orders"), map[string]func(apply.Step) bool{
		"b declared": step(apply.OpDeclareQueue, "b"),
		"b bound": func(s apply.Step) bool {
			return s.Op() == apply.OpBind && s.Binding != nil && s.Binding.Destination == "b"
		},
	})
	out, err := f.eng.Apply(ctx, engine.ApplyInput{Desired: f.desired(queueRenamedToB)}, opts)
	if out == nil || out.Result == nil || len(out.Result.Failed) != 1 || !errors.Is(out.Result.Failed[0].Err, apply.ErrRefused) || out.Result.Failed[0].Step.Name != "a" {
		t.Fatalf("apply: %+v, %v; want queue a's delete refused, alone: it holds the messages published before its binding went", out, err)
	}
	checkRouted(t, routed(), "b declared", "b bound")
	// a holds both messages (its binding was there throughout), b the
	// second.
	checkDepths(t, ch, map[string]int{"a": 2, "b": 1})
	if _, err := ch.QueuePurge("a", false); err != nil {
		t.Fatal(err)
	}
	// The plan takes the larger of the management statistics and the
	// passive declare (the statistics count unacknowledged messages too),
	// and the statistics lag by up to 5 s: wait until they say a is empty.
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(200 * time.Millisecond) {
		st, err := f.c.GetQueueStats(ctx, f.vhost, "a")
		if err == nil && st.Messages == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("queue a's statistics still count %+v (%v) 20 s after it was purged", st, err)
		}
	}
	if _, err := f.eng.Apply(ctx, engine.ApplyInput{Desired: f.desired(queueRenamedToB)}, engine.ApplyOptions{}); err != nil {
		t.Fatalf("apply once a is drained: %v", err)
	}
	if _, err := ch.QueueDeclarePassive("a", true, false, false, false, nil); err == nil {
		t.Error("queue a is still there once drained and applied again")
	}
}

const exchangeE = `version: 1
vhosts:
  ${VHOST}:
    exchanges:
      a: {type: direct}
      e: {type: direct}
    queues:
      q: {}
    bindings:
      - {source: a, destination: e, destination_type: exchange, routing_key: k}
      - {source: e, destination: q, routing_key: k}
`

const exchangeRenamedToF = `version: 1
vhosts:
  ${VHOST}:
    exchanges:
      a: {type: direct}
      f: {type: direct}
    queues:
      q: {}
    bindings:
      - {source: a, destination: f, destination_type: exchange, routing_key: k}
      - {source: f, destination: q, routing_key: k}
`

// TestExchangeRenamedNeverRoutesNowhere: an exchange e, bound from
// exchange a and to queue q, renamed to f. f is declared and bound before
// e and its bindings go (kind.Spec.DeleteLate), so a message published to
// a while apply declares f reaches q through e. When apply deleted e
// first, it came back unroutable (as a dead letter whose dead-letter
// exchange is renamed so: dropped).
func TestExchangeRenamedNeverRoutesNowhere(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ctx := context.Background()
	if _, err := f.eng.Apply(ctx, engine.ApplyInput{Desired: f.desired(exchangeE)}, engine.ApplyOptions{}); err != nil {
		t.Fatal(err)
	}
	ch := f.b.Channel(t, f.vhost)
	publish := publisher(t, ch, "a")
	opts, routed := publishingAt(publish, map[string]func(apply.Step) bool{"exchange f declared": step(apply.OpDeclareExchange, "f")})
	out, err := f.eng.Apply(ctx, engine.ApplyInput{Desired: f.desired(exchangeRenamedToF)}, opts)
	if err != nil || out.Result == nil || !out.Result.OK() {
		t.Fatalf("apply: %+v, %v", out, err)
	}
	// Unroutable once f was declared: e went before f was bound.
	checkRouted(t, routed(), "exchange f declared")
	if !publish() {
		t.Error("after the apply, a message published to a came back unroutable")
	}
	checkDepths(t, ch, map[string]int{"q": 2})
}
