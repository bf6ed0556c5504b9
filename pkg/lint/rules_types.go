package lint

import (
	"fmt"
	"sort"
	"strings"

	"github.com/mqctl/mqctl/pkg/kind"
	"github.com/mqctl/mqctl/pkg/pattern"
	"github.com/mqctl/mqctl/pkg/rmqversion"
	"github.com/mqctl/mqctl/pkg/topology"
)

// argHint says what to do instead of argument arg, which the type of
// queue q rejects on RabbitMQ version v.
func argHint(v rmqversion.Version, q *topology.Queue, arg string) string {
	qtype := q.Type
	switch {
	case qtype == topology.QueueStream && (arg == "x-max-length" || arg == "x-message-ttl" || arg == "x-expires"):
		var kept []string
		for _, a := range []string{argMaxBytes, "x-max-age"} {
			if q.Arguments.Has(a) {
				kept = append(kept, argWritten(q.Meta, a))
			}
		}
		if len(kept) > 0 {
			verb := " sets"
			if len(kept) > 1 {
				verb = " set"
			}
			return "streams are bounded by retention instead, which its " + strings.Join(kept, " and ") + verb + " already: remove it"
		}
		if _, typed := q.ArgPos.Written(arg); typed {
			return "streams are bounded by retention instead: use limits.max_length_bytes or arguments.x-max-age"
		}
		return "streams are bounded by retention instead: use x-max-length-bytes or x-max-age"
	case qtype == topology.QueueQuorum && arg == "x-max-priority":
		return v.QuorumPriorityAdvice()
	case qtype == topology.QueueQuorum && arg == "x-queue-mode":
		return "quorum queues keep messages on disk already: remove it"
	case qtype == topology.QueueStream && strings.HasPrefix(arg, "x-dead-letter-"):
		return "streams never dead-letter: remove it"
	case qtype == topology.QueueClassic && (arg == "x-delivery-limit" || arg == "x-dead-letter-strategy"):
		return "it needs a quorum queue (type: quorum)"
	case qtype == topology.QueueClassic && arg == "x-queue-master-locator":
		return v.QueueArgFix(qtype, arg)
	case qtype == topology.QueueClassic && arg == "x-queue-leader-locator":
		return "classic queues take x-queue-master-locator before RabbitMQ 4.0"
	case arg == "x-consumer-timeout" || arg == "x-consumer-disconnected-timeout":
		return "on RabbitMQ 4.3 only quorum queues evaluate consumer timeouts: classic queues and streams never do, whatever sets the timeout (this argument, a consumer-timeout policy, or consumer_timeout in rabbitmq.conf), so a consumer of this queue that hangs keeps its unacknowledged messages until its channel closes. " +
			"Remove it, or declare the queue with type: quorum to keep the timeout"
	case strings.HasPrefix(arg, "x-delayed-retry-"):
		return "delayed retry is a quorum queue feature (RabbitMQ 4.3): declare the queue with type: quorum, or remove it"
	}
	return "remove it, or use a queue type that supports it"
}

// MQ501: arguments, properties and policies a queue type does not support.
func runUnsupported(p *Pass) []Finding {
	var out []Finding
	for _, name := range p.queueNames {
		q := p.Vhost.Queues[name]
		for _, flag := range rmqversion.RefusedQueueFlags(q) {
			format := "%s %q is auto-delete: RabbitMQ refuses to declare it (PRECONDITION_FAILED), %ss cannot be auto-deleted. Set auto_delete: false, or use a classic queue"
			if flag.Property == "non-durable" {
				format = "%s %q is not durable: RabbitMQ refuses to declare it (PRECONDITION_FAILED), %ss are always durable. Set durable: true"
			}
			out = append(out, p.queueFinding(q, format, typeLabel(q.Type), name, typeLabel(q.Type)).at(flag.Field))
		}
		for _, arg := range q.Arguments.Keys() {
			if p.Version.RefusesQueueArgument(q.Type, arg) && !p.deprecatedArgReported(q.Type, arg, q.Arguments[arg]) {
				hint := upperFirst(argHint(p.Version, q, arg))
				if keep, ok := p.Version.KeepClassicFix(q, p.Vhost.Name, arg); ok {
					hint = upperFirst(keep) + ". Otherwise: " + argHint(p.Version, q, arg)
				}
				if more := p.quorumBlockers(q, arg); more != "" {
					hint += ". " + more
				}
				if d, ok := rmqversion.DefaultsFix(q, p.Vhost.Name, arg); ok {
					hint += ". " + upperFirst(d)
				}
				out = append(out, p.judged(p.queueFinding(q,
					"%s %q sets %s, which %ss do not support: %s the broker refuses to declare it (PRECONDITION_FAILED). %s",
					typeLabel(q.Type), name, argWritten(q.Meta, arg), typeLabel(q.Type), p.onVersion(), hint).at(arg)))
			}
		}
		out = append(out, p.refusedArgValues(q)...)
		if n, ok := q.Arguments.Int(argPriority); ok && (n > 255 || n < 0) && q.Type == topology.QueueClassic {
			out = append(out, p.queueFinding(q,
				"queue %q sets %s %d: RabbitMQ accepts 0 to 255 and refuses to declare the queue. Use at most 10",
				name, argWritten(q.Meta, argPriority), n).at(argPriority))
		}
	}
	out = append(out, p.quorumRejectPublishDLX()...)
	out = append(out, p.unsupportedPolicyKeys()...)
	out = append(out, p.refusedPolicyKeys()...)
	out = append(out, p.refusedPolicyValues()...)
	return out
}

// refusedPolicyKeys reports the keys of policies and operator policies
// that the target version does not take there, whatever their value
// (rmqversion.PolicyKeyRefusal: consumer-disconnected-timeout before 4.3,
// consumer-timeout in an operator policy): the broker refuses the whole
// policy, so none of its settings reach the queues it matches.
func (p *Pass) refusedPolicyKeys() []Finding {
	var out []Finding
	for _, set := range p.policySets() {
		for _, name := range set.names() {
			pol := set.policies[name]
			for _, k := range pol.Definition.Keys() {
				why, fix := p.Version.PolicyKeyRefusal(kind.Kind(set.kind), k)
				if why == "" {
					continue
				}
				out = append(out, p.judged(p.policyFinding(set.kind, pol,
					"%s %q sets %s: %s, so none of its settings take effect. %s",
					set.label, name, k, why, upperFirst(fix)).at(k)))
			}
		}
	}
	return out
}

// refusedPolicyValues reports the keys of policies and operator policies
// whose value RabbitMQ's policy validation refuses on the target version
// (rmqversion.PolicyValueRefusal: max-length: ten, expires: 0): the broker
// refuses the whole policy, so none of its settings reach the queues it
// matches.
func (p *Pass) refusedPolicyValues() []Finding {
	var out []Finding
	for _, set := range p.policySets() {
		for _, name := range set.names() {
			pol := set.policies[name]
			for _, k := range pol.Definition.Keys() {
				why, fix := p.Version.PolicyValueRefusal(k, pol.Definition[k])
				if why == "" {
					continue
				}
				out = append(out, p.judged(p.policyFinding(set.kind, pol,
					"%s %q sets %s %s: RabbitMQ %s refuses the whole %s (%s), so none of its settings take effect. %s",
					set.label, name, k, rmqversion.ListText(pol.Definition[k]), p.Version.Line(), set.label, why, upperFirst(fix)).at(k)))
			}
		}
	}
	return out
}

// refusedArgValues reports queue q's arguments whose value the target
// version refuses (x-queue-version 1 on a classic queue on 4.3), the
// argument being one its type takes.
func (p *Pass) refusedArgValues(q *topology.Queue) []Finding {
	var out []Finding
	for _, arg := range q.Arguments.Keys() {
		why, refused := p.Version.RefusesQueueArgumentValue(q.Type, arg, q.Arguments[arg])
		if !refused || p.Version.RefusesQueueArgument(q.Type, arg) {
			continue
		}
		fix := upperFirst(p.Version.QueueArgValueFixWritten(q.Meta, q.Type, arg, q.Arguments[arg]))
		if d, ok := rmqversion.DefaultsFix(q, p.Vhost.Name, arg); ok {
			fix += ". " + upperFirst(d)
		}
		out = append(out, p.judged(p.queueFinding(q,
			"%s %q sets %s %v, which RabbitMQ %s refuses: %s, so the broker refuses to declare the queue (PRECONDITION_FAILED). %s",
			typeLabel(q.Type), q.Name, argWritten(q.Meta, arg), q.Arguments[arg], p.Version.Line(), why, fix).at(arg)))
	}
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

// reportedElsewhere reports whether another rule reports policy key k set
// to value on the target version: ha-* keys (MQ702) and deprecated keys
// (MQ503), whose messages name the queues the policy then skips.
func (p *Pass) reportedElsewhere(k string, value any) bool {
	if rmqversion.IsMirroringKey(k) {
		return p.enabled("MQ702")
	}
	return p.deprecationReported(func(s deprecatedSetting) bool { return s.key == k }, value)
}

// deprecatedArgReported reports whether MQ503 reports argument arg set to
// value on a queue of type qtype on the target version
// (x-queue-master-locator on a classic queue): one cause, one finding,
// with MQ503's advice.
func (p *Pass) deprecatedArgReported(qtype, arg string, value any) bool {
	return qtype == topology.QueueClassic && p.deprecationReported(func(s deprecatedSetting) bool { return s.arg == arg }, value)
}

// deprecationReported reports whether MQ503 reports a deprecated setting
// that is, set to value, on the target version.
func (p *Pass) deprecationReported(is func(deprecatedSetting) bool, value any) bool {
	for _, s := range deprecatedSettings() {
		if is(s) && s.reports(p.Version, value) {
			return p.enabled("MQ503")
		}
	}
	return false
}

// unsupportedPolicyKeys reports policies holding keys that the types of
// queues they match do not support, so that RabbitMQ does not apply them
// to those queues at all: one finding per policy and queue type, naming
// the keys and the queues.
func (p *Pass) unsupportedPolicyKeys() []Finding {
	type hit struct {
		kind   string
		policy *topology.Policy
		qtype  string
	}
	badKeys := func(pol *topology.Policy, qtype string) []string {
		var keys []string
		for _, k := range p.Version.UnsupportedPolicyKeys(qtype) {
			if pol.Definition.Has(k) && !p.reportedElsewhere(k, pol.Definition[k]) {
				keys = append(keys, k)
			}
		}
		sort.Strings(keys)
		return keys
	}
	affected := map[hit][]string{}
	var order []hit
	for _, name := range p.queueNames {
		q := p.Vhost.Queues[name]
		for _, set := range p.policySets() {
			pol := p.effectivePolicy(kind.Kind(set.kind), set.policies, q)
			if pol == nil || len(badKeys(pol, q.Type)) == 0 {
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
		qs := affected[h]
		kind := "policy"
		if h.kind == KindOperatorPolicy {
			kind = "operator policy"
		}
		out = append(out, p.judged(p.policyFinding(h.kind, h.policy,
			"%s %q sets %s, which %ss do not support %s, and it matches %d %s(s) (%s): RabbitMQ does not apply a policy with such keys to a %s at all, so they run without any of its settings (a lower-priority policy may apply instead). "+
				"Narrow the policy's pattern or apply_to (classic_queues, quorum_queues, streams), or move the setting to a policy for the right queue type",
			kind, h.policy.Name, strings.Join(badKeys(h.policy, h.qtype), ", "), typeLabel(h.qtype), p.onVersion(), len(qs), typeLabel(h.qtype), queuesList(qs), typeLabel(h.qtype)).at(badKeys(h.policy, h.qtype)...)))
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Object.Name < out[j].Object.Name })
	return out
}

// effectivePolicy returns the policy RabbitMQ applies to queue q among
// policies: the matching one with the highest priority (ties go to the
// first name in order), or nil. A policy the target version refuses (of
// kind k) applies to nothing: the broker does not hold it.
func (p *Pass) effectivePolicy(k kind.Kind, policies map[string]*topology.Policy, q *topology.Queue) *topology.Policy {
	return p.matchingPolicy(k, policies, q, false)
}

// matchingPolicy is effectivePolicy, counting the policies the target
// version refuses too when refusedToo: the one that would apply once it
// is fixed.
func (p *Pass) matchingPolicy(k kind.Kind, policies map[string]*topology.Policy, q *topology.Queue, refusedToo bool) *topology.Policy {
	var best *topology.Policy
	names := make([]string, 0, len(policies))
	for n := range policies {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		pol := policies[n]
		if !policyAppliesToQueue(pol.ApplyTo, q.Type) || (!refusedToo && p.Version.RefusesPolicy(k, pol.Definition)) {
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

// policyRegexp compiles a policy pattern once per pass, as RabbitMQ reads
// it (pkg/pattern); nil when it cannot be read.
func (p *Pass) policyRegexp(expr string) *pattern.Pattern {
	if re, ok := p.regexps[expr]; ok {
		return re
	}
	re, err := pattern.Compile(expr)
	if err != nil {
		re = nil
	}
	p.regexps[expr] = re
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
			"queue %q has %s %d: RabbitMQ keeps an internal queue per priority level, which costs memory and CPU on every operation, and more than 10 levels buys nothing in practice. "+
				"Use at most 10 levels (max_priority: 10)",
			name, argWritten(q.Meta, argPriority), n).at(argPriority))
	}
	return out
}

// quorumRejectPublishDLX reports x-overflow reject-publish-dlx on quorum
// queues. RabbitMQ takes it, from an argument or a policy, logs a warning
// and uses drop-head (rabbit_quorum_queue:overflow/3 on every supported
// version): the queue is declared and the policy applies, but publishers
// are never refused and a full queue sheds its oldest messages. An argument
// is reported on its queue; a policy once, naming its quorum queues.
func (p *Pass) quorumRejectPublishDLX() []Finding {
	const value = "reject-publish-dlx"
	var out []Finding
	byPolicy := map[*topology.Policy][]string{}
	var order []*topology.Policy
	kinds := map[*topology.Policy]string{}
	for _, name := range p.queueNames {
		q := p.Vhost.Queues[name]
		if q.Type != topology.QueueQuorum {
			continue
		}
		own, _ := q.Arguments.String(argOverflow)
		eff, _ := p.qargs[name].String(argOverflow)
		switch {
		case own == value && eff == value:
			out = append(out, p.queueFinding(q,
				"quorum queue %q sets %s %s, which quorum queues do not support: RabbitMQ declares it anyway, logs a warning and uses drop-head, so publishers are never refused and, when it is full, %s. "+
					"Use reject-publish so that publishers get a nack when it is full (a quorum queue does not dead-letter what it refuses), or write drop-head if that is what you want",
				name, argWritten(q.Meta, argOverflow), value, p.dropHeadFate(name)).at("x-overflow"))
		case own == value:
			out = append(out, p.queueFinding(q,
				"quorum queue %q sets %s %s, which quorum queues do not support, and %s sets overflow %s, which applies instead (%s): the argument only makes RabbitMQ log a warning. Remove it",
				name, argWritten(q.Meta, argOverflow), value, p.overflowSource(name), eff, overflowRule(q)).at("x-overflow"))
		case eff == value:
			kindName, pol := p.overflowPolicy(name)
			if pol == nil {
				continue
			}
			if _, seen := byPolicy[pol]; !seen {
				order = append(order, pol)
				kinds[pol] = kindName
			}
			byPolicy[pol] = append(byPolicy[pol], name)
		}
	}
	for _, pol := range order {
		qs := byPolicy[pol]
		kindName := kinds[pol]
		out = append(out, p.policyFinding(kindName, pol,
			"%s %q sets overflow %s, which quorum queues do not support, and it applies to %d quorum queue(s) (%s): RabbitMQ applies the policy to them with drop-head instead (it logs a warning), so their publishers are never refused and, when one is full, it drops its oldest messages (dead-lettered where it has a dead-letter exchange). "+
				"Give the quorum queues overflow reject-publish (a policy with apply_to: quorum_queues, or narrow this one's apply_to to classic_queues), or drop-head if that is what you want",
			kind.Kind(kindName).Label(), pol.Name, value, len(qs), queuesList(qs)).at("overflow"))
	}
	return out
}

// dropHeadFate says what becomes of the oldest messages queue name drops
// when it is full: dead-lettered to its dead-letter exchange, or lost.
func (p *Pass) dropHeadFate(name string) string {
	if d := p.dl[name]; d != nil {
		return fmt.Sprintf("its oldest messages are dead-lettered to %s", exchangeLabel(d.Exchange))
	}
	return "its oldest messages are discarded without a trace"
}

// quorumBlockers says, when the fix for argument arg of queue q is to
// change its type (a quorum queue for x-delivery-limit on a classic queue;
// a classic queue for x-max-priority on a quorum queue before 4.3), what
// else of q the new type refuses (adrienKoumgangT__distriqueue's classic
// job.low sets x-delivery-limit and x-max-priority: type: quorum alone
// leaves a queue the broker refuses for x-max-priority; its quorum job.high
// on 3.10 the other way round), and the other way out: remove arg and keep
// the type. "" when the fix is no change of type, or nothing else stands
// in the way.
func (p *Pass) quorumBlockers(q *topology.Queue, arg string) string {
	target := ""
	switch typ := q.TypeOrClassic(); {
	case typ != topology.QueueQuorum && quorumOnlyArg(arg):
		target = topology.QueueQuorum
	case typ == topology.QueueQuorum && arg == argPriority && p.Version.QuorumPriorities() != rmqversion.QuorumStrict:
		target = topology.QueueClassic
	default:
		return ""
	}
	var refused []string
	for _, a := range q.Arguments.Keys() {
		if a != arg && a != "x-queue-type" && p.Version.RefusesQueueArgument(target, a) && !p.Version.RefusesQueueArgument(q.Type, a) {
			refused = append(refused, a)
		}
	}
	if target == topology.QueueQuorum && !q.Durable {
		refused = append(refused, "durable: false")
	}
	if target == topology.QueueQuorum && q.AutoDelete {
		refused = append(refused, "auto_delete: true")
	}
	if len(refused) == 0 {
		return ""
	}
	return fmt.Sprintf("But a %s queue refuses its %s too: to make it one, drop %s as well; or remove %s and keep it a %s queue",
		target, strings.Join(refused, ", "), map[bool]string{true: "it", false: "them"}[len(refused) == 1], arg, q.TypeOrClassic())
}

// quorumOnlyArg reports whether arg is an argument only quorum queues
// take, for which the fix on another type is to make the queue a quorum
// queue.
func quorumOnlyArg(arg string) bool {
	switch arg {
	case "x-delivery-limit", "x-dead-letter-strategy", "x-consumer-timeout", "x-consumer-disconnected-timeout":
		return true
	}
	return strings.HasPrefix(arg, "x-delayed-retry-")
}
