package difftest

import (
	"context"
	"slices"
	"testing"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/mqctl/mqctl/pkg/route"
)

// TestMaxLengthBytesZeroAgainstBroker: a queue whose length limit in
// bytes is 0 does with a message (with a body) what a length limit of 0
// does: a classic or quorum queue with drop-head dead-letters it at once
// as maxlen, a quorum queue with reject-publish takes the first, a
// classic queue with reject-publish or reject-publish-dlx refuses it
// (basic.nack), dead-lettering it with the latter. The same on RabbitMQ
// 4.3.6, 4.0.5 and 3.10.8; the x-death headers differ as elsewhere.
func TestMaxLengthBytesZeroAgainstBroker(t *testing.T) {
	t.Parallel()
	answers := map[string][]string{
		"4.3": {
			`m1 dlq queue=cb-drop reason=maxlen exchange= last-queue=cb-drop last-reason=maxlen last-exchange= [cb-drop maxlen x1 from "" keys ["cb-drop"]]`,
			`m2 dlq queue=qb-drop reason=maxlen exchange= last-queue=qb-drop last-reason=maxlen last-exchange= [qb-drop maxlen x1 from "" keys ["qb-drop"]]`,
			`m3 qb-rej`,
		},
		"3.10": {
			`m1 dlq queue=cb-drop reason=maxlen exchange= [cb-drop maxlen x1 from "" keys ["cb-drop"]]`,
			`m2 dlq queue=qb-drop reason=maxlen exchange= [qb-drop maxlen x1 from "" keys ["qb-drop"]]`,
			`m3 qb-rej`,
		},
	}
	answers["4.0"] = answers["4.3"]
	dlq := func(kv ...any) []any {
		return append([]any{"x-max-length-bytes", 0, "x-dead-letter-exchange", "", "x-dead-letter-routing-key", "dlq"}, kv...)
	}
	c := newCase().
		queue("cb-drop", dlq()...).
		quorum("qb-drop", dlq()...).
		quorum("qb-rej", "x-max-length-bytes", 0, "x-overflow", "reject-publish").
		queue("cb-rej", "x-max-length-bytes", 0, "x-overflow", "reject-publish").
		queue("cb-rejdlx", dlq("x-overflow", "reject-publish-dlx")...).
		queue("dlq").
		publish("", "cb-drop").publish("", "qb-drop").publish("", "qb-rej").c
	b, client, ver := connect(t)
	ctx := context.Background()
	want, ok := answers[ver.Line()]
	if !ok {
		t.Fatalf("the test states no answer for RabbitMQ %s", ver.Line())
	}
	conn := applied(t, b, client, c)
	res := run(t, conn, c, Options{Rounds: 1, Version: ver})
	if got := res.Found["publish"]; !slices.Equal(got, want) {
		t.Errorf("RabbitMQ %s left\n  %q\nwant\n  %q", ver, got, want)
	}

	// The classic queues that refuse: the broker nacks the publish, and
	// reject-publish-dlx dead-letters the message too.
	sim := route.NewWith(c.Vhost, route.Options{Version: ver})
	ch, err := conn.Channel()
	if err != nil {
		t.Fatal(err)
	}
	defer ch.Close()
	if err := ch.Confirm(false); err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{"cb-rej", "cb-rejdlx"} {
		a := sim.OnArrival(q, route.Message{RoutingKey: q})
		dc, err := ch.PublishWithDeferredConfirmWithContext(ctx, "", q, false, false, amqp.Publishing{Body: []byte("a body")})
		if err != nil {
			t.Fatal(err)
		}
		acked, err := dc.WaitContext(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if acked == a.Refused {
			t.Errorf("RabbitMQ %s: a publish to %s acked=%v; the simulator says refused=%v (%s)", ver, q, acked, a.Refused, a.Why)
		}
		if wantDL := a.Reason == route.MaxLen; wantDL != (q == "cb-rejdlx") {
			t.Errorf("simulator: %s dead-letters the message: %v (%s)", q, wantDL, a.Why)
		}
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		qi, err := ch.QueueDeclarePassive("dlq", true, false, false, false, nil)
		if err != nil {
			t.Fatal(err)
		}
		// The dead letter of cb-rejdlx (Run took m1's and m2's).
		if qi.Messages == 1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("RabbitMQ %s: dlq holds %d messages, want cb-rejdlx's dead letter", ver, qi.Messages)
		}
		time.Sleep(100 * time.Millisecond)
	}
}
