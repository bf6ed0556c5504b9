package lint

import (
	"testing"

	"github.com/mqctl/mqctl/pkg/topology"
)

// TestMQ104CaughtDeadLetters: a queue that already sends its dead letters
// with its own key to its own DLQ is not told to do so; MQ104 names the
// binding that also takes them and says what to do about it. Dead-letter
// routing is the same on every supported version (4.3, the default, is
// judged; 4.0 and 3.10 route these keys alike).
func TestMQ104CaughtDeadLetters(t *testing.T) {
	// collector: w1 and w2 dead-letter to a topic exchange with their own
	// keys into their DLQs, and all-dead is bound there with "#".
	collector := func(ignore ...string) func(b *builder) {
		return func(b *builder) {
			b.exchange("dlx", "topic")
			b.dlqPair("w1", "", "", "dlx", nil)
			b.dlqPair("w2", "", "", "dlx", nil)
			b.queue("all-dead", nil)
			b.bind("dlx", "all-dead", "#").Ignore = ignore
		}
	}
	// wildcardName: the dead_letter sugar on a queue named jobs.* binds
	// its DLQ with the key jobs.*, a pattern that matches jobs.x.
	wildcardName := func(b *builder) {
		b.exchange("dlx", "topic")
		b.dlqPair("jobs.*", "", "", "dlx", nil)
		b.dlqPair("jobs.x", "", "", "dlx", nil)
	}
	ownKeyAdvice := "Give the queue its own dead-letter routing key"
	for _, tc := range []objectCase{
		{name: "a # binding on the DLX", version: "4.3", build: collector(), object: "w1",
			ids: []string{"MQ104"}, severity: Warning,
			contains: []string{`reach 2 queues (all-dead and w1.dlq)`, `its own routing key "w1"`,
				`binding dlx -> queue all-dead ["#"] also matches that key`,
				`Narrow the key of binding dlx -> queue all-dead ["#"] so that it no longer matches "w1", or remove the binding`,
				"`# mqctl:ignore MQ104`"},
			lacks: []string{ownKeyAdvice}},
		{name: "a # binding on the DLX, collector by intent", version: "4.3", build: collector("MQ104"), object: "w1"},
		{name: "a # binding on the DLX, collector by intent (by name)", version: "4.3", build: collector("dead-letters-cross-delivered"), object: "w2"},
		{name: "a queue named with a topic wildcard", version: "4.3", build: wildcardName, object: "jobs.x",
			ids: []string{"MQ104"}, severity: Warning,
			contains: []string{`binding dlx -> queue jobs.*.dlq ["jobs.*"] also matches that key`,
				`Queue jobs.*.dlq is the DLQ of queue "jobs.*"`, "its name, which dead_letter takes as the key by default",
				`the key is a pattern that also matches "jobs.x"`,
				`Give queue "jobs.*" a dead-letter routing key without wildcard words (dead_letter.routing_key`,
				"or dead-letter it to a direct exchange"},
			lacks: []string{ownKeyAdvice, "Narrow the key"}},
		{name: "the queue named with a topic wildcard itself", version: "4.3", build: wildcardName, object: "jobs.*"},
		{name: "queues sharing a key still get the own-key advice", version: "4.3", object: "a",
			build: func(b *builder) {
				b.exchange("dlx", "topic")
				for _, q := range []string{"a", "b"} {
					b.queue(q, topology.Args{argDLX: "dlx", argDLRK: "failed"})
					b.queue(q+".dlq", nil)
					b.bind("dlx", q+".dlq", "failed")
				}
			},
			ids: []string{"MQ104"}, severity: Warning, contains: []string{ownKeyAdvice + " (x-dead-letter-routing-key: a)"}},
	} {
		tc.look = []string{"MQ104"}
		t.Run(tc.name, tc.run)
	}
}
