package flow

import (
	"reflect"
	"testing"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/mqctl/mqctl/internal/testbroker"
	"github.com/mqctl/mqctl/pkg/route"
	"github.com/mqctl/mqctl/pkg/topology"
)

// TestRefusingAgainstBroker checks what Refusing says on the broker of
// the run: a classic or quorum queue with a length limit of 2, overflow
// reject-publish and a dead-letter exchange refuses publishes once full
// (a classic queue keeps 2 of 5, a quorum queue, which checks the limit
// after each enqueue, at least 3), nacks each refused publish of a
// publisher using confirms, and dead-letters none; a publisher without
// confirms is told nothing. The same on 4.3.6, 4.0.5 and 3.10.8 (a quorum
// queue may take more of an unconfirmed publisher's messages before its
// channel learns it is full: 3.10.8 once kept 5).
func TestRefusingAgainstBroker(t *testing.T) {
	b := testbroker.New(t)
	for _, typ := range []string{topology.QueueClassic, topology.QueueQuorum} {
		t.Run(typ, func(t *testing.T) {
			vh := b.Vhost(t)
			ch := b.Channel(t, vh) // confirms
			args := amqp.Table{"x-queue-type": typ, "x-max-length": 2, "x-overflow": "reject-publish", "x-dead-letter-exchange": "", "x-dead-letter-routing-key": "dlq"}
			for _, q := range []struct {
				name string
				args amqp.Table
			}{{"dlq", nil}, {"q", args}, {"unconfirmed", args}} {
				if _, err := ch.QueueDeclare(q.name, true, false, false, false, q.args); err != nil {
					t.Fatalf("RabbitMQ %s refused queue %s: %v", b.Version(), q.name, err)
				}
			}
			acks, nacks := 0, 0
			for i := range 5 {
				dc, err := ch.PublishWithDeferredConfirm("", "q", false, false, amqp.Publishing{Body: []byte{byte('0' + i)}})
				if err != nil {
					t.Fatal(err)
				}
				if dc.Wait() {
					acks++
				} else {
					nacks++
				}
			}
			wantAcks := 2
			if typ == topology.QueueQuorum {
				wantAcks = 3
			}
			if acks != wantAcks || nacks != 5-wantAcks {
				t.Errorf("RabbitMQ %s confirmed %d and refused %d of 5 publishes, want %d and %d", b.Version(), acks, nacks, wantAcks, 5-wantAcks)
			}
			// A publisher without confirms: its channel is not told.
			conn, err := amqp.Dial(b.AMQPURL(vh))
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close()
			plain, err := conn.Channel()
			if err != nil {
				t.Fatal(err)
			}
			for i := range 5 {
				if err := plain.Publish("", "unconfirmed", false, false, amqp.Publishing{Body: []byte{byte('0' + i)}}); err != nil {
					t.Fatal(err)
				}
			}
			// Settle: the channel is still open (a refusal closes nothing),
			// and a round trip on it comes after its publishes.
			if _, err := plain.QueueDeclarePassive("unconfirmed", true, false, false, false, args); err != nil {
				t.Fatalf("the unconfirmed publisher's channel: %v", err)
			}
			count := func(q string) int {
				st, err := ch.QueueDeclarePassive(q, true, false, false, false, nil)
				if q != "dlq" {
					st, err = ch.QueueDeclarePassive(q, true, false, false, false, args)
				}
				if err != nil {
					t.Fatal(err)
				}
				return st.Messages
			}
			// Wait until a quorum queue's counts settle (no assertion on time).
			deadline := time.Now().Add(5 * time.Second)
			for time.Now().Before(deadline) && count("q") != acks {
				time.Sleep(50 * time.Millisecond)
			}
			if n := count("q"); n != acks {
				t.Errorf("RabbitMQ %s: queue q holds %d, want the %d confirmed", b.Version(), n, acks)
			}
			kept, least := count("unconfirmed"), 2
			if typ == topology.QueueQuorum {
				least = 3
			}
			for deadline := time.Now().Add(5 * time.Second); kept < least && time.Now().Before(deadline); kept = count("unconfirmed") {
				time.Sleep(50 * time.Millisecond)
			}
			if typ == topology.QueueClassic && kept != 2 {
				t.Errorf("RabbitMQ %s: a classic queue kept %d of 5 unconfirmed publishes, want 2", b.Version(), kept)
			}
			if typ == topology.QueueQuorum && kept < 3 {
				t.Errorf("RabbitMQ %s: a quorum queue kept %d of 5 unconfirmed publishes, want at least 3", b.Version(), kept)
			}
			if n := count("dlq"); n != 0 {
				t.Errorf("RabbitMQ %s dead-lettered %d refused messages, want none", b.Version(), n)
			}
			// Dead letters routed to it once full: a classic queue drops
			// them (dead-lettering publishes without confirms), a quorum
			// queue takes them past its limit.
			full := amqp.Table{"x-queue-type": typ, "x-max-length": 1, "x-overflow": "reject-publish"}
			work := amqp.Table{"x-message-ttl": 0, "x-dead-letter-exchange": "", "x-dead-letter-routing-key": "full"}
			if _, err := ch.QueueDeclare("full", true, false, false, false, full); err != nil {
				t.Fatal(err)
			}
			if _, err := ch.QueueDeclare("work", true, false, false, false, work); err != nil {
				t.Fatal(err)
			}
			for i := range 4 {
				dc, err := ch.PublishWithDeferredConfirm("", "work", false, false, amqp.Publishing{Body: []byte{byte('0' + i)}})
				if err != nil {
					t.Fatal(err)
				}
				dc.Wait()
			}
			wantDead := 1
			if typ == topology.QueueQuorum {
				wantDead = 4
			}
			countArgs := func(q string, a amqp.Table) int {
				st, err := ch.QueueDeclarePassive(q, true, false, false, false, a)
				if err != nil {
					t.Fatal(err)
				}
				return st.Messages
			}
			for deadline := time.Now().Add(5 * time.Second); (countArgs("full", full) < wantDead || countArgs("work", work) > 0) && time.Now().Before(deadline); {
				time.Sleep(50 * time.Millisecond)
			}
			if n := countArgs("full", full); n != wantDead {
				t.Errorf("RabbitMQ %s: a full %s queue with reject-publish took %d of 4 dead letters, want %d", b.Version(), typ, n, wantDead)
			}
			// The flows say so.
			before := topo(queue("dlq", nil), queue("q", topology.Args{"x-dead-letter-exchange": "", "x-dead-letter-routing-key": "dlq"}))
			after := topo(queue("dlq", nil), queue("q", topology.Args{"x-dead-letter-exchange": "", "x-dead-letter-routing-key": "dlq", "x-max-length": 2, "x-overflow": "reject-publish"}))
			if d := Compare(before, after, Options{Version: b.Version()}); len(d.Refusing) != 1 || !d.LosesMessages() || len(d.DeadLetters) != 0 {
				t.Errorf("the flows: %s", show(t, d))
			}
		})
	}
}

// TestOverflowDeadLettersAgainstBroker checks what DeadLetterEnd.Refused
// says on the broker of the run: a queue with a length limit of 2 and a
// dead-letter exchange, given five publishes with confirms, dead-letters
// the new messages it refuses with a classic queue's reject-publish-dlx
// (2 confirmed and kept, 3 nacked and dead-lettered), and its oldest with
// drop-head (5 confirmed, the last 2 kept, the first 3 dead-lettered, a
// quorum queue as a classic one); a quorum queue reads reject-publish-dlx
// as drop-head. The same on 4.3.6, 4.0.5 and 3.10.8. The flows of a change between the two say so.
func TestOverflowDeadLettersAgainstBroker(t *testing.T) {
	b := testbroker.New(t)
	tests := []struct {
		typ, overflow string
		refused       bool
	}{
		{topology.QueueClassic, "reject-publish-dlx", true},
		{topology.QueueClassic, "drop-head", false},
		{topology.QueueQuorum, "reject-publish-dlx", false},
		{topology.QueueQuorum, "drop-head", false},
	}
	for _, tc := range tests {
		t.Run(tc.typ+"/"+tc.overflow, func(t *testing.T) {
			vh := b.Vhost(t)
			ch := b.Channel(t, vh) // confirms
			args := amqp.Table{"x-queue-type": tc.typ, "x-max-length": 2, "x-overflow": tc.overflow, "x-dead-letter-exchange": "", "x-dead-letter-routing-key": "dlq"}
			if _, err := ch.QueueDeclare("dlq", true, false, false, false, nil); err != nil {
				t.Fatal(err)
			}
			if _, err := ch.QueueDeclare("q", true, false, false, false, args); err != nil {
				t.Fatalf("RabbitMQ %s refused a %s queue with overflow %s: %v", b.Version(), tc.typ, tc.overflow, err)
			}
			var nacked []string
			for i := range 5 {
				dc, err := ch.PublishWithDeferredConfirm("", "q", false, false, amqp.Publishing{Body: []byte{byte('0' + i)}})
				if err != nil {
					t.Fatal(err)
				}
				if !dc.Wait() {
					nacked = append(nacked, string(rune('0'+i)))
				}
			}
			bodies := func(q string, want int) []string {
				var out []string
				// Wait until the dead letters arrive (no assertion on time).
				for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(50 * time.Millisecond) {
					st, err := ch.QueueDeclarePassive(q, true, false, false, false, map[bool]amqp.Table{true: args, false: nil}[q == "q"])
					if err != nil {
						t.Fatal(err)
					}
					if st.Messages >= want || time.Now().After(deadline) {
						break
					}
				}
				for {
					m, ok, err := ch.Get(q, true)
					if err != nil {
						t.Fatal(err)
					}
					if !ok {
						return out
					}
					out = append(out, string(m.Body))
				}
			}
			wantNacked, wantKept, wantDead := []string(nil), []string{"3", "4"}, []string{"0", "1", "2"}
			if tc.refused {
				wantNacked, wantKept, wantDead = []string{"2", "3", "4"}, []string{"0", "1"}, []string{"2", "3", "4"}
			}
			dead := bodies("dlq", len(wantDead))
			kept := bodies("q", len(wantKept))
			if !reflect.DeepEqual(nacked, wantNacked) || !reflect.DeepEqual(kept, wantKept) || !reflect.DeepEqual(dead, wantDead) {
				t.Errorf("RabbitMQ %s, %s queue, overflow %s: refused %v, kept %v, dead-lettered %v; want %v, %v, %v", b.Version(), tc.typ, tc.overflow, nacked, kept, dead, wantNacked, wantKept, wantDead)
			}
			// The flows say which messages it dead-letters.
			declare := queue
			if tc.typ == topology.QueueQuorum {
				declare = quorum
			}
			v := topo(queue("dlq", nil), declare("q", topology.Args{"x-max-length": 2, "x-overflow": tc.overflow, "x-dead-letter-exchange": "", "x-dead-letter-routing-key": "dlq"}))
			e := newSide(v.Vhosts["/"], "/", b.Version()).end("q", route.MaxLen, route.Message{})
			if e.Refused != tc.refused || !reflect.DeepEqual(e.Queues, []string{"dlq"}) {
				t.Errorf("the flows' end: %s, want refused %v", show(t, e), tc.refused)
			}
		})
	}
}
