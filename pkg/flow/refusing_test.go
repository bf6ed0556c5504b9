package flow

import (
	"maps"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/mqctl/mqctl/pkg/rmqversion"
	"github.com/mqctl/mqctl/pkg/topology"
)

// TestRefusing: a queue that now refuses publishes once full (a length
// limit with overflow reject-publish, new, lower, or where the overflow
// was another) may lose messages: a publisher without confirms loses
// what is refused, and nothing is dead-lettered (measured on RabbitMQ
// 4.3.6, 4.0.5 and 3.10.8, TestRefusingAgainstBroker). Before, the flows
// said no message went anywhere else. drop-head drops (or dead-letters)
// the oldest instead, and a classic queue's reject-publish-dlx
// dead-letters what it refuses: the dead-letter flows say where those go.
// A quorum queue reads reject-publish-dlx as drop-head, and a stream
// takes no overflow.
func TestRefusing(t *testing.T) {
	const classicCause = "once it holds 2 messages it refuses what is published to it (overflow reject-publish, x-overflow) and dead-letters none of it: a publisher using confirms gets a basic.nack for each message and can publish it again, one without confirms loses it without a word"
	limit := func(overflow string) topology.Args { return topology.Args{"x-max-length": 2, "x-overflow": overflow} }
	capPolicy := func(def topology.Args) obj { return policy("cap", "^q$", "queues", def) }
	dlx := []obj{exchange("dlx", "fanout", nil), queue("dlq", nil), bind("dlx", "dlq", "")}
	withDLX := func(objs ...obj) *topology.Topology { return topo(append(objs, dlx...)...) }
	stream := func(v *topology.Vhost) {
		v.Queues["q"] = &topology.Queue{Name: "q", Type: topology.QueueStream, Durable: true}
	}
	tests := []struct {
		name          string
		before, after *topology.Topology
		want          []Refusing
		loses         bool
	}{
		{name: "classic, a new limit with reject-publish",
			before: topo(queue("q", nil)), after: topo(queue("q", limit("reject-publish"))),
			want: []Refusing{{Vhost: "/", Queue: "q", Type: "classic", Limit: "2 messages", Cause: classicCause}}, loses: true},
		{name: "classic with a dead-letter exchange: reject-publish dead-letters nothing",
			before: withDLX(queue("q", topology.Args{"x-dead-letter-exchange": "dlx"})), after: withDLX(queue("q", topology.Args{"x-dead-letter-exchange": "dlx", "x-max-length": 2, "x-overflow": "reject-publish"})),
			want: []Refusing{{Vhost: "/", Queue: "q", Type: "classic", Limit: "2 messages", Cause: classicCause}}, loses: true},
		{name: "a classic dead-letter queue drops the dead letters it refuses",
			before: topo(queue("work", topology.Args{"x-dead-letter-exchange": "", "x-dead-letter-routing-key": "q"}), queue("q", nil)),
			after:  topo(queue("work", topology.Args{"x-dead-letter-exchange": "", "x-dead-letter-routing-key": "q"}), queue("q", limit("reject-publish"))),
			want: []Refusing{{Vhost: "/", Queue: "q", Type: "classic", Limit: "2 messages",
				Cause: classicCause + "; the dead letters of queue \"work\" that reach it then are dropped (dead-lettering publishes them without confirms)"}}, loses: true},
		{name: "a quorum dead-letter queue takes the dead letters past its limit: only publishes by name are refused",
			before: topo(queue("work", topology.Args{"x-dead-letter-exchange": "", "x-dead-letter-routing-key": "q"}), quorum("q", nil)),
			after:  topo(queue("work", topology.Args{"x-dead-letter-exchange": "", "x-dead-letter-routing-key": "q"}), quorum("q", limit("reject-publish"))),
			want: []Refusing{{Vhost: "/", Queue: "q", Type: "quorum", Limit: "2 messages",
				Cause:   "once it holds more than 2 messages it refuses what is published to it (overflow reject-publish, x-overflow) and dead-letters none of it: a publisher using confirms gets a basic.nack for each message and can publish it again, one without confirms loses it without a word",
				Unknown: "it is the dead-letter queue of queue \"work\", whose dead letters it takes past its limit: it refuses only what is published to it by name, and mqctl cannot tell whether anything is"}}},
		{name: "a quorum dead-letter queue a client exchange binds too",
			before: topo(exchange("ex", "fanout", nil), bind("ex", "q", ""), queue("work", topology.Args{"x-dead-letter-exchange": "", "x-dead-letter-routing-key": "q"}), quorum("q", nil)),
			after:  topo(exchange("ex", "fanout", nil), bind("ex", "q", ""), queue("work", topology.Args{"x-dead-letter-exchange": "", "x-dead-letter-routing-key": "q"}), quorum("q", limit("reject-publish"))),
			want: []Refusing{{Vhost: "/", Queue: "q", Type: "quorum", Limit: "2 messages",
				Cause: "once it holds more than 2 messages it refuses what is published to it (overflow reject-publish, x-overflow) and dead-letters none of it: a publisher using confirms gets a basic.nack for each message and can publish it again, one without confirms loses it without a word; the dead letters of queue \"work\" that reach it are taken even past its limit (RabbitMQ enqueues them untracked)"}}, loses: true},
		{name: "quorum, by policy",
			before: topo(quorum("q", nil)), after: topo(quorum("q", nil), capPolicy(topology.Args{"max-length-bytes": 1024, "overflow": "reject-publish"})),
			want: []Refusing{{Vhost: "/", Queue: "q", Type: "quorum", Limit: "1024 bytes",
				Cause: "once it holds more than 1024 bytes it refuses what is published to it (overflow reject-publish, policy \"cap\"'s overflow) and dead-letters none of it: a publisher using confirms gets a basic.nack for each message and can publish it again, one without confirms loses it without a word"}}, loses: true},
		{name: "drop-head made reject-publish",
			before: withDLX(queue("q", topology.Args{"x-dead-letter-exchange": "dlx", "x-max-length": 2})), after: withDLX(queue("q", topology.Args{"x-dead-letter-exchange": "dlx", "x-max-length": 2, "x-overflow": "reject-publish"})),
			want: []Refusing{{Vhost: "/", Queue: "q", Type: "classic", Limit: "2 messages", BeforeLimit: "2 messages", BeforeOverflow: "drop-head", Cause: classicCause}}, loses: true},
		{name: "drop-head that dropped (no dead-letter exchange) made reject-publish at a higher limit: no message lost that was not before",
			before: topo(queue("q", topology.Args{"x-max-length": 2})), after: topo(queue("q", topology.Args{"x-max-length": 10, "x-overflow": "reject-publish"}))},
		{name: "drop-head that dropped made reject-publish at a lower limit",
			before: topo(queue("q", topology.Args{"x-max-length": 10})), after: topo(queue("q", limit("reject-publish"))),
			want: []Refusing{{Vhost: "/", Queue: "q", Type: "classic", Limit: "2 messages", BeforeLimit: "10 messages", BeforeOverflow: "drop-head", Cause: classicCause}}, loses: true},
		{name: "a lower limit",
			before: topo(queue("q", topology.Args{"x-max-length": 10, "x-overflow": "reject-publish"})), after: topo(queue("q", limit("reject-publish"))),
			want: []Refusing{{Vhost: "/", Queue: "q", Type: "classic", Limit: "2 messages", BeforeLimit: "10 messages", BeforeOverflow: "reject-publish", Cause: classicCause}}, loses: true},
		{name: "a classic queue with a limit of 0 refuses every message: the routes say so",
			before: topo(queue("q", nil)), after: topo(queue("q", topology.Args{"x-max-length": 0, "x-overflow": "reject-publish"})), loses: true},
		{name: "a higher limit", before: topo(queue("q", limit("reject-publish"))), after: topo(queue("q", topology.Args{"x-max-length": 10, "x-overflow": "reject-publish"}))},
		{name: "the limit removed", before: topo(queue("q", limit("reject-publish"))), after: topo(queue("q", nil))},
		{name: "classic reject-publish-dlx with a dead-letter exchange dead-letters what it refuses",
			before: withDLX(queue("q", topology.Args{"x-dead-letter-exchange": "dlx"})), after: withDLX(queue("q", topology.Args{"x-dead-letter-exchange": "dlx", "x-max-length": 2, "x-overflow": "reject-publish-dlx"}))},
		{name: "drop-head with a dead-letter exchange dead-letters the oldest",
			before: withDLX(queue("q", topology.Args{"x-dead-letter-exchange": "dlx"})), after: withDLX(queue("q", topology.Args{"x-dead-letter-exchange": "dlx", "x-max-length": 2}))},
		{name: "drop-head without a dead-letter exchange drops the oldest (a dead-letter loss)",
			before: topo(queue("q", nil)), after: topo(queue("q", limit("drop-head"))), loses: true},
		{name: "quorum reject-publish-dlx is drop-head",
			before: withDLX(quorum("q", topology.Args{"x-dead-letter-exchange": "dlx"})), after: withDLX(quorum("q", topology.Args{"x-dead-letter-exchange": "dlx"}), capPolicy(topology.Args{"max-length": 2, "overflow": "reject-publish-dlx"}))},
		{name: "a stream takes no overflow",
			before: topo(stream), after: topo(stream, capPolicy(topology.Args{"max-length-bytes": 1024, "overflow": "reject-publish"}))},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			d := compareWithoutPerMessage(t, tc.before, tc.after, Options{})
			if !reflect.DeepEqual(d.Refusing, tc.want) {
				t.Errorf("refusing:\ngot  %s\nwant %s", show(t, d.Refusing), show(t, tc.want))
			}
			if d.LosesMessages() != tc.loses {
				t.Errorf("LosesMessages() = %v, want %v: %s", d.LosesMessages(), tc.loses, show(t, d))
			}
		})
	}
}

// TestRejectPublishDLXWithoutDeadLetterExchange: a classic queue's
// reject-publish-dlx without a dead-letter exchange refuses as
// reject-publish does (a publisher using confirms gets a basic.nack:
// measured on 4.3.6, 4.0.5 and 3.10.8, 3 of 5 nacked) and has nowhere to
// dead-letter them; the cause said only that it dead-letters them.
func TestRejectPublishDLXWithoutDeadLetterExchange(t *testing.T) {
	d := compareWithoutPerMessage(t, topo(queue("q", nil)), topo(queue("q", topology.Args{"x-max-length": 100, "x-overflow": "reject-publish-dlx"})), Options{})
	want := "it now has a length limit of 100 messages, and when full refuses new messages (a publisher using confirms gets a basic.nack) and dead-letters them (overflow reject-publish-dlx); no dead-letter exchange"
	if len(d.DeadLetters) != 1 || d.DeadLetters[0].Cause != want || !d.DeadLetters[0].Loses {
		t.Errorf("dead letters %s, want one lost, cause %q", show(t, d.DeadLetters), want)
	}
}

// TestOverflowMoves: a full queue dead-letters the new messages it
// refuses with a classic queue's overflow reject-publish-dlx (the
// publisher gets a basic.nack), and its oldest with drop-head (the
// publisher is told nothing): measured by
// TestOverflowDeadLettersAgainstBroker. A change between the two said no
// message went anywhere else, although without a route for the dead
// letters a publisher using confirms then loses what it was told of; and
// reject-publish made reject-publish-dlx without a dead-letter exchange
// was called a loss, though the publisher is told as it was.
func TestOverflowMoves(t *testing.T) {
	limit := func(n int, overflow string, more topology.Args) topology.Args {
		a := topology.Args{"x-max-length": n, "x-overflow": overflow}
		for k, v := range more {
			a[k] = v
		}
		return a
	}
	dlx := topology.Args{"x-dead-letter-exchange": "", "x-dead-letter-routing-key": "dlq"}
	capPolicy := func(overflow string) obj {
		return policy("cap", "^q$", "queues", topology.Args{"max-length": 2, "overflow": overflow})
	}
	type end struct{ none, refused, dropped bool }
	tests := []struct {
		name          string
		before, after *topology.Topology
		want          []end // before and after of the one maxlen DeadLetter; nil: none
		loses         bool
		cause         string
	}{
		{name: "reject-publish-dlx made drop-head, no dead-letter exchange",
			before: topo(queue("q", limit(2, "reject-publish-dlx", nil))), after: topo(queue("q", limit(2, "drop-head", nil))),
			want: []end{{refused: true, dropped: true}, {refused: false, dropped: true}}, loses: true,
			cause: "its overflow is now drop-head (was reject-publish-dlx): once it holds its length limit of 2 messages it takes each new message and dead-letters its oldest, and the publisher is told nothing, where it refused the new message (a publisher using confirms got a basic.nack and could publish it again) and dead-lettered it; no dead-letter exchange"},
		{name: "by policy",
			before: topo(queue("q", nil), capPolicy("reject-publish-dlx")), after: topo(queue("q", nil), capPolicy("drop-head")),
			want: []end{{refused: true, dropped: true}, {refused: false, dropped: true}}, loses: true,
			cause: "its overflow is now drop-head (was reject-publish-dlx): once it holds its length limit of 2 messages it takes each new message and dead-letters its oldest, and the publisher is told nothing, where it refused the new message (a publisher using confirms got a basic.nack and could publish it again) and dead-lettered it; no dead-letter exchange"},
		{name: "drop-head made reject-publish-dlx, no dead-letter exchange",
			before: topo(queue("q", limit(2, "drop-head", nil))), after: topo(queue("q", limit(2, "reject-publish-dlx", nil))),
			want:  []end{{refused: false, dropped: true}, {refused: true, dropped: true}},
			cause: "its overflow is now reject-publish-dlx (was drop-head): once it holds its length limit of 2 messages it refuses each new message (a publisher using confirms gets a basic.nack and can publish it again; one without confirms is told nothing) and dead-letters it, where it took it and dead-lettered its oldest message"},
		{name: "reject-publish-dlx made drop-head, dead letters to a queue",
			before: topo(queue("dlq", nil), queue("q", limit(2, "reject-publish-dlx", dlx))), after: topo(queue("dlq", nil), queue("q", limit(2, "drop-head", dlx))),
			want:  []end{{refused: true, dropped: false}, {refused: false, dropped: false}},
			cause: "its overflow is now drop-head (was reject-publish-dlx): once it holds its length limit of 2 messages it takes each new message and dead-letters its oldest, and the publisher is told nothing, where it refused the new message (a publisher using confirms got a basic.nack and could publish it again) and dead-lettered it"},
		{name: "a quorum queue reads reject-publish-dlx as drop-head",
			before: topo(quorum("q", limit(2, "reject-publish-dlx", nil))), after: topo(quorum("q", limit(2, "drop-head", nil)))},
		{name: "reject-publish made reject-publish-dlx, no dead-letter exchange: refused as before",
			before: topo(queue("q", limit(2, "reject-publish", nil))), after: topo(queue("q", limit(2, "reject-publish-dlx", nil))),
			want: []end{{none: true}, {refused: true, dropped: true}}},
		{name: "reject-publish made reject-publish-dlx at a lower limit",
			before: topo(queue("q", limit(5, "reject-publish", nil))), after: topo(queue("q", limit(2, "reject-publish-dlx", nil))),
			want: []end{{none: true}, {refused: true, dropped: true}}, loses: true,
			cause: "its overflow is now reject-publish-dlx (was reject-publish): when it reaches its length limit of 2 messages it refuses new messages (a publisher using confirms gets a basic.nack) and dead-letters them (overflow reject-publish-dlx); no dead-letter exchange"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			d := Compare(tc.before, tc.after, Options{})
			var got []DeadLetter
			for _, dl := range d.DeadLetters {
				if dl.Queue == "q" && dl.Reason == "maxlen" {
					got = append(got, dl)
				}
			}
			if tc.want == nil {
				if len(got) != 0 {
					t.Fatalf("maxlen dead letters: %s, want none", show(t, got))
				}
			} else {
				if len(got) != 1 {
					t.Fatalf("maxlen dead letters: %s, want one", show(t, got))
				}
				dl := got[0]
				ends := []*DeadLetterEnd{dl.Before, dl.After}
				for i, w := range tc.want {
					e := ends[i]
					if w.none {
						if e != nil {
							t.Errorf("end %d: %s, want none", i, show(t, e))
						}
						continue
					}
					if e == nil || e.Refused != w.refused || e.Dropped != w.dropped {
						t.Errorf("end %d: %s, want refused %v, dropped %v", i, show(t, e), w.refused, w.dropped)
					}
				}
				if dl.Loses != tc.loses || dl.Cause != tc.cause {
					t.Errorf("loses %v, cause %q\nwant %v, %q", dl.Loses, dl.Cause, tc.loses, tc.cause)
				}
			}
			if d.LosesMessages() != tc.loses {
				t.Errorf("LosesMessages() = %v, want %v: %s", d.LosesMessages(), tc.loses, show(t, d))
			}
		})
	}
}

// TestSooner: a queue whose length limit is lowered, message TTL
// shortened or delivery limit lowered dead-letters (or drops) more
// messages, or sooner. Without a dead-letter exchange they are lost; the
// flows compared where its dead letters go alone (dropped on both sides)
// and said no message went anywhere else. With one, more of them reach
// its queues (a move, not a loss, unless it drops some): the flows said
// nothing of it.
func TestSooner(t *testing.T) {
	dlx := func(args topology.Args) topology.Args {
		args["x-dead-letter-exchange"] = ""
		args["x-dead-letter-routing-key"] = "dlq"
		return args
	}
	tests := []struct {
		name          string
		before, after *topology.Topology
		reason        Reason
		cause         string // "": no Sooner dead letter
		loses         bool
		afterQueues   []string // the queues the dead letters reach after
	}{
		{name: "a lower length limit", before: topo(queue("q", topology.Args{"x-max-length": 10})), after: topo(queue("q", topology.Args{"x-max-length": 2})),
			reason: "maxlen", loses: true, cause: "its length limit is now 2 messages (was 10 messages): once full it drops its oldest messages (overflow drop-head); no dead-letter exchange"},
		{name: "a shorter TTL", before: topo(queue("q", topology.Args{"x-message-ttl": 3600000})), after: topo(queue("q", topology.Args{"x-message-ttl": 1000})),
			reason: "expired", loses: true, cause: "its messages now expire after 1s (was 1h; x-message-ttl); no dead-letter exchange"},
		{name: "a shorter TTL by policy", before: topo(queue("q", nil), policy("ttl", "^q$", "queues", topology.Args{"message-ttl": 3600000})),
			after:  topo(queue("q", nil), policy("ttl", "^q$", "queues", topology.Args{"message-ttl": 1000})),
			reason: "expired", loses: true, cause: "its messages now expire after 1s (was 1h; policy \"ttl\"'s message-ttl); no dead-letter exchange"},
		{name: "a lower delivery limit", before: topo(quorum("q", topology.Args{"x-delivery-limit": 10})), after: topo(quorum("q", topology.Args{"x-delivery-limit": 1})),
			reason: "delivery_limit", loses: true, cause: "its delivery limit is now 1 (was 10); no dead-letter exchange"},
		{name: "a longer TTL", before: topo(queue("q", topology.Args{"x-message-ttl": 1000})), after: topo(queue("q", topology.Args{"x-message-ttl": 3600000}))},
		{name: "with a dead-letter exchange, a shorter TTL sends more of them to it, or sooner",
			before: topo(exchange("in", "direct", nil), bind("in", "q", "k"), queue("dlq", nil), queue("q", dlx(topology.Args{"x-message-ttl": 3600000}))),
			after:  topo(exchange("in", "direct", nil), bind("in", "q", "k"), queue("dlq", nil), queue("q", dlx(topology.Args{"x-message-ttl": 1000}))),
			reason: "expired", cause: "its messages now expire after 1s (was 1h; x-message-ttl)", afterQueues: []string{"dlq"}},
		{name: "with a dead-letter exchange, a lower length limit by policy",
			before: topo(queue("dlq", nil), queue("q", dlx(topology.Args{})), policy("cap", "^q$", "queues", topology.Args{"max-length": 100})),
			after:  topo(queue("dlq", nil), queue("q", dlx(topology.Args{})), policy("cap", "^q$", "queues", topology.Args{"max-length": 5})),
			reason: "maxlen", cause: "its length limit is now 5 messages (was 100 messages): once full it drops its oldest messages (overflow drop-head)", afterQueues: []string{"dlq"}},
		{name: "with a dead-letter exchange, a lower delivery limit",
			before: topo(queue("dlq", nil), quorum("q", dlx(topology.Args{"x-delivery-limit": 10}))),
			after:  topo(queue("dlq", nil), quorum("q", dlx(topology.Args{"x-delivery-limit": 2}))),
			reason: "delivery_limit", cause: "its delivery limit is now 2 (was 10)", afterQueues: []string{"dlq"}},
		{name: "with a dead-letter exchange that drops the dead letters of some keys",
			before: topo(exchange("in", "topic", nil), bind("in", "q", "#"), exchange("dlx", "topic", nil), bind("dlx", "dlq", "a.#"), queue("dlq", nil), queue("q", topology.Args{"x-max-length": 100, "x-dead-letter-exchange": "dlx"})),
			after:  topo(exchange("in", "topic", nil), bind("in", "q", "#"), exchange("dlx", "topic", nil), bind("dlx", "dlq", "a.#"), queue("dlq", nil), queue("q", topology.Args{"x-max-length": 5, "x-dead-letter-exchange": "dlx"})),
			reason: "maxlen", loses: true, afterQueues: []string{"dlq"},
			cause: "its length limit is now 5 messages (was 100 messages): once full it drops its oldest messages (overflow drop-head); some of them are dropped: DLX \"dlx\" has no binding for \"\""},
		{name: "with a dead-letter exchange, a longer TTL",
			before: topo(queue("dlq", nil), queue("q", dlx(topology.Args{"x-message-ttl": 1000}))),
			after:  topo(queue("dlq", nil), queue("q", dlx(topology.Args{"x-message-ttl": 3600000})))},
		{name: "a delay tier's shorter delay is its own: where its messages return is unchanged",
			before: topo(queue("dlq", nil), queue("q", dlx(topology.Args{"x-message-ttl": 3600000}))),
			after:  topo(queue("dlq", nil), queue("q", dlx(topology.Args{"x-message-ttl": 1000})))},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			d := Compare(tc.before, tc.after, Options{})
			var got []DeadLetter
			for _, dl := range d.DeadLetters {
				if dl.Sooner {
					got = append(got, dl)
				}
			}
			if tc.cause == "" {
				if len(got) != 0 || !d.Empty() {
					t.Fatalf("sooner: %s, want no flow change: %s", show(t, got), show(t, d))
				}
				return
			}
			if len(got) != 1 || got[0].Reason != tc.reason || got[0].Cause != tc.cause || got[0].Loses != tc.loses || d.LosesMessages() != tc.loses {
				t.Fatalf("sooner: %s\nwant reason %s, cause %q, losing %v", show(t, got), tc.reason, tc.cause, tc.loses)
			}
			if after := got[0].After.Queues; !slices.Equal(after, tc.afterQueues) {
				t.Errorf("after: reaches %v, want %v", after, tc.afterQueues)
			}
			var text strings.Builder
			if err := WriteText(&text, d, TextOptions{}); err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(text.String(), "more of them, or sooner") || !strings.Contains(text.String(), tc.cause) {
				t.Errorf("text does not say more of them, or sooner, with the cause:\n%s", text.String())
			}
		})
	}
}

// TestSideKeepsOnlyRefusers: a side remembered the arrival of every queue
// it was asked about (refuses), and a plan asks about every queue: at
// 50,002 objects, 7.5 MB of arrivals that refuse nothing. It now keeps
// the queues that refuse every message, with why, and answers alike.
func TestSideKeepsOnlyRefusers(t *testing.T) {
	v := topo(queue("zero", topology.Args{"x-max-length": 0, "x-overflow": "reject-publish"}),
		queue("two", topology.Args{"x-max-length": 2, "x-overflow": "reject-publish"}),
		queue("plain", nil), quorum("qq", topology.Args{"x-max-length": 0, "x-overflow": "reject-publish"})).Vhosts["/"]
	s := newSide(v, "/", rmqversion.Default)
	for _, tt := range []struct {
		queue   string
		refuses bool
	}{{"zero", true}, {"two", false}, {"plain", false}, {"qq", false}, {"undeclared", false}} {
		refused, why := s.refuses(tt.queue)
		if refused != tt.refuses || refused != (why != "") {
			t.Errorf("queue %s: refuses %v (%q); want %v, with why when it does", tt.queue, refused, why, tt.refuses)
		}
	}
	if !s.anyRefuses() {
		t.Error("anyRefuses: false; want true (queue zero)")
	}
	if got := slices.Sorted(maps.Keys(s.refusing)); !slices.Equal(got, []string{"zero"}) {
		t.Errorf("the side keeps the arrivals of %v; want those of the refusing queue alone ([zero])", got)
	}
}
