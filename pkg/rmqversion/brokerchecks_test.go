package rmqversion_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/mqctl/mqctl/pkg/kind"
	"github.com/mqctl/mqctl/pkg/loader"
	"github.com/mqctl/mqctl/pkg/rmqversion"
	"github.com/mqctl/mqctl/pkg/topology"
)

// TestCheckURIVhosts: a URI without a host naming a vhost the file does
// not declare is judged by the broker's answer; a host, or a vhost of
// the file, is not asked about; an upstream's URI only from 4.3.3, where
// its vhost "" is refused without asking.
func TestCheckURIVhosts(t *testing.T) {
	top := topology.New()
	v := top.Vhost("orders")
	top.Vhost("billing")
	put := func(k kind.Kind, name string, s topology.Args) {
		v.Items.Put(&topology.Item{Kind: k, Name: name, Settings: s})
	}
	put(kind.Shovel, "in", topology.Args{"src-uri": "amqp:///legacy", "src-queue": "q", "dest-uri": "amqp:///billing", "dest-queue": "q"})
	put(kind.Shovel, "twice", topology.Args{"src-uri": []any{"amqp:///legacy", "amqp://h/gone"}, "src-queue": "q", "dest-uri": "amqp://", "dest-queue": "q"})
	put(kind.FederationUpstream, "up", topology.Args{"uri": []any{"amqp:///", "amqp:///legacy"}})
	var asked []string
	judge := func(vhost string) string {
		asked = append(asked, vhost)
		if vhost == "legacy" {
			return "no such vhost"
		}
		return ""
	}
	for _, c := range []struct {
		version string
		want    []string
	}{
		{"4.3.2", []string{`shovel "in" in vhost "orders": src-uri`, `shovel "twice" in vhost "orders": src-uri`}},
		{"4.3.3", []string{`shovel "in" in vhost "orders": src-uri`, `shovel "twice" in vhost "orders": src-uri`,
			`federation upstream "up" in vhost "orders": uri: RabbitMQ 4.3 refuses a federation upstream whose URI without a host names a vhost the user writing it cannot connect to (HTTP 400 may not connect to vhost), and uri names vhost "": no broker has vhost ""; write amqp:// in uri for the default vhost "/"`,
			`federation upstream "up" in vhost "orders": uri: RabbitMQ 4.3 refuses a federation upstream whose URI without a host names a vhost the user writing it cannot connect to (HTTP 400 may not connect to vhost), and uri names vhost "legacy": no such vhost`}},
	} {
		asked = nil
		assertRefusals(t, c.version, rmqversion.MustParse(c.version).CheckURIVhosts(top, judge), c.want)
		for _, a := range asked {
			if a != "legacy" && a != "/" { // amqp:// is the default vhost, which the file does not declare
				t.Errorf("%s: asked the broker about vhost %q", c.version, a)
			}
		}
	}
}

// TestCheckBindingEnds: a binding's end the file does not declare is
// asked of the broker (has); amq.* exchanges are every vhost's; direct
// reply-to's pseudo-queue is refused with its own fix; each missing end is
// one refusal, and is asked of the broker as the other kind too.
func TestCheckBindingEnds(t *testing.T) {
	top := topology.New()
	v := top.Vhost("orders")
	v.Exchanges["in"] = &topology.Exchange{Name: "in", Type: "direct", Durable: true}
	v.Queues["work"] = &topology.Queue{Name: "work", Durable: true}
	v.Bindings = []*topology.Binding{
		{Source: "in", Destination: "work", DestinationType: topology.DestQueue, RoutingKey: "a"},
		{Source: "amq.topic", Destination: "work", DestinationType: topology.DestQueue, RoutingKey: "b"},
		{Source: "in", Destination: "theirs", DestinationType: topology.DestQueue, RoutingKey: "c"},
		{Source: "gone", Destination: "nowhere", DestinationType: topology.DestExchange, RoutingKey: "d"},
		{Source: "in", Destination: "amq.rabbitmq.reply-to", DestinationType: topology.DestQueue, RoutingKey: "e"},
	}
	var asked []string
	has := func(vhost string, k kind.Kind, name string) (bool, bool) {
		asked = append(asked, string(k)+" "+name)
		return name == "theirs", name == "theirs"
	}
	assertRefusals(t, "", rmqversion.Default.CheckBindingEnds(top, has), []string{
		`binding from "gone" to exchange "nowhere" in vhost "orders": routing key "d": RabbitMQ refuses a binding whose source does not exist (HTTP 404 NOT_FOUND), and neither the file nor the broker has exchange "gone"; declare exchange "gone" in the file, or fix the name (mqctl lint reports it as MQ401)`,
		`binding from "gone" to exchange "nowhere" in vhost "orders": routing key "d": RabbitMQ refuses a binding whose destination does not exist (HTTP 404 NOT_FOUND), and neither the file nor the broker has exchange "nowhere"`,
		`binding from "in" to queue "amq.rabbitmq.reply-to" in vhost "orders": routing key "e": RabbitMQ refuses a binding whose destination does not exist (HTTP 404 NOT_FOUND), and neither the file nor the broker has queue "amq.rabbitmq.reply-to"; remove the binding: direct reply-to's pseudo-queue cannot be bound`,
	})
	if d := strings.Join(asked, ", "); d != "queue theirs, exchange gone, queue gone, exchange nowhere, queue nowhere" {
		t.Errorf("asked the broker about %s; want only the ends the file lacks (not amq.*, not reply-to), and each missing one as the other kind", d)
	}
}

// TestCheckDeletedEnds: a binding or topic permission naming an exchange
// or queue the file does not declare and the plan deletes is refused with
// both fixes; one the file declares, or the plan keeps, is not; a topic
// permission only where the version refuses one without its exchange.
func TestCheckDeletedEnds(t *testing.T) {
	top := topology.New()
	v := top.Vhost("orders")
	v.Exchanges["stay"] = &topology.Exchange{Name: "stay", Type: "topic", Durable: true}
	v.Queues["work"] = &topology.Queue{Name: "work", Durable: true}
	v.Bindings = []*topology.Binding{
		{Source: "stay", Destination: "work", DestinationType: topology.DestQueue, RoutingKey: "a"},
		{Source: "gone", Destination: "work", DestinationType: topology.DestQueue, RoutingKey: "b"},
		{Source: "stay", Destination: "old", DestinationType: topology.DestQueue, RoutingKey: "c"},
		{Source: "kept", Destination: "work", DestinationType: topology.DestQueue, RoutingKey: "d"},
	}
	v.Items.Put(&topology.Item{Kind: kind.TopicPermission, Name: "app", Settings: topology.Args{
		"gone": map[string]any{"write": "^a$", "read": "^a$"},
		"stay": map[string]any{"write": ".*", "read": ".*"},
	}})
	deleted := func(vhost string, k kind.Kind, name string) bool {
		return vhost == "orders" && ((k == kind.Exchange && (name == "gone" || name == "stay")) || (k == kind.Queue && name == "old"))
	}
	binding := []string{
		`binding from "gone" to queue "work" in vhost "orders": routing key "b": the broker has exchange "gone" now, but this plan deletes it (mqctl created it and the file no longer declares it), and RabbitMQ refuses a binding whose source does not exist (HTTP 404 NOT_FOUND); declare exchange "gone" in the file to keep it, or remove the binding`,
		`binding from "stay" to queue "old" in vhost "orders": routing key "c": the broker has queue "old" now, but this plan deletes it`,
	}
	permission := `topic permission of user "app" in vhost "orders": exchange "gone": the broker has exchange "gone" now, but this plan deletes it (mqctl created it and the file no longer declares it), and RabbitMQ refuses a topic permission for an exchange the vhost does not have (HTTP 400 no_such_exchange, from 4.3.2); declare exchange "gone" in the file to keep it, or remove the entry`
	for _, c := range []struct {
		version string
		want    []string
	}{
		{"4.3.2", append(slices.Clone(binding), permission)},
		{"4.3.1", binding},
		{"3.10.8", binding},
	} {
		assertRefusals(t, c.version, rmqversion.MustParse(c.version).CheckDeletedEnds(top, deleted), c.want)
	}
	if err := rmqversion.Default.CheckDeletedEnds(top, func(string, kind.Kind, string) bool { return false }); err != nil {
		t.Errorf("nothing deleted: %v", err)
	}
}

// TestCheckBrokerTopicKeys: a binding from a topic exchange only the broker
// has is held to the '#' limit as one from the file's (from 4.3.5); one
// from the file's own exchange, or amq.topic, is Check's, and one from a
// direct exchange is not limited.
func TestCheckBrokerTopicKeys(t *testing.T) {
	top := topology.New()
	v := top.Vhost("orders")
	v.Exchanges["mine"] = &topology.Exchange{Name: "mine", Type: "topic", Durable: true}
	v.Queues["work"] = &topology.Queue{Name: "work", Durable: true}
	for _, src := range []string{"theirs", "mine", "amq.topic", "direct"} {
		v.Bindings = append(v.Bindings, &topology.Binding{Source: src, Destination: "work", DestinationType: topology.DestQueue, RoutingKey: "#.a.#.b.#"})
	}
	onBroker := func(vhost, x string) string {
		switch x {
		case "theirs", "mine", "amq.topic":
			return "topic"
		case "direct":
			return "direct"
		}
		return ""
	}
	// Only the binding from the broker's topic exchange.
	assertRefusals(t, "4.3.6", rmqversion.MustParse("4.3.6").CheckBrokerTopicKeys(top, onBroker),
		[]string{`binding from "theirs" to queue "work" in vhost "orders": routing key "#.a.#.b.#": RabbitMQ 4.3 refuses a topic binding key with more than 2 '#' words`})
	for _, version := range []string{"4.3.4", "4.0.5", "3.10.8"} {
		if err := rmqversion.MustParse(version).CheckBrokerTopicKeys(top, onBroker); err != nil {
			t.Errorf("%s takes three '#' words: %v", version, err)
		}
	}
}

// TestTopicKeyFromEnvFix: the fix of a refused topic key the file took
// from the environment names the variable to change, and shows no key
// made from its value (which may be a secret; the refusal's own quote of
// the key is hidden where mqctl prints it, topology.EnvValues.Hide), from
// the file's exchange and from the broker's alike.
func TestTopicKeyFromEnvFix(t *testing.T) {
	top := topology.New()
	v := top.Vhost("orders")
	v.Exchanges["mine"] = &topology.Exchange{Name: "mine", Type: "topic", Durable: true}
	v.Queues["work"] = &topology.Queue{Name: "work", Durable: true}
	for _, src := range []string{"mine", "theirs"} {
		v.Bindings = append(v.Bindings, &topology.Binding{Source: src, Destination: "work", DestinationType: topology.DestQueue, RoutingKey: "tk.#.#.#"})
	}
	top.Env = topology.NewEnvValues([]topology.EnvValue{{Value: "tk.#.#.#", Raw: "${KEY}", Key: "routing_key"}})
	onBroker := func(vhost, x string) string { return "topic" }
	for _, err := range []error{rmqversion.MustParse("4.3.6").Check(top), rmqversion.MustParse("4.3.6").CheckBrokerTopicKeys(top, onBroker)} {
		want := "merge the '#' words next to each other in the value of ${KEY} into one"
		assertRefusals(t, "4.3.6", err, []string{want})
		if err != nil && strings.Contains(err.Error(), `"tk.#"`) {
			t.Errorf("the fix shows the key merged from ${KEY}'s value:\n%v", err)
		}
	}
}

// assertRefusals checks that err lists one refusal per want, in order,
// each saying its want (label: the version, for the messages).
func assertRefusals(t *testing.T, label string, err error, want []string) {
	t.Helper()
	if err == nil {
		t.Fatalf("%s: no refusal", label)
	}
	lines := strings.Split(strings.TrimSpace(err.Error()), "\n")[1:]
	if len(lines) != len(want) {
		t.Fatalf("%s: %d refusals, want %d:\n%v", label, len(lines), len(want), err)
	}
	for i, w := range want {
		if !strings.Contains(lines[i], w) {
			t.Errorf("%s: refusal %d:\n%s\nwant it to say %s", label, i, lines[i], w)
		}
	}
}

// TestCheckBindingEndsDidYouMean: a missing end close to a name the file
// declares of its kind is suggested; one far from every name is not, and
// one the file declares as the other kind is told to change its type.
func TestCheckBindingEndsDidYouMean(t *testing.T) {
	top, err := loader.LoadBytes("t.yaml", []byte(`version: 1
vhosts:
  orders:
    exchanges:
      orders: {type: topic}
      audit: {type: fanout}
    queues:
      shipping:
        bindings: [{exchange: order, routing_key: a}, {exchange: payments, routing_key: d}]
    bindings:
      - {source: orders, destination: shiping, destination_type: queue, routing_key: b}
      - {source: orders, destination: audit, destination_type: queue, routing_key: c}
`), loader.Options{})
	if err != nil {
		t.Fatal(err)
	}
	err = rmqversion.Default.CheckBindingEnds(top, func(string, kind.Kind, string) (bool, bool) { return false, false })
	assertRefusals(t, "", err, []string{
		`declare exchange "order" in the file, or fix the name (mqctl lint reports it as MQ401); did you mean "orders"?`,
		`neither the file nor the broker has queue "audit"; "audit" is an exchange of this file: to bind it, write destination_type: exchange`,
		`declare queue "shiping" in the file, or fix the name (mqctl lint reports it as MQ401); did you mean "shipping"?`,
		`declare exchange "payments" in the file, or fix the name (mqctl lint reports it as MQ401)`,
	})
	if strings.Count(err.Error(), "did you mean") != 2 {
		t.Errorf("want 2 suggestions:\n%v", err)
	}
}

// TestCheckBindingEndsOtherKind: an end that the file, or the broker for
// certain, has as the other kind gets lint's MQ401 advice
// (OtherKindEndFix): write the other destination_type, or, for a queue as
// the source, swap the ends or bind from an exchange. An end of the other
// kind the broker may have (an unread kind, an error) gets the plain fix,
// and a name of neither kind too.
func TestCheckBindingEndsOtherKind(t *testing.T) {
	top, err := loader.LoadBytes("t.yaml", []byte(`version: 1
vhosts:
  orders:
    exchanges:
      events: {type: topic}
      audit: {type: fanout}
    queues:
      audit.log: {}
      audit.log.dlq: {}
    bindings:
      - {source: events, destination: audit.log, destination_type: exchange, routing_key: "1"}
      - {source: events, destination: audit, destination_type: queue, routing_key: "2"}
      - {source: audit.log, destination: events, destination_type: exchange, routing_key: "3"}
      - {source: audit.log, destination: audit.log.dlq, destination_type: queue, routing_key: "4"}
      - {source: events, destination: app.replies, destination_type: exchange, routing_key: "5"}
      - {source: events, destination: app.router, destination_type: queue, routing_key: "6"}
      - {source: app.inbox, destination: events, destination_type: exchange, routing_key: "7"}
      - {source: events, destination: amq.topic, destination_type: queue, routing_key: "8"}
      - {source: events, destination: maybe.queue, destination_type: exchange, routing_key: "9"}
`), loader.Options{})
	if err != nil {
		t.Fatal(err)
	}
	// The broker has queues app.replies and app.inbox and exchange
	// app.router (seen); whether it has queue maybe.queue it cannot say.
	has := func(vhost string, k kind.Kind, name string) (bool, bool) {
		switch {
		case k == kind.Queue && (name == "app.replies" || name == "app.inbox"), k == kind.Exchange && name == "app.router":
			return true, true
		case k == kind.Queue && name == "maybe.queue":
			return true, false
		}
		return false, false
	}
	assertRefusals(t, "", rmqversion.Default.CheckBindingEnds(top, has), []string{
		`binding from "app.inbox" to exchange "events" in vhost "orders": routing key "7": RabbitMQ refuses a binding whose source does not exist (HTTP 404 NOT_FOUND), and neither the file nor the broker has exchange "app.inbox"; "app.inbox" is a queue on the broker, and a binding carries messages from an exchange to a queue, never out of a queue: to send exchange "events"'s messages to it, swap the ends (source: events, destination: app.inbox, destination_type: queue)`,
		`binding from "audit.log" to exchange "events" in vhost "orders": routing key "3": RabbitMQ refuses a binding whose source does not exist (HTTP 404 NOT_FOUND), and neither the file nor the broker has exchange "audit.log"; "audit.log" is a queue of this file, and a binding carries messages from an exchange to a queue, never out of a queue: to send exchange "events"'s messages to it, swap the ends (source: events, destination: audit.log, destination_type: queue)`,
		`binding from "audit.log" to queue "audit.log.dlq" in vhost "orders": routing key "4": RabbitMQ refuses a binding whose source does not exist (HTTP 404 NOT_FOUND), and neither the file nor the broker has exchange "audit.log"; "audit.log" is a queue of this file, and a binding's source is an exchange: bind from the exchange that should feed queue "audit.log.dlq", or publish to the queue through the default exchange with its name as the routing key`,
		`binding from "events" to exchange "app.replies" in vhost "orders": routing key "5": RabbitMQ refuses a binding whose destination does not exist (HTTP 404 NOT_FOUND), and neither the file nor the broker has exchange "app.replies"; "app.replies" is a queue on the broker: to bind it, write destination_type: queue`,
		`binding from "events" to exchange "audit.log" in vhost "orders": routing key "1": RabbitMQ refuses a binding whose destination does not exist (HTTP 404 NOT_FOUND), and neither the file nor the broker has exchange "audit.log"; "audit.log" is a queue of this file: to bind it, write destination_type: queue`,
		`binding from "events" to exchange "maybe.queue" in vhost "orders": routing key "9": RabbitMQ refuses a binding whose destination does not exist (HTTP 404 NOT_FOUND), and neither the file nor the broker has exchange "maybe.queue"; declare exchange "maybe.queue" in the file, or fix the name (mqctl lint reports it as MQ401)`,
		`binding from "events" to queue "amq.topic" in vhost "orders": routing key "8": RabbitMQ refuses a binding whose destination does not exist (HTTP 404 NOT_FOUND), and neither the file nor the broker has queue "amq.topic"; "amq.topic" is an exchange on the broker: to bind it, write destination_type: exchange`,
		`binding from "events" to queue "app.router" in vhost "orders": routing key "6": RabbitMQ refuses a binding whose destination does not exist (HTTP 404 NOT_FOUND), and neither the file nor the broker has queue "app.router"; "app.router" is an exchange on the broker: to bind it, write destination_type: exchange`,
		`binding from "events" to queue "audit" in vhost "orders": routing key "2": RabbitMQ refuses a binding whose destination does not exist (HTTP 404 NOT_FOUND), and neither the file nor the broker has queue "audit"; "audit" is an exchange of this file: to bind it, write destination_type: exchange`,
	})
}
