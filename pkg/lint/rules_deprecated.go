package lint

import (
	"cmp"
	"fmt"
	"strings"

	"github.com/mqctl/mqctl/pkg/rmqversion"
	"github.com/mqctl/mqctl/pkg/topology"
)

// deprecatedSetting is a queue argument (and the policy key that stands
// for it) that the target version accepts but ignores or warns about, or
// refuses, on a queue of type qtype (classic when "").
type deprecatedSetting struct {
	arg, key string
	qtype    string
	// applies reports whether the version deprecates the setting, and
	// refused whether it refuses it.
	applies, refused func(rmqversion.Version) bool
	// matches reports whether a value is the deprecated one (nil: any).
	matches func(value any) bool
	// why says what the version does with it, set as a queue argument or
	// (policy) as a policy key; fix what to do instead, given the value set.
	why func(v rmqversion.Version, policy bool) string
	fix func(value string, policy bool) string
}

// reports reports whether MQ503 reports s set to value on version v.
func (s deprecatedSetting) reports(v rmqversion.Version, value any) bool {
	return s.applies(v) && (s.matches == nil || s.matches(value))
}

func deprecatedSettings() []deprecatedSetting {
	return []deprecatedSetting{
		{arg: "x-queue-master-locator", key: "queue-master-locator",
			applies: rmqversion.Version.DeprecatesQueueMasterLocator, refused: rmqversion.Version.RefusesQueueMasterLocator,
			why: func(v rmqversion.Version, policy bool) string {
				switch {
				case v.RefusesQueueMasterLocator() && policy:
					return "RabbitMQ " + v.Line() + " denies the deprecated feature queue_master_locator by default: the broker refuses the policy itself (HTTP 400 \"use of deprecated queue-master-locator argument is not permitted\"), so none of its settings apply to any queue, unless rabbitmq.conf permits the feature"
				case v.RefusesQueueMasterLocator():
					return "RabbitMQ " + v.Line() + " denies the deprecated feature queue_master_locator by default: the broker refuses to declare a queue with it unless rabbitmq.conf permits the feature"
				}
				return "RabbitMQ " + v.Line() + " logs a deprecation warning for it (the deprecated feature queue_master_locator, since 4.0), and 4.3 refuses it unless rabbitmq.conf permits the feature"
			},
			fix: func(value string, policy bool) string {
				leader := "balanced"
				if value == "client-local" {
					leader = "client-local"
				}
				if policy {
					return fmt.Sprintf("Replace it with queue-leader-locator: %s", leader)
				}
				return fmt.Sprintf("Use x-queue-leader-locator: %s instead (queue arguments cannot change in place: mqctl plans a replace of the queue, so make the change while it is empty, or move the setting to a policy, queue-leader-locator)", leader)
			}},
		// The argument x-queue-version 1 is refused on 4.3 (MQ501); the
		// policy key is taken and means nothing there.
		{key: "queue-version",
			applies: func(v rmqversion.Version) bool { return !v.ClassicQueueV1() }, refused: func(rmqversion.Version) bool { return false },
			matches: func(value any) bool { return topology.Normalize(value) == int64(1) },
			why: func(v rmqversion.Version, _ bool) string {
				return "RabbitMQ " + v.Line() + " accepts it and ignores it: classic queues v1 were removed in 4.3, and every classic queue stores its messages in version 2 whatever the policy says"
			},
			fix: func(string, bool) string { return "Remove it from the policy" }},
		{arg: "x-queue-mode", key: "queue-mode",
			applies: rmqversion.Version.IgnoresQueueMode, refused: func(rmqversion.Version) bool { return false },
			why: func(v rmqversion.Version, _ bool) string {
				if !v.ValidatesQueueMode() {
					return "RabbitMQ " + v.Line() + " ignores it (since 3.12 classic queues keep messages on disk with a small in-memory buffer whatever the mode, as lazy queues did), and no longer even checks its value"
				}
				return "RabbitMQ " + v.Line() + " ignores it (since 3.12 classic queues keep messages on disk with a small in-memory buffer whatever the mode, as lazy queues did)"
			},
			fix: func(_ string, policy bool) string {
				if policy {
					return "Remove it from the policy"
				}
				return "Remove it (queue arguments cannot change in place: mqctl plans a replace of the queue, so make the change while it is empty, or move the setting to a policy first)"
			}},
		inMemoryLimit("x-max-in-memory-length", "max-in-memory-length", "messages"),
		inMemoryLimit("x-max-in-memory-bytes", "max-in-memory-bytes", "bytes"),
	}
}

// inMemoryLimit is a quorum queue's in-memory limit (argument arg, policy
// key key) of what: from 4.0 quorum queues keep no messages in memory and
// ignore it (rmqversion IgnoresInMemoryLimits).
func inMemoryLimit(arg, key, what string) deprecatedSetting {
	return deprecatedSetting{arg: arg, key: key, qtype: topology.QueueQuorum,
		applies: rmqversion.Version.IgnoresInMemoryLimits, refused: func(rmqversion.Version) bool { return false },
		why: func(v rmqversion.Version, _ bool) string {
			return fmt.Sprintf("RabbitMQ %s accepts it and ignores it: from 4.0 quorum queues keep no messages in memory, so there are no %s in memory for it to limit, and it bounds nothing", v.Line(), what)
		},
		fix: func(_ string, policy bool) string {
			if policy {
				return "Remove it from the policy"
			}
			return "Remove it the next time the queue is replaced anyway; meanwhile it does no harm (queue arguments cannot change in place: mqctl plans a replace of the queue for it); to bound the queue, set limits.max_length or limits.max_length_bytes"
		}}
}

// MQ503: deprecated queue arguments and policy keys.
func runDeprecated(p *Pass) []Finding {
	var out []Finding
	settings := deprecatedSettings()
	for _, name := range p.queueNames {
		q := p.Vhost.Queues[name]
		for _, s := range settings {
			// Other queue types refuse the classic queues' ones on every
			// version (MQ501).
			if qtype := cmp.Or(s.qtype, topology.QueueClassic); q.Type != qtype {
				continue
			}
			v, ok := q.Arguments[s.arg]
			if s.arg == "" || !ok || !s.reports(p.Version, v) {
				continue
			}
			f := p.queueFinding(q, "%s %q sets %s %v: %s. %s",
				typeLabel(q.Type), name, s.arg, v, s.why(p.Version, false), s.fix(fmt.Sprint(v), false)).at(s.arg)
			out = append(out, p.deprecationFinding(f, s))
		}
	}
	for _, set := range p.policySets() {
		for _, pn := range set.names() {
			pol := set.policies[pn]
			for _, s := range settings {
				v, ok := pol.Definition[s.key]
				if !ok || !s.reports(p.Version, v) {
					continue
				}
				msg := fmt.Sprintf("%s %q sets %s: %v: %s", set.label, pn, s.key, v, s.why(p.Version, true))
				if skipped := p.policySkips(pol, s.key); skipped != "" && !s.refused(p.Version) {
					msg += "; " + skipped
				}
				f := p.policyFinding(set.kind, pol, "%s. %s", msg, s.fix(fmt.Sprint(v), true)).at(s.key)
				out = append(out, p.deprecationFinding(f, s))
			}
		}
	}
	return out
}

func (p *Pass) deprecationFinding(f Finding, s deprecatedSetting) Finding {
	if s.refused(p.Version) {
		return p.raised(f)
	}
	return p.judged(f)
}

// policySkips says which queues policy pol matches but does not apply to
// because of key (their type does not support it on the target version):
// "since quorum queues do not support queue-mode, RabbitMQ does not apply
// the policy at all to the ones it matches (a and b), which lose its other
// settings too"; "" when none.
func (p *Pass) policySkips(pol *topology.Policy, keys ...string) string {
	re := p.policyRegexp(pol.Pattern)
	if re == nil {
		return ""
	}
	byType := map[string][]string{}
	unsupported := map[string][]string{}
	var types []string
	for _, qn := range p.queueNames {
		q := p.Vhost.Queues[qn]
		if !policyAppliesToQueue(pol.ApplyTo, q.Type) || !re.MatchString(qn) {
			continue
		}
		if _, seen := unsupported[q.Type]; !seen {
			var ks []string
			for _, k := range keys {
				if contains(p.Version.UnsupportedPolicyKeys(q.Type), k) {
					ks = append(ks, k)
				}
			}
			unsupported[q.Type] = ks
		}
		if len(unsupported[q.Type]) == 0 {
			continue
		}
		if byType[q.Type] == nil {
			types = append(types, q.Type)
		}
		byType[q.Type] = append(byType[q.Type], qn)
	}
	var parts []string
	for _, t := range types {
		parts = append(parts, fmt.Sprintf("since %ss do not support %s, RabbitMQ does not apply the policy at all to the ones it matches (%s), which lose its other settings too",
			typeLabel(t), strings.Join(unsupported[t], ", "), queuesList(byType[t])))
	}
	return strings.Join(parts, "; ")
}

// MQ703: a regular expression RabbitMQ 4.3.2+ refuses for its length, on
// every target: a file that holds one does not apply there. An access
// list writes one alternative per name, and a long list makes one.
func runPatternTooLong(p *Pass) []Finding {
	var out []Finding
	for _, pt := range rmqversion.Patterns(p.Vhost) {
		if len(pt.Expr) <= rmqversion.MaxPatternBytes {
			continue
		}
		judged := "RabbitMQ 4.3.2 and later refuse it"
		if p.Version.PatternLimit() {
			judged = fmt.Sprintf("RabbitMQ %s refuses it", p.Version.Line())
		}
		out = append(out, Finding{Object: Object{string(pt.Kind), pt.Name}, Pos: pt.Meta.Pos, objMeta: pt.Meta, Message: fmt.Sprintf(
			"%s: the %s regular expression has %d bytes, over the %d RabbitMQ takes: %s (HTTP 400), so the file does not apply there. %s",
			pt.Object, pt.Key, len(pt.Expr), rmqversion.MaxPatternBytes, judged, upperFirst(rmqversion.PatternFix(pt)))})
	}
	return out
}
