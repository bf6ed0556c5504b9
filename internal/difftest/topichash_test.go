package difftest

import (
	"slices"
	"testing"

	"github.com/mqctl/mqctl/pkg/topology"
)

// TestTopicHashLimitAgainstBroker: RabbitMQ 4.3.5+ refuses a topic
// binding key with more than two '#' words, so a message the key would
// match does not reach its queue there; 4.0 and 3.10 bind it and route
// through it. The binding is declared over AMQP (the broker closes the
// channel when it refuses it), and the simulator of the broker's version
// must route each message where the broker does (4.3.6 refuses; 4.0.5
// and 3.10.8 route m1 to three).
func TestTopicHashLimitAgainstBroker(t *testing.T) {
	t.Parallel()
	type answer struct {
		refused bool
		copies  []string
	}
	answers := map[string]answer{
		"4.3":  {refused: true, copies: []string{"m1 two"}},
		"4.0":  {copies: []string{"m1 three", "m1 two"}},
		"3.10": {copies: []string{"m1 three", "m1 two"}},
	}
	b, client, ver := connect(t)
	want, ok := answers[ver.Line()]
	if !ok {
		t.Fatalf("the test states no answer for RabbitMQ %s", ver.Line())
	}
	c := newCase().exchange("t", "topic").queue("three").queue("two").
		bind("t", "two", "#.a.#").
		publish("t", "a.b").publish("t", "b").c
	conn := applied(t, b, client, c)
	ch, err := conn.Channel()
	if err != nil {
		t.Fatal(err)
	}
	err = ch.QueueBind("three", "#.a.#.b.#", "t", false, nil)
	if refused := err != nil; refused != want.refused {
		t.Fatalf("RabbitMQ %s: binding key \"#.a.#.b.#\" refused=%v (%v), the stated answer is %v", ver, refused, err, want.refused)
	}
	_ = ch.Close()
	c.Vhost.Bindings = append(c.Vhost.Bindings, &topology.Binding{Source: "t", Destination: "three", DestinationType: topology.DestQueue, RoutingKey: "#.a.#.b.#"})
	res := run(t, conn, c, Options{Rounds: 1, Version: ver})
	if got := res.Found["publish"]; !slices.Equal(got, want.copies) {
		t.Errorf("RabbitMQ %s routed\n  %q\nwant\n  %q", ver, got, want.copies)
	}
}
