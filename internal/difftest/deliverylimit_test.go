package difftest

import (
	"strings"
	"testing"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/mqctl/mqctl/internal/testbroker"
	"github.com/mqctl/mqctl/pkg/route"
	"github.com/mqctl/mqctl/pkg/topology"
)

// TestDeliveryLimitAgainstBroker proves on the broker what the simulator
// (route.Simulator.DeliveryLimitRule, and so lint's MQ101 and dlq's
// notes) says counts towards a quorum queue's delivery limit. Each way of
// returning a message is tried on its own quorum queue with a limit of 1,
// which dead-letters to its own DLQ: a return that counts moves the
// message there at the second one; one that does not leaves it in the
// queue however often it comes back. The answers, measured: on 4.3.6 a
// reject with requeue and a channel closed with the message unacknowledged
// count, a nack with requeue does not; on 4.0.5 and 3.10.8 every return
// counts.
func TestDeliveryLimitAgainstBroker(t *testing.T) {
	t.Parallel()
	b := testbroker.New(t)
	vh := b.Vhost(t)
	ver := b.Version()
	v := topology.NewVhost(vh)
	sim := route.NewWith(v, route.Options{Version: ver})
	_, rule := sim.DeliveryLimitRule(1, false)
	counts := map[string]bool{
		"reject":  true,
		"nack":    ver.CountsRequeueAsDelivery(),
		"close":   true,
		"recover": ver.CountsRequeueAsDelivery(),
	}
	// The rule's text names each way.
	for _, phrase := range []string{"basic.reject", "basic.nack", "channel or connection closing", "basic.recover"} {
		if !strings.Contains(rule, phrase) {
			t.Fatalf("RabbitMQ %s: the rule %q does not name %s", ver, rule, phrase)
		}
	}
	for _, way := range []string{"reject", "nack", "close", "recover"} {
		t.Run(way, func(t *testing.T) {
			t.Parallel()
			ch := b.Channel(t, vh)
			q := "limit-" + way
			if _, err := ch.QueueDeclare(q+".dlq", true, false, false, false, amqp.Table{"x-queue-type": "quorum"}); err != nil {
				t.Fatal(err)
			}
			if _, err := ch.QueueDeclare(q, true, false, false, false, amqp.Table{"x-queue-type": "quorum",
				"x-delivery-limit": 1, "x-dead-letter-exchange": "", "x-dead-letter-routing-key": q + ".dlq"}); err != nil {
				t.Fatal(err)
			}
			if err := ch.Publish("", q, false, false, amqp.Publishing{Body: []byte(way)}); err != nil {
				t.Fatal(err)
			}
			// Return it three times: where returns count, the second
			// one dead-letters it (the limit is 1).
			for i := 0; i < 3; i++ {
				c := b.Channel(t, vh)
				d, ok := getWithin(t, c, q, 5*time.Second)
				if !ok {
					break // dead-lettered already
				}
				var err error
				switch way {
				case "reject":
					err = d.Reject(true)
				case "nack":
					err = d.Nack(false, true)
				case "recover":
					err = c.Recover(true)
				case "close":
					err = c.Close()
				}
				if err != nil {
					t.Fatalf("return %d by %s: %v", i+1, way, err)
				}
				if way != "close" {
					c.Close()
				}
			}
			_, inDLQ := getWithin(t, ch, q+".dlq", time.Second)
			_, inQueue := getWithin(t, ch, q, time.Second)
			if inDLQ != counts[way] || inQueue == counts[way] {
				t.Errorf("RabbitMQ %s, three returns by %s with a delivery limit of 1: dead-lettered=%v, still queued=%v; mqctl states that it counts=%v (%s)",
					ver, way, inDLQ, inQueue, counts[way], rule)
			}
		})
	}
}

// getWithin gets one message from q with manual acknowledgement, waiting
// up to d for one to be there (a returned message is back at once, but a
// dead letter takes a moment).
func getWithin(t *testing.T, ch *amqp.Channel, q string, d time.Duration) (amqp.Delivery, bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for {
		m, ok, err := ch.Get(q, false)
		if err != nil {
			t.Fatalf("get from %s: %v", q, err)
		}
		if ok || time.Now().After(deadline) {
			return m, ok
		}
		time.Sleep(50 * time.Millisecond)
	}
}
