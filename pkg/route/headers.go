package route

import (
	"fmt"
	"maps"
	"math"
	"math/big"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/mqctl/mqctl/pkg/rmqversion"
	"github.com/mqctl/mqctl/pkg/topology"
)

// matchMode is a headers binding's x-match.
type matchMode struct {
	any   bool // any / any-with-x: one criterion suffices
	withX bool // all-with-x / any-with-x: x- arguments are criteria too
}

// parseXMatch reads a binding's x-match (rmqversion.ParseXMatch). RabbitMQ
// refuses to create a headers binding whose x-match is not one of the four
// strings, so such a binding does not exist on the broker.
func parseXMatch(args topology.Args) (matchMode, error) {
	m, err := rmqversion.ParseXMatch(args)
	return matchMode{any: m.Any, withX: m.WithX}, err
}

// HeadersMatch reports whether a headers exchange binding with arguments
// args matches a message with headers headers under the comparison of
// RabbitMQ version ver (see headersMatch). valid is false when the broker
// refuses such a binding (its x-match is not one of the four), which then
// matches nothing.
func HeadersMatch(args topology.Args, headers map[string]any, ver rmqversion.Version) (match, valid bool) {
	mode, err := parseXMatch(args)
	if err != nil {
		return false, false
	}
	ver = ver.OrDefault()
	return headersMatch(mode, args, routingValues(headers, ver), ver.HeadersMatchNumberTypes()), true
}

// routingValues returns headers as the headers exchange of version ver
// sees them (mc:routing_headers): a timestamp (time.Time) is an integer,
// in milliseconds from 3.13 and in seconds before (rmqversion's
// HeadersTimestampMillis), and a binary ([]byte) is its bytes, which
// equal a string of the same bytes in every version (Erlang binaries
// both). Only top-level values change: inside arrays and tables the AMQP
// types are compared (see typedEqual). headers itself is returned when
// nothing changes.
func routingValues(headers map[string]any, ver rmqversion.Version) map[string]any {
	var out map[string]any
	for k, v := range headers {
		var rv any
		switch x := v.(type) {
		case time.Time:
			rv = x.Unix()
			if ver.HeadersTimestampMillis() {
				rv = x.Unix() * 1000
			}
		case []byte:
			rv = string(x)
		default:
			continue
		}
		if out == nil {
			out = maps.Clone(headers)
		}
		out[k] = rv
	}
	if out == nil {
		return headers
	}
	return out
}

// headersMatch follows rabbit_exchange_type_headers (headers_match/5 up to
// 3.12, match/2 from 3.13): every binding argument except x-match is a
// criterion, but arguments starting with "x-" only in the -with-x modes.
// A criterion holds when the message has the header with an equal value
// (see amqpEqual; strict is rmqversion's HeadersMatchNumberTypes); a
// criterion without a value (nil, AMQP void) holds when the header is
// present at all. all needs every criterion (so a binding without criteria
// matches every message), any needs one (so it matches none).
func headersMatch(mode matchMode, args topology.Args, headers map[string]any, strict bool) bool {
	allMatch, anyMatch := true, false
	for k, want := range args {
		if k == "x-match" || (!mode.withX && strings.HasPrefix(k, "x-")) {
			continue
		}
		got, present := headers[k]
		switch {
		case !present:
			allMatch = false
		case want == nil || amqpEqual(want, got, strict):
			anyMatch = true
		default:
			allMatch = false
		}
	}
	if mode.any {
		return anyMatch
	}
	return allMatch
}

// amqpEqual compares a binding's criterion with a message's header value
// as the headers exchange does. At the top level the AMQP types are not
// compared: numbers match by their exact value whatever their width (a
// 32-bit 1 equals a 64-bit 1; see numberEqual), strings by content, booleans as booleans; a string never
// equals a number or a boolean ("1" is not 1, "true" is not true). Up to
// 3.12 the exchange compares with Erlang's ==, so an integer equals a
// float of the same value (1 equals 1.0); from 3.13 with =:= (strict), so
// it does not. Inside arrays and tables the values are {type, value}
// pairs, so each element must also have the same AMQP type (see
// typedEqual).
func amqpEqual(want, got any, strict bool) bool {
	_, numW := topology.Number(want)
	_, numG := topology.Number(got)
	switch {
	case numW || numG:
		if strict && numW && numG && isInteger(want) != isInteger(got) {
			return false
		}
		return numW && numG && numberEqual(want, got)
	case isComposite(want) || isComposite(got):
		return typedEqual(want, got)
	}
	return topology.ValueEqual(want, got)
}

// orderedTables names the criteria of matching headers binding args
// whose value holds a table of two or more fields (at any depth) that the
// message's header equals, sorted. RabbitMQ compares a table's fields in
// the order they were sent (a list of {name, type, value}, =:= or ==): a
// binding declared through the management API holds them sorted by name
// (rabbit_misc:to_amqp_table/1 folds the JSON object in key order, up to
// 32 fields), and the message matches only when its client sends them in
// that order too. The simulator, which compares them by name, cannot tell
// the order a client sends: measured on RabbitMQ 4.3.6, 4.0.5 and 3.10.8,
// 30 publishes from amqp091-go (which writes a table in map order) of the
// same header {a: 1, b: 2, c: 3} matched a binding's equal table 16, 18
// and 18 times; a one-field table always matched.
func orderedTables(args topology.Args, headers map[string]any) []string {
	var out []string
	for k, want := range args {
		if k == "x-match" || !topology.HasMultiFieldTable(want) {
			continue
		}
		if got, ok := headers[k]; ok && typedEqual(want, got) {
			out = append(out, k)
		}
	}
	slices.Sort(out)
	return out
}

// isInteger reports whether v is sent as an AMQP integer of some width
// (an Erlang integer on the broker), not a float.
func isInteger(v any) bool {
	switch v.(type) {
	case int, int8, int16, int32, int64, uint, uint8, uint16, uint32, uint64:
		return true
	}
	return false
}

func isComposite(v any) bool {
	switch v.(type) {
	case []any, map[string]any:
		return true
	}
	return false
}

// typedEqual compares two field values with their AMQP types, as Erlang
// compares the {type, value} pairs inside arrays and tables. A message's
// Go values have the types the AMQP client encodes them with (int32 is a
// signedint, int64 a long, float32 a float, float64 a double); a binding's
// arguments reach the broker as JSON, so an integer is a long and any
// other number a double. So a binding's [1] does not match a message's
// [1] sent as an int32, nor [1.0] sent as a double. Tables are compared
// by key; RabbitMQ compares them in the order their fields were sent.
func typedEqual(a, b any) bool {
	if amqpType(a) != amqpType(b) {
		return false
	}
	switch x := a.(type) {
	case []any:
		y := b.([]any)
		if len(x) != len(y) {
			return false
		}
		for i := range x {
			if !typedEqual(x[i], y[i]) {
				return false
			}
		}
		return true
	case map[string]any:
		y := b.(map[string]any)
		if len(x) != len(y) {
			return false
		}
		for k, v := range x {
			w, ok := y[k]
			if !ok || !typedEqual(v, w) {
				return false
			}
		}
		return true
	}
	if _, ok := topology.Number(a); ok {
		return numberEqual(a, b)
	}
	return topology.ValueEqual(a, b)
}

// numberEqual compares two numbers by their exact values, as Erlang
// compares an integer with an integer or a float (== and =:= alike): two
// integers are equal only when they are the same integer, however large
// (9007199254740993 is not 9007199254740992, though their float64
// conversions are equal), and an integer equals a float only when the
// float holds exactly that integer. NaN, which AMQP can carry but Erlang
// cannot hold, equals nothing.
func numberEqual(a, b any) bool {
	x, okA := exactNumber(a)
	y, okB := exactNumber(b)
	return okA && okB && x.Cmp(y) == 0
}

// exactNumber returns v's exact value; false when v is not a number or is
// NaN.
func exactNumber(v any) (*big.Float, bool) {
	f := new(big.Float)
	switch n := v.(type) {
	case int:
		return f.SetInt64(int64(n)), true
	case int8:
		return f.SetInt64(int64(n)), true
	case int16:
		return f.SetInt64(int64(n)), true
	case int32:
		return f.SetInt64(int64(n)), true
	case int64:
		return f.SetInt64(n), true
	case uint:
		return f.SetUint64(uint64(n)), true
	case uint8:
		return f.SetUint64(uint64(n)), true
	case uint16:
		return f.SetUint64(uint64(n)), true
	case uint32:
		return f.SetUint64(uint64(n)), true
	case uint64:
		return f.SetUint64(n), true
	case float32:
		return exactFloat(f, float64(n))
	case float64:
		return exactFloat(f, n)
	}
	switch n := topology.Normalize(v).(type) { // e.g. a json.Number
	case int64:
		return f.SetInt64(n), true
	case float64:
		return exactFloat(f, n)
	}
	return nil, false
}

func exactFloat(f *big.Float, x float64) (*big.Float, bool) {
	if math.IsNaN(x) {
		return nil, false
	}
	return f.SetFloat64(x), true
}

// amqpType names the AMQP 0-9-1 field type a Go value is sent as.
func amqpType(v any) string {
	switch v.(type) {
	case nil:
		return "void"
	case bool:
		return "bool"
	case int8:
		return "byte"
	case uint8:
		return "unsignedbyte"
	case int16:
		return "short"
	case uint16:
		return "unsignedshort"
	case int, int32:
		return "signedint"
	case uint32:
		return "unsignedint"
	case int64, uint, uint64:
		return "long"
	case float32:
		return "float"
	case float64:
		return "double"
	case string:
		return "longstr"
	case []byte:
		return "binary"
	case []any:
		return "array"
	case map[string]any:
		return "table"
	}
	return fmt.Sprintf("%T", v)
}

// FormatTable renders headers or binding arguments as {k=v, …}, keys
// sorted, strings quoted.
func FormatTable(t map[string]any) string {
	keys := make([]string, 0, len(t))
	for k := range t {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		if s, ok := t[k].(string); ok {
			parts[i] = k + "=" + strconv.Quote(s)
		} else {
			parts[i] = fmt.Sprintf("%s=%v", k, t[k])
		}
	}
	return "{" + strings.Join(parts, ", ") + "}"
}
