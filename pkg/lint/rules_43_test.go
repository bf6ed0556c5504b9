package lint

import (
	"github.com/mqctl/mqctl/pkg/kind"
	"github.com/mqctl/mqctl/pkg/rmqversion"
	"github.com/mqctl/mqctl/pkg/topology"
)

// rabbit43RuleCases are the cases of what RabbitMQ 4.3 changed: the core
// x-modulus-hash exchange, quorum queues' delayed retry and delivery
// limits, consumer timeouts for quorum queues only.
func rabbit43RuleCases() []ruleCase {
	v40 := Options{Version: rmqversion.MustParse("4.0")}
	v43 := Options{Version: rmqversion.MustParse("4.3")}
	v430 := Options{Version: rmqversion.MustParse("4.3.0")}
	v431 := Options{Version: rmqversion.MustParse("4.3.1")}
	// retryQueue declares quorum queue q with kv as its arguments.
	retryQueue := func(qtype string, kv ...any) func(b *builder) {
		return func(b *builder) {
			args := topology.Args{argDLX: "dlx"}
			for i := 0; i+1 < len(kv); i += 2 {
				args[kv[i].(string)] = kv[i+1]
			}
			b.exchange("dlx", "fanout")
			b.queue("q.dlq", nil)
			b.bind("dlx", "q.dlq", "")
			b.typed("q", qtype, args)
		}
	}
	// timeoutPolicy: a consumer-timeout policy over a quorum queue, a
	// classic queue and a stream.
	timeoutPolicy := func(applyTo string, prio int) func(b *builder) {
		return func(b *builder) {
			b.typed("jobs.q", topology.QueueQuorum, nil)
			b.queue("jobs.c", nil)
			b.typed("jobs.s", topology.QueueStream, nil)
			pol := b.policy("timeouts", `^jobs\.`, topology.Args{"consumer-timeout": 600000})
			pol.ApplyTo, pol.Priority = applyTo, prio
		}
	}
	retryPolicy := func(def ...any) func(b *builder) {
		return func(b *builder) {
			b.typed("q", topology.QueueQuorum, nil)
			args := topology.Args{}
			for i := 0; i+1 < len(def); i += 2 {
				args[def[i].(string)] = def[i+1]
			}
			b.policy("retry", "^q$", args)
		}
	}
	// shardedDLX: queue work dead-letters with its own keys to an
	// x-modulus-hash exchange over three shards.
	shardedDLX := func(b *builder) {
		b.exchange("jobs", "direct")
		b.exchange("shards", "x-modulus-hash")
		b.queue("work", topology.Args{argDLX: "shards"})
		b.bind("jobs", "work", "work")
		for _, q := range []string{"dead.1", "dead.2", "dead.3"} {
			b.queue(q, nil)
			b.bind("shards", q, "")
		}
	}
	// shardedReturn: a delay queue whose expired messages return through
	// an x-modulus-hash exchange with their own keys: each lands in one
	// of the working queues, the one its keys hash to, whichever queue
	// scheduled it. (Without CC keys, a → work.a and d → work.b: one
	// sample's pick must not pass for where every retry goes.)
	shardedReturn := func(b *builder) {
		b.exchange("jobs", "direct")
		b.exchange("retry", "direct")
		b.exchange("back", "x-modulus-hash")
		b.queue("work.a", topology.Args{argDLX: "retry"})
		b.queue("work.b", topology.Args{argDLX: "retry"})
		b.bind("jobs", "work.a", "a")
		b.bind("jobs", "work.b", "d")
		b.bind("back", "work.a", "")
		b.bind("back", "work.b", "")
		b.queue("work.retry", topology.Args{argTTL: 5000, argDLX: "back"})
		b.bind("retry", "work.retry", "a")
		b.bind("retry", "work.retry", "d")
	}
	// shardedBackIntoItself: a dead-letter routing key fixes the pick of
	// an x-modulus-hash exchange: [work.a] hashes to entry 1 of 2
	// (erlang:phash2([<<"work.a">>], 134217728) rem 2 = 1, OTP 25.2.3), and
	// entry 1 of [work.a, work.a.retry] is the delay queue itself. 4.3
	// picks it for every retry; before 4.3 which entry is unknown.
	shardedBackIntoItself := func(b *builder) {
		b.exchange("jobs", "direct")
		b.exchange("back", "x-modulus-hash")
		b.queue("work.a", topology.Args{argDLX: "", argDLRK: "work.a.retry"})
		b.bind("jobs", "work.a", "a")
		b.bind("back", "work.a", "")
		b.queue("work.a.retry", topology.Args{argTTL: 5000, argDLX: "back", argDLRK: "work.a"})
		b.bind("back", "work.a.retry", "")
	}
	return []ruleCase{
		{name: "x-modulus-hash DLX on 4.3: its dead letters reach one of its queues", id: "MQ103",
			build: shardedDLX, opts: v43, quiet: []string{"work"}},
		{name: "x-modulus-hash DLX on 4.0: the plugin's pick is unknown, not lost", id: "MQ103",
			build: shardedDLX, opts: v40, quiet: []string{"work"}},
		{name: "every queue behind an x-modulus-hash DLX is a DLQ (each may get dead letters)", id: "MQ101",
			build: shardedDLX, opts: v43, quiet: []string{"work", "dead.1", "dead.2", "dead.3"}},
		{name: "a delay tier returning through x-modulus-hash by its own keys lands in one of the queues, not by one sample's pick", id: "MQ201",
			build: shardedReturn, opts: v43, fire: []string{"work.retry"},
			contains: []string{`through x-modulus-hash exchange "back" it reaches one of work.a and work.b, whichever the message's routing keys (its CC and BCC keys included) pick`}},
		{name: "the same before 4.3", id: "MQ201",
			build: shardedReturn, opts: v40, fire: []string{"work.retry"}, contains: []string{"it reaches one of work.a and work.b"}},
		{name: "a dead-letter routing key fixes x-modulus-hash's pick on 4.3: here the delay queue itself", id: "MQ201",
			build: shardedBackIntoItself, opts: v43, fire: []string{"work.a.retry"}, contains: []string{"back into itself"}},
		{name: "before 4.3 that pick is unknown", id: "MQ201",
			build: shardedBackIntoItself, opts: v40, quiet: []string{"work.a.retry"}},

		// MQ101: what counts towards a quorum queue's delivery limit.
		{name: "4.3 counts failed deliveries: a reject with requeue and a consumer gone, not a nack", id: "MQ101",
			build: func(b *builder) { b.typed("work", topology.QueueQuorum, topology.Args{"x-delivery-limit": 3}) }, opts: v43, fire: []string{"work"}, severity: Error,
			contains: []string{"on RabbitMQ 4.3 it drops a message once more than 3 of its deliveries have failed (its x-delivery-limit): a basic.reject with requeue is a failed delivery, and so is its consumer's channel or connection closing with it unacknowledged (a crash included); a basic.nack with requeue, basic.recover and a consumer timeout are not"}},
		{name: "4.3, limit 0: the first failed delivery", id: "MQ101",
			build: func(b *builder) { b.typed("work", topology.QueueQuorum, topology.Args{"x-delivery-limit": 0}) }, opts: v43, fire: []string{"work"},
			contains: []string{"it drops a message at its first failed delivery (its x-delivery-limit)"}},
		{name: "before 4.3 every return counts", id: "MQ101",
			build: func(b *builder) { b.typed("work", topology.QueueQuorum, topology.Args{"x-delivery-limit": 3}) }, opts: v40, fire: []string{"work"},
			contains: []string{"on RabbitMQ 4.0 it delivers a message at most 3 times after the first and drops it when it comes back again (its x-delivery-limit): every return counts: a basic.reject or basic.nack with requeue"}},
		{name: "3.10, a negative limit: the first return", id: "MQ101",
			build: func(b *builder) { b.typed("work", topology.QueueQuorum, topology.Args{"x-delivery-limit": -1}) },
			opts:  Options{Version: rmqversion.MustParse("3.10")}, fire: []string{"work"},
			contains: []string{"on RabbitMQ 3.10 it drops a message the first time it comes back (its x-delivery-limit)"}},

		// MQ408: an amqp10 destination's message settings, ignored from 4.2.
		{name: "amqp10 destination properties on 4.3", id: "MQ408", build: amqp10Bridge, opts: v43, fire: []string{"bridge"}, severity: Warning,
			contains: []string{`shovel "bridge" sets dest-message-annotations, which RabbitMQ 4.3 accepts and ignores`}},
		{name: "amqp10 destination properties before 4.2", id: "MQ408", build: amqp10Bridge,
			opts: Options{Version: rmqversion.MustParse("4.1")}, quiet: []string{"bridge"}},

		// MQ505 and MQ501: 4.3 evaluates consumer timeouts for quorum queues only.
		{name: "a consumer-timeout policy over all queue types", id: "MQ505",
			build: timeoutPolicy("queues", 0), opts: v43, fire: []string{"timeouts"}, quiet: []string{"jobs.q", "jobs.c", "jobs.s"}, severity: Warning,
			contains: []string{`policy "timeouts" sets consumer-timeout and applies to classic queue jobs.c and stream jobs.s: on RabbitMQ 4.3 only quorum queues evaluate consumer timeouts`,
				"by this policy or by consumer_timeout in rabbitmq.conf", "apply_to: quorum_queues"}},
		{name: "a consumer-timeout policy for quorum queues only", id: "MQ505",
			build: timeoutPolicy("quorum_queues", 0), opts: v43, quiet: []string{"timeouts"}},
		{name: "before 4.3 the channel evaluates them for every queue type", id: "MQ505",
			build: timeoutPolicy("queues", 0), opts: v40, quiet: []string{"timeouts"}},
		{name: "queues whose policy is another one", id: "MQ505",
			build: func(b *builder) {
				timeoutPolicy("queues", 0)(b)
				b.policy("cap", `^jobs\.[cs]$`, topology.Args{"max-length-bytes": 1000000}).Priority = 5
			}, opts: v43, quiet: []string{"timeouts", "cap"}},
		{name: "a higher policy that streams do not take leaves them the timeout one (the simulator's choice)", id: "MQ505",
			build: func(b *builder) {
				timeoutPolicy("queues", 0)(b)
				b.policy("cap", `^jobs\.[cs]$`, topology.Args{"max-length": 100}).Priority = 5
			}, opts: v43, fire: []string{"timeouts"}, contains: []string{`policy "timeouts" sets consumer-timeout and applies to stream jobs.s:`}},
		{name: "consumer-disconnected-timeout too", id: "MQ505",
			build: func(b *builder) {
				b.queue("c", nil)
				b.policy("gone", ".*", topology.Args{"consumer-disconnected-timeout": 30000})
			}, opts: v43, fire: []string{"gone"}, contains: []string{"sets consumer-disconnected-timeout and applies to classic queue c"}},
		{name: "x-consumer-timeout on a classic queue: refused on 4.3, and why the fix is quorum or nothing", id: "MQ501",
			build: func(b *builder) { b.queue("c", topology.Args{"x-consumer-timeout": 60000}) }, opts: v43, fire: []string{"c"},
			contains: []string{"classic queue \"c\" sets x-consumer-timeout, which classic queues do not support: on RabbitMQ 4.3 the broker refuses to declare it",
				"classic queues and streams never do, whatever sets the timeout (this argument, a consumer-timeout policy, or consumer_timeout in rabbitmq.conf)",
				"Remove it, or declare the queue with type: quorum to keep the timeout"}},
		{name: "x-consumer-timeout on a classic queue before 4.3", id: "MQ501",
			build: func(b *builder) { b.queue("c", topology.Args{"x-consumer-timeout": 60000}) }, opts: v40, quiet: []string{"c"}},

		// MQ504: the broker takes any x-delayed-retry-* value.
		{name: "delayed retry as it should be", id: "MQ504",
			build: retryQueue("quorum", "x-delayed-retry-type", "all", "x-delayed-retry-min", 1000, "x-delayed-retry-max", 60000), opts: v43, quiet: []string{"q"}},
		{name: "type disabled alone", id: "MQ504",
			build: retryQueue("quorum", "x-delayed-retry-type", "disabled"), opts: v43, quiet: []string{"q"}},
		{name: "an unknown type: disabled without a word", id: "MQ504",
			build: retryQueue("quorum", "x-delayed-retry-type", "bogus", "x-delayed-retry-min", 1000), opts: v43, fire: []string{"q"}, severity: Error,
			contains: []string{`x-delayed-retry-type "bogus" is not one of disabled, all, failed or returned: the broker takes it, and delayed retry stays disabled`, "RabbitMQ declares the queue without a word"}},
		{name: "min missing: disabled", id: "MQ504",
			build: retryQueue("quorum", "x-delayed-retry-type", "failed"), opts: v43, fire: []string{"q"},
			contains: []string{"x-delayed-retry-type failed without x-delayed-retry-min: the broker leaves delayed retry disabled"}},
		{name: "min not an integer", id: "MQ504",
			build: retryQueue("quorum", "x-delayed-retry-type", "all", "x-delayed-retry-min", "1000"), opts: v43, fire: []string{"q"},
			contains: []string{`x-delayed-retry-min "1000" is not a positive whole number of milliseconds: the broker leaves delayed retry disabled`}},
		{name: "min negative", id: "MQ504",
			build: retryQueue("quorum", "x-delayed-retry-type", "all", "x-delayed-retry-min", -5), opts: v43, fire: []string{"q"},
			contains: []string{"x-delayed-retry-min -5 is not a positive whole number"}},
		{name: "max negative: max is min", id: "MQ504",
			build: retryQueue("quorum", "x-delayed-retry-type", "all", "x-delayed-retry-min", 100, "x-delayed-retry-max", -1), opts: v43, fire: []string{"q"},
			contains: []string{"x-delayed-retry-max -1 is not a positive whole number of milliseconds: the broker uses min (100 ms) as max"}},
		{name: "max below min", id: "MQ504",
			build: retryQueue("quorum", "x-delayed-retry-type", "returned", "x-delayed-retry-min", 1000, "x-delayed-retry-max", 500), opts: v43, fire: []string{"q"},
			contains: []string{"x-delayed-retry-max 500 is below x-delayed-retry-min 1000: every retry waits 500 ms"}},
		{name: "min without a type", id: "MQ504",
			build: retryQueue("quorum", "x-delayed-retry-min", 1000), opts: v43, fire: []string{"q"},
			contains: []string{"without x-delayed-retry-type (all, failed or returned: which returns wait) delayed retry stays disabled"}},
		{name: "the type from a policy, min from the queue: judged together", id: "MQ504",
			build: func(b *builder) {
				retryQueue("quorum", "x-delayed-retry-min", 1000)(b)
				b.policy("retry", "^q$", topology.Args{"delayed-retry-type": "all", "delayed-retry-min": 2000})
			}, opts: v43, quiet: []string{"q", "retry"}},
		{name: "on a classic queue 4.3 refuses them: MQ501's finding, not MQ504's", id: "MQ504",
			build: retryQueue("classic", "x-delayed-retry-type", "all", "x-delayed-retry-min", 1000), opts: v43, quiet: []string{"q"}},
		{name: "on a classic queue 4.3 refuses them", id: "MQ501",
			build: retryQueue("classic", "x-delayed-retry-type", "all"), opts: v43, fire: []string{"q"},
			contains: []string{"on RabbitMQ 4.3 the broker refuses to declare it", "Delayed retry is a quorum queue feature (RabbitMQ 4.3): declare the queue with type: quorum"}},
		{name: "on a classic queue, with MQ501 off", id: "MQ504",
			build: retryQueue("classic", "x-delayed-retry-type", "all", "x-delayed-retry-min", 1000),
			opts:  Options{Version: rmqversion.MustParse("4.3"), Rules: map[string]string{"MQ501": "off"}}, fire: []string{"q"},
			contains: []string{"on RabbitMQ 4.3 the broker refuses to declare it (PRECONDITION_FAILED invalid arg), delayed retry is for quorum queues only"}},
		{name: "on a stream before 4.3: stored and ignored", id: "MQ504",
			build: retryQueue("stream", "x-delayed-retry-type", "all"), opts: v40, fire: []string{"q"},
			contains: []string{"stream \"q\" sets x-delayed-retry-type, which RabbitMQ 4.0 stores and ignores", "4.3 refuses these arguments on a stream", "declare the queue with type: quorum (queue arguments and type cannot change in place: mqctl plans a replace of the queue, so make the change while it is empty)"}},
		{name: "on a quorum queue before 4.3: stored and ignored", id: "MQ504",
			build: retryQueue("quorum", "x-delayed-retry-type", "all"), opts: v40, fire: []string{"q"},
			contains: []string{"which RabbitMQ 4.0 stores and ignores: delayed retry arrived in 4.3", "on 4.3 it would not work as written either: x-delayed-retry-type all without x-delayed-retry-min", "Remove them (queue arguments and type cannot change in place: mqctl plans a replace of the queue, so make the change while it is empty), or target RabbitMQ 4.3"}},
		{name: "policy keys before 4.3: refused", id: "MQ504",
			build: retryPolicy("delayed-retry-type", "all", "delayed-retry-min", 1000), opts: v40, fire: []string{"retry"}, severity: Error,
			contains: []string{"RabbitMQ 4.0 does not know them (delayed retry arrived in 4.3; its policy keys work from 4.3.1), so the broker refuses the whole policy"}},
		{name: "policy keys on 4.3.0: refused", id: "MQ504",
			build: retryPolicy("delayed-retry-type", "all", "delayed-retry-min", 1000), opts: v430, fire: []string{"retry"},
			contains: []string{"RabbitMQ 4.3.0 refuses them in policy definitions (a bug fixed in 4.3.1)"}},
		{name: "policy keys on 4.3.1", id: "MQ504",
			build: retryPolicy("delayed-retry-type", "all", "delayed-retry-min", 1000, "delayed-retry-max", 60000), opts: v431, quiet: []string{"retry", "q"}},
		{name: "a policy's type without min: refused, and its queue judged without it", id: "MQ504",
			build: retryPolicy("delayed-retry-type", "all"), opts: v43, fire: []string{"retry"}, quiet: []string{"q"},
			contains: []string{`Validation failed": delayed-retry-min is required when delayed-retry-type is all`}},
		{name: "a policy's bad type: refused", id: "MQ504",
			build: retryPolicy("delayed-retry-type", "sometimes", "delayed-retry-min", 10), opts: v43, fire: []string{"retry"}, quiet: []string{"q"},
			contains: []string{`"sometimes" is not a valid delayed retry type. Must be one of: all, failed, returned, disabled`}},
		{name: "a policy's max below min: refused, so its queue does not delay its retries", id: "MQ203",
			build: retryPolicy("delayed-retry-type", "failed", "delayed-retry-min", 5000, "delayed-retry-max", 1000), opts: v43, quiet: []string{"q"}},
		{name: "an operator policy's max below min: refused", id: "MQ504",
			build: func(b *builder) {
				b.typed("q", topology.QueueQuorum, nil)
				b.v.OperatorPolicies["cap"] = &topology.Policy{Name: "cap", Pattern: ".*", ApplyTo: "queues",
					Definition: topology.Args{"delayed-retry-type": "all", "delayed-retry-min": 1000, "delayed-retry-max": 50}.Normalized(), Meta: topology.Meta{Pos: b.pos()}}
			}, opts: v431, fire: []string{"cap"},
			contains: []string{"operator policy \"cap\": RabbitMQ refuses it", "delayed-retry-max (50) must not be smaller than delayed-retry-min (1000)"}},
		// Policy keys a version does not take (rmqversion
		// TestPolicyKeysAgainstBroker states each version's answer).
		{name: "consumer-disconnected-timeout in a policy before 4.3: refused", id: "MQ501",
			build: opTimeouts("policy", "consumer-disconnected-timeout"), opts: v40, fire: []string{"t"}, severity: Error,
			contains: []string{`policy "t" sets consumer-disconnected-timeout: RabbitMQ 4.0 refuses the whole policy (HTTP 400 "not recognised policy settings"): policies may set consumer-disconnected-timeout from 4.3`}},
		{name: "consumer-disconnected-timeout in a policy on 4.3", id: "MQ501",
			build: opTimeouts("policy", "consumer-disconnected-timeout"), opts: v43, quiet: []string{"t"}},
		{name: "consumer-timeout in an operator policy: refused on 4.3", id: "MQ501",
			build: opTimeouts("operator", "consumer-timeout"), opts: v43, fire: []string{"t"}, severity: Error,
			contains: []string{`operator policy "t" sets consumer-timeout: RabbitMQ 4.3 refuses the whole operator policy`, "Move consumer-timeout to a policy"}},
		{name: "consumer-timeout in an operator policy: refused on 4.0", id: "MQ501",
			build: opTimeouts("operator", "consumer-timeout"), opts: v40, fire: []string{"t"}},
	}
}

// opTimeouts declares a quorum queue and a policy ("policy") or an
// operator policy ("operator") t over it with key set to a minute.
func opTimeouts(which, key string) func(b *builder) {
	return func(b *builder) {
		b.typed("q", topology.QueueQuorum, nil)
		p := &topology.Policy{Name: "t", Pattern: "^q$", ApplyTo: "queues",
			Definition: topology.Args{key: 60000}.Normalized(), Meta: topology.Meta{Pos: b.pos()}}
		if which == "operator" {
			b.v.OperatorPolicies["t"] = p
		} else {
			b.v.Policies["t"] = p
		}
	}
}

// amqp10Bridge: a shovel to an AMQP 1.0 destination that annotates the
// messages it moves.
func amqp10Bridge(b *builder) {
	b.queue("q", nil)
	b.item(kind.Shovel, "bridge", topology.Args{"src-uri": "amqp://", "src-queue": "q", "dest-protocol": "amqp10", "dest-uri": "amqp://dc2",
		"dest-address": "/queues/q", "dest-message-annotations": map[string]any{"x-origin": "dc1"}})
}
