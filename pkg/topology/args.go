package topology

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/mqctl/mqctl/internal/intern"
)

// Args is an argument table (queue/exchange/binding arguments, a policy
// definition). Values are kept normalised (see Normalize) so that a value
// written in YAML and the same value read back from the broker's JSON
// compare equal.
type Args map[string]any

// PositiveInt reads an argument the broker takes only as an integer above
// 0 (is_integer(V), V > 0).
func PositiveInt(v any) (int64, bool) {
	n, ok := Normalize(v).(int64)
	return n, ok && n > 0
}

// HasMultiFieldTable reports whether v is or holds, at any depth, a
// table of two or more fields. RabbitMQ keeps a nested table's fields in
// the order they were sent and compares tables field by field in that
// order (a headers binding's criteria, a declaration's equivalence),
// while a Go map has no order: what mqctl sends with such a value goes
// through the management API, which sends a table's fields sorted by
// name, never through an AMQP client that sends them in map order.
func HasMultiFieldTable(v any) bool {
	switch x := v.(type) {
	case Args:
		return HasMultiFieldTable(map[string]any(x))
	case map[string]any:
		if len(x) > 1 {
			return true
		}
		for _, e := range x {
			if HasMultiFieldTable(e) {
				return true
			}
		}
	case []any:
		for _, e := range x {
			if HasMultiFieldTable(e) {
				return true
			}
		}
	}
	return false
}

// Quoted renders a value for a message: a string quoted, null as null,
// anything else as Go prints it.
func Quoted(v any) string {
	if s, ok := v.(string); ok {
		return fmt.Sprintf("%q", s)
	}
	if v == nil {
		return "null" // as the file writes it (and RabbitMQ's errors say)
	}
	return fmt.Sprintf("%v", v)
}

// Less reports whether a and b are both numbers and a is the smaller.
func Less(a, b any) bool {
	x, okA := Number(a)
	y, okB := Number(b)
	return okA && okB && x < y
}

// Number reads a value as a number, whatever its Go type (Normalize).
func Number(v any) (float64, bool) {
	switch n := Normalize(v).(type) {
	case int64:
		return float64(n), true
	case float64:
		return n, true
	}
	return 0, false
}

// Normalize maps a decoded YAML or JSON value onto the canonical Go types
// used in Args: int64 for every integral number (YAML ints and JSON float64
// alike), float64 for other numbers, string, bool, nil, []any and
// map[string]any with normalised members.
func Normalize(v any) any {
	switch x := v.(type) {
	case int:
		return int64(x)
	case int8:
		return int64(x)
	case int16:
		return int64(x)
	case int32:
		return int64(x)
	case int64:
		return x
	case uint:
		return int64(x)
	case uint8:
		return int64(x)
	case uint16:
		return int64(x)
	case uint32:
		return int64(x)
	case uint64:
		if x > math.MaxInt64 {
			return float64(x)
		}
		return int64(x)
	case float32:
		return Normalize(float64(x))
	case float64:
		if x == math.Trunc(x) && !math.IsInf(x, 0) && math.Abs(x) < 1<<53 {
			return int64(x)
		}
		return x
	case json.Number:
		if i, err := x.Int64(); err == nil {
			return i
		}
		if f, err := x.Float64(); err == nil {
			return Normalize(f)
		}
		return x.String()
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = Normalize(e)
		}
		return out
	case []string:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = e
		}
		return out
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = Normalize(e)
		}
		return out
	case Args:
		return map[string]any(x.Normalized())
	default:
		return v
	}
}

// Normalized returns a copy of a with every value normalised; nil for an
// empty table, so that "no arguments" has exactly one representation.
func (a Args) Normalized() Args {
	if len(a) == 0 {
		return nil
	}
	out := make(Args, len(a))
	for k, v := range a {
		out[k] = Normalize(v)
	}
	return out
}

// NormalizedInPlace normalises a's values where they are and returns a;
// nil for an empty table, as Normalized. For a table nothing else holds
// (one just decoded): Normalized's copy of each queue's arguments in a
// vhost's definitions was 8 MB of garbage at 50,000 queues.
func (a Args) NormalizedInPlace() Args {
	if len(a) == 0 {
		return nil
	}
	for k, v := range a {
		a[k] = Normalize(v)
	}
	return a
}

// Shared returns a copy of a whose names, and values that are text or
// whole numbers, are those t holds for them where it holds them, put there
// while it has room (intern.Max): the argument names and the values that
// repeat from one object to the next (a dead-letter exchange, an
// overflow, a limit) are held once, where each table read had its own (at
// 12,500 queues replaced, 2 MB of a saved plan's). nil for an empty a, as
// Normalized.
func (a Args) Shared(t *intern.Table[any]) Args {
	if len(a) == 0 {
		return nil
	}
	out := make(Args, len(a))
	for k, v := range a {
		name, _ := t.Share("k"+k, k).(string)
		out[name] = SharedValue(t, v)
	}
	return out
}

// SharedValue is v, or the value equal to it that t holds, for a text or
// a whole number (int64); put there while t has room. Any other value is
// v.
func SharedValue(t *intern.Table[any], v any) any {
	switch x := v.(type) {
	case string:
		return t.Share("s"+x, v)
	case int64:
		return t.Share("i"+strconv.FormatInt(x, 10), v)
	}
	return v
}

// Clone returns a deep copy of a.
func (a Args) Clone() Args { return a.Normalized() }

// Keys returns the argument names in sorted order.
func (a Args) Keys() []string { return sortedKeys(a) }

// Canonical renders a as a stable string (sorted keys, normalised values):
// equal tables render equally.
func (a Args) Canonical() string {
	if len(a) == 0 {
		return ""
	}
	var sb strings.Builder
	writeCanonical(&sb, map[string]any(a))
	return sb.String()
}

// CanonicalWriter takes a canonical rendering (a strings.Builder, a hash).
type CanonicalWriter interface {
	io.Writer
	io.ByteWriter
	io.StringWriter
}

// quoter is a CanonicalWriter that writes a string unambiguously itself
// (a hash needs no quotes, only a length), without the allocation of
// strconv.Quote.
type quoter interface {
	WriteQuoted(s string)
}

// quote writes s quoted, as w wants it.
func quote(w CanonicalWriter, s string) {
	if q, ok := w.(quoter); ok {
		q.WriteQuoted(s)
		return
	}
	w.WriteString(strconv.Quote(s))
}

// WriteCanonical writes a to w as Canonical renders it, leaving out the
// keys of skip (nothing at all when no key is left): tables equal but for
// those keys write the same.
func (a Args) WriteCanonical(w CanonicalWriter, skip ...string) {
	n := 0
	for k := range a {
		if !slices.Contains(skip, k) {
			n++
		}
	}
	if n > 0 {
		writeMap(w, map[string]any(a), skip)
	}
}

func writeCanonical(sb CanonicalWriter, v any) {
	switch x := Normalize(v).(type) {
	case nil:
		sb.WriteString("null")
	case bool:
		sb.WriteString(strconv.FormatBool(x))
	case int64:
		sb.WriteString(strconv.FormatInt(x, 10))
	case float64:
		sb.WriteString(strconv.FormatFloat(x, 'g', -1, 64))
	case string:
		quote(sb, x)
	case []any:
		sb.WriteByte('[')
		for i, e := range x {
			if i > 0 {
				sb.WriteByte(',')
			}
			writeCanonical(sb, e)
		}
		sb.WriteByte(']')
	case map[string]any:
		writeMap(sb, x, nil)
	default:
		b, _ := json.Marshal(x)
		sb.Write(b)
	}
}

// writeMap writes m's keys but those of skip, sorted, with their values.
func writeMap(w CanonicalWriter, m map[string]any, skip []string) {
	var small [8]string // most tables: no allocation
	keys := small[:0]
	for k := range m {
		if !slices.Contains(skip, k) {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	w.WriteByte('{')
	for i, k := range keys {
		if i > 0 {
			w.WriteByte(',')
		}
		quote(w, k)
		w.WriteByte(':')
		writeCanonical(w, m[k])
	}
	w.WriteByte('}')
}

// Equal reports whether two tables hold the same values after normalisation.
func (a Args) Equal(b Args) bool { return a.Canonical() == b.Canonical() }

// ValueEqual reports whether two single values are equal after normalisation.
func ValueEqual(x, y any) bool {
	// The scalars an argument table mostly holds compare as themselves:
	// their canonical forms are equal exactly when they are (a diff of
	// 10,000 queues compares some 30,000 of them).
	switch a := Normalize(x).(type) {
	case string:
		if b, ok := y.(string); ok {
			return a == b
		}
	case int64:
		if b, ok := Normalize(y).(int64); ok {
			return a == b
		}
	case bool:
		if b, ok := y.(bool); ok {
			return a == b
		}
	}
	var sx, sy strings.Builder
	writeCanonical(&sx, x)
	writeCanonical(&sy, y)
	return sx.String() == sy.String()
}

// String returns the string argument key, if present and a string.
func (a Args) String(key string) (string, bool) {
	s, ok := a[key].(string)
	return s, ok
}

// Int returns the integral argument key, if present and integral.
func (a Args) Int(key string) (int64, bool) {
	i, ok := Normalize(a[key]).(int64)
	return i, ok
}

// Has reports whether key is set.
func (a Args) Has(key string) bool {
	_, ok := a[key]
	return ok
}

// QueueTypeArgument is the queue argument that names a queue's type
// (classic, quorum, stream). The model keeps the type in Queue.Type, never
// in Arguments; RabbitMQ 4.x stores the argument on every queue, 3.10 only
// when it was given.
const QueueTypeArgument = "x-queue-type"

// LiftQueueType takes the queue type argument out of a queue's arguments:
// rest is a without it (nil when nothing else is left), value and present
// say what the argument held. a itself loses the argument (Clone it first
// to keep it).
func LiftQueueType(a Args) (rest Args, value any, present bool) {
	value, present = a[QueueTypeArgument]
	if present {
		delete(a, QueueTypeArgument)
	}
	if len(a) == 0 {
		return nil, value, present
	}
	return a, value, present
}
