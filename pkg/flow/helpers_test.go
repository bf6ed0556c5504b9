package flow

import (
	"encoding/json"
	"reflect"
	"slices"
	"testing"

	"github.com/mqctl/mqctl/pkg/route"
	"github.com/mqctl/mqctl/pkg/topology"
)

// obj adds an object to a test vhost.
type obj func(v *topology.Vhost)

// topo returns a topology of vhost "/" holding objs.
func topo(objs ...obj) *topology.Topology {
	t := topology.New()
	v := t.Vhost("/")
	for _, o := range objs {
		o(v)
	}
	return t
}

// exchange declares an exchange.
func exchange(name, typ string, args topology.Args) obj {
	return func(v *topology.Vhost) {
		v.Exchanges[name] = &topology.Exchange{Name: name, Type: typ, Durable: true, Arguments: args.Normalized()}
	}
}

// internalExchange declares an internal exchange.
func internalExchange(name, typ string) obj {
	return func(v *topology.Vhost) {
		v.Exchanges[name] = &topology.Exchange{Name: name, Type: typ, Durable: true, Internal: true}
	}
}

// queue declares a classic queue.
func queue(name string, args topology.Args) obj {
	return func(v *topology.Vhost) {
		v.Queues[name] = &topology.Queue{Name: name, Type: topology.QueueClassic, Durable: true, Arguments: args.Normalized()}
	}
}

// delayTier declares a retry.delays tier of origin: its messages wait
// ms, then return to origin through the default exchange.
func delayTier(name, origin string, ms int64) obj {
	return func(v *topology.Vhost) {
		v.Queues[name] = &topology.Queue{Name: name, Type: topology.QueueClassic, Durable: true, Role: topology.RoleDelay, Origin: origin, Delay: ms,
			Arguments: topology.Args{"x-message-ttl": ms, "x-dead-letter-exchange": "", "x-dead-letter-routing-key": origin}.Normalized()}
	}
}

// bind binds a queue.
func bind(src, dst, key string) obj {
	return func(v *topology.Vhost) {
		v.Bindings = append(v.Bindings, &topology.Binding{Source: src, Destination: dst, DestinationType: topology.DestQueue, RoutingKey: key})
	}
}

// bindExchange binds an exchange to an exchange.
func bindExchange(src, dst, key string) obj {
	return func(v *topology.Vhost) {
		v.Bindings = append(v.Bindings, &topology.Binding{Source: src, Destination: dst, DestinationType: topology.DestExchange, RoutingKey: key})
	}
}

// bindHeaders binds a queue with headers criteria.
func bindHeaders(src, dst string, args topology.Args) obj {
	return func(v *topology.Vhost) {
		v.Bindings = append(v.Bindings, &topology.Binding{Source: src, Destination: dst, DestinationType: topology.DestQueue, Arguments: args.Normalized()})
	}
}

// policy declares a policy.
func policy(name, pattern, applyTo string, def topology.Args) obj {
	return func(v *topology.Vhost) {
		v.Policies[name] = &topology.Policy{Name: name, Pattern: pattern, ApplyTo: applyTo, Definition: def.Normalized()}
	}
}

// show renders a value as indented JSON for failure messages.
func show(t *testing.T, v any) string {
	t.Helper()
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// compareWithoutPerMessage is Compare without the dead-letter changes of
// reason expired of messages published with a TTL (PerMessageTTL), for
// the tests of other reasons: it checks that each goes as the rejected
// dead letters of its queue and class go (no criterion on their way names
// the reason in these tests), and leaves it out.
func compareWithoutPerMessage(t *testing.T, before, after *topology.Topology, o Options) *Diff {
	t.Helper()
	d := Compare(before, after, o)
	var kept []DeadLetter
	for _, dl := range d.DeadLetters {
		if !dl.PerMessageTTL {
			kept = append(kept, dl)
			continue
		}
		twin := slices.ContainsFunc(d.DeadLetters, func(r DeadLetter) bool {
			return r.Reason == route.Rejected && r.Queue == dl.Queue && r.Vhost == dl.Vhost && reflect.DeepEqual(r.Class, dl.Class) &&
				reflect.DeepEqual(r.Before, dl.Before) && reflect.DeepEqual(r.After, dl.After) && r.Loses == dl.Loses && r.Cause == dl.Cause
		})
		if !twin {
			t.Errorf("dead letters of %q expired by a per-message TTL go otherwise than the rejected ones: %s", dl.Queue, show(t, dl))
		}
	}
	d.DeadLetters = kept
	return d
}
