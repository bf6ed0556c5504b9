package difftest

import (
	"context"
	"fmt"
	"github.com/mqctl/mqctl/internal/randtopo"
	"slices"
	"testing"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

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

// quorum declares a quorum queue with arguments given as key, value pairs.
func (b *caseBuilder) quorum(name string, kv ...any) *caseBuilder {
	b.queue(name, kv...)
	b.c.Vhost.Queues[name].Type = topology.QueueQuorum
	return b
}

// policy adds a queue policy with a definition given as key, value pairs.
func (b *caseBuilder) policy(name, pattern string, priority int, kv ...any) *caseBuilder {
	def := topology.Args{}
	for i := 0; i+1 < len(kv); i += 2 {
		def[kv[i].(string)] = kv[i+1]
	}
	b.c.Vhost.Policies[name] = &topology.Policy{Name: name, Pattern: pattern, ApplyTo: "queues", Priority: priority, Definition: def.Normalized()}
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
	if randtopo.HasVoid(bd.Arguments) {
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

// answers are what a case's copies are, per RabbitMQ line ("3.10",
// "4.0", "4.3") and stage ("publish", "round 1", …): Result.Found, "id
// queue" and the dead-letter headers of each copy. A stage listed with no
// copies means none.
type answers map[string]map[string][]string

// alike states that RabbitMQ line answers exactly as line like does: the
// same copies at every stage, as that line's broker was seen to answer.
func (a answers) alike(line, like string) answers {
	a[line] = a[like]
	return a
}

// TestKnownCases runs the disagreements the random runs found, as minimal
// cases, against the broker: the simulator must now agree on each. Where
// RabbitMQ versions answer differently, the case states each version's
// answer, and the broker must give the one stated for its version.
func TestKnownCases(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		c      *Case
		reject func(string) bool
		rounds int
		want   answers
	}{
		{
			// RabbitMQ 3.10 regroups x-death before each death, which
			// reverses the earlier entries: after deaths in q1, q2, q3 the
			// list is [q3, q1, q2]. 4.0 keeps them most recent first, and
			// sets x-last-death-* at every death; so does 4.3 (4.3.6).
			name: "x-death order after three rejections",
			c: newCase().
				queue("q1", deadLetterTo("q2")...).queue("q2", deadLetterTo("q3")...).
				queue("q3", deadLetterTo("q4")...).queue("q4").
				publish("", "q1").c,
			reject: rejectIn("q1", "q2", "q3"),
			rounds: 3,
			want: answers{
				"3.10": {"round 3": {`m1 q4 queue=q1 reason=rejected exchange= [q3 rejected x1 from "" keys ["q3"]][q1 rejected x1 from "" keys ["q1"]][q2 rejected x1 from "" keys ["q2"]]`}},
				"4.0":  {"round 3": {`m1 q4 queue=q1 reason=rejected exchange= last-queue=q3 last-reason=rejected last-exchange= [q3 rejected x1 from "" keys ["q3"]][q2 rejected x1 from "" keys ["q2"]][q1 rejected x1 from "" keys ["q1"]]`}},
			}.alike("4.3", "4.0"),
		},
		{
			// Expired from q1 into q2, rejected from q2 into q3, expired
			// from q3 back to q1: the rejection is part of the cycle. On
			// 3.10 the regrouped x-death [q3, q1, q2] puts q1's automatic
			// death ahead of it, and the broker drops the message at q1;
			// on 4.0 and 4.3 x-death is [q3, q2, q1], the rejection is
			// since q1's death, and the message expires from q1 into q2
			// again.
			name: "expired, rejected, expired back",
			c: newCase().
				queue("q1", deadLetterTo("q2", "x-message-ttl", 0)...).
				queue("q2", deadLetterTo("q3")...).
				queue("q3", deadLetterTo("q1", "x-message-ttl", 0)...).
				publish("", "q1").c,
			reject: rejectIn("q2"),
			rounds: 2,
			want: answers{
				"3.10": {"round 1": {}},
				"4.0": {"round 1": {`m1 q2 queue=q1 reason=expired exchange= last-queue=q1 last-reason=expired last-exchange= [q1 expired x2 from "" keys ["q1"]][q3 expired x1 from "" keys ["q3"]][q2 rejected x1 from "" keys ["q2"]]`},
					"round 2": {`m1 q2 queue=q1 reason=expired exchange= last-queue=q1 last-reason=expired last-exchange= [q1 expired x3 from "" keys ["q1"]][q3 expired x2 from "" keys ["q3"]][q2 rejected x2 from "" keys ["q2"]]`}},
			}.alike("4.3", "4.0"),
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
			// x-death's routing-keys: 3.10 lists the first key and the CC
			// keys (k, c); 4.0 and 4.3 the keys less the BCC keys, one
			// occurrence each: [k c k] -- [k] is (c, k).
			name: "a BCC key repeats the routing key",
			c: newCase().exchange("d", "direct").exchange("dlx", "direct").
				queue("own-keys", "x-dead-letter-exchange", "dlx").queue("out").
				bind("d", "own-keys", "k").bind("dlx", "out", "k").
				publish("d", "k", "CC", []any{"c"}, "BCC", []any{"k"}).c,
			reject: rejectIn("own-keys"),
			rounds: 1,
			want: answers{
				"3.10": {"round 1": {`m1 out queue=own-keys reason=rejected exchange=d [own-keys rejected x1 from "d" keys ["k" "c"]]`}},
				"4.0":  {"round 1": {`m1 out queue=own-keys reason=rejected exchange=d last-queue=own-keys last-reason=rejected last-exchange=d [own-keys rejected x1 from "d" keys ["c" "k"]]`}},
			}.alike("4.3", "4.0"),
		},
		{
			// A dead-letter routing key removes the CC header on 3.10 and
			// keeps it on 4.0 and 4.3, where a headers exchange still sees
			// it.
			name: "a dead-letter routing key and the CC header",
			c: newCase().exchange("h", "headers").
				queue("fixed", "x-dead-letter-exchange", "h", "x-dead-letter-routing-key", "r").queue("has-cc").
				bindArgs("h", "has-cc", "", "x-match", "any", "CC", nil).
				publish("", "fixed", "CC", []any{"nobody"}).c,
			reject: rejectIn("fixed"),
			rounds: 1,
			want: answers{
				"3.10": {"round 1": {}},
				"4.0":  {"round 1": {`m1 has-cc queue=fixed reason=rejected exchange= last-queue=fixed last-reason=rejected last-exchange= [fixed rejected x1 from "" keys ["fixed" "nobody"]]`}},
			}.alike("4.3", "4.0"),
		},
		{
			// An x-death header the client publishes: 3.10 counts its entry
			// up and sets no x-first-death-* (the client's one stays); 4.0
			// and 4.3 ignore it, start a history of their own and set
			// x-first-death-* over the client's.
			name: "an x-death header from the client",
			c: newCase().queue("work", deadLetterTo("dlq")...).queue("dlq").
				publish("", "work",
					"x-death", []any{map[string]any{"queue": "work", "reason": "rejected", "count": int64(2), "exchange": "", "routing-keys": []any{"work"}}},
					"x-first-death-queue", "from-the-client").c,
			reject: rejectIn("work"),
			rounds: 1,
			want: answers{
				"3.10": {"round 1": {`m1 dlq queue=from-the-client [work rejected x3 from "" keys ["work"]]`}},
				"4.0":  {"round 1": {`m1 dlq queue=work reason=rejected exchange= last-queue=work last-reason=rejected last-exchange= [work rejected x1 from "" keys ["work"]]`}},
			}.alike("4.3", "4.0"),
		},
		{
			// A headers binding on the presence of x-death (any-with-x)
			// sees every dead letter on 3.10, whose x-death is a header;
			// 4.0 and 4.3 route by the headers as published, so only m2, whose
			// publisher sent an x-death (junk: 3.10 resets it and sets no
			// x-first-death-*), reaches has-x-death.
			name: "a headers exchange and a dead letter's x-death",
			c: newCase().exchange("h", "headers").
				queue("work", "x-dead-letter-exchange", "h").queue("has-x-death").
				bindArgs("h", "has-x-death", "", "x-match", "any-with-x", "x-death", nil).
				publish("", "work").
				publish("", "work", "x-death", "junk").c,
			reject: rejectIn("work"),
			rounds: 1,
			want: answers{
				"3.10": {"round 1": {
					`m1 has-x-death queue=work reason=rejected exchange= [work rejected x1 from "" keys ["work"]]`,
					`m2 has-x-death [work rejected x1 from "" keys ["work"]]`}},
				"4.0": {"round 1": {
					`m2 has-x-death queue=work reason=rejected exchange= last-queue=work last-reason=rejected last-exchange= [work rejected x1 from "" keys ["work"]]`}},
			}.alike("4.3", "4.0"),
		},
		{
			// A policy holding a key the queue type does not support does
			// not apply to it, and a lower-priority policy does instead:
			// delivery-limit keeps "limit" off the classic queue cq (its
			// dead letters go to low), not off the quorum queue qq; 3.10
			// applies "mem" (max-in-memory-length) to the classic queue
			// cq-mem, 4.0 and 4.3 do not.
			name: "policy keys a queue type does not support",
			c: newCase().queue("cq").quorum("qq").queue("cq-mem").queue("low").queue("limit").queue("mem").
				policy("low", "^(cq|qq|cq-mem)$", 1, "dead-letter-exchange", "", "dead-letter-routing-key", "low").
				policy("limit", "^(cq|qq)$", 2, "dead-letter-exchange", "", "dead-letter-routing-key", "limit", "delivery-limit", 1000).
				policy("mem", "^cq-mem$", 2, "dead-letter-exchange", "", "dead-letter-routing-key", "mem", "max-in-memory-length", 100000).
				publish("", "cq").publish("", "qq").publish("", "cq-mem").c,
			reject: rejectIn("cq", "qq", "cq-mem"),
			rounds: 1,
			want: answers{
				"3.10": {"round 1": {
					`m1 low queue=cq reason=rejected exchange= [cq rejected x1 from "" keys ["cq"]]`,
					`m2 limit queue=qq reason=rejected exchange= [qq rejected x1 from "" keys ["qq"]]`,
					`m3 mem queue=cq-mem reason=rejected exchange= [cq-mem rejected x1 from "" keys ["cq-mem"]]`}},
				"4.0": {"round 1": {
					`m1 low queue=cq reason=rejected exchange= last-queue=cq last-reason=rejected last-exchange= [cq rejected x1 from "" keys ["cq"]]`,
					`m2 limit queue=qq reason=rejected exchange= last-queue=qq last-reason=rejected last-exchange= [qq rejected x1 from "" keys ["qq"]]`,
					`m3 low queue=cq-mem reason=rejected exchange= last-queue=cq-mem last-reason=rejected last-exchange= [cq-mem rejected x1 from "" keys ["cq-mem"]]`}},
			}.alike("4.3", "4.0"),
		},
		{
			// Inside arrays, values compare with their AMQP types: a
			// binding's [1] (a long, from JSON) is not a message's [1] sent
			// as a 32-bit int, nor [1.0] sent as a double. At the top level
			// integers of any width match; 3.10 matches the long 1 with
			// 1.0 sent as a double or a float (m8, m9), 4.0 and 4.3 do
			// not.
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
			want: answers{
				"3.10": {"publish": {"m1 arr-int", "m4 arr-str", "m5 arr-float", "m7 int", "m8 int", "m9 int"}},
				"4.0":  {"publish": {"m1 arr-int", "m4 arr-str", "m5 arr-float", "m7 int"}},
			}.alike("4.3", "4.0"),
		},
	}
	b, client, ver := connect(t)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var want map[string][]string
			if tt.want != nil {
				if want = tt.want[ver.Line()]; want == nil {
					t.Fatalf("the case states no answer for RabbitMQ %s", ver.Line())
				}
			}
			conn := applied(t, b, client, tt.c)
			res := run(t, conn, tt.c, Options{Rounds: tt.rounds, Reject: tt.reject, Version: ver})
			for stage, copies := range want {
				if got := res.Found[stage]; !slices.Equal(got, copies) {
					t.Errorf("%s on RabbitMQ %s: copies\n  %q\nwant\n  %q", stage, ver, got, copies)
				}
			}
			if tt.reject != nil && res.Stats.Rejected == 0 {
				t.Errorf("nothing was rejected: the case does not test dead-lettering")
			}
		})
	}
}

// TestDeadLetterLoopForever: a message rejected once into a pair of TTL
// queues that dead-letter to each other. On RabbitMQ 3.10 it circles
// between them for ever (the regrouped x-death keeps the rejection ahead
// of each queue's own entry, so cycle detection never fires): the
// simulator must keep delivering it hop after hop, and the broker must
// keep moving it, each hop leaving a copy in a monitor queue. On 4.0 and
// 4.3 x-death is most recent first: back at a, a's expiry is more recent
// than the rejection, and the broker drops it after two hops; the run
// must find exactly the copies the simulator predicts.
func TestDeadLetterLoopForever(t *testing.T) {
	t.Parallel()
	c := newCase().exchange("to-a", "fanout").exchange("to-b", "fanout").
		queue("a", "x-message-ttl", 0, "x-dead-letter-exchange", "to-b").
		queue("b", "x-message-ttl", 0, "x-dead-letter-exchange", "to-a").
		queue("start", "x-dead-letter-exchange", "to-a").
		queue("seen-a").queue("seen-b").
		bind("to-a", "a", "").bind("to-a", "seen-a", "").
		bind("to-b", "b", "").bind("to-b", "seen-b", "").
		publish("", "start").c
	// The answer per version: how many hops the message is delivered to a
	// or b before cycle detection drops it (-1: for ever), and the copies
	// the loop then leaves in seen-a and seen-b: one for each hop, and a
	// last one in seen-a, which is no cycle.
	type answer struct {
		hops   int
		copies []string
	}
	answers := map[string]answer{
		"3.10": {hops: -1},
		"4.0": {hops: 2, copies: []string{
			`m1 seen-a queue=start reason=rejected exchange= last-queue=b last-reason=expired last-exchange=to-b [b expired x1 from "to-b" keys ["start"]][a expired x1 from "to-a" keys ["start"]][start rejected x1 from "" keys ["start"]]`,
			`m1 seen-a queue=start reason=rejected exchange= last-queue=start last-reason=rejected last-exchange= [start rejected x1 from "" keys ["start"]]`,
			`m1 seen-b queue=start reason=rejected exchange= last-queue=a last-reason=expired last-exchange=to-a [a expired x1 from "to-a" keys ["start"]][start rejected x1 from "" keys ["start"]]`,
		}},
	}
	// 4.3.6 drops it after the same two hops and leaves the same copies.
	answers["4.3"] = answers["4.0"]

	b, client, ver := connect(t)
	ctx := context.Background()
	ans, ok := answers[ver.Line()]
	want := ans.hops
	if !ok {
		t.Fatalf("the test states no answer for RabbitMQ %s", ver.Line())
	}

	sim := route.NewWith(c.Vhost, route.Options{Version: ver})
	dl := sim.DeadLetter("start", route.Rejected, route.Message{Exchange: "", RoutingKey: "start"})
	queue := "a"
	got := -1
	for hop := range 100 {
		if !contains(dl.Result.Queues(), queue) {
			if !contains(dl.Cycles, queue) {
				t.Fatalf("hop %d: the simulator neither delivers to %s nor names it a cycle (cycles %q, delivered to %q)", hop, queue, dl.Cycles, dl.Result.Queues())
			}
			got = hop
			break
		}
		next := map[string]string{"a": "b", "b": "a"}[queue]
		dl = sim.DeadLetter(queue, route.Expired, dl.Result.Message)
		queue = next
	}
	if got != want {
		t.Fatalf("the simulator for RabbitMQ %s delivers %d hops (-1: for ever), the stated answer is %d", ver, got, want)
	}

	conn := applied(t, b, client, c)
	if want >= 0 {
		// The loop ends: every copy it leaves (in seen-a and seen-b) must
		// be the one the simulator predicts, headers included.
		res := run(t, conn, c, Options{Rounds: 1, Reject: rejectIn("start"), Version: ver})
		if got := res.Found["round 1"]; !slices.Equal(got, ans.copies) {
			t.Errorf("the broker left in seen-a and seen-b\n  %q\nwant\n  %q", got, ans.copies)
		}
		return
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
