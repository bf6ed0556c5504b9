package difftest

import (
	"bytes"
	"context"
	"fmt"
	"testing"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/mqctl/mqctl/pkg/route"
)

// TestMaxLengthBytesAgainstBroker: whether a queue with a length limit in
// bytes above 0 keeps a message depends on the message's size, even in an
// empty queue: with a limit of 16 bytes and overflow drop-head, a classic
// queue keeps a 16-byte body and dead-letters a 17-byte one as maxlen, on
// 4.3.6, 4.0.5 and 3.10.8 (it counts the body). A quorum queue does the
// same on 4.0.5 and 3.10.8, but 4.3.6 dead-letters the 16-byte body too:
// from 4.3.0 rabbit_fifo counts the encoded properties beside the body, so
// a body size alone would not predict it either. The simulator, which
// knows no message's size, says so (Arrival.Unsure) rather than that the
// queue keeps the message, its answer before.
func TestMaxLengthBytesAgainstBroker(t *testing.T) {
	t.Parallel()
	dl := func(kv ...any) []any {
		return append([]any{"x-max-length-bytes", 16, "x-dead-letter-exchange", "", "x-dead-letter-routing-key", "dlq"}, kv...)
	}
	c := newCase().
		queue("c16", dl()...).queue("c17", dl()...).
		quorum("q16", dl()...).quorum("q17", dl()...).
		queue("dlq").c
	b, client, ver := connect(t)
	conn := applied(t, b, client, c)
	ch, err := conn.Channel()
	if err != nil {
		t.Fatal(err)
	}
	defer ch.Close()
	if err := ch.Confirm(false); err != nil {
		t.Fatal(err)
	}
	sim := route.NewWith(c.Vhost, route.Options{Version: ver})
	ctx := context.Background()
	// kept: the broker's answer, per queue: whether it holds the message.
	kept := map[string]bool{}
	for _, q := range []string{"c16", "c17", "q16", "q17"} {
		if a := sim.OnArrival(q, route.Message{RoutingKey: q}); !a.Unsure || !a.Keeps() {
			t.Errorf("simulator: %s on arrival: %+v; want unsure (it keeps the message only if it fits)", q, a)
		}
		size := 16
		if q[1:] == "17" {
			size = 17
		}
		dc, err := ch.PublishWithDeferredConfirmWithContext(ctx, "", q, false, false, amqp.Publishing{Body: bytes.Repeat([]byte("x"), size)})
		if err != nil {
			t.Fatal(err)
		}
		if acked, err := dc.WaitContext(ctx); err != nil || !acked {
			t.Fatalf("RabbitMQ %s: publish to %s acked=%v, %v", ver, q, acked, err)
		}
		qi, err := ch.QueueDeclarePassive(q, true, false, false, false, nil)
		if err != nil {
			t.Fatal(err)
		}
		kept[q] = qi.Messages == 1
	}
	want := map[string]bool{"c16": true, "c17": false, "q16": !ver.AtLeast(4, 3), "q17": false}
	if fmt.Sprint(kept) != fmt.Sprint(want) {
		t.Errorf("RabbitMQ %s kept %v, want %v", ver, kept, want)
	}
}
