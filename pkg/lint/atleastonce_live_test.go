package lint

import (
	"encoding/json"
	"net/url"
	"testing"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/mqctl/mqctl/internal/testbroker"
	"github.com/mqctl/mqctl/pkg/route"
	"github.com/mqctl/mqctl/pkg/topology"
)

// TestAtLeastOnceFallbackAgainstBroker shows what MQ107 says, on the
// broker of the run: of two quorum queues with dead-letter-strategy
// at-least-once whose dead letters cannot be routed (no queue takes their
// key), the one with overflow reject-publish keeps its rejected message,
// waiting to dead-letter it (messages_dlx 1), and the one without drops
// it: at most once. Measured the same on 4.3.6, 4.0.5 and 3.10.8.
func TestAtLeastOnceFallbackAgainstBroker(t *testing.T) {
	b := testbroker.New(t)
	vh := b.Vhost(t)
	ch := b.Channel(t, vh)
	for _, q := range []string{"fallback", "kept", "missing"} {
		args := amqp.Table{"x-queue-type": "quorum", "x-dead-letter-exchange": "", "x-dead-letter-routing-key": "nowhere", "x-dead-letter-strategy": "at-least-once"}
		if q != "fallback" {
			args["x-overflow"] = "reject-publish"
		}
		if q == "missing" {
			args["x-dead-letter-exchange"] = "nope"
		}
		if _, err := ch.QueueDeclare(q, true, false, false, false, args); err != nil {
			t.Fatal(err)
		}
		if err := ch.Publish("", q, false, false, amqp.Publishing{Body: []byte(q)}); err != nil {
			t.Fatal(err)
		}
	}
	for _, q := range []string{"fallback", "kept", "missing"} {
		deadline := time.Now().Add(10 * time.Second)
		for {
			d, ok, err := ch.Get(q, false)
			if err != nil {
				t.Fatal(err)
			}
			if ok {
				if err := d.Reject(false); err != nil {
					t.Fatal(err)
				}
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("no message in %s", q)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	held := func(q string) int {
		var info struct {
			Messages int `json:"messages"`
		}
		if err := json.Unmarshal(b.GetAPI(t, "queues/"+url.PathEscape(vh)+"/"+q), &info); err != nil {
			t.Fatal(err)
		}
		return info.Messages
	}
	deadline := time.Now().Add(15 * time.Second) // statistics come every 5 s
	for (held("kept") != 1 || held("missing") != 1) && time.Now().Before(deadline) {
		time.Sleep(250 * time.Millisecond)
	}
	if n := held("kept"); n != 1 {
		t.Errorf("RabbitMQ %s: the at-least-once queue with reject-publish holds %d messages after an unroutable dead letter, want 1 (kept to dead-letter)", b.Version(), n)
	}
	if n := held("missing"); n != 1 {
		t.Errorf("RabbitMQ %s: the at-least-once queue whose dead-letter exchange is not declared holds %d messages after a dead letter, want 1 (kept to dead-letter)", b.Version(), n)
	}
	if n := held("fallback"); n != 0 {
		t.Errorf("RabbitMQ %s: the at-least-once queue without reject-publish holds %d messages, want 0 (at most once: dropped)", b.Version(), n)
	}

	// The simulator says the same: held, where at most once drops them.
	v := topology.NewVhost(vh)
	for _, q := range []string{"fallback", "kept", "missing"} {
		args := topology.Args{argDLX: "", argDLRK: "nowhere", "x-dead-letter-strategy": "at-least-once"}
		if q != "fallback" {
			args[argOverflow] = "reject-publish"
		}
		if q == "missing" {
			args[argDLX] = "nope"
		}
		v.Queues[q] = &topology.Queue{Name: q, Type: topology.QueueQuorum, Durable: true, Arguments: args}
	}
	sim := route.NewWith(v, route.Options{Version: b.Version()})
	for q, want := range map[string]bool{"fallback": false, "kept": true, "missing": true} {
		if got := sim.DeadLetter(q, route.Rejected, route.Message{RoutingKey: q}).Held; got != want {
			t.Errorf("the simulator says queue %s holds its dead letter: %v, want %v", q, got, want)
		}
	}

	lb := newBuilder()
	lb.typed("fallback", topology.QueueQuorum, topology.Args{argDLX: "", argDLRK: "nowhere", "x-dead-letter-strategy": "at-least-once"})
	lb.typed("kept", topology.QueueQuorum, topology.Args{argDLX: "", argDLRK: "nowhere", "x-dead-letter-strategy": "at-least-once", argOverflow: "reject-publish"})
	var flagged []string
	for _, f := range lb.run(t, Options{Version: b.Version()}) {
		if f.ID == "MQ107" {
			flagged = append(flagged, f.Object.Name)
		}
	}
	if len(flagged) != 1 || flagged[0] != "fallback" {
		t.Errorf("MQ107 on %s flags %q, want the queue without reject-publish alone", b.Version(), flagged)
	}
}
