package lint

import (
	"fmt"
	"strings"

	"github.com/mqctl/mqctl/pkg/rmqversion"
	"github.com/mqctl/mqctl/pkg/topology"
)

// delayedRetryArgs are the queue arguments of quorum queues' delayed retry
// (RabbitMQ 4.3), in the order messages name them.
var delayedRetryArgs = []string{"x-delayed-retry-type", "x-delayed-retry-min", "x-delayed-retry-max"}

const retryFix = "Set x-delayed-retry-type to all, failed or returned, x-delayed-retry-min to the first wait in milliseconds (a positive whole number) and x-delayed-retry-max, if any, to the longest (at least min): a returned message then waits min(min × failed deliveries, max) ms"

// MQ504: quorum queues' delayed retry set so that it does not do what it
// says. The broker checks none of the queue arguments
// (rabbit_quorum_queue:get_delayed_retry_config/1 at v4.3.5): a type it
// does not know or a missing or bad min leave delayed retry disabled, a bad
// max is min, all without a word. It does check the policy keys (4.3.1+).
// replaceNote is what removing a queue's arguments, or changing its type,
// costs: its queue is replaced (as MQ503's fixes say).
const replaceNote = "queue arguments and type cannot change in place: mqctl plans a replace of the queue, so make the change while it is empty"

func runDelayedRetry(p *Pass) []Finding {
	var out []Finding
	for _, name := range p.queueNames {
		q := p.Vhost.Queues[name]
		var set []string
		for _, a := range delayedRetryArgs {
			if q.Arguments.Has(a) {
				set = append(set, a)
			}
		}
		if len(set) == 0 {
			continue
		}
		qtype := q.Type
		if qtype == "" {
			qtype = topology.QueueClassic
		}
		args := argsWritten(q.Meta, set)
		switch {
		case qtype != topology.QueueQuorum && p.Version.DelayedRetry():
			if p.enabled("MQ501") {
				continue // MQ501 reports what 4.3 refuses
			}
			out = append(out, p.judged(p.queueFinding(q,
				"%s %q sets %s: %s the broker refuses to declare it (PRECONDITION_FAILED invalid arg), delayed retry is for quorum queues only. Declare it with type: quorum, or remove them",
				typeLabel(qtype), name, args, p.onVersion()).at(set...)))
		case qtype != topology.QueueQuorum:
			out = append(out, p.judged(p.queueFinding(q,
				"%s %q sets %s, which RabbitMQ %s stores and ignores: delayed retry arrived in 4.3, for quorum queues only, and 4.3 refuses these arguments on a %s. Remove them, or declare the queue with type: quorum ("+replaceNote+")",
				typeLabel(qtype), name, args, p.Version, typeLabel(qtype)).at(set...)))
		case !p.Version.DelayedRetry() && q.Backoff != nil && p.enabled("MQ203"):
			continue // MQ203 says what retry.backoff does here, and what to write instead
		case !p.Version.DelayedRetry():
			msg := fmt.Sprintf("quorum queue %q sets %s, which RabbitMQ %s stores and ignores: delayed retry arrived in 4.3, and returned messages are redelivered at once here", name, args, p.Version)
			if issues := p.delayedRetryIssues(q); len(issues) > 0 {
				msg += "; on 4.3 it would not work as written either: " + strings.Join(issues, "; ")
			}
			out = append(out, p.judged(p.queueFinding(q, "%s. Remove them ("+replaceNote+"), or target RabbitMQ 4.3", msg).at(set...)))
		default:
			if issues := p.delayedRetryIssues(q); len(issues) > 0 {
				out = append(out, p.judged(p.queueFinding(q,
					"quorum queue %q: %s. RabbitMQ declares the queue without a word, so its retries do not wait as written. %s",
					name, strings.Join(issues, "; "), retryFix)))
			}
		}
	}
	return append(out, p.delayedRetryPolicies()...)
}

// delayedRetryIssues explains what is wrong with quorum queue q's
// delayed retry as RabbitMQ 4.3 reads it: its effective arguments (its own,
// merged with the policies that apply to it, see route QueueArgs).
func (p *Pass) delayedRetryIssues(q *topology.Queue) []string {
	eff := p.qargs[q.Name]
	tv, hasType := eff["x-delayed-retry-type"]
	minv, hasMin := eff["x-delayed-retry-min"]
	maxv, hasMax := eff["x-delayed-retry-max"]
	typ, isString := tv.(string)
	active := false
	var issues []string
	switch {
	case !hasType:
		issues = append(issues, "without x-delayed-retry-type (all, failed or returned: which returns wait) delayed retry stays disabled")
	case !isString || !rmqversion.KnownRetryType(typ):
		issues = append(issues, fmt.Sprintf("x-delayed-retry-type %s is not one of disabled, all, failed or returned: the broker takes it, and delayed retry stays disabled", topology.Quoted(tv)))
	case typ != "disabled":
		active = true
	}
	minMS, minOK := topology.PositiveInt(minv)
	switch {
	case active && !hasMin:
		issues = append(issues, fmt.Sprintf("x-delayed-retry-type %s without x-delayed-retry-min: the broker leaves delayed retry disabled", typ))
	case hasMin && !minOK:
		issues = append(issues, fmt.Sprintf("x-delayed-retry-min %s is not a positive whole number of milliseconds: the broker leaves delayed retry disabled", topology.Quoted(minv)))
	}
	if hasMax {
		maxMS, maxOK := topology.PositiveInt(maxv)
		switch {
		case !maxOK && minOK:
			issues = append(issues, fmt.Sprintf("x-delayed-retry-max %s is not a positive whole number of milliseconds: the broker uses min (%d ms) as max", topology.Quoted(maxv), minMS))
		case !maxOK:
			issues = append(issues, fmt.Sprintf("x-delayed-retry-max %s is not a positive whole number of milliseconds", topology.Quoted(maxv)))
		case minOK && maxMS < minMS:
			issues = append(issues, fmt.Sprintf("x-delayed-retry-max %d is below x-delayed-retry-min %d: every retry waits %d ms, min never applies and the wait never grows", maxMS, minMS, maxMS))
		}
	}
	return issues
}

// delayedRetryPolicies reports policies and operator policies with
// delayed-retry-* keys that the target refuses: all of them before 4.3.1,
// and values the broker's validation refuses (rabbit_quorum_queue
// validate_policy/1 at v4.3.5, whose words the messages quote).
func (p *Pass) delayedRetryPolicies() []Finding {
	var out []Finding
	for _, set := range p.policySets() {
		for _, name := range set.names() {
			pol := set.policies[name]
			var keys []string
			for _, a := range delayedRetryArgs {
				if k := strings.TrimPrefix(a, "x-"); pol.Definition.Has(k) {
					keys = append(keys, k)
				}
			}
			if len(keys) == 0 {
				continue
			}
			if !p.Version.DelayedRetryPolicyKeys() {
				why := fmt.Sprintf("RabbitMQ %s does not know them (delayed retry arrived in 4.3; its policy keys work from 4.3.1)", p.Version)
				fix := "Remove them"
				if p.Version.DelayedRetry() {
					why = fmt.Sprintf("RabbitMQ %s refuses them in policy definitions (a bug fixed in 4.3.1)", p.Version)
					fix = "Upgrade to 4.3.1 or later, or set x-delayed-retry-* as arguments of the quorum queues"
				}
				out = append(out, p.raised(p.policyFinding(set.kind, pol,
					"%s %q sets %s: %s, so the broker refuses the whole %s (HTTP 400 \"Validation failed\") and none of its settings take effect. %s",
					set.label, name, strings.Join(keys, ", "), why, set.label, fix).at(keys...)))
				continue
			}
			if key, refusal := rmqversion.DelayedRetryPolicyRefusal(pol.Definition); refusal != "" {
				out = append(out, p.judged(p.policyFinding(set.kind, pol,
					"%s %q: RabbitMQ refuses it (HTTP 400 \"Validation failed\": %s), so none of its settings take effect. %s",
					set.label, name, refusal, upperFirst(rmqversion.DelayedRetryPolicyFix)).at(key)))
			}
		}
	}
	return out
}
