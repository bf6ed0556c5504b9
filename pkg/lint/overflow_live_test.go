package lint

import (
	"strings"
	"testing"
	"time"

	rabbithole "github.com/michaelklishin/rabbit-hole/v2"
	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/mqctl/mqctl/internal/testbroker"
	"github.com/mqctl/mqctl/pkg/topology"
)

// TestQuorumRejectPublishDLXAgainstBroker shows what MQ501 says of a
// quorum queue with overflow reject-publish-dlx, set by an argument or by a
// policy, on the broker of the run: RabbitMQ declares the queue and applies
// the policy (it only logs a warning), and the full queue behaves as
// drop-head: every publish is confirmed, and the oldest messages are
// dead-lettered. Measured the same on 4.3.6, 4.0.5 and 3.10.8
// (rabbit_quorum_queue:overflow/3 falls back to drop-head on each).
func TestQuorumRejectPublishDLXAgainstBroker(t *testing.T) {
	b := testbroker.New(t)
	for _, byPolicy := range []bool{false, true} {
		name := "argument"
		if byPolicy {
			name = "policy"
		}
		t.Run(name, func(t *testing.T) {
			vh := b.Vhost(t)
			ch := b.Channel(t, vh)
			if err := ch.ExchangeDeclare("dlx", "fanout", true, false, false, false, nil); err != nil {
				t.Fatal(err)
			}
			if _, err := ch.QueueDeclare("dlq", true, false, false, false, nil); err != nil {
				t.Fatal(err)
			}
			if err := ch.QueueBind("dlq", "", "dlx", false, nil); err != nil {
				t.Fatal(err)
			}
			lb := newBuilder()
			lb.exchange("dlx", "fanout")
			args := amqp.Table{"x-queue-type": "quorum"}
			settings := topology.Args{argMaxLen: 1, argOverflow: "reject-publish-dlx", argDLX: "dlx"}
			if byPolicy {
				def := rabbithole.PolicyDefinition{"max-length": 1, "overflow": "reject-publish-dlx", "dead-letter-exchange": "dlx"}
				resp, err := b.RH.PutPolicy(vh, "cap", rabbithole.Policy{Pattern: "^qq$", ApplyTo: "queues", Definition: def})
				if err != nil {
					t.Fatalf("RabbitMQ %s refused the policy: %v", b.Version(), err)
				}
				resp.Body.Close()
				lb.typed("qq", topology.QueueQuorum, nil)
				lb.policy("cap", "^qq$", topology.Args{"max-length": 1, "overflow": "reject-publish-dlx", "dead-letter-exchange": "dlx"})
				time.Sleep(200 * time.Millisecond) // the policy reaches new queues as they are declared
			} else {
				for k, v := range settings {
					args[k] = v
				}
				lb.typed("qq", topology.QueueQuorum, settings)
			}
			if _, err := ch.QueueDeclare("qq", true, false, false, false, args); err != nil {
				t.Fatalf("RabbitMQ %s refused the quorum queue: %v", b.Version(), err)
			}
			if err := ch.Confirm(false); err != nil {
				t.Fatal(err)
			}
			for i := range 3 {
				dc, err := ch.PublishWithDeferredConfirm("", "qq", false, false, amqp.Publishing{Body: []byte{byte('0' + i)}})
				if err != nil {
					t.Fatal(err)
				}
				if !dc.Wait() {
					t.Errorf("RabbitMQ %s refused publish %d: a quorum queue with reject-publish-dlx behaves as reject-publish, not drop-head as MQ501 says", b.Version(), i)
				}
			}
			deadline := time.Now().Add(10 * time.Second)
			var dead int
			for time.Now().Before(deadline) {
				q, err := ch.QueueDeclarePassive("dlq", true, false, false, false, nil)
				if err != nil {
					t.Fatal(err)
				}
				if dead = q.Messages; dead >= 2 {
					break
				}
				time.Sleep(50 * time.Millisecond)
			}
			if dead != 2 {
				t.Errorf("RabbitMQ %s dead-lettered %d of 3 messages to a full quorum queue of length 1, want 2 (drop-head)", b.Version(), dead)
			}
			if m, ok, err := ch.Get("qq", true); err != nil || !ok || string(m.Body) != "2" {
				t.Errorf("RabbitMQ %s: the queue holds %q (ok=%v, %v), want the newest message, \"2\"", b.Version(), m.Body, ok, err)
			}

			fs := lb.run(t, Options{Version: b.Version()})
			var msgs []string
			for _, f := range fs {
				if f.ID == "MQ501" {
					msgs = append(msgs, f.Message)
				}
			}
			if len(msgs) != 1 || !strings.Contains(msgs[0], "drop-head") || strings.Contains(msgs[0], "refuses to declare") || strings.Contains(msgs[0], "does not apply") {
				t.Errorf("MQ501 on %s: %q, want one finding that says the broker uses drop-head", b.Version(), msgs)
			}
		})
	}
}
