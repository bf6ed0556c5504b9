package difftest

import (
	"context"
	"slices"
	"testing"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/mqctl/mqctl/internal/testbroker"
	"github.com/mqctl/mqctl/pkg/route"
	"github.com/mqctl/mqctl/pkg/topology"
)

// TestDirectReplyAgainstBroker: a reply published to the default exchange
// with a Direct Reply-To address (the reply_to the broker gave the
// request) reaches the requester, and no queue, on every version; the
// simulator says so (Result.DirectReply) where it said "unroutable". With
// mandatory, 4.3.6 counts the publish as routed, even once the requester
// is gone (no basic.return); 4.0.5 and 3.10.8 return it (NO_ROUTE) although
// the requester received it, and return it again once it is gone.
func TestDirectReplyAgainstBroker(t *testing.T) {
	t.Parallel()
	b, client, ver := connect(t)
	routed, ok := map[string]bool{"4.3": true, "4.0": false, "3.10": false}[ver.Line()]
	if !ok {
		t.Fatalf("the test states no answer for RabbitMQ %s", ver.Line())
	}
	if got := ver.DirectReplyRouted(); got != routed {
		t.Fatalf("rmqversion %s: DirectReplyRouted = %v, the stated answer is %v", ver, got, routed)
	}
	vh := b.Vhost(t)
	v := topology.NewVhost("")
	v.Queues["requests"] = &topology.Queue{Name: "requests", Type: topology.QueueClassic, Durable: true, Arguments: topology.Args{}}
	testbroker.Declare(t, client, vh, v)

	// The requester consumes its replies and sends one request.
	requester := b.Channel(t, vh)
	replies, err := requester.Consume("amq.rabbitmq.reply-to", "", true, false, false, false, nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := requester.PublishWithContext(ctx, "", "requests", false, false, amqp.Publishing{ReplyTo: "amq.rabbitmq.reply-to", Body: []byte("ping")}); err != nil {
		t.Fatal(err)
	}
	responder := b.Channel(t, vh)
	var request amqp.Delivery
	for deadline := time.Now().Add(5 * time.Second); ; {
		d, got, err := responder.Get("requests", true)
		if err != nil {
			t.Fatal(err)
		}
		if got {
			request = d
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the request never reached queue requests")
		}
		time.Sleep(20 * time.Millisecond)
	}
	address := request.ReplyTo
	if !route.IsDirectReplyKey(address) {
		t.Fatalf("RabbitMQ %s gave the request reply_to %q, not a Direct Reply-To address", ver, address)
	}
	r := route.NewWith(v, route.Options{Version: ver}).Publish(route.Message{Exchange: "", RoutingKey: address})
	if !slices.Equal(r.DirectReply, []string{address}) || len(r.Deliveries) != 0 || len(r.Problems) != 0 {
		t.Errorf("the simulator says direct reply %q, deliveries %q, problems %q; want the address as a direct reply, no queue, no problem", r.DirectReply, r.Queues(), r.Problems)
	}

	returns := responder.NotifyReturn(make(chan amqp.Return, 2))
	confirms := responder.NotifyPublish(make(chan amqp.Confirmation, 2))
	// reply publishes the reply with mandatory and reports whether the
	// broker returned it (a basic.return comes before the confirm).
	reply := func(body string) bool {
		t.Helper()
		if err := responder.PublishWithContext(ctx, "", address, true, false, amqp.Publishing{Body: []byte(body)}); err != nil {
			t.Fatal(err)
		}
		select {
		case <-confirms:
		case <-ctx.Done():
			t.Fatal("no confirm for the reply")
		}
		select {
		case <-returns:
			return true
		default:
			return false
		}
	}
	if returned := reply("pong"); returned == routed {
		t.Errorf("RabbitMQ %s: a mandatory reply to a requester that is there was returned: %v; the stated answer is %v", ver, returned, !routed)
	}
	select {
	case d := <-replies:
		if string(d.Body) != "pong" {
			t.Errorf("the requester received %q, want pong", d.Body)
		}
	case <-ctx.Done():
		t.Fatalf("RabbitMQ %s: the requester never received the reply", ver)
	}
	// Once the requester's channel is gone, the reply is dropped.
	if err := requester.Close(); err != nil {
		t.Fatal(err)
	}
	if returned := reply("late"); returned == routed {
		t.Errorf("RabbitMQ %s: a mandatory reply to a requester that is gone was returned: %v; the stated answer is %v", ver, returned, !routed)
	}
}
