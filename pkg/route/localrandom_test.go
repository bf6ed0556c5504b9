package route

import (
	"fmt"
	"testing"
)

// TestLocalRandom: an x-local-random exchange (RabbitMQ 4.0+) delivers a
// message to one of its queues bound without a key, at random: the
// simulator names them as one choice and picks none (one queue: that one);
// a class of messages reaches them all, split at random; a binding with a
// key (which the broker refuses) takes no part. 3.10 has no such type.
// TestLocalRandomAgainstBroker (internal/difftest) holds this against each
// broker.
func TestLocalRandom(t *testing.T) {
	b := vhost().ex("rpc", "x-local-random").q("r1").q("r2").q("keyed").
		bind("rpc", "r1", "").bind("rpc", "r2", "").bind("rpc", "keyed", "k").
		ex("solo", "x-local-random").q("only").bind("solo", "only", "").
		ex("in", "topic").bindX("in", "rpc", "#")

	r := b.simFor("4.3").Publish(msg("rpc", "k"))
	if len(r.OneOf) != 1 || !r.OneOf[0].Random || r.OneOf[0].Picked != nil || fmt.Sprint(r.OneOf[0].Among) != "[{r1 queue 1} {r2 queue 1}]" || len(r.Deliveries) != 0 {
		t.Errorf("one message: one_of %+v, deliveries %q; want one random choice among r1 and r2, none picked", r.OneOf, r.Queues())
	}
	wantQueues(t, b.simFor("4.0").Publish(msg("solo", "x")), "only")

	class := msg("in", "order.created")
	class.Class = true
	r = b.simFor("4.3").Publish(class)
	wantQueues(t, r, "r1", "r2")
	if got := fmt.Sprint(r.Splits()); got != "[{rpc [r1 r2] true  []}]" {
		t.Errorf("a class through rpc: splits %s, want r1 and r2 at random", got)
	}

	r = b.simFor("3.10").Publish(msg("rpc", ""))
	if len(r.Deliveries) != 0 || len(r.Unsimulated) != 1 || len(r.Problems) == 0 {
		t.Errorf("3.10: deliveries %q, unsimulated %q, problems %q; want nothing routed, the type named missing", r.Queues(), r.Unsimulated, r.Problems)
	}
}

// RabbitMQ 4.0+ refuses to bind anything but a classic queue to an
// x-local-random exchange (rabbit_exchange_type_local_random:
// validate_binding/2): a quorum queue, a stream or an exchange bound to
// it gets nothing from it, and the one classic queue gets every message.
// Measured on RabbitMQ 4.3.6 and 4.0.5 (internal/difftest
// TestLocalRandomRefusedBindingsAgainstBroker).
func TestLocalRandomRefusedBindings(t *testing.T) {
	s := vhost().ex("lr", "x-local-random").ex("fan", "fanout").
		q("c1").typed("qq", "quorum").typed("st", "stream").q("fq").
		bind("lr", "c1", "").bind("lr", "qq", "").bind("lr", "st", "").bindX("lr", "fan", "").
		bind("fan", "fq", "")
	for _, ver := range []string{"4.0.5", "4.3.6"} {
		t.Run(ver, func(t *testing.T) {
			r := s.simFor(ver).Publish(msg("lr", ""))
			wantQueues(t, r, "c1")
			if len(r.OneOf) != 1 || r.OneOf[0].Picked == nil || r.OneOf[0].Picked.Name != "c1" {
				t.Errorf("one_of %+v: want c1 picked, the one queue the broker binds", r.OneOf)
			}
			for _, refused := range []string{`queue "qq"`, `queue "st"`, `exchange "fan"`} {
				if !hasProblem(r, refused) {
					t.Errorf("problems %q: the refused binding to %s is not named", r.Problems, refused)
				}
			}
		})
	}
}
