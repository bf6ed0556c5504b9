package rmqversion

import (
	"slices"

	"github.com/mqctl/mqctl/pkg/kind"
	"github.com/mqctl/mqctl/pkg/topology"
)

// comparedQueueArgs are, per queue type, the arguments RabbitMQ compares
// when a client declares a queue that already exists: the type's
// queue_arguments (rabbit_amqqueue:assert_args_equivalence/2 over
// rabbit_classic_queue, rabbit_quorum_queue and rabbit_stream_queue
// capabilities() at v3.10.8, v4.0.5 and v4.3.5; the quorum queues' 4.3
// arguments, quorumArgs43, from 4.3, and classic queues' leader locator
// from 4.0). A declaration that differs from the queue in one of them, or
// in durable or auto_delete, is refused with PRECONDITION_FAILED (406
// "inequivalent arg"), which closes the client's channel; an argument
// not listed is stored, not compared.
var comparedQueueArgs = map[string][]string{
	topology.QueueClassic: {"x-expires", "x-message-ttl", "x-dead-letter-exchange", "x-dead-letter-routing-key",
		"x-max-length", "x-max-length-bytes", "x-max-priority", "x-overflow", "x-queue-mode", "x-queue-version",
		"x-single-active-consumer", "x-queue-type", "x-queue-master-locator"},
	topology.QueueQuorum: {"x-dead-letter-exchange", "x-dead-letter-routing-key", "x-dead-letter-strategy",
		"x-expires", "x-max-length", "x-max-length-bytes", "x-max-in-memory-length", "x-max-in-memory-bytes",
		"x-overflow", "x-single-active-consumer", "x-queue-type", "x-quorum-initial-group-size",
		"x-delivery-limit", "x-message-ttl", "x-queue-leader-locator"},
	topology.QueueStream: {"x-max-length-bytes", "x-queue-type", "x-max-age", "x-stream-max-segment-size-bytes",
		"x-stream-filter-size-bytes", "x-initial-cluster-size", "x-queue-leader-locator"},
}

// RedeclareRefuses reports whether a client that declares an object of
// kind k (a queue of type qtype, "" for classic, or an exchange) with the
// setting field (a plan's field: "type", "durable", "arguments.x-…") as
// it was before a replace is refused by the object declared again with
// another value there: PRECONDITION_FAILED (406), and its channel closed.
// An exchange compares its type, durable, auto_delete, internal and
// alternate-exchange (rabbit_exchange:assert_equivalence/6); a queue
// durable, auto_delete and the arguments its type compares
// (comparedQueueArgs), its type among them.
func (v Version) RedeclareRefuses(k kind.Kind, qtype, field string) bool {
	switch field {
	case "type", "durable", "auto_delete":
		return k == kind.Exchange || k == kind.Queue
	case "internal":
		return k == kind.Exchange
	}
	arg, ok := cutArg(field)
	if !ok {
		return false
	}
	if k == kind.Exchange {
		return arg == "alternate-exchange"
	}
	if k != kind.Queue {
		return false
	}
	if qtype == "" {
		qtype = topology.QueueClassic
	}
	switch {
	case slices.Contains(comparedQueueArgs[qtype], arg):
		return true
	case qtype == topology.QueueQuorum && slices.Contains(quorumArgs43, arg):
		return v.AtLeast(4, 3)
	case qtype == topology.QueueClassic && arg == "x-queue-leader-locator":
		return v.AtLeast(4, 0)
	}
	return false
}

// cutArg is the argument a plan's field names ("arguments.x-expires").
func cutArg(field string) (string, bool) {
	const prefix = "arguments."
	if len(field) > len(prefix) && field[:len(prefix)] == prefix {
		return field[len(prefix):], true
	}
	return "", false
}
