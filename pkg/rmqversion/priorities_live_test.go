package rmqversion_test

import (
	"cmp"
	"slices"
	"strconv"
	"testing"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/mqctl/mqctl/internal/testbroker"
	"github.com/mqctl/mqctl/pkg/rmqversion"
)

// TestQuorumPriorityOrderAgainstBroker publishes messages of mixed
// priorities to a quorum queue and reads them back: the order is the one
// QuorumPriorities states for the broker's version. Measured: 4.3.6 strict
// (31 and the clamped 40 first, unprioritised at level 4 before 3, 2, 1);
// 4.0.5 two classes served 2:1; 3.10.8 arrival order. (amqp091-go sends
// priority 0 as no priority: the property is left out when it is 0.)
func TestQuorumPriorityOrderAgainstBroker(t *testing.T) {
	b := testbroker.New(t)
	vh := b.Vhost(t)
	ch := b.Channel(t, vh)
	if _, err := ch.QueueDeclare("qq", true, false, false, false, amqp.Table{"x-queue-type": "quorum"}); err != nil {
		t.Fatal(err)
	}
	if err := ch.Confirm(false); err != nil {
		t.Fatal(err)
	}
	prios := []int{-1, 3, 5, 31, 4, 10, -1, 1, 40, 6, 2} // -1: none
	for i, p := range prios {
		pub := amqp.Publishing{Body: []byte(strconv.Itoa(i))}
		if p > 0 {
			pub.Priority = uint8(p)
		}
		dc, err := ch.PublishWithDeferredConfirm("", "qq", false, false, pub)
		if err != nil {
			t.Fatal(err)
		}
		if !dc.Wait() {
			t.Fatalf("message %d was not confirmed", i)
		}
	}
	var got []int
	for range prios {
		m, ok, err := ch.Get("qq", true)
		if err != nil || !ok {
			t.Fatalf("get: ok=%v, %v (after %v)", ok, err, got)
		}
		i, _ := strconv.Atoi(string(m.Body))
		got = append(got, prios[i])
	}
	v := b.Version()
	want := quorumOrder(v.QuorumPriorities(), prios)
	if !slices.Equal(got, want) {
		t.Errorf("RabbitMQ %s (%v): quorum queue delivered priorities %v, mqctl states %v", v, v.QuorumPriorities(), got, want)
	}
}

// quorumOrder is the order a quorum queue holding msgs (priorities, -1 for
// none) delivers them in, by the rule of kind.
func quorumOrder(kind rmqversion.QuorumPriority, msgs []int) []int {
	out := slices.Clone(msgs)
	switch kind {
	case rmqversion.QuorumStrict:
		level := func(p int) int {
			if p < 0 {
				return 4
			}
			return min(p, 31)
		}
		slices.SortStableFunc(out, func(a, b int) int { return cmp.Compare(level(b), level(a)) })
	case rmqversion.QuorumTwoClasses:
		var high, normal []int
		for _, p := range msgs {
			if p > 4 {
				high = append(high, p)
			} else {
				normal = append(normal, p)
			}
		}
		out = out[:0]
		for len(high) > 0 || len(normal) > 0 {
			for k := 0; k < 2 && len(high) > 0; k++ {
				out, high = append(out, high[0]), high[1:]
			}
			if len(normal) > 0 {
				out, normal = append(out, normal[0]), normal[1:]
			}
		}
	}
	return out
}
