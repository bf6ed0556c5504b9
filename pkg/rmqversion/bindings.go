package rmqversion

import (
	"errors"
	"fmt"
	"math/big"

	"github.com/mqctl/mqctl/pkg/topology"
)

// XMatch is a headers binding's x-match: all (the default), any,
// all-with-x or any-with-x.
type XMatch struct {
	Any   bool // any / any-with-x: one criterion suffices
	WithX bool // all-with-x / any-with-x: x- arguments are criteria too
}

// XMatchError is an x-match RabbitMQ refuses: on every supported version
// a headers exchange refuses a binding whose x-match is not one of the
// four strings (rabbit_exchange_type_headers:validate_binding/2 at
// v3.10.8 and v4.3.5, HTTP 400 binding_invalid).
type XMatchError struct{ Value any }

// Reason says what is wrong with the x-match.
func (e *XMatchError) Reason() string {
	if s, ok := e.Value.(string); ok {
		return fmt.Sprintf("x-match %q is not valid: RabbitMQ refuses the binding", s)
	}
	return fmt.Sprintf("x-match is %v, not a string: RabbitMQ refuses the binding", e.Value)
}

// Fix says what RabbitMQ takes.
func (e *XMatchError) Fix() string { return "use all, any, all-with-x or any-with-x" }

func (e *XMatchError) Error() string { return e.Reason() + "; " + e.Fix() }

// ParseXMatch reads the x-match of a headers binding's arguments args; an
// *XMatchError when RabbitMQ refuses it.
func ParseXMatch(args topology.Args) (XMatch, error) {
	v, ok := args["x-match"]
	if !ok {
		return XMatch{}, nil // all, by default
	}
	s, isString := v.(string)
	switch {
	case !isString:
	case s == "all":
		return XMatch{}, nil
	case s == "any":
		return XMatch{Any: true}, nil
	case s == "all-with-x":
		return XMatch{WithX: true}, nil
	case s == "any-with-x":
		return XMatch{Any: true, WithX: true}, nil
	}
	return XMatch{}, &XMatchError{Value: v}
}

// ConsistentHashExchangeType is the rabbitmq_consistent_hash_exchange
// plugin's exchange type, whose binding keys are weights.
const ConsistentHashExchangeType = "x-consistent-hash"

// MaxConsistentHashWeight is the largest binding key an x-consistent-hash
// exchange takes where it limits them (ConsistentHashWeightLimit).
const MaxConsistentHashWeight = 10000

// ConsistentHashWeightLimit: an x-consistent-hash exchange refuses a
// binding key above MaxConsistentHashWeight ("The binding key must not
// exceed 10000", 4.2.6+: rabbit_exchange_type_consistent_hash
// validate_binding/2 at v4.2.6 and v4.3.5, not at v4.2.5).
func (v Version) ConsistentHashWeightLimit() bool { return v.atLeastPatch(4, 2, 6) }

// ConsistentHashKeyRefusal says why an x-consistent-hash exchange of
// version v refuses a binding with routing key key, and the fix; "" when
// it takes it: the key is the destination's weight, an integer of at
// least 1 (rabbit_exchange_type_consistent_hash:validate_binding/2 at
// v3.10.8, v4.0.5 and v4.3.5: list_to_integer of the key, HTTP 400
// binding_invalid).
func (v Version) ConsistentHashKeyRefusal(key string) (reason, fix string) {
	n, ok := new(big.Int).SetString(key, 10)
	switch {
	case !ok:
		return `an x-consistent-hash exchange takes the destination's weight, an integer, as the binding key (HTTP 400 "The binding key must be an integer")`,
			`write the destination's weight as the routing key, e.g. routing_key: "1" (each destination gets a share of the messages in proportion to its weight)`
	case n.Sign() < 1:
		return `an x-consistent-hash exchange takes a weight of at least 1 as the binding key (HTTP 400 "The binding key must be greater than 0")`,
			`write a weight of 1 or more, e.g. routing_key: "1"`
	case v.ConsistentHashWeightLimit() && n.Cmp(big.NewInt(MaxConsistentHashWeight)) > 0:
		return fmt.Sprintf("RabbitMQ %s takes a weight of at most %d as an x-consistent-hash binding key (HTTP 400 \"The binding key must not exceed %d\", from 4.2.6)", v.Line(), MaxConsistentHashWeight, MaxConsistentHashWeight),
			fmt.Sprintf("write a weight from 1 to %d: only the weights' proportions matter, so divide them all by a common factor", MaxConsistentHashWeight)
	}
	return "", ""
}

// checkBindingArguments appends to out the bindings of vhost vn that
// their source exchange refuses on every version for what they hold: a
// headers binding's x-match (XMatchError), an x-consistent-hash binding's
// key that is not a weight (ConsistentHashKeyRefusal).
func (v Version) checkBindingArguments(out []Refusal, vn string, vh *topology.Vhost) []Refusal {
	for _, b := range vh.Bindings {
		// Worded only for a refusal: a vhost's bindings are many.
		obj := func() string {
			return fmt.Sprintf("binding from %q to %s %q", b.Source, b.DestinationType, b.Destination)
		}
		switch vh.ExchangeType(b.Source) {
		case "headers":
			var xe *XMatchError
			if _, err := ParseXMatch(b.Arguments); errors.As(err, &xe) {
				out = append(out, Refusal{Vhost: vn, Object: obj(), Key: "arguments", Pos: b.PosOf("x-match"), ObjectPos: b.Pos,
					Reason: xe.Reason() + " (HTTP 400 binding_invalid)", Fix: xe.Fix()})
			}
		case ConsistentHashExchangeType:
			if why, fix := v.ConsistentHashKeyRefusal(b.RoutingKey); why != "" {
				out = append(out, Refusal{Vhost: vn, Object: obj(), Key: fmt.Sprintf("routing key %q", b.RoutingKey), Pos: b.Pos,
					Reason: "RabbitMQ refuses it: " + why, Fix: fix})
			}
		}
	}
	return out
}
