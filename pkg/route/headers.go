package route

import (
	"fmt"
	"strings"

	"github.com/mqctl/mqctl/pkg/topology"
)

// matchMode is a headers binding's x-match.
type matchMode struct {
	any   bool // any / any-with-x: one criterion suffices
	withX bool // all-with-x / any-with-x: x- arguments are criteria too
}

// parseXMatch reads a binding's x-match. RabbitMQ refuses to create a
// headers binding whose x-match is not one of the four strings
// (rabbit_exchange_type_headers:validate_binding), so such a binding does
// not exist on the broker.
func parseXMatch(args topology.Args) (matchMode, error) {
	v, ok := args["x-match"]
	if !ok {
		return matchMode{}, nil // all, by default
	}
	s, isString := v.(string)
	switch {
	case !isString:
		return matchMode{}, fmt.Errorf("x-match is %v, not a string: RabbitMQ refuses the binding; use all, any, all-with-x or any-with-x", v)
	case s == "all":
		return matchMode{}, nil
	case s == "any":
		return matchMode{any: true}, nil
	case s == "all-with-x":
		return matchMode{withX: true}, nil
	case s == "any-with-x":
		return matchMode{any: true, withX: true}, nil
	}
	return matchMode{}, fmt.Errorf("x-match %q is not valid: RabbitMQ refuses the binding; use all, any, all-with-x or any-with-x", s)
}

// headersMatch follows rabbit_exchange_type_headers:headers_match: every
// binding argument except x-match is a criterion, but arguments starting
// with "x-" only in the -with-x modes. A criterion holds when the message
// has the header with an equal value; a criterion without a value (nil,
// AMQP void) holds when the header is present at all. all needs every
// criterion (so a binding without criteria matches every message), any
// needs one (so it matches none).
func headersMatch(mode matchMode, args topology.Args, headers map[string]any) bool {
	allMatch, anyMatch := true, false
	for k, want := range args {
		if k == "x-match" || (!mode.withX && strings.HasPrefix(k, "x-")) {
			continue
		}
		got, present := headers[k]
		switch {
		case !present:
			allMatch = false
		case want == nil || amqpEqual(want, got):
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

// amqpEqual compares two field values as Erlang's == does in the headers
// exchange: numbers by value whatever their width or kind (1 equals 1.0),
// strings by content, booleans as booleans; a string never equals a number
// or a boolean ("1" is not 1, "true" is not true).
func amqpEqual(a, b any) bool {
	a, b = topology.Normalize(a), topology.Normalize(b)
	switch x := a.(type) {
	case int64:
		switch y := b.(type) {
		case int64:
			return x == y
		case float64:
			return float64(x) == y
		}
		return false
	case float64:
		switch y := b.(type) {
		case int64:
			return x == float64(y)
		case float64:
			return x == y
		}
		return false
	case []any:
		y, ok := b.([]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for i := range x {
			if !amqpEqual(x[i], y[i]) {
				return false
			}
		}
		return true
	case map[string]any:
		y, ok := b.(map[string]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for k, v := range x {
			w, ok := y[k]
			if !ok || !amqpEqual(v, w) {
				return false
			}
		}
		return true
	case nil:
		return b == nil
	default:
		return topology.ValueEqual(a, b)
	}
}
