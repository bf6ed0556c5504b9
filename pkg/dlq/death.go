package dlq

import (
	"fmt"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"
)

// Headers the broker sets when it dead-letters a message (rabbit_dead_letter
// and, from 3.13, mc): x-death holds one table per (queue, reason) pair, most
// recent event first; x-first-death-* are set once, at the first
// dead-lettering, and never change; x-last-death-* exist from 3.13 on.
const (
	HeaderDeath              = "x-death"
	HeaderFirstDeathQueue    = "x-first-death-queue"
	HeaderFirstDeathReason   = "x-first-death-reason"
	HeaderFirstDeathExchange = "x-first-death-exchange"
	HeaderLastDeathQueue     = "x-last-death-queue"
	HeaderLastDeathReason    = "x-last-death-reason"
	HeaderLastDeathExchange  = "x-last-death-exchange"
	// HeaderDeliveryCount is set by quorum queues on redelivery: the DLQ's
	// own delivery counter, not part of the message. From 4.3 it counts
	// failed deliveries only, and a dead letter brings the count of the
	// queue it died in along.
	HeaderDeliveryCount = "x-delivery-count"
	// HeaderAcquiredCount is set from 4.3: how often the message was
	// taken from a queue (peeks included), likewise brought along by a
	// dead letter. Quorum queues set it, and so do classic queues on
	// redelivery (4.3.6: successive gets with a requeue of a classic DLQ
	// read 1, 2, 3). Bookkeeping, like x-delivery-count.
	HeaderAcquiredCount = "x-acquired-count"
	// HeaderCC carries the extra routing keys of a publish (sender-selected
	// distribution); x-death's routing-keys list them after the first key.
	HeaderCC = "CC"
)

// deathHeaders are the broker's dead-lettering bookkeeping: shown decoded,
// and removed on replay so the message starts fresh.
var deathHeaders = []string{
	HeaderDeath,
	HeaderFirstDeathQueue, HeaderFirstDeathReason, HeaderFirstDeathExchange,
	HeaderLastDeathQueue, HeaderLastDeathReason, HeaderLastDeathExchange,
}

// Death is one entry of the x-death header: the message was dead-lettered
// Count times from Queue for Reason.
//
// RabbitMQ keeps one entry per (queue, reason). A repeated event moves its
// entry to the front and increments Count, but keeps the entry's other
// fields from the first such event: Exchange and RoutingKeys are where the
// message had been published when it first died in Queue for Reason, and
// Time is that first event's time.
type Death struct {
	Queue  string `json:"queue"`
	Reason string `json:"reason"`
	// Exchange is the exchange the message had been published to before it
	// entered Queue (a dead-letter exchange when it had died before).
	Exchange string `json:"exchange"`
	// RoutingKeys are its routing key followed by its CC keys.
	RoutingKeys []string `json:"routing_keys"`
	Count       int64    `json:"count"`
	// Time is zero when the entry carries none.
	Time time.Time `json:"time,omitzero"`
	// OriginalExpiration is the per-message TTL (expiration, in ms) the
	// message had when it died in Queue, which the broker removed as it
	// dead-lettered it, whatever the reason.
	OriginalExpiration string `json:"original_expiration,omitempty"`

	// incomplete is set when the exchange or routing keys could not be read.
	incomplete bool
}

// FirstDeath is what the x-first-death-* headers say about the message's
// first dead-lettering.
type FirstDeath struct {
	Queue    string `json:"queue,omitempty"`
	Reason   string `json:"reason,omitempty"`
	Exchange string `json:"exchange,omitempty"`
	// Known is true when the headers are present.
	Known bool `json:"-"`
}

// Deaths is the decoded dead-lettering history of a message.
type Deaths struct {
	// Entries are x-death's tables, in the broker's order (most recent
	// event first).
	Entries []Death
	First   FirstDeath
	// Problems describe parts of the headers that could not be decoded
	// (a client that re-published the message may have rewritten them).
	Problems []string
}

// DecodeDeaths reads the x-death and x-first-death-* headers. It never
// fails: what it cannot read is described in Problems.
func DecodeDeaths(h amqp.Table) Deaths {
	var d Deaths
	if q, ok := h[HeaderFirstDeathQueue].(string); ok {
		d.First.Queue, d.First.Known = q, true
		d.First.Reason, _ = h[HeaderFirstDeathReason].(string)
		d.First.Exchange, _ = h[HeaderFirstDeathExchange].(string)
	}
	raw, ok := h[HeaderDeath]
	if !ok {
		return d
	}
	list, ok := raw.([]any)
	if !ok {
		d.Problems = append(d.Problems, fmt.Sprintf("header x-death is a %s, not an array of tables", fieldType(raw)))
		return d
	}
	for i, item := range list {
		t, ok := item.(amqp.Table)
		if !ok {
			d.Problems = append(d.Problems, fmt.Sprintf("x-death entry %d is a %s, not a table", i+1, fieldType(item)))
			continue
		}
		e, problems := decodeDeath(t)
		for _, p := range problems {
			d.Problems = append(d.Problems, fmt.Sprintf("x-death entry %d: %s", i+1, p))
		}
		d.Entries = append(d.Entries, e)
	}
	return d
}

func decodeDeath(t amqp.Table) (Death, []string) {
	var e Death
	var problems []string
	str := func(key string, dst *string, required bool) {
		v, ok := t[key]
		if !ok {
			if required {
				problems = append(problems, fmt.Sprintf("no %q field", key))
			}
			return
		}
		s, ok := v.(string)
		if !ok {
			problems = append(problems, fmt.Sprintf("field %q is a %s, not a string", key, fieldType(v)))
			return
		}
		*dst = s
	}
	str("queue", &e.Queue, true)
	str("reason", &e.Reason, true)
	before := len(problems)
	str("exchange", &e.Exchange, true)
	e.incomplete = len(problems) > before
	str("original-expiration", &e.OriginalExpiration, false)
	switch v := t["routing-keys"].(type) {
	case []any:
		for _, k := range v {
			s, ok := k.(string)
			if !ok {
				problems = append(problems, fmt.Sprintf("a routing key is a %s, not a string", fieldType(k)))
				continue
			}
			e.RoutingKeys = append(e.RoutingKeys, s)
		}
	case nil:
		problems = append(problems, `no "routing-keys" field`)
	default:
		problems = append(problems, fmt.Sprintf(`field "routing-keys" is a %s, not an array`, fieldType(v)))
	}
	if len(e.RoutingKeys) == 0 {
		e.incomplete = true
	}
	if n, ok := integer(t["count"]); ok {
		e.Count = n
	} else if v, present := t["count"]; present {
		problems = append(problems, fmt.Sprintf(`field "count" is a %s, not an integer`, fieldType(v)))
	}
	switch v := t["time"].(type) {
	case time.Time:
		e.Time = v.UTC()
	case nil:
	default:
		problems = append(problems, fmt.Sprintf(`field "time" is a %s, not a timestamp`, fieldType(v)))
	}
	return e, problems
}

// Origin returns the entry of the message's first dead-lettering: its
// Exchange and RoutingKeys are where the message was originally published.
//
// The broker orders x-death by most recent event and reorders it when an
// event repeats, so position alone does not say which came first. The
// x-first-death-queue/-reason headers do: they are set once, and the entry
// with that queue and reason still holds the first event's exchange and
// routing keys. Without them (a client rewrote the headers), the entry with
// the oldest time is used, and without times the last entry.
func (d Deaths) Origin() (Death, bool) {
	if len(d.Entries) == 0 {
		return Death{}, false
	}
	if d.First.Known {
		for _, e := range d.Entries {
			if e.Queue == d.First.Queue && (d.First.Reason == "" || e.Reason == d.First.Reason) {
				return e, true
			}
		}
	}
	best := -1
	for i, e := range d.Entries {
		if e.Time.IsZero() {
			continue
		}
		// Ties go to the later entry: the list is most recent first.
		if best < 0 || !e.Time.After(d.Entries[best].Time) {
			best = i
		}
	}
	if best < 0 {
		best = len(d.Entries) - 1
	}
	return d.Entries[best], true
}

// integer reads an AMQP integer field of any width.
func integer(v any) (int64, bool) {
	switch n := v.(type) {
	case int64:
		return n, true
	case int32:
		return int64(n), true
	case int16:
		return int64(n), true
	case int8:
		return int64(n), true
	case int:
		return int64(n), true
	case uint8:
		return int64(n), true
	case uint16:
		return int64(n), true
	case uint32:
		return int64(n), true
	}
	return 0, false
}

// fieldType names an AMQP field value's type for messages.
func fieldType(v any) string {
	switch v.(type) {
	case nil:
		return "void"
	case string:
		return "string"
	case []byte:
		return "byte array"
	case bool:
		return "boolean"
	case amqp.Table:
		return "table"
	case []any:
		return "array"
	case time.Time:
		return "timestamp"
	case float32, float64:
		return "float"
	case amqp.Decimal:
		return "decimal"
	}
	if _, ok := integer(v); ok {
		return "integer"
	}
	return fmt.Sprintf("%T", v)
}
