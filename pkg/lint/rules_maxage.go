package lint

import (
	"github.com/mqctl/mqctl/pkg/rmqversion"
	"github.com/mqctl/mqctl/pkg/topology"
)

// MQ507: a policy whose max-age is a list (["7", "D"]) rather than one
// string. Every version takes the policy, whose check reads the list as
// its text joined, and no stream reads an age from it
// (rabbit_stream_queue:max_age/1): before 3.13.1 the node's stream
// retention crashes on it until the node shuts down, so it is an error
// there, which plan refuses (rmqversion.ListMaxAgeStopsNode); from 3.13.1
// nothing is trimmed by age, a warning. Operator policies take no max-age
// (MQ501 reports the key).
func runMaxAgeList(p *Pass) []Finding {
	var out []Finding
	for _, name := range (policySet{policies: p.Vhost.Policies}).names() {
		pol := p.Vhost.Policies[name]
		val, ok := pol.Definition["max-age"]
		if !ok || !rmqversion.ListMaxAge(val) {
			continue
		}
		fix, _ := rmqversion.MaxAgeListFix(val)
		where := "no stream of the file yet"
		if streams := p.streamsUnder(pol); len(streams) > 0 {
			where = queuesList(streams) + " here"
		}
		refused := ""
		if p.Version.ListMaxAgeStopsNode() {
			// What plan does: it refuses to declare the policy; of a
			// broker that already holds it as written (plan declares
			// nothing then) it says the harm is in force, to fix at once
			// (engine's held-refusal note).
			refused = " Plan refuses to declare it; where the broker already holds it, plan says it is in force and to fix it at once."
		}
		f := p.judged(p.policyFinding(KindPolicy, pol,
			"policy %q sets max-age %s, a list: RabbitMQ %s takes the policy, but %s. It applies to %s.%s %s",
			name, rmqversion.ListText(val), p.Version, p.Version.ListMaxAgeHarm(), where, refused, upperFirst(fix)).at("max-age"))
		if p.Version.ListMaxAgeStopsNode() {
			f = p.raised(f)
		}
		out = append(out, f)
	}
	return out
}

// streamsUnder names the streams of the vhost to which policy pol applies
// (the simulator's answer): "stream log".
func (p *Pass) streamsUnder(pol *topology.Policy) []string {
	var out []string
	for _, name := range p.queueNames {
		q := p.Vhost.Queues[name]
		if q.Type != topology.QueueStream {
			continue
		}
		if applied, _ := p.Sim.QueuePolicyObjects(name); applied == pol {
			out = append(out, "stream "+name)
		}
	}
	return out
}

// maxAgeListReported reports whether MQ507 reports the policy that gives
// stream name a max-age written as a list, which leaves it no age.
func (p *Pass) maxAgeListReported(name string) bool {
	pol, _ := p.Sim.QueuePolicyObjects(name)
	return pol != nil && rmqversion.ListMaxAge(pol.Definition["max-age"]) && p.enabled("MQ507")
}
