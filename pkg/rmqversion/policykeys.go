package rmqversion

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/mqctl/mqctl/pkg/kind"
	"github.com/mqctl/mqctl/pkg/suggest"
	"github.com/mqctl/mqctl/pkg/topology"
)

// operatorPolicyKeys are the keys an operator policy may set on every
// supported version: the keys registered as operator_policy_validator
// (rabbit_policies at v3.10.8, v4.0.5 and v4.3.5). An operator policy
// with any other key is refused whole (HTTP 400 "Validation failed …
// are not recognised policy settings", measured on 4.3.6 for
// dead-letter-exchange and consumer-timeout).
var operatorPolicyKeys = []string{"expires", "message-ttl", "max-length", "max-length-bytes",
	"max-in-memory-length", "max-in-memory-bytes", "delivery-limit"}

// OperatorPolicyKeyWins reports whether key is one of the operator policy
// keys of 3.12.7+ whose value replaces a policy's (overflow,
// queue-version: rabbit_policies merge_policy_value at v4.0.5); the other
// keys merge as their own rules say.
func OperatorPolicyKeyWins(key string) bool { return key == "overflow" || key == "queue-version" }

// OperatorPolicyKey reports whether an operator policy may set key on v:
// operatorPolicyKeys everywhere, overflow and queue-version from 3.12.7
// (OperatorPolicyOverflow), delayed-retry-* from 4.3.1
// (DelayedRetryPolicyKeys; rabbit_quorum_queue registers them as operator
// policy keys too). consumer-timeout and consumer-disconnected-timeout
// never: policies only.
func (v Version) OperatorPolicyKey(key string) bool {
	switch {
	case slices.Contains(operatorPolicyKeys, key):
		return true
	case OperatorPolicyKeyWins(key):
		return v.OperatorPolicyOverflow()
	case IsDelayedRetryPolicyKey(key):
		return v.DelayedRetryPolicyKeys()
	}
	return false
}

// IsDelayedRetryPolicyKey reports whether key is one of quorum queues'
// delayed-retry policy keys (4.3.1+).
func IsDelayedRetryPolicyKey(key string) bool {
	return key == "delayed-retry-type" || key == "delayed-retry-min" || key == "delayed-retry-max"
}

// policyKeySince are policy keys core RabbitMQ learnt within the supported
// versions, with the version that learnt them: before it the broker
// refuses a policy holding the key (HTTP 400 "Validation failed … are not
// recognised policy settings"; measured: 3.10.8 refuses consumer-timeout,
// 4.0.5 and 3.10.8 consumer-disconnected-timeout, 4.3.6 takes both).
// rabbit_policies registers consumer-timeout from v3.12.0 and
// consumer-disconnected-timeout from v4.3.0. The delayed-retry keys have
// their own rule (RefusesDelayedRetryPolicy).
var policyKeySince = map[string]struct {
	major, minor int
	fix          string
}{
	"consumer-timeout":              {3, 12, "remove it: before 3.12 RabbitMQ times out consumers only by consumer_timeout in rabbitmq.conf, for every queue of the node; or upgrade the broker to 3.12 or later"},
	"consumer-disconnected-timeout": {4, 3, "remove it: before 4.3 RabbitMQ has no consumer-disconnected timeout (quorum queues return a disconnected consumer's messages when its node is declared down); or upgrade the broker to 4.3 or later"},
}

// PolicyKeyRefusal says why v refuses a policy of kind k (kind.Policy or
// kind.OperatorPolicy) for holding key, whatever its value, and the fix;
// "" when it takes the key or another rule judges it (delayed-retry keys,
// ha-* keys, queue-master-locator). Keys mqctl does not know (a plugin's)
// are left to the broker.
func (v Version) PolicyKeyRefusal(k kind.Kind, key string) (why, fix string) {
	switch {
	case IsDelayedRetryPolicyKey(key) && !v.DelayedRetryPolicyKeys():
		return "", "" // RefusesDelayedRetryPolicy's
	case IsMirroringKey(key) && !v.ClassicMirroring():
		return "", "" // refused from 4.0 in any policy: checkPolicy's
	case key == "queue-master-locator" && v.RefusesQueueMasterLocator():
		return "", "" // the deprecated feature: checkPolicy's
	}
	if why, fix := NeverPolicyKey(key); why != "" {
		return why, fix
	}
	if near := MisspeltPolicyKey(key); near != "" {
		what := "policy"
		if k == kind.OperatorPolicy {
			what = "operator policy"
		}
		fix = fmt.Sprintf("write %q", near)
		if strings.Contains(key, "_") || strings.HasPrefix(key, "x-") {
			fix += " (a policy's keys are RabbitMQ's, with dashes and no x-: not the file's queue settings nor a queue's arguments)"
		}
		return fmt.Sprintf("%q is no policy key, and RabbitMQ refuses the whole %s (HTTP 400 \"not recognised policy settings\")", key, what), fix
	}
	if k == kind.OperatorPolicy {
		if v.OperatorPolicyKey(key) {
			return "", ""
		}
		why = fmt.Sprintf("RabbitMQ %s refuses the whole operator policy (HTTP 400 \"not recognised policy settings\"): operator policies may set only %s", v.Line(), strings.Join(v.operatorPolicyKeyList(), ", "))
		if OperatorPolicyKeyWins(key) {
			why = fmt.Sprintf("RabbitMQ %s refuses the whole operator policy (HTTP 400 \"not recognised policy settings\"): operator policies may set %s from 3.12.7", v.Line(), key)
		}
		return why, fmt.Sprintf("move %s to a policy (policies may set it), or remove it", key)
	}
	since, ok := policyKeySince[key]
	if !ok || v.AtLeast(since.major, since.minor) {
		return "", ""
	}
	return fmt.Sprintf("RabbitMQ %s refuses the whole policy (HTTP 400 \"not recognised policy settings\"): policies may set %s from %d.%d", v.Line(), key, since.major, since.minor), since.fix
}

// pluginPolicyKeys are the policy keys RabbitMQ's bundled plugins register
// (policy_validator at v3.10.8 and v4.3.5: federation, sharding).
var pluginPolicyKeys = []string{"federation-upstream", "federation-upstream-set", "federation-upstream-pattern", "routing-key", "shards-per-node"}

// knownPolicyKeys is every policy key RabbitMQ or a bundled plugin
// registers on some supported version.
var knownPolicyKeys = func() []string {
	out := append(slices.Sorted(maps.Keys(policyValues)), mirroringKeys...)
	out = append(out, "queue-master-locator", "delayed-retry-type", "delayed-retry-min", "delayed-retry-max")
	return append(out, pluginPolicyKeys...)
}()

// MisspeltPolicyKey is the policy key key was most likely meant to be
// (max_length, dead-letter-exchnage, x-message-ttl: "max-length",
// "dead-letter-exchange", "message-ttl"), "" for a key RabbitMQ knows or one
// near none (a plugin's, left to the broker). RabbitMQ refuses a policy
// with a key no validator registered, the whole policy.
func MisspeltPolicyKey(key string) string {
	if slices.Contains(knownPolicyKeys, key) || IsMirroringKey(key) {
		return ""
	}
	return suggest.Within(strings.TrimPrefix(key, "x-"), knownPolicyKeys, 1)
}

// operatorPolicyKeyList is every key v's operator policies may set.
func (v Version) operatorPolicyKeyList() []string {
	out := slices.Clone(operatorPolicyKeys)
	for _, k := range []string{"overflow", "queue-version", "delayed-retry-type", "delayed-retry-min", "delayed-retry-max"} {
		if v.OperatorPolicyKey(k) {
			out = append(out, k)
		}
	}
	return out
}

// RefusesPolicy reports whether v refuses a policy of kind k (kind.Policy
// or kind.OperatorPolicy) with definition def, for a key
// (PolicyKeyRefusal) or a value (RefusesPolicyValues). The broker refuses
// the whole policy, so none of its settings apply anywhere.
func (v Version) RefusesPolicy(k kind.Kind, def topology.Args) bool {
	for key := range def {
		if why, _ := v.PolicyKeyRefusal(k, key); why != "" {
			return true
		}
		// Judged by checkPolicy, with their own words, but refused all
		// the same: the broker takes none of the policy's settings.
		if IsMirroringKey(key) && !v.ClassicMirroring() {
			return true
		}
		if key == "queue-master-locator" && v.RefusesQueueMasterLocator() {
			return true
		}
	}
	return v.RefusesPolicyValues(def)
}

// policyKeys are the keys core RabbitMQ registers as policy settings
// (policy_validator in rabbit_policies, rabbit_quorum_queue and
// rabbit_stream_queue at v3.10.8 and v4.3.5, with the ha-* keys and
// queue-master-locator of 3.x): a queue argument's name with x- in front of
// one of them is the argument, written where a policy key was meant.
var policyKeys = []string{"alternate-exchange", "dead-letter-exchange", "dead-letter-routing-key",
	"dead-letter-strategy", "delivery-limit", "expires", "initial-cluster-size", "max-age",
	"max-in-memory-bytes", "max-in-memory-length", "max-length", "max-length-bytes", "message-ttl",
	"overflow", "queue-leader-locator", "queue-master-locator", "queue-mode", "queue-version",
	"stream-max-segment-size-bytes", "consumer-timeout", "consumer-disconnected-timeout"}

// NeverPolicyKey says why no supported version takes key in a policy or an
// operator policy, and the fix, or "" when some version (or a plugin) may.
// These are settings a queue takes only as arguments when it is declared:
// its type, its priorities, single active consumer, and every x- argument
// (policy keys never start with x-). The broker refuses the whole policy
// (HTTP 400 "Validation failed … are not recognised policy settings",
// measured on 4.3.6, 4.0.5 and 3.10.8 for x-queue-type, queue-type,
// max-priority, single-active-consumer, x-max-in-memory-length and
// x-message-ttl), so none of its settings apply to any queue.
func NeverPolicyKey(key string) (why, fix string) {
	base := strings.TrimPrefix(key, "x-")
	switch {
	case base == "queue-type":
		fix = "remove it from the policy: a queue's type is chosen only when the queue is declared (type: quorum, the x-queue-type argument), and no policy can change it"
	case base == "max-priority":
		fix = "remove it from the policy: priorities are set only by a classic queue's own x-max-priority argument, when it is declared (quorum queues need none from RabbitMQ 4.0)"
	case base == "single-active-consumer":
		fix = "remove it from the policy: single active consumer is set only by the queue's own x-single-active-consumer argument, when it is declared"
	case key != base && slices.Contains(policyKeys, base):
		fix = fmt.Sprintf("write it as %s: policy keys are the argument names without x-", base)
	case key != base:
		fix = "remove it from the policy: policy keys never start with x- (that is a queue argument, which the queue takes only when it is declared)"
	default:
		return "", ""
	}
	return fmt.Sprintf("RabbitMQ refuses the whole policy (HTTP 400 \"not recognised policy settings\"): %s is no policy key on any version", key), fix
}
