package lint

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/mqctl/mqctl/internal/testbroker"
)

// TestTopicPermissionsOnlyOnTopicExchanges shows what MQ802 says of topic
// permissions on an exchange that is no topic exchange, on the broker of
// the run: a user whose topic permissions on the default exchange and on
// amq.topic allow only the key "nomatch" publishes with key "q" to the
// default exchange (confirmed, routed), and is refused on amq.topic (403
// ACCESS_REFUSED closes the channel). Measured the same on 4.3.6, 4.0.5 and
// 3.10.8.
func TestTopicPermissionsOnlyOnTopicExchanges(t *testing.T) {
	b := testbroker.New(t)
	vhost := b.Vhost(t)
	vh := url.PathEscape(vhost)
	call := apiOf(t, b)
	user, password := b.User(t)
	b.Permit(t, user, vhost)
	for _, x := range []string{"", "amq.topic"} {
		if status, msg := call(http.MethodPut, "topic-permissions/"+vh+"/"+url.PathEscape(user), `{"exchange":"`+x+`","write":"^nomatch$","read":"^nomatch$"}`); status >= 300 {
			t.Fatalf("topic permission on %q: %d %s", x, status, msg)
		}
	}
	if status, msg := call(http.MethodPut, "queues/"+vh+"/q", `{"durable":true}`); status >= 300 {
		t.Fatalf("declare q: %d %s", status, msg)
	}
	conn, err := amqp.Dial(b.AMQPURLFor(user, password, vhost))
	if err != nil {
		t.Fatalf("AMQP dial as %s: %v", user, err)
	}
	defer conn.Close()
	publish := func(exchange string) error {
		ch, err := conn.Channel()
		if err != nil {
			return err
		}
		defer ch.Close()
		if err := ch.Confirm(false); err != nil {
			return err
		}
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		dc, err := ch.PublishWithDeferredConfirmWithContext(ctx, exchange, "q", false, false, amqp.Publishing{Body: []byte("x")})
		if err != nil {
			return err
		}
		closed := ch.NotifyClose(make(chan *amqp.Error, 1))
		select {
		case <-dc.Done():
			if !dc.Acked() {
				return &amqp.Error{Reason: "nacked"}
			}
			return nil
		case e := <-closed:
			return e
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	if err := publish(""); err != nil {
		t.Errorf("RabbitMQ %s: a publish to the default exchange with a key its topic permission does not allow: %v; MQ802 says topic permissions there restrict nothing", b.Version(), err)
	}
	if err := publish("amq.topic"); err == nil || !strings.Contains(err.Error(), "ACCESS_REFUSED") {
		t.Errorf("RabbitMQ %s: a publish to amq.topic with a key its topic permission does not allow: %v; want ACCESS_REFUSED", b.Version(), err)
	}
}
