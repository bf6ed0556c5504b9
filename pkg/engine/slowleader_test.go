package engine_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/mqctl/mqctl/pkg/apply"
	"github.com/mqctl/mqctl/pkg/engine"
	"github.com/mqctl/mqctl/pkg/kind"
	"github.com/mqctl/mqctl/pkg/lock"
	"github.com/mqctl/mqctl/pkg/plan"
)

// TestSlowQuorumLeaderIsNotCounted: a quorum queue's passive declare
// answers 0 messages when its leader does not answer within 250 ms
// (rabbit_quorum_queue:stat/1 at v3.10.8, v4.0.5 and v4.3.5). With the
// leader suspended (sys:suspend, through the broker's own eval; resumed at
// the end) and a confirmed message in the queue, neither plan nor apply
// takes that 0 as a count: the plan notes the queue's messages are not
// counted, and an apply that replaces it is refused before anything
// changes (lock.ErrUncounted), on every version. Before, the plan showed
// 0 at stake wherever the statistics had not counted the message yet,
// and an apply replaced the queue: 4.0.5 and 3.10.8 deleted it, message
// and all; 4.3.6 refused it only 30 s later, for statistics not refreshed.
// Once resumed, the queue still holds its message.
func TestSlowQuorumLeaderIsNotCounted(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ctx := context.Background()
	file := func(extra string) string {
		return `version: 1
vhosts:
  ${VHOST}:
    queues:
      slow: { type: quorum` + extra + ` }
`
	}
	if _, err := f.eng.Apply(ctx, engine.ApplyInput{Desired: f.desired(file(""))}, engine.ApplyOptions{}); err != nil {
		t.Fatal(err)
	}
	ch := f.b.Channel(t, f.vhost)
	if err := ch.Confirm(false); err != nil {
		t.Fatal(err)
	}
	conf, err := ch.PublishWithDeferredConfirmWithContext(ctx, "", "slow", false, false, amqp.Publishing{Body: []byte("kept"), DeliveryMode: amqp.Persistent})
	if err != nil {
		t.Fatal(err)
	}
	if ok, err := conf.WaitContext(ctx); err != nil || !ok {
		t.Fatalf("the message to queue slow was not confirmed: %v %v", ok, err)
	}
	resume := f.b.SuspendLeader(t, f.vhost, "slow")

	// The plan never shows the replace with the stand-in 0 at stake: it
	// notes that the queue's messages are not counted, or shows the
	// message the leader or the statistics counted, or holds the replace
	// back. (CI's 3.10.8 leg once planned without the note, and the
	// assertion then did not say which of the other two it was.)
	p := f.plan(f.desired(file(", arguments: { x-max-length: 100 }")))
	var noted bool
	for _, n := range f.ownNotes() {
		noted = noted || strings.Contains(n, `queue "slow"`) && strings.Contains(n, "not counted")
	}
	if !noted {
		var replace *plan.Change
		for i := range p.Changes {
			if c := &p.Changes[i]; c.Kind == kind.Queue && c.Name == "slow" {
				replace = c
			}
		}
		switch {
		case replace == nil:
			t.Logf("RabbitMQ %s: the plan holds the replace of queue slow back: %+v", f.b.Version(), p.Held)
		case replace.Messages >= 1:
			t.Logf("RabbitMQ %s: the plan counts %d message(s) at stake in queue slow", f.b.Version(), replace.Messages)
		default:
			t.Errorf("RabbitMQ %s: the plan replaces queue slow with %d messages at stake and does not say they are not counted; notes: %q", f.b.Version(), replace.Messages, f.ownNotes())
		}
	}
	// The apply is refused before anything changes: its messages not
	// counted, or, where the statistics counted the message before the
	// leader stopped answering (a loaded machine: once on 4.3.6), for the
	// message they count at stake (apply.ErrRefused). Either keeps it.
	_, err = f.eng.Apply(ctx, engine.ApplyInput{Desired: f.desired(file(", arguments: { x-max-length: 100 }"))}, engine.ApplyOptions{AllowReplace: true})
	switch {
	case errors.Is(err, lock.ErrUncounted):
	case errors.Is(err, apply.ErrRefused) && strings.Contains(err.Error(), "nothing was changed"):
		t.Logf("RabbitMQ %s: the apply is refused for the message the statistics count: %v", f.b.Version(), err)
	default:
		t.Errorf("RabbitMQ %s: apply replacing queue slow while its leader does not answer: %v; want a refusal before anything changes, its messages not counted (or counted by the statistics)", f.b.Version(), err)
	}
	resume()
	// The queue answers again once its leader has caught up with its
	// mailbox: a basic.get waits for that.
	d, ok, err := ch.Get("slow", true)
	if err != nil {
		t.Fatal(err)
	}
	if msg := string(d.Body); !ok || msg != "kept" {
		t.Errorf("RabbitMQ %s: queue slow gave %q after the apply, want its message (kept)", f.b.Version(), msg)
	}
}
