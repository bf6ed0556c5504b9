package cli_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	amqp "github.com/rabbitmq/amqp091-go"
)

// A quorum DLQ whose leader does not answer its count in time answers a
// passive declare with 0 messages whatever it holds (rabbit_quorum_queue:
// stat/1 at v3.10.8, v4.0.5 and v4.3.5), which dlq peek and replay read
// their number of messages from: with the leader suspended, both said the
// queue "is empty" while it held a dead letter. They refuse before
// anything is read instead, as plan and apply refuse to count such a
// queue (lock.InspectQuorum), and read it once the leader answers. The
// same answer on 4.3.6, 4.0.5 and 3.10.8.
func TestDLQRefusesUncountedQuorumQueue(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	const top = `version: 1
vhosts:
  ${VHOST}:
    queues:
      slow.dlq: { type: quorum }
`
	h.mustApply(top)
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
	leader := fmt.Sprintf(`{ok,Q}=rabbit_amqqueue:lookup(rabbit_misc:r(<<"%s"/utf8>>,queue,<<"slow.dlq"/utf8>>)), {N,_}=amqqueue:get_pid(Q), sys:%%s(whereis(N)).`, h.vhost)
	resumed := false
	resume := func() {
		if !resumed {
			resumed = true
			if err := h.b.Ctl("eval", fmt.Sprintf(leader, "resume")); err != nil {
				t.Errorf("resume the leader of slow.dlq: %v", err)
			}
		}
	}
	t.Cleanup(resume)
	if err := h.b.Ctl("eval", fmt.Sprintf(leader, "suspend")); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{
		{"dlq", "peek", "slow.dlq"},
		{"dlq", "replay", "slow.dlq", "--dry-run"},
		{"dlq", "replay", "slow.dlq"},
	} {
		r := h.run(append(args, "--vhost", h.vhost)...)
		want := fmt.Sprintf(`%s: nothing was read: the leader of quorum queue "slow.dlq" in vhost %q did not answer within 250ms`, strings.Join(args[:2], " "), h.vhost)
		if r.code != 1 || !strings.Contains(r.stderr, want) || !strings.Contains(r.stderr, "not counted") || strings.Contains(r.stdout, "empty") {
			t.Errorf("RabbitMQ %s, the leader of slow.dlq suspended: want exit 1 and %q in stderr, never \"empty\":\n%s", h.b.Version(), want, r)
		}
	}
	resume()
	r := h.run("dlq", "peek", "slow.dlq", "--vhost", h.vhost)
	if r.code != 0 || !strings.Contains(r.stdout, "1 message") || !strings.Contains(r.stdout, "kept") {
		t.Errorf("RabbitMQ %s, the leader of slow.dlq resumed: peek does not show the dead letter:\n%s", h.b.Version(), r)
	}
}
