package dlq

import (
	"fmt"
	"slices"
)

// Override is the user's choice of destination (--to-exchange,
// --routing-key); a nil field was not given.
type Override struct {
	Exchange   *string
	RoutingKey *string
}

// Where a Target comes from.
const (
	FromDeath        = "x-death"           // the message's first dead-lettering
	FromFlags        = "flags"             // --to-exchange and --routing-key
	FromDeathByFlags = "x-death and flags" // one of them given, the other from x-death
)

// Target is where a dead letter is republished.
type Target struct {
	Exchange   string `json:"exchange"`
	RoutingKey string `json:"routing_key"`
	// CC are the extra routing keys of the original publish, sent again in
	// the CC header.
	CC []string `json:"cc,omitempty"`
	// From is FromDeath, FromFlags or FromDeathByFlags.
	From string `json:"from"`
	// OriginQueue is the queue the message first died in ("" when unknown).
	OriginQueue string `json:"origin_queue,omitempty"`
}

// Kinds of skipped messages.
const (
	SkipNoDeath         = "no x-death"
	SkipUnreadableDeath = "unreadable x-death"
	// SkipOtherOrigin: the message died in another queue than the one
	// --from-queue names.
	SkipOtherOrigin = "died elsewhere"
)

// Skip says why a message is left in the queue without an attempt.
type Skip struct {
	Kind   string // SkipNoDeath or SkipUnreadableDeath
	Detail string
}

func (s *Skip) Error() string { return s.Detail }

// Choose picks where m is replayed to. Without an override it is the
// exchange and routing keys of the message's first dead-lettering (see
// Deaths.Origin): where the message was originally published — never the
// dead-letter exchange it passed through last, which leads back into the
// DLQ. An override replaces the exchange, the routing key, or both; a
// routing key given by flag drops the original CC keys (the message goes
// exactly where it is told). With --to-exchange alone, a message without
// x-death keeps the routing key it reached the DLQ with.
func Choose(m *Message, o Override) (Target, *Skip) {
	origin, hasOrigin := m.Deaths.Origin()
	usable := hasOrigin && !origin.incomplete
	if !usable && o.Exchange == nil {
		if len(m.Deaths.Problems) > 0 || hasOrigin {
			return Target{}, &Skip{Kind: SkipUnreadableDeath, Detail: fmt.Sprintf(
				"its x-death header cannot be read (%s), so where it came from is unknown; pass --to-exchange and --routing-key to replay it",
				firstOr(m.Deaths.Problems, "the origin entry has no exchange or routing keys"))}
		}
		return Target{}, &Skip{Kind: SkipNoDeath, Detail: "no x-death header: it was not dead-lettered by the broker (published straight into this queue?), so where it came from is unknown; pass --to-exchange (and --routing-key) to replay it"}
	}
	t := Target{From: FromDeath}
	if usable {
		t.Exchange = origin.Exchange
		t.RoutingKey = origin.RoutingKeys[0]
		t.CC = slices.Clone(origin.RoutingKeys[1:])
		t.OriginQueue = origin.Queue
	} else {
		// Only reached with --to-exchange given.
		t.RoutingKey = m.RoutingKey
	}
	if o.Exchange != nil {
		t.Exchange = *o.Exchange
		t.From = FromDeathByFlags
	}
	if o.RoutingKey != nil {
		t.RoutingKey = *o.RoutingKey
		t.CC = nil
		t.From = FromDeathByFlags
	}
	if (o.Exchange != nil && o.RoutingKey != nil) || !usable {
		t.From = FromFlags
	}
	if len(t.CC) == 0 {
		t.CC = nil
	}
	return t, nil
}

// LoopsBack reports whether publishing to t would put m straight back into
// queue (the DLQ): t is the way m reached the DLQ (its last dead-letter
// exchange and key), or the default exchange with the DLQ's name.
func LoopsBack(t Target, m *Message, queue string) bool {
	if t.Exchange == "" && (t.RoutingKey == queue || slices.Contains(t.CC, queue)) {
		return true
	}
	return t.Exchange == m.Exchange && t.RoutingKey == m.RoutingKey
}

func firstOr(list []string, def string) string {
	if len(list) > 0 {
		return list[0]
	}
	return def
}
