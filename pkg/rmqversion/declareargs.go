package rmqversion

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/mqctl/mqctl/pkg/topology"
)

// declareArg is how RabbitMQ checks one queue argument's value on every
// declare, whatever the queue's type (rabbit_amqqueue:declare_args/0 and
// its check_*_arg functions at v3.10.8, v4.0.5 and v4.3.5): check returns
// the broker's reason for a value it refuses ("" for one it takes), fix
// what to write instead.
type declareArg struct {
	check func(v Version, val any) string
	fix   string
}

// maxExpiry is the longest TTL or expiry RabbitMQ takes, in milliseconds:
// ten years (rabbit_misc:check_expiry/1).
const maxExpiry = 315_360_000_000

// maxPriority is the highest x-max-priority RabbitMQ takes
// (MAX_SUPPORTED_PRIORITY).
const maxPriority = 255

var declareArgs = map[string]declareArg{
	"x-max-length":                    {nonNegInt, "write a whole number of messages, 0 or more"},
	"x-max-length-bytes":              {nonNegInt, "write a whole number of bytes, 0 or more"},
	"x-max-in-memory-length":          {nonNegInt, "write a whole number, 0 or more"},
	"x-max-in-memory-bytes":           {nonNegInt, "write a whole number of bytes, 0 or more"},
	"x-stream-max-segment-size-bytes": {nonNegInt, "write a whole number of bytes, 0 or more"},
	"x-max-priority":                  {maxPriorityArg, fmt.Sprintf("write a whole number from 0 to %d (up to 10 is advised)", maxPriority)},
	"x-message-ttl":                   {expiry(false), "write a whole number of milliseconds, from 0 to 315360000000 (ten years)"},
	"x-expires":                       {expiry(true), "write a whole number of milliseconds, from 1 to 315360000000 (ten years)"},
	"x-initial-cluster-size":          {positiveInt, "write a whole number of replicas, 1 or more"},
	"x-quorum-initial-group-size":     {positiveInt, "write a whole number of replicas, 1 or more"},
	"x-single-active-consumer":        {boolArg, "write true or false"},
	"x-dead-letter-exchange":          {stringArg, "write the exchange's name as a string (\"\" for the default exchange)"},
	"x-dead-letter-routing-key":       {stringArg, "write the routing key as a string"},
	"x-dead-letter-strategy":          {oneOf("invalid_dlx_strategy", "at-most-once", "at-least-once"), "write at-most-once or at-least-once"},
	"x-overflow":                      {oneOf("invalid_overflow", "drop-head", "reject-publish", "reject-publish-dlx"), "write drop-head, reject-publish or reject-publish-dlx"},
	"x-queue-leader-locator":          {leaderLocator, "write client-local or balanced"},
	"x-queue-version":                 {queueVersion, "write x-queue-version: 1 or 2, or leave it out"},
	// Quorum queues' consumer timeouts: checked from 4.3.2 (measured on
	// 4.3.6: -5 is {value_negative,-5}, "abc" "expected integer, got
	// longstr"); 4.3.0, 4.3.1 and earlier versions take any value.
	"x-consumer-timeout":              {from432(nonNegInt), "write a whole number of milliseconds, 0 or more"},
	"x-consumer-disconnected-timeout": {from432(nonNegInt), "write a whole number of milliseconds, 0 or more"},
}

// from432 is check on 4.3.2 and later, which check the value of the
// consumer timeout arguments on every declare (rabbit_amqqueue
// declare_args/0 at v4.3.2; not at v4.3.1); before, any value is taken.
func from432(check func(Version, any) string) func(Version, any) string {
	return func(v Version, val any) string {
		if !v.atLeastPatch(4, 3, 2) {
			return ""
		}
		return check(v, val)
	}
}

// queueVersion checks an x-queue-version: 1 or 2 (check_queue_version;
// 4.3 takes 2 alone, which RefusesQueueArgumentValue says first).
func queueVersion(v Version, val any) string {
	if bad := nonNegInt(v, val); bad != "" {
		return bad
	}
	if n := val.(int64); n != 1 && n != 2 {
		return fmt.Sprintf("unsupported queue version '%d'", n)
	}
	return ""
}

// quotedFix is the fix for val, a string whose text is a whole number or
// true or false that takes (the check of a key's value) takes as that
// number or boolean: the quotes alone make it wrong. A literal "10" is
// written so, and so is a quoted ${VAR}, which stays a string in an
// argument, a policy's definition or headers whatever its value (where
// the other fixes, "write a whole number", describe what is there
// already); the fix for it is the loader's for an unquoted ${VAR} inside
// {…} (loader parse.go): that mapping one entry per line.
func quotedFix(val any, takes func(any) bool) (string, bool) {
	s, ok := val.(string)
	if !ok {
		return "", false
	}
	var parsed any
	what := "a number"
	if n, err := strconv.ParseInt(s, 10, 64); err == nil {
		parsed = n
	} else if s == "true" || s == "false" {
		parsed, what = s == "true", "true or false"
	} else {
		return "", false
	}
	if !takes(parsed) {
		return "", false
	}
	return fmt.Sprintf("write it without quotes: a quoted value is a string, and RabbitMQ wants %s here (a quoted ${VAR} too, whatever its value: write that mapping one entry per line, where ${VAR} needs no quotes and takes the type of its value)", what), true
}

// declareArgProblem is the broker's reason for refusing queue argument arg
// with value val on every declare ("" when it takes it, or does not check
// arg).
func (v Version) declareArgProblem(arg string, val any) string {
	d, ok := declareArgs[arg]
	if !ok {
		return ""
	}
	return d.check(v, topology.Normalize(val))
}

func intOf(val any) (int64, string) {
	n, ok := val.(int64)
	if !ok {
		return 0, fmt.Sprintf("{unacceptable_type,%s}: expected a whole number, got %s", typeName(val), topology.Quoted(val))
	}
	return n, ""
}

func nonNegInt(_ Version, val any) string {
	n, bad := intOf(val)
	if bad == "" && n < 0 {
		return fmt.Sprintf("{value_negative,%d}", n)
	}
	return bad
}

func positiveInt(v Version, val any) string {
	if bad := nonNegInt(v, val); bad != "" {
		return bad
	}
	if val.(int64) == 0 {
		return "{value_zero,0}"
	}
	return ""
}

func maxPriorityArg(v Version, val any) string {
	if bad := nonNegInt(v, val); bad != "" {
		return bad
	}
	if n := val.(int64); n > maxPriority {
		return fmt.Sprintf("{max_value_exceeded,%d}", n)
	}
	return ""
}

// expiry checks a TTL (positive: an expiry, which may not be 0).
func expiry(positive bool) func(Version, any) string {
	return func(_ Version, val any) string {
		n, bad := intOf(val)
		switch {
		case bad != "":
			return bad
		case positive && n == 0:
			return "{value_zero,0}"
		case n < 0:
			return fmt.Sprintf("{value_negative,%d}", n)
		case n > maxExpiry:
			return fmt.Sprintf("{value_too_large,%d}", n)
		}
		return ""
	}
}

func boolArg(_ Version, val any) string {
	if _, ok := val.(bool); !ok {
		return fmt.Sprintf("{unacceptable_type,%s}: expected true or false, got %s", typeName(val), topology.Quoted(val))
	}
	return ""
}

func stringArg(_ Version, val any) string {
	if _, ok := val.(string); !ok {
		return fmt.Sprintf("{unacceptable_type,%s}: expected a string, got %s", typeName(val), topology.Quoted(val))
	}
	return ""
}

// oneOf checks a string among values; reason is the broker's word for
// another.
func oneOf(reason string, values ...string) func(Version, any) string {
	return func(_ Version, val any) string {
		s, ok := val.(string)
		if !ok || !slices.Contains(values, s) {
			return fmt.Sprintf("%s: %s is none of %s", reason, topology.Quoted(val), strings.Join(values, ", "))
		}
		return ""
	}
}

// leaderLocator checks an x-queue-leader-locator: client-local and
// balanced, and the deprecated random and least-leaders, on every
// version; min-masters from 4.0 (rabbit_queue_location's
// QUEUE_LEADER_LOCATORS).
func leaderLocator(v Version, val any) string {
	locators := []string{"client-local", "balanced", "random", "least-leaders"}
	if v.AtLeast(4, 0) {
		locators = append(locators, "min-masters")
	}
	return oneOf("invalid_queue_locator_arg", locators...)(v, val)
}

// typeName names the type of a value as a file holds it.
func typeName(val any) string {
	switch val.(type) {
	case string:
		return "longstr"
	case bool:
		return "bool"
	case float64:
		return "double"
	case nil:
		return "void"
	case []any:
		return "array"
	case map[string]any:
		return "table"
	}
	return "long"
}

// policyValue is how RabbitMQ checks the value of one policy key when a
// policy or an operator policy is set (rabbit_policies:validate_policy0/2
// at v3.10.8, v4.0.5 and v4.3.5): check reports whether it takes val, what
// is the broker's error after the value ("is not a valid maximum length"),
// fix what to write instead. A refused value refuses the whole policy.
type policyValue struct {
	check func(v Version, val any) bool
	what  string
	fix   string
}

// policyValueAnswers are, for the keys where that is not always HTTP 400
// "Validation failed" with policyValue.what, the broker's answer to a
// value check refuses, and the fix ("" for the 400).
var policyValueAnswers = map[string]func(v Version, val any) (answer, fix string){
	"max-age": policyMaxAgeAnswer,
}

// maxSegmentSize is the largest stream-max-segment-size-bytes a policy
// may set (MAX_STREAM_MAX_SEGMENT_SIZE).
const maxSegmentSize = 3_000_000_000

var policyValues = map[string]policyValue{
	"alternate-exchange":      {isString, "is not a valid alternate exchange name", "write the exchange's name as a string"},
	"dead-letter-exchange":    {isString, "is not a valid dead letter exchange name", declareArgs["x-dead-letter-exchange"].fix},
	"dead-letter-routing-key": {isString, "is not a valid dead letter routing key", declareArgs["x-dead-letter-routing-key"].fix},
	"dead-letter-strategy":    {isOneOf("at-most-once", "at-least-once"), "is not a valid dead letter strategy", declareArgs["x-dead-letter-strategy"].fix},
	// A policy's TTL and expiry have no upper bound, unlike the arguments'.
	"message-ttl":                   {intAtLeast(0), "is not a valid message TTL", "write a whole number of milliseconds, 0 or more"},
	"expires":                       {intAtLeast(1), "is not a valid queue expiry", "write a whole number of milliseconds, 1 or more"},
	"max-length":                    {intAtLeast(0), "is not a valid maximum length", declareArgs["x-max-length"].fix},
	"max-length-bytes":              {intAtLeast(0), "is not a valid maximum length in bytes", declareArgs["x-max-length-bytes"].fix},
	"max-in-memory-length":          {intAtLeast(0), "is not a valid maximum memory in bytes", declareArgs["x-max-in-memory-length"].fix},
	"max-in-memory-bytes":           {intAtLeast(0), "is not a valid maximum memory in bytes", declareArgs["x-max-in-memory-bytes"].fix},
	"queue-mode":                    {isOneOf("default", "lazy"), "is not a valid queue-mode value", "write default or lazy, or remove it (it has no effect from RabbitMQ 3.12)"},
	"queue-version":                 {isOneOfInts(1, 2), "is not a valid queue-version value", "write 1 or 2"},
	"overflow":                      {isOneOf("drop-head", "reject-publish", "reject-publish-dlx"), "is not a valid overflow value", declareArgs["x-overflow"].fix},
	"delivery-limit":                {deliveryLimit, "is not a valid delivery limit", "write a whole number of deliveries (0 or more before RabbitMQ 4.0; from 4.0, -1 for no limit)"},
	"queue-leader-locator":          {isOneOf("client-local", "balanced", "random", "least-leaders"), "is not a valid queue leader locator value", declareArgs["x-queue-leader-locator"].fix},
	"initial-cluster-size":          {intAtLeast(0), "is not a valid cluster size", "write a whole number of replicas, 0 or more"},
	"stream-max-segment-size-bytes": {intBetween(0, maxSegmentSize), "is not a valid segment size", fmt.Sprintf("write a whole number of bytes, from 0 to %d", maxSegmentSize)},
	"stream-filter-size-bytes":      {intBetween(16, 255), "is not a valid filter size. Valid range is 16-255", "write a whole number of bytes from 16 to 255"},
	"consumer-timeout":              {intAtLeast(0), "is not a valid consumer timeout", "write a whole number of milliseconds, 0 or more"},
	"consumer-disconnected-timeout": {intAtLeast(0), "is not a valid consumer disconnected timeout", "write a whole number of milliseconds, 0 or more"},
	"max-age":                       {isAge, "is not a valid max age (" + maxAgeForm + ")", maxAgeFix},
}

// PolicyValueRefusal is what RabbitMQ answers refusing a policy (or
// operator policy) for the value val of its key, as a text says it in
// parentheses after "refuses the whole policy" (`HTTP 400 "Validation
// failed": "ten" is not a valid maximum length`; "" when it takes it, or
// does not check key's value here: delayed-retry-*, checked with the
// other keys of delayed retry (DelayedRetryPolicyRefusal), and the keys of
// plugins), and what to write instead.
func (v Version) PolicyValueRefusal(key string, val any) (why, fix string) {
	pv, ok := policyValues[key]
	if !ok || pv.check(v, topology.Normalize(val)) {
		return "", ""
	}
	if since, ok := policyKeySince[key]; ok && !v.AtLeast(since.major, since.minor) {
		return "", "" // a key the version does not know: PolicyKeyRefusal's
	}
	why, fix = `HTTP 400 "Validation failed": `+ListText(val)+" "+pv.what, pv.fix
	if quoted, ok := quotedFix(topology.Normalize(val), func(x any) bool { return pv.check(v, x) }); ok {
		fix = quoted
	}
	if other, ok := policyValueAnswers[key]; ok {
		if answer, otherFix := other(v, topology.Normalize(val)); answer != "" {
			why, fix = answer, otherFix
		}
	}
	if list, ok := MaxAgeListFix(val); ok && key == "max-age" {
		fix = list // ["1", "week"]: one string, and an age
	}
	return why, fix
}

// RefusesPolicyValues reports whether v refuses a policy (or operator
// policy) definition def for the value of one of its keys: one that
// rabbit_policies refuses (PolicyValueRefusal) or, from 4.3.1, a
// delayed-retry value (before, any delayed-retry key:
// RefusesDelayedRetryPolicy). The broker refuses the whole policy, so
// none of its settings apply anywhere.
func (v Version) RefusesPolicyValues(def topology.Args) bool {
	if v.RefusesDelayedRetryPolicy(def) {
		return true
	}
	for k, val := range def {
		if why, _ := v.PolicyValueRefusal(k, val); why != "" {
			return true
		}
	}
	return false
}

// isAge: RabbitMQ's check of a policy's max-age (rabbit_amqqueue
// check_max_age/1) reads it with re:run, which takes a list of strings and
// characters as their text joined: ["7", "D"] is 7D, and every version
// takes it (measured on 3.10.8, 4.0.5 and 4.3.6).
func isAge(_ Version, val any) bool {
	text, ok := maxAgeText(val)
	if !ok {
		return false
	}
	_, ok = topology.MaxAgeMillis(text)
	return ok
}

// maxAgeText is val as the text RabbitMQ's check of a policy's max-age
// reads (re:run over iodata): a string, or a list of strings, characters
// (0 to 255) and such lists, joined. false for any other value (a number,
// true or false, null, a table), on which re:run fails.
func maxAgeText(val any) (string, bool) {
	switch x := val.(type) {
	case string:
		return x, true
	case []any:
		var b strings.Builder
		for _, e := range x {
			if n, ok := e.(int64); ok && n >= 0 && n <= 255 {
				b.WriteByte(byte(n))
				continue
			}
			text, ok := maxAgeText(e)
			if !ok {
				return "", false
			}
			b.WriteString(text)
		}
		return b.String(), true
	}
	return "", false
}

// ChecksMaxAgeWithoutDigits: RabbitMQ 4.2.9 and 4.3.1 refuse a max-age
// whose text does not start with a digit ("D", "week", "", [5]) with HTTP
// 400 "is not a valid max age"; before, their check fails on it
// (rabbit_amqqueue:check_max_age/1 matched "(^[0-9]*)" and took
// list_to_integer("")), and the broker answers a policy with HTTP 500 and
// no reason (measured: 4.0.5 and 3.10.8 answer 500, 4.3.6 answers 400;
// rabbitmq-server df231bf, "Fix three stream argument validation bugs").
func (v Version) ChecksMaxAgeWithoutDigits() bool {
	v = v.OrDefault()
	if v.Major == 4 && v.Minor == 2 {
		return v.atLeastPatch(4, 2, 9)
	}
	return v.atLeastPatch(4, 3, 1)
}

// queueMaxAgeProblem is the broker's reason for refusing a queue's
// x-max-age val, which is no age (rabbit_amqqueue:check_max_age_arg/2):
// one that is not text is {unacceptable_type,long} (bool, double, table,
// array), text invalid_max_age; before ChecksMaxAgeWithoutDigits, text
// that does not start with a digit makes the check fail, and the broker
// answers with the failure (HTTP 400 "Request to node … failed with
// {'EXIT',{badarg,…}}"). Measured on 4.3.6, 4.0.5 and 3.10.8
// (TestQueueMaxAgeAgainstBroker).
func (v Version) queueMaxAgeProblem(val any) string {
	text, ok := val.(string)
	switch {
	case !ok && val != nil:
		return fmt.Sprintf("{unacceptable_type,%s}: an age is text, %s", typeName(val), strings.TrimPrefix(maxAgeForm, "an age is "))
	case ok && (text == "" || text[0] < '0' || text[0] > '9') && !v.ChecksMaxAgeWithoutDigits():
		return "its check fails on text that does not start with a digit ({'EXIT',{badarg,…}}; 4.2.9 and 4.3.1 say invalid_max_age): " + maxAgeForm
	}
	return "invalid_max_age: " + maxAgeForm
}

// policyMaxAgeAnswer is the broker's answer to a policy's max-age val it
// does not take where that is no HTTP 400 (policyValue.answer): for a
// value that is no text (a number, true or false, null, a table) every
// version's check fails (re:run: badarg) and the broker answers HTTP 500
// with no body, and so do versions before ChecksMaxAgeWithoutDigits for
// text that does not start with a digit. Measured on 4.3.6, 4.0.5 and
// 3.10.8 (TestPolicyMaxAgeAgainstBroker).
func policyMaxAgeAnswer(v Version, val any) (answer, fix string) {
	const crash = "HTTP 500 with no body: the broker's check of max-age fails on %s (badarg from rabbit_amqqueue:check_max_age/1 in its log) and it keeps no policy"
	text, ok := maxAgeText(val)
	switch {
	case !ok:
		what := "a value that is not text"
		switch val.(type) {
		case int64, float64:
			what = "a number"
		case bool:
			what = "true or false"
		case nil:
			what = "null"
		}
		return fmt.Sprintf(crash, what), fmt.Sprintf("write the age as a number and its unit, such as \"7D\" or \"12h\" (units Y, M, D, h, m, s, as written: a month is 30 days, a year 365): %s alone is no age", topology.Quoted(val))
	case (text == "" || text[0] < '0' || text[0] > '9') && !v.ChecksMaxAgeWithoutDigits():
		return fmt.Sprintf(crash, "text that does not start with a digit") + " (4.2.9 and 4.3.1 refuse it with HTTP 400)", maxAgeFix
	}
	return "", ""
}

func isString(_ Version, val any) bool {
	_, ok := val.(string)
	return ok
}

func isOneOf(values ...string) func(Version, any) bool {
	return func(_ Version, val any) bool {
		s, ok := val.(string)
		return ok && slices.Contains(values, s)
	}
}

func isOneOfInts(values ...int64) func(Version, any) bool {
	return func(_ Version, val any) bool {
		n, ok := val.(int64)
		return ok && slices.Contains(values, n)
	}
}

func intAtLeast(least int64) func(Version, any) bool {
	return intBetween(least, math.MaxInt64)
}

func intBetween(least, most int64) func(Version, any) bool {
	return func(_ Version, val any) bool {
		n, ok := val.(int64)
		return ok && n >= least && n <= most
	}
}

// deliveryLimit: any whole number from 4.0 (a negative one means no
// limit, NegativeDeliveryLimitDisables), 0 or more before.
func deliveryLimit(v Version, val any) bool {
	if v.NegativeDeliveryLimitDisables() {
		return intBetween(math.MinInt64, math.MaxInt64)(v, val)
	}
	return intAtLeast(0)(v, val)
}
