package lint

import (
	"fmt"
	"slices"
	"strings"

	"github.com/mqctl/mqctl/pkg/kind"
	"github.com/mqctl/mqctl/pkg/loader"
	"github.com/mqctl/mqctl/pkg/route"
	"github.com/mqctl/mqctl/pkg/topology"
)

// MQ204: a policy or operator policy that overrides, or turns off, the
// delayed retry a quorum queue's own arguments ask for (retry.backoff, or
// x-delayed-retry-* written raw). RabbitMQ 4.3 resolves each key on its
// own (rabbit_quorum_queue get_delayed_retry_config/1 and
// merge_policy_value/3 at v4.3.5; measured on 4.3.6, the queue's
// delayed_retry in the management API): the type comes from the operator
// policy, else the policy, else the queue (a policy's disabled turns it
// off); min is the smaller of the queue's and of the larger of the
// policy's and the operator policy's; max is the smallest of the three.
// route.Simulator resolves them so; this rule says which policy changed
// what the file asked for, and the fix for the case.
func runRetryOverridden(p *Pass) []Finding {
	if !p.Version.DelayedRetry() {
		return nil // MQ203 and MQ504 say what these versions do with it
	}
	var out []Finding
	for _, name := range p.queueNames {
		q := p.Vhost.Queues[name]
		if q.Type != topology.QueueQuorum {
			continue
		}
		own, ok := route.ResolveDelayedRetry(q.Arguments)
		if !ok {
			continue // the file asks for none (or for one that does not work: MQ504)
		}
		eff, effOK := p.Sim.DelayedRetry(name)
		if effOK && eff.Type == own.Type && eff.MinMS == own.MinMS && eff.MaxMS == own.MaxMS {
			continue
		}
		overriders := p.retryOverriders(q, own)
		if len(overriders) == 0 {
			continue
		}
		if effOK && eff.MinMS == own.MinMS && eff.MaxMS == own.MaxMS && eff.Type == route.RetryReturned && p.enabled("MQ203") {
			continue // MQ203 reports the returned type, naming the policy that sets it
		}
		out = append(out, p.retryOverriddenFinding(q, own, eff, effOK, overriders))
	}
	return out
}

// retryOverrider is a policy (or operator policy) whose delayed-retry keys
// change what a queue's own arguments ask for.
type retryOverrider struct {
	kind string // KindPolicy or KindOperatorPolicy
	pol  *topology.Policy
	keys []string // the keys that change it, in delayedRetryArgs order
}

func (o retryOverrider) label() string { return kind.Kind(o.kind).Label() }

// retryOverriders returns the policy and the operator policy in force on
// quorum queue q whose delayed-retry keys change its own delayed retry
// own, each with the keys that do: every one of them has to go for the
// queue's own to apply. A policy's type that the operator policy's
// replaces with the queue's own is not one; nor is a min or max at or
// above the queue's (the smaller applies).
func (p *Pass) retryOverriders(q *topology.Queue, own route.DelayedRetry) []retryOverrider {
	pol, op := p.Sim.QueuePolicyObjects(q.Name)
	opSets := func(key string) (any, bool) {
		if op == nil || !p.Version.OperatorPolicyKey(key) {
			return nil, false
		}
		v, ok := op.Definition[key]
		return v, ok
	}
	changes := func(key string, v any, operator bool) bool {
		switch key {
		case "delayed-retry-type":
			t, _ := v.(string)
			if t == own.Type {
				return false
			}
			if operator {
				return true
			}
			ov, opSet := opSets(key)
			ot, _ := ov.(string)
			return !opSet || ot != own.Type
		case "delayed-retry-min":
			n, ok := topology.PositiveInt(v)
			return ok && n < own.MinMS
		case "delayed-retry-max":
			n, ok := topology.PositiveInt(v)
			if own.MaxIsMin {
				return ok && n != own.MinMS
			}
			return ok && n < own.MaxMS
		}
		return false
	}
	var out []retryOverrider
	for _, c := range []struct {
		kind string
		pol  *topology.Policy
	}{{KindPolicy, pol}, {KindOperatorPolicy, op}} {
		if c.pol == nil {
			continue
		}
		operator := c.kind == KindOperatorPolicy
		o := retryOverrider{kind: c.kind, pol: c.pol}
		for _, a := range delayedRetryArgs {
			key := strings.TrimPrefix(a, "x-")
			v, set := c.pol.Definition[key]
			if !set || operator && !p.Version.OperatorPolicyKey(key) {
				continue
			}
			if changes(key, topology.Normalize(v), operator) {
				o.keys = append(o.keys, key)
			}
		}
		if len(o.keys) > 0 {
			out = append(out, o)
		}
	}
	return out
}

// retryOverriddenFinding is MQ204's finding for quorum queue q, whose own
// delayed retry own the overriders change into eff (effOK false: off).
func (p *Pass) retryOverriddenFinding(q *topology.Queue, own, eff route.DelayedRetry, effOK bool, overriders []retryOverrider) Finding {
	written := "x-delayed-retry-*"
	if q.Backoff != nil {
		written = "retry.backoff"
	}
	var who []string
	rules := map[string]bool{}
	for _, o := range overriders {
		var sets []string
		for _, k := range o.keys {
			sets = append(sets, fmt.Sprintf("%s %s", k, retryKeyValue(k, o.pol.Definition[k])))
			rules[k] = true
		}
		who = append(who, fmt.Sprintf("%s %q (%s) sets %s", o.label(), o.pol.Name, o.pol.Meta.PosOf(o.keys[0]), strings.Join(sets, ", ")))
	}
	var why []string
	if rules["delayed-retry-type"] {
		why = append(why, "a policy's delayed-retry-type applies over the queue's own, an operator policy's over both")
	}
	if rules["delayed-retry-min"] {
		why = append(why, "the smaller delayed-retry-min applies, a policy's or the queue's, where an operator policy's raises the policy's")
	}
	if rules["delayed-retry-max"] {
		why = append(why, "the smallest delayed-retry-max applies, where the queue sets none too")
	}
	effect := p.retryEffect(q, own, eff, effOK)
	return p.warned(p.queueFinding(q,
		"quorum queue %q asks for delayed retry (%s: %s, waiting %s), but %s (%s): %s. %s",
		q.Name, written, own.Type, waitSteps(own.MinMS, own.MaxMS, 3), strings.Join(who, ", and "), strings.Join(why, "; "), effect,
		p.retryOverrideFix(q, own, overriders)).at("x-delayed-retry-type", "x-delayed-retry-min"))
}

// retryKeyValue renders a delayed-retry policy value: a type as it is, a
// delay as a duration.
func retryKeyValue(key string, v any) string {
	if key == "delayed-retry-type" {
		return fmt.Sprint(v)
	}
	if n, ok := topology.PositiveInt(v); ok {
		return loader.FormatDuration(n)
	}
	return topology.Quoted(v)
}

// retryEffect says what quorum queue q's retries do with the policies'
// delayed retry eff (effOK false: off) in place of its own.
func (p *Pass) retryEffect(q *topology.Queue, own, eff route.DelayedRetry, effOK bool) string {
	if !effOK {
		burst := "a message its consumer rejects is redelivered at once, again and again"
		if limit, limited := p.Sim.DeliveryLimit(q.Name); limited {
			burst = fmt.Sprintf("a message its consumer rejects is redelivered at once, so its %d attempts are spent in a burst", limit+1)
		}
		return "its delayed retry is off: " + burst
	}
	var parts []string
	if eff.Type != own.Type {
		parts = append(parts, "the returns that wait are "+retryTypeReturns(eff.Type)+", not "+retryTypeReturns(own.Type))
	}
	if eff.MinMS != own.MinMS || eff.MaxMS != own.MaxMS {
		parts = append(parts, fmt.Sprintf("a retry waits %s, not %s", waitSteps(eff.MinMS, eff.MaxMS, 3), waitSteps(own.MinMS, own.MaxMS, 3)))
	}
	return "its retries do not wait as the file says: " + strings.Join(parts, ", and ")
}

// retryTypeReturns says which returns a delayed retry type delays.
func retryTypeReturns(t string) string {
	switch t {
	case route.RetryAll:
		return "all of them (" + t + ")"
	case route.RetryFailed:
		return "failed deliveries alone (" + t + ": basic.reject with requeue, a consumer gone)"
	case route.RetryReturned:
		return "the other returns alone (" + t + ": basic.nack with requeue, basic.recover, a consumer timeout), with a wait that never grows"
	}
	return t
}

// retryOverrideFix is the fix for quorum queue q's delayed retry own,
// changed by overriders: per policy, remove it where it does nothing
// else, remove its keys where they are meant for this queue alone,
// otherwise leave the queue out of its pattern; or keep the policies and
// make the retries wait in delay queues, which no delayed-retry key
// changes.
func (p *Pass) retryOverrideFix(q *topology.Queue, own route.DelayedRetry, overriders []retryOverrider) string {
	var fixes []string
	for _, o := range overriders {
		others := p.policyQueues(o, q.Name)
		var rest []string
		for _, k := range o.pol.Definition.Keys() {
			if !slices.Contains(o.keys, k) {
				rest = append(rest, k)
			}
		}
		keys := strings.Join(o.keys, " and ")
		switch {
		case len(others) == 0 && len(rest) == 0:
			fixes = append(fixes, fmt.Sprintf("delete %s %q, which sets nothing else and applies to no other queue of the file", o.label(), o.pol.Name))
		case len(others) == 0:
			fixes = append(fixes, fmt.Sprintf("remove %s from %s %q (its other settings, %s, stay in force)", keys, o.label(), o.pol.Name, strings.Join(rest, ", ")))
		default:
			lose := ""
			if len(rest) > 0 {
				lose = fmt.Sprintf(" (%q then takes no %s from it either)", q.Name, strings.Join(rest, ", "))
			}
			fixes = append(fixes, fmt.Sprintf("narrow %s %q's pattern %q so that it leaves %q out%s, or remove %s from it if %s do without them too",
				o.label(), o.pol.Name, o.pol.Pattern, q.Name, lose, keys, queuesList(others)))
		}
	}
	steps := []string{loader.FormatDuration(own.MinMS)}
	if own.MaxMS > own.MinMS {
		steps = append(steps, loader.FormatDuration(own.MaxMS))
	}
	return upperFirst(strings.Join(fixes, "; and ")) + fmt.Sprintf(". Or, to keep the policies as they are, make %q's retries wait in delay queues (retry: {delays: [%s]}, one queue per tier; the consumer publishes a failed message to one and acknowledges it), which no delayed-retry policy key changes",
		q.Name, strings.Join(steps, ", "))
}

// policyQueues returns the file's queues, but the one named but, on which
// o's policy is in force.
func (p *Pass) policyQueues(o retryOverrider, but string) []string {
	var out []string
	for _, name := range p.queueNames {
		if name == but {
			continue
		}
		pol, op := p.Sim.QueuePolicyObjects(name)
		if o.kind == KindPolicy && pol == o.pol || o.kind == KindOperatorPolicy && op == o.pol {
			out = append(out, name)
		}
	}
	return out
}
