package engine

import (
	"testing"

	"github.com/mqctl/mqctl/pkg/kind"
	"github.com/mqctl/mqctl/pkg/plan"
	"github.com/mqctl/mqctl/pkg/topology"
)

// TestLiveHasEveryVhostKind: Live.has looks an object of any kind a vhost
// holds up in the state read, through the plan's one lookup (plan.ObjectIn)
// rather than a switch of its own on exchanges and queues, which answered
// "missing" for every other kind.
func TestLiveHasEveryVhostKind(t *testing.T) {
	t.Parallel()
	v := topology.NewVhost("v")
	v.Exchanges["x"] = &topology.Exchange{Name: "x", Type: "direct", Durable: true}
	v.Queues["q"] = &topology.Queue{Name: "q", Durable: true}
	b := &topology.Binding{Source: "x", Destination: "q", DestinationType: topology.DestQueue, RoutingKey: "k"}
	v.Bindings = []*topology.Binding{b}
	for _, k := range kind.PolicyKinds() {
		v.PoliciesOf(k)["p"] = &topology.Policy{Name: "p", Pattern: ".*", ApplyTo: "queues", Definition: topology.Args{"max-length": int64(1)}}
	}
	for _, s := range kind.VhostItems() {
		v.Items.Put(&topology.Item{Kind: s.Kind, Name: "i", Settings: topology.Args{}})
	}
	state := topology.New()
	state.Vhosts["v"] = v
	l := &Live{current: plan.Current{Live: topology.Live{State: state}}}

	names := map[kind.Kind]string{kind.Exchange: "x", kind.Queue: "q", kind.Binding: plan.BindingName(b)}
	for _, k := range kind.PolicyKinds() {
		names[k] = "p"
	}
	for _, s := range kind.VhostItems() {
		names[s.Kind] = "i"
	}
	for _, s := range kind.All() {
		name, held := names[s.Kind]
		if !held {
			continue // vhosts, and the broker's own kinds
		}
		if !l.has(plan.ObjectRef{Kind: s.Kind, Vhost: "v", Name: name}) {
			t.Errorf("%s %q is in the state read; has says it is not", s.Label, name)
		}
		for _, missing := range []plan.ObjectRef{{Kind: s.Kind, Vhost: "v", Name: "nope"}, {Kind: s.Kind, Vhost: "other", Name: name}} {
			if l.has(missing) {
				t.Errorf("has finds %s %q in vhost %q, which the state read lacks", s.Label, missing.Name, missing.Vhost)
			}
		}
	}
}
