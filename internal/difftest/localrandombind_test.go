package difftest

import (
	"slices"
	"testing"

	"github.com/mqctl/mqctl/pkg/topology"
)

// TestLocalRandomRefusedBindingsAgainstBroker: RabbitMQ binds only
// classic queues to an x-local-random exchange, so a quorum queue and an
// exchange bound to one get nothing from it (nor does a stream, which the
// run cannot read: pkg/route TestLocalRandomRefusedBindings), and the one
// classic queue gets every message; the simulator of the broker's version
// must route each message there (4.3.6 and 4.0.5 refuse both bindings
// and deliver m1-m4 to c1; 3.10.8 has no such exchange type:
// TestLocalRandomAgainstBroker).
func TestLocalRandomRefusedBindingsAgainstBroker(t *testing.T) {
	t.Parallel()
	answers := map[string][]string{
		"4.3": {"m1 c1", "m2 c1", "m3 c1", "m4 c1"},
		"4.0": {"m1 c1", "m2 c1", "m3 c1", "m4 c1"},
	}
	b, client, ver := connect(t)
	if ver.Line() == "3.10" {
		t.Skip("RabbitMQ 3.10 has no x-local-random exchange type (TestLocalRandomAgainstBroker)")
	}
	want, ok := answers[ver.Line()]
	if !ok {
		t.Fatalf("the test states no answer for RabbitMQ %s", ver.Line())
	}
	c := newCase().exchange("lr", "x-local-random").exchange("fan", "fanout").
		queue("c1").quorum("qq").queue("fq").
		bind("lr", "c1", "").bind("fan", "fq", "").
		publish("lr", "").publish("lr", "a").publish("lr", "b").publish("lr", "c").c
	conn := applied(t, b, client, c)
	refused := []*topology.Binding{
		{Source: "lr", Destination: "qq", DestinationType: topology.DestQueue},
		{Source: "lr", Destination: "fan", DestinationType: topology.DestExchange},
	}
	for _, bd := range refused {
		ch, err := conn.Channel()
		if err != nil {
			t.Fatal(err)
		}
		if bd.DestinationType == topology.DestExchange {
			err = ch.ExchangeBind(bd.Destination, "", bd.Source, false, nil)
		} else {
			err = ch.QueueBind(bd.Destination, "", bd.Source, false, nil)
		}
		if err == nil {
			t.Errorf("RabbitMQ %s binds %s %q to x-local-random exchange lr; the stated answer is a refusal", ver, bd.DestinationType, bd.Destination)
		}
		_ = ch.Close()
		c.Vhost.Bindings = append(c.Vhost.Bindings, bd)
	}
	res := run(t, conn, c, Options{Rounds: 1, Version: ver})
	if got := res.Found["publish"]; !slices.Equal(got, want) {
		t.Errorf("RabbitMQ %s routed\n  %q\nwant\n  %q", ver, got, want)
	}
}
