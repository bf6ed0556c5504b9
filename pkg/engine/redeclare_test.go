package engine_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/mqctl/mqctl/pkg/engine"
	"github.com/mqctl/mqctl/pkg/plan"
)

// TestReplaceRefusesOldDeclarations: an application that declares a queue
// or an exchange itself, as it was, is refused once mqctl replaced it with
// other settings: PRECONDITION_FAILED (406), and its channel closed. The
// plan says so once per replaced object, with the fix (declare passively);
// a passive declaration still works after the replace, and a change the
// broker does not compare (an argument of the application's own,
// x-app-tag) is accepted and the plan says nothing of it. The answers,
// measured: 3.10.8, 4.0.5 and 4.3.6 refuse the queue's old x-message-ttl
// ("received '60000' but current is '120000'") and the exchange's old type
// ("received 'direct' but current is 'topic'") alike; a queue made quorum
// and declared as before, without x-queue-type, 4.0.5 and 4.3.6 refuse as
// "received 'classic' but current is 'quorum'" (they give the declaration
// the default type), 3.10.8 as "received none but current is the value
// 'quorum' of type 'longstr'".
func TestReplaceRefusesOldDeclarations(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ctx := context.Background()
	before := `version: 1
vhosts:
  ${VHOST}:
    exchanges:
      x: { type: direct }
    queues:
      q: { limits: { message_ttl: 1m } }
      tagged: { arguments: { x-app-tag: a } }
      typed: {}
`
	after := `version: 1
vhosts:
  ${VHOST}:
    exchanges:
      x: { type: topic }
    queues:
      q: { limits: { message_ttl: 2m } }
      tagged: { arguments: { x-app-tag: b } }
      typed: { type: quorum }
`
	if _, err := f.eng.Apply(ctx, engine.ApplyInput{Desired: f.desired(before)}, engine.ApplyOptions{}); err != nil {
		t.Fatal(err)
	}
	p := f.plan(f.desired(after))
	said := map[string]int{}
	for _, c := range p.Changes {
		if c.Action != plan.Replace {
			continue
		}
		said[c.Name] = strings.Count(c.Reason, "PRECONDITION_FAILED (406")
		if said[c.Name] == 1 && !strings.Contains(c.Reason, "have the applications declare it passively") {
			t.Errorf("replace of %s %s: the reason names the 406 without the fix: %s", c.Kind, c.Name, c.Reason)
		}
	}
	for name, want := range map[string]int{"x": 1, "q": 1, "typed": 1, "tagged": 0} {
		if got, ok := said[name]; !ok || got != want {
			t.Errorf("the plan's replace of %s says the 406 %d times (planned: %v), want %d", name, got, ok, want)
		}
	}
	if _, err := f.eng.Apply(ctx, engine.ApplyInput{Desired: f.desired(after)}, engine.ApplyOptions{AllowReplace: true}); err != nil {
		t.Fatal(err)
	}

	conn, err := amqp.Dial(f.b.AMQPURL(f.vhost))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	declare := func(what string, do func(ch *amqp.Channel) error) (*amqp.Error, *amqp.Channel) {
		t.Helper()
		ch, err := conn.Channel()
		if err != nil {
			t.Fatal(err)
		}
		var ae *amqp.Error
		if err := do(ch); err != nil && !errors.As(err, &ae) {
			t.Fatalf("%s: %v", what, err)
		}
		return ae, ch
	}
	for _, tc := range []struct {
		what   string
		do     func(ch *amqp.Channel) error
		refuse string // the broker's words, on every version; "" for none
		// received is what the broker says it received and holds: 4.x's
		// and, where it says otherwise, 3.10's.
		received, received310 string
	}{
		{"queue q with its old x-message-ttl", func(ch *amqp.Channel) error {
			_, err := ch.QueueDeclare("q", true, false, false, false, amqp.Table{"x-message-ttl": int32(60000)})
			return err
		}, "inequivalent arg 'x-message-ttl' for queue 'q'", "received '60000' but current is '120000'", ""},
		{"exchange x with its old type", func(ch *amqp.Channel) error {
			return ch.ExchangeDeclare("x", "direct", true, false, false, false, nil)
		}, "inequivalent arg 'type' for exchange 'x'", "received 'direct' but current is 'topic'", ""},
		{"queue typed as it was, without a type", func(ch *amqp.Channel) error {
			_, err := ch.QueueDeclare("typed", true, false, false, false, nil)
			return err
		}, "inequivalent arg 'x-queue-type' for queue 'typed'", "received 'classic' but current is 'quorum'", "received none but current is the value 'quorum' of type 'longstr'"},
		{"queue tagged with its old x-app-tag", func(ch *amqp.Channel) error {
			_, err := ch.QueueDeclare("tagged", true, false, false, false, amqp.Table{"x-app-tag": "a"})
			return err
		}, "", "", ""},
		{"queue q passively", func(ch *amqp.Channel) error {
			_, err := ch.QueueDeclarePassive("q", true, false, false, false, nil)
			return err
		}, "", "", ""},
		{"exchange x passively", func(ch *amqp.Channel) error {
			return ch.ExchangeDeclarePassive("x", "direct", true, false, false, false, nil)
		}, "", "", ""},
	} {
		ae, ch := declare(tc.what, tc.do)
		switch {
		case tc.refuse == "" && ae != nil:
			t.Errorf("RabbitMQ %s refused the declaration of %s after the replace: %v", f.b.Version(), tc.what, ae)
		case tc.refuse == "":
			ch.Close()
		case ae == nil:
			t.Errorf("RabbitMQ %s accepted the declaration of %s after the replace, want PRECONDITION_FAILED", f.b.Version(), tc.what)
			ch.Close()
		default:
			received := tc.received
			if tc.received310 != "" && !f.b.Version().AtLeast(4, 0) {
				received = tc.received310
			}
			if ae.Code != amqp.PreconditionFailed || !strings.Contains(ae.Reason, tc.refuse) || !strings.Contains(ae.Reason, received) || !ch.IsClosed() {
				t.Errorf("RabbitMQ %s answered the declaration of %s with %d %q (channel closed: %v), want 406 %q, %q and the channel closed", f.b.Version(), tc.what, ae.Code, ae.Reason, ch.IsClosed(), tc.refuse, received)
			}
		}
	}
}
