package engine_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/mqctl/mqctl/pkg/engine"
	"github.com/mqctl/mqctl/pkg/plan"
)

// TestStakesOfManyQueues: with more than a few queues at stake in a vhost
// the statistics come from one listing of its queues; the plan still
// counts every queue's messages and consumers, as the reads one by one did.
func TestStakesOfManyQueues(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	var sb strings.Builder
	sb.WriteString("version: 1\nvhosts:\n  ${VHOST}:\n    queues:\n")
	for i := range 7 {
		fmt.Fprintf(&sb, "      q%d: {}\n", i)
	}
	if _, err := f.eng.Apply(ctx, engine.ApplyInput{Desired: f.desired(sb.String())}, engine.ApplyOptions{}); err != nil {
		t.Fatal(err)
	}
	ch := f.b.Channel(t, f.vhost)
	for range 2 {
		if err := ch.PublishWithContext(ctx, "", "q2", false, false, amqp.Publishing{Body: []byte("x")}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := f.b.Channel(t, f.vhost).Consume("q4", "", false, false, false, false, nil); err != nil {
		t.Fatal(err)
	}
	p := f.plan(f.desired("version: 1\nvhosts:\n  ${VHOST}: {}\n"))
	got := map[string][2]int64{}
	for _, c := range p.Changes {
		if c.Kind == plan.KindQueue && c.Action == plan.Delete {
			got[c.Name] = [2]int64{c.Messages, c.Consumers}
		}
	}
	if len(got) != 7 {
		t.Fatalf("plan: %v, want 7 queue deletes", changes(p))
	}
	for q, want := range map[string][2]int64{"q0": {0, 0}, "q2": {2, 0}, "q4": {0, 1}, "q6": {0, 0}} {
		if got[q] != want {
			t.Errorf("queue %s: %d messages, %d consumers at stake, want %d and %d", q, got[q][0], got[q][1], want[0], want[1])
		}
	}
}
