package plan

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/mqctl/mqctl/pkg/topology"
)

// shape is what Project keeps of a vhost, for comparison.
type shape struct {
	Exchanges, Queues, Policies []string
	Bindings                    []string
}

func shapeOf(t *topology.Topology) map[string]shape {
	out := map[string]shape{}
	for name, v := range t.Vhosts {
		s := shape{Exchanges: v.ExchangeNames(), Queues: v.QueueNames(), Policies: v.PolicyNames()}
		for _, b := range v.Bindings {
			s.Bindings = append(s.Bindings, BindingName(b))
		}
		out[name] = s
	}
	return out
}

func TestProjectIsTheStateApplyLeaves(t *testing.T) {
	live := vh("v", func(v *topology.Vhost) {
		v.Exchanges["orders"] = x("orders", "topic")
		v.Exchanges["old"] = x("old", "fanout")
		v.Queues["a"] = q("a", nil)
		v.Queues["b"] = q("b", nil)
		v.Queues["theirs"] = q("theirs", nil)
		v.Bindings = []*topology.Binding{bind("orders", "a", "order.*"), bind("old", "b", ""), bind("orders", "theirs", "#")}
		v.Policies["p"] = &topology.Policy{Name: "p", Pattern: ".*", ApplyTo: "queues", Definition: topology.Args{"max-length": 10}}
	})
	desired := vh("v", func(v *topology.Vhost) {
		v.Exchanges["orders"] = x("orders", "topic")
		v.Queues["a"] = q("a", topology.Args{"x-max-length": 5}) // replaced: its binding comes back
		v.Queues["b"] = q("b", nil)
		v.Queues["c"] = q("c", nil)
		v.Bindings = []*topology.Binding{bind("orders", "a", "order.*"), bind("orders", "c", "order.created")}
	})
	managed := Recorded(live)
	delete(managed, ObjectRef{Kind: KindQueue, Vhost: "v", Name: "theirs"})
	delete(managed, BindingRef("v", bind("orders", "theirs", "#")))
	p := Diff(desired, Current{Live: topology.Live{State: live}, Managed: managed})
	got := shapeOf(p.Project(live))
	want := map[string]shape{"v": {
		Exchanges: []string{"orders"}, Policies: []string{},
		Queues:   []string{"a", "b", "c", "theirs"}, // the unmanaged queue stays
		Bindings: []string{"orders -> queue a [order.*]", "orders -> queue theirs [#]", "orders -> queue c [order.created]"},
	}}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("projected state (-want +got):\n%s", d)
	}
	if got := p.Project(live).Vhosts["v"].Queues["a"].Arguments["x-max-length"]; got != 5 {
		t.Errorf("the replaced queue keeps its old arguments after the projection: x-max-length = %v", got)
	}
	if len(live.Vhosts["v"].Bindings) != 3 || live.Vhosts["v"].Exchanges["old"] == nil {
		t.Error("Project changed the state it was given")
	}
}

func TestProjectDeletesAVhostAndItsObjects(t *testing.T) {
	live := vh("gone", func(v *topology.Vhost) { v.Queues["q"] = q("q", nil) })
	p := Diff(topology.New(), Current{Live: topology.Live{State: live}, Managed: Recorded(live)})
	if got := p.Project(live).Vhosts; len(got) != 0 {
		t.Errorf("vhosts after deleting the only one: %v", got)
	}
}
