package cli_test

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"
)

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
	conn, err := amqp.Dial(h.b.AMQPURL(h.vhost))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	ch, err := conn.Channel()
	if err != nil {
		t.Fatal(err)
	}
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

func TestDLQPeekAndReplayCLI(t *testing.T) {
	t.Parallel()
	h, file, ch := dlqHarness(t, "d-0", "d-1", "d-2")

	// peek: the vhost comes from the file; the messages stay.
	r := h.run("dlq", "peek", "orders.shipping.dlq", "-f", file)
	if r.code != 0 || r.stderr != "" {
		t.Fatalf("peek:\n%s", r)
	}
	for _, want := range []string{
		`3 messages; showing all 3`,
		`#1  message id "d-0"`,
		`arrived via   exchange "orders.dlx", routing key "orders.shipping"`,
		`x-death       1. rejected from queue "orders.shipping" (count 1, at `,
		`it had been published to exchange "orders" with routing key "order.created"`,
		`replay to     exchange "orders", routing key "order.created" (from x-death)`,
		"body          9 bytes, text:\n    order d-0\n",
	} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("peek output lacks %q:\n%s", want, r.stdout)
		}
	}
	r = h.run("dlq", "peek", "orders.shipping.dlq", "--vhost", h.vhost, "--limit", "2", "-o", "json")
	var doc struct {
		FormatVersion   int `json:"format_version"`
		MessagesInQueue int `json:"messages_in_queue"`
		Messages        []struct {
			Redelivered bool `json:"redelivered"`
			Properties  struct {
				MessageID string `json:"message_id"`
			} `json:"properties"`
			Deaths []struct {
				Queue, Reason string
			} `json:"deaths"`
		} `json:"messages"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &doc); r.code != 0 || err != nil {
		t.Fatalf("peek -o json (%v):\n%s", err, r)
	}
	if doc.FormatVersion != 1 || doc.MessagesInQueue != 3 || len(doc.Messages) != 2 || doc.Messages[1].Properties.MessageID != "d-1" ||
		!doc.Messages[1].Redelivered || doc.Messages[1].Deaths[0].Queue != "orders.shipping" {
		t.Errorf("peek -o json: %+v", doc)
	}

	// A queue that does not exist: a note (not in the file), then the error.
	r = h.run("dlq", "peek", "typo.dlq", "-f", file)
	if r.code != 1 || !strings.Contains(r.stderr, `note: queue "typo.dlq" is not declared`) || !strings.Contains(r.stderr, `queue "typo.dlq" does not exist`) {
		t.Errorf("peek of a missing queue:\n%s", r)
	}

	// Dry run: where they would go, with the copy audit would receive.
	r = h.run("dlq", "replay", "orders.shipping.dlq", "-f", file, "--dry-run")
	if r.code != 0 {
		t.Fatalf("dry run:\n%s", r)
	}
	for _, want := range []string{
		`3  exchange "orders", routing key "order.created" (from x-death) → audit, orders.shipping`,
		`note: this also delivers a copy to "audit"`,
		`Dry run: would replay 3, skip 0, fail 0.`,
	} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("dry run output lacks %q:\n%s", want, r.stdout)
		}
	}
	waitReady(t, ch, "orders.shipping.dlq", 3)

	// Into the DLX: refused, nothing moves, exit 1.
	r = h.run("dlq", "replay", "orders.shipping.dlq", "-f", file, "--to-exchange", "orders.dlx", "--routing-key", "orders.shipping")
	if r.code != 1 || !strings.Contains(r.stdout, `leads back into "orders.shipping.dlq" itself`) || !strings.Contains(r.stderr, `3 of 3 messages could not be replayed and stay in "orders.shipping.dlq"`) {
		t.Errorf("replay into the DLX:\n%s", r)
	}
	waitReady(t, ch, "orders.shipping.dlq", 3)

	// To the origin queue alone, two of them.
	r = h.run("dlq", "replay", "orders.shipping.dlq", "-f", file, "--to-exchange", "", "--routing-key", "orders.shipping", "--limit", "2")
	if r.code != 0 || !strings.Contains(r.stdout, "replayed 2, skipped 0, failed 0\n") {
		t.Fatalf("replay --limit 2:\n%s", r)
	}
	if got := drainIDs(t, ch, "orders.shipping"); !slices.Equal(got, []string{"d-0", "d-1"}) {
		t.Errorf("orders.shipping holds %v", got)
	}
	if got := drainIDs(t, ch, "audit"); len(got) != 0 {
		t.Errorf("audit received %v", got)
	}

	// The rest, where it came from.
	r = h.run("dlq", "replay", "orders.shipping.dlq", "-f", file, "-o", "json")
	var rep struct {
		Summary struct{ Replayed, Skipped, Failed int } `json:"summary"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &rep); r.code != 0 || err != nil || rep.Summary.Replayed != 1 {
		t.Fatalf("replay -o json (%v):\n%s", err, r)
	}
	if got := drainIDs(t, ch, "orders.shipping"); !slices.Equal(got, []string{"d-2"}) {
		t.Errorf("orders.shipping holds %v", got)
	}
	if got := drainIDs(t, ch, "orders.shipping.dlq"); len(got) != 0 {
		t.Errorf("the DLQ still holds %v", got)
	}
	r = h.run("dlq", "replay", "orders.shipping.dlq", "-f", file)
	if r.code != 0 || !strings.Contains(r.stdout, "is empty: nothing to replay") {
		t.Errorf("replay of an empty DLQ:\n%s", r)
	}
}
