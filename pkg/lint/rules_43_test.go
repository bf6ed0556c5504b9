package lint

import (
	"github.com/mqctl/mqctl/pkg/rmqversion"
	"github.com/mqctl/mqctl/pkg/topology"
)

// rabbit43RuleCases are the cases of what RabbitMQ 4.3 changed: the core
// x-modulus-hash exchange.
func rabbit43RuleCases() []ruleCase {
	v40 := Options{Version: rmqversion.MustParse("4.0")}
	v43 := Options{Version: rmqversion.MustParse("4.3")}
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
	}
}
