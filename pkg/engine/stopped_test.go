package engine_test

import (
	"strings"
	"testing"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

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
//   - 4.0.5: kept as 4.3.6; gone: log unknown (its Raft status fails,
//     500, and it ran once): restart, or delete where that answers
//     name_not_registered.
//   - 3.10.8: both log unknown (no status endpoint; the listing names no
//     leader), the advice as for 4.0.5's gone.
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
	gone := []string{"no Raft server runs for it", "apply does not repair it", "restart_server", "name_not_registered", "delete_queue"}
	if f.b.Version().Line() == "4.3" {
		gone = []string{"no Raft server runs for it", "holds nothing", "mqctl apply does not repair it", "delete_queue", "run mqctl apply"}
	}
	kept := []string{"no Raft server runs for it", "Do not delete it", "restart_server", "apply does not repair it"}
	if f.b.Version().Line() == "3.10" {
		kept = []string{"no Raft server runs for it", "restart_server", "name_not_registered", "apply does not repair it"}
	}
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
