package rmqversion

import (
	"fmt"

	"github.com/mqctl/mqctl/pkg/topology"
)

// Delayed retry types: the values of x-delayed-retry-type and of the
// policy key delayed-retry-type (RabbitMQ 4.3).
const (
	RetryDisabled = "disabled"
	RetryAll      = "all"
	RetryFailed   = "failed"
	RetryReturned = "returned"
)

// KnownRetryType reports whether RabbitMQ 4.3 knows delayed retry type t.
// As a queue argument another one is taken and leaves delayed retry
// disabled; in a policy it is refused (DelayedRetryPolicyRefusal).
func KnownRetryType(t string) bool {
	switch t {
	case RetryDisabled, RetryAll, RetryFailed, RetryReturned:
		return true
	}
	return false
}

// DelayedRetryPolicyRefusal is what RabbitMQ 4.3.1+ answers refusing a
// policy (or operator policy) definition def for its delayed-retry-*
// keys, and the key it refuses; "" when it takes them (rabbit_quorum_queue:validate_policy/1 at
// v4.3.5, whose words it quotes): each value first, then min required by
// an active type, then max not below min. Unlike the queue arguments,
// which the broker takes whatever they hold, a policy is validated.
func DelayedRetryPolicyRefusal(def topology.Args) (key, why string) {
	tv, hasType := def["delayed-retry-type"]
	if typ, ok := tv.(string); hasType && (!ok || !KnownRetryType(typ)) {
		return "delayed-retry-type", fmt.Sprintf("%s is not a valid delayed retry type. Must be one of: all, failed, returned, disabled", topology.Quoted(tv))
	}
	minv, hasMin := def["delayed-retry-min"]
	minMS, minOK := topology.PositiveInt(minv)
	if hasMin && !minOK {
		return "delayed-retry-min", fmt.Sprintf("%s is not a valid delayed retry minimum delay. Must be a positive integer", topology.Quoted(minv))
	}
	maxv, hasMax := def["delayed-retry-max"]
	maxMS, maxOK := topology.PositiveInt(maxv)
	if hasMax && !maxOK {
		return "delayed-retry-max", fmt.Sprintf("%s is not a valid delayed retry maximum delay. Must be a positive integer", topology.Quoted(maxv))
	}
	if typ, _ := tv.(string); hasType && typ != RetryDisabled && !hasMin {
		return "delayed-retry-min", fmt.Sprintf("delayed-retry-min is required when delayed-retry-type is %s", typ)
	}
	if hasMin && hasMax && maxMS < minMS {
		return "delayed-retry-max", fmt.Sprintf("delayed-retry-max (%d) must not be smaller than delayed-retry-min (%d)", maxMS, minMS)
	}
	return "", ""
}

// RefusesDelayedRetryPolicy reports whether v refuses a policy (or
// operator policy) definition def for its delayed-retry-* keys: before
// 4.3.1 any of them (4.3.0 refuses them by a bug, older versions do not
// know them), from then the values DelayedRetryPolicyRefusal names.
func (v Version) RefusesDelayedRetryPolicy(def topology.Args) bool {
	if !v.DelayedRetryPolicyKeys() {
		return def.Has("delayed-retry-type") || def.Has("delayed-retry-min") || def.Has("delayed-retry-max")
	}
	_, why := DelayedRetryPolicyRefusal(def)
	return why != ""
}

// DelayedRetryPolicyFix is how to write a policy's delayed-retry-* keys
// that the broker takes, and what they then do.
const DelayedRetryPolicyFix = "set delayed-retry-type to all, failed or returned, delayed-retry-min to the first wait in milliseconds (a positive whole number) and delayed-retry-max, if any, to the longest (at least min): a returned message then waits min(min × failed deliveries, max) ms"
