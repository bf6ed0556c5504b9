package cli_test

import (
	"context"
	"testing"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"
)

// dlq peek and replay against the real broker are the live script
// cmd/mqctl/testdata/live/dlq_peek_replay.txtar; the tests that cut them
// with the fault proxy (fault_integration_test.go) fill a DLQ here.

const dlqTopology = `version: 1
vhosts:
  ${VHOST}:
    exchanges:
      orders: { type: topic }
      orders.dlx: { type: direct }
    queues:
      orders.shipping:
        bindings: [{ exchange: orders, routing_key: "order.created" }]
        dead_letter: { exchange: orders.dlx, queue: orders.shipping.dlq }
      audit:
        bindings: [{ exchange: orders, routing_key: "order.*" }]
`

// dlqHarness applies dlqTopology and dead-letters ids from orders.shipping
// the way production does: published to orders, then rejected.
func dlqHarness(t *testing.T, ids ...string) (*harness, string, *amqp.Channel) {
	t.Helper()
	h := newHarness(t)
	h.mustApply(dlqTopology)
	file := h.write("topology.yaml", dlqTopology)
	ch := h.channel(t)
	for _, id := range ids {
		if err := ch.PublishWithContext(context.Background(), "orders", "order.created", false, false, amqp.Publishing{MessageId: id, Body: []byte("order " + id)}); err != nil {
			t.Fatal(err)
		}
	}
	waitReady(t, ch, "orders.shipping", len(ids))
	for range ids {
		d, ok, err := ch.Get("orders.shipping", false)
		if err != nil || !ok {
			t.Fatalf("get from orders.shipping: %v %v", ok, err)
		}
		if err := d.Reject(false); err != nil {
			t.Fatal(err)
		}
	}
	waitReady(t, ch, "orders.shipping.dlq", len(ids))
	if _, err := ch.QueuePurge("audit", false); err != nil {
		t.Fatal(err)
	}
	return h, file, ch
}

func waitReady(t *testing.T, ch *amqp.Channel, queue string, n int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		q, err := ch.QueueDeclarePassive(queue, true, false, false, false, nil)
		if err != nil {
			t.Fatal(err)
		}
		if q.Messages == n {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s holds %d messages, want %d", queue, q.Messages, n)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func drainIDs(t *testing.T, ch *amqp.Channel, queue string) []string {
	t.Helper()
	var out []string
	for {
		d, ok, err := ch.Get(queue, true)
		if err != nil {
			t.Fatal(err)
		}
		if !ok {
			return out
		}
		out = append(out, d.MessageId)
	}
}
