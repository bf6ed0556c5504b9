package lint

import (
	"github.com/mqctl/mqctl/pkg/rmqversion"
	"github.com/mqctl/mqctl/pkg/topology"
)

// handTiers declares the delay-tier recipe written as plain objects: TTL
// queues bound from retry exchange orders.retry (with keys of their own),
// dead-lettering to the work exchange orders without a dead-letter routing
// key, and the working queue orders.shipping bound to orders.
func handTiers(b *builder, workDLX bool) {
	b.exchange("orders", "topic")
	b.exchange("orders.retry", "direct")
	var extra topology.Args
	if workDLX {
		b.exchange("orders.dlx", "direct")
		b.dlqPair("orders.shipping", "orders", "order.created", "orders.dlx", extra)
	} else {
		b.queue("orders.shipping", nil)
		b.bind("orders", "orders.shipping", "order.created")
	}
	for _, tier := range []struct {
		name string
		ttl  int
	}{{"orders.retry.10s", 10000}, {"orders.retry.1m", 60000}, {"orders.retry.10m", 600000}} {
		b.queue(tier.name, topology.Args{argTTL: tier.ttl, argDLX: "orders"})
		b.bind("orders.retry", tier.name, tier.name)
	}
}

// auditRetryLoop is a retry loop through a delay queue (audit ->
// retry.audit -> audit.retry -> back to audit) beside a parking-lot queue
// audit.dlq, named as audit's DLQ, that only a client fills.
func auditRetryLoop(b *builder) {
	b.exchange("events", "topic")
	b.exchange("retry.audit", "direct")
	b.exchange("dlq.audit", "direct")
	b.queue("audit", topology.Args{argDLX: "retry.audit", argDLRK: "retry"})
	b.bind("events", "audit", "#")
	b.queue("audit.retry", topology.Args{argTTL: 15000, argDLX: "", argDLRK: "audit"})
	b.bind("retry.audit", "audit.retry", "retry")
	b.queue("audit.dlq", nil)
	b.bind("dlq.audit", "audit.dlq", "parking")
}

// workWithUnusedDLQ is a queue without a dead-letter exchange beside a
// queue named as its DLQ, bound to exchange jobs.dead.
func workWithUnusedDLQ(b *builder) {
	b.exchange("jobs", "direct")
	b.exchange("jobs.dead", "direct")
	b.queue("work", nil)
	b.bind("jobs", "work", "work")
	b.queue("work.dlq", nil)
	b.bind("jobs.dead", "work.dlq", "work")
}

// ttlWorkBrokenDLQ is a working queue with a TTL whose dead letters reach
// no queue: the DLQ behind its dead-letter exchange is bound for a
// misspelt key.
func ttlWorkBrokenDLQ(b *builder) {
	b.exchange("jobs", "direct")
	b.exchange("jobs.dlx", "direct")
	b.queue("work", topology.Args{argTTL: 60000, argDLX: "jobs.dlx"})
	b.bind("jobs", "work", "work")
	b.queue("parked", nil)
	b.bind("jobs.dlx", "parked", "wrok")
}

// roleRuleCases are the cases about what a queue is for: delay tiers
// however they are written, collectors of unroutable messages, DLQs that no
// dead letters reach.
func roleRuleCases() []ruleCase {
	tiers := []string{"orders.retry.10s", "orders.retry.1m", "orders.retry.10m"}
	return []ruleCase{
		{name: "hand-written delay tiers back to the work exchange: delay advice", id: "MQ201",
			build: func(b *builder) { handTiers(b, false) },
			fire:  tiers,
			contains: []string{`delay queue "orders.retry.10s" sends expired messages to exchange "orders"`, `with key "orders.retry.10s" it matches no binding and is dropped`,
				`retry: {delays: [10s, 1m, 10m]} on queue orders.shipping`, "orders.shipping.retry.10s"}},
		{name: "hand-written delay tiers get no DLQ advice", id: "MQ103",
			build: func(b *builder) { handTiers(b, false) },
			quiet: tiers},
		{name: "hand-written delay tier, working queue with a DLQ", id: "MQ201",
			build: func(b *builder) {
				handTiers(b, true)
				delete(b.v.Queues, "orders.retry.1m")
				delete(b.v.Queues, "orders.retry.10m")
			},
			fire: []string{"orders.retry.10s"}},
		{name: "delay tier bound from a retry exchange, back through the default exchange", id: "MQ201",
			build: func(b *builder) {
				b.exchange("jobs", "direct")
				b.exchange("retry", "direct")
				b.queue("work", nil)
				b.bind("jobs", "work", "work")
				b.queue("wait", topology.Args{argTTL: 5000, argDLX: ""})
				b.bind("retry", "wait", "later")
			},
			fire: []string{"wait"}, contains: []string{`with key "later" it matches no binding`}},
		{name: "a working queue with a TTL and a broken DLQ binding gets DLQ advice", id: "MQ103",
			build: ttlWorkBrokenDLQ,
			fire:  []string{"work"}, contains: []string{"x-dead-letter-routing-key"}},
		{name: "no delay advice for a working queue with a TTL", id: "MQ201",
			build: ttlWorkBrokenDLQ,
			quiet: []string{"work"}},
		{name: "delay queue with a missing DLX gets delay advice", id: "MQ102",
			build: func(b *builder) {
				b.queue("work", nil)
				b.queue("work.wait", topology.Args{argTTL: 1000, argDLX: "nope"})
			},
			fire: []string{"work.wait"}, contains: []string{"delay queue", "every retry", `x-dead-letter-exchange to ""`}},

		// Collectors of unroutable messages.
		{name: "a queue fed only through an alternate exchange is no queue to give a DLQ", id: "MQ101",
			build: func(b *builder) {
				x := b.exchange("orders", "topic")
				x.Arguments = topology.Args{argAlternate: "orders.unrouted"}
				b.exchange("orders.unrouted", "fanout")
				b.exchange("sink", "fanout")
				b.v.Bindings = append(b.v.Bindings, &topology.Binding{Source: "orders.unrouted", Destination: "sink", DestinationType: topology.DestExchange, Meta: topology.Meta{Pos: b.pos()}})
				b.queue("unrouted", topology.Args{argMaxLen: 1000})
				b.bind("orders.unrouted", "unrouted", "")
				b.queue("sunk", topology.Args{argMaxLen: 1000})
				b.bind("sink", "sunk", "")
				b.queue("work", topology.Args{argMaxLen: 1000, argOverflow: "reject-publish"})
				b.bind("orders", "work", "order.*")
			},
			fire: []string{"work"}, quiet: []string{"unrouted", "sunk"}},

		{name: "an internal exchange nothing is bound to or from loses nothing", id: "MQ402",
			build: func(b *builder) {
				b.exchange("unused.internal", "direct").Internal = true
				b.exchange("front", "topic")
				b.exchange("fed.internal", "direct").Internal = true
				b.v.Bindings = append(b.v.Bindings, &topology.Binding{Source: "front", Destination: "fed.internal", DestinationType: topology.DestExchange, RoutingKey: "#", Meta: topology.Meta{Pos: b.pos()}})
			},
			fire: []string{"fed.internal"}, quiet: []string{"unused.internal", "front"}, contains: []string{"mqctl:ignore MQ402"}},

		// MQ106
		{name: "DLQ by name in a retry loop", id: "MQ106",
			build: auditRetryLoop,
			fire:  []string{"audit.dlq"}, quiet: []string{"audit", "audit.retry"},
			contains: []string{`named as the DLQ of queue "audit"`, "retried for ever", "mqctl:ignore MQ106",
				// where the consumer publishes it, as the file binds the DLQ
				// (AlexandreNoguez__event-driven-design-monorepo-example:
				// dlq.q.<name> with key parking), not "where this queue is
				// bound" for the user to work out.
				`make it publish such a message to exchange "dlq.audit" with routing key "parking", where this queue is bound`}},
		{name: "DLQ by name in a retry loop, bound to nothing", id: "MQ106",
			build: func(b *builder) {
				auditRetryLoop(b)
				b.v.Bindings = b.v.Bindings[:len(b.v.Bindings)-1]
			},
			fire:     []string{"audit.dlq"},
			contains: []string{`make it publish such a message to the default exchange ("") with routing key "audit.dlq"`}},
		{name: "a DLQ by name is asked for no DLQ of its own", id: "MQ101",
			build: func(b *builder) {
				auditRetryLoop(b)
				b.queue("parking.dead-letter", nil) // named as a DLQ, of no declared queue
			},
			quiet: []string{"audit", "audit.retry", "audit.dlq", "parking.dead-letter"}},
		{name: "origin without DLX: MQ101 points at the DLQ, MQ106 stays silent", id: "MQ106",
			build: workWithUnusedDLQ,
			quiet: []string{"work.dlq"}},
		{name: "origin without DLX: its MQ101 names the DLQ by name", id: "MQ101",
			build: workWithUnusedDLQ,
			fire:  []string{"work"}, quiet: []string{"work.dlq"},
			contains: []string{`Queue "work.dlq" looks like its DLQ`, "dead_letter: {exchange: jobs.dead, routing_key: work}"}},
		{name: "DLQs that dead letters reach", id: "MQ106",
			build: func(b *builder) {
				b.exchange("jobs", "direct")
				b.exchange("dlx", "direct")
				b.dlqPair("work", "jobs", "work", "dlx", nil)
				b.queue("other", topology.Args{argDLX: "", argDLRK: "other.dead"})
				b.queue("other.dead", nil)
			},
			quiet: []string{"work.dlq", "other.dead"}},
		{name: "a queue named as a DLQ that an alternate exchange (argument) fills", id: "MQ106",
			build: func(b *builder) {
				unroutedByArgument(b)
				b.queue("audit.dead", nil) // named as a DLQ, bound nowhere: only a client fills it
			},
			fire: []string{"audit.dead"}, quiet: []string{"unrouted.dlq", "orders.shipping"},
			contains: []string{`queue "audit.dead" is named as a DLQ`, "only a client that publishes here fills it"}},
		{name: "a queue named as the DLQ of a declared queue that only an alternate exchange fills", id: "MQ106",
			build: func(b *builder) {
				b.exchange("jobs", "direct").Arguments = topology.Args{argAlternate: "jobs.unrouted"}
				b.exchange("jobs.unrouted", "fanout")
				b.exchange("dlx", "direct")
				b.queue("work", topology.Args{argDLX: "dlx", argDLRK: "work"})
				b.bind("jobs", "work", "work")
				b.queue("work.failed", nil)
				b.bind("dlx", "work.failed", "work")
				b.queue("work.dlq", nil) // collects what jobs cannot route, not work's dead letters
				b.bind("jobs.unrouted", "work.dlq", "")
			},
			quiet: []string{"work", "work.failed", "work.dlq"}},
		{name: "a queue named as a DLQ that an alternate exchange fills beside a regular exchange", id: "MQ106",
			build: unroutedBesideParking,
			quiet: []string{"unrouted.dlq", "lost.dead"}},
		{name: "a queue named as a DLQ that an alternate exchange fills beside a regular exchange is asked for no DLQ", id: "MQ101",
			build: unroutedBesideParking,
			fire:  []string{"orders.shipping"}, quiet: []string{"unrouted.dlq", "lost.dead"}},
		{name: "a queue named as a DLQ that an alternate-exchange policy fills", id: "MQ106",
			build: sdaCatchAll("exchanges", false),
			quiet: []string{"catch_all.dead", "ingest"}},
		{name: "a queue named as a DLQ that an alternate-exchange policy fills is asked for no DLQ", id: "MQ101",
			build: sdaCatchAll("exchanges", false),
			fire:  []string{"ingest"}, quiet: []string{"catch_all.dead"}},
		{name: "a queue named as a DLQ that an alternate-exchange policy fills collects unroutable messages", id: "MQ301",
			build: sdaCatchAll("all", false),
			fire:  []string{"catch_all.dead", "ingest"}, contains: []string{`queue "catch_all.dead" collects unroutable messages`}},
		{name: "an alternate-exchange policy for queues sets no alternate exchange", id: "MQ106",
			build: sdaCatchAll("queues", false),
			fire:  []string{"catch_all.dead"}, quiet: []string{"ingest"},
			contains: []string{"no queue dead-letters into it: only a client that publishes here fills it", `dead_letter: {exchange: "", routing_key: catch_all.dead}`,
				`Policy "sda-ae" names exchange "sda.dead", which delivers to this queue, as alternate exchange, but it applies to queues only (apply_to: queues)`,
				`to collect them here, set apply_to: exchanges on policy "sda-ae". If that is the plan`}},
		{name: "an operator policy cannot set an alternate exchange", id: "MQ106",
			build: sdaCatchAll("exchanges", true),
			fire:  []string{"catch_all.dead"}, quiet: []string{"ingest"},
			contains: []string{`Operator policy "sda-ae" names exchange "sda.dead"`, "operator policies cannot set alternate-exchange",
				"move alternate-exchange: sda.dead to a policy that applies to the exchanges"}},
		{name: "an alternate-exchange policy whose pattern matches no exchange", id: "MQ106",
			build: func(b *builder) {
				sdaCatchAll("exchanges", false)(b)
				b.v.Policies["sda-ae"].Pattern = "^sda-main$"
			},
			fire: []string{"catch_all.dead"},
			contains: []string{`its pattern "^sda-main$" matches no other exchange`,
				`make the pattern of policy "sda-ae" match the exchanges whose unroutable messages belong here`}},
		{name: "an alternate-exchange policy that the exchange's own argument overrides", id: "MQ106",
			build: func(b *builder) {
				sdaCatchAll("all", false)(b)
				b.exchange("sda.other", "fanout")
				b.v.Exchanges["sda"].Arguments = topology.Args{argAlternate: "sda.other"}
			},
			fire: []string{"catch_all.dead"},
			contains: []string{`the exchanges it matches take their alternate exchange elsewhere: sda (its own alternate-exchange argument wins over the policy)`,
				"to collect them here, remove the exchange's own alternate-exchange argument."}},
		{name: "an alternate-exchange policy shadowed by one of higher priority", id: "MQ106",
			build: func(b *builder) {
				sdaCatchAll("exchanges", false)(b)
				p := b.policy("sda-federation", "^sda$", topology.Args{"federation-upstream-set": "all"})
				p.ApplyTo, p.Priority = "exchanges", 5
			},
			fire: []string{"catch_all.dead"},
			contains: []string{`sda (policy "sda-federation" applies to it instead: RabbitMQ applies one policy per exchange)`,
				"to collect them here, put alternate-exchange: sda.dead in the policy that applies instead."}},
	}
}

// unroutedByArgument is a topic exchange whose alternate-exchange argument
// names a fanout exchange, and queue unrouted.dlq (named as a DLQ, of no
// declared queue) bound to that fanout exchange.
func unroutedByArgument(b *builder) {
	b.exchange("orders", "topic").Arguments = topology.Args{argAlternate: "orders.unrouted"}
	b.exchange("orders.unrouted", "fanout")
	b.queue("orders.shipping", nil)
	b.bind("orders", "orders.shipping", "order.created")
	b.queue("unrouted.dlq", nil)
	b.bind("orders.unrouted", "unrouted.dlq", "")
}

// unroutedBesideParking is unroutedByArgument, and queue lost.dead (named
// as a DLQ, of no declared queue) bound both to the alternate exchange
// and to exchange parking, which is no alternate exchange.
func unroutedBesideParking(b *builder) {
	unroutedByArgument(b)
	b.exchange("parking", "direct")
	b.queue("lost.dead", nil)
	b.bind("orders.unrouted", "lost.dead", "")
	b.bind("parking", "lost.dead", "lost")
}

// sdaCatchAll is the shape of a real file: topic exchange sda takes its
// alternate exchange sda.dead (a topic exchange) from a policy, and queue
// catch_all.dead (named as a DLQ, of no declared queue) is bound to
// sda.dead with "#". applyTo is the policy's apply-to; operator makes it
// an operator policy, which cannot set an alternate exchange.
func sdaCatchAll(applyTo string, operator bool) func(b *builder) {
	return func(b *builder) {
		b.exchange("sda", "topic")
		b.exchange("sda.dead", "topic")
		b.queue("ingest", nil)
		b.bind("sda", "ingest", "ingest")
		b.queue("catch_all.dead", nil)
		b.bind("sda.dead", "catch_all.dead", "#")
		p := b.policy("sda-ae", "^sda$", topology.Args{argAlternate: "sda.dead"})
		p.ApplyTo = applyTo
		if operator {
			delete(b.v.Policies, p.Name)
			b.v.OperatorPolicies[p.Name] = p
		}
	}
}

// versionRuleCases are the cases whose verdict depends on the RabbitMQ
// version the file is judged for.
func versionRuleCases() []ruleCase {
	v310 := Options{Version: rmqversion.MustParse("3.10")}
	v40 := Options{Version: rmqversion.MustParse("4.0")}
	v43 := Options{Version: rmqversion.MustParse("4.3")}
	quorumNoDLX := func(b *builder) {
		b.exchange("jobs", "direct")
		b.typed("work", topology.QueueQuorum, nil)
		b.bind("jobs", "work", "work")
	}
	shadow := func(b *builder) {
		b.queue("job.dead", nil)
		b.queue("job.work", nil)
		b.policy("dead-cap", `^job\.dead$`, topology.Args{"max-length": 1000}).Priority = 5
		b.policy("jobs", `^job\.`, topology.Args{"message-ttl": 60000, "max-in-memory-length": 10}).Priority = 10
	}
	return []ruleCase{
		{name: "quorum queue without DLX on 4.0: its delivery limit drops messages", id: "MQ101",
			build: quorumNoDLX, opts: v40, fire: []string{"work"}, severity: Error,
			contains: []string{"on RabbitMQ 4.0", "at most 20 times", "dead_letter:"}},
		{name: "quorum queue without DLX on 4.3, the default target", id: "MQ101",
			build: quorumNoDLX, fire: []string{"work"}, severity: Error,
			contains: []string{"on RabbitMQ 4.3 it drops a message once more than 20 of its deliveries have failed", "a basic.nack with requeue, basic.recover and a consumer timeout are not", "dead_letter:"}},
		{name: "quorum queue without DLX on 3.10: no delivery limit", id: "MQ101",
			build: quorumNoDLX, opts: v310, fire: []string{"work"}, severity: Warning},
		{name: "a severity set in the file wins over the version's", id: "MQ101",
			build: quorumNoDLX, opts: Options{Rules: map[string]string{"MQ101": "info"}}, fire: []string{"work"}, severity: Info},

		{name: "ha-* keys on 4.0 are refused", id: "MQ702",
			build: func(b *builder) { b.policy("ha-all", ".*", topology.Args{"ha-mode": "all", "max-length": 10}) },
			opts:  v40, fire: []string{"ha-all"}, severity: Error, contains: []string{"on RabbitMQ 4.0", "HTTP 400", "(max-length) never reach"}},
		{name: "ha-* keys on 3.10 are deprecated", id: "MQ702",
			build: func(b *builder) {
				b.typed("qq", topology.QueueQuorum, nil)
				b.policy("ha-all", ".*", topology.Args{"ha-mode": "all"})
			},
			opts: v310, fire: []string{"ha-all"}, severity: Warning,
			contains: []string{"works on RabbitMQ 3.10 but is deprecated", "quorum queues do not support ha-mode", "(qq)"}},
		{name: "ha-* keys are MQ702's, not MQ501's", id: "MQ501",
			build: func(b *builder) {
				b.typed("qq", topology.QueueQuorum, nil)
				b.policy("ha-all", ".*", topology.Args{"ha-mode": "all"})
			},
			opts: v310, quiet: []string{"ha-all"}},

		{name: "leader locator on a classic queue before 4.0", id: "MQ501",
			build: func(b *builder) { b.queue("cq", topology.Args{"x-queue-leader-locator": "balanced"}) },
			opts:  v310, fire: []string{"cq"}, contains: []string{"on RabbitMQ 3.10", "x-queue-master-locator"}},
		{name: "leader locator on a classic queue on 4.0", id: "MQ501",
			build: func(b *builder) { b.queue("cq", topology.Args{"x-queue-leader-locator": "balanced"}) },
			quiet: []string{"cq"}},

		{name: "deprecated arguments and policy keys on 4.0", id: "MQ503",
			build: func(b *builder) {
				b.queue("lazy", topology.Args{"x-queue-mode": "lazy"})
				b.queue("located", topology.Args{"x-queue-master-locator": "min-masters"})
				b.typed("qq", topology.QueueQuorum, nil)
				b.policy("old", ".*", topology.Args{"queue-master-locator": "client-local"})
			},
			opts: v40, fire: []string{"lazy", "located", "old"}, severity: Warning,
			contains: []string{"RabbitMQ 4.0 ignores it", "x-queue-leader-locator: balanced", "queue-leader-locator: client-local",
				"mqctl plans a replace", "quorum queues do not support queue-master-locator"}},
		// RabbitMQ 4.3.6 takes a classic queue with x-queue-mode (its
		// release notes said it would refuse it): a warning, no error.
		{name: "queue mode on 4.3 is ignored, not refused", id: "MQ503",
			build: func(b *builder) { b.queue("lazy", topology.Args{"x-queue-mode": "lazy"}) },
			opts:  v43, fire: []string{"lazy"}, severity: Warning, contains: []string{"RabbitMQ 4.3 ignores it", "no longer even checks its value"}},
		{name: "queue master locator refused on 4.3", id: "MQ503",
			build: func(b *builder) { b.queue("located", topology.Args{"x-queue-master-locator": "client-local"}) },
			opts:  v43, fire: []string{"located"}, severity: Error, contains: []string{"RabbitMQ 4.3 denies the deprecated feature queue_master_locator", "x-queue-leader-locator: client-local"}},
		{name: "lazy mode on 3.10 still works", id: "MQ503",
			build: func(b *builder) {
				b.queue("lazy", topology.Args{"x-queue-mode": "lazy"})
				b.queue("located", topology.Args{"x-queue-master-locator": "min-masters"})
			},
			opts: v310, quiet: []string{"lazy", "located"}},

		{name: "a policy shadowed by one of higher priority", id: "MQ303",
			build: shadow, opts: v310, fire: []string{"dead-cap"},
			contains: []string{`policy "jobs" (priority 10) on job.dead`, "max-length", "above 10"}},
		{name: "on 4.0 the higher policy does not apply to classic queues (max-in-memory-length)", id: "MQ303",
			build: shadow, quiet: []string{"dead-cap", "jobs"}},
		{name: "equal priorities and partial overlap are no shadow", id: "MQ303",
			build: func(b *builder) {
				b.queue("a.x", nil)
				b.queue("a.y", nil)
				b.queue("b", nil)
				b.policy("tie1", `^b$`, topology.Args{"max-length": 1})
				b.policy("tie2", `^b$`, topology.Args{"max-length": 2})
				b.policy("some", `^a\.`, topology.Args{"max-length": 3})
				b.policy("top", `^a\.x$`, topology.Args{"max-length": 4}).Priority = 9
				b.policy("nothing", `^zzz$`, topology.Args{"max-length": 5})
			},
			quiet: []string{"tie1", "tie2", "some", "top", "nothing"}},
		// MQ305
		{name: "equal priorities, different settings, on one queue", id: "MQ305",
			build: func(b *builder) {
				b.exchange("dlx", "fanout")
				b.exchange("x", "topic")
				b.queue("a", nil)
				b.queue("b", nil)
				b.policy("dl", `^a$`, topology.Args{"dead-letter-exchange": "dlx"})
				b.policy("cap", `^[ab]$`, topology.Args{"max-length": 10})
				b.policy("cap2", `^b$`, topology.Args{"max-length": 10})
				b.policy("top", `^b$`, topology.Args{"max-length": 5}).Priority = 1
				b.policy("ae1", `^x$`, topology.Args{"alternate-exchange": "dlx"}).ApplyTo = "exchanges"
				b.policy("ae2", `^x$`, topology.Args{"alternate-exchange": "other"}).ApplyTo = "exchanges"
			},
			fire: []string{"cap", "ae1"}, quiet: []string{"dl", "cap2", "top", "ae2"},
			contains: []string{`policy "cap" and policy "dl" both match queue a with priority 0, the highest there: RabbitMQ applies one policy per queue or exchange, and which of the two is not defined`,
				`("cap": {"max-length":10}; "dl": {"dead-letter-exchange":"dlx"})`}},
		{name: "equal priorities, the same settings", id: "MQ305",
			build: func(b *builder) {
				b.queue("a", nil)
				b.policy("p1", `^a$`, topology.Args{"max-length": 10})
				b.policy("p2", `^a`, topology.Args{"max-length": 10})
			},
			quiet: []string{"p1", "p2"}},
	}
}
