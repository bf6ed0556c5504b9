package rmqversion

import (
	"fmt"
	"slices"

	"github.com/mqctl/mqctl/pkg/topology"
)

// nullReason is why every version refuses an argument whose value is null,
// or holds one in a list or table: the management API turns each argument
// into an AMQP table, and rabbit_misc:type_val(null) throws null_not_allowed
// (v3.10.8, v4.0.5 and v4.3.5; measured on 3.10.8, 4.0.5 and 4.3.6: a
// queue or exchange is refused with HTTP 400 null_not_allowed, a binding
// with HTTP 500 and no reason).
const nullReason = "RabbitMQ refuses an argument without a value (HTTP 400 null_not_allowed; a binding's, HTTP 500)"

// holdsNull reports whether val is null or a list or table holding one.
func holdsNull(val any) bool {
	switch v := val.(type) {
	case nil:
		return true
	case []any:
		return slices.ContainsFunc(v, holdsNull)
	case map[string]any:
		for _, x := range v {
			if holdsNull(x) {
				return true
			}
		}
	case topology.Args:
		for _, x := range v {
			if holdsNull(x) {
				return true
			}
		}
	}
	return false
}

// nullArgs is the keys of args whose value holds a null, sorted.
func nullArgs(args topology.Args) []string {
	var out []string
	for k, v := range args {
		if holdsNull(v) {
			out = append(out, k)
		}
	}
	slices.Sort(out)
	return out
}

// nullKey names arg of args, whose value holds a null: "x-k: null", or
// "x-k (a list holding null)".
func nullKey(args topology.Args, arg string) string {
	switch args[arg].(type) {
	case nil:
		return arg + ": null"
	case []any:
		return arg + " (a list holding null)"
	}
	return arg + " (a table holding null)"
}

// nullFix is what to write instead of arg's null.
func nullFix(arg string, header bool) string {
	if header {
		return fmt.Sprintf("give %s the value the message's header must have (a headers binding matches a header by its value), or remove it", arg)
	}
	return fmt.Sprintf("give %s a value, or remove it", arg)
}

// checkNullArguments appends to out the arguments of vhost vn's queues,
// exchanges and bindings whose value is null or holds one, which no
// version takes.
func (v Version) checkNullArguments(out []Refusal, vn string, vh *topology.Vhost) []Refusal {
	for _, xn := range sortedKeys(vh.Exchanges) {
		x := vh.Exchanges[xn]
		for _, arg := range nullArgs(x.Arguments) {
			out = append(out, Refusal{Vhost: vn, Object: fmt.Sprintf("exchange %q", xn), Key: nullKey(x.Arguments, arg), Pos: x.PosOf(arg), ObjectPos: x.Pos,
				Reason: nullReason, Fix: nullFix(arg, false)})
		}
	}
	for _, qn := range sortedKeys(vh.Queues) {
		q := vh.Queues[qn]
		for _, arg := range nullArgs(q.Arguments) {
			out = append(out, Refusal{Vhost: vn, Object: fmt.Sprintf("queue %q", qn), Key: nullKey(q.Arguments, arg), Pos: q.PosOf(arg), ObjectPos: q.Pos,
				Reason: nullReason, Fix: nullFix(arg, false)})
		}
	}
	for _, b := range vh.Bindings {
		for _, arg := range nullArgs(b.Arguments) {
			out = append(out, Refusal{Vhost: vn, Object: fmt.Sprintf("binding from %q to %s %q", b.Source, b.DestinationType, b.Destination), Key: nullKey(b.Arguments, arg), Pos: b.PosOf(arg), ObjectPos: b.Pos,
				Reason: nullReason, Fix: nullFix(arg, vh.ExchangeType(b.Source) == "headers")})
		}
	}
	return out
}

// valueText is val as a refusal names it: as %v does, but null for a value
// the file leaves null (%v says <nil>) and a list as the file may write it
// (ListText: ["1", "week"], where %v says [1 week]).
func valueText(val any) string {
	switch topology.Normalize(val).(type) {
	case nil:
		return "null"
	case []any:
		return ListText(val)
	}
	return fmt.Sprintf("%v", val)
}
