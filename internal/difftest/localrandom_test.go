package difftest

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/mqctl/mqctl/internal/testbroker"
	"github.com/mqctl/mqctl/pkg/broker"
	"github.com/mqctl/mqctl/pkg/route"
	"github.com/mqctl/mqctl/pkg/topology"
)

// TestLocalRandomAgainstBroker: from RabbitMQ 4.0 x-local-random is a core
// exchange type that delivers each message to one classic queue bound to
// it without a key, at random among those on the publisher's node (on one
// node: all of them). Of 90 messages with varied routing keys to "rpc"
// (three queues), each lands in exactly one, every queue gets some, and
// the simulator names the three as "one of", picking none; "solo", with
// one queue, delivers every message to it, as the simulator says. 3.10 has
// no such type: it refuses the exchange, and the simulator routes nothing
// through it (4.3.6 and 4.0.5 deliver; 3.10.8 refuses).
func TestLocalRandomAgainstBroker(t *testing.T) {
	t.Parallel()
	b, client, ver := connect(t)
	ctx := context.Background()
	declares, ok := map[string]bool{"4.3": true, "4.0": true, "3.10": false}[ver.Line()]
	if !ok {
		t.Fatalf("the test states no answer for RabbitMQ %s", ver.Line())
	}
	v := topology.NewVhost("")
	for _, x := range []string{"rpc", "solo"} {
		v.Exchanges[x] = &topology.Exchange{Name: x, Type: "x-local-random", Durable: true}
	}
	for _, q := range []string{"r1", "r2", "r3", "only"} {
		v.Queues[q] = &topology.Queue{Name: q, Type: topology.QueueClassic, Durable: true, Arguments: topology.Args{}}
	}
	for _, q := range []string{"r1", "r2", "r3"} {
		v.Bindings = append(v.Bindings, &topology.Binding{Source: "rpc", Destination: q, DestinationType: topology.DestQueue})
	}
	v.Bindings = append(v.Bindings, &topology.Binding{Source: "solo", Destination: "only", DestinationType: topology.DestQueue})
	sim := route.NewWith(v, route.Options{Version: ver})
	if got := ver.LocalRandomExchange(); got != declares {
		t.Fatalf("rmqversion %s: LocalRandomExchange = %v, the stated answer is %v", ver, got, declares)
	}

	var msgs []route.Message
	for i := range 90 {
		msgs = append(msgs, route.Message{Exchange: "rpc", RoutingKey: []string{"", "a", "order.created", fmt.Sprintf("k%d", i)}[i%4]})
	}
	for i := range 20 {
		msgs = append(msgs, route.Message{Exchange: "solo", RoutingKey: fmt.Sprintf("s%d", i)})
	}
	vh := b.Vhost(t)
	if !declares {
		err := client.DeclareExchange(ctx, vh, v.Exchanges["rpc"])
		var apiErr *broker.APIError
		if !errors.As(err, &apiErr) || apiErr.Status != 400 || !strings.Contains(apiErr.Reason, "unknown exchange type 'x-local-random'") {
			t.Errorf("RabbitMQ %s: declaring x-local-random: %v; want 400 unknown exchange type", ver, err)
		}
		r := sim.Publish(msgs[0])
		if len(r.Deliveries) != 0 || len(r.OneOf) != 0 || !slices.Equal(r.Unsimulated, []string{"rpc"}) || len(r.Problems) == 0 || !strings.Contains(r.Problems[0], "has no exchange type x-local-random") {
			t.Errorf("RabbitMQ %s: the simulator says deliveries %q, one_of %+v, unsimulated %q, problems %q; want rpc unsimulated, naming the missing type", ver, r.Queues(), r.OneOf, r.Unsimulated, r.Problems)
		}
		return
	}

	testbroker.Declare(t, client, vh, v)
	ch := b.Channel(t, vh)
	if err := ch.Confirm(false); err != nil {
		t.Fatal(err)
	}
	returns := ch.NotifyReturn(make(chan amqp.Return, len(msgs)))
	confirms := ch.NotifyPublish(make(chan amqp.Confirmation, len(msgs)))
	for i, m := range msgs {
		if err := ch.PublishWithContext(ctx, m.Exchange, m.RoutingKey, true, false, amqp.Publishing{MessageId: fmt.Sprintf("m%d", i+1)}); err != nil {
			t.Fatal(err)
		}
	}
	for range msgs {
		if c := <-confirms; !c.Ack {
			t.Fatalf("the broker nacked publish %d", c.DeliveryTag)
		}
	}
	if len(returns) > 0 {
		t.Errorf("RabbitMQ %s returned %d messages as unroutable", ver, len(returns))
	}
	found := map[string][]string{}
	perQueue := map[string]int{}
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
			perQueue[q]++
		}
	}
	for i, m := range msgs {
		id := fmt.Sprintf("m%d", i+1)
		r := sim.Publish(m)
		if len(r.OneOf) != 1 || !r.OneOf[0].Random {
			t.Errorf("%s: the simulator's choice %+v; want one random choice", id, r.OneOf)
			continue
		}
		got := found[id]
		if len(got) != 1 {
			t.Errorf("%s to %s: the broker delivered it to %q, want exactly one queue", id, m.Exchange, got)
			continue
		}
		var among []string
		for _, tg := range r.OneOf[0].Among {
			among = append(among, tg.Name)
		}
		if !slices.Contains(among, got[0]) {
			t.Errorf("%s: the broker delivered it to %s, not one of the simulator's %q", id, got[0], among)
		}
		switch m.Exchange {
		case "rpc":
			if r.OneOf[0].Picked != nil || len(r.Deliveries) != 0 || !slices.Equal(among, []string{"r1", "r2", "r3"}) {
				t.Errorf("%s: the simulator picks %+v, delivers %q among %q; want none picked among r1, r2, r3", id, r.OneOf[0].Picked, r.Queues(), among)
			}
		case "solo":
			if !slices.Equal(r.Queues(), []string{"only"}) {
				t.Errorf("%s: the simulator delivers %q, want only", id, r.Queues())
			}
		}
	}
	for _, q := range []string{"r1", "r2", "r3"} {
		if perQueue[q] == 0 {
			t.Errorf("RabbitMQ %s: queue %s got none of 90 messages: not a random pick among the three (%v)", ver, q, perQueue)
		}
	}
	t.Logf("RabbitMQ %s: x-local-random spread 90 messages as %v; solo delivered %d of 20 to its one queue", ver, perQueue, perQueue["only"])
}
