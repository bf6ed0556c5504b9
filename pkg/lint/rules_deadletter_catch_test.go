package lint

import (
	"fmt"
	"testing"

	"github.com/mqctl/mqctl/pkg/topology"
)

// TestMQ104CaughtDeadLetters: a queue that already sends its dead letters
// with its own key to its own DLQ is not told to do so; MQ104 names the
// binding that also takes them and says what to do about it. Dead-letter
// routing is the same on every supported version (4.3, the default, is
// judged; 4.0 and 3.10 route these keys alike).
func TestMQ104CaughtDeadLetters(t *testing.T) {
	// collectorOf: queues w1…wN dead-letter to a topic exchange with their
	// own keys into their DLQs, and all-dead is bound there with "#".
	collectorOf := func(n int, ignore ...string) func(b *builder) {
		return func(b *builder) {
			b.exchange("dlx", "topic")
			for i := 1; i <= n; i++ {
				b.dlqPair(fmt.Sprintf("w%d", i), "", "", "dlx", nil)
			}
			b.queue("all-dead", nil)
			b.bind("dlx", "all-dead", "#").Ignore = ignore
		}
	}
	collector := func(ignore ...string) func(b *builder) { return collectorOf(2, ignore...) }
	// ignoring: collectorOf(n), but queue w1 itself is marked
	// `# mqctl:ignore MQ104`.
	ignoring := func(n int) func(b *builder) {
		return func(b *builder) {
			collectorOf(n)(b)
			b.v.Queues["w1"].Ignore = []string{"MQ104"}
		}
	}
	catchAll := `dlx -> queue all-dead ["#"]`
	// wildcardName: the dead_letter sugar on a queue named jobs.* binds
	// its DLQ with the key jobs.*, a pattern that matches jobs.x.
	wildcardName := func(b *builder) {
		b.exchange("dlx", "topic")
		b.dlqPair("jobs.*", "", "", "dlx", nil)
		b.dlqPair("jobs.x", "", "", "dlx", nil)
	}
	wildcardTwo := func(b *builder) {
		wildcardName(b)
		b.dlqPair("jobs.y", "", "", "dlx", nil)
	}
	// fanoutDLX: queues a, b and c dead-letter to exchange dlx of type
	// typ with their own keys, each DLQ bound there with its queue's key.
	fanoutDLX := func(typ string) func(b *builder) {
		return func(b *builder) {
			b.exchange("dlx", typ)
			for _, q := range []string{"a", "b", "c"} {
				b.dlqPair(q, "", "", "dlx", nil)
			}
		}
	}
	ownKeyAdvice := "Give the queue its own dead-letter routing key"
	for _, tc := range []objectCase{
		// One binding that takes the dead letters of several queues is one
		// cause: one finding, on the binding, naming them, with one fix.
		{name: "a # binding on the DLX", version: "4.3", build: collector(), object: catchAll,
			ids: []string{"MQ104"}, severity: Warning,
			contains: []string{`binding dlx -> queue all-dead ["#"] also takes the dead letters of 2 queues (w1 and w2)`,
				`each sends them to exchange "dlx" with its own routing key ("w1" and "w2"), which its DLQ is bound with, and the binding's key "#" matches them too`,
				`Narrow the key of binding dlx -> queue all-dead ["#"] so that it no longer matches "w1" and "w2", or remove the binding`,
				"`# mqctl:ignore MQ104`"},
			lacks: []string{ownKeyAdvice}},
		{name: "a # binding on the DLX: no finding on each queue", version: "4.3", build: collector(), object: "w1"},
		{name: "a # binding on the DLX: no finding on the other queue", version: "4.3", build: collector(), object: "w2"},
		{name: "a # binding on the DLX of seven queues, the list capped", version: "4.3", build: collectorOf(7), object: catchAll,
			ids: []string{"MQ104"}, severity: Warning,
			contains: []string{`the dead letters of 7 queues (w1, w2, w3, w4, w5 and 2 more)`,
				`its own routing key ("w1", "w2", "w3", "w4" and 3 more)`,
				`so that it no longer matches "w1", "w2", "w3", "w4" and 3 more, or remove the binding`}},
		{name: "a # binding on the DLX of seven queues: none on a queue", version: "4.3", build: collectorOf(7), object: "w7"},
		// A queue marked to ignore MQ104 is left out of the binding's list.
		{name: "a queue of three that ignores MQ104 is not named", version: "4.3", build: ignoring(3), object: catchAll,
			ids: []string{"MQ104"}, severity: Warning,
			contains: []string{`the dead letters of 2 queues (w2 and w3)`}, lacks: []string{"w1"}},
		{name: "one queue left beside one that ignores MQ104 has its own finding", version: "4.3", build: ignoring(2), object: "w2",
			ids: []string{"MQ104"}, severity: Warning,
			contains: []string{`reach 2 queues (all-dead and w2.dlq)`, `its own routing key "w2"`,
				`binding dlx -> queue all-dead ["#"] also matches that key`,
				`Narrow the key of binding dlx -> queue all-dead ["#"] so that it no longer matches "w2", or remove the binding`}},
		{name: "one queue left beside one that ignores MQ104: none on the binding", version: "4.3", build: ignoring(2), object: catchAll},
		{name: "a # binding on the DLX, collector by intent", version: "4.3", build: collector("MQ104"), object: catchAll},
		{name: "a # binding on the DLX, collector by intent: none on a queue", version: "4.3", build: collector("MQ104"), object: "w1"},
		{name: "a # binding on the DLX, collector by intent (by name)", version: "4.3", build: collector("dead-letters-cross-delivered"), object: "w2"},
		{name: "a wildcard DLQ binding that takes two queues' dead letters", version: "4.3", build: wildcardTwo, object: `dlx -> queue jobs.*.dlq ["jobs.*"]`,
			ids: []string{"MQ104"}, severity: Warning,
			contains: []string{`the dead letters of 2 queues (jobs.x and jobs.y)`,
				`the key is a pattern that also matches "jobs.x" and "jobs.y"`,
				`Give queue "jobs.*" a dead-letter routing key without wildcard words`},
			lacks: []string{ownKeyAdvice, "Narrow the key"}},
		{name: "a wildcard DLQ binding that takes two queues' dead letters: none on a queue", version: "4.3", build: wildcardTwo, object: "jobs.y"},
		{name: "a queue named with a topic wildcard", version: "4.3", build: wildcardName, object: "jobs.x",
			ids: []string{"MQ104"}, severity: Warning,
			contains: []string{`binding dlx -> queue jobs.*.dlq ["jobs.*"] also matches that key`,
				`Queue jobs.*.dlq is the DLQ of queue "jobs.*"`, "its name, which dead_letter takes as the key by default",
				`the key is a pattern that also matches "jobs.x"`,
				`Give queue "jobs.*" a dead-letter routing key without wildcard words (dead_letter.routing_key`,
				"or dead-letter it to a direct exchange"},
			lacks: []string{ownKeyAdvice, "Narrow the key"}},
		{name: "the queue named with a topic wildcard itself", version: "4.3", build: wildcardName, object: "jobs.*"},
		// A fanout DLX ignores keys: no narrower key would keep a DLQ's
		// binding from taking every queue's dead letters; its type must
		// change (with type: direct the same file has no finding).
		{name: "a fanout DLX takes every queue's dead letters to every DLQ", version: "4.3", build: fanoutDLX("fanout"), object: `dlx -> queue a.dlq ["a"]`,
			ids: []string{"MQ104"}, severity: Warning,
			contains: []string{`binding dlx -> queue a.dlq ["a"] also takes the dead letters of 2 queues (b and c)`,
				`but the fanout exchange "dlx" ignores keys and delivers them all to every queue bound to it`,
				`Make exchange "dlx" a direct exchange (type: direct)`, "`# mqctl:ignore MQ104`"},
			lacks: []string{"Narrow the key", `the binding's key "a" matches them too`}},
		{name: "the same DLX made direct", version: "4.3", build: fanoutDLX("direct"), object: `dlx -> queue a.dlq ["a"]`},
		{name: "the same DLX made direct: none on a queue", version: "4.3", build: fanoutDLX("direct"), object: "a"},
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
