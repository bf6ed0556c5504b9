package cli_test

import (
	"context"
	"strings"
	"sync"
	"testing"

	amqp "github.com/rabbitmq/amqp091-go"
)

// A quorum DLQ whose leader does not answer its count in time answers a
// passive declare with 0 messages whatever it holds (rabbit_quorum_queue:
// stat/1 at v3.10.8, v4.0.5 and v4.3.5), which dlq peek and replay took
// their number of messages from: with the leader suspended, both said the
// queue "is empty" while it held a dead letter. A count of 0 is now
// checked with a read (basic.get), which only the queue's leader answers:
// empty, a message, or, from a leader that does not answer, no answer
// until RabbitMQ's own timeout (its INTERNAL_ERROR): peek and replay then
// say that whether it holds messages is not known, never that it is
// empty. No timing of mqctl's decides it. Once resumed, peek shows the
// dead letter. The same on 4.3.6, 4.0.5 and 3.10.8.
func TestDLQNeverEmptyWhenUncounted(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.mustApply(`version: 1
vhosts:
  ${VHOST}:
    queues:
      slow.dlq: { type: quorum }
`)
	ch := h.channel(t)
	if err := ch.Confirm(false); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	conf, err := ch.PublishWithDeferredConfirmWithContext(ctx, "", "slow.dlq", false, false, amqp.Publishing{MessageId: "kept", Body: []byte("kept"), DeliveryMode: amqp.Persistent})
	if err != nil {
		t.Fatal(err)
	}
	if ok, err := conf.WaitContext(ctx); err != nil || !ok {
		t.Fatalf("the message to slow.dlq was not confirmed: %v %v", ok, err)
	}
	resume := h.b.SuspendLeader(t, h.vhost, "slow.dlq")
	// Side by side: each waits out RabbitMQ's own timeout of the read
	// (about a minute on 4.3.6).
	cmds := [][]string{
		{"dlq", "peek", "slow.dlq"},
		{"dlq", "replay", "slow.dlq"},
	}
	results := make([]result, len(cmds))
	var wg sync.WaitGroup
	for i, args := range cmds {
		wg.Go(func() { results[i] = runMqctl(h.b, h.env, append(args, "--vhost", h.vhost)...) })
	}
	wg.Wait()
	for i, args := range cmds {
		r := results[i]
		if r.code != 1 || !strings.Contains(r.stderr, `queue "slow.dlq": its count came back 0, but reading it failed, so whether it holds messages is not known`) ||
			!strings.Contains(r.stderr, "rabbitmq-queues quorum_status") || strings.Contains(r.stdout+r.stderr, "empty") {
			t.Errorf("RabbitMQ %s, the leader of slow.dlq suspended, %v: want exit 1 and that whether it holds messages is not known, never \"empty\":\n%s", h.b.Version(), args, r)
		}
	}
	resume()
	r := h.run("dlq", "peek", "slow.dlq", "--vhost", h.vhost)
	if r.code != 0 || !strings.Contains(r.stdout, "1 message") || !strings.Contains(r.stdout, "kept") {
		t.Errorf("RabbitMQ %s, the leader of slow.dlq resumed: peek does not show the dead letter:\n%s", h.b.Version(), r)
	}
}
