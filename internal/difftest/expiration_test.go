package difftest

import (
	"testing"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/mqctl/mqctl/internal/testbroker"
	"github.com/mqctl/mqctl/pkg/route"
	"github.com/mqctl/mqctl/pkg/topology"
)

// TestExpirationAgainstBroker proves on the broker what `mqctl route
// --expiration` says about a per-message expiration, which the
// differential test does not cover beyond "0":
//   - which properties the broker refuses (route.ParseExpiration) and
//     which it takes;
//   - a message expires after the smaller of its expiration and the
//     queue's TTL (route.Simulator.ExpiresAfter), and its dead letter's
//     x-death entry records original-expiration as the simulator writes it
//     (the property as sent on 3.10.8, the number read on 4.0.5 and 4.3.6).
func TestExpirationAgainstBroker(t *testing.T) {
	t.Parallel()
	b := testbroker.New(t)
	vh := b.Vhost(t)
	ver := b.Version()

	t.Run("refused", func(t *testing.T) {
		for _, exp := range []string{"-1", "abc", "1.5", "10s", "+-5", "315360000001", "99999999999999999999", "+250", "007", "315360000000"} {
			_, perr := route.ParseExpiration(exp)
			ch := b.Channel(t, vh)
			if _, err := ch.QueueDeclare("exp-sink", false, false, false, false, nil); err != nil {
				t.Fatal(err)
			}
			if err := ch.Confirm(false); err != nil {
				t.Fatal(err)
			}
			closed := ch.NotifyClose(make(chan *amqp.Error, 1))
			dc, err := ch.PublishWithDeferredConfirm("", "exp-sink", false, false, amqp.Publishing{Expiration: exp, Body: []byte("x")})
			refused := err != nil
			if err == nil {
				select {
				case cerr := <-closed:
					refused = cerr != nil && cerr.Code == amqp.PreconditionFailed
				case <-dc.Done():
					refused = !dc.Acked()
				case <-time.After(5 * time.Second):
					t.Fatalf("expiration %q: no confirm and no channel close in 5 s", exp)
				}
			}
			if refused != (perr != nil) {
				t.Errorf("RabbitMQ %s, expiration %q: broker refused=%v, mqctl says %v", ver, exp, refused, perr)
			}
			ch.Close()
		}
	})

	t.Run("expires after the smaller TTL", func(t *testing.T) {
		ch := b.Channel(t, vh)
		v := topology.NewVhost(vh)
		for _, q := range []*topology.Queue{
			{Name: "short", Type: topology.QueueClassic, Durable: true, Arguments: topology.Args{"x-message-ttl": int64(60000), "x-dead-letter-exchange": "", "x-dead-letter-routing-key": "dead"}},
			{Name: "dead", Type: topology.QueueClassic, Durable: true},
		} {
			v.Queues[q.Name] = q
			if _, err := ch.QueueDeclare(q.Name, true, false, false, false, amqp.Table(q.Arguments)); err != nil {
				t.Fatal(err)
			}
		}
		sim := route.NewWith(v, route.Options{Version: ver})
		for _, exp := range []string{"100", "+100", "0100"} {
			m := route.Message{Exchange: "", RoutingKey: "short", Expiration: exp}
			after, ok := sim.ExpiresAfter("short", m)
			if !ok || after != 100 {
				t.Fatalf("simulator: %q expires after %d ms (%v), want 100", exp, after, ok)
			}
			want := sim.DeadLetter("short", route.Expired, m)
			if err := ch.Publish("", "short", false, false, amqp.Publishing{Expiration: exp, Body: []byte(exp)}); err != nil {
				t.Fatal(err)
			}
			// 100 ms, not the queue's 60 s: it is in "dead" well within 10 s.
			d, ok := getWithin(t, ch, "dead", 10*time.Second)
			if !ok {
				t.Fatalf("RabbitMQ %s: a message with expiration %q is not dead-lettered within 10 s (the queue's TTL is 60 s)", ver, exp)
			}
			d.Ack(false)
			gotOrig := originalExpiration(d.Headers)
			wantOrig := originalExpiration(amqp.Table(want.Result.Message.Headers))
			if gotOrig != wantOrig || gotOrig == "" {
				t.Errorf("RabbitMQ %s, expiration %q: x-death original-expiration %q, the simulator writes %q", ver, exp, gotOrig, wantOrig)
			}
		}
	})
}

func originalExpiration(h amqp.Table) string {
	deaths, _ := h["x-death"].([]any)
	if len(deaths) == 0 {
		return ""
	}
	var e map[string]any
	switch x := deaths[0].(type) {
	case amqp.Table:
		e = x
	case map[string]any:
		e = x
	}
	s, _ := e["original-expiration"].(string)
	return s
}
