package plan

import (
	"strings"
	"testing"

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
		{"a lower TTL", KindQueue, topology.QueueClassic, []FieldChange{args("x-message-ttl", int64(60000), int64(30000))},
			"leave the queue's arguments as they were and apply message-ttl: 30000 with a policy: a policy changes in place, and the smaller of its value and the argument's applies"},
		{"a higher TTL", KindQueue, topology.QueueClassic, []FieldChange{args("x-message-ttl", int64(60000), int64(120000))},
			newName + " and move consumers over (set message-ttl with a policy rather than as arguments, and the next change of it is made in place)"},
		{"a new dead-letter exchange", KindQueue, topology.QueueQuorum, []FieldChange{args("x-dead-letter-exchange", "a", "b")},
			newName + " and move consumers over (set dead-letter-exchange with a policy rather than as arguments"},
		{"a dead-letter exchange taken away", KindQueue, topology.QueueClassic,
			[]FieldChange{args("x-dead-letter-exchange", "a", nil), args("x-dead-letter-routing-key", "k", nil)},
			newName + " and move consumers over (set dead-letter-exchange, dead-letter-routing-key with a policy"},
		{"a quorum queue's overflow: the policy's applies", KindQueue, topology.QueueQuorum, []FieldChange{args("x-overflow", "drop-head", "reject-publish")},
			`apply overflow: "reject-publish" with a policy: a policy changes in place`},
		{"a classic queue's overflow: the argument's applies", KindQueue, topology.QueueClassic, []FieldChange{args("x-overflow", "drop-head", "reject-publish")},
			newName},
		{"a lower TTL with a new type", KindQueue, topology.QueueQuorum,
			[]FieldChange{{Field: "type", Before: "classic", After: "quorum", Forces: true}, args("x-message-ttl", int64(60000), int64(30000))},
			newName + " and move consumers over"},
		{"an exchange's alternate exchange", KindExchange, "", []FieldChange{args("alternate-exchange", "a", "b")},
			"declare the new settings under a new exchange name and move consumers over (set alternate-exchange with a policy"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := replaceReason(tc.kind, tc.qtype, tc.fields)
			if !strings.Contains(got, tc.want) {
				t.Errorf("replaceReason:\n got  %s\n want %s", got, tc.want)
			}
			if strings.Contains(tc.want, newName) && strings.Contains(got, "leave the") {
				t.Errorf("advises a policy where none gives the new value: %s", got)
			}
		})
	}
	if got := replaceReason(KindQueue, topology.QueueQuorum, []FieldChange{{Field: "type", Before: "classic", After: "quorum"}, args("x-message-ttl", int64(2), int64(1))}); strings.Contains(got, "(set ") {
		t.Errorf("a type is no policy key, and the reason says to set it with one: %s", got)
	}
}
