package lint

import (
	"fmt"
	"strings"
	"testing"

	"github.com/mqctl/mqctl/pkg/kind"
	"github.com/mqctl/mqctl/pkg/rmqversion"
	"github.com/mqctl/mqctl/pkg/topology"
)

type ruleCase struct {
	name  string
	id    string
	build func(b *builder)
	// fire lists object names that must get a finding of rule id; an empty
	// list means the rule must stay silent.
	fire []string
	// quiet lists object names that must not get one.
	quiet []string
	// contains are substrings the (first) finding's message must contain.
	contains []string
	// absent are substrings no finding's message may contain.
	absent []string
	// opts run the case (zero: RabbitMQ 4.0, default severities).
	opts Options
	// severity, when set, is the severity every finding of rule id must have.
	severity Severity
}

func ruleCases() []ruleCase {
	return []ruleCase{
		// MQ101
		{name: "queue without DLX", id: "MQ101",
			build: func(b *builder) {
				b.exchange("jobs", "direct")
				b.queue("work", topology.Args{argMaxLen: 10})
				b.bind("jobs", "work", "work")
			},
			fire: []string{"work"}, contains: []string{`queue "work" has no dead-letter exchange`, "dead_letter:"}},
		{name: "working queue with DLQ, and the DLQ itself", id: "MQ101",
			build: func(b *builder) {
				b.exchange("jobs", "direct")
				b.exchange("jobs.dlx", "direct")
				b.dlqPair("work", "jobs", "work", "jobs.dlx", nil)
			},
			quiet: []string{"work", "work.dlq"}},
		{name: "DLQ recognised by routing, not by role or name", id: "MQ101",
			build: func(b *builder) {
				b.exchange("jobs", "direct")
				b.exchange("failures", "fanout")
				b.queue("work", topology.Args{argDLX: "failures"})
				b.bind("jobs", "work", "work")
				b.queue("parking", nil) // plain working role, no .dlq suffix
				b.bind("failures", "parking", "")
			},
			quiet: []string{"work", "parking"}},
		{name: "delay queue is not asked for a DLX of its own", id: "MQ101",
			build: func(b *builder) {
				b.exchange("jobs", "direct")
				b.exchange("jobs.dlx", "direct")
				b.dlqPair("work", "jobs", "work", "jobs.dlx", nil)
				b.queue("work.retry.10s", topology.Args{argTTL: 10000, argDLX: "", argDLRK: "work"})
			},
			quiet: []string{"work", "work.dlq", "work.retry.10s"}},
		{name: "DLX from a policy counts", id: "MQ101",
			build: func(b *builder) {
				b.exchange("dlx", "fanout")
				b.queue("work", nil)
				b.queue("dead", nil)
				b.bind("dlx", "dead", "")
				b.policy("dl", "^work$", topology.Args{"dead-letter-exchange": "dlx"})
			},
			quiet: []string{"work", "dead"}},

		// MQ102
		{name: "DLX not declared", id: "MQ102",
			build: func(b *builder) { b.queue("work", topology.Args{argDLX: "nope"}) },
			fire:  []string{"work"}, contains: []string{`exchange "nope"`, "not declared", "Declare exchange"}},
		{name: "DLX not declared, set by policy", id: "MQ102",
			build: func(b *builder) {
				b.queue("work", nil)
				b.policy("dl", ".*", topology.Args{"dead-letter-exchange": "nope"})
			},
			fire: []string{"work"}, contains: []string{"policy"}},
		{name: "DLX declared, default exchange and amq.*", id: "MQ102",
			build: func(b *builder) {
				b.exchange("dlx", "fanout")
				b.queue("a", topology.Args{argDLX: "dlx"})
				b.queue("b", topology.Args{argDLX: "", argDLRK: "a"})
				b.queue("c", topology.Args{argDLX: "amq.fanout"})
			},
			quiet: []string{"a", "b", "c"}},

		// MQ103
		{name: "dead-letter exchange from a policy, no key of its own", id: "MQ103",
			build: func(b *builder) {
				b.exchange("x", "fanout")
				b.exchange("dlx", "direct")
				b.queue("b", nil)
				b.bind("x", "b", "")
				b.policy("dl", "^b$", topology.Args{"dead-letter-exchange": "dlx"})
			},
			fire: []string{"b"},
			contains: []string{`no binding matches: RabbitMQ drops them silently. Give the queue its own dead-letter routing key, and a DLQ bound with it: its dead-letter exchange comes from dead-letter-exchange of policy "dl"`,
				`so set both on the queue — dead_letter: {exchange: dlx, queue: b.dlq} declares the DLQ and binds it with the key "b"`}},
		{name: "dead-letter routing key bound nowhere", id: "MQ103",
			build: func(b *builder) {
				b.exchange("dlx", "direct")
				b.queue("work", topology.Args{argDLX: "dlx", argDLRK: "work"})
				b.queue("other.dlq", nil)
				b.bind("dlx", "other.dlq", "other")
			},
			fire: []string{"work"}, contains: []string{`routing key "work"`, "no binding matches", "drops them"}},
		{name: "message's own key bound nowhere on the DLX", id: "MQ103",
			build: func(b *builder) {
				b.exchange("orders", "direct")
				b.exchange("dlx", "topic")
				b.queue("work", topology.Args{argDLX: "dlx"})
				b.bind("orders", "work", "order.created")
				b.queue("dead", nil)
				b.bind("dlx", "dead", "payment.#")
			},
			fire: []string{"work"}, contains: []string{`key "order.created"`, "x-dead-letter-routing-key"}},
		{name: "DLX with nothing bound at all", id: "MQ103",
			build: func(b *builder) {
				b.exchange("dlx", "fanout")
				b.queue("work", topology.Args{argDLX: "dlx", argDLRK: "x"})
			},
			fire: []string{"work"}},
		{name: "dead letters reach their DLQ (also through a topic pattern)", id: "MQ103",
			build: func(b *builder) {
				b.exchange("orders", "topic")
				b.exchange("dlx", "topic")
				b.dlqPair("a", "orders", "order.*", "dlx", nil)
				b.queue("b", topology.Args{argDLX: "dlx"})
				b.bind("orders", "b", "order.#")
				b.queue("b.dead", nil)
				b.bind("dlx", "b.dead", "order.#")
			},
			quiet: []string{"a", "b"}},
		{name: "DLX of a plugin type the simulation cannot follow", id: "MQ103",
			build: func(b *builder) {
				b.exchange("hash", "x-consistent-hash")
				b.queue("work", topology.Args{argDLX: "hash", argDLRK: "work"})
				b.queue("dead", nil)
				b.bind("hash", "dead", "10")
			},
			quiet: []string{"work"}},
		{name: "queue behind a plugin-type DLX counts as a DLQ", id: "MQ101",
			build: func(b *builder) {
				b.exchange("hash", "x-consistent-hash")
				b.queue("work", topology.Args{argDLX: "hash", argDLRK: "work"})
				b.queue("dead", nil)
				b.bind("hash", "dead", "10")
			},
			quiet: []string{"work", "dead"}},

		// MQ104
		// A dead-letter exchange from a policy: the fix sets the exchange
		// and the key on the queue (RabbitMQ refuses a queue with
		// x-dead-letter-routing-key and no x-dead-letter-exchange).
		{name: "dead-letter exchange from a policy, keys shared", id: "MQ104",
			build: func(b *builder) {
				b.exchange("x", "fanout")
				b.exchange("dlx", "direct")
				for _, q := range []string{"orders", "billing"} {
					b.queue(q, nil)
					b.bind("x", q, "")
					b.queue(q+".dlq", nil)
					b.bind("dlx", q+".dlq", q)
				}
				b.policy("dl", "^(orders|billing)$", topology.Args{"dead-letter-exchange": "dlx"})
			},
			fire:     []string{"orders", "billing"},
			contains: []string{`Give the queue its own dead-letter routing key, and a DLQ bound with it: its dead-letter exchange comes from dead-letter-exchange of policy "dl", whose one dead-letter-routing-key every queue it matches would share, and RabbitMQ refuses a queue with x-dead-letter-routing-key but no x-dead-letter-exchange of its own, so set both on the queue — dead_letter: {exchange: dlx, queue: billing.dlq} declares the DLQ and binds it with the key "billing"`}},
		// A queue fed only through the alternate exchange of a dead-letter
		// exchange collects dead letters: none of it is regular traffic.
		{name: "dead letters caught by the alternate exchange of their dead-letter exchange", id: "MQ104",
			build: func(b *builder) {
				b.exchange("x", "fanout")
				b.exchange("dlx", "direct").Arguments = topology.Args{argAlternate: "catch"}
				b.exchange("catch", "fanout")
				b.queue("work", topology.Args{argDLX: "dlx", argDLRK: "nomatch"})
				b.bind("x", "work", "")
				b.queue("caught", nil)
				b.bind("catch", "caught", "")
			},
			quiet: []string{"work", "caught"}},
		{name: "shared DLX without per-queue keys", id: "MQ104",
			build: func(b *builder) {
				b.exchange("orders", "topic")
				b.exchange("orders.dlx", "direct")
				for _, q := range []string{"orders.billing", "orders.shipping"} {
					b.queue(q, topology.Args{argDLX: "orders.dlx"})
					b.bind("orders", q, "order.created")
					b.queue(q+".dlq", nil)
					b.bind("orders.dlx", q+".dlq", "order.created")
				}
			},
			fire:     []string{"orders.billing", "orders.shipping"},
			contains: []string{"reach 2 queues", "orders.billing.dlq", "orders.shipping.dlq", "x-dead-letter-routing-key: orders.billing"}},
		{name: "dead letters land in a working queue", id: "MQ104",
			build: func(b *builder) {
				b.exchange("jobs", "direct")
				b.queue("a", topology.Args{argDLX: "", argDLRK: "b"})
				b.bind("jobs", "a", "a")
				b.queue("b", nil)
				b.bind("jobs", "b", "b")
			},
			fire: []string{"a"}, contains: []string{"regular traffic"}},
		{name: "dead letters land in another queue's declared DLQ", id: "MQ104",
			build: func(b *builder) {
				b.exchange("jobs", "direct")
				b.exchange("dlx", "direct")
				b.dlqPair("a", "jobs", "a", "dlx", nil)
				b.queue("b", topology.Args{argDLX: "dlx", argDLRK: "a"})
				b.bind("jobs", "b", "b")
			},
			fire: []string{"b"}, quiet: []string{"a"}, contains: []string{`the DLQ of queue "a"`}},
		{name: "one shared DLQ as the only destination", id: "MQ104",
			build: func(b *builder) {
				b.exchange("orders", "topic")
				b.exchange("dlx", "fanout")
				for _, q := range []string{"orders.billing", "orders.shipping"} {
					b.queue(q, topology.Args{argDLX: "dlx"})
					b.bind("orders", q, "order.created")
				}
				b.queue("all.dlq", nil)
				b.bind("dlx", "all.dlq", "")
			},
			quiet: []string{"orders.billing", "orders.shipping"}},
		{name: "retry through a delay queue back to the origin", id: "MQ104",
			build: func(b *builder) {
				b.exchange("jobs", "direct")
				b.exchange("retry.work", "direct")
				b.queue("work", topology.Args{argDLX: "retry.work", argDLRK: "retry"})
				b.bind("jobs", "work", "work")
				b.queue("work.retry", topology.Args{argTTL: 15000, argDLX: "", argDLRK: "work"})
				b.bind("retry.work", "work.retry", "retry")
			},
			quiet: []string{"work", "work.retry"}},

		// MQ105
		{name: "two queues dead-lettering into each other", id: "MQ105",
			build: func(b *builder) {
				b.queue("a", topology.Args{argDLX: "", argDLRK: "b"})
				b.queue("b", topology.Args{argDLX: "", argDLRK: "a"})
			},
			fire: []string{"a"}, quiet: []string{"b"}, contains: []string{"a -> b -> a", "x-message-ttl"}},
		{name: "queue dead-lettering into itself", id: "MQ105",
			build: func(b *builder) {
				b.queue("a", topology.Args{argDLX: ""}) // no key: the message's own key, its name
			},
			fire: []string{"a"}, contains: []string{"a -> a"}},
		{name: "loop through a delay queue", id: "MQ105",
			build: func(b *builder) {
				b.queue("a", topology.Args{argDLX: "", argDLRK: "a.retry"})
				b.queue("a.retry", topology.Args{argDLX: "", argDLRK: "a", argTTL: 5000})
			},
			quiet: []string{"a", "a.retry"}},
		// RabbitMQ drops a dead letter that comes back to a queue it died
		// in without a rejection (measured on 4.3.6 and 3.10.8: a message
		// that expired in the working queue is gone after one round trip).
		{name: "loop through a delay queue that drops what expires", id: "MQ105",
			build: func(b *builder) {
				b.queue("a", topology.Args{argDLX: "", argDLRK: "a.retry", argTTL: 60000})
				b.queue("a.retry", topology.Args{argDLX: "", argDLRK: "a", argTTL: 5000})
			},
			fire: []string{"a"}, quiet: []string{"a.retry"},
			contains: []string{`through delay queue "a.retry"`, "messages that expire in it (its x-message-ttl 60000)", "RabbitMQ drops them there as a dead-letter cycle", `Dead-letter "a" into a DLQ instead`}},
		{name: "a quorum queue's delivery limit in a delay loop", id: "MQ105",
			build: func(b *builder) {
				b.typed("a", topology.QueueQuorum, topology.Args{argDLX: "", argDLRK: "a.retry"})
				b.policy("cap", "^a$", topology.Args{"max-length": 100})
				b.queue("a.retry", topology.Args{argDLX: "", argDLRK: "a", argTTL: 5000})
			},
			fire: []string{"a"}, quiet: []string{"a.retry"},
			contains: []string{`messages it drops when full (max-length 100 of policy "cap")`, "past its delivery limit (20, the default limit quorum queues have from RabbitMQ 4.0)", "retry: {backoff"}},
		{name: "retry tiers and a DLQ: no loop", id: "MQ105",
			build: func(b *builder) {
				b.exchange("dlx", "direct")
				w, _ := b.dlqPair("w", "", "", "dlx", topology.Args{argTTL: 60000})
				w.Type = topology.QueueQuorum
				t := b.queue("w.retry.5s", topology.Args{argDLX: "", argDLRK: "w", argTTL: 5000})
				t.Role, t.Origin = topology.RoleDelay, "w"
			},
			quiet: []string{"w", "w.retry.5s", "w.dlq"}},

		// MQ107
		{name: "at-least-once without reject-publish", id: "MQ107",
			build: func(b *builder) {
				b.typed("a", topology.QueueQuorum, topology.Args{argDLX: "", argDLRK: "a.dlq", "x-dead-letter-strategy": "at-least-once"})
				b.typed("b", topology.QueueQuorum, topology.Args{argDLX: "", argDLRK: "b.dlq", "x-dead-letter-strategy": "at-least-once", argOverflow: "reject-publish", argMaxLen: 10})
				b.policy("old", "^b$", topology.Args{"overflow": "drop-head"})
				b.typed("c", topology.QueueQuorum, topology.Args{argDLX: "", argDLRK: "c.dlq", "x-dead-letter-strategy": "at-least-once", argOverflow: "reject-publish"})
				b.typed("d", topology.QueueQuorum, topology.Args{argDLX: "", argDLRK: "d.dlq", "x-dead-letter-strategy": "at-most-once"})
				for _, q := range []string{"a.dlq", "b.dlq", "c.dlq", "d.dlq"} {
					b.typed(q, topology.QueueQuorum, nil)
				}
			},
			fire: []string{"a", "b"}, quiet: []string{"c", "d"},
			contains: []string{`quorum queue "a" asks for dead-letter-strategy at-least-once, but it sets no overflow, so drop-head, the default, applies`, "falls back to at most once", "Set limits.overflow: reject-publish on the queue",
				`its overflow is drop-head (overflow "drop-head" of policy "old")`, `Make overflow reject-publish in policy "old"`}},

		{name: "at-least-once with reject-publish", id: "MQ107",
			build: func(b *builder) {
				b.typed("c", topology.QueueQuorum, topology.Args{argDLX: "", argDLRK: "c.dlq", "x-dead-letter-strategy": "at-least-once", argOverflow: "reject-publish"})
				b.typed("c.dlq", topology.QueueQuorum, nil)
			},
			quiet: []string{"c"}},

		// MQ108
		{name: "a DLQ with an expiry", id: "MQ108",
			build: func(b *builder) {
				b.queue("orders", topology.Args{argDLX: "", argDLRK: "orders.dlq"})
				b.queue("orders.dlq", topology.Args{"x-expires": 86400000})
				b.queue("work", topology.Args{argDLX: "", argDLRK: "orders.dlq", "x-expires": 60000})
				// A queue with a TTL whose dead letters go through the
				// default exchange looks like a delay tier, but it takes
				// regular traffic: it may well have consumers.
				b.exchange("jobs", "direct")
				b.queue("jobs.high", topology.Args{argTTL: 86400000, argDLX: "", argDLRK: "orders.dlq", "x-expires": 604800000})
				b.bind("jobs", "jobs.high", "high")
			},
			fire: []string{"orders.dlq"}, quiet: []string{"orders", "work", "jobs.high"}, severity: Warning,
			contains: []string{`DLQ "orders.dlq" expires after 24h0m0s unused (its x-expires 86400000): RabbitMQ deletes it, with its dead letters`, `Remove x-expires from queue "orders.dlq"`}},

		{name: "a DLQ and a delay queue without expiry", id: "MQ108",
			build: func(b *builder) {
				b.queue("jobs", topology.Args{argDLX: "", argDLRK: "jobs.dlq"})
				b.queue("jobs.dlq", nil)
				b.queue("jobs.retry", topology.Args{argTTL: 5000, argDLX: "", argDLRK: "jobs"})
			},
			quiet: []string{"jobs.dlq", "jobs.retry"}},

		// MQ703
		{name: "a policy pattern over 1024 bytes", id: "MQ703",
			build: func(b *builder) {
				var names []string
				for i := range 120 {
					names = append(names, fmt.Sprintf("queue%03d", i))
				}
				b.queue("queue001", topology.Args{argMaxLen: 5})
				b.policy("long", "^("+strings.Join(names, "|")+")$", topology.Args{"max-length": 5})
				b.policy("short", "^queue", topology.Args{"max-length": 5})
			},
			fire: []string{"long"}, quiet: []string{"short"},
			contains: []string{`policy "long": the pattern regular expression has 1083 bytes, over the 1024 RabbitMQ takes: RabbitMQ 4.3 refuses it (HTTP 400)`, "match a common prefix"}},
		{name: "a policy pattern of 1024 bytes", id: "MQ703",
			build: func(b *builder) {
				b.queue("q", topology.Args{argMaxLen: 5})
				b.policy("edge", "^q"+strings.Repeat("x?", 510)+"z$", topology.Args{"max-length": 5})
			},
			quiet: []string{"edge"}},

		// MQ201
		{name: "retry exchange with # and the topic exchange as DLX", id: "MQ201",
			build: func(b *builder) {
				b.exchange("orders", "topic")
				b.exchange("orders.dlx", "direct")
				b.exchange("orders.retry", "topic")
				b.dlqPair("orders.shipping", "orders", "order.created", "orders.dlx", nil)
				for _, tier := range []struct {
					name string
					ttl  int
				}{{"orders.retry.10s", 10000}, {"orders.retry.1m", 60000}} {
					b.queue(tier.name, topology.Args{argTTL: tier.ttl, argDLX: "orders"})
					b.bind("orders.retry", tier.name, "#")
				}
			},
			fire: []string{"orders.retry.10s", "orders.retry.1m"},
			contains: []string{`exchange "orders"`, "routing key they were published with", `key "orders.shipping" it matches no binding`,
				`key "order.created" it reaches orders.shipping`, "x-dead-letter-routing-key", "retry.delays"}},
		{name: "delay queue's routing key bound nowhere", id: "MQ201",
			build: func(b *builder) {
				b.exchange("jobs", "direct")
				b.exchange("jobs.dlx", "direct")
				b.dlqPair("work", "jobs", "work", "jobs.dlx", nil)
				b.queue("work.retry", topology.Args{argTTL: 1000, argDLX: "", argDLRK: "wrok"})
			},
			fire: []string{"work.retry"}, contains: []string{`routing key "wrok"`, "dropped"}},
		{name: "delay queue returning to several queues", id: "MQ201",
			build: func(b *builder) {
				b.exchange("orders", "topic")
				b.exchange("dlx", "direct")
				b.dlqPair("a", "orders", "order.created", "dlx", nil)
				b.dlqPair("b", "orders", "order.created", "dlx", nil)
				b.queue("retry", topology.Args{argTTL: 1000, argDLX: "orders", argDLRK: "order.created"})
			},
			fire: []string{"retry"}, contains: []string{"2 queues (a and b)"}},
		{name: "delay queue expiring into itself", id: "MQ201",
			build: func(b *builder) {
				b.queue("retry", topology.Args{argTTL: 1000, argDLX: ""})
			},
			fire: []string{"retry"}, contains: []string{`"retry" itself`}},
		{name: "delay tier as retry.delays expands it", id: "MQ201",
			build: func(b *builder) {
				b.exchange("orders", "topic")
				b.exchange("orders.dlx", "direct")
				b.dlqPair("orders.shipping", "orders", "order.created", "orders.dlx", nil)
				d := b.queue("orders.shipping.retry.10s", topology.Args{argTTL: 10000, argDLX: "", argDLRK: "orders.shipping"})
				d.Role, d.Origin, d.Delay = topology.RoleDelay, "orders.shipping", 10000
			},
			quiet: []string{"orders.shipping.retry.10s", "orders.shipping"}},

		{name: "DLQ whose TTL expires into itself is no delay queue", id: "MQ201",
			build: func(b *builder) {
				b.exchange("jobs", "direct")
				b.queue("work", topology.Args{argDLX: "", argDLRK: "dead"})
				b.bind("jobs", "work", "work")
				b.queue("dead", topology.Args{argDLX: "", argDLRK: "dead", argTTL: 86400000})
			},
			quiet: []string{"work", "dead"}},

		// MQ202
		{name: "retry queue relying on per-message expiration", id: "MQ202",
			build: func(b *builder) {
				b.exchange("jobs", "direct")
				b.exchange("jobs.dlx", "direct")
				b.dlqPair("work", "jobs", "work", "jobs.dlx", nil)
				b.queue("work.retry", topology.Args{argDLX: "", argDLRK: "work"})
			},
			fire: []string{"work.retry"}, quiet: []string{"work", "work.dlq"}, contains: []string{"back to work", "per-message expiration", "x-message-ttl"}},
		{name: "sugar delay queue without TTL", id: "MQ202",
			build: func(b *builder) {
				b.exchange("jobs", "direct")
				b.queue("work", nil)
				b.bind("jobs", "work", "work")
				d := b.queue("work.retry", topology.Args{argDLX: "", argDLRK: "work"})
				d.Role, d.Origin = topology.RoleDelay, "work"
			},
			fire: []string{"work.retry"}},
		{name: "delay queue with a queue TTL; plain queue with DLQ", id: "MQ202",
			build: func(b *builder) {
				b.exchange("jobs", "direct")
				b.exchange("jobs.dlx", "direct")
				b.dlqPair("work", "jobs", "work", "jobs.dlx", nil)
				b.queue("work.retry", topology.Args{argDLX: "", argDLRK: "work", argTTL: 1000})
				b.exchange("dlx2", "direct")
				b.queue("tasks", topology.Args{argDLX: "dlx2", argDLRK: "tasks"}) // default exchange only
				b.queue("tasks.dlq", nil)
				b.bind("dlx2", "tasks.dlq", "tasks")
			},
			quiet: []string{"work.retry", "tasks", "tasks.dlq"}},

		// MQ301
		{name: "queue and stream without bounds", id: "MQ301",
			build: func(b *builder) {
				b.queue("work", nil)
				b.typed("events", topology.QueueStream, nil)
			},
			fire: []string{"work", "events"}, contains: []string{"no retention limit"}},
		// A queue takes one policy: the advice is to add the limit to the
		// one that applies, not to write a new one that would replace it.
		{name: "unbounded under a policy that sets something else", id: "MQ301",
			build: func(b *builder) {
				b.queue("jobs", nil)
				b.policy("ha-less", "^jobs$", topology.Args{"queue-leader-locator": "balanced"})
			},
			fire: []string{"jobs"}, contains: []string{`or add max-length to policy "ha-less", which applies to it: a queue takes one policy, and another would replace it with its settings`}},
		{name: "bounded by argument, by policy, stream by age", id: "MQ301",
			build: func(b *builder) {
				b.queue("a", topology.Args{argMaxLen: 100})
				b.queue("b", topology.Args{argTTL: 100})
				b.queue("c", nil)
				b.policy("cap", "^c$", topology.Args{"max-length-bytes": 1 << 20})
				b.typed("events", topology.QueueStream, topology.Args{argMaxAge: "7D"})
			},
			quiet: []string{"a", "b", "c", "events"}},

		// MQ302
		{name: "length limit with default drop-head and no DLX, MQ101 off", id: "MQ302",
			build: func(b *builder) {
				b.queue("a", topology.Args{argMaxLen: 100})
				b.queue("b", topology.Args{argMaxBytes: 100, argOverflow: "drop-head"})
			},
			opts: Options{Rules: map[string]string{"MQ101": "off"}},
			fire: []string{"a", "b"}, contains: []string{"default overflow behaviour (drop-head)", "reject-publish"}},
		{name: "one cause, one finding: MQ101 names the overflow", id: "MQ302",
			build: func(b *builder) {
				b.queue("a", topology.Args{argMaxLen: 100})
			},
			quiet: []string{"a"}},
		{name: "no DLX asked for MQ101's queue with drop-head names the overflow", id: "MQ101",
			build: func(b *builder) {
				b.queue("a", topology.Args{argMaxLen: 100})
			},
			fire: []string{"a"}, contains: []string{"is pushed out by the length limit", "overflow: reject-publish"}},
		{name: "a DLQ with a length limit keeps its retention choice", id: "MQ302",
			build: func(b *builder) {
				b.exchange("jobs", "direct")
				b.exchange("dlx", "direct")
				w, d := b.dlqPair("work", "jobs", "work", "dlx", nil)
				_ = w
				d.Arguments = topology.Args{argMaxLen: 1000}.Normalized()
			},
			opts:  Options{Rules: map[string]string{"MQ101": "off"}},
			quiet: []string{"work.dlq"}},
		{name: "reject-publish, or drop-head with a DLX", id: "MQ302",
			build: func(b *builder) {
				b.exchange("dlx", "fanout")
				b.queue("dead", nil)
				b.bind("dlx", "dead", "")
				b.queue("a", topology.Args{argMaxLen: 100, argOverflow: "reject-publish"})
				b.queue("b", topology.Args{argMaxLen: 100, argDLX: "dlx"})
			},
			quiet: []string{"a", "b"}},

		// MQ401
		// amq.* names cannot be declared: the advice is not to declare one
		// (3.10.8, 4.0.5 and 4.3.6 answer 404 to a binding to
		// amq.rabbitmq.reply-to).
		{name: "binding to direct reply-to or a server-named queue", id: "MQ401",
			build: func(b *builder) {
				b.exchange("rpc", "direct")
				b.bind("rpc", "amq.rabbitmq.reply-to", "r")
				b.bind("rpc", "amq.gen-abc", "g")
			},
			fire:     []string{`rpc -> queue amq.rabbitmq.reply-to ["r"]`, `rpc -> queue amq.gen-abc ["g"]`},
			contains: []string{"It is direct reply-to's pseudo-queue, which cannot be bound", `a client cannot declare queue "amq.gen-abc"`}},
		{name: "binding ends not declared", id: "MQ401",
			build: func(b *builder) {
				b.exchange("orders", "topic")
				b.queue("work", nil)
				b.bind("ghost", "work", "k")
				b.bind("orders", "nobody", "k")
				b.bind("", "work", "work")
				b.v.Bindings = append(b.v.Bindings, &topology.Binding{Source: "orders", Destination: "audit", DestinationType: topology.DestExchange, RoutingKey: "#", Meta: topology.Meta{Pos: b.pos()}})
			},
			fire: []string{
				`ghost -> queue work ["k"]`, `orders -> queue nobody ["k"]`,
				`(default exchange) -> queue work ["work"]`, `orders -> exchange audit ["#"]`},
			contains: []string{`exchange "ghost"`, "not declared", "NOT_FOUND"}},
		{name: "alternate exchange not declared", id: "MQ401",
			build: func(b *builder) {
				x := b.exchange("orders", "topic")
				x.Arguments = topology.Args{argAlternate: "unrouted"}
				b.exchange("events", "fanout")
				b.exchange("audit", "fanout")
				b.exchange("caught", "fanout")
				b.exchange("ok", "topic").Arguments = topology.Args{argAlternate: "caught"}
				b.queue("work", nil)
				b.queue("kept", nil)
				b.bind("orders", "work", "order.*")
				b.bind("events", "work", "")
				b.bind("audit", "work", "")
				b.bind("caught", "kept", "")
				b.bind("ok", "work", "k")
				b.policy("ae", "^events$", topology.Args{"alternate-exchange": "missing"}).ApplyTo = "exchanges"
			},
			fire: []string{"orders", "ae"}, quiet: []string{"ok", "audit", "caught", "events"},
			contains: []string{`exchange "orders" sends what no binding matches to alternate exchange "unrouted" (its alternate_exchange), which is not declared: RabbitMQ drops those messages without a trace`, `Declare exchange "unrouted" and bind a queue to it, or correct the name`}},
		{name: "alternate exchange not declared, set by a policy", id: "MQ401",
			build: func(b *builder) {
				b.exchange("a", "topic")
				b.exchange("b", "topic")
				b.queue("q", nil)
				b.bind("a", "q", "#")
				b.bind("b", "q", "#")
				b.policy("ae", ".*", topology.Args{"alternate-exchange": "unrouted"}).ApplyTo = "exchanges"
			},
			fire: []string{"ae"}, quiet: []string{"a", "b"},
			contains: []string{`policy "ae" gives 2 exchanges (a and b) alternate exchange "unrouted", which is not declared: RabbitMQ drops what no binding of them matches without a trace, though the policy means to keep it.`}},
		{name: "binding ends declared, amq.* built-in", id: "MQ401",
			build: func(b *builder) {
				b.exchange("orders", "topic")
				b.queue("work", nil)
				b.bind("orders", "work", "k")
				b.bind("amq.topic", "work", "k")
			},
			quiet: []string{`orders -> queue work ["k"]`, `amq.topic -> queue work ["k"]`}},

		// MQ304
		{name: "max-queues below the file's queues", id: "MQ304",
			build: func(b *builder) {
				b.queue("a", nil)
				b.queue("b", nil)
				b.queue("c", nil)
				b.item(kind.VhostLimits, "/", topology.Args{"max-queues": 2, "max-connections": 10})
			},
			fire: []string{"/"}, contains: []string{`vhost "/" limits itself to 2 queues (max-queues), and the file declares 3 there (a, b and c)`, "cannot take its lock", "Raise max-queues to at least 4 (the file's queues and the apply's lock queue)"}},
		{name: "max-queues exactly the file's queues: no room for the lock", id: "MQ304",
			build: func(b *builder) {
				b.queue("a", nil)
				b.queue("b", nil)
				b.item(kind.VhostLimits, "/", topology.Args{"max-queues": 2})
			},
			fire: []string{"/"}, contains: []string{`vhost "/" limits itself to 2 queues (max-queues), and the file declares 2 there (a and b): that leaves no room for another`, "the next apply that changes anything here cannot take its lock", "Raise max-queues to at least 3"}},
		{name: "max-queues with room, or none", id: "MQ304",
			build: func(b *builder) {
				b.queue("a", nil)
				b.queue("b", nil)
				b.item(kind.VhostLimits, "/", topology.Args{"max-queues": 3, "max-connections": 0})
			},
			quiet: []string{"/"}},

		// MQ405
		{name: "three '#' words in a topic key, on every target", id: "MQ405",
			build: func(b *builder) {
				b.exchange("orders", "topic")
				b.exchange("plain", "direct")
				b.queue("work", nil)
				b.bind("orders", "work", "#.a.#.b.#")
				b.bind("amq.topic", "work", "#.#.#")
				b.bind("plain", "work", "#.a.#.b.#") // a direct exchange's key is a word
			},
			fire:     []string{`orders -> queue work ["#.a.#.b.#"]`, `amq.topic -> queue work ["#.#.#"]`},
			quiet:    []string{`plain -> queue work ["#.a.#.b.#"]`},
			opts:     Options{Version: rmqversion.MustParse("4.0")},
			contains: []string{"3 '#' words", "RabbitMQ 4.3.5 and later refuse it"}},
		{name: "three '#' words, two of them next to each other: the merged key", id: "MQ405",
			build: func(b *builder) {
				b.exchange("orders", "topic")
				b.queue("work", nil)
				b.bind("orders", "work", "#.a.#.#")
			},
			fire:     []string{`orders -> queue work ["#.a.#.#"]`},
			contains: []string{`Write it as "#.a.#": '#' words next to each other match what one does`}},
		{name: "three '#' words apart: no merge, no split, a broader key", id: "MQ405",
			build: func(b *builder) {
				b.exchange("orders", "topic")
				b.queue("work", nil)
				b.bind("orders", "work", "#.a.#.b.#")
			},
			fire:     []string{`orders -> queue work ["#.a.#.b.#"]`},
			contains: []string{`No key of at most two '#' words matches the same routing keys`, `bind with "#.a.#", which matches every routing key this one does and others`}},
		{name: "three '#' words in a topic key on 4.3, the default target", id: "MQ405",
			build: func(b *builder) {
				b.exchange("orders", "topic")
				b.queue("work", nil)
				b.bind("orders", "work", "#.a.#.b.#")
			},
			fire:     []string{`orders -> queue work ["#.a.#.b.#"]`},
			contains: []string{"RabbitMQ 4.3 refuses it"}},
		{name: "two '#' words are fine", id: "MQ405",
			build: func(b *builder) {
				b.exchange("orders", "topic")
				b.queue("work", nil)
				b.bind("orders", "work", "#.a.#")
				b.bind("orders", "work", "*.*.#")
			},
			quiet: []string{`orders -> queue work ["#.a.#"]`, `orders -> queue work ["*.*.#"]`}},

		// MQ406
		{name: "bindings an x-local-random exchange refuses", id: "MQ406",
			build: func(b *builder) {
				b.exchange("rpc", "x-local-random")
				b.exchange("other", "fanout")
				b.queue("replies", nil)
				b.typed("qq", topology.QueueQuorum, nil)
				b.bind("rpc", "replies", "")
				b.bind("rpc", "replies", "k")
				b.bind("rpc", "qq", "")
				bd := b.bind("rpc", "other", "")
				bd.DestinationType = topology.DestExchange
			},
			fire:  []string{`rpc -> queue replies ["k"]`, `rpc -> queue qq [""]`, `rpc -> exchange other [""]`},
			quiet: []string{`rpc -> queue replies [""]`},
			opts:  Options{Version: rmqversion.MustParse("4.0")},
			contains: []string{`takes no binding key (HTTP 400 "Non empty binding 'k' key not permitted")`, `Bind with an empty routing key`,
				`routes to classic queues only (HTTP 400 "Queue type rabbit_quorum_queue not valid for this exchange type")`, `Make queue "qq" a classic queue`,
				`routes to queues only (HTTP 400 "Destination not found")`}},
		{name: "an x-local-random exchange with its classic queues", id: "MQ406",
			build: func(b *builder) {
				b.exchange("rpc", "x-local-random")
				b.queue("r1", nil)
				b.queue("r2", topology.Args{"x-expires": 60000})
				b.bind("rpc", "r1", "")
				b.bind("rpc", "r2", "")
			},
			quiet: []string{`rpc -> queue r1 [""]`, `rpc -> queue r2 [""]`}},
		{name: "an x-local-random binding to a queue quorum by the vhost's default", id: "MQ406",
			build: func(b *builder) {
				b.v.DefaultQueueType = topology.QueueQuorum
				b.exchange("rpc", "x-local-random")
				q := b.typed("replies", topology.QueueQuorum, nil)
				q.TypeFromVhost = true
				b.bind("rpc", "replies", "")
			},
			fire:     []string{`rpc -> queue replies [""]`},
			contains: []string{`only because the file gives it no type and vhost "/" has default_queue_type: quorum; write type: classic`}},

		// MQ402
		{name: "exchange bound to nothing", id: "MQ402",
			build: func(b *builder) { b.exchange("lonely", "topic") },
			fire:  []string{"lonely"}, contains: []string{"dropped", "alternate_exchange"}},
		{name: "exchange with alternate exchange, bindings, or used as DLX", id: "MQ402",
			build: func(b *builder) {
				b.exchange("catchall", "fanout")
				b.queue("unrouted", nil)
				b.bind("catchall", "unrouted", "")
				x := b.exchange("ae", "topic")
				x.Arguments = topology.Args{argAlternate: "catchall"}
				b.exchange("dlx", "direct")
				b.queue("work", topology.Args{argDLX: "dlx"})
			},
			quiet: []string{"catchall", "ae", "dlx"}},
		// MQ501
		// The fix for x-delivery-limit on a classic queue is a quorum
		// queue, which refuses the queue's x-max-priority: the advice says
		// so, and the other way out (adrienKoumgangT__distriqueue's job.low).
		{name: "quorum-only argument beside one quorum queues refuse", id: "MQ501",
			build: func(b *builder) {
				b.queue("job.low", topology.Args{"x-delivery-limit": 2, argPriority: 1})
			},
			fire: []string{"job.low"}, contains: []string{"It needs a quorum queue (type: quorum). But a quorum queue refuses its x-max-priority too: to make it one, drop it as well; or remove x-delivery-limit and keep it a classic queue"}},
		// The other way round on 3.10 (job.high): the advice for
		// x-max-priority on a quorum queue is a classic queue, which
		// refuses x-delivery-limit. On 4.3 the advice is to remove it.
		{name: "priority on a quorum queue with a delivery limit, 3.10", id: "MQ501",
			opts: Options{Version: rmqversion.MustParse("3.10")},
			build: func(b *builder) {
				b.typed("job.high", topology.QueueQuorum, topology.Args{"x-delivery-limit": 3, argPriority: 10})
			},
			fire: []string{"job.high"}, contains: []string{"use a classic queue with x-max-priority, or one queue per priority. But a classic queue refuses its x-delivery-limit too: to make it one, drop it as well; or remove x-max-priority and keep it a quorum queue"}},
		{name: "quorum queue features", id: "MQ501",
			build: func(b *builder) {
				q := b.typed("qq.transient", topology.QueueQuorum, nil)
				q.Durable = false
				b.typed("qq.prio", topology.QueueQuorum, topology.Args{argPriority: 5})
				b.typed("qq.dlx", topology.QueueQuorum, topology.Args{argOverflow: "reject-publish-dlx"})
				b.queue("cq.limit", topology.Args{"x-delivery-limit": 3})
				b.typed("st", topology.QueueStream, topology.Args{argMaxLen: 10})
				b.queue("cq.prio", topology.Args{argPriority: 300})
			},
			fire:     []string{"qq.transient", "qq.prio", "qq.dlx", "cq.limit", "st", "cq.prio"},
			contains: []string{"not durable", "PRECONDITION_FAILED"}},
		// RabbitMQ declares a quorum queue with reject-publish-dlx, and
		// applies a policy with it, and uses drop-head (TestQuorumRejectPublishDLX
		// in pkg/engine shows it on each broker).
		{name: "quorum reject-publish-dlx argument", id: "MQ501",
			build: func(b *builder) {
				b.exchange("dlx", "fanout")
				b.typed("qq", topology.QueueQuorum, topology.Args{argOverflow: "reject-publish-dlx", argMaxLen: 10, argDLX: "dlx"})
			},
			fire: []string{"qq"}, contains: []string{"declares it anyway", "uses drop-head", `dead-lettered to exchange "dlx"`, "Use reject-publish"}},
		{name: "quorum reject-publish-dlx argument, no DLX", id: "MQ501",
			build: func(b *builder) {
				b.typed("qq", topology.QueueQuorum, topology.Args{argOverflow: "reject-publish-dlx", argMaxLen: 10})
			},
			fire: []string{"qq"}, contains: []string{"uses drop-head", "discarded without a trace"}},
		{name: "quorum reject-publish-dlx argument a policy overrides", id: "MQ501",
			build: func(b *builder) {
				b.typed("qq", topology.QueueQuorum, topology.Args{argOverflow: "reject-publish-dlx"})
				b.policy("cap", "^qq$", topology.Args{"max-length": 10, "overflow": "reject-publish"})
			},
			fire: []string{"qq"}, quiet: []string{"cap"}, contains: []string{`policy "cap" sets overflow reject-publish, which applies instead`, "Remove it"}},
		{name: "quorum reject-publish-dlx by policy", id: "MQ501",
			build: func(b *builder) {
				b.typed("qq", topology.QueueQuorum, nil)
				b.typed("qq2", topology.QueueQuorum, nil)
				b.queue("cq", nil)
				b.policy("cap", ".*", topology.Args{"max-length": 10, "overflow": "reject-publish-dlx"})
			},
			fire: []string{"cap"}, quiet: []string{"qq", "qq2", "cq"},
			contains: []string{"2 quorum queue(s) (qq and qq2)", "applies the policy to them with drop-head", "apply_to: quorum_queues"}},
		{name: "a priority queue that the vhost's default makes a quorum queue", id: "MQ501",
			build: func(b *builder) {
				b.v.DefaultQueueType = topology.QueueQuorum
				q := b.typed("prio", topology.QueueQuorum, topology.Args{argPriority: 5})
				q.TypeFromVhost = true
			},
			fire: []string{"prio"}, contains: []string{`only because the file gives it no type and vhost "/" has default_queue_type: quorum; to keep x-max-priority, write type: classic`}},
		{name: "an argument from the vhost's defaults the queue's type refuses", id: "MQ501",
			build: func(b *builder) {
				q := b.typed("qq", topology.QueueQuorum, topology.Args{argPriority: 10})
				q.FromDefaults = map[string]topology.Inherited{argPriority: {Field: "max_priority", Pos: topology.Pos{File: "topology.yaml", Line: 6, Col: 23}}}
				b.queue("cq", topology.Args{argPriority: 10}).FromDefaults = q.FromDefaults
			},
			fire: []string{"qq"}, quiet: []string{"cq"},
			contains: []string{`Queue "qq" takes x-max-priority from defaults.queue.max_priority of vhost "/" (topology.yaml:6:23), not from a field of its own: to leave it out of this queue alone, write max_priority: null on it`}},
		{name: "policy key a quorum queue ignores", id: "MQ501",
			build: func(b *builder) {
				b.typed("qq", topology.QueueQuorum, nil)
				b.queue("cq", nil)
				// max-age, a streams' key (max-priority is no policy key
				// at all: TestNeverPolicyKeys).
				b.policy("prio", ".*", topology.Args{"max-age": "7D", "max-length": 10})
			},
			fire: []string{"prio"}, contains: []string{"max-age", "1 quorum queue(s) (qq)", "does not apply a policy"}},
		{name: "policy value the broker refuses", id: "MQ501",
			build: func(b *builder) {
				b.queue("cq", nil)
				b.policy("cap", "^cq$", topology.Args{"max-length": "ten", "dead-letter-exchange": "dlx"})
				b.policy("ok", "^none$", topology.Args{"max-length": 10, "message-ttl": 0})
			},
			fire: []string{"cap"}, quiet: []string{"ok", "cq"},
			contains: []string{`policy "cap" sets max-length "ten": RabbitMQ 4.3 refuses the whole policy (HTTP 400 "Validation failed": "ten" is not a valid maximum length), so none of its settings take effect. Write a whole number of messages, 0 or more`}},
		{name: "supported settings", id: "MQ501",
			build: func(b *builder) {
				b.typed("qq", topology.QueueQuorum, topology.Args{"x-delivery-limit": 3, argOverflow: "reject-publish", argTTL: 1000})
				b.queue("cq", topology.Args{argPriority: 5, "x-queue-mode": "lazy", "x-custom-plugin-arg": 1})
				b.typed("st", topology.QueueStream, topology.Args{argMaxAge: "1D", argMaxBytes: 1000})
				b.policy("cap", "^(qq|cq)$", topology.Args{"max-length": 10})
			},
			quiet: []string{"qq", "cq", "st", "cap"}},

		// MQ502
		{name: "too many priorities", id: "MQ502",
			build: func(b *builder) { b.queue("p", topology.Args{argPriority: 20}) },
			fire:  []string{"p"}, contains: []string{"x-max-priority 20", "at most 10"}},
		{name: "ten priorities", id: "MQ502",
			build: func(b *builder) { b.queue("p", topology.Args{argPriority: 10}) },
			quiet: []string{"p"}},

		// MQ601
		// MQ506
		{name: "misspelled queue and exchange arguments", id: "MQ506",
			build: func(b *builder) {
				b.queue("typo", topology.Args{"x-max-lenght": int64(10), argDLX: "", argDLRK: "typo.dlq"})
				b.queue("own", topology.Args{"x-owner-team": "payments", argMaxLen: int64(10)})
				b.exchange("x", "topic").Arguments = topology.Args{"x-alternate-exchange": "ae"}
			},
			fire: []string{"typo", "x"}, quiet: []string{"own"}, contains: []string{"x-max-lenght", "Write x-max-length if"}},
		{name: "arguments spelled right", id: "MQ506",
			build: func(b *builder) {
				b.queue("q", topology.Args{argMaxLen: int64(10), "x-owner-team": "payments"})
				b.exchange("x", "topic").Arguments = topology.Args{"alternate-exchange": "ae"}
			}},
		{name: "command keys on a topic exchange", id: "MQ601",
			build: func(b *builder) {
				b.exchange("notify", "topic")
				b.exchange("dlx", "topic")
				b.queue("mailer", topology.Args{argDLX: "dlx", argDLRK: "process.failure"})
				b.bind("notify", "mailer", "send.email")
				b.queue("dead", nil)
				b.bind("dlx", "dead", "#")
			},
			fire: []string{`notify -> queue mailer ["send.email"]`, "mailer"}, contains: []string{`"email.sent"`}},
		{name: "event keys, and commands on a direct exchange", id: "MQ601",
			build: func(b *builder) {
				b.exchange("events", "topic")
				b.exchange("commands", "direct")
				b.queue("mailer", nil)
				b.bind("events", "mailer", "email.sent")
				b.bind("events", "mailer", "*.created")
				b.bind("commands", "mailer", "send.email")
			},
			quiet: []string{`events -> queue mailer ["email.sent"]`, `events -> queue mailer ["*.created"]`, `commands -> queue mailer ["send.email"]`}},

		// MQ701
		{name: "reserved names", id: "MQ701",
			build: func(b *builder) {
				b.exchange("amq.orders", "topic")
				b.queue("amq.work", nil)
			},
			fire: []string{"amq.orders", "amq.work"}, contains: []string{"amq.", "Rename"}},
		{name: "broker's own exchanges and ordinary names", id: "MQ701",
			build: func(b *builder) {
				b.exchange("amq.topic", "topic")
				b.exchange("orders", "topic")
				b.queue("amqwork", nil)
			},
			quiet: []string{"amq.topic", "orders", "amqwork"}},

		// MQ702
		{name: "mirroring policy", id: "MQ702",
			build: func(b *builder) {
				b.policy("ha-all", ".*", topology.Args{"ha-mode": "all", "ha-sync-mode": "automatic"})
				b.v.OperatorPolicies["op-ha"] = &topology.Policy{Name: "op-ha", Pattern: ".*", ApplyTo: "queues", Definition: topology.Args{"ha-mode": "exactly", "ha-params": int64(2)}}
			},
			fire: []string{"ha-all", "op-ha"}, contains: []string{"ha-mode, ha-sync-mode", "4.0", "quorum"}},
		{name: "policy without mirroring", id: "MQ702",
			build: func(b *builder) { b.policy("cap", ".*", topology.Args{"max-length": 10}) },
			quiet: []string{"cap"}},
	}
}

func TestRules(t *testing.T) {
	seen := map[string][2]bool{}
	cases := append(append(ruleCases(), roleRuleCases()...), versionRuleCases()...)
	cases = append(append(append(cases, accessRuleCases(t)...), federationRuleCases()...), literalPasswordCases(t)...)
	cases = append(append(append(cases, rabbit43RuleCases()...), retryFormCases()...), shovelBindingCases(t)...)
	cases = append(append(append(cases, retryOverrideCases()...), writtenCases()...), didYouMeanCases()...)
	cases = append(cases, maxAgeListCases()...)
	for _, tc := range cases {
		t.Run(tc.id+"/"+tc.name, func(t *testing.T) {
			b := newBuilder()
			tc.build(b)
			fs := only(b.run(t, tc.opts), tc.id)
			byObject := map[string][]Finding{}
			for _, f := range fs {
				byObject[f.Object.Name] = append(byObject[f.Object.Name], f)
			}
			for _, name := range tc.fire {
				if len(byObject[name]) == 0 {
					t.Errorf("%s: no finding for %q; got %s", tc.id, name, describe(fs))
				}
			}
			for _, name := range tc.quiet {
				if len(byObject[name]) > 0 {
					t.Errorf("%s: unexpected finding for %q: %s", tc.id, name, byObject[name][0].Message)
				}
			}
			if len(tc.fire) == 0 && len(fs) > 0 {
				t.Errorf("%s: want no findings, got %s", tc.id, describe(fs))
			}
			if len(tc.contains) > 0 && len(tc.fire) > 0 && len(byObject[tc.fire[0]]) > 0 {
				var all []string
				for _, f := range fs {
					all = append(all, f.Location()+": "+f.Message)
				}
				joined := strings.Join(all, "\n")
				for _, s := range tc.contains {
					if !strings.Contains(joined, s) {
						t.Errorf("%s: messages lack %q:\n%s", tc.id, s, joined)
					}
				}
			}
			for _, f := range fs {
				for _, s := range tc.absent {
					if strings.Contains(f.Message, s) {
						t.Errorf("%s on %s: message holds %q:\n%s", tc.id, f.Object, s, f.Message)
					}
				}
				if f.Severity == Off || f.Name == "" || (f.Vhost != "/" && f.Object.Kind != KindUser) || f.Message == "" {
					t.Errorf("incomplete finding %+v", f)
				}
				if tc.severity != Off && f.Severity != tc.severity {
					t.Errorf("%s on %s: severity %s, want %s", tc.id, f.Object, f.Severity, tc.severity)
				}
			}
		})
		s := seen[tc.id]
		if len(tc.fire) > 0 {
			s[0] = true
		} else {
			s[1] = true
		}
		seen[tc.id] = s
	}
	for _, a := range Builtin().Analyzers() {
		if s := seen[a.ID]; !s[0] || !s[1] {
			t.Errorf("rule %s needs a case that fires and one that stays silent (have fire=%v silent=%v)", a.ID, s[0], s[1])
		}
	}
}

func describe(fs []Finding) string {
	if len(fs) == 0 {
		return "nothing"
	}
	var out []string
	for _, f := range fs {
		out = append(out, f.Object.String()+": "+f.Message)
	}
	return strings.Join(out, "\n")
}

// TestMQ101NamesTheSharedDLX: the fix for a queue without a dead-letter
// exchange names the vhost's own, when other queues share one that does
// nothing else (bound to DLQs only, no delay tier returning through it);
// an exchange that a delay tier returns messages through, or that carries
// regular traffic, is not one to dead-letter failures to.
func TestMQ101NamesTheSharedDLX(t *testing.T) {
	fix := func(b *builder) string {
		fs := only(b.run(t, Options{}), "MQ101")
		for _, f := range fs {
			if f.Object.Name == "c" {
				return f.Message
			}
		}
		t.Fatalf("no MQ101 for queue c: %+v", fs)
		return ""
	}
	shared := newBuilder()
	shared.exchange("jobs.dlx", "direct")
	for _, q := range []string{"a", "b"} {
		shared.queue(q, topology.Args{argDLX: "jobs.dlx", argDLRK: q})
		shared.queue(q+".dlq", nil)
		shared.bind("jobs.dlx", q+".dlq", q)
	}
	shared.queue("c", nil)
	if m := fix(shared); !strings.Contains(m, "Add dead_letter: {exchange: jobs.dlx, queue: c.dlq}") {
		t.Errorf("the fix does not name the shared DLX: %s", m)
	}

	tier := newBuilder()
	tier.exchange("orders", "topic")
	tier.exchange("work", "topic")
	tier.queue("work.q", nil)
	tier.bind("orders", "work.q", "order.#")
	tier.bind("work", "work.q", "#.work")
	tier.queue("delay", topology.Args{argTTL: 2000, argDLX: "work", argDLRK: "delayed.work"})
	tier.queue("c", nil)
	if m := fix(tier); !strings.Contains(m, `Add dead_letter: {exchange: "", queue: c.dlq}`) {
		t.Errorf("the fix names an exchange a delay tier returns messages through: %s", m)
	}
}

// TestMQ104FanoutDLXAdvice: a fanout dead-letter exchange delivers every
// dead letter to every DLQ bound to it, whatever the key, so the fix is
// an exchange that routes by key, not a key of the queue's own.
func TestMQ104FanoutDLXAdvice(t *testing.T) {
	b := newBuilder()
	b.exchange("dlx", "fanout")
	for _, q := range []string{"a", "b"} {
		b.queue(q, topology.Args{argDLX: "dlx"})
		b.queue(q+".dlq", nil)
		b.bind("dlx", q+".dlq", "")
	}
	fs := only(b.run(t, Options{}), "MQ104")
	if len(fs) != 2 {
		t.Fatalf("MQ104 findings: %+v", fs)
	}
	m := fs[0].Message
	for _, want := range []string{`the fanout exchange "dlx" delivers every dead letter to a.dlq and b.dlq`,
		`routes by no key`, `dead_letter: {exchange: "", queue: a.dlq} declares it and routes them there through the default exchange, by its name`} {
		if !strings.Contains(m, want) {
			t.Errorf("MQ104 does not say %q:\n%s", want, m)
		}
	}
	if strings.Contains(m, "x-dead-letter-routing-key: a") {
		t.Errorf("MQ104 advises a key, which a fanout ignores:\n%s", m)
	}
}

// TestMQ103KeylessDLXAdvice: dead letters sent to a fanout or headers
// exchange with no binding are dropped, and the fix is a DLQ bound there,
// not a dead-letter routing key, which such an exchange ignores.
func TestMQ103KeylessDLXAdvice(t *testing.T) {
	for _, tc := range []struct {
		typ  string
		want []string
	}{
		{"fanout", []string{`go to the fanout exchange "dlx", which has no binding`, "dead_letter: {exchange: dlx, queue: q.dlq}", "a dead-letter routing key would not help"}},
		{"headers", []string{`go to the headers exchange "dlx", which has no binding`, "without criteria, which takes every dead letter", "a dead-letter routing key would not help"}},
	} {
		b := newBuilder()
		b.exchange("dlx", tc.typ)
		b.queue("q", topology.Args{argDLX: "dlx"})
		fs := only(b.run(t, Options{}), "MQ103")
		if len(fs) != 1 {
			t.Fatalf("%s: MQ103 findings: %+v", tc.typ, fs)
		}
		for _, w := range tc.want {
			if !strings.Contains(fs[0].Message, w) {
				t.Errorf("%s: MQ103 does not say %q:\n%s", tc.typ, w, fs[0].Message)
			}
		}
		if strings.Contains(fs[0].Message, "Set x-dead-letter-routing-key") {
			t.Errorf("%s: MQ103 advises a key the exchange ignores:\n%s", tc.typ, fs[0].Message)
		}
	}
}

// TestMQ103AtLeastOnceKeepsThem: a quorum queue that dead-letters at least
// once keeps the dead letters its dead-letter exchange cannot route, or
// that go to an exchange that is not declared
// (TestAtLeastOnceFallbackAgainstBroker measures both): MQ103 and MQ102
// say so, not that RabbitMQ drops them, and give the same fixes; one that
// falls back to at most once drops them.
func TestMQ103AtLeastOnceKeepsThem(t *testing.T) {
	for _, tc := range []struct {
		overflow string
		want     string
	}{
		{"reject-publish", `RabbitMQ keeps them in queue "q" (at-least-once dead-lettering) and tries again until a binding matches`},
		{"drop-head", "RabbitMQ drops them silently"},
	} {
		b := newBuilder()
		b.exchange("dlx", "direct")
		b.typed("q", topology.QueueQuorum, topology.Args{argDLX: "dlx", argDLRK: "nowhere", "x-dead-letter-strategy": "at-least-once", argOverflow: tc.overflow})
		b.typed("m", topology.QueueQuorum, topology.Args{argDLX: "ghost", argDLRK: "nowhere", "x-dead-letter-strategy": "at-least-once", argOverflow: tc.overflow})
		fs := b.run(t, Options{})
		unrouted, missing := only(fs, "MQ103"), only(fs, "MQ102")
		if len(unrouted) != 1 || !strings.Contains(unrouted[0].Message, tc.want) || !strings.Contains(unrouted[0].Message, `Bind a DLQ to exchange "dlx" for "nowhere"`) {
			t.Errorf("overflow %s: MQ103 findings %+v, want one saying %q and how to bind a DLQ", tc.overflow, unrouted, tc.want)
		}
		// The same for an undeclared dead-letter exchange (MQ102).
		want := "RabbitMQ drops every dead letter of this queue silently"
		if tc.overflow == "reject-publish" {
			want = "RabbitMQ keeps every dead letter of this queue in it (at-least-once dead-lettering) and tries again until the exchange exists"
		}
		if len(missing) != 1 || !strings.Contains(missing[0].Message, want) {
			t.Errorf("overflow %s: MQ102 findings %+v, want one saying %q", tc.overflow, missing, want)
		}
	}
}

// TestMQ302PolicyOverridesOverflow: a quorum queue written with
// reject-publish takes overflow from its policies instead (an operator
// policy's first, from 3.12.7), so one that says drop-head makes it
// discard its oldest messages silently, a DLQ included: not the file's
// choice for that queue. On 3.10 an operator policy cannot set overflow.
func TestMQ302PolicyOverridesOverflow(t *testing.T) {
	build := func(operator bool) *builder {
		b := newBuilder()
		b.typed("jobs.dlq", topology.QueueQuorum, topology.Args{argMaxLen: 1000, argOverflow: "reject-publish"})
		b.typed("jobs", topology.QueueQuorum, topology.Args{argDLX: "", argDLRK: "jobs.dlq"})
		if operator {
			b.v.OperatorPolicies["cap"] = &topology.Policy{Name: "cap", Pattern: ".*", ApplyTo: "queues",
				Definition: topology.Args{"max-length": 100, "overflow": "drop-head"}.Normalized(), Meta: topology.Meta{Pos: b.pos()}}
		} else {
			b.policy("cap", ".*", topology.Args{"overflow": "drop-head"})
		}
		return b
	}
	fs := only(build(true).run(t, Options{}), "MQ302")
	if len(fs) != 1 || fs[0].Object.Name != "jobs.dlq" || !strings.Contains(fs[0].Message, `operator policy "cap" sets overflow drop-head, which applies instead`) {
		t.Errorf("operator policy over the DLQ's reject-publish: %+v", fs)
	}
	fs = only(build(false).run(t, Options{}), "MQ302")
	if len(fs) != 1 || !strings.Contains(fs[0].Message, `policy "cap" sets overflow drop-head`) {
		t.Errorf("policy over the DLQ's reject-publish: %+v", fs)
	}
	if fs := only(build(true).run(t, Options{Version: rmqversion.MustParse("3.10")}), "MQ302"); len(fs) != 0 {
		t.Errorf("on 3.10 an operator policy does not set overflow: %+v", fs)
	}
}

// TestMQ108UnconsumedQueueExpires: a DLQ or a delay tier with an expiry,
// by argument or policy, is deleted with what it holds once unused that
// long, and nothing consumes it: a warning for a DLQ, an error for a delay
// tier, with the fix for where the expiry comes from; a working queue's
// expiry is its own business.
func TestMQ108UnconsumedQueueExpires(t *testing.T) {
	b := newBuilder()
	b.queue("orders", topology.Args{argDLX: "", argDLRK: "orders.dlq"})
	b.queue("orders.dlq", nil)
	b.queue("jobs", topology.Args{argDLX: "", argDLRK: "jobs.retry", "x-expires": 60000})
	b.queue("jobs.retry", topology.Args{argTTL: 5000, argDLX: "", argDLRK: "jobs", "x-expires": 600000})
	b.policy("tidy", `^orders\.dlq$`, topology.Args{"expires": 3600000})
	fs := only(b.run(t, Options{}), "MQ108")
	got := map[string]Finding{}
	for _, f := range fs {
		got[f.Object.Name] = f
	}
	if len(fs) != 2 {
		t.Fatalf("MQ108 findings %+v, want the DLQ and the delay queue alone", fs)
	}
	if f := got["orders.dlq"]; f.Severity != Warning || !strings.Contains(f.Message, `DLQ "orders.dlq" expires after 1h0m0s unused (expires 3600000 of policy "tidy")`) || !strings.Contains(f.Message, `Keep queue "orders.dlq" out of policy "tidy"`) {
		t.Errorf("the DLQ's finding: %s %s", f.Severity, f.Message)
	}
	if f := got["jobs.retry"]; f.Severity != Error || !strings.Contains(f.Message, `delay queue "jobs.retry" expires after 10m0s unused (its x-expires 600000)`) || !strings.Contains(f.Message, `Remove x-expires from queue "jobs.retry"`) {
		t.Errorf("the delay queue's finding: %s %s", f.Severity, f.Message)
	}
}

// TestMQ101LiveFeed: a queue with a message TTL of 0 (by argument or
// policy) and no dead-letter exchange discards what no consumer takes at
// once, which is what a live feed wants: the finding says so and how to
// silence it, and does not tell the user to add a DLQ that would collect
// every message published while no consumer waits. A TTL above 0 keeps
// the usual advice.
func TestMQ101LiveFeed(t *testing.T) {
	b := newBuilder()
	b.queue("feed", topology.Args{argTTL: 0})
	b.queue("by.policy", nil)
	b.policy("zero", "^by\\.policy$", topology.Args{"message-ttl": 0})
	b.queue("slow", topology.Args{argTTL: 60000})
	got := map[string]string{}
	for _, f := range only(b.run(t, Options{}), "MQ101") {
		got[f.Object.Name] = f.Message
	}
	for q, source := range map[string]string{"feed": "x-message-ttl", "by.policy": `policy "zero"'s message-ttl`} {
		m := got[q]
		for _, want := range []string{
			fmt.Sprintf("queue %q has a message TTL of 0 (%s) and no dead-letter exchange: it discards every message no consumer takes at once", q, source),
			"silence this with `# mqctl:ignore MQ101`",
			"Otherwise give it a message_ttl above 0",
		} {
			if !strings.Contains(m, want) {
				t.Errorf("MQ101 for %s lacks %q: %s", q, want, m)
			}
		}
		if strings.Contains(m, "Add dead_letter") {
			t.Errorf("MQ101 for %s tells the user to add a DLQ: %s", q, m)
		}
	}
	if m := got["slow"]; !strings.Contains(m, "Add dead_letter:") || strings.Contains(m, "TTL of 0") {
		t.Errorf("MQ101 for a TTL of 1m: %s", m)
	}
}

// shovelBindingCases are the rule cases of what a shovel binds.
func shovelBindingCases(t *testing.T) []ruleCase {
	return []ruleCase{
		// A shovel with src-exchange binds a queue of its own to the
		// exchange (BiobankLab__sensitive-data-archive's to_cega in the
		// corpus, told to bind a queue or remove the exchange); one that
		// consumes from another vhost's exchange of that name does not.
		{name: "exchange a shovel consumes from", id: "MQ402",
			build: fromFile(t, `version: 1
vhosts:
  /:
    exchanges: { to_remote: { type: topic }, lonely: { type: topic } }
    shovels:
      out: { src-uri: "amqp://", src-exchange: to_remote, src-exchange-key: "#", dest-uri: "amqp://remote", dest-exchange: x }
  other:
    exchanges: { lonely: { type: topic } }
    queues: { q: {} }
    shovels:
      elsewhere: { src-uri: "amqp:///other", src-exchange: lonely, dest-uri: "amqp:///other", dest-queue: q }
`),
			fire: []string{"lonely"}, quiet: []string{"to_remote"}},
	}
}
