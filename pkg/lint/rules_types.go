package lint

import (
	"regexp"
	"sort"
	"strings"

	"github.com/mqctl/mqctl/pkg/topology"
)

// queueTypeArgs lists the queue arguments each queue type accepts, as the
// broker's queue type modules declare them (rabbit_classic_queue,
// rabbit_quorum_queue and rabbit_stream_queue capabilities, 3.10–4.x).
// Since 3.10 RabbitMQ refuses to declare a queue with an argument that only
// another queue type knows (PRECONDITION_FAILED); arguments no type knows
// (plugins' own) are left alone.
func queueTypeArgs() map[string][]string {
	return map[string][]string{
		topology.QueueClassic: {
			"x-expires", "x-message-ttl", "x-dead-letter-exchange", "x-dead-letter-routing-key",
			"x-max-length", "x-max-length-bytes", "x-max-priority", "x-overflow", "x-queue-mode",
			"x-queue-version", "x-single-active-consumer", "x-queue-master-locator", "x-queue-leader-locator",
		},
		topology.QueueQuorum: {
			"x-dead-letter-exchange", "x-dead-letter-routing-key", "x-dead-letter-strategy", "x-expires",
			"x-max-length", "x-max-length-bytes", "x-max-in-memory-length", "x-max-in-memory-bytes",
			"x-overflow", "x-single-active-consumer", "x-quorum-initial-group-size", "x-quorum-target-group-size",
			"x-delivery-limit", "x-message-ttl", "x-queue-leader-locator",
		},
		topology.QueueStream: {
			"x-max-length-bytes", "x-max-age", "x-stream-max-segment-size-bytes", "x-max-segment-size-bytes",
			"x-initial-cluster-size", "x-queue-leader-locator", "x-stream-filter-size-bytes",
		},
	}
}

// queueTypeUnsupportedPolicyKeys lists the policy keys each queue type
// ignores (the queue type modules' unsupported_policies).
func queueTypeUnsupportedPolicyKeys() map[string][]string {
	mirroring := []string{"ha-mode", "ha-params", "ha-sync-mode", "ha-sync-batch-size", "ha-promote-on-shutdown", "ha-promote-on-failure", "queue-master-locator"}
	return map[string][]string{
		topology.QueueClassic: {
			"max-age", "stream-max-segment-size-bytes", "initial-cluster-size",
			"delivery-limit", "dead-letter-strategy", "max-in-memory-length", "max-in-memory-bytes", "target-group-size",
		},
		topology.QueueQuorum: append([]string{
			"max-priority", "queue-mode", "queue-version",
			"max-age", "stream-max-segment-size-bytes", "initial-cluster-size",
		}, mirroring...),
		topology.QueueStream: append([]string{
			"expires", "message-ttl", "dead-letter-exchange", "dead-letter-routing-key", "dead-letter-strategy",
			"max-length", "max-in-memory-length", "max-in-memory-bytes", "max-priority", "overflow",
			"queue-mode", "queue-version", "single-active-consumer", "delivery-limit",
		}, mirroring...),
	}
}

// argHint says what to do instead of an argument a queue type rejects.
func argHint(qtype, arg string) string {
	switch {
	case qtype == topology.QueueQuorum && arg == "x-max-priority":
		return "quorum queues have no priority levels: use a classic queue, or one queue per priority"
	case qtype == topology.QueueQuorum && arg == "x-queue-mode":
		return "quorum queues keep messages on disk already: remove it"
	case qtype == topology.QueueStream && (arg == "x-max-length" || arg == "x-message-ttl" || arg == "x-expires"):
		return "streams are bounded by retention instead: use x-max-length-bytes or x-max-age"
	case qtype == topology.QueueStream && strings.HasPrefix(arg, "x-dead-letter-"):
		return "streams never dead-letter: remove it"
	case qtype == topology.QueueClassic && (arg == "x-delivery-limit" || arg == "x-dead-letter-strategy"):
		return "it needs a quorum queue (type: quorum)"
	}
	return "remove it, or use a queue type that supports it"
}

// MQ501: arguments, properties and policies a queue type does not support.
func runUnsupported(p *Pass) []Finding {
	supported := map[string]map[string]bool{}
	known := map[string]bool{}
	for t, args := range queueTypeArgs() {
		supported[t] = map[string]bool{}
		for _, a := range args {
			supported[t][a] = true
			known[a] = true
		}
	}
	var out []Finding
	for _, name := range p.queueNames {
		q := p.Vhost.Queues[name]
		replicated := q.Type == topology.QueueQuorum || q.Type == topology.QueueStream
		if replicated && !q.Durable {
			out = append(out, p.queueFinding(q,
				"%s %q is not durable: RabbitMQ refuses to declare it (PRECONDITION_FAILED), %ss are always durable. Set durable: true",
				typeLabel(q.Type), name, typeLabel(q.Type)))
		}
		if replicated && q.AutoDelete {
			out = append(out, p.queueFinding(q,
				"%s %q is auto-delete: RabbitMQ refuses to declare it (PRECONDITION_FAILED), %ss cannot be auto-deleted. Set auto_delete: false, or use a classic queue",
				typeLabel(q.Type), name, typeLabel(q.Type)))
		}
		sup, typeKnown := supported[q.Type]
		for _, arg := range q.Arguments.Keys() {
			if typeKnown && known[arg] && !sup[arg] {
				out = append(out, p.queueFinding(q,
					"%s %q sets %s, which %ss do not support: RabbitMQ refuses to declare it (PRECONDITION_FAILED). %s",
					typeLabel(q.Type), name, arg, typeLabel(q.Type), upperFirst(argHint(q.Type, arg))))
			}
		}
		if q.Type == topology.QueueQuorum {
			if o, _ := q.Arguments.String(argOverflow); o == "reject-publish-dlx" {
				out = append(out, p.queueFinding(q,
					"quorum queue %q sets x-overflow reject-publish-dlx, which quorum queues do not support: RabbitMQ refuses to declare it. "+
						"Use reject-publish (publishers get a nack) or drop-head with a dead-letter exchange",
					name))
			}
		}
		if n, ok := q.Arguments.Int(argPriority); ok && (n > 255 || n < 0) && q.Type == topology.QueueClassic {
			out = append(out, p.queueFinding(q,
				"queue %q sets x-max-priority %d: RabbitMQ accepts 0 to 255 and refuses to declare the queue. Use at most 10",
				name, n))
		}
	}
	out = append(out, p.unsupportedPolicyKeys()...)
	return out
}

// typeLabel names a queue type: "classic queue", "quorum queue", "stream".
func typeLabel(qtype string) string {
	if qtype == topology.QueueStream {
		return "stream"
	}
	return qtype + " queue"
}

func upperFirst(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

// unsupportedPolicyKeys reports policies whose keys the queue types they
// apply to ignore: one finding per policy, naming the keys, the queue type
// and the queues.
func (p *Pass) unsupportedPolicyKeys() []Finding {
	unsupported := map[string]map[string]bool{}
	for t, keys := range queueTypeUnsupportedPolicyKeys() {
		unsupported[t] = map[string]bool{}
		for _, k := range keys {
			unsupported[t][k] = true
		}
	}
	type hit struct {
		kind   string
		policy *topology.Policy
		qtype  string
	}
	affected := map[hit][]string{}
	var order []hit
	for _, name := range p.queueNames {
		q := p.Vhost.Queues[name]
		for _, set := range []struct {
			kind     string
			policies map[string]*topology.Policy
		}{{KindPolicy, p.Vhost.Policies}, {KindOperatorPolicy, p.Vhost.OperatorPolicies}} {
			pol := p.effectivePolicy(set.policies, q)
			if pol == nil {
				continue
			}
			bad := false
			for k := range pol.Definition {
				if unsupported[q.Type][k] || strings.HasPrefix(k, "ha-") && q.Type != topology.QueueClassic {
					bad = true
				}
			}
			if o, _ := pol.Definition.String("overflow"); o == "reject-publish-dlx" && q.Type == topology.QueueQuorum {
				bad = true
			}
			if !bad {
				continue
			}
			h := hit{set.kind, pol, q.Type}
			if _, seen := affected[h]; !seen {
				order = append(order, h)
			}
			affected[h] = append(affected[h], name)
		}
	}
	var out []Finding
	for _, h := range order {
		var keys []string
		for _, k := range h.policy.Definition.Keys() {
			if unsupported[h.qtype][k] || strings.HasPrefix(k, "ha-") && h.qtype != topology.QueueClassic {
				keys = append(keys, k)
			}
		}
		if o, _ := h.policy.Definition.String("overflow"); o == "reject-publish-dlx" && h.qtype == topology.QueueQuorum {
			keys = append(keys, "overflow: reject-publish-dlx")
		}
		qs := affected[h]
		kind := "policy"
		if h.kind == KindOperatorPolicy {
			kind = "operator policy"
		}
		effect := "RabbitMQ ignores those keys for them, so they run without the setting"
		if h.qtype == topology.QueueQuorum {
			effect = "RabbitMQ does not apply a policy with such keys to a quorum queue at all, so they lose its other settings too"
		}
		out = append(out, p.policyFinding(h.kind, h.policy,
			"%s %q sets %s, which %ss do not support, and it matches %d %s(s) (%s): %s. "+
				"Narrow the policy's pattern or apply_to (classic_queues, quorum_queues, streams), or move the setting to a policy for the right queue type",
			kind, h.policy.Name, strings.Join(keys, ", "), typeLabel(h.qtype), len(qs), typeLabel(h.qtype), queuesList(qs), effect))
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Object.Name < out[j].Object.Name })
	return out
}

// effectivePolicy returns the policy RabbitMQ applies to queue q among
// policies: the matching one with the highest priority (ties go to the
// first name in order), or nil.
func (p *Pass) effectivePolicy(policies map[string]*topology.Policy, q *topology.Queue) *topology.Policy {
	var best *topology.Policy
	names := make([]string, 0, len(policies))
	for n := range policies {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		pol := policies[n]
		if !policyAppliesToQueue(pol.ApplyTo, q.Type) {
			continue
		}
		re := p.policyRegexp(pol.Pattern)
		if re == nil || !re.MatchString(q.Name) {
			continue
		}
		if best == nil || pol.Priority > best.Priority {
			best = pol
		}
	}
	return best
}

func policyAppliesToQueue(applyTo, qtype string) bool {
	switch applyTo {
	case "", "all", "queues":
		return true
	case "classic_queues":
		return qtype == topology.QueueClassic
	case "quorum_queues":
		return qtype == topology.QueueQuorum
	case "streams":
		return qtype == topology.QueueStream
	}
	return false
}

// policyRegexp compiles a policy pattern once per pass; nil when Go's
// regexp syntax cannot read it.
func (p *Pass) policyRegexp(pattern string) *regexp.Regexp {
	if re, ok := p.regexps[pattern]; ok {
		return re
	}
	re, err := regexp.Compile(pattern)
	if err != nil {
		re = nil
	}
	p.regexps[pattern] = re
	return re
}

// MQ502: more priority levels than are useful.
func runPriority(p *Pass) []Finding {
	var out []Finding
	for _, name := range p.queueNames {
		q := p.Vhost.Queues[name]
		if q.Type != topology.QueueClassic {
			continue
		}
		n, ok := p.qargs[name].Int(argPriority)
		if !ok || n <= 10 || n > 255 {
			continue
		}
		out = append(out, p.queueFinding(q,
			"queue %q has x-max-priority %d: RabbitMQ keeps an internal queue per priority level, which costs memory and CPU on every operation, and more than 10 levels buys nothing in practice. "+
				"Use at most 10 levels (max_priority: 10)",
			name, n))
	}
	return out
}
