package engine_test

import (
	"context"
	"strings"
	"testing"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/mqctl/mqctl/pkg/engine"
	"github.com/mqctl/mqctl/pkg/kind"
	"github.com/mqctl/mqctl/pkg/plan"
)

// TestFinishedShovelIsNotRunAgain: a shovel that deletes itself once done
// (src-delete-after: queue-length, SPEC §9's replay) moves the messages
// its source holds and is gone from the broker. The plan after it created
// it again, so every apply moved the source's messages again; now it holds
// the shovel back, saying why, the apply leaves it alone and keeps it in
// the record, and a message published to the source stays there. The
// same shovel with other settings is a new one, and planned.
func TestFinishedShovelIsNotRunAgain(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ctx := context.Background()
	src := `version: 1
vhosts:
  ${VHOST}:
    queues:
      replay.src: {}
      replay.dst: {}
    shovels:
      replay: { src-uri: "amqp:///${VHOST}", src-queue: replay.src, dest-uri: "amqp:///${VHOST}", dest-queue: replay.dst, src-delete-after: queue-length }
`
	ch := f.b.Channel(t, f.vhost)
	if _, err := f.eng.Apply(ctx, engine.ApplyInput{Desired: f.desired(src)}, engine.ApplyOptions{}); err != nil {
		t.Fatal(err)
	}
	// The source is empty: the shovel is done at once, and deletes itself.
	for deadline := time.Now().Add(20 * time.Second); ; {
		items, err := f.c.ReadItems(ctx, kind.Shovel, f.vhost)
		if err != nil {
			t.Fatal(err)
		}
		if len(items) == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the shovel did not delete itself: %+v", items)
		}
		time.Sleep(100 * time.Millisecond)
	}
	if err := ch.PublishWithContext(ctx, "", "replay.src", false, false, amqp.Publishing{Body: []byte("after the replay")}); err != nil {
		t.Fatal(err)
	}

	for range 2 { // the plan, and the plan after an apply of it
		p := f.plan(f.desired(src))
		if len(p.Changes) != 0 || len(p.Held) != 1 || p.Held[0].Cause != plan.HeldFinished || p.Held[0].Name != "replay" ||
			!strings.Contains(p.Held[0].Reason, "it deleted itself once done (src-delete-after: queue-length)") {
			t.Fatalf("plan: changes %v, held %+v; want the shovel held back as finished", changes(p), p.Held)
		}
		if len(p.Stale) != 0 {
			t.Errorf("plan: stale %v; want the finished shovel kept in the record", p.Stale)
		}
		if _, err := f.eng.Apply(ctx, engine.ApplyInput{Desired: f.desired(src)}, engine.ApplyOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	time.Sleep(500 * time.Millisecond) // what a shovel created again would have moved by now
	if q, err := ch.QueueDeclarePassive("replay.src", true, false, false, false, nil); err != nil || q.Messages != 1 {
		t.Errorf("replay.src holds %d messages (%v); want the one published after the replay, not moved again", q.Messages, err)
	}

	// Another destination is another shovel: created.
	changed := strings.Replace(src, "dest-queue: replay.dst", "dest-queue: replay.src2", 1)
	if got := changes(f.plan(f.desired(changed))); len(got) != 1 || got[0] != "create shovel replay" {
		t.Errorf("plan of the changed shovel: %v; want it created", got)
	}
}
