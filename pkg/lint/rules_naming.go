package lint

import (
	"fmt"
	"strings"

	"github.com/mqctl/mqctl/pkg/rmqversion"
	"github.com/mqctl/mqctl/pkg/topology"
)

// commandVerbs maps imperative verbs that start command-style routing keys
// to the past participle an event key would use.
func commandVerbs() map[string]string {
	return map[string]string{
		"send": "sent", "create": "created", "update": "updated", "delete": "deleted",
		"remove": "removed", "process": "processed", "do": "done", "run": "run",
		"execute": "executed", "calculate": "calculated", "sync": "synced", "import": "imported",
		"export": "exported", "notify": "notified", "handle": "handled", "make": "made",
		"get": "fetched", "set": "set", "fetch": "fetched", "generate": "generated",
		"compute": "computed", "start": "started", "stop": "stopped", "cancel": "cancelled",
		"register": "registered", "publish": "published", "charge": "charged", "refund": "refunded",
		"resize": "resized", "convert": "converted", "validate": "validated", "schedule": "scheduled",
	}
}

// commandKey reports whether topic key k names a command, and suggests an
// event-style key.
func commandKey(verbs map[string]string, k string) (verb, suggestion string, ok bool) {
	words := strings.Split(k, ".")
	participle, isVerb := verbs[strings.ToLower(words[0])]
	if !isVerb {
		return "", "", false
	}
	rest := words[1:]
	for _, w := range rest {
		if w == "*" || w == "#" {
			return words[0], "", true
		}
	}
	if len(rest) == 0 {
		return words[0], "", true
	}
	return words[0], strings.Join(rest, ".") + "." + participle, true
}

// MQ601: topic keys named after commands rather than events.
func runCommandKey(p *Pass) []Finding {
	verbs := commandVerbs()
	advice := func(suggestion string) string {
		if suggestion != "" {
			return fmt.Sprintf("Name the key after the event (%q), or send commands through a direct exchange or straight to the queue", suggestion)
		}
		return "Name the key after the event that happened, or send commands through a direct exchange or straight to the queue"
	}
	var out []Finding
	for _, b := range p.Vhost.Bindings {
		if b.Source == "" || p.exchangeType(b.Source) != "topic" {
			continue
		}
		verb, sug, ok := commandKey(verbs, b.RoutingKey)
		if !ok {
			continue
		}
		out = append(out, p.bindingFinding(b,
			"binding key %q on topic exchange %q names a command (%q), not an event: topic routing lets any number of consumers subscribe to facts that happened, while a command has one receiver and couples the publisher to it. %s",
			b.RoutingKey, b.Source, verb, advice(sug)))
	}
	for _, name := range p.queueNames {
		d := p.dl[name]
		if d == nil || !d.HasDLRK || p.exchangeType(d.Exchange) != "topic" {
			continue
		}
		verb, sug, ok := commandKey(verbs, d.DLRK)
		if !ok {
			continue
		}
		out = append(out, p.queueFinding(p.Vhost.Queues[name],
			"queue %q dead-letters with routing key %q on topic exchange %q, which names a command (%q), not an event. %s",
			name, d.DLRK, d.Exchange, verb, advice(sug)))
	}
	return out
}

// MQ701: user objects named with the reserved amq. prefix.
func runReservedName(p *Pass) []Finding {
	var out []Finding
	for _, name := range p.exchangeNames {
		if topology.IsReservedName(name) && !topology.IsBrokerExchange(name) {
			out = append(out, p.exchangeFinding(p.Vhost.Exchanges[name],
				"exchange %q uses the reserved amq. prefix: RabbitMQ refuses to declare it (ACCESS_REFUSED). Rename it", name))
		}
	}
	for _, name := range p.queueNames {
		if topology.IsReservedName(name) {
			out = append(out, p.queueFinding(p.Vhost.Queues[name],
				"queue %q uses the reserved amq. prefix: RabbitMQ refuses to declare it (ACCESS_REFUSED; amq.gen-* names are for server-named queues). Rename it", name))
		}
	}
	return out
}

// MQ702: classic mirroring keys in policies: refused from 4.0, deprecated
// before.
func runMirroring(p *Pass) []Finding {
	var out []Finding
	for _, set := range p.policySets() {
		for _, n := range set.names() {
			pol := set.policies[n]
			var keys []string
			for _, k := range pol.Definition.Keys() {
				if rmqversion.IsMirroringKey(k) {
					keys = append(keys, k)
				}
			}
			if len(keys) == 0 {
				continue
			}
			var others []string
			for _, k := range pol.Definition.Keys() {
				if !rmqversion.IsMirroringKey(k) {
					others = append(others, k)
				}
			}
			if !p.Version.ClassicMirroring() {
				lost := ""
				if len(others) > 0 {
					lost = fmt.Sprintf(", and the settings it carries besides (%s) never reach its queues", strings.Join(others, ", "))
				}
				out = append(out, p.raised(p.policyFinding(set.kind, pol,
					"%s %q sets %s: %s the broker refuses a policy with ha-* keys (HTTP 400; classic queue mirroring was removed in 4.0), so apply fails on it%s. "+
						"Remove the ha-* keys; declare the queues that need replication with type: quorum",
					set.label, n, strings.Join(keys, ", "), p.onVersion(), lost).at(keys...)))
				continue
			}
			skips := ""
			if s := p.policySkips(pol, keys...); s != "" {
				skips = "; meanwhile, " + s
			}
			out = append(out, p.judged(p.policyFinding(set.kind, pol,
				"%s %q sets %s: classic queue mirroring works %s but is deprecated (since 3.9), and RabbitMQ 4.0 removed it and refuses a policy with ha-* keys (HTTP 400), so the upgrade to 4.x fails on this policy%s. "+
					"Declare the queues that need replication with type: quorum and remove the ha-* keys",
				set.label, n, strings.Join(keys, ", "), p.onVersion(), skips).at(keys...)))
		}
	}
	return out
}
