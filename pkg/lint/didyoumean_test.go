package lint

import (
	"github.com/mqctl/mqctl/pkg/kind"
	"github.com/mqctl/mqctl/pkg/topology"
)

// didYouMeanCases: a finding that names an exchange or queue the file
// does not declare suggests a declared name of the same kind that is
// close, and only then: none for a name declared as the other kind, a
// short name, or one far from every declared name.
func didYouMeanCases() []ruleCase {
	return []ruleCase{
		{name: "a binding's misspelt source", id: "MQ401",
			build: fromYAML(`exchanges:
  orders: {type: topic}
queues:
  orders.shipping:
    dead_letter: {exchange: "", queue: orders.shipping.dlq}
    bindings:
      - {exchange: order, routing_key: "a.#"}
`), fire: []string{`order -> queue orders.shipping ["a.#"]`},
			contains: []string{`Declare exchange "order" or correct the source name (did you mean "orders"?)`}},
		{name: "a binding's misspelt destinations", id: "MQ401",
			build: fromYAML(`exchanges:
  orders: {type: topic}
  audit: {type: fanout}
queues:
  orders.audit: {dead_letter: {exchange: "", queue: orders.audit.dlq}}
bindings:
  - {source: orders, destination: orders.adit, destination_type: queue, routing_key: x}
  - {source: orders, destination: audti, destination_type: exchange, routing_key: y}
`), fire: []string{`orders -> queue orders.adit ["x"]`, `orders -> exchange audti ["y"]`},
			contains: []string{`Declare queue "orders.adit" or correct the destination name (did you mean "orders.audit"?)`,
				`Declare exchange "audti" or correct the destination name (did you mean "audit"?)`}},
		{name: "a misspelt alternate exchange, own and by policy", id: "MQ401",
			build: fromYAML(`exchanges:
  events: {type: fanout, alternate_exchange: unroutd}
  jobs: {type: direct}
  unrouted: {type: fanout}
policies:
  ae: {pattern: "^jobs$", apply_to: exchanges, definition: {alternate-exchange: unrouted.}}
`), fire: []string{"events", "ae"},
			contains: []string{`Declare exchange "unroutd" and bind a queue to it, or correct the name (did you mean "unrouted"?)`,
				`Declare exchange "unrouted." and bind a queue to it, or correct the name (did you mean "unrouted"?)`}},
		{name: "a misspelt dead-letter exchange", id: "MQ102",
			build: fromYAML(`exchanges:
  orders.dlx: {type: direct}
queues:
  orders: {dead_letter: {exchange: orders.dl}}
`), fire: []string{"orders"},
			contains: []string{`Declare exchange "orders.dl" and bind a DLQ to it, or correct the exchange name (did you mean "orders.dlx"?)`}},
		{name: "a misspelt dead-letter queue by the default exchange", id: "MQ103",
			build: fromYAML(`queues:
  work: {dead_letter: {exchange: "", routing_key: failed.jbos}}
  failed.jobs: {}
`), fire: []string{"work"},
			contains: []string{`Declare queue "failed.jbos" as the DLQ, or set dead_letter.routing_key to the name of an existing queue (did you mean "failed.jobs"?)`}},
		{name: "a shovel's misspelt ends", id: "MQ403",
			build: func(b *builder) {
				b.queue("work.dlq", nil)
				b.exchange("work", "direct")
				b.item(kind.Shovel, "s", topology.Args{"src-uri": "amqp://", "src-queue": "work.dql", "dest-uri": "amqp://", "dest-exchange": "wrok"})
			}, fire: []string{"s", "s"},
			contains: []string{`Declare it, or fix the name (did you mean "work.dlq"?)`, `Declare it, or fix the name (did you mean "work"?)`}},
		// No suggestion: q1 is an exchange (binding it as a queue is
		// another fix than a misspelling), "ac" is too short to tell from
		// "ab", and "shipping" is far from every exchange.
		{name: "no suggestion but of a close name of the same kind", id: "MQ401",
			build: fromYAML(`exchanges:
  q1: {type: fanout}
  ab: {type: fanout}
  orders: {type: topic}
queues:
  q2: {dead_letter: {exchange: "", queue: q2.dlq}}
bindings:
  - {source: orders, destination: q1, destination_type: queue, routing_key: x}
  - {source: ac, destination: q2, destination_type: queue, routing_key: x}
  - {source: shipping, destination: q2, destination_type: queue, routing_key: y}
`), fire: []string{`orders -> queue q1 ["x"]`, `ac -> queue q2 ["x"]`, `shipping -> queue q2 ["y"]`},
			absent: []string{"did you mean"}},
		// A name of the other kind: the binding's type or its ends are
		// wrong, not the name.
		{name: "an end that is of the other kind", id: "MQ401",
			build: fromYAML(`exchanges:
  events: {type: topic}
  audit: {type: fanout}
queues:
  audit.log: {dead_letter: {exchange: "", queue: audit.log.dlq}}
bindings:
  - {source: events, destination: audit.log, destination_type: exchange, routing_key: "#"}
  - {source: events, destination: audit, destination_type: queue, routing_key: "#"}
  - {source: audit.log, destination: events, destination_type: exchange, routing_key: "a"}
  - {source: audit.log, destination: audit.log.dlq, destination_type: queue, routing_key: "b"}
  - {source: events, destination: amq.topic, destination_type: queue, routing_key: "c"}
`), fire: []string{`events -> exchange audit.log ["#"]`, `events -> queue audit ["#"]`, `audit.log -> exchange events ["a"]`, `audit.log -> queue audit.log.dlq ["b"]`, `events -> queue amq.topic ["c"]`},
			contains: []string{`"audit.log" is a queue of this file: to bind it, write destination_type: queue`,
				`"amq.topic" is an exchange on the broker: to bind it, write destination_type: exchange`,
				`"audit" is an exchange of this file: to bind it, write destination_type: exchange`,
				`"audit.log" is a queue of this file, and a binding carries messages from an exchange to a queue, never out of a queue: to send exchange "events"'s messages to it, swap the ends (source: events, destination: audit.log, destination_type: queue)`,
				`"audit.log" is a queue of this file, and a binding's source is an exchange: bind from the exchange that should feed queue "audit.log.dlq", or publish to the queue through the default exchange with its name as the routing key`},
			absent: []string{"Declare exchange \"audit.log\"", "Declare queue \"audit\"", "a client cannot declare queue \"amq.topic\""}},
	}
}
