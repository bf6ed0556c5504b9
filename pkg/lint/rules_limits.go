package lint

import (
	"fmt"
	"strings"

	"github.com/mqctl/mqctl/pkg/kind"
	"github.com/mqctl/mqctl/pkg/topology"
)

// MQ301: a queue that can grow without bound.
func runUnbounded(p *Pass) []Finding {
	var out []Finding
	for _, name := range p.queueNames {
		q := p.Vhost.Queues[name]
		a := p.qargs[name]
		if q.Type == topology.QueueStream {
			// A stream bounded by x-max-length or x-message-ttl is refused
			// (MQ501, whose advice is retention): one cause, one finding.
			if a.Has(argMaxAge) || a.Has(argMaxBytes) || q.Arguments.Has(argMaxLen) || q.Arguments.Has(argTTL) {
				continue
			}
			// A policy's max-age written as a list leaves it no age
			// (MQ507, which names the stream and the fix).
			if p.maxAgeListReported(name) {
				continue
			}
			out = append(out, p.queueFinding(q,
				"stream %q has no retention limit (x-max-age or x-max-length-bytes, by argument or policy): it keeps every message forever and grows until the node's disk alarm blocks all publishers. "+
					"Set x-max-age (for example 7D) or limits.max_length_bytes",
				name))
			continue
		}
		if a.Has(argMaxLen) || a.Has(argMaxBytes) || a.Has(argTTL) {
			continue
		}
		if p.dlq[name] || p.isNamedDLQ(name) || len(p.collects[name]) > 0 {
			what := "dead letters"
			if len(p.collects[name]) > 0 && !p.dlq[name] {
				what = "unroutable messages"
			}
			out = append(out, p.queueFinding(q,
				"queue %q collects %s and has no length limit and no message TTL (by argument or policy): what nobody removes piles up until a memory or disk alarm blocks every publisher on the node. "+
					"Keep them for a while that suits you (limits.message_ttl, e.g. 7d) or up to a number (limits.max_length), or %s",
				name, what, p.policyHint(name, "message-ttl or max-length", "cover it with a policy")))
			continue
		}
		out = append(out, p.queueFinding(q,
			"queue %q has no length limit and no message TTL (by argument or policy): when its consumers stop, it grows until a memory or disk alarm blocks every publisher on the node. "+
				"Set limits.max_length (with overflow: reject-publish) or limits.message_ttl, or %s",
			name, p.policyHint(name, "max-length", "cover it with a max-length policy")))
	}
	return out
}

// MQ302: a length limit that silently drops the oldest messages. A queue
// MQ101 asks for a dead-letter exchange is left to MQ101, whose message
// names the overflow too: one cause, one finding.
func runSilentOverflow(p *Pass) []Finding {
	var out []Finding
	for _, name := range p.queueNames {
		q := p.Vhost.Queues[name]
		a := p.qargs[name]
		if q.Type == topology.QueueStream || p.dl[name] != nil || !(a.Has(argMaxLen) || a.Has(argMaxBytes)) {
			continue
		}
		overflow, set := a.String(argOverflow)
		if set && overflow != "drop-head" {
			continue
		}
		// The queue's own overflow, which a policy overrides: not the
		// file's choice for this queue, whatever the queue is for.
		if own, ownSet := q.Arguments.String(argOverflow); ownSet && own != "drop-head" && set {
			out = append(out, p.queueFinding(q,
				"queue %q sets %s %s, but %s sets overflow drop-head, which applies instead (%s): when it is full RabbitMQ discards its oldest messages without a trace, as the queue was written not to. "+
					"Remove overflow from that policy or make it reject-publish, or exclude the queue from its pattern",
				name, argWritten(q.Meta, argOverflow), own, p.overflowSource(name), overflowRule(q)).at(argOverflow))
			continue
		}
		if p.enabled("MQ101") && p.needsDLX(name) {
			continue
		}
		// A DLQ or a collector of unroutable messages with a length limit
		// keeps the newest (drop-head) or the oldest (reject-publish): a
		// retention choice, and no DLQ of its own helps.
		if p.dlq[name] || p.isNamedDLQ(name) || len(p.collects[name]) > 0 {
			continue
		}
		how := "x-overflow drop-head"
		if q.Arguments.Has(argOverflow) {
			how = argWritten(q.Meta, argOverflow) + " drop-head"
		}
		if !set {
			how = "the default overflow behaviour (drop-head)"
		}
		out = append(out, p.queueFinding(q,
			"queue %q has a length limit with %s and no dead-letter exchange: when it is full RabbitMQ discards its oldest messages without a trace. "+
				"Set overflow: reject-publish so publishers get a nack (with publisher confirms), or add a dead-letter exchange to keep what is dropped",
			name, how))
	}
	return out
}

// overflowSource names the policy whose overflow applies to queue name:
// its operator policy's, when that sets one (it wins from 3.12.7), else
// its policy's.
func (p *Pass) overflowSource(name string) string {
	kindName, pol := p.overflowPolicy(name)
	if pol == nil {
		return "a policy"
	}
	return fmt.Sprintf("%s %q", kind.Kind(kindName).Label(), pol.Name)
}

// overflowPolicy returns the kind and the policy whose overflow applies to
// queue name, as overflowSource names it; nil when neither sets one.
func (p *Pass) overflowPolicy(name string) (string, *topology.Policy) {
	pol, op := p.Sim.QueuePolicies(name)
	if o := p.Vhost.OperatorPolicies[op]; op != "" && o != nil && o.Definition.Has("overflow") && p.Version.OperatorPolicyOverflow() {
		return KindOperatorPolicy, o
	}
	if q := p.Vhost.Policies[pol]; pol != "" && q != nil && q.Definition.Has("overflow") {
		return KindPolicy, q
	}
	return "", nil
}

// overflowRule says why a policy's overflow applies over queue q's own.
func overflowRule(q *topology.Queue) string {
	if q.Type == topology.QueueQuorum {
		return "a quorum queue takes overflow from its policies over its own argument"
	}
	return "the policy's overflow applies over the queue's own"
}

// MQ304: a vhost whose own max-queues leaves no room beyond the queues
// the file declares in it. RabbitMQ takes the limit whatever the vhost
// holds (mqctl writes a tightened limit after the queues), and then
// refuses every queue declaration there: the next replace of one of the
// file's queues deletes it and cannot declare it again, applications
// cannot declare any (server-named reply queues included), and the next
// apply that changes anything in the vhost cannot take its lock, a queue
// of the vhost (mqctl.lock; vhost_queue_limit.txtar in cmd/mqctl measures
// it on every version).
func runVhostQueueLimit(p *Pass) []Finding {
	var out []Finding
	v := p.Vhost
	for _, n := range v.Items.Names(kind.VhostLimits) {
		it := v.Items.Get(kind.VhostLimits, n)
		max, ok := it.Settings.Int("max-queues")
		if !ok || max < 0 || int(max) > len(v.Queues) {
			continue
		}
		what := "RabbitMQ takes the limit over the queues it holds, and then refuses every queue declaration in the vhost, so a later replace of one of these queues deletes it and cannot declare it again, applications cannot declare any (server-named reply queues included), and the next apply that changes anything here cannot take its lock (mqctl.lock, a queue of the vhost)"
		if int(max) == len(v.Queues) {
			what = "that leaves no room for another: applications cannot declare any queue there (server-named reply queues included), a replace cannot declare its queue again, and the next apply that changes anything here cannot take its lock (mqctl.lock, a queue of the vhost while the apply runs)"
		}
		f := itemFinding(it,
			"vhost %q limits itself to %d queues (max-queues), and the file declares %d there (%s): %s. "+
				"Raise max-queues to at least %d (the file's queues and the apply's lock queue), with room for the queues applications declare, or declare fewer queues",
			v.Name, max, len(v.Queues), queuesList(p.queueNames), what, len(v.Queues)+1)
		out = append(out, f)
	}
	return out
}

// policyHint is the advice to set key by a policy for queue name: into
// the policy that applies to it, where one does (a queue takes one
// policy: a new one would replace it, with its settings), else otherwise.
// A policy that matches the queue but applies to nothing as it stands
// (the target version refuses it: ha-* keys from 4.0, a key no version
// takes) or not to this queue (a key its type does not support) is named
// with what to fix in it: fixed, it is the one that applies, and a new
// policy would not.
func (p *Pass) policyHint(name, key, otherwise string) string {
	if pol, _ := p.Sim.QueuePolicies(name); pol != "" {
		return fmt.Sprintf("add %s to policy %q, which applies to it: a queue takes one policy, and another would replace it with its settings", key, pol)
	}
	q := p.Vhost.Queues[name]
	if q == nil {
		return otherwise
	}
	pol := p.matchingPolicy(kind.Policy, p.Vhost.Policies, q, true)
	if pol == nil {
		return otherwise
	}
	var fixes []string
	if p.Version.RefusesPolicy(kind.Policy, pol.Definition) {
		fixes = append(fixes, fmt.Sprintf("as it stands RabbitMQ %s refuses it, so it applies to no queue: remove what it refuses (its own finding says what)", p.Version.Line()))
	}
	var unsupported []string
	for _, k := range p.Version.UnsupportedPolicyKeys(q.TypeOrClassic()) {
		if pol.Definition.Has(k) {
			unsupported = append(unsupported, k)
		}
	}
	if len(unsupported) > 0 {
		fixes = append(fixes, fmt.Sprintf("remove %s from it, which %ss do not support: with it RabbitMQ does not apply the policy to this queue", strings.Join(unsupported, ", "), typeLabel(q.Type)))
	}
	if len(fixes) == 0 {
		return otherwise
	}
	what := fmt.Sprintf("add %s to policy %q", key, pol.Name)
	if pol.Definition.Has(key) {
		what = fmt.Sprintf("fix policy %q, which sets %s", pol.Name, key)
	}
	return fmt.Sprintf("%s: it matches the queue, but %s", what, strings.Join(fixes, "; and "))
}
