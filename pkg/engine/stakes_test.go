package engine_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/mqctl/mqctl/pkg/apply"
	"github.com/mqctl/mqctl/pkg/broker"
	"github.com/mqctl/mqctl/pkg/engine"
	"github.com/mqctl/mqctl/pkg/kind"
	"github.com/mqctl/mqctl/pkg/plan"
)

// TestStakesOfManyQueues: with more than a few queues at stake in a vhost
// the statistics come from one listing of its queues; the plan still
// counts every queue's messages and consumers, as the reads one by one did.
func TestStakesOfManyQueues(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ctx := context.Background()
	f.applyQueues(7)
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
		if c.Kind == kind.Queue && c.Action == plan.Delete {
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

// TestStakesOfManyQueuesExact: with more queues at stake than are read at
// once, the exact figures of plan and apply (read over AMQP, many queues
// at a time) still belong each to its own queue: messages published an
// instant before the plan, before the statistics could show them, are
// counted in the right queues (quorum queues too), a consumer too; apply
// refuses the teardown for them, showing the same figures, and deletes
// everything with AllowDataLoss.
func TestStakesOfManyQueuesExact(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ctx := context.Background()
	const queues = 40
	var sb strings.Builder
	sb.WriteString("version: 1\nvhosts:\n  ${VHOST}:\n    queues:\n")
	for i := range queues {
		if i%10 == 7 {
			fmt.Fprintf(&sb, "      q%02d: { type: quorum }\n", i)
		} else {
			fmt.Fprintf(&sb, "      q%02d: {}\n", i)
		}
	}
	if _, err := f.eng.Apply(ctx, engine.ApplyInput{Desired: f.desired(sb.String())}, engine.ApplyOptions{}); err != nil {
		t.Fatal(err)
	}
	want := map[string][2]int64{}
	for i := range queues {
		want[fmt.Sprintf("q%02d", i)] = [2]int64{}
	}
	ch := f.b.Channel(t, f.vhost)
	if err := ch.Confirm(false); err != nil {
		t.Fatal(err)
	}
	for q, n := range map[string]int64{"q03": 3, "q17": 1, "q27": 2, "q39": 4} {
		publishConfirmed(t, ch, q, int(n))
		want[q] = [2]int64{n, 0}
	}
	if _, err := f.b.Channel(t, f.vhost).Consume("q20", "", false, false, false, false, nil); err != nil {
		t.Fatal(err)
	}
	want["q20"] = [2]int64{0, 1}
	stakes := func(p *plan.Plan) map[string][2]int64 {
		got := map[string][2]int64{}
		for _, c := range p.Changes {
			if c.Kind == kind.Queue && c.Action == plan.Delete {
				got[c.Name] = [2]int64{c.Messages, c.Consumers}
			}
		}
		return got
	}
	check := func(what string, got map[string][2]int64) {
		t.Helper()
		if len(got) != queues {
			t.Fatalf("%s: %d queue deletes, want %d", what, len(got), queues)
		}
		for q, w := range want {
			if got[q] != w {
				t.Errorf("%s: queue %s: %d messages, %d consumers at stake, want %d and %d", what, q, got[q][0], got[q][1], w[0], w[1])
			}
		}
	}
	teardown := f.desired("version: 1\nvhosts:\n  ${VHOST}: {}\n")
	check("plan", stakes(f.plan(teardown)))

	var shown map[string][2]int64
	_, err := f.eng.Apply(ctx, engine.ApplyInput{Desired: f.desired("version: 1\nvhosts:\n  ${VHOST}: {}\n")}, engine.ApplyOptions{
		Show: func(p *plan.Plan) error { shown = stakes(p); return nil },
	})
	if !errors.Is(err, apply.ErrRefused) {
		t.Fatalf("apply of the teardown without AllowDataLoss: %v, want it refused", err)
	}
	check("apply", shown)
	if _, err := f.eng.Apply(ctx, engine.ApplyInput{Desired: f.desired("version: 1\nvhosts:\n  ${VHOST}: {}\n")}, engine.ApplyOptions{AllowDataLoss: true}); err != nil {
		t.Fatal(err)
	}
	if p := f.plan(f.desired("version: 1\nvhosts:\n  ${VHOST}: {}\n")); !p.Empty() {
		t.Errorf("plan after the teardown: %v", changes(p))
	}
}

// TestStakesCountUnacknowledged: a teardown of more than a few queues
// counts the messages a consumer holds unacknowledged (which a passive
// declare does not see) while the vhost has some, and, once they are back
// in the queue, the ready messages exactly, as the passive declares count
// them.
func TestStakesCountUnacknowledged(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.applyQueues(6)
	pub := f.b.Channel(t, f.vhost)
	if err := pub.Confirm(false); err != nil {
		t.Fatal(err)
	}
	for q, n := range map[string]int{"q1": 2, "q3": 3} {
		publishConfirmed(t, pub, q, n)
	}
	// A consumer of q1 takes both its messages and acknowledges neither.
	held := f.b.Channel(t, f.vhost)
	deliveries, err := held.Consume("q1", "", false, false, false, false, nil)
	if err != nil {
		t.Fatal(err)
	}
	for range 2 {
		<-deliveries
	}
	f.waitUnacked(2)
	teardown := f.desired("version: 1\nvhosts:\n  ${VHOST}: {}\n")
	stakes := func(what string, want map[string][2]int64) {
		t.Helper()
		got := map[string][2]int64{}
		for _, c := range f.plan(teardown).Changes {
			if c.Kind == kind.Queue && c.Action == plan.Delete {
				got[c.Name] = [2]int64{c.Messages, c.Consumers}
			}
		}
		for q, w := range want {
			if got[q] != w {
				t.Errorf("%s: queue %s: %d messages, %d consumers at stake, want %d and %d", what, q, got[q][0], got[q][1], w[0], w[1])
			}
		}
	}
	stakes("two messages unacknowledged", map[string][2]int64{"q0": {}, "q1": {2, 1}, "q3": {3, 0}})
	// The consumer goes: its messages are ready again.
	if err := held.Close(); err != nil {
		t.Fatal(err)
	}
	f.waitUnacked(0)
	stakes("none unacknowledged", map[string][2]int64{"q0": {}, "q1": {2, 0}, "q3": {3, 0}})
}

// waitUnacked waits until the test vhost's statistics count n
// unacknowledged messages.
func (f *fixture) waitUnacked(n int) {
	f.t.Helper()
	want := fmt.Sprintf(`"messages_unacknowledged":%d`, n)
	deadline := time.Now().Add(30 * time.Second)
	for {
		_, body, err := f.b.API(http.MethodGet, "vhosts/"+url.PathEscape(f.vhost)+"?columns=messages_unacknowledged", nil)
		if err != nil {
			f.t.Fatal(err)
		}
		if strings.Contains(string(body), want) {
			return
		}
		if time.Now().After(deadline) {
			f.t.Fatalf("the vhost's statistics never counted %d unacknowledged messages: %s", n, body)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// applyQueues applies a file of n classic queues q0, q1, … to the test
// vhost.
func (f *fixture) applyQueues(n int) {
	f.t.Helper()
	var sb strings.Builder
	sb.WriteString("version: 1\nvhosts:\n  ${VHOST}:\n    queues:\n")
	for i := range n {
		fmt.Fprintf(&sb, "      q%d: {}\n", i)
	}
	if _, err := f.eng.Apply(context.Background(), engine.ApplyInput{Desired: f.desired(sb.String())}, engine.ApplyOptions{}); err != nil {
		f.t.Fatal(err)
	}
}

// publishConfirmed publishes n messages to queue q through ch (in confirm
// mode) and waits for the broker to confirm each.
func publishConfirmed(t *testing.T, ch *amqp.Channel, q string, n int) {
	t.Helper()
	for range n {
		conf, err := ch.PublishWithDeferredConfirmWithContext(context.Background(), "", q, true, false, amqp.Publishing{Body: []byte("x")})
		if err != nil {
			t.Fatal(err)
		}
		if !conf.Wait() {
			t.Fatalf("publish to %s not confirmed", q)
		}
	}
}

// TestStakesOfADrainedQueue: a classic queue emptied a moment ago, while
// its statistics still count the messages it held, has nothing at stake in
// the plan that deletes it (two queues at stake, read one by one, and six,
// read with one listing): the passive declare's ready messages stand in
// for the statistics' ready ones, and apply deletes it at once. Before,
// the larger figure won, and plan and apply refused the delete for
// messages that were gone (the replay the refusal advises for a queue
// renamed in the file, then apply at once, met that). A quorum queue keeps
// the larger figure where the statistics were read: one whose Raft
// servers do not run answers a passive declare with 0 messages whatever
// it holds.
func TestStakesOfADrainedQueue(t *testing.T) {
	t.Parallel()
	for _, n := range []int{2, 6} {
		t.Run(fmt.Sprintf("%d queues", n), func(t *testing.T) {
			t.Parallel()
			f := newFixture(t)
			const keep = "version: 1\nvhosts:\n  ${VHOST}:\n    queues:\n      q1: { type: quorum }\n"
			var sb strings.Builder
			sb.WriteString(keep + "      q0: {}\n")
			for i := 2; i < n; i++ {
				fmt.Fprintf(&sb, "      q%d: {}\n", i)
			}
			if _, err := f.eng.Apply(context.Background(), engine.ApplyInput{Desired: f.desired(sb.String())}, engine.ApplyOptions{}); err != nil {
				t.Fatal(err)
			}
			ch := f.b.Channel(t, f.vhost)
			if err := ch.Confirm(false); err != nil {
				t.Fatal(err)
			}
			teardown := f.desired("version: 1\nvhosts:\n  ${VHOST}: {}\n")
			// The statistics must still count the messages when the plan
			// reads them; they are sampled every few seconds, so a round
			// that met a fresh sample is made again.
			for round := 1; ; round++ {
				for _, q := range []string{"q0", "q1"} {
					publishConfirmed(t, ch, q, 3)
					f.waitDepth(q, 3)
				}
				for _, q := range []string{"q0", "q1"} {
					for range 3 {
						if _, ok, err := ch.Get(q, true); err != nil || !ok {
							t.Fatalf("get from %s: %v (got one: %t)", q, err, ok)
						}
					}
				}
				p := f.plan(teardown)
				if !f.depthIs("q0", 3) || !f.depthIs("q1", 3) {
					if round < 3 {
						continue
					}
					t.Fatal("the statistics counted the drained queues at once, three times: the test cannot tell")
				}
				for _, c := range p.Changes {
					if c.Kind != kind.Queue || c.Action != plan.Delete {
						continue
					}
					want := int64(0)
					if c.Name == "q1" && (n < broker.ListQueuesFrom || !f.c.RabbitMQVersion().PlacementsWithoutStats()) {
						// The statistics' figure, larger, stands. From 4.0 a
						// vhost with more queues at stake is listed without
						// them where its statistics count no unacknowledged
						// message, and the passive declares count alone.
						want = 3
					}
					if c.Messages != want || c.Consumers != 0 {
						t.Errorf("queue %s: %d messages and %d consumers at stake, want %d and none", c.Name, c.Messages, c.Consumers, want)
					}
				}
				// Apply, which checks each queue again as it deletes it,
				// deletes the classic ones at once.
				if _, err := f.eng.Apply(context.Background(), engine.ApplyInput{Desired: f.desired(keep)}, engine.ApplyOptions{}); err != nil {
					t.Fatalf("apply of the delete of the classic queues right after they were drained: %v", err)
				}
				if p := f.plan(f.desired(keep)); !p.Empty() {
					t.Errorf("plan after the apply: %v", changes(p))
				}
				return
			}
		})
	}
}

// waitDepth waits until the statistics of queue q of the test vhost count
// n messages.
func (f *fixture) waitDepth(q string, n int) {
	f.t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !f.depthIs(q, n) {
		if time.Now().After(deadline) {
			f.t.Fatalf("the statistics of queue %s never counted %d messages", q, n)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// depthIs reports whether the statistics of queue q of the test vhost
// count n messages.
func (f *fixture) depthIs(q string, n int) bool {
	f.t.Helper()
	_, body, err := f.b.API(http.MethodGet, "queues/"+url.PathEscape(f.vhost)+"/"+url.PathEscape(q)+"?columns=messages", nil)
	if err != nil {
		f.t.Fatal(err)
	}
	return strings.Contains(string(body), fmt.Sprintf(`"messages":%d`, n))
}
