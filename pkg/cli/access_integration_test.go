package cli_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/mqctl/mqctl/internal/testbroker"
)

// The file of TestAccessLeastPrivilege: a queue bound to an exchange, and
// one of each beside them that the user must not touch.
const accessTopology = `version: 1
users:
  ${ACC_USER}:
    password: ${ACC_PASSWORD}
    access:
      ${VHOST}: { consume: [acc.work], publish: [acc.in], declare: [acc.work] }
vhosts:
  ${VHOST}:
    exchanges:
      acc.in: { type: direct }
      acc.other: { type: direct }
    queues:
      acc.work:
        bindings: [{ exchange: acc.in, routing_key: work }]
      acc.other:
        bindings: [{ exchange: acc.other, routing_key: other }]
`

// deleteUserAtEnd deletes user (made by mqctl apply) when the test ends.
func deleteUserAtEnd(t *testing.T, b *testbroker.Broker, user string) {
	t.Cleanup(func() {
		resp, err := b.RH.DeleteUser(user)
		if resp != nil && resp.Body != nil {
			resp.Body.Close()
		}
		if err != nil && !strings.Contains(err.Error(), "404") && !strings.Contains(err.Error(), "Not Found") {
			t.Errorf("delete user %s: %v", user, err)
		}
	})
}

// TestAccessLeastPrivilege: mqctl apply makes the user of an access entry
// with exactly the permission the sugar expands to; over AMQP, as that
// user, each operation access grants succeeds and one step outside each
// is refused by the broker (ACCESS_REFUSED, 403). Same answers on 3.10.8
// and 4.0.5.
func TestAccessLeastPrivilege(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.b.UsersSection(t) // its users section speaks for every mqctl-made user
	user := testbroker.Name(t, "mqctl-acc")
	password := "pw-" + strings.ReplaceAll(testbroker.Name(t, "acc"), "-", "")
	deleteUserAtEnd(t, h.b, user)
	h.env["ACC_USER"], h.env["ACC_PASSWORD"] = user, password

	// The users section locks the broker's users ("/"): an apply of
	// another package's test with a users section may hold it a moment
	// (CI met one), so this one waits for it.
	h.mustApply(accessTopology, "--lock-timeout", "2m")
	h.assertNoChanges(accessTopology)

	perm, err := h.b.RH.GetPermissionsIn(h.vhost, user)
	if err != nil {
		t.Fatalf("read %s's permission: %v", user, err)
	}
	want := [3]string{`^acc\.work$`, `^(?:acc\.in|acc\.work)$`, `^(?:acc\.in|acc\.work)$`}
	if got := [3]string{perm.Configure, perm.Write, perm.Read}; got != want {
		t.Fatalf("permission (configure, write, read) = %q, want %q", got, want)
	}

	conn, err := amqp.Dial(h.b.AMQPURLFor(user, password, h.vhost))
	if err != nil {
		t.Fatalf("AMQP login as %s: %s", user, strings.ReplaceAll(err.Error(), password, "***"))
	}
	t.Cleanup(func() { conn.Close() })
	// Each step on a channel of its own: a refusal closes the channel.
	channel := func(t *testing.T) *amqp.Channel {
		ch, err := conn.Channel()
		if err != nil {
			t.Fatalf("open a channel: %v", err)
		}
		t.Cleanup(func() { ch.Close() })
		return ch
	}
	// publish publishes body to exchange with key, with a confirm, and
	// returns the broker's refusal: a refused publish closes the channel,
	// which the next synchronous method (a passive declare, which needs no
	// permission) reports. When the close comes in before that method is
	// sent, the method only finds the channel closed (504); the broker's
	// reason is then the one the channel was closed with.
	publish := func(t *testing.T, exchange, key, body string) error {
		ch := channel(t)
		if err := ch.Confirm(false); err != nil {
			t.Fatal(err)
		}
		closed := ch.NotifyClose(make(chan *amqp.Error, 1))
		reason := func(err error) error {
			if !errors.Is(err, amqp.ErrClosed) {
				return err
			}
			select {
			case ae, ok := <-closed:
				if ok && ae != nil {
					return ae
				}
			case <-time.After(5 * time.Second):
			}
			return err
		}
		dc, err := ch.PublishWithDeferredConfirmWithContext(context.Background(), exchange, key, false, false, amqp.Publishing{Body: []byte(body)})
		if err != nil {
			return reason(err)
		}
		if _, err := ch.QueueDeclarePassive("acc.work", true, false, false, false, nil); err != nil {
			return reason(err)
		}
		if !dc.Wait() {
			t.Fatalf("publish to %q nacked", exchange)
		}
		return nil
	}
	steps := []struct {
		name    string
		do      func(t *testing.T) error
		allowed bool
	}{
		{"passive declare of its queue", func(t *testing.T) error {
			_, err := channel(t).QueueDeclarePassive("acc.work", true, false, false, false, nil)
			return err
		}, true},
		{"active declare of its queue", func(t *testing.T) error {
			_, err := channel(t).QueueDeclare("acc.work", true, false, false, false, nil)
			return err
		}, true},
		{"bind its queue as the file binds it", func(t *testing.T) error {
			return channel(t).QueueBind("acc.work", "work", "acc.in", false, nil)
		}, true},
		{"publish to its exchange", func(t *testing.T) error { return publish(t, "acc.in", "work", "hello") }, true},
		{"get from its queue", func(t *testing.T) error {
			m, ok, err := channel(t).Get("acc.work", true)
			if err == nil && (!ok || string(m.Body) != "hello") {
				t.Errorf("get = %q, %v; want the message published through acc.in", m.Body, ok)
			}
			return err
		}, true},
		{"consume its queue", func(t *testing.T) error {
			_, err := channel(t).Consume("acc.work", "", true, false, false, false, nil)
			return err
		}, true},
		{"publish to another exchange", func(t *testing.T) error { return publish(t, "acc.other", "other", "no") }, false},
		{"publish to the default exchange", func(t *testing.T) error { return publish(t, "", "acc.work", "no") }, false},
		{"consume another queue", func(t *testing.T) error {
			_, err := channel(t).Consume("acc.other", "", true, false, false, false, nil)
			return err
		}, false},
		{"get from another queue", func(t *testing.T) error {
			_, _, err := channel(t).Get("acc.other", true)
			return err
		}, false},
		{"declare another queue", func(t *testing.T) error {
			_, err := channel(t).QueueDeclare("acc.other", true, false, false, false, nil)
			return err
		}, false},
		{"declare a new queue", func(t *testing.T) error {
			_, err := channel(t).QueueDeclare("acc.new", true, false, false, false, nil)
			return err
		}, false},
		{"declare its exchange", func(t *testing.T) error {
			return channel(t).ExchangeDeclare("acc.in", "direct", true, false, false, false, nil)
		}, false},
		{"bind its queue to another exchange", func(t *testing.T) error {
			return channel(t).QueueBind("acc.work", "other", "acc.other", false, nil)
		}, false},
		{"delete another queue", func(t *testing.T) error {
			_, err := channel(t).QueueDelete("acc.other", false, false, false)
			return err
		}, false},
	}
	for _, s := range steps {
		t.Run(s.name, func(t *testing.T) {
			err := s.do(t)
			var ae *amqp.Error
			switch {
			case s.allowed && err != nil:
				t.Errorf("refused: %v", err)
			case !s.allowed && err == nil:
				t.Errorf("allowed; the broker must refuse it")
			case !s.allowed && !(errors.As(err, &ae) && ae.Code == amqp.AccessRefused):
				t.Errorf("failed with %v, want ACCESS_REFUSED (403)", err)
			}
		})
	}
	if t.Failed() {
		return
	}
	// The steps changed nothing mqctl manages.
	h.assertNoChanges(accessTopology)
}
