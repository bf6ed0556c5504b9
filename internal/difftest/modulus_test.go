package difftest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/mqctl/mqctl/internal/testbroker"
	"github.com/mqctl/mqctl/pkg/broker"
	"github.com/mqctl/mqctl/pkg/route"
	"github.com/mqctl/mqctl/pkg/topology"
)

// modulusTopology is an x-modulus-hash exchange "shards" with nine
// entries: seven queues, q1 bound twice (two bindings, two entries), the
// others by keys the exchange ignores, and an exchange-to-exchange
// binding to the fanout zz-fwd, which delivers to its own queue fwd-q.
// Sorted as RabbitMQ 4.3 sorts #resource{} records (kind exchange before
// queue, then the name byte by byte) the entries are
//
//	zz-fwd(exchange) Zed alpha q-9 q1 q1 q10 q2 ünï
//
// (an upper-case letter before every lower-case one, '-' before digits,
// q10 after q1 and before q2, a non-ASCII name last).
func modulusTopology() *topology.Vhost {
	v := topology.NewVhost("")
	for name, typ := range map[string]string{"shards": "x-modulus-hash", "zz-fwd": "fanout"} {
		v.Exchanges[name] = &topology.Exchange{Name: name, Type: typ, Durable: true}
	}
	for _, q := range []string{"Zed", "alpha", "q-9", "q1", "q10", "q2", "ünï", "fwd-q"} {
		v.Queues[q] = &topology.Queue{Name: q, Type: topology.QueueClassic, Durable: true, Arguments: topology.Args{}}
	}
	bind := func(src, dst, dstType, key string) {
		v.Bindings = append(v.Bindings, &topology.Binding{Source: src, Destination: dst, DestinationType: dstType, RoutingKey: key})
	}
	bind("shards", "q1", topology.DestQueue, "k1")
	bind("shards", "q1", topology.DestQueue, "k2")
	bind("shards", "q2", topology.DestQueue, "")
	bind("shards", "q10", topology.DestQueue, "#")
	bind("shards", "alpha", topology.DestQueue, "*.created")
	bind("shards", "Zed", topology.DestQueue, "ignored")
	bind("shards", "q-9", topology.DestQueue, "q-9")
	bind("shards", "ünï", topology.DestQueue, "x")
	bind("shards", "zz-fwd", topology.DestExchange, "anything")
	bind("zz-fwd", "fwd-q", topology.DestQueue, "")
	return v
}

// modulusAmong is the simulator's Among for shards, name(exchange)×bindings.
const modulusAmong = "zz-fwd(exchange) Zed alpha q-9 q1×2 q10 q2 ünï"

// modulusMessages are n messages to shards with varied routing keys, a
// third with a CC header (strings, at times the routing key again or a
// number, which the broker leaves out of the keys), a sixth with BCC.
// The hash covers the routing key, the CC keys and the BCC keys, in that
// order (mc_amqpl:message/4 at v4.3.5: [RoutingKey | header_routes], over
// ?ROUTING_HEADERS = [CC, BCC]).
func modulusMessages(n int) []route.Message {
	r := rand.New(rand.NewPCG(43, 5))
	alphabet := []rune("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789.-_#*éü€")
	word := func(max int) string {
		rs := make([]rune, r.IntN(max+1))
		for i := range rs {
			rs[i] = alphabet[r.IntN(len(alphabet))]
		}
		return string(rs)
	}
	key := func(i int) string {
		switch i % 8 {
		case 0:
			return ""
		case 1:
			return string(rune('a' + r.IntN(26)))
		case 2:
			return fmt.Sprintf("order.%d.created", r.IntN(100000))
		case 3:
			return strings.Repeat("x", 11+r.IntN(3)) // around one 12-byte block
		case 4:
			return word(40)
		case 5:
			return fmt.Sprintf("k%d", i)
		case 6:
			return word(8)
		}
		return strings.Repeat(word(6), 1+r.IntN(5))
	}
	msgs := make([]route.Message, n)
	for i := range msgs {
		m := route.Message{Exchange: "shards", RoutingKey: key(i)}
		h := map[string]any{}
		if i%3 == 1 {
			var cc []any
			for range 1 + r.IntN(3) {
				cc = append(cc, key(r.IntN(8)))
			}
			switch i % 9 {
			case 1:
				cc = append(cc, m.RoutingKey)
			case 4:
				cc = append(cc, int32(7)) // not a routing key
			}
			h["CC"] = cc
		}
		if i%6 == 2 || i%12 == 1 {
			h["BCC"] = []any{key(r.IntN(8))}
		}
		if len(h) > 0 {
			m.Headers = h
		}
		msgs[i] = m
	}
	return msgs
}

func amongText(ts []route.Target) string {
	var parts []string
	for _, t := range ts {
		s := t.Name
		if t.Type == topology.DestExchange {
			s += "(exchange)"
		}
		if t.Bindings > 1 {
			s += fmt.Sprintf("×%d", t.Bindings)
		}
		parts = append(parts, s)
	}
	return strings.Join(parts, " ")
}

// TestModulusHashAgainstBroker: on RabbitMQ 4.3 x-modulus-hash is a core
// exchange type, and every one of 240 messages reaches exactly one
// destination of the exchange, the one the simulator picks; the broker and
// the simulator agree on every message (4.3.6). Before 4.3 the type
// belongs to the rabbitmq_sharding plugin, which the project's brokers
// (4.0.5, 3.10.8) do not enable: they do not list the type and refuse to
// declare the exchange (management API 400 "unknown exchange type
// 'x-modulus-hash'"; AMQP exchange.declare with the same text, 406
// PRECONDITION_FAILED closing the channel on 4.0.5, 503 COMMAND_INVALID
// closing the connection on 3.10.8), and the simulator for those versions
// names the destinations the message can reach (one of them) without
// picking one.
func TestModulusHashAgainstBroker(t *testing.T) {
	t.Parallel()
	b, client, ver := connect(t)
	ctx := context.Background()
	// The answer per version: whether the broker has the exchange type
	// (and the simulator picks), else what it answers to a declaration.
	type answer struct {
		declares   bool
		httpStatus int
		amqpCode   int
		reason     string
	}
	const unknown = "unknown exchange type 'x-modulus-hash'"
	answers := map[string]answer{
		"4.3": {declares: true},
		// 4.0.5 closes the channel, 3.10.8 the connection.
		"4.0":  {httpStatus: 400, amqpCode: amqp.PreconditionFailed, reason: unknown},
		"3.10": {httpStatus: 400, amqpCode: amqp.CommandInvalid, reason: unknown},
	}
	ans, ok := answers[ver.Line()]
	if !ok {
		t.Fatalf("the test states no answer for RabbitMQ %s", ver.Line())
	}

	v := modulusTopology()
	msgs := modulusMessages(240)
	sim := route.NewWith(v, route.Options{Version: ver})
	if got := sim.Version().ModulusHashPicksStably(); got != ans.declares {
		t.Fatalf("rmqversion %s: ModulusHashPicksStably = %v, the stated answer is %v", ver, got, ans.declares)
	}

	var overview struct {
		ExchangeTypes []struct {
			Name string `json:"name"`
		} `json:"exchange_types"`
	}
	if err := json.Unmarshal(b.GetAPI(t, "overview"), &overview); err != nil {
		t.Fatal(err)
	}
	hasType := slices.ContainsFunc(overview.ExchangeTypes, func(x struct {
		Name string `json:"name"`
	}) bool {
		return x.Name == "x-modulus-hash"
	})
	if hasType != ans.declares {
		t.Errorf("RabbitMQ %s lists exchange type x-modulus-hash: %v, the stated answer is %v", ver, hasType, ans.declares)
	}

	vh := b.Vhost(t)
	if !ans.declares {
		// The simulator says "one of", for every message.
		for i, m := range msgs {
			r := sim.Publish(m)
			if len(r.Deliveries) != 0 || len(r.OneOf) != 1 || r.OneOf[0].Picked != nil ||
				amongText(r.OneOf[0].Among) != modulusAmong || !slices.Equal(r.Unsimulated, []string{"shards"}) {
				t.Errorf("m%d on RabbitMQ %s: the simulator says deliveries %q, one_of %+v, unsimulated %q; want no delivery, one unpicked choice among %s, shards unsimulated",
					i+1, ver, r.Queues(), r.OneOf, r.Unsimulated, modulusAmong)
			}
		}
		// The broker refuses the exchange, through the management API…
		err := client.DeclareExchange(ctx, vh, v.Exchanges["shards"])
		var apiErr *broker.APIError
		if !errors.As(err, &apiErr) || apiErr.Status != ans.httpStatus || !strings.Contains(apiErr.Reason, ans.reason) {
			t.Errorf("RabbitMQ %s: declaring x-modulus-hash over HTTP: %v; want %d %q", ver, err, ans.httpStatus, ans.reason)
		}
		// …and over AMQP.
		ch := b.Channel(t, vh)
		err = ch.ExchangeDeclare("shards", "x-modulus-hash", true, false, false, false, nil)
		var amqpErr *amqp.Error
		if !errors.As(err, &amqpErr) || amqpErr.Code != ans.amqpCode || !strings.Contains(amqpErr.Reason, ans.reason) {
			t.Errorf("RabbitMQ %s: declaring x-modulus-hash over AMQP: %v; want %d %q", ver, err, ans.amqpCode, ans.reason)
		}
		if _, err := client.GetExchange(ctx, vh, "shards"); !errors.Is(err, broker.ErrNotFound) {
			t.Errorf("RabbitMQ %s: after the refusals, reading exchange shards: %v; want not found", ver, err)
		}
		t.Logf("RabbitMQ %s: x-modulus-hash refused (HTTP %d, AMQP %d %q); the simulator names one of %d destinations (%s) for all %d messages, picking none",
			ver, ans.httpStatus, ans.amqpCode, ans.reason, len(sim.Publish(msgs[0]).OneOf[0].Among), modulusAmong, len(msgs))
		return
	}

	testbroker.Declare(t, client, vh, v)
	ch := b.Channel(t, vh)
	confirms := ch.NotifyPublish(make(chan amqp.Confirmation, len(msgs)))
	for i, m := range msgs {
		var headers amqp.Table
		if m.Headers != nil {
			headers = amqp.Table(m.Headers)
		}
		if err := ch.PublishWithContext(ctx, m.Exchange, m.RoutingKey, true, false,
			amqp.Publishing{MessageId: fmt.Sprintf("m%d", i+1), Headers: headers}); err != nil {
			t.Fatal(err)
		}
	}
	for range msgs {
		if c := <-confirms; !c.Ack {
			t.Fatalf("the broker nacked publish %d", c.DeliveryTag)
		}
	}
	found := map[string][]string{} // message id → the queues it was found in
	for _, q := range v.QueueNames() {
		for {
			d, ok, err := ch.Get(q, true)
			if err != nil {
				t.Fatal(err)
			}
			if !ok {
				break
			}
			found[d.MessageId] = append(found[d.MessageId], q)
		}
	}

	// What the picks depend on: the simulator without the message's BCC
	// keys, without its CC keys, or with q1 bound once picks otherwise for
	// some messages, so that the broker agreeing shows it hashes BCC and CC
	// keys too and gives each binding an entry.
	once := modulusTopology()
	once.Bindings = slices.DeleteFunc(once.Bindings, func(b *topology.Binding) bool { return b.RoutingKey == "k2" })
	simOnce := route.NewWith(once, route.Options{Version: ver})
	without := func(m route.Message, h string) route.Message {
		hs := map[string]any{}
		for k, v := range m.Headers {
			if k != h {
				hs[k] = v
			}
		}
		m.Headers = hs
		return m
	}
	var byBCC, byCC, byWeight int

	perDest := map[string]int{}
	disagreements := 0
	for i, m := range msgs {
		id := fmt.Sprintf("m%d", i+1)
		r := sim.Publish(m)
		if len(r.OneOf) != 1 || r.OneOf[0].Picked == nil || amongText(r.OneOf[0].Among) != modulusAmong || len(r.Unsimulated) != 0 {
			t.Errorf("%s: the simulator's choice %+v, unsimulated %q; want one picked among %s", id, r.OneOf, r.Unsimulated, modulusAmong)
			continue
		}
		want := r.Queues()
		got := found[id]
		slices.Sort(got)
		if len(got) != 1 {
			t.Errorf("%s (key %q, headers %v): the broker delivered it to %q, not to exactly one destination", id, m.RoutingKey, m.Headers, got)
		}
		if !slices.Equal(got, want) {
			disagreements++
			t.Errorf("%s (key %q, headers %v): broker %q, simulator %q (picked %s)", id, m.RoutingKey, m.Headers, got, want, r.OneOf[0].Picked.Name)
		}
		perDest[r.OneOf[0].Picked.Name]++
		if _, ok := m.Headers["BCC"]; ok && !slices.Equal(sim.Publish(without(m, "BCC")).Queues(), want) {
			byBCC++
		}
		if _, ok := m.Headers["CC"]; ok && !slices.Equal(sim.Publish(without(m, "CC")).Queues(), want) {
			byCC++
		}
		if !slices.Equal(simOnce.Publish(m).Queues(), want) {
			byWeight++
		}
	}
	if byBCC == 0 || byCC == 0 || byWeight == 0 {
		t.Errorf("picks that depend on BCC keys %d, on CC keys %d, on q1's second binding %d: choose messages for which each is some", byBCC, byCC, byWeight)
	}
	for id := range found {
		var n int
		if _, err := fmt.Sscanf(id, "m%d", &n); err != nil || n < 1 || n > len(msgs) {
			t.Errorf("a message the test did not publish: %q", id)
		}
	}
	// Every destination is picked for some message, so that every entry
	// of the sorted list is tested.
	for _, d := range []string{"zz-fwd", "Zed", "alpha", "q-9", "q1", "q10", "q2", "ünï"} {
		if perDest[d] == 0 {
			t.Errorf("no message picks %s: choose other keys", d)
		}
	}
	t.Logf("RabbitMQ %s: %d messages over %d destinations (%d entries: %s), %d disagreements; picks per destination %v; picks that BCC keys decide %d, CC keys %d, q1's second binding %d",
		ver, len(msgs), len(perDest), 9, modulusAmong, disagreements, perDest, byBCC, byCC, byWeight)
}
