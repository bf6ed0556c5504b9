package plan

import (
	"strings"
	"testing"

	"github.com/mqctl/mqctl/pkg/kind"
	"github.com/mqctl/mqctl/pkg/loader"
	"github.com/mqctl/mqctl/pkg/rmqversion"
	"github.com/mqctl/mqctl/pkg/topology"
)

// TestReplaceReasonAdvice: the way around a replace is one that works for
// the change. A policy changes in place, but it gives a queue a new value
// only where the policy's value applies over the queue's own argument:
// always for a quorum queue's overflow, for the limits (the smaller
// applies) only a lower one, never for a dead-letter exchange (the
// argument wins) or an argument taken away.
func TestReplaceReasonAdvice(t *testing.T) {
	args := func(k string, before, after any) FieldChange {
		return FieldChange{Field: "arguments." + k, Before: before, After: after, Forces: true}
	}
	const newName = "declare the new settings under a new queue name"
	tests := []struct {
		name   string
		kind   Kind
		qtype  string
		fields []FieldChange
		want   string
	}{
		{"a lower TTL", kind.Queue, topology.QueueClassic, []FieldChange{args("x-message-ttl", int64(60000), int64(30000))},
			"leave the queue's arguments as they were and set message-ttl: 30000 with a policy: a policy changes in place, and the smaller of its value and the argument's applies"},
		{"a higher TTL", kind.Queue, topology.QueueClassic, []FieldChange{args("x-message-ttl", int64(60000), int64(120000))},
			newName + " and move consumers over (set message-ttl with a policy rather than as arguments, and the next change of it is made in place)"},
		{"a new dead-letter exchange", kind.Queue, topology.QueueQuorum, []FieldChange{args("x-dead-letter-exchange", "a", "b")},
			newName + " and move consumers over (set dead-letter-exchange with a policy rather than as arguments"},
		{"a dead-letter exchange taken away", kind.Queue, topology.QueueClassic,
			[]FieldChange{args("x-dead-letter-exchange", "a", nil), args("x-dead-letter-routing-key", "k", nil)},
			newName + " and move consumers over (set dead-letter-exchange, dead-letter-routing-key with a policy"},
		{"a quorum queue's overflow: the policy's applies", kind.Queue, topology.QueueQuorum, []FieldChange{args("x-overflow", "drop-head", "reject-publish")},
			`set overflow: "reject-publish" with a policy: a policy changes in place`},
		{"a classic queue's overflow: the argument's applies", kind.Queue, topology.QueueClassic, []FieldChange{args("x-overflow", "drop-head", "reject-publish")},
			newName},
		{"a lower TTL with a new type", kind.Queue, topology.QueueQuorum,
			[]FieldChange{{Field: "type", Before: "classic", After: "quorum", Forces: true}, args("x-message-ttl", int64(60000), int64(30000))},
			newName + " and move consumers over"},
		// No argument before: the policy's value applies alone, whichever
		// would win over an argument.
		{"a TTL where the queue had none", kind.Queue, topology.QueueClassic, []FieldChange{args("x-message-ttl", nil, int64(30000))},
			"leave the queue's arguments as they were and set message-ttl: 30000 with a policy: a policy changes in place"},
		{"a dead-letter exchange where the queue had none", kind.Queue, topology.QueueClassic, []FieldChange{args("x-dead-letter-exchange", nil, "dlx")},
			`leave the queue's arguments as they were and set dead-letter-exchange: "dlx" with a policy: a policy changes in place`},
		{"an exchange's alternate exchange", kind.Exchange, "", []FieldChange{args("alternate-exchange", "a", "b")},
			"declare the new settings under a new exchange name with the old one's bindings, and move publishers over (set alternate-exchange with a policy"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := replaceReason(tc.kind, tc.qtype, false, "", policyOthers{}, tc.fields)
			if !strings.Contains(got, tc.want) {
				t.Errorf("replaceReason:\n got  %s\n want %s", got, tc.want)
			}
			if strings.Contains(tc.want, newName) && strings.Contains(got, "leave the") {
				t.Errorf("advises a policy where none gives the new value: %s", got)
			}
		})
	}
	if got := replaceReason(kind.Queue, topology.QueueQuorum, false, "", policyOthers{}, []FieldChange{{Field: "type", Before: "classic", After: "quorum"}, args("x-message-ttl", int64(2), int64(1))}); strings.Contains(got, "(set ") {
		t.Errorf("a type is no policy key, and the reason says to set it with one: %s", got)
	}
}

// TestReplaceReasonVhostDefaultType: a queue the file gives no type takes
// its vhost's default_queue_type; when a new default would replace it, the
// reason says how to keep it as it is. A queue that writes its type, or
// that the new default does not suit (transient), gets no such advice.
func TestReplaceReasonVhostDefaultType(t *testing.T) {
	load := func(dqt string) *topology.Topology {
		src := "version: 1\nvhosts:\n  v:\n" + dqt + "    queues:\n      untyped: {}\n      typed: {type: quorum}\n      temp: {durable: false}\n"
		top, err := loader.LoadBytes("t.yaml", []byte(src), loader.Options{})
		if err != nil {
			t.Fatal(err)
		}
		return top
	}
	cur := load("")
	cur.Vhosts["v"].Queues["typed"].Type = topology.QueueClassic
	for _, q := range cur.Vhosts["v"].Queues {
		q.TypeFromVhost = false // as read from a broker
	}
	p := DiffWith(load("    default_queue_type: quorum\n"), Current{Live: topology.Live{State: cur}, AllMine: true}, Options{})
	reasons := map[string]string{}
	for _, c := range p.Changes {
		if c.Action == Replace {
			reasons[c.Name] = c.Reason
		}
	}
	const keep = "the file gives the queue no type, so it takes its vhost's default_queue_type, quorum: to keep it a classic queue, write type: classic"
	if !strings.Contains(reasons["untyped"], keep) || strings.Contains(reasons["untyped"], "new queue name") {
		t.Errorf("untyped queue: %q, want %q alone", reasons["untyped"], keep)
	}
	if r := reasons["typed"]; r == "" || strings.Contains(r, "no type") {
		t.Errorf("typed queue: %q, want a replace without the default-type advice", r)
	}
	if r, ok := reasons["temp"]; ok {
		t.Errorf("a transient queue stays classic in a quorum vhost, and is replaced: %q", r)
	}
}

// TestReplaceReasonNamesThePolicy: a queue takes one policy, the one of
// highest priority that matches it. Where one already applies, the way
// around a replace is to set the value in it: a new policy would replace
// it, and every setting it gives the queue with it.
func TestReplaceReasonNamesThePolicy(t *testing.T) {
	load := func(limit string) *topology.Topology {
		src := "version: 1\nvhosts:\n  v:\n    queues:\n      pay: { type: quorum, delivery_limit: " + limit + " }\n      other: { delivery_limit: 0, type: quorum }\n" +
			"    policies:\n      cap: { pattern: \"^pay$\", apply_to: queues, definition: { max-length: 1000 } }\n"
		top, err := loader.LoadBytes("t.yaml", []byte(src), loader.Options{})
		if err != nil {
			t.Fatal(err)
		}
		return top
	}
	p := DiffWith(load("2"), Current{Live: topology.Live{State: load("3")}, AllMine: true}, Options{})
	var reason string
	for _, c := range p.Changes {
		if c.Name == "pay" && c.Action == Replace {
			reason = c.Reason
		}
	}
	const want = `set delivery-limit: 2 in policy "cap", which applies to it (a queue takes one policy: another would replace it, with its settings): a policy changes in place`
	if !strings.Contains(reason, want) {
		t.Errorf("reason %q\nwant %q", reason, want)
	}
	if got := replaceReason(kind.Queue, topology.QueueQuorum, false, "", policyOthers{}, []FieldChange{{Field: "arguments.x-delivery-limit", Before: int64(3), After: int64(2), Forces: true}}); !strings.Contains(got, "set delivery-limit: 2 with a policy: a policy changes in place") {
		t.Errorf("without a policy: %q", got)
	}
}

// TestReplaceReasonPolicyOfOthers: where the policy that applies to the
// queue applies to other queues too, setting the new value in it reaches
// them as well (a lower length limit drops their oldest messages), which
// is no fix for this queue's change: the advice is a policy for this queue
// alone, of a higher priority, holding the shared one's settings too. And
// a limit the queue had no argument for (a team adopting a broker whose
// applications declare the queue without one) is set in place by a
// policy: the advice said to declare a new queue first, the policy only
// for "the next change".
func TestReplaceReasonPolicyOfOthers(t *testing.T) {
	load := func(limit, pattern string) *topology.Topology {
		src := "version: 1\nvhosts:\n  v:\n    queues:\n      events.eu: { type: quorum" + limit + " }\n      events.us: { type: quorum }\n      events.ap: { type: quorum }\n" +
			"    policies:\n      cap: { pattern: \"" + pattern + "\", apply_to: queues, definition: { max-length: 50000 } }\n"
		top, err := loader.LoadBytes("t.yaml", []byte(src), loader.Options{})
		if err != nil {
			t.Fatal(err)
		}
		return top
	}
	for _, tc := range []struct {
		name, pattern string
		want, not     string
	}{
		{"the policy applies to two other queues", `^events\\.`,
			`to avoid the replace, leave the queue's arguments as they were and set max-length: 1000 in a policy for this queue alone, of a higher priority than policy "cap" and holding its settings too ("cap" applies to it and to 2 other queues, "events.ap", "events.us", which would take the value too; a queue takes one policy, so the new one replaces "cap" for it): a policy changes in place`,
			`set max-length: 1000 in policy "cap"`},
		{"the policy applies to it alone", `^events\\.eu$`,
			`to avoid the replace, leave the queue's arguments as they were and set max-length: 1000 in policy "cap", which applies to it (a queue takes one policy: another would replace it, with its settings): a policy changes in place`,
			"other queue"},
		{"no policy applies to it", `^none$`,
			`to avoid the replace, leave the queue's arguments as they were and set max-length: 1000 with a policy: a policy changes in place`,
			"new queue name"},
	} {
		p := DiffWith(load(", limits: { max_length: 1000 }", tc.pattern), Current{Live: topology.Live{State: load("", tc.pattern)}, AllMine: true}, Options{})
		var reason string
		for _, c := range p.Changes {
			if c.Name == "events.eu" && c.Action == Replace {
				reason = c.Reason
			}
		}
		if !strings.Contains(reason, tc.want) {
			t.Errorf("%s: reason %q\nwant %q", tc.name, reason, tc.want)
		}
		if strings.Contains(reason, tc.not) {
			t.Errorf("%s: reason %q\nwant it without %q", tc.name, reason, tc.not)
		}
	}
}

// TestRedeclareNote: a replace says what it does to the applications that
// declare the object themselves, once, naming the settings the broker
// compares on a declaration, with the fix; nothing when it compares none
// of those that change (an argument of the application's own, a quorum
// queue's consumer timeout before 4.3, a classic queue's leader locator
// on 3.10).
func TestRedeclareNote(t *testing.T) {
	args := func(k string, before, after any) FieldChange {
		return FieldChange{Field: "arguments." + k, Before: before, After: after, Forces: true}
	}
	tests := []struct {
		name    string
		version string
		kind    Kind
		qtype   string
		fields  []FieldChange
		want    string // "" for no note
	}{
		{"a queue's TTL", "4.3", kind.Queue, topology.QueueClassic, []FieldChange{args("x-message-ttl", int64(1), int64(2))},
			"an application that still declares the queue itself with the old arguments.x-message-ttl gets PRECONDITION_FAILED (406, inequivalent arg) and its channel closed (and one that declares the new value gets the same from the queue as it is, until the replace): before the apply, have the applications declare it passively"},
		{"a queue's type and durability", "3.10", kind.Queue, topology.QueueQuorum,
			[]FieldChange{{Field: "type", Before: "classic", After: "quorum"}, {Field: "durable", Before: false, After: true}},
			"with the old type, durable gets PRECONDITION_FAILED (406"},
		{"an argument of the application's own", "4.3", kind.Queue, topology.QueueClassic, []FieldChange{args("x-app-tag", "a", "b")}, ""},
		{"an argument of its own beside a compared one: only the compared one is named", "4.3", kind.Queue, topology.QueueQuorum,
			[]FieldChange{args("x-app-tag", "a", "b"), args("x-delivery-limit", int64(3), int64(5))}, "with the old arguments.x-delivery-limit gets"},
		{"a quorum queue's consumer timeout on 4.3", "4.3", kind.Queue, topology.QueueQuorum, []FieldChange{args("x-consumer-timeout", int64(1), int64(2))}, "arguments.x-consumer-timeout gets"},
		{"a quorum queue's consumer timeout on 4.0: stored, not compared", "4.0", kind.Queue, topology.QueueQuorum, []FieldChange{args("x-consumer-timeout", int64(1), int64(2))}, ""},
		{"a classic queue's leader locator on 4.0", "4.0", kind.Queue, topology.QueueClassic, []FieldChange{args("x-queue-leader-locator", "balanced", "client-local")}, "arguments.x-queue-leader-locator gets"},
		{"a stream's max age", "4.3", kind.Queue, topology.QueueStream, []FieldChange{args("x-max-age", "1D", "2D")}, "arguments.x-max-age gets"},
		{"an exchange's type", "4.0", kind.Exchange, "", []FieldChange{{Field: "type", Before: "direct", After: "topic"}},
			"declares the exchange itself with the old type gets PRECONDITION_FAILED (406, inequivalent arg) and its channel closed (and one that declares the new value gets the same from the exchange as it is"},
		{"an exchange's internal flag", "4.3", kind.Exchange, "", []FieldChange{{Field: "internal", Before: false, After: true}}, "with the old internal gets"},
		{"an exchange's alternate exchange", "3.10", kind.Exchange, "", []FieldChange{args("alternate-exchange", "a", "b")}, "with the old arguments.alternate-exchange gets"},
		{"an exchange argument the broker does not compare", "4.3", kind.Exchange, "", []FieldChange{args("x-app-tag", "a", "b")}, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := redeclareNote(rmqversion.MustParse(tc.version), tc.kind, tc.qtype, tc.fields)
			switch {
			case tc.want == "" && got != "":
				t.Errorf("note %q, want none", got)
			case tc.want != "" && (!strings.Contains(got, tc.want) || strings.Count(got, "PRECONDITION_FAILED") != 1):
				t.Errorf("note:\n got  %s\n want %s, once", got, tc.want)
			}
		})
	}
}
