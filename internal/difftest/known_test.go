package difftest

import (
	"context"
	"fmt"
	"testing"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/mqctl/mqctl/internal/testbroker"
	"github.com/mqctl/mqctl/pkg/broker"
	"github.com/mqctl/mqctl/pkg/route"
	"github.com/mqctl/mqctl/pkg/topology"
)

// caseBuilder builds a hand-made case.
type caseBuilder struct{ c *Case }

func newCase() *caseBuilder {
	return &caseBuilder{c: &Case{Seed: 1, Vhost: topology.NewVhost("")}}
}

func (b *caseBuilder) exchange(name, typ string) *caseBuilder {
	b.c.Vhost.Exchanges[name] = &topology.Exchange{Name: name, Type: typ, Durable: true}
	return b
}

// queue declares a classic queue with arguments given as key, value pairs.
func (b *caseBuilder) queue(name string, kv ...any) *caseBuilder {
	args := topology.Args{}
	for i := 0; i+1 < len(kv); i += 2 {
		args[kv[i].(string)] = kv[i+1]
	}
	b.c.Vhost.Queues[name] = &topology.Queue{Name: name, Type: topology.QueueClassic, Durable: true, Arguments: args.Normalized()}
	return b
}

func (b *caseBuilder) bind(src, queue, key string) *caseBuilder {
	b.c.Vhost.Bindings = append(b.c.Vhost.Bindings, &topology.Binding{Source: src, Destination: queue, DestinationType: topology.DestQueue, RoutingKey: key})
	return b
}

// bindArgs binds with arguments given as key, value pairs; a nil value
// (a void criterion) makes it a binding only AMQP can declare.
func (b *caseBuilder) bindArgs(src, queue, key string, kv ...any) *caseBuilder {
	args := topology.Args{}
	for i := 0; i+1 < len(kv); i += 2 {
		args[kv[i].(string)] = kv[i+1]
	}
	bd := &topology.Binding{Source: src, Destination: queue, DestinationType: topology.DestQueue, RoutingKey: key, Arguments: args.Normalized()}
	b.c.Vhost.Bindings = append(b.c.Vhost.Bindings, bd)
	if hasVoid(bd.Arguments) {
		b.c.AMQPOnly = append(b.c.AMQPOnly, bd)
	}
	return b
}

// publish adds a message with headers given as key, value pairs.
func (b *caseBuilder) publish(exchange, key string, kv ...any) *caseBuilder {
	m := Message{ID: fmt.Sprintf("m%d", len(b.c.Messages)+1), Message: route.Message{Exchange: exchange, RoutingKey: key}}
	if len(kv) > 0 {
		m.Headers = map[string]any{}
		for i := 0; i+1 < len(kv); i += 2 {
			m.Headers[kv[i].(string)] = kv[i+1]
		}
	}
	b.c.Messages = append(b.c.Messages, m)
	return b
}

// deadLetterTo returns the arguments of a queue whose dead letters go to
// queue next through the default exchange.
func deadLetterTo(next string, kv ...any) []any {
	return append([]any{"x-dead-letter-exchange", "", "x-dead-letter-routing-key", next}, kv...)
}

func rejectIn(queues ...string) func(string) bool {
	return func(q string) bool {
		for _, x := range queues {
			if x == q {
				return true
			}
		}
		return false
	}
}

// TestKnownCases runs the disagreements the random runs found, as minimal
// cases, against the broker: the simulator must now agree on each.
func TestKnownCases(t *testing.T) {
	tests := []struct {
		name   string
		c      *Case
		reject func(string) bool
		rounds int
	}{
		{
			// RabbitMQ 3.10 regroups x-death before each death, which
			// reverses the earlier entries: after deaths in q1, q2, q3 the
			// list is [q3, q1, q2].
			name: "x-death order after three rejections",
			c: newCase().
				queue("q1", deadLetterTo("q2")...).queue("q2", deadLetterTo("q3")...).
				queue("q3", deadLetterTo("q4")...).queue("q4").
				publish("", "q1").c,
			reject: rejectIn("q1", "q2", "q3"),
			rounds: 3,
		},
		{
			// Expired from q1 into q2, rejected from q2 into q3, expired
			// from q3 back to q1: the rejection is part of the cycle, yet
			// the regrouped x-death [q3, q1, q2] puts q1's automatic death
			// ahead of it, and the broker drops the message at q1.
			name: "expired, rejected, expired back: dropped",
			c: newCase().
				queue("q1", deadLetterTo("q2", "x-message-ttl", 0)...).
				queue("q2", deadLetterTo("q3")...).
				queue("q3", deadLetterTo("q1", "x-message-ttl", 0)...).
				publish("", "q1").c,
			reject: rejectIn("q2"),
			rounds: 2,
		},
		{
			// The same loop through a topic exchange with the message's own
			// key, and a second death from the same queue: the count goes
			// up and the entry moves to the front.
			name: "rejected twice from the same queue",
			c: newCase().exchange("dlx", "topic").
				queue("work", "x-dead-letter-exchange", "dlx").
				queue("again", deadLetterTo("work")...).
				bind("dlx", "again", "#").
				publish("", "work").c,
			reject: rejectIn("work", "again"),
			rounds: 4,
		},
		{
			// CC and BCC keys route the publish and every dead letter
			// without a dead-letter routing key; BCC is removed before
			// routing (the headers exchange does not see it), CC is not.
			name: "CC and BCC",
			c: newCase().exchange("d", "direct").exchange("h", "headers").exchange("dlx", "direct").
				queue("own-keys", "x-dead-letter-exchange", "dlx").
				queue("fixed-key", "x-dead-letter-exchange", "dlx", "x-dead-letter-routing-key", "k").
				queue("by-cc").queue("by-bcc").queue("by-fixed").queue("seen-cc").queue("seen-bcc").
				bind("d", "own-keys", "key").bind("d", "fixed-key", "fixed").
				bind("dlx", "by-cc", "cc").bind("dlx", "by-bcc", "bcc").bind("dlx", "by-fixed", "k").
				bindArgs("h", "seen-cc", "", "x-match", "any", "CC", nil).
				bindArgs("h", "seen-bcc", "", "x-match", "any", "BCC", nil).
				publish("d", "key", "CC", []any{"cc", "fixed"}, "BCC", []any{"bcc"}).
				publish("h", "", "CC", []any{"x"}, "BCC", []any{"y"}).
				publish("", "by-cc", "BCC", []any{"by-bcc", int64(1)}).
				publish("d", "key", "CC", "not an array").c,
			reject: rejectIn("own-keys", "fixed-key"),
			rounds: 1,
		},
		{
			// Inside arrays, values compare with their AMQP types: a
			// binding's [1] (a long, from JSON) is not a message's [1] sent
			// as a 32-bit int, nor [1.0] sent as a double.
			name: "headers arrays compare typed elements",
			c: newCase().exchange("h", "headers").
				queue("arr-int").queue("arr-str").queue("arr-float").queue("int").
				bindArgs("h", "arr-int", "", "x-match", "any", "a", []any{int64(1)}).
				bindArgs("h", "arr-str", "", "x-match", "any", "a", []any{"v1"}).
				bindArgs("h", "arr-float", "", "x-match", "any", "a", []any{1.5}).
				bindArgs("h", "int", "", "x-match", "any", "n", int64(1)).
				publish("h", "", "a", []any{int64(1)}).
				publish("h", "", "a", []any{int32(1)}).
				publish("h", "", "a", []any{1.0}).
				publish("h", "", "a", []any{"v1"}).
				publish("h", "", "a", []any{1.5}).
				publish("h", "", "a", []any{float32(1.5)}).
				publish("h", "", "n", int32(1)).
				publish("h", "", "n", 1.0).
				publish("h", "", "n", float32(1)).c,
			rounds: 1,
		},
	}
	b := testbroker.New(t)
	ctx := context.Background()
	client, err := broker.Connect(ctx, broker.Config{Server: b.URL, Username: b.Username, Password: b.Password})
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			vh := b.Vhost(t)
			tt.c.Vhost.Name = vh
			conn, err := amqp.Dial(b.AMQPURL(vh))
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close()
			if err := Apply(ctx, client, conn, tt.c); err != nil {
				t.Fatal(err)
			}
			res, err := Run(ctx, conn, tt.c, Options{Rounds: tt.rounds, Reject: tt.reject})
			if err != nil {
				t.Fatal(err)
			}
			for _, d := range res.Disagreements {
				t.Errorf("%s — %s\n  simulator: %q\n  broker:    %q", d.Stage, d.Message, d.Simulator, d.Broker)
			}
			if tt.reject != nil && res.Stats.Rejected == 0 {
				t.Errorf("nothing was rejected: the case does not test dead-lettering")
			}
		})
	}
}

// TestDeadLetterLoopForever: a message rejected once into a pair of TTL
// queues that dead-letter to each other circles between them for ever on
// RabbitMQ 3.10 (the regrouped x-death keeps the rejection ahead of each
// queue's own entry, so cycle detection never fires). The simulator must
// keep delivering it hop after hop, and the broker must keep moving it:
// each hop leaves a copy in a monitor queue.
func TestDeadLetterLoopForever(t *testing.T) {
	c := newCase().exchange("to-a", "fanout").exchange("to-b", "fanout").
		queue("a", "x-message-ttl", 0, "x-dead-letter-exchange", "to-b").
		queue("b", "x-message-ttl", 0, "x-dead-letter-exchange", "to-a").
		queue("start", "x-dead-letter-exchange", "to-a").
		queue("seen-a").queue("seen-b").
		bind("to-a", "a", "").bind("to-a", "seen-a", "").
		bind("to-b", "b", "").bind("to-b", "seen-b", "").c

	sim := route.New(c.Vhost)
	dl := sim.DeadLetter("start", route.Rejected, route.Message{Exchange: "", RoutingKey: "start"})
	queue := "a"
	for hop := range 100 {
		if !contains(dl.Result.Queues(), queue) {
			t.Fatalf("hop %d: the simulator stops the loop at %s (cycles %q, delivered to %q); the broker keeps it going", hop, queue, dl.Cycles, dl.Result.Queues())
		}
		next := map[string]string{"a": "b", "b": "a"}[queue]
		dl = sim.DeadLetter(queue, route.Expired, dl.Result.Message)
		queue = next
	}

	b := testbroker.New(t)
	ctx := context.Background()
	client, err := broker.Connect(ctx, broker.Config{Server: b.URL, Username: b.Username, Password: b.Password})
	if err != nil {
		t.Fatal(err)
	}
	vh := b.Vhost(t)
	c.Vhost.Name = vh
	conn, err := amqp.Dial(b.AMQPURL(vh))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if err := Apply(ctx, client, conn, c); err != nil {
		t.Fatal(err)
	}
	ch, err := conn.Channel()
	if err != nil {
		t.Fatal(err)
	}
	// Break the loop before the vhost goes.
	defer func() { _, _ = ch.QueueDelete("a", false, false, false) }()
	if err := ch.PublishWithContext(ctx, "", "start", false, false, amqp.Publishing{MessageId: "m1"}); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(20 * time.Second)
	for {
		d, ok, err := ch.Get("start", false)
		if err != nil {
			t.Fatal(err)
		}
		if ok {
			if err := d.Nack(false, false); err != nil {
				t.Fatal(err)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the published message never reached queue start")
		}
		time.Sleep(5 * time.Millisecond)
	}
	// The loop runs thousands of hops a second; a dropped message stops
	// the count.
	for {
		q, err := ch.QueueDeclarePassive("seen-a", true, false, false, false, nil)
		if err != nil {
			t.Fatal(err)
		}
		if q.Messages >= 100 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the broker stopped the loop: %d copies in seen-a", q.Messages)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func contains(xs []string, x string) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}
