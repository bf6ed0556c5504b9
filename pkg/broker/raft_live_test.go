package broker_test

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/mqctl/mqctl/internal/testbroker"
	"github.com/mqctl/mqctl/pkg/broker"
	"github.com/mqctl/mqctl/pkg/topology"
)

// TestStoppedQuorumQueuesAgainstBroker: a quorum queue no Raft server runs
// for is listed as running by 4.0.5 and 4.3.6 (with its leader and every
// member online), yet nacks every publish; StoppedQuorumQueues finds it.
// Two such queues are made the way RabbitMQ leaves them: "stopped" with
// its server stopped (ra:stop_server: its log, and the message in it,
// stay on disk) and "never" with its server gone (ra:force_delete_server:
// what a declaration cut off before the servers' start leaves, as an
// apply killed mid-way does). Each version answers:
//   - 4.3.6: Raft State noproc on every member; "never" with no log.
//   - 4.0.5: "stopped" as 4.3.6; the status of "never" fails (500): its
//     log unknown (it reported statistics before its server went; one
//     that never did, as after a cut declaration, has no log).
//   - 3.10.8: no status endpoint; both are listed with no leader, their
//     logs unknown.
//
// "unelected" has its server started anew as a node's recovery does
// (testbroker.RestartQuorumQueueAnew): 4.3.6 elects it, 4.0.5 leaves it
// a follower at term 0 with no leader (found: Unelected; the advice's
// election makes it take and deliver a message), 3.10.8 too but lists it
// with its leader (not found: the listing tells no more).
//
// "cut" is declared with no Raft server before it ever reported
// statistics (testbroker.DeclareCutQuorumQueue), as an apply killed
// mid-declaration leaves one: found with no log on every version. 3.10.8
// lists it with no member online (its "online" are the members with a Raft
// server) though its node runs: the listing rows give the members whose
// node runs, as 4.0.5 and 4.3.6 list them, and it is not read as a member
// down.
func TestStoppedQuorumQueuesAgainstBroker(t *testing.T) {
	t.Parallel()
	b := testbroker.New(t)
	vh := b.Vhost(t)
	c := connect(t, b)
	for _, n := range []string{"running", "stopped", "never", "unelected"} {
		if err := c.DeclareQueue(t.Context(), vh, &topology.Queue{Name: n, Type: topology.QueueQuorum, Durable: true}); err != nil {
			t.Fatal(err)
		}
	}
	ch := b.Channel(t, vh)
	if err := ch.Publish("", "stopped", false, false, amqp.Publishing{Body: []byte("kept"), DeliveryMode: amqp.Persistent}); err != nil {
		t.Fatal(err)
	}
	// Wait for the message to be counted, so that "stopped" has
	// statistics and a log entry.
	deadline := time.Now().Add(30 * time.Second)
	for {
		st, err := c.QueueStatsNow(t.Context(), vh, "stopped")
		if err != nil {
			t.Fatal(err)
		}
		if st.Known && st.Messages == 1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("queue stopped: statistics never counted its message: %+v", st)
		}
		time.Sleep(250 * time.Millisecond)
	}
	b.BreakQuorumQueue(t, vh, "stopped", true)
	b.BreakQuorumQueue(t, vh, "never", false)
	b.RestartQuorumQueueAnew(t, vh, "unelected")
	b.DeclareCutQuorumQueue(t, vh, "cut")

	rows, err := c.ListQueueActivity(t.Context(), vh)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range rows {
		if r.Name == "cut" && (len(r.Members) == 0 || !cmp.Equal(r.Members, r.Online)) {
			t.Errorf("RabbitMQ %s: queue cut listed with members %v online %v; want every member online (its node runs)", b.Version(), r.Members, r.Online)
		}
	}
	got, err := c.StoppedQuorumQueues(t.Context(), vh, rows, []string{"running", "stopped", "never", "unelected", "cut"})
	if err != nil {
		t.Fatal(err)
	}
	logs := map[string]string{}
	for n, s := range got {
		logs[n] = map[broker.RaftLog]string{broker.LogUnknown: "log unknown", broker.LogNone: "no log", broker.LogKept: "log kept"}[s.Log]
		if s.Unelected {
			logs[n] = "unelected"
		}
	}
	var want map[string]string
	switch b.Version().Line() {
	case "3.10":
		// "unelected" is listed with its leader: the process runs.
		want = map[string]string{"stopped": "log unknown", "never": "log unknown", "cut": "no log"}
	case "4.0":
		want = map[string]string{"stopped": "log kept", "never": "log unknown", "unelected": "unelected", "cut": "no log"}
	default: // 4.3: "unelected" was elected
		want = map[string]string{"stopped": "log kept", "never": "no log", "cut": "no log"}
	}
	if diff := cmp.Diff(want, logs); diff != "" {
		t.Errorf("RabbitMQ %s: stopped quorum queues (-want +got):\n%s\n%+v", b.Version(), diff, got)
	}
	// The advice's election is the fix: run as given, "unelected" takes
	// and delivers a message.
	if s, ok := got["unelected"]; ok {
		runAdvice(t, b, s.Advice(vh, "unelected", nil))
		if err := ch.Publish("", "unelected", false, false, amqp.Publishing{Body: []byte("new")}); err != nil {
			t.Fatal(err)
		}
		if msg := getOne(t, ch, "unelected"); msg != "new" {
			t.Errorf("after the advice's election, queue unelected gave %q, want the message published (new)", msg)
		}
	}
	// The advice's restart is the fix that keeps the message: run as
	// given, "stopped" delivers it again.
	if s, ok := got["stopped"]; ok {
		runAdvice(t, b, s.Advice(vh, "stopped", nil))
		if msg := getOne(t, ch, "stopped"); msg != "kept" {
			t.Errorf("after the advice's restart, queue stopped gave %q, want the message it held (kept)", msg)
		}
	}
}

// runAdvice runs the rabbitmqctl eval that advice names.
func runAdvice(t *testing.T, b *testbroker.Broker, advice string) {
	t.Helper()
	i := strings.Index(advice, "rabbitmqctl eval '")
	if i < 0 {
		t.Fatalf("advice names no rabbitmqctl eval: %s", advice)
	}
	expr := advice[i+len("rabbitmqctl eval '"):]
	expr = expr[:strings.Index(expr, "'")]
	if err := b.Ctl("eval", expr); err != nil {
		t.Fatal(err)
	}
}

// getOne takes one message from queue q (basic.get), within 30 s; "" for
// none.
func getOne(t *testing.T, ch *amqp.Channel, q string) string {
	t.Helper()
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); {
		d, ok, err := ch.Get(q, true)
		if err != nil {
			t.Fatalf("basic.get from %s: %v", q, err)
		}
		if ok {
			return string(d.Body)
		}
		time.Sleep(250 * time.Millisecond)
	}
	return ""
}
