package flow

import (
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/mqctl/mqctl/pkg/kind"
	"github.com/mqctl/mqctl/pkg/rmqversion"
	"github.com/mqctl/mqctl/pkg/route"
	"github.com/mqctl/mqctl/pkg/topology"
)

// dropped is a DeadLetterEnd that reaches no queue.
func dropped(e DeadLetterEnd, why string) *DeadLetterEnd {
	e.Dropped, e.Why = true, why
	return &e
}

// reaching is a DeadLetterEnd that reaches queues.
func reaching(e DeadLetterEnd, queues ...string) *DeadLetterEnd {
	e.Queues = queues
	return &e
}

var compareCases = []struct {
	name          string
	before, after *topology.Topology
	want          Diff
}{
	{
		name:   "topic pattern narrowed",
		before: topo(exchange("orders", "topic", nil), queue("q", nil), bind("orders", "q", "order.*")),
		after:  topo(exchange("orders", "topic", nil), queue("q", nil), bind("orders", "q", "order.created")),
		want: Diff{Routes: []Route{{Vhost: "/", Exchange: "orders", Class: Class{Kind: ClassTopic, RoutingKey: "order.x", Matches: []string{"order.*"}},
			Before: []string{"q"}, Loses: true, Cause: `the binding from "orders" to "q" with key "order.*" is gone`}}},
	},
	{
		name:   "binding removed",
		before: topo(exchange("orders", "direct", nil), queue("q1", nil), queue("q2", nil), bind("orders", "q1", "a"), bind("orders", "q2", "b")),
		after:  topo(exchange("orders", "direct", nil), queue("q1", nil), queue("q2", nil), bind("orders", "q1", "a")),
		want: Diff{
			Routes: []Route{{Vhost: "/", Exchange: "orders", Class: Class{Kind: ClassDirect, RoutingKey: "b", Matches: []string{"b"}},
				Before: []string{"q2"}, Loses: true, Cause: `the binding from "orders" to "q2" with key "b" is gone`}},
			Silenced: []Silenced{{Vhost: "/", Queue: "q2", Cause: `its only binding, from "orders" with key "b", is gone`}},
		},
	},
	{
		name:   "exchange deleted",
		before: topo(exchange("orders", "topic", nil), queue("q", nil), bind("orders", "q", "order.#")),
		after:  topo(queue("q", nil)),
		want: Diff{
			Routes: []Route{{Vhost: "/", Exchange: "orders", Class: Class{Kind: ClassEvery}, Selective: true,
				Before: []string{"q"}, Loses: true, Cause: `exchange "orders" is deleted`}},
			Silenced: []Silenced{{Vhost: "/", Queue: "q", Cause: `exchange "orders" is deleted`}},
		},
	},
	{
		name: "exchange deleted that sent every message to all its queues: not selective",
		before: topo(exchange("fan", "fanout", nil), exchange("all", "topic", nil), queue("q1", nil), queue("q2", nil),
			bind("fan", "q1", ""), bindExchange("fan", "all", ""), bind("all", "q2", "#")),
		after: topo(exchange("all", "topic", nil), queue("q1", nil), queue("q2", nil), bind("all", "q2", "#")),
		want: Diff{
			Routes: []Route{{Vhost: "/", Exchange: "fan", Class: Class{Kind: ClassEvery},
				Before: []string{"q1", "q2"}, Loses: true, Cause: `exchange "fan" is deleted`}},
			Silenced: []Silenced{{Vhost: "/", Queue: "q1", Cause: `exchange "fan" is deleted`}},
		},
	},
	{
		name:   "queue deleted",
		before: topo(exchange("orders", "direct", nil), queue("q", nil), bind("orders", "q", "k")),
		after:  topo(exchange("orders", "direct", nil)),
		want: Diff{Routes: []Route{
			{Vhost: "/", Exchange: "", Class: Class{Kind: ClassDefault, RoutingKey: "q", Matches: []string{"q"}},
				Before: []string{"q"}, Loses: true, Cause: `queue "q" is deleted`},
			{Vhost: "/", Exchange: "orders", Class: Class{Kind: ClassDirect, RoutingKey: "k", Matches: []string{"k"}},
				Before: []string{"q"}, Loses: true, Cause: `queue "q" is deleted`},
		}},
	},
	{
		name:   "queue created",
		before: nil,
		after:  topo(queue("q", nil)),
		want: Diff{Routes: []Route{{Vhost: "/", Exchange: "", Class: Class{Kind: ClassDefault, RoutingKey: "q", Matches: []string{"q"}},
			After: []string{"q"}}}},
	},
	{
		name:   "exchange-to-exchange binding",
		before: topo(exchange("x1", "topic", nil), exchange("x2", "direct", nil), queue("q", nil), bindExchange("x1", "x2", "a.*"), bind("x2", "q", "a.b")),
		after:  topo(exchange("x1", "topic", nil), exchange("x2", "direct", nil), queue("q", nil), bindExchange("x1", "x2", "a.*"), bind("x2", "q", "a.c")),
		want: Diff{Routes: []Route{
			{Vhost: "/", Exchange: "x1", Class: Class{Kind: ClassTopic, RoutingKey: "a.b", Matches: []string{"a.*", "a.b"}},
				Before: []string{"q"}, Loses: true, Cause: `the binding from "x2" to "q" with key "a.b" is gone`},
			{Vhost: "/", Exchange: "x1", Class: Class{Kind: ClassTopic, RoutingKey: "a.c", Matches: []string{"a.*", "a.c"}},
				After: []string{"q"}},
			{Vhost: "/", Exchange: "x2", Class: Class{Kind: ClassDirect, RoutingKey: "a.b", Matches: []string{"a.b"}},
				Before: []string{"q"}, Loses: true, Cause: `the binding from "x2" to "q" with key "a.b" is gone`},
			{Vhost: "/", Exchange: "x2", Class: Class{Kind: ClassDirect, RoutingKey: "a.c", Matches: []string{"a.c"}},
				After: []string{"q"}},
		}},
	},
	{
		name: "alternate exchange by argument removed",
		before: topo(exchange("x", "direct", topology.Args{"alternate-exchange": "ae"}), exchange("ae", "fanout", nil), queue("q1", nil), queue("qae", nil),
			bind("x", "q1", "k"), bind("ae", "qae", "")),
		after: topo(exchange("x", "direct", nil), exchange("ae", "fanout", nil), queue("q1", nil), queue("qae", nil),
			bind("x", "q1", "k"), bind("ae", "qae", "")),
		want: Diff{Routes: []Route{{Vhost: "/", Exchange: "x", Class: Class{Kind: ClassDirect, RoutingKey: ""},
			Before: []string{"qae"}, Loses: true, Cause: `exchange "x" no longer has alternate exchange "ae"`}}},
	},
	{
		name: "alternate exchange by argument changed",
		before: topo(exchange("x", "direct", topology.Args{"alternate-exchange": "ae"}), exchange("ae", "fanout", nil), exchange("ae2", "fanout", nil), queue("q1", nil), queue("qae", nil),
			bind("x", "q1", "k"), bind("ae", "qae", "")),
		after: topo(exchange("x", "direct", topology.Args{"alternate-exchange": "ae2"}), exchange("ae", "fanout", nil), exchange("ae2", "fanout", nil), queue("q1", nil), queue("qae", nil),
			bind("x", "q1", "k"), bind("ae", "qae", "")),
		want: Diff{Routes: []Route{{Vhost: "/", Exchange: "x", Class: Class{Kind: ClassDirect, RoutingKey: ""},
			Before: []string{"qae"}, Loses: true, Cause: `the alternate exchange of exchange "x" is now "ae2" (was "ae")`}}},
	},
	{
		name: "alternate exchange by policy added",
		before: topo(exchange("x", "topic", nil), exchange("ae", "fanout", nil), queue("q1", nil), queue("qae", nil),
			bind("x", "q1", "k.#"), bind("ae", "qae", "")),
		after: topo(exchange("x", "topic", nil), exchange("ae", "fanout", nil), queue("q1", nil), queue("qae", nil),
			bind("x", "q1", "k.#"), bind("ae", "qae", ""), policy("ae", "^x$", "exchanges", topology.Args{"alternate-exchange": "ae"})),
		want: Diff{Routes: []Route{{Vhost: "/", Exchange: "x", Class: Class{Kind: ClassTopic, RoutingKey: ""},
			After: []string{"qae"}}}},
	},
	{
		name: "headers all and any",
		before: topo(exchange("h", "headers", nil), queue("q1", nil), queue("q2", nil),
			bindHeaders("h", "q1", topology.Args{"x-match": "all", "a": "1", "b": "2"}), bindHeaders("h", "q2", topology.Args{"x-match": "any", "a": "1", "c": "3"})),
		after: topo(exchange("h", "headers", nil), queue("q1", nil), queue("q2", nil),
			bindHeaders("h", "q1", topology.Args{"x-match": "any", "a": "1", "b": "2"}), bindHeaders("h", "q2", topology.Args{"x-match": "any", "a": "1", "c": "3"})),
		want: Diff{Routes: []Route{
			{Vhost: "/", Exchange: "h", Class: Class{Kind: ClassHeaders, ByHeaders: true, Headers: map[string]any{"a": "1"},
				Matches: []string{`{"a":"1","b":"2","x-match":"any"}`, `{"a":"1","c":"3","x-match":"any"}`}},
				Before: []string{"q2"}, After: []string{"q1", "q2"}},
			{Vhost: "/", Exchange: "h", Class: Class{Kind: ClassHeaders, ByHeaders: true, Headers: map[string]any{"b": "2"},
				Matches: []string{`{"a":"1","b":"2","x-match":"any"}`}},
				After: []string{"q1"}},
		}},
	},
	{
		name:   "direct key changed",
		before: topo(exchange("x", "direct", nil), queue("q", nil), bind("x", "q", "a")),
		after:  topo(exchange("x", "direct", nil), queue("q", nil), bind("x", "q", "b")),
		want: Diff{Routes: []Route{
			{Vhost: "/", Exchange: "x", Class: Class{Kind: ClassDirect, RoutingKey: "a", Matches: []string{"a"}},
				Before: []string{"q"}, Loses: true, Cause: `the binding from "x" to "q" with key "a" is gone`},
			{Vhost: "/", Exchange: "x", Class: Class{Kind: ClassDirect, RoutingKey: "b", Matches: []string{"b"}},
				After: []string{"q"}},
		}},
	},
	{
		name:   "fanout binding added",
		before: topo(exchange("f", "fanout", nil), queue("q1", nil), queue("q2", nil), bind("f", "q1", "")),
		after:  topo(exchange("f", "fanout", nil), queue("q1", nil), queue("q2", nil), bind("f", "q1", ""), bind("f", "q2", "")),
		want: Diff{Routes: []Route{{Vhost: "/", Exchange: "f", Class: Class{Kind: ClassFanout},
			Before: []string{"q1"}, After: []string{"q1", "q2"}}}},
	},
	{
		name: "dead-letter routing key typo",
		before: topo(exchange("billing.dlx", "direct", nil), queue("billing", topology.Args{"x-dead-letter-exchange": "billing.dlx", "x-dead-letter-routing-key": "billing"}),
			queue("billing.dlq", nil), bind("billing.dlx", "billing.dlq", "billing")),
		after: topo(exchange("billing.dlx", "direct", nil), queue("billing", topology.Args{"x-dead-letter-exchange": "billing.dlx", "x-dead-letter-routing-key": "billing-typo"}),
			queue("billing.dlq", nil), bind("billing.dlx", "billing.dlq", "billing")),
		want: Diff{DeadLetters: []DeadLetter{{Vhost: "/", Queue: "billing", Reason: route.Rejected,
			Before: reaching(DeadLetterEnd{Configured: true, Exchange: "billing.dlx", RoutingKey: "billing"}, "billing.dlq"),
			After:  dropped(DeadLetterEnd{Configured: true, Exchange: "billing.dlx", RoutingKey: "billing-typo"}, `DLX "billing.dlx" has no binding for "billing-typo"`),
			Loses:  true, Cause: `DLX "billing.dlx" has no binding for "billing-typo"`}}},
	},
	{
		name:   "dead-letter exchange removed",
		before: topo(exchange("dlx", "fanout", nil), queue("q", topology.Args{"x-dead-letter-exchange": "dlx"}), queue("dlq", nil), bind("dlx", "dlq", "")),
		after:  topo(exchange("dlx", "fanout", nil), queue("q", nil), queue("dlq", nil), bind("dlx", "dlq", "")),
		want: Diff{DeadLetters: []DeadLetter{{Vhost: "/", Queue: "q", Reason: route.Rejected,
			Before: reaching(DeadLetterEnd{Configured: true, Exchange: "dlx", KeyFromMessage: true}, "dlq"),
			After:  dropped(DeadLetterEnd{}, "no dead-letter exchange"),
			Loses:  true, Cause: `its dead-letter exchange "dlx" is removed`}}},
	},
	{
		name:   "the policy that set the dead-letter exchange applies no more",
		before: topo(exchange("dlx", "fanout", nil), queue("q", nil), queue("dlq", nil), bind("dlx", "dlq", ""), policy("dl", "^q$", "queues", topology.Args{"dead-letter-exchange": "dlx"})),
		after:  topo(exchange("dlx", "fanout", nil), queue("q", nil), queue("dlq", nil), bind("dlx", "dlq", ""), policy("dl", "^r$", "queues", topology.Args{"dead-letter-exchange": "dlx"})),
		want: Diff{DeadLetters: []DeadLetter{{Vhost: "/", Queue: "q", Reason: route.Rejected,
			Before: reaching(DeadLetterEnd{Configured: true, Exchange: "dlx", KeyFromMessage: true}, "dlq"),
			After:  dropped(DeadLetterEnd{}, "no dead-letter exchange"),
			Loses:  true, Cause: `policy "dl", which set its dead-letter exchange "dlx", no longer applies to it, so it has none`}}},
	},
	{
		name:   "a policy without a dead-letter exchange takes over",
		before: topo(exchange("dlx", "fanout", nil), queue("q", nil), queue("dlq", nil), bind("dlx", "dlq", ""), policy("dl", "^q$", "queues", topology.Args{"dead-letter-exchange": "dlx"})),
		after: topo(exchange("dlx", "fanout", nil), queue("q", nil), queue("dlq", nil), bind("dlx", "dlq", ""), policy("dl", "^q$", "queues", topology.Args{"dead-letter-exchange": "dlx"}),
			func(v *topology.Vhost) {
				v.Policies["cap"] = &topology.Policy{Name: "cap", Pattern: "^q", ApplyTo: "queues", Priority: 9, Definition: topology.Args{"queue-leader-locator": "balanced"}}
			}),
		want: Diff{DeadLetters: []DeadLetter{{Vhost: "/", Queue: "q", Reason: route.Rejected,
			Before: reaching(DeadLetterEnd{Configured: true, Exchange: "dlx", KeyFromMessage: true}, "dlq"),
			After:  dropped(DeadLetterEnd{}, "no dead-letter exchange"),
			Loses:  true, Cause: `policy "cap" applies to it now instead of policy "dl", which set its dead-letter exchange "dlx", and sets none`}}},
	},
	{
		// The queue kept what it held; now what expires is dropped.
		name:   "a TTL added to a queue without a dead-letter exchange",
		before: topo(queue("q", nil)),
		after:  topo(queue("q", topology.Args{"x-message-ttl": 60000})),
		want: Diff{DeadLetters: []DeadLetter{{Vhost: "/", Queue: "q", Reason: route.Expired,
			After: dropped(DeadLetterEnd{}, "no dead-letter exchange"),
			Loses: true, Cause: "its messages now expire after 1m (x-message-ttl); no dead-letter exchange"}}},
	},
	{
		// A classic queue requeues a failing message for ever; a quorum
		// queue (4.0+) gives up after its delivery limit, 20 by default,
		// and without a dead-letter exchange drops it.
		name:   "a classic queue made a quorum queue without a dead-letter exchange",
		before: topo(queue("q", nil)),
		after: topo(func(v *topology.Vhost) {
			v.Queues["q"] = &topology.Queue{Name: "q", Type: topology.QueueQuorum, Durable: true}
		}),
		want: Diff{DeadLetters: []DeadLetter{{Vhost: "/", Queue: "q", Reason: route.DeliveryLimit,
			After: dropped(DeadLetterEnd{}, "no dead-letter exchange"),
			Loses: true, Cause: "it now drops a message once more than 20 of its deliveries have failed (the delivery limit quorum queues have by default): a basic.reject with requeue is a failed delivery, and so is its consumer's channel or connection closing with it unacknowledged (a crash included); a basic.nack with requeue, basic.recover and a consumer timeout are not; no dead-letter exchange"}}},
	},
	{
		// A policy's limit also drops, at once, what the queue holds
		// over it when the policy is put; a queue's own argument comes
		// with a replace, which declares the queue afresh.
		name:   "a length limit put by a policy on a queue without a dead-letter exchange",
		before: topo(queue("q", nil)),
		after:  topo(queue("q", nil), policy("cap", "^q$", "queues", topology.Args{"max-length": 10})),
		want: Diff{DeadLetters: []DeadLetter{{Vhost: "/", Queue: "q", Reason: route.MaxLen,
			After: dropped(DeadLetterEnd{}, "no dead-letter exchange"),
			Loses: true, Cause: "it now has a length limit of 10 messages, and when full drops its oldest messages (overflow drop-head), starting with what it holds over the limit when policy \"cap\" is put (mqctl apply refuses that without --allow-data-loss); no dead-letter exchange"}}},
	},
	{
		name:   "a length limit of one message",
		before: topo(queue("q", nil)),
		after:  topo(queue("q", nil), policy("cap", "^q$", "queues", topology.Args{"max-length": 1})),
		want: Diff{DeadLetters: []DeadLetter{{Vhost: "/", Queue: "q", Reason: route.MaxLen,
			After: dropped(DeadLetterEnd{}, "no dead-letter exchange"),
			Loses: true, Cause: "it now has a length limit of 1 message, and when full drops its oldest messages (overflow drop-head), starting with what it holds over the limit when policy \"cap\" is put (mqctl apply refuses that without --allow-data-loss); no dead-letter exchange"}}},
	},
	{
		name:   "a length limit as the queue's own argument, without a dead-letter exchange",
		before: topo(queue("q", nil)),
		after:  topo(queue("q", topology.Args{"x-max-length-bytes": 1048576})),
		want: Diff{DeadLetters: []DeadLetter{{Vhost: "/", Queue: "q", Reason: route.MaxLen,
			After: dropped(DeadLetterEnd{}, "no dead-letter exchange"),
			Loses: true, Cause: "it now has a length limit of 1048576 bytes, and when full drops its oldest messages (overflow drop-head); no dead-letter exchange"}}},
	},
	{
		// Dead letters that now have somewhere to go lose nothing.
		name:   "a length limit added to a queue with a DLQ",
		before: topo(exchange("dlx", "fanout", nil), queue("q", topology.Args{"x-dead-letter-exchange": "dlx"}), queue("dlq", nil), bind("dlx", "dlq", "")),
		after:  topo(exchange("dlx", "fanout", nil), queue("q", topology.Args{"x-dead-letter-exchange": "dlx", "x-max-length": 10}), queue("dlq", nil), bind("dlx", "dlq", "")),
		want: Diff{DeadLetters: []DeadLetter{{Vhost: "/", Queue: "q", Reason: route.MaxLen,
			After: reaching(DeadLetterEnd{Configured: true, Exchange: "dlx", KeyFromMessage: true}, "dlq")}}},
	},
	{
		name: "dead-letter exchange by policy",
		before: topo(exchange("dlx", "direct", nil), queue("q", nil), queue("dlq", nil), bind("dlx", "dlq", "k"),
			policy("dl", "^q$", "queues", topology.Args{"dead-letter-exchange": "dlx", "dead-letter-routing-key": "k"})),
		after: topo(exchange("dlx", "direct", nil), queue("q", nil), queue("dlq", nil), bind("dlx", "dlq", "k"),
			policy("dl", "^q$", "queues", topology.Args{"dead-letter-exchange": "gone", "dead-letter-routing-key": "k"})),
		want: Diff{DeadLetters: []DeadLetter{{Vhost: "/", Queue: "q", Reason: route.Rejected,
			Before: reaching(DeadLetterEnd{Configured: true, Exchange: "dlx", RoutingKey: "k"}, "dlq"),
			After:  dropped(DeadLetterEnd{Configured: true, Exchange: "gone", RoutingKey: "k"}, `dead-letter exchange "gone" is not declared`),
			Loses:  true, Cause: `dead-letter exchange "gone" is not declared`}}},
	},
	{
		name: "dead letters keep the message's key",
		before: topo(exchange("dlx", "topic", nil), queue("q", topology.Args{"x-dead-letter-exchange": "dlx"}), queue("dlq", nil), bind("dlx", "dlq", "a.#"),
			exchange("in", "fanout", nil), bind("in", "q", "")),
		after: topo(exchange("dlx", "topic", nil), queue("q", topology.Args{"x-dead-letter-exchange": "dlx"}), queue("dlq", nil), bind("dlx", "dlq", "b.#"),
			exchange("in", "fanout", nil), bind("in", "q", "")),
		want: Diff{
			Routes: []Route{
				{Vhost: "/", Exchange: "dlx", Class: Class{Kind: ClassTopic, RoutingKey: "a", Matches: []string{"a.#"}},
					Before: []string{"dlq"}, Loses: true, Cause: `the binding from "dlx" to "dlq" with key "a.#" is gone`},
				{Vhost: "/", Exchange: "dlx", Class: Class{Kind: ClassTopic, RoutingKey: "b", Matches: []string{"b.#"}},
					After: []string{"dlq"}},
			},
			DeadLetters: []DeadLetter{
				{Vhost: "/", Queue: "q", Reason: route.Rejected, Class: &Class{Kind: ClassTopic, RoutingKey: "a", Matches: []string{"a.#"}},
					Before: reaching(DeadLetterEnd{Configured: true, Exchange: "dlx", RoutingKey: "a", KeyFromMessage: true}, "dlq"),
					After:  dropped(DeadLetterEnd{Configured: true, Exchange: "dlx", RoutingKey: "a", KeyFromMessage: true}, `DLX "dlx" has no binding for "a"`),
					Loses:  true, Cause: `DLX "dlx" has no binding for "a"`},
				{Vhost: "/", Queue: "q", Reason: route.Rejected, Class: &Class{Kind: ClassTopic, RoutingKey: "b", Matches: []string{"b.#"}},
					Before: dropped(DeadLetterEnd{Configured: true, Exchange: "dlx", RoutingKey: "b", KeyFromMessage: true}, `DLX "dlx" has no binding for "b"`),
					After:  reaching(DeadLetterEnd{Configured: true, Exchange: "dlx", RoutingKey: "b", KeyFromMessage: true}, "dlq")},
			},
		},
	},
	{
		name:   "delay tier's return redirected",
		before: topo(queue("work", nil), delayTier("work.retry.5000", "work", 5000)),
		after: topo(queue("work", nil), delayTier("work.retry.5000", "work", 5000), func(v *topology.Vhost) {
			v.Queues["work.retry.5000"].Arguments["x-dead-letter-routing-key"] = "work-typo"
		}),
		want: Diff{
			DeadLetters: []DeadLetter{{Vhost: "/", Queue: "work.retry.5000", Reason: route.Rejected,
				Before: reaching(DeadLetterEnd{Configured: true, RoutingKey: "work"}, "work"),
				After:  dropped(DeadLetterEnd{Configured: true, RoutingKey: "work-typo"}, `DLX "" (the default exchange) has no queue named "work-typo"`),
				Loses:  true, Cause: `DLX "" (the default exchange) has no queue named "work-typo"`}},
			DelayTiers: []DelayTier{{Vhost: "/", Queue: "work.retry.5000", Origin: "work", DelayMS: 5000,
				Before: reaching(DeadLetterEnd{Configured: true, RoutingKey: "work"}, "work"),
				After:  dropped(DeadLetterEnd{Configured: true, RoutingKey: "work-typo"}, `DLX "" (the default exchange) has no queue named "work-typo"`),
				Loses:  true, Cause: `DLX "" (the default exchange) has no queue named "work-typo"`}},
			Silenced: []Silenced{{Vhost: "/", Queue: "work", Cause: `the dead letters of queue "work.retry.5000" no longer reach it`}},
		},
	},
	{
		name:   "exchange made internal silences its queue",
		before: topo(exchange("x", "direct", nil), queue("q", nil), bind("x", "q", "k")),
		after:  topo(internalExchange("x", "direct"), queue("q", nil), bind("x", "q", "k")),
		want: Diff{
			Routes: []Route{{Vhost: "/", Exchange: "x", Class: Class{Kind: ClassEvery}, Selective: true,
				Before: []string{"q"}, Loses: true, Cause: `exchange "x" is now internal: clients cannot publish to it`}},
			Silenced: []Silenced{{Vhost: "/", Queue: "q", Cause: `exchange "x" is now internal and no exchange clients publish to reaches it`}},
		},
	},
	{
		name:   "delayed-message exchange routes as its x-delayed-type",
		before: topo(exchange("d", "x-delayed-message", topology.Args{"x-delayed-type": "direct"}), queue("q", nil), bind("d", "q", "a.*")),
		after:  topo(exchange("d", "x-delayed-message", topology.Args{"x-delayed-type": "direct"}), queue("q", nil), bind("d", "q", "a.b")),
		want: Diff{Routes: []Route{
			{Vhost: "/", Exchange: "d", Class: Class{Kind: ClassDirect, RoutingKey: "a.*", Matches: []string{"a.* (literal)"}},
				Before: []string{"q"}, Loses: true, Cause: `the binding from "d" to "q" with key "a.*" is gone`},
			{Vhost: "/", Exchange: "d", Class: Class{Kind: ClassDirect, RoutingKey: "a.b", Matches: []string{"a.b"}},
				After: []string{"q"}},
		}},
	},
	{
		// mqctl does not simulate x-consistent-hash, but a second queue
		// bound to it takes a share of its messages: not "no change".
		name:   "plugin exchange type the simulator does not route: a queue added",
		before: topo(exchange("h", "x-consistent-hash", nil), queue("q1", nil), queue("q2", nil), bind("h", "q1", "1")),
		after:  topo(exchange("h", "x-consistent-hash", nil), queue("q1", nil), queue("q2", nil), bind("h", "q1", "1"), bind("h", "q2", "1")),
		want: Diff{Routes: []Route{{Vhost: "/", Exchange: "h", Class: Class{Kind: ClassOther},
			Before: []string{"q1"}, After: []string{"q1", "q2"},
			BeforeSplits: []Split{{Exchange: "h", Queues: []string{"q1"}, Unsimulated: "x-consistent-hash"}},
			AfterSplits:  []Split{{Exchange: "h", Queues: []string{"q1", "q2"}, Unsimulated: "x-consistent-hash"}}}}},
	},
	{
		name:   "plugin exchange type the simulator does not route: a queue's binding removed",
		before: topo(exchange("h", "x-consistent-hash", nil), queue("q1", nil), queue("q2", nil), bind("h", "q1", "1"), bind("h", "q2", "1")),
		after:  topo(exchange("h", "x-consistent-hash", nil), queue("q1", nil), queue("q2", nil), bind("h", "q1", "1")),
		want: Diff{
			Routes: []Route{{Vhost: "/", Exchange: "h", Class: Class{Kind: ClassOther},
				Before: []string{"q1", "q2"}, After: []string{"q1"},
				BeforeSplits: []Split{{Exchange: "h", Queues: []string{"q1", "q2"}, Unsimulated: "x-consistent-hash"}},
				AfterSplits:  []Split{{Exchange: "h", Queues: []string{"q1"}, Unsimulated: "x-consistent-hash"}},
				Cause:        `the binding from "h" to "q2" with key "1" is gone`}},
			Silenced: []Silenced{{Vhost: "/", Queue: "q2", Cause: `its only binding, from "h" with key "1", is gone`}},
		},
	},
	{
		// A topic binding moved behind an exchange mqctl does not
		// simulate: where the messages go is unknown, not nowhere, so
		// the change does not lose them.
		name: "binding moved behind a plugin exchange",
		before: topo(exchange("front", "topic", nil), exchange("h", "x-consistent-hash", nil), queue("q1", nil), queue("q2", nil),
			bind("front", "q1", "a.*")),
		after: topo(exchange("front", "topic", nil), exchange("h", "x-consistent-hash", nil), queue("q1", nil), queue("q2", nil),
			bindExchange("front", "h", "a.*"), bind("h", "q1", "1"), bind("h", "q2", "1")),
		want: Diff{Routes: []Route{
			{Vhost: "/", Exchange: "front", Class: Class{Kind: ClassTopic, RoutingKey: "a.x", Matches: []string{"a.*"}},
				Before: []string{"q1"}, After: []string{"q1", "q2"},
				AfterSplits: []Split{{Exchange: "h", Queues: []string{"q1", "q2"}, Unsimulated: "x-consistent-hash"}}},
			{Vhost: "/", Exchange: "h", Class: Class{Kind: ClassOther}, After: []string{"q1", "q2"},
				AfterSplits: []Split{{Exchange: "h", Queues: []string{"q1", "q2"}, Unsimulated: "x-consistent-hash"}}},
		}},
	},
	{
		// Dead letters into an exchange mqctl does not simulate go to
		// one of its queues, not "dropped".
		name: "dead-letter exchange made a plugin exchange's neighbour",
		before: topo(exchange("dlx", "fanout", nil), exchange("h", "x-consistent-hash", nil), queue("w", topology.Args{"x-dead-letter-exchange": "dlx"}),
			queue("d1", nil), queue("d2", nil), bind("dlx", "d1", "")),
		after: topo(exchange("dlx", "fanout", nil), exchange("h", "x-consistent-hash", nil), queue("w", topology.Args{"x-dead-letter-exchange": "dlx"}),
			queue("d1", nil), queue("d2", nil), bindExchange("dlx", "h", ""), bind("h", "d1", "1"), bind("h", "d2", "1")),
		want: Diff{
			Routes: []Route{
				{Vhost: "/", Exchange: "dlx", Class: Class{Kind: ClassFanout}, Before: []string{"d1"}, After: []string{"d1", "d2"},
					AfterSplits: []Split{{Exchange: "h", Queues: []string{"d1", "d2"}, Unsimulated: "x-consistent-hash"}}},
				{Vhost: "/", Exchange: "h", Class: Class{Kind: ClassOther}, After: []string{"d1", "d2"},
					AfterSplits: []Split{{Exchange: "h", Queues: []string{"d1", "d2"}, Unsimulated: "x-consistent-hash"}}},
			},
			DeadLetters: []DeadLetter{{Vhost: "/", Queue: "w", Reason: route.Rejected,
				Before: reaching(DeadLetterEnd{Configured: true, Exchange: "dlx", KeyFromMessage: true}, "d1"),
				After: &DeadLetterEnd{Configured: true, Exchange: "dlx", KeyFromMessage: true, Queues: []string{"d1", "d2"},
					Splits: []Split{{Exchange: "h", Queues: []string{"d1", "d2"}, Unsimulated: "x-consistent-hash"}}}}},
		},
	},
	{
		// A key class whose way never passes the headers exchange is one
		// class: the criteria there do not tell its messages apart.
		// Before, "rpc.x" was reported once per class of headers (four
		// identical entries).
		name: "key class that reaches no headers exchange, by binding",
		before: topo(exchange("events", "topic", nil), exchange("hdr", "headers", nil), queue("rpc", nil), queue("rpc2", nil), queue("h1", nil),
			bind("events", "rpc", "rpc.*"), bindExchange("events", "hdr", "ev.#"), bindHeaders("hdr", "h1", topology.Args{"x-match": "all", "kind": "a"})),
		after: topo(exchange("events", "topic", nil), exchange("hdr", "headers", nil), queue("rpc", nil), queue("rpc2", nil), queue("h1", nil),
			bind("events", "rpc2", "rpc.*"), bindExchange("events", "hdr", "ev.#"), bindHeaders("hdr", "h1", topology.Args{"x-match": "all", "kind": "a"})),
		want: Diff{
			Routes: []Route{{Vhost: "/", Exchange: "events", Class: Class{Kind: ClassTopic, RoutingKey: "rpc.x", Matches: []string{"rpc.*"}},
				Before: []string{"rpc"}, After: []string{"rpc2"}, Cause: `the binding from "events" to "rpc" with key "rpc.*" is gone`}},
			Silenced: []Silenced{{Vhost: "/", Queue: "rpc", Cause: `its only binding, from "events" with key "rpc.*", is gone`}},
		},
	},
	{
		// Likewise behind an alternate exchange: a key some binding
		// matches never reaches it.
		name: "key class that reaches no headers exchange, by alternate exchange",
		before: topo(exchange("events", "topic", topology.Args{"alternate-exchange": "hdr"}), exchange("hdr", "headers", nil), queue("rpc", nil), queue("rpc2", nil), queue("h1", nil),
			bind("events", "rpc", "rpc.*"), bind("events", "rpc2", "ev.#"), bindHeaders("hdr", "h1", topology.Args{"x-match": "all", "kind": "a"})),
		after: topo(exchange("events", "topic", topology.Args{"alternate-exchange": "hdr"}), exchange("hdr", "headers", nil), queue("rpc", nil), queue("rpc2", nil), queue("h1", nil),
			bind("events", "rpc2", "rpc.*"), bind("events", "rpc2", "ev.#"), bindHeaders("hdr", "h1", topology.Args{"x-match": "all", "kind": "a"})),
		want: Diff{
			Routes: []Route{{Vhost: "/", Exchange: "events", Class: Class{Kind: ClassTopic, RoutingKey: "rpc.x", Matches: []string{"rpc.*"}},
				Before: []string{"rpc"}, After: []string{"rpc2"}, Cause: `the binding from "events" to "rpc" with key "rpc.*" is gone`}},
			Silenced: []Silenced{{Vhost: "/", Queue: "rpc", Cause: `its only binding, from "events" with key "rpc.*", is gone`}},
		},
	},
	{
		// Dead letters with a dead-letter routing key that the headers
		// exchange behind their dead-letter exchange never sees are one
		// class too (no Class: they all go alike).
		name: "dead letters with a fixed key that reaches no headers exchange",
		before: topo(exchange("front", "topic", nil), exchange("hdr", "headers", nil), queue("rpc", nil), queue("rpc2", nil), queue("h1", nil),
			queue("w", topology.Args{"x-dead-letter-exchange": "front", "x-dead-letter-routing-key": "rpc.x"}),
			bind("front", "rpc", "rpc.*"), bindExchange("front", "hdr", "ev.#"), bindHeaders("hdr", "h1", topology.Args{"x-match": "all", "kind": "a"})),
		after: topo(exchange("front", "topic", nil), exchange("hdr", "headers", nil), queue("rpc", nil), queue("rpc2", nil), queue("h1", nil),
			queue("w", topology.Args{"x-dead-letter-exchange": "front", "x-dead-letter-routing-key": "rpc.x"}),
			bind("front", "rpc2", "rpc.*"), bindExchange("front", "hdr", "ev.#"), bindHeaders("hdr", "h1", topology.Args{"x-match": "all", "kind": "a"})),
		want: Diff{
			Routes: []Route{{Vhost: "/", Exchange: "front", Class: Class{Kind: ClassTopic, RoutingKey: "rpc.x", Matches: []string{"rpc.*"}},
				Before: []string{"rpc"}, After: []string{"rpc2"}, Cause: `the binding from "front" to "rpc" with key "rpc.*" is gone`}},
			DeadLetters: []DeadLetter{{Vhost: "/", Queue: "w", Reason: route.Rejected,
				Before: reaching(DeadLetterEnd{Configured: true, Exchange: "front", RoutingKey: "rpc.x"}, "rpc"),
				After:  reaching(DeadLetterEnd{Configured: true, Exchange: "front", RoutingKey: "rpc.x"}, "rpc2")}},
			Silenced: []Silenced{{Vhost: "/", Queue: "rpc", Cause: `its binding from "front" with key "rpc.*" is gone; the dead letters of queue "w" no longer reach it`}},
		},
	},
	{
		name:   "no change",
		before: topo(exchange("x", "topic", nil), queue("q", topology.Args{"x-dead-letter-exchange": "x"}), bind("x", "q", "#")),
		after:  topo(exchange("x", "topic", nil), queue("q", topology.Args{"x-dead-letter-exchange": "x"}), bind("x", "q", "#")),
	},
}

// TestCompareModulusHash: an x-modulus-hash exchange (RabbitMQ 4.3, the
// default version) sends each message to one of its destinations by a
// hash of its keys. A class of many keys is split among them all, and the
// route says so (AfterSplits), rather than that every message goes where
// the class's example is hashed to; a class of one key goes one way, its
// pick. Dead letters that keep their own keys are split alike.
func TestCompareModulusHash(t *testing.T) {
	jobs := []obj{exchange("jobs", "x-modulus-hash", nil), queue("w1", nil), bind("jobs", "w1", "")}
	two := append(append([]obj(nil), jobs...), queue("w2", nil), bind("jobs", "w2", ""))
	split := []Split{{Exchange: "jobs", Queues: []string{"w1", "w2"}}}
	tests := []struct {
		name          string
		before, after *topology.Topology
		want          []Route
	}{
		{name: "a second destination: every message goes to one of the two",
			before: topo(jobs...), after: topo(two...),
			want: []Route{
				{Vhost: "/", Class: Class{Kind: ClassDefault, RoutingKey: "w2", Matches: []string{"w2"}}, After: []string{"w2"}},
				{Vhost: "/", Exchange: "jobs", Class: Class{Kind: ClassOther}, Before: []string{"w1"}, After: []string{"w1", "w2"}, AfterSplits: split},
			}},
		{name: "a topic class through it is split, and keeps the queue it reaches on its own",
			before: topo(append(append([]obj(nil), two...), exchange("in", "topic", nil), queue("audit", nil), bind("in", "audit", "#"))...),
			after:  topo(append(append([]obj(nil), two...), exchange("in", "topic", nil), queue("audit", nil), bind("in", "audit", "#"), bindExchange("in", "jobs", "order.*"))...),
			want: []Route{{Vhost: "/", Exchange: "in", Class: Class{Kind: ClassTopic, RoutingKey: "order.x", Matches: []string{"#", "order.*"}},
				Before: []string{"audit"}, After: []string{"audit", "w1", "w2"}, AfterSplits: split}}},
		{name: "a direct key goes one way: its pick",
			before: topo(append(append([]obj(nil), two...), exchange("in", "direct", nil))...),
			after:  topo(append(append([]obj(nil), two...), exchange("in", "direct", nil), bindExchange("in", "jobs", "k"))...),
			want: []Route{{Vhost: "/", Exchange: "in", Class: Class{Kind: ClassDirect, RoutingKey: "k", Matches: []string{"k"}},
				After: []string{"w1"}}}},
	}
	// A third destination moves a key among the first two as well (the
	// hash is taken modulo the number of destinations): the cause says
	// so. Before, it read `what exchange "in" routes "k2" to reaches no
	// queue`, of a key that reaches w1 (RabbitMQ 4.3.6 agrees on both
	// picks).
	in2 := append(append([]obj(nil), two...), exchange("in", "direct", nil), bindExchange("in", "jobs", "k2"))
	tests = append(tests, struct {
		name          string
		before, after *topology.Topology
		want          []Route
	}{name: "a third destination moves a key's pick",
		before: topo(in2...), after: topo(append(append([]obj(nil), in2...), queue("w3", nil), bind("jobs", "w3", ""))...),
		want: []Route{
			{Vhost: "/", Class: Class{Kind: ClassDefault, RoutingKey: "w3", Matches: []string{"w3"}}, After: []string{"w3"}},
			{Vhost: "/", Exchange: "in", Class: Class{Kind: ClassDirect, RoutingKey: "k2", Matches: []string{"k2"}}, Before: []string{"w2"}, After: []string{"w1"},
				Cause: `exchange "jobs" picks one of its destinations by a hash of the routing key, and they are now w1, w2, w3 (were w1, w2): the hash of "k2" picks w1 where it picked w2`},
			{Vhost: "/", Exchange: "jobs", Class: Class{Kind: ClassOther}, Before: []string{"w1", "w2"}, After: []string{"w1", "w2", "w3"}, BeforeSplits: split,
				AfterSplits: []Split{{Exchange: "jobs", Queues: []string{"w1", "w2", "w3"}}}},
		}})
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := compareWithoutPerMessage(t, tc.before, tc.after, Options{})
			if !reflect.DeepEqual(got.Routes, tc.want) {
				t.Errorf("routes:\ngot  %s\nwant %s", show(t, got.Routes), show(t, tc.want))
			}
			if got.LosesMessages() {
				t.Errorf("a split loses no message: %s", show(t, got))
			}
		})
	}
	// x-local-random picks at random, whatever the key: even one key's
	// messages are split among its queues.
	rpc := []obj{exchange("rpc", "x-local-random", nil), queue("r1", nil), queue("r2", nil), bind("rpc", "r1", ""), bind("rpc", "r2", ""), exchange("in", "direct", nil)}
	got0 := Compare(topo(rpc...), topo(append(append([]obj(nil), rpc...), bindExchange("in", "rpc", "k"))...), Options{})
	wantRoutes := []Route{{Vhost: "/", Exchange: "in", Class: Class{Kind: ClassDirect, RoutingKey: "k", Matches: []string{"k"}},
		After: []string{"r1", "r2"}, AfterSplits: []Split{{Exchange: "rpc", Queues: []string{"r1", "r2"}, Random: true}}}}
	if !reflect.DeepEqual(got0.Routes, wantRoutes) {
		t.Errorf("a direct key into x-local-random:\ngot  %s\nwant %s", show(t, got0.Routes), show(t, wantRoutes))
	}
	// Dead letters keeping their keys, before into one queue, after split.
	q := queue("failing", topology.Args{"x-dead-letter-exchange": "jobs"})
	got := compareWithoutPerMessage(t, topo(append(append([]obj(nil), jobs...), q)...), topo(append(append([]obj(nil), two...), q)...), Options{})
	if len(got.DeadLetters) != 1 {
		t.Fatalf("dead letters: %s", show(t, got.DeadLetters))
	}
	dl := got.DeadLetters[0]
	if !reflect.DeepEqual(dl.Before.Queues, []string{"w1"}) || dl.Before.Splits != nil ||
		!reflect.DeepEqual(dl.After.Queues, []string{"w1", "w2"}) || !reflect.DeepEqual(dl.After.Splits, split) {
		t.Errorf("dead letters of failing: %s", show(t, dl))
	}
	var text strings.Builder
	if err := WriteText(&text, got, TextOptions{}); err != nil {
		t.Fatal(err)
	}
	if want := `one of w1, w2 (exchange "jobs" picks one for each message by a hash of its routing key) (via "jobs", the message's key)`; !strings.Contains(text.String(), want) {
		t.Errorf("the text does not say %q:\n%s", want, text.String())
	}
}

// TestCompare checks Compare on small before/after pairs, one kind of
// change each.
func TestCompare(t *testing.T) {
	for _, tc := range compareCases {
		t.Run(tc.name, func(t *testing.T) {
			got := compareWithoutPerMessage(t, tc.before, tc.after, Options{})
			if !reflect.DeepEqual(*got, tc.want) {
				t.Errorf("got %s\nwant %s", show(t, got), show(t, tc.want))
			}
			if got.Empty() != reflect.DeepEqual(tc.want, Diff{}) {
				t.Errorf("Empty() = %v", got.Empty())
			}
		})
	}
}

// TestCompareTruncates checks that classes past MaxClasses are left out
// and the exchange named in Truncated.
func TestCompareTruncates(t *testing.T) {
	objs := []obj{exchange("x", "direct", nil), queue("q", nil)}
	for _, k := range []string{"k1", "k2", "k3", "k4", "k5"} {
		objs = append(objs, bind("x", "q", k))
	}
	unbound := topo(exchange("x", "direct", nil), queue("q", nil))
	d := Compare(topo(objs...), unbound, Options{MaxClasses: 3})
	if !reflect.DeepEqual(d.Truncated, []string{"//x"}) || len(d.Routes) > 3 {
		t.Errorf("truncated %q, %d routes", d.Truncated, len(d.Routes))
	}
	if d := Compare(topo(objs...), unbound, Options{}); len(d.Truncated) != 0 || len(d.Routes) != 5 {
		t.Errorf("without a cap: truncated %q, %d routes, want 5", d.Truncated, len(d.Routes))
	}
	// The default exchange's classes are the names of the queues declared
	// on one side only, capped alike ("//" is vhost "/", exchange "").
	var queues []obj
	for _, q := range []string{"q1", "q2", "q3", "q4", "q5"} {
		queues = append(queues, queue(q, nil))
	}
	d = Compare(topo(queues...), nil, Options{MaxClasses: 3})
	if !reflect.DeepEqual(d.Truncated, []string{"//"}) || len(d.Routes) != 3 || d.Routes[2].Class.RoutingKey != "q3" {
		t.Errorf("default exchange: truncated %q, routes %+v", d.Truncated, d.Routes)
	}
	// A deleted exchange is one route whatever its bindings: every
	// message published to it now fails.
	if d := Compare(topo(objs...), nil, Options{MaxClasses: 3}); len(d.Truncated) != 0 || len(d.Routes) != 2 || d.Routes[1].Class.Kind != ClassEvery {
		t.Errorf("deleted exchange: truncated %q, routes %+v", d.Truncated, d.Routes)
	}
}

// TestTruncatedClassesMayLoseMessages: where the classes of an exchange
// go past the cap, the ones not compared may lose messages, so the diff
// does not say that none does. Here the first classes compared only gain
// a queue, and the keys past the cap lose theirs (each queue keeps another
// binding, so none is silenced): the diff said "none loses messages", and
// mqctl diff --detailed-exitcode exited 2.
func TestTruncatedClassesMayLoseMessages(t *testing.T) {
	var before, after []obj
	for _, o := range []obj{exchange("x", "direct", nil), queue("other", nil), queue("qa", nil), queue("qz", nil),
		bind("x", "qa", "a1"), bind("x", "qa", "a2"), bind("x", "qa", "a3"), bind("x", "qz", "y")} {
		before, after = append(before, o), append(after, o)
	}
	before = append(before, bind("x", "qz", "z1"), bind("x", "qz", "z2"))
	after = append(after, bind("x", "other", "a1"), bind("x", "other", "a2"), bind("x", "other", "a3"))
	d := Compare(topo(before...), topo(after...), Options{MaxClasses: 3})
	if len(d.Truncated) == 0 || slices.ContainsFunc(d.Routes, func(r Route) bool { return r.Loses }) {
		t.Fatalf("want the gaining classes listed and the losing ones past the cap: %s", show(t, d))
	}
	if !d.LosesMessages() {
		t.Errorf("LosesMessages() = false with classes not compared")
	}
	if want := "3 flow changes send messages elsewhere; more classes of keys of //x were not compared, and they may lose messages."; d.Summary() != want {
		t.Errorf("Summary() = %q, want %q", d.Summary(), want)
	}
	if d := Compare(topo(before...), topo(after...), Options{}); !d.LosesMessages() || len(d.Truncated) != 0 {
		t.Errorf("without a cap: %s", show(t, d))
	}
}

// TestCompareVhosts checks that Options.Vhosts restricts the comparison.
func TestCompareVhosts(t *testing.T) {
	both := func(key string) *topology.Topology {
		top := topology.New()
		for _, vh := range []string{"a", "b"} {
			v := top.Vhost(vh)
			for _, o := range []obj{exchange("x", "direct", nil), queue("q", nil), bind("x", "q", key)} {
				o(v)
			}
		}
		return top
	}
	d := Compare(both("k1"), both("k2"), Options{Vhosts: []string{"b"}})
	if len(d.Routes) != 2 || d.Routes[0].Vhost != "b" || d.Routes[1].Vhost != "b" {
		t.Errorf("routes %s, want the two classes of vhost b", show(t, d.Routes))
	}
	if d := Compare(both("k1"), both("k2"), Options{}); len(d.Routes) != 4 || d.Routes[0].Vhost != "a" || d.Routes[3].Vhost != "b" {
		t.Errorf("routes %s, want two classes of each vhost, a first", show(t, d.Routes))
	}
}

// TestLosesMessages checks LosesMessages and Empty on the cases of
// TestCompare, a nil Diff and two empty brokers.
func TestLosesMessages(t *testing.T) {
	for _, tc := range compareCases {
		want := false
		for _, r := range tc.want.Routes {
			want = want || r.Loses
		}
		for _, dl := range tc.want.DeadLetters {
			want = want || dl.Loses
		}
		want = want || len(tc.want.Silenced) > 0
		if got := Compare(tc.before, tc.after, Options{}).LosesMessages(); got != want {
			t.Errorf("%s: LosesMessages() = %v, want %v", tc.name, got, want)
		}
	}
	var nilDiff *Diff
	if nilDiff.LosesMessages() || !nilDiff.Empty() {
		t.Error("a nil Diff loses messages or is not empty")
	}
	if d := Compare(nil, nil, Options{}); !d.Empty() {
		t.Errorf("two empty brokers differ: %s", show(t, d))
	}
}

// TestSilencedNamesAFewSources cuts off a queue that the dead letters of
// five queues reached through one fanout exchange: its cause names the
// first three and counts the others.
func TestSilencedNamesAFewSources(t *testing.T) {
	objs := func(bound bool) []obj {
		out := []obj{internalExchange("dlx", "fanout"), queue("dlq", nil)}
		for _, w := range []string{"w1", "w2", "w3", "w4", "w5"} {
			out = append(out, queue(w, topology.Args{"x-dead-letter-exchange": "dlx"}))
		}
		if bound {
			out = append(out, bind("dlx", "dlq", ""))
		}
		return out
	}
	d := compareWithoutPerMessage(t, topo(objs(true)...), topo(objs(false)...), Options{})
	want := []Silenced{{Vhost: "/", Queue: "dlq", Cause: `the dead letters of queue "w1" no longer reach it; the dead letters of queue "w2" no longer reach it; the dead letters of queue "w3" no longer reach it; and the dead letters of 2 more queues no longer reach it`}}
	if !reflect.DeepEqual(d.Silenced, want) {
		t.Errorf("silenced %s, want %s", show(t, d.Silenced), show(t, want))
	}
	if len(d.DeadLetters) != 5 {
		t.Errorf("%d dead-letter changes, want one for each of the five queues: %s", len(d.DeadLetters), show(t, d.DeadLetters))
	}
}

// TestGainedAndLost checks what a route gains and loses.
func TestGainedAndLost(t *testing.T) {
	r := Route{Before: []string{"a", "b", "c"}, After: []string{"b", "c", "d", "e"}}
	if g, l := r.Gained(), r.Lost(); !reflect.DeepEqual(g, []string{"d", "e"}) || !reflect.DeepEqual(l, []string{"a"}) {
		t.Errorf("gained %v, lost %v; want [d e] and [a]", g, l)
	}
	if g, l := (Route{After: []string{"q"}}).Gained(), (Route{After: []string{"q"}}).Lost(); !reflect.DeepEqual(g, []string{"q"}) || l != nil {
		t.Errorf("a new route gains %v and loses %v; want [q] and nothing", g, l)
	}
}

// TestHeldDeadLetters: a quorum queue that dead-letters at least once
// keeps the dead letters its dead-letter exchange no longer routes
// (route.DeadLetterRoute.Held): they are held, not dropped, and not lost,
// and the text says so; the same queue at most once drops them.
func TestHeldDeadLetters(t *testing.T) {
	for _, tc := range []struct {
		overflow   string
		held, lost bool
		text       string
	}{
		{"reject-publish", true, false, "held in the queue, which dead-letters at least once"},
		{"drop-head", false, true, "dropped (via"},
	} {
		q := func(v *topology.Vhost) {
			v.Queues["q"] = &topology.Queue{Name: "q", Type: topology.QueueQuorum, Durable: true, Arguments: topology.Args{
				"x-dead-letter-exchange": "dlx", "x-dead-letter-routing-key": "q", "x-dead-letter-strategy": "at-least-once", "x-overflow": tc.overflow}}
		}
		before := topo(exchange("dlx", "direct", nil), q, queue("dlq", nil), bind("dlx", "dlq", "q"))
		after := topo(exchange("dlx", "direct", nil), q, queue("dlq", nil))
		d := Compare(before, after, Options{})
		n := 0
		for _, dl := range d.DeadLetters {
			if dl.Queue != "q" {
				continue
			}
			n++
			if dl.After == nil || dl.After.Held != tc.held || dl.After.Dropped == tc.held || dl.Loses != tc.lost {
				t.Errorf("overflow %s, %s: after %+v, loses %v; want held %v, lost %v", tc.overflow, dl.Reason, dl.After, dl.Loses, tc.held, tc.lost)
			}
			if got := endText(dl.After); !strings.Contains(got, tc.text) {
				t.Errorf("overflow %s: the end reads %q, want %q in it", tc.overflow, got, tc.text)
			}
		}
		if n == 0 {
			t.Errorf("overflow %s: no change of q's dead letters: %s", tc.overflow, show(t, d))
		}
	}
}

// quorum declares a quorum queue.
func quorum(name string, args topology.Args) obj {
	return func(v *topology.Vhost) {
		v.Queues[name] = &topology.Queue{Name: name, Type: topology.QueueQuorum, Durable: true, Arguments: args.Normalized()}
	}
}

// TestAtLeastOnceEnds: a quorum queue that dead-letters at least once
// keeps the dead letters no queue takes; when that ends (its strategy, by
// argument or policy, or its overflow reject-publish taken away) it drops
// them: a loss, whose cause names what changed. A drop-head overflow also
// makes it dead-letter what overflows, under a limit it already had.
func TestAtLeastOnceEnds(t *testing.T) {
	dl := topology.Args{"x-dead-letter-exchange": "dlx", "x-max-length": 100}
	with := func(extra topology.Args) topology.Args {
		out := topology.Args{}
		for _, a := range []topology.Args{dl, extra} {
			for k, v := range a {
				out[k] = v
			}
		}
		return out
	}
	common := []obj{exchange("dlx", "direct", nil), queue("dlq", nil), bind("dlx", "dlq", "other")}
	side := func(q obj, more ...obj) *topology.Topology {
		return topo(append(append(append([]obj(nil), common...), q), more...)...)
	}
	held := with(topology.Args{"x-overflow": "reject-publish", "x-dead-letter-strategy": "at-least-once"})
	strategyPolicy := policy("alo", "^work$", "queues", topology.Args{"dead-letter-strategy": "at-least-once"})
	const fate = "it no longer dead-letters at least once"
	tests := []struct {
		name          string
		before, after *topology.Topology
		// causes are the causes wanted per reason that loses messages.
		causes map[route.Reason]string
	}{
		{name: "strategy argument removed",
			before: side(quorum("work", held)),
			after:  side(quorum("work", with(topology.Args{"x-overflow": "reject-publish"}))),
			causes: map[route.Reason]string{
				route.Rejected:      "its dead-letter-strategy is now at-most-once, the default (was at-least-once): " + fate,
				route.DeliveryLimit: "its dead-letter-strategy is now at-most-once, the default (was at-least-once): " + fate,
			}},
		{name: "strategy policy removed",
			before: side(quorum("work", with(topology.Args{"x-overflow": "reject-publish"})), strategyPolicy),
			after:  side(quorum("work", with(topology.Args{"x-overflow": "reject-publish"}))),
			causes: map[route.Reason]string{
				route.Rejected:      "its dead-letter-strategy is now at-most-once, the default (was at-least-once): " + fate,
				route.DeliveryLimit: "its dead-letter-strategy is now at-most-once, the default (was at-least-once): " + fate,
			}},
		{name: "overflow made drop-head",
			before: side(quorum("work", held)),
			after:  side(quorum("work", with(topology.Args{"x-overflow": "drop-head", "x-dead-letter-strategy": "at-least-once"}))),
			causes: map[route.Reason]string{
				route.Rejected:      "its overflow is now drop-head (was reject-publish), with which RabbitMQ falls back to at-most-once dead-lettering: " + fate,
				route.DeliveryLimit: "its overflow is now drop-head (was reject-publish), with which RabbitMQ falls back to at-most-once dead-lettering: " + fate,
				route.MaxLen:        "its overflow is now drop-head (was reject-publish): when it reaches its length limit of 100 messages it drops its oldest messages (overflow drop-head); ",
			}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			d := compareWithoutPerMessage(t, tc.before, tc.after, Options{})
			got := map[route.Reason]string{}
			for _, x := range d.DeadLetters {
				if x.Queue == "work" && x.Loses {
					got[x.Reason] = x.Cause
				}
			}
			for r, want := range tc.causes {
				if !strings.HasPrefix(got[r], want) {
					t.Errorf("%s: cause %q, want it to start %q", r, got[r], want)
				}
			}
			if len(got) != len(tc.causes) || !d.LosesMessages() {
				t.Errorf("losses %v, want one for each of %v: %s", got, tc.causes, show(t, d.DeadLetters))
			}
		})
	}
}

// TestExchangeTypeChanged: an exchange whose type changes tells its
// messages apart differently before and after. Each class is labelled by
// what tells it apart on the side where it differs, not by the new type
// alone (which made every class of a topic exchange made fanout "every
// message", with contradicting before and after), and says why it moves,
// also where it only gains queues.
func TestExchangeTypeChanged(t *testing.T) {
	side := func(typ string) *topology.Topology {
		return topo(exchange("orders", typ, nil), queue("q", nil), queue("r", nil), bind("orders", "q", "order.*"), bind("orders", "r", "#"))
	}
	tests := []struct {
		from, to string
		class    Class
		before   []string
		after    []string
		text     string // the entry's first line in WriteText
		cell     string // the entry's messages cell in WriteMarkdown, unescaped
	}{
		{from: "topic", to: "fanout",
			class:  Class{Kind: ClassFanout, Matches: []string{"#"}, Before: &ClassSide{Kind: ClassTopic, Matches: []string{"#"}}, After: &ClassSide{Kind: ClassFanout}},
			before: []string{"r"}, after: []string{"q", "r"},
			text: `  ~ key "" (matching # before the change) on exchange "orders" in vhost "/"`,
			cell: `key "" (matching # before the change) on exchange "orders"`},
		{from: "fanout", to: "topic",
			class:  Class{Kind: ClassTopic, Matches: []string{"#"}, Before: &ClassSide{Kind: ClassFanout}, After: &ClassSide{Kind: ClassTopic, Matches: []string{"#"}}},
			before: []string{"q", "r"}, after: []string{"r"},
			text: `  ~ key "" (matching # after the change) on exchange "orders" in vhost "/"`,
			cell: `key "" (matching # after the change) on exchange "orders"`},
		{from: "topic", to: "headers",
			class:  Class{Kind: ClassHeaders, Matches: []string{"#", "{}"}, Before: &ClassSide{Kind: ClassTopic, Matches: []string{"#"}}, After: &ClassSide{Kind: ClassHeaders, Matches: []string{"{}"}}},
			before: []string{"r"}, after: []string{"q", "r"},
			text: `  ~ key "" (matching # before the change) and headers {} (matching {} after the change) on exchange "orders" in vhost "/"`,
			cell: `key "" (matching # before the change) and headers {} (matching {} after the change) on exchange "orders"`},
	}
	for _, tc := range tests {
		t.Run(tc.from+" to "+tc.to, func(t *testing.T) {
			d := Compare(side(tc.from), side(tc.to), Options{})
			cause := fmt.Sprintf("exchange %q is now of type %s (was %s)", "orders", tc.to, tc.from)
			want := []Route{{Vhost: "/", Exchange: "orders", Class: tc.class, Before: tc.before, After: tc.after, Cause: cause}}
			if !reflect.DeepEqual(d.Routes, want) {
				t.Fatalf("routes:\ngot  %s\nwant %s", show(t, d.Routes), show(t, want))
			}
			var text, md strings.Builder
			if err := WriteText(&text, d, TextOptions{}); err != nil {
				t.Fatal(err)
			}
			if err := WriteMarkdown(&md, d, MarkdownOptions{}); err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(text.String(), tc.text+"\n") || !strings.Contains(text.String(), "cause:  "+cause) {
				t.Errorf("text:\n%s\nwant the line %q and the cause %q", text.String(), tc.text, cause)
			}
			if !strings.Contains(md.String(), "| "+cell(tc.cell)+" |") {
				t.Errorf("markdown:\n%s\nwant %q", md.String(), tc.cell)
			}
		})
	}
}

// TestDeliveryLimitCause: what a new delivery limit does is said as the
// target counts it (route.Simulator.DeliveryLimitRule): every return
// before 4.3 (a basic.nack with requeue too), failed deliveries on 4.3;
// and whether the queue dead-letters or drops the message.
func TestDeliveryLimitCause(t *testing.T) {
	const (
		every  = "every return counts: a basic.reject or basic.nack with requeue"
		failed = "a basic.reject with requeue is a failed delivery"
	)
	tests := []struct {
		version string
		args    topology.Args
		want    string
	}{
		{"4.0", nil, "it now delivers a message at most 20 times after the first and drops it when it comes back again (the delivery limit quorum queues have by default): " + every},
		{"4.2", topology.Args{"x-delivery-limit": 5}, "it now delivers a message at most 5 times after the first and drops it when it comes back again (x-delivery-limit): " + every},
		{"4.3", nil, "it now drops a message once more than 20 of its deliveries have failed (the delivery limit quorum queues have by default): " + failed},
		{"4.3", topology.Args{"x-delivery-limit": 5, "x-dead-letter-exchange": "gone"}, "it now dead-letters a message once more than 5 of its deliveries have failed (x-delivery-limit): " + failed},
	}
	for _, tc := range tests {
		t.Run(tc.version, func(t *testing.T) {
			ver, err := rmqversion.Parse(tc.version)
			if err != nil {
				t.Fatal(err)
			}
			d := Compare(topo(queue("q", nil)), topo(quorum("q", tc.args)), Options{Version: ver})
			var got string
			for _, dl := range d.DeadLetters {
				if dl.Reason == route.DeliveryLimit {
					got = dl.Cause
				}
			}
			if !strings.HasPrefix(got, tc.want) {
				t.Errorf("cause %q, want it to start %q", got, tc.want)
			}
		})
	}
}

// TestExpiring: a queue that now expires (by policy or argument), or
// expires sooner, is deleted with whatever it holds once unused that
// long: what it holds then is not known, so the change may lose
// messages, as a new length limit or TTL without a dead-letter exchange
// may. A longer expiry, or none, loses nothing.
func TestExpiring(t *testing.T) {
	ms := func(n int64) *int64 { return &n }
	expires := func(n int64) obj { return policy("exp", "^q$", "queues", topology.Args{"expires": n}) }
	tests := []struct {
		name          string
		before, after *topology.Topology
		want          []Expiring
	}{
		{name: "policy added",
			before: topo(queue("q", nil)), after: topo(queue("q", nil), expires(60000)),
			want: []Expiring{{Vhost: "/", Queue: "q", AfterMS: 60000,
				Cause: "it now expires once unused for 1m (policy \"exp\"'s expires), and RabbitMQ then deletes it with whatever it holds, dead-lettering none of it; the time counts from when policy \"exp\" is put (mqctl apply refuses that for a queue that holds messages and has no consumer, without --allow-data-loss)"}}},
		{name: "argument added",
			before: topo(queue("q", nil)), after: topo(queue("q", topology.Args{"x-expires": 3600000})),
			want: []Expiring{{Vhost: "/", Queue: "q", AfterMS: 3600000,
				Cause: "it now expires once unused for 1h (x-expires), and RabbitMQ then deletes it with whatever it holds, dead-lettering none of it"}}},
		{name: "shorter",
			before: topo(queue("q", nil), expires(3600000)), after: topo(queue("q", nil), expires(60000)),
			want: []Expiring{{Vhost: "/", Queue: "q", BeforeMS: ms(3600000), AfterMS: 60000,
				Cause: "it now expires once unused for 1m (policy \"exp\"'s expires), and RabbitMQ then deletes it with whatever it holds, dead-lettering none of it; the time counts from when policy \"exp\" is put (mqctl apply refuses that for a queue that holds messages and has no consumer, without --allow-data-loss)"}}},
		{name: "longer", before: topo(queue("q", nil), expires(60000)), after: topo(queue("q", nil), expires(3600000))},
		{name: "removed", before: topo(queue("q", nil), expires(60000)), after: topo(queue("q", nil))},
		{name: "a new queue holds nothing yet", before: topo(), after: topo(queue("q", topology.Args{"x-expires": 60000}))},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			d := Compare(tc.before, tc.after, Options{})
			if !reflect.DeepEqual(d.Expiring, tc.want) {
				t.Errorf("expiring:\ngot  %s\nwant %s", show(t, d.Expiring), show(t, tc.want))
			}
			if d.LosesMessages() != (len(tc.want) > 0) {
				t.Errorf("LosesMessages() = %v", d.LosesMessages())
			}
		})
	}
}

// TestDeadLetterClassesOnlyOfKeysThatReachTheQueue: dead letters that
// keep the message's key have one of the keys by which messages reach the
// queue (route.Simulator.InboundKeys): their classes are of those keys
// only, the example one of them, unless any key can reach the queue (a
// fanout binds it). A dead-letter routing key makes one class of all.
func TestDeadLetterClassesOnlyOfKeysThatReachTheQueue(t *testing.T) {
	side := func(dlxKey string, q obj, more ...obj) *topology.Topology {
		return topo(append([]obj{exchange("orders", "topic", nil), exchange("dlx", "direct", nil), q, queue("dlq", nil),
			bind("orders", "work", "order.*"), bind("dlx", "dlq", dlxKey)}, more...)...)
	}
	keyFrom := queue("work", topology.Args{"x-dead-letter-exchange": "dlx"})
	fixedKey := queue("work", topology.Args{"x-dead-letter-exchange": "dlx", "x-dead-letter-routing-key": "work"})
	fan := []obj{exchange("fan", "fanout", nil), bind("fan", "work", "")}
	tests := []struct {
		name          string
		before, after *topology.Topology
		want          []string // the keys of work's dead-letter classes; "(all)" for one class of all
	}{
		{name: "the key reaches the queue by its name, not other",
			before: side("work", keyFrom), after: side("other", keyFrom), want: []string{"work"}},
		{name: "a topic binding's keys reach it",
			before: side("order.x", keyFrom), after: side("other", keyFrom), want: []string{"order.x"}},
		{name: "any key reaches a queue a fanout binds",
			before: side("work", keyFrom, fan...), after: side("other", keyFrom, fan...), want: []string{"other", "work"}},
		{name: "a dead-letter routing key",
			before: side("work", fixedKey), after: side("other", fixedKey), want: []string{"(all)"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var got []string
			for _, dl := range compareWithoutPerMessage(t, tc.before, tc.after, Options{}).DeadLetters {
				switch {
				case dl.Queue != "work":
				case dl.Class == nil:
					got = append(got, "(all)")
				default:
					got = append(got, dl.Class.RoutingKey)
				}
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("classes %q, want %q", got, tc.want)
			}
		})
	}
}

// TestUnlistedQueueNames checks that the queues whose default-exchange
// routes are past the cap are counted, and that the views give the whole
// count: 5,000 new queues read "the names of 1000 new queues" before.
func TestUnlistedQueueNames(t *testing.T) {
	names := func(ns ...string) *topology.Topology {
		var objs []obj
		for _, n := range ns {
			objs = append(objs, queue(n, nil))
		}
		return topo(objs...)
	}
	text := func(d *Diff) string {
		var sb strings.Builder
		if err := WriteText(&sb, d, TextOptions{}); err != nil {
			t.Fatal(err)
		}
		return sb.String()
	}
	// Three deleted queues are listed (the first names), five new ones not.
	d := Compare(names("d1", "d2", "d9"), names("n1", "n2", "n3", "n4", "n5"), Options{MaxClasses: 3})
	if want := []Unlisted{{Vhost: "/", New: 5}}; !reflect.DeepEqual(d.Unlisted, want) {
		t.Errorf("unlisted %+v, want %+v", d.Unlisted, want)
	}
	out := text(d)
	for _, want := range []string{`~ the names of 5 new queues on the default exchange in vhost "/"`, "after:  each its own queue\n", `! key "d1" (the queue's name) on the default exchange`} {
		if !strings.Contains(out, want) {
			t.Errorf("text lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "not every class") {
		t.Errorf("text names the default exchange as truncated, where it counts the queues:\n%s", out)
	}
	// Two new queues listed with one deleted; three deleted ones past the
	// cap still lose what they hold.
	d = Compare(names("x1", "x2", "x3", "x4"), names("a1", "a2"), Options{MaxClasses: 3})
	if want := []Unlisted{{Vhost: "/", Deleted: 3}}; !reflect.DeepEqual(d.Unlisted, want) {
		t.Errorf("unlisted %+v, want %+v", d.Unlisted, want)
	}
	out = text(d)
	for _, want := range []string{`! the names of 3 more deleted queues on the default exchange in vhost "/"`, "after:  each its own queue: a1, a2\n", "the names of 2 new queues"} {
		if !strings.Contains(out, want) {
			t.Errorf("text lacks %q:\n%s", want, out)
		}
	}
	// Past the cap and the shown names: the count is of them all.
	var many []string
	for i := range 30 {
		many = append(many, fmt.Sprintf("q%02d", i))
	}
	d = Compare(nil, names(many...), Options{MaxClasses: 20})
	if out := text(d); !strings.Contains(out, "the names of 30 new queues") || !strings.Contains(out, "q09 and 20 more\n") {
		t.Errorf("30 new queues, 20 listed:\n%s", out)
	}
	// Only the deleted ones past the cap lose messages.
	if d := Compare(names("x1", "x2", "x3", "x4"), nil, Options{MaxClasses: 3}); !d.LosesMessages() {
		t.Errorf("deleted queues past the cap: LosesMessages() = false")
	}
}

// TestClassBehindHeadersExchange: a class of messages published to a
// topic exchange bound to a headers exchange is told apart by its headers
// too: the text names the representative's headers (or none), not the key
// alone, which several classes share.
func TestClassBehindHeadersExchange(t *testing.T) {
	side := func(key string) *topology.Topology {
		return topo(exchange("front", "topic", nil), exchange("hdr", "headers", nil), queue("pdf", nil), queue("csv", nil),
			bindExchange("front", "hdr", key),
			bindHeaders("hdr", "pdf", topology.Args{"x-match": "all", "format": "pdf"}),
			bindHeaders("hdr", "csv", topology.Args{"x-match": "all", "format": "csv"}))
	}
	d := Compare(side("#"), side("a.#"), Options{})
	var text strings.Builder
	if err := WriteText(&text, d, TextOptions{}); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		`  ! key "" and headers {format="csv"} (matching #, {"format":"csv","x-match":"all"}) on exchange "front" in vhost "/"`,
		`  ! key "" and headers {format="pdf"} (matching #, {"format":"pdf","x-match":"all"}) on exchange "front" in vhost "/"`,
	} {
		if !strings.Contains(text.String(), want+"\n") {
			t.Errorf("text:\n%s\nwant the line %q", text.String(), want)
		}
	}
}

// TestCompareUnsimulatedPick: where mqctl cannot tell which destination
// an exchange picks (x-consistent-hash, a plugin; x-modulus-hash before
// RabbitMQ 4.3, for one routing key), a class routed to it goes to one of
// its queues, not to none: the flows say so and lose nothing. Before, a
// binding moved behind such an exchange read "after: no queue", a loss
// (exit 3), and a queue added to it "no message goes anywhere else".
func TestCompareUnsimulatedPick(t *testing.T) {
	tests := []struct {
		name, version, typ, key string
		want                    []string
	}{
		{"x-consistent-hash", "4.3", "x-consistent-hash", "1", []string{
			`key "a.x" (matching a.*) on exchange "front"`,
			`after:  one of q1, q2 (exchange "h", of type x-consistent-hash, picks one for each message by a hash mqctl does not simulate)`,
		}},
		{"x-modulus-hash on 4.0, one key", "4.0", "x-modulus-hash", "", []string{
			`key "a.b" (matching a.b) on exchange "front"`,
			`after:  one of q1, q2 (exchange "h", of type x-modulus-hash, picks one for each message by a hash mqctl does not simulate)`,
		}},
		{"an unknown plugin type", "4.3", "x-unknown", "", []string{
			`after:  some of q1, q2, or none (exchange "h" is of type x-unknown, which mqctl does not simulate: where it routes each message is unknown)`,
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ver, err := rmqversion.Parse(tc.version)
			if err != nil {
				t.Fatal(err)
			}
			pattern := "a.*"
			if tc.typ == "x-modulus-hash" {
				pattern = "a.b"
			}
			before := topo(exchange("front", "topic", nil), exchange("h", tc.typ, nil), queue("q1", nil), queue("q2", nil), bind("front", "q1", pattern))
			after := topo(exchange("front", "topic", nil), exchange("h", tc.typ, nil), queue("q1", nil), queue("q2", nil),
				bindExchange("front", "h", pattern), bind("h", "q1", tc.key), bind("h", "q2", tc.key))
			d := Compare(before, after, Options{Version: ver})
			if d.LosesMessages() {
				t.Errorf("loses messages: %s", show(t, d))
			}
			var text strings.Builder
			if err := WriteText(&text, d, TextOptions{}); err != nil {
				t.Fatal(err)
			}
			for _, w := range tc.want {
				if !strings.Contains(text.String(), w) {
					t.Errorf("the text does not say %q:\n%s", w, text.String())
				}
			}
		})
	}
}

// TestDeadLetterClassWithAFixedKey: dead letters that carry a dead-letter
// routing key on both sides, told apart by the headers exchange their
// dead-letter exchange leads to, are named by their headers: their key is
// the dead-letter routing key, not the class's example key. Before, the
// text said `with key "" and headers {fmt="pdf"}` beside `via "front",
// key "doc.x"`.
func TestDeadLetterClassWithAFixedKey(t *testing.T) {
	common := []obj{exchange("front", "topic", nil), exchange("hx", "headers", nil), bindExchange("front", "hx", "doc.#"),
		queue("hq", nil), bindHeaders("hx", "hq", topology.Args{"x-match": "any", "fmt": "pdf"})}
	before := topo(append(slices.Clone(common), queue("lim", nil))...)
	after := topo(append(slices.Clone(common), queue("lim", topology.Args{"x-dead-letter-exchange": "front", "x-dead-letter-routing-key": "doc.x"}))...)
	d := Compare(before, after, Options{})
	var text strings.Builder
	if err := WriteText(&text, d, TextOptions{}); err != nil {
		t.Fatal(err)
	}
	want := `dead letters of queue "lim" (rejected, expired by a per-message TTL) with headers {fmt="pdf"} (matching {"fmt":"pdf","x-match":"any"}) in vhost "/"`
	if !strings.Contains(text.String(), want) {
		t.Errorf("the text does not say %q:\n%s", want, text.String())
	}
	if strings.Contains(text.String(), `with key ""`) {
		t.Errorf("the text names the dead letters by a key they do not carry:\n%s", text.String())
	}
}

// TestSilencedListIsCapped: the text names silenced queues as it names
// other lists of queues (shownQueues, then "and N more"): the queues one
// cause cuts off are one entry, and past shownQueues causes in a vhost
// the rest are one entry. Before, deleting an exchange bound to 25
// queues listed 25 entries of four lines each, however many queues.
func TestSilencedListIsCapped(t *testing.T) {
	side := func(exchangeKept, bound bool) *topology.Topology {
		var objs []obj
		if exchangeKept {
			objs = append(objs, exchange("orders", "direct", nil))
		}
		for i := range 25 {
			q := fmt.Sprintf("q%02d", i)
			objs = append(objs, queue(q, nil))
			if bound {
				objs = append(objs, bind("orders", q, fmt.Sprintf("k%02d", i)))
			}
		}
		return topo(objs...)
	}
	tests := []struct {
		name       string
		after      *topology.Topology
		want       []string
		silenced   int // entries of silenced queues in the text
		notInclude string
	}{
		{"one cause", side(false, false), []string{
			`  ! 25 queues (q00, q01, q02, q03, q04, q05, q06, q07, q08, q09 and 15 more) in vhost "/"` + "\n" +
				"      before: reached through bindings or dead letters\n" +
				"      after:  nothing reaches them but the default exchange\n" +
				"      cause:  exchange \"orders\" is deleted\n",
		}, 1, `queue "q10"`},
		{"a cause each", side(true, false), []string{
			`  ! queue "q09" in vhost "/"` + "\n",
			`  ! 15 more queues (q10, q11, q12, q13, q14, q15, q16, q17, q18, q19 and 5 more) in vhost "/"` + "\n" +
				"      before: reached through bindings or dead letters\n" +
				"      after:  nothing reaches them but the default exchange\n" +
				"      cause:  15 other causes (-o json names each queue's)\n",
		}, 11, `queue "q10"`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			d := Compare(side(true, true), tc.after, Options{})
			if len(d.Silenced) != 25 {
				t.Fatalf("%d silenced queues, want 25 (the JSON lists each)", len(d.Silenced))
			}
			var text strings.Builder
			if err := WriteText(&text, d, TextOptions{}); err != nil {
				t.Fatal(err)
			}
			got := text.String()
			for _, w := range tc.want {
				if !strings.Contains(got, w) {
					t.Errorf("the text does not say\n%s\nin:\n%s", w, got)
				}
			}
			if n := strings.Count(got, "but the default exchange\n"); n != tc.silenced {
				t.Errorf("%d entries of silenced queues, want %d:\n%s", n, tc.silenced, got)
			}
			if strings.Contains(got, tc.notInclude) {
				t.Errorf("the text names %s on its own:\n%s", tc.notInclude, got)
			}
		})
	}
}

// TestKeyedClassOfAnExchangeThatIgnoresKeys: a fanout (or headers)
// exchange bound to one that routes by key has classes of keys, and the
// text names each by its key. Before, every class of a fanout exchange
// read "every message" (three entries of that name, each with other
// queues), one of keys no binding names too, and a headers exchange's
// left out the key that told them apart.
func TestKeyedClassOfAnExchangeThatIgnoresKeys(t *testing.T) {
	tests := []struct {
		name, typ string
		args      topology.Args // the front exchange's binding to orders
		want      []string
	}{
		{"fanout", "fanout", nil, []string{
			`  ! key "" (any key no binding names) on exchange "front" in vhost "/"` + "\n      before: lost\n      after:  no queue\n",
			`  ! key "order" (matching order.#) on exchange "front" in vhost "/"` + "\n      before: all\n      after:  no queue\n",
		}},
		{"headers", "headers", topology.Args{"x-match": "all"}, []string{
			`  ! key "" and no headers (matching {"x-match":"all"}) on exchange "front" in vhost "/"` + "\n      before: lost\n",
			`  ! key "order" and no headers (matching order.#, {"x-match":"all"}) on exchange "front" in vhost "/"` + "\n      before: all\n",
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			side := func(ae topology.Args, key string) *topology.Topology {
				return topo(exchange("front", tc.typ, nil), exchange("orders", "topic", ae), exchange("unrouted", "fanout", nil),
					queue("all", nil), queue("lost", nil), bind("orders", "all", key), bind("unrouted", "lost", ""),
					func(v *topology.Vhost) {
						v.Bindings = append(v.Bindings, &topology.Binding{Source: "front", Destination: "orders", DestinationType: topology.DestExchange, Arguments: tc.args.Normalized()})
					})
			}
			d := Compare(side(topology.Args{"alternate-exchange": "unrouted"}, "order.#"), side(nil, "order.*.eu"), Options{})
			var text strings.Builder
			if err := WriteText(&text, d, TextOptions{}); err != nil {
				t.Fatal(err)
			}
			for _, w := range tc.want {
				if !strings.Contains(text.String(), w) {
					t.Errorf("the text does not say\n%s\nin:\n%s", w, text.String())
				}
			}
			if strings.Contains(text.String(), "every message") {
				t.Errorf("the text names a class of keys every message:\n%s", text.String())
			}
			for _, r := range d.Routes {
				if r.Exchange == "front" && !r.Class.Keyed {
					t.Errorf("route %+v: not Keyed", r.Class)
				}
				if r.Exchange == "orders" && r.Class.Keyed {
					t.Errorf("route %+v of a topic exchange: Keyed", r.Class)
				}
			}
		})
	}
}

// TestClassThatNoCriterionMatches: a class of messages that a headers
// exchange on its way tells apart, and that none of its criteria matches,
// is named so: messages of its key with headers a criterion matches go
// elsewhere. Before, the text said `key "h" (matching h.#)` of it, as if
// every message of key "h" moved, and `(any key no binding names)` of a
// headers exchange's.
func TestClassThatNoCriterionMatches(t *testing.T) {
	side := func(hArgs topology.Args) *topology.Topology {
		return topo(exchange("x", "topic", nil), exchange("h", "headers", hArgs), exchange("ae", "fanout", nil),
			queue("qh", nil), queue("qa", nil), bindExchange("x", "h", "h.#"),
			bindHeaders("h", "qh", topology.Args{"x-match": "any", "t": "1"}), bind("ae", "qa", ""))
	}
	d := Compare(side(topology.Args{"alternate-exchange": "ae"}), side(nil), Options{})
	var text strings.Builder
	if err := WriteText(&text, d, TextOptions{}); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		`  ! headers {} (matching no binding) on exchange "h" in vhost "/"` + "\n      before: qa\n      after:  no queue\n",
		`  ! key "h" and headers that no binding matches (matching h.#) on exchange "x" in vhost "/"` + "\n      before: qa\n      after:  no queue\n",
	} {
		if !strings.Contains(text.String(), want) {
			t.Errorf("the text does not say\n%s\nin:\n%s", want, text.String())
		}
	}
	for _, r := range d.Routes {
		if !r.Class.ByHeaders {
			t.Errorf("route %+v: not ByHeaders", r.Class)
		}
	}
}

// TestDeadLettersNotToldApartByHeaders: where the criteria of the
// headers exchange dead letters reach name only headers the broker sets
// on them (x-first-death-reason), every dead letter of the reason goes
// alike, and the flows name no class of them. Before, the text said
// `dead letters of queue "q" (rejected) with headers {}`, as if only
// messages without headers moved. The queue has no message TTL: its
// expired dead letters are those of messages published with a TTL, which
// the change sends to dl where it dropped them.
func TestDeadLettersNotToldApartByHeaders(t *testing.T) {
	side := func(reason string) *topology.Topology {
		return topo(exchange("hx", "headers", nil), queue("q", topology.Args{"x-dead-letter-exchange": "hx"}), queue("dl", nil),
			bindHeaders("hx", "dl", topology.Args{"x-match": "all-with-x", "x-first-death-reason": reason}))
	}
	d := Compare(side("rejected"), side("expired"), Options{})
	if len(d.DeadLetters) != 2 || d.DeadLetters[0].Class != nil || !d.DeadLetters[0].Loses || d.DeadLetters[0].Reason != route.Rejected ||
		d.DeadLetters[1].Class != nil || d.DeadLetters[1].Loses || d.DeadLetters[1].Reason != route.Expired || !d.DeadLetters[1].PerMessageTTL {
		t.Fatalf("dead letters: want the rejected ones lost and the expired ones of a per-message TTL reaching dl, each of no class: %s", show(t, d.DeadLetters))
	}
	var text strings.Builder
	if err := WriteText(&text, d, TextOptions{}); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		`  ! dead letters of queue "q" (rejected) in vhost "/"` + "\n",
		`  ~ dead letters of queue "q" (expired by a per-message TTL) in vhost "/"` + "\n      before: dropped (via \"hx\", the message's key)\n      after:  dl (via \"hx\", the message's key)\n",
	} {
		if !strings.Contains(text.String(), want) {
			t.Errorf("the text does not say %q:\n%s", want, text.String())
		}
	}
	// The other way, only the expired dead letters are lost: before,
	// the flows said nothing of them, and the change lost no message.
	back := Compare(side("expired"), side("rejected"), Options{})
	if !back.LosesMessages() || !slices.ContainsFunc(back.DeadLetters, func(dl DeadLetter) bool { return dl.PerMessageTTL && dl.Loses }) {
		t.Errorf("the expired dead letters of a per-message TTL are dropped after the change: %s", show(t, back.DeadLetters))
	}
}

// TestPolicyTies: where two policies with different definitions match a
// queue at the same priority, RabbitMQ applies one of them, which is not
// defined, and the flows, which assume the first by name, say so. Before,
// they stated what the assumed policy does as fact: a queue that policies
// "cap" (a length limit) and "dl" (a dead-letter exchange) tie over read
// "dead letters dropped", where RabbitMQ may apply "dl" and keep it.
func TestPolicyTies(t *testing.T) {
	base := []obj{exchange("dlx", "fanout", nil), queue("a", nil), queue("dlq", nil), bind("dlx", "dlq", "")}
	dl := policy("dl", "^a$", "queues", topology.Args{"dead-letter-exchange": "dlx"})
	capped := policy("cap", "^a$", "queues", topology.Args{"max-length": int64(10)})
	same := policy("cap", "^a$", "queues", topology.Args{"dead-letter-exchange": "dlx"})
	tests := []struct {
		name          string
		before, after []obj
		want          []Tie
	}{
		{"a tie after the change", nil, []obj{dl, capped}, []Tie{{Vhost: "/", Side: "after", Kind: "queue", Name: "a", Assumed: "cap", Other: "dl"}}},
		{"a tie on both sides", []obj{dl, capped}, []obj{dl, capped, queue("b", nil)}, []Tie{{Vhost: "/", Side: "both", Kind: "queue", Name: "a", Assumed: "cap", Other: "dl"}}},
		{"policies alike do not matter", nil, []obj{dl, same}, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			d := Compare(topo(append(slices.Clone(base), tc.before...)...), topo(append(slices.Clone(base), tc.after...)...), Options{})
			if !reflect.DeepEqual(d.Ties, tc.want) {
				t.Fatalf("ties %s, want %s", show(t, d.Ties), show(t, tc.want))
			}
			var text strings.Builder
			if err := WriteText(&text, d, TextOptions{}); err != nil {
				t.Fatal(err)
			}
			want := `  (queue "a" in vhost "/" matches policies "cap" and "dl" at the same priority`
			if got := strings.Contains(text.String(), want); got != (tc.want != nil) {
				t.Errorf("the text says %q: %v, want %v:\n%s", want, got, tc.want != nil, text.String())
			}
		})
	}
}

// TestSplitThroughAnExchange: an x-modulus-hash exchange that picks among
// a queue and an exchange sends each message to the queue, or to every
// queue the exchange leads to (RabbitMQ 4.3.6: keys order.a..order.f
// reach s1 alone or e1 and e2 both). Before, the text said "one of e1,
// e2, s1".
func TestSplitThroughAnExchange(t *testing.T) {
	common := []obj{exchange("front", "topic", nil), exchange("shard", "x-modulus-hash", nil), exchange("fan", "fanout", nil),
		queue("s1", nil), queue("e1", nil), queue("e2", nil), bind("shard", "s1", ""), bindExchange("shard", "fan", ""), bind("fan", "e1", ""), bind("fan", "e2", "")}
	for _, tc := range []struct{ typ, version, want string }{
		{"x-modulus-hash", "4.3", `after:  one of s1, exchange "fan" (to e1, e2) (exchange "shard" picks one destination for each message by a hash of its routing key, and a message that goes to an exchange reaches each queue it leads to)`},
		{"x-consistent-hash", "4.3", `after:  one of s1, exchange "fan" (to e1, e2) (exchange "shard" picks one destination for each message by a hash mqctl does not simulate (type x-consistent-hash), and a message that goes to an exchange reaches each queue it leads to)`},
	} {
		t.Run(tc.typ, func(t *testing.T) {
			ver, err := rmqversion.Parse(tc.version)
			if err != nil {
				t.Fatal(err)
			}
			objs := slices.Clone(common)
			objs[1] = exchange("shard", tc.typ, nil)
			d := Compare(topo(objs...), topo(append(objs, bindExchange("front", "shard", "order.*"))...), Options{Version: ver})
			var text strings.Builder
			if err := WriteText(&text, d, TextOptions{}); err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(text.String(), tc.want+"\n") {
				t.Errorf("the text does not say\n%s\nin:\n%s", tc.want, text.String())
			}
			if len(d.Routes) != 1 || len(d.Routes[0].AfterSplits) != 1 ||
				!reflect.DeepEqual(d.Routes[0].AfterSplits[0].Through, []route.SplitThrough{{Exchange: "fan", Queues: []string{"e1", "e2"}}}) {
				t.Errorf("routes: %s", show(t, d.Routes))
			}
		})
	}
}

// TestFederatedQueueIsNotSilenced: a queue a federation policy applies to
// receives its upstream queues' messages through its federation link, not
// through an exchange: losing its binding does not leave it with nothing
// but the default exchange. Before, the flows said so and counted it lost.
func TestFederatedQueueIsNotSilenced(t *testing.T) {
	tests := []struct {
		name   string
		policy obj
		want   int // silenced queues
	}{
		{"federation-upstream-set", policy("fed", "^q$", "queues", topology.Args{"federation-upstream-set": "all"}), 0},
		{"federation-upstream", policy("fed", "^q$", "all", topology.Args{"federation-upstream": "up"}), 0},
		{"another policy", policy("cap", "^q$", "queues", topology.Args{"max-length": int64(10)}), 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			before := topo(exchange("ex", "direct", nil), queue("q", nil), bind("ex", "q", "k"), tc.policy)
			after := topo(exchange("ex", "direct", nil), queue("q", nil), tc.policy)
			if got := Compare(before, after, Options{}).Silenced; len(got) != tc.want {
				t.Errorf("silenced %s, want %d", show(t, got), tc.want)
			}
		})
	}
}

// shovel declares a shovel in vhost "/" with settings s.
func shovel(name string, s topology.Args) obj {
	return func(v *topology.Vhost) {
		v.Items.Put(&topology.Item{Kind: kind.Shovel, Name: name, Settings: s})
	}
}

// TestShovelledQueueIsNotSilenced: a queue a shovel publishes to (its
// dest-queue, or a dest-exchange that routes to it) on this broker gets
// the shovel's messages through no binding of the file: losing its
// binding does not leave it with nothing but the default exchange. Before,
// the flows said so and counted it lost (diff exit 3).
func TestShovelledQueueIsNotSilenced(t *testing.T) {
	tests := []struct {
		name   string
		shovel obj
		extra  []obj // after only
		want   int   // silenced queues
	}{
		{"dest-queue", shovel("s", topology.Args{"src-uri": "amqp://", "src-queue": "in", "dest-uri": "amqp://", "dest-queue": "q"}), nil, 0},
		{"dest-queue, amqp:/// of its vhost", shovel("s", topology.Args{"src-uri": "amqp:///%2F", "src-queue": "in", "dest-uri": "amqp:///%2F", "dest-queue": "q"}), nil, 0},
		{"amqp10 /queues/q", shovel("s", topology.Args{"src-protocol": "amqp10", "src-uri": "amqp://", "src-address": "/queues/in", "dest-protocol": "amqp10", "dest-uri": "amqp://", "dest-address": "/queues/q"}), nil, 0},
		{"local protocol, host named", shovel("s", topology.Args{"src-protocol": "local", "src-uri": "amqp://localhost", "src-queue": "in", "dest-protocol": "local", "dest-uri": "amqp://localhost", "dest-queue": "q"}), nil, 0},
		{"another vhost", shovel("s", topology.Args{"src-uri": "amqp://", "src-queue": "in", "dest-uri": "amqp:///other", "dest-queue": "q"}), nil, 1},
		{"a host, which may be another broker (TestShovelByHost)", shovel("s", topology.Args{"src-uri": "amqp://", "src-queue": "in", "dest-uri": "amqp://remote", "dest-queue": "q"}), nil, 1},
		{"another queue", shovel("s", topology.Args{"src-uri": "amqp://", "src-queue": "in", "dest-uri": "amqp://", "dest-queue": "in2"}), nil, 1},
		{"dest-exchange routing elsewhere", shovel("s", topology.Args{"src-uri": "amqp://", "src-queue": "in", "dest-uri": "amqp://", "dest-exchange": "moved"}),
			[]obj{exchange("moved", "fanout", nil), queue("other", nil), bind("moved", "other", "")}, 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			before := topo(exchange("ex", "direct", nil), queue("q", nil), queue("in", nil), bind("ex", "q", "k"), tc.shovel)
			after := topo(append([]obj{exchange("ex", "direct", nil), queue("q", nil), queue("in", nil), tc.shovel}, tc.extra...)...)
			d := Compare(before, after, Options{})
			if got := d.Silenced; len(got) != tc.want {
				t.Errorf("silenced %s, want %d", show(t, got), tc.want)
			}
		})
	}
}

// TestRefusingQueueIsNotReached: a classic queue with a length limit of
// 0 and overflow reject-publish (or reject-publish-dlx) refuses every
// message (the publisher gets a basic.nack; measured on RabbitMQ 4.3.6,
// 4.0.5 and 3.10.8: two publishes with confirms nacked, none kept, the
// same with a quorum queue keeping the first). Before, the flows said the
// class still reached it, and that no message went elsewhere.
func TestRefusingQueueIsNotReached(t *testing.T) {
	zero := func(overflow string) topology.Args {
		return topology.Args{"x-max-length": int64(0), "x-overflow": overflow}
	}
	quorum := func(name string, args topology.Args) obj {
		return func(v *topology.Vhost) {
			v.Queues[name] = &topology.Queue{Name: name, Type: topology.QueueQuorum, Durable: true, Arguments: args.Normalized()}
		}
	}
	tests := []struct {
		name  string
		after []obj // q and what else the after side declares (dlq on both)
		want  []Route
	}{
		{"reject-publish", []obj{queue("q", zero("reject-publish"))}, []Route{{Vhost: "/", Exchange: "ex", Before: []string{"q"}, Loses: true,
			Cause: `queue "q" refuses it: its length limit is 0 with overflow reject-publish: it refuses every message (the publisher gets a basic.nack)`}}},
		{"reject-publish-dlx", []obj{queue("q", zero("reject-publish-dlx"))}, []Route{{Vhost: "/", Exchange: "ex", Before: []string{"q"}, Loses: true,
			Cause: `queue "q" refuses it: its length limit is 0 with overflow reject-publish-dlx: it refuses every message (the publisher gets a basic.nack) and dead-letters it`}}},
		{"reject-publish-dlx, dead-lettered", []obj{queue("q", topology.Args{"x-max-length": int64(0), "x-overflow": "reject-publish-dlx", "x-dead-letter-exchange": "", "x-dead-letter-routing-key": "dlq"}), queue("dlq", nil)},
			[]Route{{Vhost: "/", Exchange: "ex", Before: []string{"q"},
				Cause: `queue "q" refuses it: its length limit is 0 with overflow reject-publish-dlx: it refuses every message (the publisher gets a basic.nack) and dead-letters it to dlq`}}},
		{"by a policy", []obj{queue("q", nil), policy("cap", "^q$", "queues", topology.Args{"max-length": int64(0), "overflow": "reject-publish"})},
			[]Route{{Vhost: "/", Exchange: "ex", Before: []string{"q"}, Loses: true,
				Cause: `queue "q" refuses it: its length limit is 0 with overflow reject-publish: it refuses every message (the publisher gets a basic.nack)`}}},
		{"drop-head keeps routing it", []obj{queue("q", zero("drop-head"))}, nil},
		{"a quorum queue takes one", []obj{quorum("q", zero("reject-publish"))}, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			before := topo(exchange("ex", "fanout", nil), queue("q", nil), queue("dlq", nil), bind("ex", "q", ""))
			after := topo(append([]obj{exchange("ex", "fanout", nil), queue("dlq", nil), bind("ex", "q", "")}, tc.after...)...)
			if tc.name == "a quorum queue takes one" {
				before = topo(exchange("ex", "fanout", nil), quorum("q", nil), queue("dlq", nil), bind("ex", "q", ""))
			}
			// The default exchange's route to q (TestRefusingQueueByName)
			// is left out.
			got := routesOf(Compare(before, after, Options{}).Routes, "ex")
			for i := range got {
				got[i].Class = Class{}
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("routes %s, want %s", show(t, got), show(t, tc.want))
			}
			back := routesOf(Compare(after, before, Options{}).Routes, "ex")
			if len(tc.want) > 0 && (len(back) != 1 || !slices.Equal(back[0].After, []string{"q"}) || !strings.Contains(back[0].Cause, "refused it before the change")) {
				t.Errorf("the change undone: routes %s, want q reached again, the cause saying it refused before", show(t, back))
			}
		})
	}
}

// TestEachLostQueueHasItsCause: a class that loses two queues for
// different reasons names both reasons (before, only the first lost
// queue's: the corpus's AlexandreNoguez file, files.validated.x losing
// q.extractor, deleted, and q.thumbnail, unbound, said only that
// q.extractor was deleted); a reason both share is said once.
func TestEachLostQueueHasItsCause(t *testing.T) {
	tests := []struct {
		name          string
		before, after []obj
		want          string
	}{
		{"two reasons",
			[]obj{exchange("ev", "topic", nil), queue("q.extractor", nil), queue("q.thumbnail", nil), bind("ev", "q.extractor", "files.validated.*"), bind("ev", "q.thumbnail", "files.validated.*")},
			[]obj{exchange("ev", "topic", nil), queue("q.thumbnail", nil)},
			`queue "q.extractor" is deleted; the binding from "ev" to "q.thumbnail" with key "files.validated.*" is gone`},
		{"one reason for both",
			[]obj{exchange("ev", "topic", nil), exchange("mid", "fanout", nil), queue("a", nil), queue("b", nil), queue("c", nil), bindExchange("ev", "mid", "files.#"), bind("mid", "a", ""), bind("mid", "b", ""), bind("ev", "c", "files.#")},
			[]obj{exchange("ev", "topic", nil), exchange("mid", "fanout", nil), queue("a", nil), queue("b", nil), queue("c", nil), bind("mid", "a", ""), bind("mid", "b", ""), bind("ev", "c", "files.#")},
			`the binding from "ev" to "mid" with key "files.#" is gone`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var got []string
			for _, r := range Compare(topo(tc.before...), topo(tc.after...), Options{}).Routes {
				if r.Exchange == "ev" {
					got = append(got, r.Cause)
				}
			}
			if !slices.Equal(got, []string{tc.want}) {
				t.Errorf("causes %q, want %q", got, tc.want)
			}
		})
	}
}

// routesOf returns the routes of exchange x among rs.
func routesOf(rs []Route, x string) []Route {
	var out []Route
	for _, r := range rs {
		if r.Exchange == x {
			out = append(out, r)
		}
	}
	return out
}

// TestRefusingQueueByName: a message published to the default exchange
// with a queue's name as key is refused as one through any exchange is,
// when the queue refuses every message (a classic queue with a length
// limit of 0 and reject-publish; measured on RabbitMQ 4.3.6, 4.0.5 and
// 3.10.8: the publish to "" with key q nacked). Before, the flows did
// not list the route of a queue declared on both sides that refuses on
// one side only, and listed a new queue that refuses every message as
// reached by its name (and a deleted one as losing messages it never
// took).
func TestRefusingQueueByName(t *testing.T) {
	zero := func(overflow string) topology.Args {
		return topology.Args{"x-max-length": int64(0), "x-overflow": overflow}
	}
	const refuses = `queue "q" refuses it: its length limit is 0 with overflow reject-publish: it refuses every message (the publisher gets a basic.nack)`
	const refused = `queue "q" refused it before the change: its length limit is 0 with overflow reject-publish: it refuses every message (the publisher gets a basic.nack)`
	tests := []struct {
		name          string
		before, after []obj
		want          []Route
	}{
		{"now refuses", []obj{queue("q", nil)}, []obj{queue("q", zero("reject-publish"))},
			[]Route{{Vhost: "/", Before: []string{"q"}, Loses: true, Cause: refuses}}},
		{"by a policy", []obj{queue("q", nil)}, []obj{queue("q", nil), policy("cap", "^q$", "queues", topology.Args{"max-length": int64(0), "overflow": "reject-publish"})},
			[]Route{{Vhost: "/", Before: []string{"q"}, Loses: true, Cause: refuses}}},
		{"refused before", []obj{queue("q", zero("reject-publish"))}, []obj{queue("q", nil)},
			[]Route{{Vhost: "/", After: []string{"q"}, Cause: refused}}},
		{"refused and dead-lettered to a queue", []obj{queue("q", nil), queue("dlq", nil)},
			[]obj{queue("q", topology.Args{"x-max-length": int64(0), "x-overflow": "reject-publish-dlx", "x-dead-letter-exchange": "", "x-dead-letter-routing-key": "dlq"}), queue("dlq", nil)},
			[]Route{{Vhost: "/", Before: []string{"q"},
				Cause: `queue "q" refuses it: its length limit is 0 with overflow reject-publish-dlx: it refuses every message (the publisher gets a basic.nack) and dead-letters it to dlq`}}},
		{"a new queue that refuses is reached by nothing", nil, []obj{queue("q", zero("reject-publish"))}, nil},
		{"a deleted queue that refused loses nothing", []obj{queue("q", zero("reject-publish"))}, nil, nil},
		{"drop-head keeps taking it", []obj{queue("q", nil)}, []obj{queue("q", zero("drop-head"))}, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			d := Compare(topo(tc.before...), topo(tc.after...), Options{})
			got := routesOf(d.Routes, "")
			for i := range got {
				got[i].Class = Class{}
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("routes %s, want %s", show(t, got), show(t, tc.want))
			}
			var b strings.Builder
			if err := WriteText(&b, d, TextOptions{}); err != nil {
				t.Fatal(err)
			}
			if len(tc.want) > 0 && tc.want[0].Before == nil && strings.Contains(b.String(), "new queue") {
				t.Errorf("a queue declared on both sides is shown as new:\n%s", b.String())
			}
		})
	}
}

// TestKeysBehindTypeChange: an exchange whose type changes in front of
// one that routes by key (through an exchange-to-exchange binding) passes
// the key on, on both sides: each class is named by its key, whatever
// the front exchange's kind on each side. Before, a side where the front
// ignored keys was left out of the class's name (a fanout made headers
// in front of a topic exchange named its classes `headers {} (matching
// a.x after the change)`, the key that decides hidden), and the JSON
// class said nothing of keys (keyed false). Checked by publishing on
// RabbitMQ 4.3.6, 4.0.5 and 3.10.8 (live script plan_flows_type_change).
func TestKeysBehindTypeChange(t *testing.T) {
	side := func(front, back string, frontBinding obj, objs ...obj) *topology.Topology {
		return topo(append([]obj{exchange("front", front, nil), exchange("back", back, nil), frontBinding}, objs...)...)
	}
	topicBack := []obj{queue("qa", nil), queue("qb", nil), bind("back", "qa", "a.x"), bind("back", "qb", "b.#")}
	crit := func(v *topology.Vhost) {
		v.Bindings = append(v.Bindings, &topology.Binding{Source: "front", Destination: "back", DestinationType: topology.DestExchange, RoutingKey: "a.*",
			Arguments: topology.Args{"x-match": "all", "t": "1"}.Normalized()})
	}
	tests := []struct {
		name          string
		before, after *topology.Topology
		want          []string // the entries' first lines
	}{
		{"fanout made topic in front of a topic exchange",
			side("fanout", "topic", bindExchange("front", "back", "a.*"), topicBack...), side("topic", "topic", bindExchange("front", "back", "a.*"), topicBack...),
			[]string{`  ! key "b" (matching b.# before and after the change) on exchange "front" in vhost "/"`}},
		{"fanout made headers in front of a topic exchange",
			side("fanout", "topic", crit, topicBack...), side("headers", "topic", crit, topicBack...),
			[]string{`  ! key "a.x" and headers {} (matching a.x before and after the change) on exchange "front" in vhost "/"`,
				`  ! key "b" and headers {} (matching b.# before and after the change) on exchange "front" in vhost "/"`}},
		{"direct made headers in front of a direct exchange",
			side("direct", "direct", bindExchange("front", "back", "k1"), queue("q1", nil), queue("q2", nil), bind("back", "q1", "k1"), bind("back", "q2", "k2")),
			side("headers", "direct", bindExchange("front", "back", "k1"), queue("q1", nil), queue("q2", nil), bind("back", "q1", "k1"), bind("back", "q2", "k2")),
			[]string{`  ~ key "k2" and no headers (matching k2 before the change; matching k2, {} after the change) on exchange "front" in vhost "/"`}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			d := Compare(tc.before, tc.after, Options{})
			for _, r := range d.Routes {
				if !r.Class.Keyed || r.Class.Before == nil {
					t.Errorf("route %s: want a keyed class with its sides", show(t, r))
				}
			}
			var text strings.Builder
			if err := WriteText(&text, d, TextOptions{}); err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, l := range strings.Split(text.String(), "\n") {
				if strings.HasPrefix(l, "  ! ") || strings.HasPrefix(l, "  ~ ") {
					got = append(got, l)
				}
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("entries:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(tc.want, "\n"))
			}
		})
	}
}

// TestShovelByHost: a shovel whose dest-uri names a host publishes to
// this broker when the host is the node's own machine (a loopback
// address, localhost, a node's host name: the node that runs the shovel
// reads the URI) and the port one of the broker's AMQP listeners'
// (measured on RabbitMQ 4.3.6, 4.0.5 and 3.10.8: a shovel from
// amqp://localhost:PORT/v to amqp://guest@127.0.0.1:PORT/v moves the
// message into the queue; on the 4.0.5 node, amqp://localhost/v is port
// 5672, the 4.3.6 broker beside it). plan knows the listeners
// (Options.Here); mqctl diff does not, and cannot tell of any host: the
// queue is then silenced with Unknown set, not counted lost. Before, a
// queue such a shovel fed was silenced, and counted lost, always.
func TestShovelByHost(t *testing.T) {
	here := &Here{Hosts: []string{"node1"}, Ports: []int{5672}, TLSPorts: []int{5671}}
	const (
		fed     = "fed"
		lost    = "lost"
		unknown = "unknown"
	)
	tests := []struct {
		uri  string
		here *Here
		want string
	}{
		{"amqp://localhost", nil, unknown},
		{"amqp://127.0.0.1:5672/%2F", nil, unknown},
		{"amqp://guest@localhost/%2F", nil, unknown},
		{"amqp://remote", nil, unknown},
		{"amqp://localhost/other", nil, lost}, // another vhost, wherever it is
		{"amqp://", nil, fed},
		{"amqp://localhost", here, fed},
		{"amqp://127.0.0.1:5672/%2F", here, fed},
		{"amqp://guest@localhost/%2F", here, fed},
		{"amqp://[::1]:5672", here, fed},
		{"amqp://LOCALHOST", here, fed},
		{"amqp://node1", here, fed},
		{"amqps://localhost", here, fed},
		{"amqp://localhost:5872", here, lost},
		{"amqps://localhost:5672", here, lost},
		{"amqp://localhost/other", here, lost},
		{"amqp://remote", here, unknown},
		{"amqp://node2:5672", here, unknown},
		{"amqp://remote:5672/%2F?heartbeat=5", here, unknown},
	}
	for _, tc := range tests {
		name := tc.uri + " offline"
		if tc.here != nil {
			name = tc.uri + " live"
		}
		t.Run(name, func(t *testing.T) {
			sh := shovel("s", topology.Args{"src-uri": "amqp://", "src-queue": "in", "dest-uri": tc.uri, "dest-queue": "q"})
			before := topo(exchange("ex", "direct", nil), queue("q", nil), queue("in", nil), bind("ex", "q", "k"), sh)
			after := topo(exchange("ex", "direct", nil), queue("q", nil), queue("in", nil), sh)
			d := Compare(before, after, Options{Here: tc.here})
			got := fed
			switch {
			case len(d.Silenced) == 1 && d.Silenced[0].Unknown != "":
				got = unknown
				if !strings.Contains(d.Silenced[0].Unknown, `shovel "s"`) || strings.Contains(d.Silenced[0].Unknown, "guest") {
					t.Errorf("unknown %q: want it to name the shovel, and no credentials", d.Silenced[0].Unknown)
				}
			case len(d.Silenced) == 1:
				got = lost
			case len(d.Silenced) > 1:
				t.Fatalf("silenced %s", show(t, d.Silenced))
			}
			if got != tc.want {
				t.Errorf("queue q %s, want %s: %s", got, tc.want, show(t, d.Silenced))
			}
			// The key the binding routed is unroutable whatever the shovel:
			// only the queue's silencing is in doubt.
			if loses := d.LosesMessages(); !loses {
				t.Error("the change loses no message, want the key k lost")
			}
			var text strings.Builder
			if err := WriteText(&text, d, TextOptions{}); err != nil {
				t.Fatal(err)
			}
			if marked := strings.Contains(text.String(), "  ? queue \"q\""); marked != (got == unknown) {
				t.Errorf("text:\n%s\nwant the queue marked ? only when unknown", text.String())
			}
		})
	}
	// Unknown alone does not lose messages.
	sh := shovel("s", topology.Args{"src-uri": "amqp://", "src-queue": "in", "dest-uri": "amqp://remote", "dest-queue": "q"})
	d := Compare(topo(exchange("ex", "fanout", nil), queue("q", nil), queue("in", nil), bind("ex", "q", ""), sh), topo(queue("q", nil), queue("in", nil), sh), Options{})
	d.Routes = nil // the fanout's lost route: only the queue is left
	if d.LosesMessages() || len(d.Silenced) != 1 || !strings.HasPrefix(d.Summary(), "1 queue may lose messages: mqctl cannot tell") {
		t.Errorf("a silenced queue mqctl cannot tell of: loses %v, summary %q", d.LosesMessages(), d.Summary())
	}
}

// TestDeadLettersToRefusingQueue: dead letters routed only to queues that
// refuse every message are refused too: dropped (measured on RabbitMQ
// 4.3.6, 4.0.5 and 3.10.8: an expired dead letter routed to a classic
// queue with a length limit of 0 and reject-publish is kept nowhere),
// dead-lettered on where that queue has reject-publish-dlx (the dead
// letter reached its dead-letter queue), held where the queue they come
// from dead-letters at least once (its worker retries the rejected
// ones). Before, the cause said the default exchange had no queue of the
// name, and through an exchange the dead letters went to a queue named
// "" (the simulator's remembered list, cleared by the filter), neither
// dropped nor lost.
func TestDeadLettersToRefusingQueue(t *testing.T) {
	zero := topology.Args{"x-max-length": int64(0), "x-overflow": "reject-publish"}
	const refuses = `queue "parked" refuses them: its length limit is 0 with overflow reject-publish: it refuses every message (the publisher gets a basic.nack)`
	quorum := func(name string, args topology.Args) obj {
		return func(v *topology.Vhost) {
			v.Queues[name] = &topology.Queue{Name: name, Type: topology.QueueQuorum, Durable: true, Arguments: args.Normalized()}
		}
	}
	tests := []struct {
		name   string
		work   obj            // the queue whose dead letters go to parked
		extra  []obj          // both sides
		parked obj            // parked after the change
		want   *DeadLetterEnd // work's rejected dead letters after
		loses  bool
	}{
		{"by the default exchange", queue("work", topology.Args{"x-dead-letter-exchange": "", "x-dead-letter-routing-key": "parked"}), nil, queue("parked", zero),
			&DeadLetterEnd{Configured: true, RoutingKey: "parked", Dropped: true, Why: refuses}, true},
		{"through a fanout exchange", queue("work", topology.Args{"x-dead-letter-exchange": "dlx"}), []obj{exchange("dlx", "fanout", nil), bind("dlx", "parked", "")}, queue("parked", zero),
			&DeadLetterEnd{Configured: true, Exchange: "dlx", KeyFromMessage: true, Dropped: true, Why: refuses}, true},
		{"dead-lettered on", queue("work", topology.Args{"x-dead-letter-exchange": "", "x-dead-letter-routing-key": "parked"}), []obj{queue("final", nil)},
			queue("parked", topology.Args{"x-max-length": int64(0), "x-overflow": "reject-publish-dlx", "x-dead-letter-exchange": "", "x-dead-letter-routing-key": "final"}),
			&DeadLetterEnd{Configured: true, RoutingKey: "parked", Queues: []string{"final"}}, false},
		{"held by an at-least-once quorum queue",
			quorum("work", topology.Args{"x-dead-letter-exchange": "", "x-dead-letter-routing-key": "parked", "x-dead-letter-strategy": "at-least-once", "x-overflow": "reject-publish"}), nil, queue("parked", zero),
			&DeadLetterEnd{Configured: true, RoutingKey: "parked", Held: true, Why: refuses}, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			before := topo(append([]obj{tc.work, queue("parked", nil)}, tc.extra...)...)
			after := topo(append([]obj{tc.work, tc.parked}, tc.extra...)...)
			d := Compare(before, after, Options{})
			var got *DeadLetter
			for i := range d.DeadLetters {
				if dl := &d.DeadLetters[i]; dl.Queue == "work" && dl.Reason == route.Rejected {
					got = dl
				}
			}
			if got == nil {
				t.Fatalf("no change of work's rejected dead letters: %s", show(t, d.DeadLetters))
			}
			if !reflect.DeepEqual(got.After, tc.want) || got.Loses != tc.loses {
				t.Errorf("after %s (loses %v), want %s (loses %v)", show(t, got.After), got.Loses, show(t, tc.want), tc.loses)
			}
		})
	}
}
