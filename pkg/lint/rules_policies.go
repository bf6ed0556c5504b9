package lint

import (
	"fmt"
	"sort"
	"strings"

	"github.com/mqctl/mqctl/pkg/kind"
	"github.com/mqctl/mqctl/pkg/topology"
)

// policySet is the policies or the operator policies of the vhost.
type policySet struct {
	kind     string // KindPolicy or KindOperatorPolicy
	label    string // "policy" or "operator policy"
	policies map[string]*topology.Policy
}

func (p *Pass) policySets() []policySet {
	var out []policySet
	for _, k := range kind.PolicyKinds() {
		out = append(out, policySet{string(k), k.Label(), p.Vhost.PoliciesOf(k)})
	}
	return out
}

func (s policySet) names() []string {
	names := make([]string, 0, len(s.policies))
	for n := range s.policies {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// exchangeKeys are the policy keys that act on exchanges.
var exchangeKeys = map[string]bool{"alternate-exchange": true, "federation-upstream": true, "federation-upstream-set": true}

// unsupportedKey returns the first key of pol that queue type qtype does
// not support on the target version ("" when none): RabbitMQ then does not
// apply pol to such a queue at all.
func (p *Pass) unsupportedKey(pol *topology.Policy, qtype string) string {
	for _, k := range p.Version.UnsupportedPolicyKeys(qtype) {
		if pol.Definition.Has(k) {
			return k
		}
	}
	return ""
}

// policyMatches reports whether pol would apply to queue q were it the only
// policy: apply_to, pattern, and the keys q's type supports.
func (p *Pass) policyMatches(pol *topology.Policy, q *topology.Queue) bool {
	if !policyAppliesToQueue(pol.ApplyTo, q.Type) {
		return false
	}
	re := p.policyRegexp(pol.Pattern)
	return re != nil && re.MatchString(q.Name) && p.unsupportedKey(pol, q.Type) == ""
}

// policyWinner returns the policy of set that applies to queue q.
func (p *Pass) policyWinner(set policySet, q string) string {
	pol, op := p.Sim.QueuePolicies(q)
	if set.kind == KindOperatorPolicy {
		return op
	}
	return pol
}

// MQ303: a policy shadowed everywhere it matches by one of higher
// priority. RabbitMQ applies one policy (and one operator policy) to an
// object, the matching one with the highest priority.
func runShadowedPolicy(p *Pass) []Finding {
	var out []Finding
	for _, set := range p.policySets() {
		for _, name := range set.names() {
			pol := set.policies[name]
			if p.policyRegexp(pol.Pattern) == nil {
				continue // the simulator reports the pattern it cannot read
			}
			if f, ok := p.shadowed(set, pol); ok {
				out = append(out, f)
			}
		}
	}
	return out
}

// MQ305: two policies of equal priority that RabbitMQ chooses between.
func runPolicyTie(p *Pass) []Finding { return p.policyTies() }

// policyTies reports two policies (or operator policies) of equal
// priority, the highest among those that match a queue or exchange, that
// set different things: RabbitMQ applies one policy per object, and which
// of the two is not defined (rabbit_policy:match_all/3 at v4.3.5 sorts the
// matching policies by priority alone, in the order the metadata store
// lists them), so the object may run with the settings of either. One
// finding per pair, on the first by name, naming the objects.
func (p *Pass) policyTies() []Finding {
	type pair struct{ a, b string }
	var out []Finding
	for _, set := range p.policySets() {
		names := set.names()
		objs := map[pair][]string{}
		var order []pair
		note := func(obj string, top []string) {
			if len(top) < 2 {
				return
			}
			for _, other := range top[1:] {
				k := pair{top[0], other}
				if set.policies[k.a].Definition.Canonical() == set.policies[k.b].Definition.Canonical() {
					continue
				}
				if _, seen := objs[k]; !seen {
					order = append(order, k)
				}
				objs[k] = append(objs[k], obj)
			}
		}
		for _, qn := range p.queueNames {
			q := p.Vhost.Queues[qn]
			note(fmt.Sprintf("queue %s", qn), p.topPolicies(set, names, func(pol *topology.Policy) bool { return p.policyMatches(pol, q) }))
		}
		if set.kind == KindPolicy {
			for _, xn := range p.exchangeNames {
				note(fmt.Sprintf("exchange %s", xn), p.topPolicies(set, names, func(pol *topology.Policy) bool {
					re := p.policyRegexp(pol.Pattern)
					return (pol.ApplyTo == "exchanges" || pol.AppliesTo() == "all") && re != nil && re.MatchString(xn)
				}))
			}
		}
		for _, k := range order {
			a, b := set.policies[k.a], set.policies[k.b]
			out = append(out, p.policyFinding(set.kind, a,
				"%s %q and %s %q both match %s with priority %d, the highest there: RabbitMQ applies one %s per queue or exchange, and which of the two is not defined (it can change when the broker restarts or the policies are written again), so what they both match runs with the settings of one or the other (%q: %s; %q: %s). "+
					"Give them different priorities (the higher applies), merge them into one, or narrow a pattern so that they no longer overlap",
				set.label, a.Name, set.label, b.Name, queuesList(objs[k]), a.Priority, set.label, a.Name, a.Definition.Canonical(), b.Name, b.Definition.Canonical()))
		}
	}
	return out
}

// topPolicies are the policies of set (names, sorted) that match an object
// (matches) with the highest priority among those that do.
func (p *Pass) topPolicies(set policySet, names []string, matches func(*topology.Policy) bool) []string {
	var top []string
	best := 0
	for _, name := range names {
		pol := set.policies[name]
		if p.policyRegexp(pol.Pattern) == nil || !matches(pol) {
			continue
		}
		switch {
		case len(top) == 0 || pol.Priority > best:
			top, best = []string{name}, pol.Priority
		case pol.Priority == best:
			top = append(top, name)
		}
	}
	return top
}

// shadowed builds the MQ303 finding for pol when every object it matches
// takes a policy of strictly higher priority (a tie is RabbitMQ's choice).
func (p *Pass) shadowed(set policySet, pol *topology.Policy) (Finding, bool) {
	queueKeys, exchKeys := false, false
	for k := range pol.Definition {
		if exchangeKeys[k] {
			exchKeys = true
			if k != "alternate-exchange" {
				queueKeys = true // federation applies to queues too
			}
		} else {
			queueKeys = true
		}
	}
	// winners: the policy that applies instead -> the objects where it does.
	winners := map[string][]string{}
	matched := 0
	shadow := func(obj, winner string) bool {
		w := set.policies[winner]
		if winner == pol.Name || w == nil || w.Priority <= pol.Priority {
			return false
		}
		matched++
		winners[winner] = append(winners[winner], obj)
		return true
	}
	if queueKeys && pol.ApplyTo != "exchanges" {
		for _, qn := range p.queueNames {
			if !p.policyMatches(pol, p.Vhost.Queues[qn]) {
				continue
			}
			if !shadow(qn, p.policyWinner(set, qn)) {
				return Finding{}, false
			}
		}
	}
	if set.kind == KindPolicy && (pol.ApplyTo == "exchanges" || pol.AppliesTo() == "all" && exchKeys) {
		re := p.policyRegexp(pol.Pattern)
		for _, xn := range p.exchangeNames {
			if !re.MatchString(xn) {
				continue
			}
			if !shadow("exchange "+xn, p.Sim.ExchangePolicy(xn)) {
				return Finding{}, false
			}
		}
	}
	if matched == 0 {
		return Finding{}, false
	}
	names := make([]string, 0, len(winners))
	for w := range winners {
		names = append(names, w)
	}
	sort.Slice(names, func(i, j int) bool {
		if a, b := set.policies[names[i]].Priority, set.policies[names[j]].Priority; a != b {
			return a > b
		}
		return names[i] < names[j]
	})
	var instead []string
	top := pol.Priority
	for _, w := range names {
		wp := set.policies[w]
		instead = append(instead, fmt.Sprintf("%s %q (priority %d) on %s", set.label, w, wp.Priority, queuesList(winners[w])))
		if wp.Priority > top {
			top = wp.Priority
		}
	}
	what := "the queues it matches"
	if matched == 1 {
		what = "the one queue it matches"
	}
	settings := strings.Join(pol.Definition.Keys(), ", ")
	f := p.policyFinding(set.kind, pol,
		"%s %q never applies %s: everything it matches gets a %s of higher priority instead — %s — and RabbitMQ applies one %s per queue or exchange, so its settings (%s) take effect nowhere. "+
			"Give it a priority above %d, merge its settings into %s, or narrow the other pattern so that it leaves %s to this one",
		set.label, pol.Name, p.onVersion(), set.label, strings.Join(instead, "; "), set.label, settings,
		top, quoteJoin(names), what)
	return p.judged(f), true
}

// quoteJoin renders names as "a", "b" and "c".
func quoteJoin(names []string) string {
	q := make([]string, len(names))
	for i, n := range names {
		q[i] = fmt.Sprintf("%q", n)
	}
	return joinOr(q)
}
