package route

import (
	"fmt"
	"strings"
	"testing"
)

// shards is an x-modulus-hash exchange bound to q1, q2 and q3.
func shards() *vb {
	return vhost().ex("shards", "x-modulus-hash").q("q1").q("q2").q("q3").
		bind("shards", "q1", "").bind("shards", "q2", "").bind("shards", "q3", "")
}

// TestModulusHashPicksOne: on RabbitMQ 4.3 an x-modulus-hash exchange
// delivers a message to exactly one of its bound destinations. The
// expected picks are erlang:phash2(RoutingKeys, 134217728) rem N as
// Erlang/OTP 25.2.3 computes it (the keys a, c, e over three queues are
// the groups a live 4.3.6 made, research notes §4): a → 0, c → 1, e → 2;
// [a, x] → 1; [b, cc1, bcc1] → 1; a over four entries → 2, k → 0,
// order.created → 1 over three and four.
func TestModulusHashPicksOne(t *testing.T) {
	tests := []struct {
		name  string
		b     *vb
		m     Message
		want  []string // the queues the message reaches
		among string   // the choice's destinations, name(type)×bindings
		pick  string
	}{
		{name: "key a: the first of three", b: shards(), m: msg("shards", "a"), want: []string{"q1"},
			among: "q1 q2 q3", pick: "q1"},
		{name: "key c: the second", b: shards(), m: msg("shards", "c"), want: []string{"q2"}, among: "q1 q2 q3", pick: "q2"},
		{name: "key e: the third", b: shards(), m: msg("shards", "e"), want: []string{"q3"}, among: "q1 q2 q3", pick: "q3"},
		{name: "CC keys take part in the hash", b: shards(), m: msg("shards", "a", "CC", []any{"x"}), want: []string{"q2"},
			among: "q1 q2 q3", pick: "q2"},
		{name: "BCC keys too", b: shards(), m: msg("shards", "b", "CC", []any{"cc1"}, "BCC", []any{"bcc1"}), want: []string{"q2"},
			among: "q1 q2 q3", pick: "q2"},
		{name: "binding keys are ignored, each binding is an entry",
			b: vhost().ex("shards", "x-modulus-hash").q("q1").q("q2").q("q3").
				bind("shards", "q1", "k1").bind("shards", "q1", "k2").bind("shards", "q2", "").bind("shards", "q3", ""),
			m: msg("shards", "a"), want: []string{"q2"}, among: "q1×2 q2 q3", pick: "q2"},
		{name: "a twice-bound queue is picked by either entry",
			b: vhost().ex("shards", "x-modulus-hash").q("q1").q("q2").q("q3").
				bind("shards", "q1", "k1").bind("shards", "q1", "k2").bind("shards", "q2", "").bind("shards", "q3", ""),
			m: msg("shards", "order.created"), want: []string{"q1"}, among: "q1×2 q2 q3", pick: "q1"},
		{name: "exchanges sort before queues and route on",
			b: vhost().ex("shards", "x-modulus-hash").ex("zz.fwd", "fanout").q("f").q("a1").q("a2").
				bind("shards", "a1", "").bind("shards", "a2", "").bindX("shards", "zz.fwd", "").bind("zz.fwd", "f", ""),
			m: msg("shards", "a"), want: []string{"f"}, among: "zz.fwd(exchange) a1 a2", pick: "zz.fwd(exchange)"},
		{name: "bindings to undeclared queues are not entries",
			b: shards().bind("shards", "ghost", ""),
			m: msg("shards", "e"), want: []string{"q3"}, among: "q1 q2 q3", pick: "q3"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := tc.b.simFor("4.3").Publish(tc.m)
			wantQueues(t, r, tc.want...)
			if len(r.OneOf) != 1 {
				t.Fatalf("one_of = %+v, want one choice", r.OneOf)
			}
			c := r.OneOf[0]
			if got := targetsText(c.Among); got != tc.among {
				t.Errorf("among = %s, want %s", got, tc.among)
			}
			if c.Picked == nil || targetsText([]Target{{Name: c.Picked.Name, Type: c.Picked.Type, Bindings: 1}}) != tc.pick {
				t.Errorf("picked = %+v, want %s", c.Picked, tc.pick)
			}
			if len(r.Unsimulated) != 0 {
				t.Errorf("unsimulated = %q: 4.3's x-modulus-hash is simulated", r.Unsimulated)
			}
			for _, p := range r.Problems {
				if !strings.Contains(p, "undeclared") {
					t.Errorf("unexpected problem %q", p)
				}
			}
		})
	}
}

func targetsText(ts []Target) string {
	var parts []string
	for _, t := range ts {
		s := t.Name
		if t.Type == "exchange" {
			s += "(exchange)"
		}
		if t.Bindings > 1 {
			s += "×" + string(rune('0'+t.Bindings))
		}
		parts = append(parts, s)
	}
	return strings.Join(parts, " ")
}

// TestModulusHashBefore43: the rabbitmq_sharding plugin's x-modulus-hash
// also delivers to exactly one destination, but mqctl cannot tell which:
// the message reaches one of them (OneOf, not Picked), never all, and the
// exchange counts as unsimulated so that no consumer of the result takes
// the message for lost.
func TestModulusHashBefore43(t *testing.T) {
	for _, ver := range []string{"3.10.8", "4.0.5", "4.2"} {
		t.Run(ver, func(t *testing.T) {
			r := shards().simFor(ver).Publish(msg("shards", "a"))
			wantQueues(t, r)
			if len(r.OneOf) != 1 || r.OneOf[0].Picked != nil || targetsText(r.OneOf[0].Among) != "q1 q2 q3" {
				t.Errorf("one_of = %+v, want one unpicked choice among q1 q2 q3", r.OneOf)
			}
			if len(r.Unsimulated) != 1 || r.Unsimulated[0] != "shards" {
				t.Errorf("unsimulated = %q, want [shards]", r.Unsimulated)
			}
			if !hasProblem(r, "rabbitmq_sharding plugin") || !hasProblem(r, "exactly one of its bound destinations") {
				t.Errorf("problems = %q", r.Problems)
			}
		})
	}
}

// TestModulusHashWithoutBindings: with nothing bound the exchange routes
// nowhere, and its alternate exchange takes the message (with a binding it
// always picks one, so the alternate exchange is never used).
func TestModulusHashWithoutBindings(t *testing.T) {
	b := vhost().ex("shards", "x-modulus-hash", "alternate-exchange", "ae").ex("ae", "fanout").q("lost").bind("ae", "lost", "")
	for _, ver := range []string{"4.0", "4.3"} {
		r := b.simFor(ver).Publish(msg("shards", "a"))
		wantQueues(t, r, "lost")
		if len(r.OneOf) != 0 {
			t.Errorf("%s: one_of = %+v, want none", ver, r.OneOf)
		}
	}
	r := vhost().ex("shards", "x-modulus-hash").simFor("4.3").Publish(msg("shards", "a"))
	if !hasProblem(r, "an x-modulus-hash exchange without bindings") {
		t.Errorf("problems = %q", r.Problems)
	}
	b.bind("shards", "q", "").q("q")
	wantQueues(t, b.simFor("4.3").Publish(msg("shards", "a")), "q")
}

// TestModulusHashDeadLetters: a dead letter routed by a dead-letter
// routing key is hashed by that key alone ([orders.retry] → 1 of 3); one
// that keeps its own keys by them. Before 4.3 the trace does not call the
// dead letter dropped.
func TestModulusHashDeadLetters(t *testing.T) {
	b := shards().q("w", "x-dead-letter-exchange", "shards", "x-dead-letter-routing-key", "orders.retry").
		q("w2", "x-dead-letter-exchange", "shards")
	dl := b.simFor("4.3").DeadLetter("w", Rejected, msg("", "w", "CC", []any{"x"}))
	wantQueues(t, dl.Result, "q2")
	dl = b.simFor("4.3").DeadLetter("w2", Rejected, msg("in", "a", "CC", []any{"x"}))
	wantQueues(t, dl.Result, "q2")
	dl = b.simFor("4.3").DeadLetter("w2", Rejected, msg("in", "a"))
	wantQueues(t, dl.Result, "q1")

	tr := b.simFor("4.0").Trace(msg("", "w"), DefaultDepth)
	next := tr.Hops[0].Next[0]
	if next.Dropped || len(next.Route.Result.OneOf) != 1 {
		t.Errorf("4.0: dead letter into x-modulus-hash: dropped %v, one_of %+v", next.Dropped, next.Route.Result.OneOf)
	}
}

// TestModulusHashSplitsAClass: a message that stands for a class of keys
// (Message.Class, the flows') reaches every destination of an
// x-modulus-hash exchange, none picked, and Splits says that each message
// reaches one of them; queues reached another way are not in the split.
// Its dead letters are a class too, unless a dead-letter routing key gives
// them one key: they are hashed by it, and picked. An exchange among the
// destinations (zz.fwd) is one pick that leads to all its queues
// (Split.Through).
func TestModulusHashSplitsAClass(t *testing.T) {
	b := shards().ex("in", "topic").q("audit").bindX("in", "shards", "order.#").bind("in", "audit", "#").
		ex("zz.fwd", "fanout").q("f").bindX("shards", "zz.fwd", "").bind("zz.fwd", "f", "").
		q("w", "x-dead-letter-exchange", "shards", "x-dead-letter-routing-key", "orders.retry").
		q("w2", "x-dead-letter-exchange", "shards")
	for _, ver := range []string{"4.0", "4.3"} {
		sim := b.simFor(ver)
		class := msg("in", "order.created")
		class.Class = true
		r := sim.Publish(class)
		wantQueues(t, r, "audit", "f", "q1", "q2", "q3")
		if len(r.OneOf) != 1 || r.OneOf[0].Picked != nil || len(r.Unsimulated) != 0 {
			t.Errorf("%s: one_of %+v, unsimulated %q: want one choice, none picked, nothing unsimulated", ver, r.OneOf, r.Unsimulated)
		}
		if got := fmt.Sprint(r.Splits()); got != "[{shards [f q1 q2 q3] false  [{zz.fwd [f]}]}]" {
			t.Errorf("%s: splits = %s, want shards among f, q1, q2, q3 (audit is reached by its own binding)", ver, got)
		}
		if s := sim.Publish(msg("in", "order.created")).Splits(); s != nil {
			t.Errorf("%s: one message is not split: %+v", ver, s)
		}
		dl := sim.DeadLetter("w2", Rejected, class)
		if got := fmt.Sprint(dl.Result.Splits()); got != "[{shards [f q1 q2 q3] false  [{zz.fwd [f]}]}]" {
			t.Errorf("%s: dead letters of a class keeping their keys: splits = %s", ver, got)
		}
		dl = sim.DeadLetter("w", Rejected, class)
		if ver == "4.3" {
			wantQueues(t, dl.Result, "f") // "orders.retry" picks the exchange among four entries
		}
		if s := dl.Result.Splits(); s != nil {
			t.Errorf("%s: dead letters with one dead-letter routing key are not split: %+v", ver, s)
		}
	}
}
