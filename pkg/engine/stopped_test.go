package engine_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/mqctl/mqctl/pkg/apply"
	"github.com/mqctl/mqctl/pkg/engine"
	"github.com/mqctl/mqctl/pkg/topology"
)

// TestPlanNotesStoppedQuorumQueues: a quorum queue of the file that no
// Raft server runs for matches the file, so the plan changes nothing for
// it (apply would not repair it); the plan notes it, with the fix that
// loses nothing for what its log holds. "kept" has its server stopped with
// a message in its log, "gone" its server deleted (as an apply killed
// mid-declaration leaves one), "fine" runs. Each version answers:
//   - 4.3.6: kept: log kept (do not delete; restart its servers); gone:
//     no log (delete, apply again).
//   - 4.0.5 and 3.10.8: no note. Without the leader health check (4.1+)
//     telling such a queue takes a listing with statistics and (4.0) a
//     Raft status a queue: a plan does not pay for it, mqctl status
//     reports them (pkg/status, broker's TestStoppedQuorumQueuesAgainstBroker).
func TestPlanNotesStoppedQuorumQueues(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	for _, n := range []string{"kept", "gone", "fine"} {
		if err := f.c.DeclareQueue(t.Context(), f.vhost, &topology.Queue{Name: n, Type: topology.QueueQuorum, Durable: true}); err != nil {
			t.Fatal(err)
		}
	}
	ch := f.b.Channel(t, f.vhost)
	if err := ch.Publish("", "kept", false, false, amqp.Publishing{Body: []byte("m"), DeliveryMode: amqp.Persistent}); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(30 * time.Second); ; {
		st, err := f.c.QueueStatsNow(t.Context(), f.vhost, "kept")
		if err != nil {
			t.Fatal(err)
		}
		if st.Known && st.Messages == 1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the statistics of queue kept never counted its message: %+v", st)
		}
		time.Sleep(250 * time.Millisecond)
	}
	f.b.BreakQuorumQueue(t, f.vhost, "kept", true)
	f.b.BreakQuorumQueue(t, f.vhost, "gone", false)

	p := f.plan(f.desired(`version: 1
vhosts:
  ${VHOST}:
    queues:
      kept: { type: quorum }
      gone: { type: quorum }
      fine: { type: quorum }
`))
	if got := changes(p); len(got) != 0 {
		t.Errorf("plan changes %v; want none: the queues are as the file says", got)
	}
	notes := map[string]string{}
	for _, n := range f.ownNotes() {
		for _, q := range []string{"kept", "gone", "fine"} {
			if strings.HasPrefix(n, `queue "`+q+`" in vhost`) {
				notes[q] = n
			}
		}
	}
	if n, ok := notes["fine"]; ok {
		t.Errorf("a note on a queue that runs: %s", n)
	}
	if !f.b.Version().AtLeast(4, 1) {
		if len(notes) != 0 {
			t.Errorf("RabbitMQ %s: plan checked the Raft servers without the leader health check: %q", f.b.Version(), notes)
		}
		return
	}
	gone := []string{"no Raft server runs for it", "holds nothing", "mqctl apply does not repair it", "delete_queue", "run mqctl apply"}
	kept := []string{"no Raft server runs for it", "Do not delete it", "restart_server", "apply does not repair it"}
	for q, want := range map[string][]string{"kept": kept, "gone": gone} {
		n, ok := notes[q]
		if !ok {
			t.Errorf("RabbitMQ %s: no note on queue %s; notes: %q", f.b.Version(), q, f.ownNotes())
			continue
		}
		for _, w := range want {
			if !strings.Contains(n, w) {
				t.Errorf("RabbitMQ %s: the note on queue %s lacks %q: %s", f.b.Version(), q, w, n)
			}
		}
	}
}

// TestApplyRefusalNamesStoppedQuorumQueue: an apply that would replace a
// quorum queue no Raft server runs for, whose statistics therefore never
// refresh, refuses before anything changes, and says for that queue what
// it holds and the fix that loses nothing, not merely "delete it". The
// queues dead-letter at least once, so that every version counts their
// hidden messages before a replace. "a" is left with no Raft server nor
// log (as a cut-off declaration leaves it), "b" runs. Each version's
// advice for "a": 4.3.6 no log: holds nothing, delete and apply again;
// 4.0.5 and 3.10.8 (its log unknown): restart its servers, or delete it
// where that answers name_not_registered. (3.10.8 lists "a" with no member
// online, its "online" being the members with a Raft server: read as
// members down, the apply held its replace back "until a majority is
// back", which never comes, and went ahead with "b".)
func TestApplyRefusalNamesStoppedQuorumQueue(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ctx := context.Background()
	file := func(extra string) *topology.Topology {
		return f.desired(`version: 1
vhosts:
  ${VHOST}:
    exchanges:
      dlx: { type: fanout }
    queues:
      dead:
        bindings: [{ exchange: dlx }]
      a: { type: quorum, arguments: { x-dead-letter-exchange: dlx, x-dead-letter-strategy: at-least-once, x-overflow: reject-publish` + extra + ` } }
      b: { type: quorum, arguments: { x-dead-letter-exchange: dlx, x-dead-letter-strategy: at-least-once, x-overflow: reject-publish` + extra + ` } }
`)
	}
	if _, err := f.eng.Apply(ctx, engine.ApplyInput{Desired: file("")}, engine.ApplyOptions{}); err != nil {
		t.Fatal(err)
	}
	// Once "a" reported statistics, which a queue left so by a cut
	// declaration never did (its advice is then to delete it).
	for deadline := time.Now().Add(30 * time.Second); ; {
		st, err := f.c.QueueStatsNow(ctx, f.vhost, "a")
		if err != nil {
			t.Fatal(err)
		}
		if st.Known {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("queue a reported no statistics within 30s")
		}
		time.Sleep(250 * time.Millisecond)
	}
	f.b.BreakQuorumQueue(t, f.vhost, "a", false)
	_, err := f.eng.Apply(ctx, engine.ApplyInput{Desired: file(", x-max-length: 100")}, engine.ApplyOptions{AllowReplace: true})
	if !errors.Is(err, apply.ErrRefused) {
		t.Fatalf("RabbitMQ %s: apply: %v; want a refusal", f.b.Version(), err)
	}
	want := []string{`queue "a"`, "no Raft server runs for it", "restart_server", "name_not_registered"}
	if f.b.Version().Line() == "4.3" {
		want = []string{`queue "a"`, "no Raft server runs for it", "holds nothing", "delete_queue"}
	}
	for _, w := range want {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("RabbitMQ %s: the refusal lacks %q: %v", f.b.Version(), w, err)
		}
	}
	if strings.Contains(err.Error(), `queue "b": `) {
		t.Errorf("RabbitMQ %s: the refusal has advice for queue b, which runs: %v", f.b.Version(), err)
	}
	// Nothing changed: b is still the queue of the first file.
	if p := f.plan(file("")); len(changes(p)) != 0 {
		t.Errorf("plan of the first file after the refusal: %v", changes(p))
	}
}

// TestStoppedQueueAtStakeCannotBeDrained: a quorum queue no Raft server
// runs for, its log kept with the messages the statistics counted last,
// delivers nothing: the plan that replaces it notes so with the fix that
// keeps them, and an apply refuses it with that fix, not "drain it
// first", which was all it said. Run as given, the
// advice's restart makes the queue deliver its messages again. On every
// version.
func TestStoppedQueueAtStakeCannotBeDrained(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ctx := context.Background()
	file := func(extra string) *topology.Topology {
		return f.desired(`version: 1
vhosts:
  ${VHOST}:
    queues:
      k: { type: quorum` + extra + ` }
`)
	}
	if _, err := f.eng.Apply(ctx, engine.ApplyInput{Desired: file("")}, engine.ApplyOptions{}); err != nil {
		t.Fatal(err)
	}
	ch := f.b.Channel(t, f.vhost)
	if err := ch.Publish("", "k", false, false, amqp.Publishing{Body: []byte("kept"), DeliveryMode: amqp.Persistent}); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(30 * time.Second); ; {
		st, err := f.c.QueueStatsNow(ctx, f.vhost, "k")
		if err != nil {
			t.Fatal(err)
		}
		if st.Known && st.Messages == 1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the statistics of queue k never counted its message: %+v", st)
		}
		time.Sleep(250 * time.Millisecond)
	}
	f.b.BreakQuorumQueue(t, f.vhost, "k", true)

	f.plan(file(", arguments: { x-max-length: 10 }"))
	var note string
	for _, n := range f.ownNotes() {
		if strings.HasPrefix(n, `queue "k" in vhost`) && strings.Contains(n, "cannot be drained") {
			note = n
		}
	}
	if !strings.Contains(note, "restart_server") {
		t.Errorf("RabbitMQ %s: the plan does not say queue k cannot be drained, with the restart that keeps its message; notes: %q", f.b.Version(), f.ownNotes())
	}
	_, err := f.eng.Apply(ctx, engine.ApplyInput{Desired: file(", arguments: { x-max-length: 10 }")}, engine.ApplyOptions{AllowReplace: true})
	if !errors.Is(err, apply.ErrRefused) {
		t.Fatalf("RabbitMQ %s: apply: %v; want a refusal", f.b.Version(), err)
	}
	for _, w := range []string{`queue "k"`, "cannot be drained", "restart_server"} {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("RabbitMQ %s: the refusal lacks %q: %v", f.b.Version(), w, err)
		}
	}
	if strings.Contains(err.Error(), "drain it first") {
		t.Errorf("RabbitMQ %s: the refusal advises draining a queue that delivers nothing: %v", f.b.Version(), err)
	}
	// The advice's restart, run as given, keeps the message.
	i := strings.Index(note, "rabbitmqctl eval '")
	if i < 0 {
		t.Fatalf("the note names no rabbitmqctl eval: %s", note)
	}
	expr := note[i+len("rabbitmqctl eval '"):]
	if err := f.b.Ctl("eval", expr[:strings.Index(expr, "'")]); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(30 * time.Second); ; {
		d, ok, err := ch.Get("k", true)
		if err != nil {
			t.Fatal(err)
		}
		if ok {
			if string(d.Body) != "kept" {
				t.Errorf("queue k gave %q, want its message (kept)", d.Body)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("RabbitMQ %s: after the advice's restart queue k gave no message within 30 s", f.b.Version())
		}
		time.Sleep(250 * time.Millisecond)
	}
}
