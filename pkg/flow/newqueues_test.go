package flow

import (
	"reflect"
	"testing"

	"github.com/mqctl/mqctl/pkg/topology"
)

// TestNewQueueLimits: a queue declared after the change only with a
// length limit drops, dead-letters or refuses what reaches it once full;
// the flows said only that routes now reach it. It is lost to the change
// where what reaches it reached a queue before that kept more (a queue
// renamed, and limited on the way).
func TestNewQueueLimits(t *testing.T) {
	in := func(q string) []obj { return []obj{exchange("in", "fanout", nil), bind("in", q, "")} }
	with := func(extra []obj, objs ...obj) *topology.Topology { return topo(append(objs, extra...)...) }
	limit := func(n int, overflow string) topology.Args {
		return topology.Args{"x-max-length": n, "x-overflow": overflow}
	}
	dh := "it is new, with a length limit of 2 messages (x-max-length), and when full drops its oldest messages (overflow drop-head)"
	refuses := "it is new: once it holds 2 messages it refuses what is published to it (overflow reject-publish, x-overflow) and dead-letters none of it: a publisher using confirms gets a basic.nack for each message and can publish it again, one without confirms loses it without a word"
	moved := `; what reaches it reached queue "q" before the change, and no longer does`
	tests := []struct {
		name          string
		before, after *topology.Topology
		dead          []DeadLetter // those of NewQueue
		refusing      []Refusing
	}{
		// What reaches it reached no queue before: no message's fate
		// changes for the worse, and a first apply of many capped queues
		// would list each.
		{name: "a new queue, nothing reached before: not listed",
			before: topo(exchange("in", "fanout", nil)), after: with(in("q2"), queue("q2", limit(2, "drop-head")))},
		{name: "renamed and limited: lost",
			before: with(in("q"), queue("q", nil)), after: with(in("q2"), queue("q2", limit(2, "drop-head"))),
			dead: []DeadLetter{{Vhost: "/", Queue: "q2", Reason: "maxlen", NewQueue: true, From: []string{"q"}, Loses: true,
				After: &DeadLetterEnd{Dropped: true, Why: "no dead-letter exchange"}, Cause: dh + "; no dead-letter exchange" + moved}}},
		{name: "renamed with the limit it had: not lost to it",
			before: with(in("q"), queue("q", limit(2, "drop-head"))), after: with(in("q2"), queue("q2", limit(2, "drop-head"))),
			dead: []DeadLetter{{Vhost: "/", Queue: "q2", Reason: "maxlen", NewQueue: true, From: []string{"q"},
				After: &DeadLetterEnd{Dropped: true, Why: "no dead-letter exchange"}, Cause: dh + "; no dead-letter exchange" + moved}}},
		{name: "renamed, dead letters to a queue: not lost",
			before: with(in("q"), queue("q", nil), queue("dlq", nil)),
			after:  with(in("q2"), queue("q2", topology.Args{"x-max-length": 2, "x-dead-letter-exchange": "", "x-dead-letter-routing-key": "dlq"}), queue("dlq", nil)),
			dead: []DeadLetter{{Vhost: "/", Queue: "q2", Reason: "maxlen", NewQueue: true, From: []string{"q"},
				After: &DeadLetterEnd{Configured: true, RoutingKey: "dlq", Queues: []string{"dlq"}}, Cause: "it is new, with a length limit of 2 messages (x-max-length), and when full drops its oldest messages (overflow drop-head)" + moved}}},
		{name: "a queue still reached: not listed",
			before: with(in("q"), queue("q", nil)), after: with(append(in("q"), bind("in", "q2", "")), queue("q", nil), queue("q2", limit(2, "drop-head")))},
		{name: "renamed, reject-publish: lost",
			before: with(in("q"), queue("q", nil)), after: with(in("q2"), queue("q2", limit(2, "reject-publish"))),
			refusing: []Refusing{{Vhost: "/", Queue: "q2", Type: "classic", Limit: "2 messages", Cause: refuses + moved, NewQueue: true, From: []string{"q"}, KeptMore: true}}},
		{name: "a new queue, reject-publish, nothing reached before: not listed",
			before: topo(exchange("in", "fanout", nil)), after: with(in("q2"), queue("q2", limit(2, "reject-publish")))},
		{name: "renamed and limited by policy: lost",
			before: with(in("q"), queue("q", nil)), after: with(in("q2"), queue("q2", nil), policy("cap", "^q2$", "queues", topology.Args{"max-length": 2})),
			dead: []DeadLetter{{Vhost: "/", Queue: "q2", Reason: "maxlen", NewQueue: true, From: []string{"q"}, Loses: true, After: &DeadLetterEnd{Dropped: true, Why: "no dead-letter exchange"},
				Cause: "it is new, with a length limit of 2 messages (policy \"cap\"'s max-length), and when full drops its oldest messages (overflow drop-head); no dead-letter exchange" + moved}}},
		{name: "a limit of 0 with reject-publish refuses every message: the routes say so",
			before: topo(exchange("in", "fanout", nil)), after: with(in("q2"), queue("q2", limit(0, "reject-publish")))},
		{name: "a new queue without a limit", before: topo(exchange("in", "fanout", nil)), after: with(in("q2"), queue("q2", nil))},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			d := Compare(tc.before, tc.after, Options{})
			var dead []DeadLetter
			for _, dl := range d.DeadLetters {
				if dl.NewQueue {
					dead = append(dead, dl)
				}
			}
			if !reflect.DeepEqual(dead, tc.dead) {
				t.Errorf("dead letters:\ngot  %s\nwant %s", show(t, dead), show(t, tc.dead))
			}
			if !reflect.DeepEqual(d.Refusing, tc.refusing) {
				t.Errorf("refusing:\ngot  %s\nwant %s", show(t, d.Refusing), show(t, tc.refusing))
			}
		})
	}
}
