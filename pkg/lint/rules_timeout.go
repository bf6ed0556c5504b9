package lint

import (
	"fmt"
	"sort"
	"strings"

	"github.com/mqctl/mqctl/pkg/topology"
)

// consumerTimeoutKeys are the policy keys of consumer timeouts, which
// RabbitMQ 4.3 evaluates for quorum queues only.
var consumerTimeoutKeys = []string{"consumer-timeout", "consumer-disconnected-timeout"}

// MQ505: a policy's consumer timeout that applies to classic queues or
// streams on 4.3, which no longer evaluate consumer timeouts (release
// notes of 4.3.0; rabbit_channel.erl at v4.3.5 has no
// evaluate_consumer_timeout). The policy still applies to them: 4.3 does
// not list the keys among the unsupported policies of those types
// (rabbit_classic_queue, rabbit_stream_queue capabilities/0 at v4.3.5), so
// which policy applies is the simulator's answer.
func runConsumerTimeoutIgnored(p *Pass) []Finding {
	if !p.Version.ConsumerTimeoutQuorumOnly() {
		return nil
	}
	ignored := map[string][]string{} // policy -> classic queues and streams it applies to
	for _, name := range p.queueNames {
		q := p.Vhost.Queues[name]
		if q.Type == topology.QueueQuorum {
			continue
		}
		pol, _ := p.Sim.QueuePolicies(name)
		if pol == "" {
			continue
		}
		if def := p.Vhost.Policies[pol]; def != nil && len(timeoutKeys(def)) > 0 {
			ignored[pol] = append(ignored[pol], fmt.Sprintf("%s %s", typeLabel(q.Type), name))
		}
	}
	names := make([]string, 0, len(ignored))
	for n := range ignored {
		names = append(names, n)
	}
	sort.Strings(names)
	var out []Finding
	for _, n := range names {
		pol := p.Vhost.Policies[n]
		keys := timeoutKeys(pol)
		out = append(out, p.judged(p.policyFinding(KindPolicy, pol,
			"policy %q sets %s and applies to %s: %s only quorum queues evaluate consumer timeouts, so a consumer of those that holds a message unacknowledged is never timed out, by this policy or by consumer_timeout in rabbitmq.conf, and keeps it until it acknowledges it or its channel closes. "+
				"Narrow the policy to apply_to: quorum_queues (or its pattern to the quorum queues), or declare those queues as quorum queues if they need the timeout",
			n, strings.Join(keys, ", "), queuesList(ignored[n]), p.onVersion()).at(keys...)))
	}
	return out
}

// timeoutKeys returns the consumer timeout keys policy pol sets.
func timeoutKeys(pol *topology.Policy) []string {
	var keys []string
	for _, k := range consumerTimeoutKeys {
		if pol.Definition.Has(k) {
			keys = append(keys, k)
		}
	}
	return keys
}
