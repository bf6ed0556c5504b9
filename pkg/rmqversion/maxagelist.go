package rmqversion

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/mqctl/mqctl/pkg/topology"
)

// A policy's max-age written as a list (["7", "D"]) rather than as one
// string ("7D"). The policy's check reads a list as its text joined
// (isAge), so every supported version takes such a policy (HTTP 201,
// TestPolicyMaxAgeAgainstBroker). But a stream reads its age only from a
// string: rabbit_stream_queue:max_age/1 (v3.10.8, v4.0.5, v4.3.5) converts
// a binary with rabbit_amqqueue:check_max_age/1 and hands anything else to
// osiris as it is, and a policy's max-age beats the stream's own x-max-age
// (policy_precedence/2). The stream's retention is then
// [{max_age, [<<"7">>, <<"D">>]}], and osiris_log:eval_age/2 computes
// Now - Age on it: badarith, each time the retention is evaluated (once a
// stream rolls a segment).

// ListMaxAgeStopsNode reports whether a stream's retention failing on
// such a list takes the node down: before RabbitMQ 3.13.1, whose osiris
// (v1.3.1 in 3.10.8, up to v1.7.2 in 3.12 and 3.13.0) lets
// osiris_retention crash on the badarith, again at each evaluation, until
// osiris_sup reaches its restart intensity and the node shuts down
// (measured on 3.10.8 by making a stream under such a policy roll a
// segment; never run again: it stops the shared broker). From 3.13.1
// (osiris v1.8.1; osiris 55ca3f2 "Be more defensive when evaluating
// retention", v1.8.0) osiris_retention catches the failure, logs it at
// debug level and trims nothing: measured on 4.0.5 and 4.3.6, a stream of
// 2 kB segments under max-age ["1", "s"] kept all of its 151 messages,
// under "1s" about 35.
func (v Version) ListMaxAgeStopsNode() bool { return !v.atLeastPatch(3, 13, 1) }

// ListMaxAge reports whether val, a policy's max-age, is a list the
// policy's check takes (its text joined is an age, isAge): a value every
// version takes and no stream reads as an age. A list the check refuses
// is PolicyValueRefusal's.
func ListMaxAge(val any) bool {
	list, ok := topology.Normalize(val).([]any)
	return ok && isAge(Version{}, list)
}

// ListMaxAgeHarm says what a policy whose max-age is the list val (ListMaxAge)
// does on v to the streams it applies to, in a sentence that follows
// "RabbitMQ 4.0 takes the policy, but": on a version that stops the node,
// the crash; on the others, no retention by age.
func (v Version) ListMaxAgeHarm() string {
	if v.ListMaxAgeStopsNode() {
		return "a stream reads a max-age only from one string (rabbit_stream_queue:max_age/1) and hands the list to its retention as it is: once a stream the policy applies to rolls a segment, the node's stream retention process crashes on it (badarith in osiris_log:eval_age/2), again and again, until its supervisor gives up and the whole node shuts down (measured on 3.10.8; so on every RabbitMQ before 3.13.1, whose osiris does not catch the failure)"
	}
	return "a stream reads a max-age only from one string (rabbit_stream_queue:max_age/1) and hands the list to its retention as it is, which fails on it and trims nothing: the streams the policy applies to keep every message for ever as far as age goes, their own x-max-age included, which the policy's max-age overrides (measured on 4.0.5 and 4.3.6: a stream under max-age [\"1\", \"s\"] kept all its messages)"
}

// MaxAgeListFix is what to write instead of a max-age (a policy's, or a
// queue's x-max-age) written as the list val: its parts as one string,
// each as the file writes it (["7", "D"] and [7, "D"] are "7D"), where
// that is an age; otherwise an example. ok is false when val is no list.
func MaxAgeListFix(val any) (fix string, ok bool) {
	list, isList := topology.Normalize(val).([]any)
	if !isList {
		return "", false
	}
	if text, ok := writtenText(list); ok {
		if _, age := topology.MaxAgeMillis(text); age {
			return fmt.Sprintf("write it as one string, %q: a list is no age to a stream", text), true
		}
	}
	return "write it as one string, an age such as \"7D\", \"12h\" or \"30m\" (units Y, M, D, h, m, s, as written: a month is 30 days, a year 365): a list is no age to a stream", true
}

// writtenText joins the parts of list as the file writes them: strings
// as they are, whole numbers in decimal, lists of them joined. false for
// anything else.
func writtenText(list []any) (string, bool) {
	var b strings.Builder
	for _, e := range list {
		switch x := e.(type) {
		case string:
			b.WriteString(x)
		case int64:
			b.WriteString(strconv.FormatInt(x, 10))
		case []any:
			text, ok := writtenText(x)
			if !ok {
				return "", false
			}
			b.WriteString(text)
		default:
			return "", false
		}
	}
	return b.String(), true
}

// ListText renders a list value as the file may write it, JSON-like
// (["7", "D"], [7, "D"]); any other value as topology.Quoted does.
func ListText(val any) string {
	list, ok := topology.Normalize(val).([]any)
	if !ok {
		return topology.Quoted(val)
	}
	parts := make([]string, len(list))
	for i, e := range list {
		parts[i] = ListText(e)
	}
	return "[" + strings.Join(parts, ", ") + "]"
}
