package plan

import (
	"reflect"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/mqctl/mqctl/pkg/kind"
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
	delete(managed, ObjectRef{Kind: kind.Queue, Vhost: "v", Name: "theirs"})
	delete(managed, BindingRef("v", bind("orders", "theirs", "#")))
	p := Diff(desired, Current{Live: topology.Live{State: live}, Managed: ManagedOf(managed)})
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
	p := Diff(topology.New(), Current{Live: topology.Live{State: live}, Managed: ManagedOf(Recorded(live))})
	if got := p.Project(live).Vhosts; len(got) != 0 {
		t.Errorf("vhosts after deleting the only one: %v", got)
	}
}

// sampleBinding is the binding of sampleObjects.
var sampleBinding = &topology.Binding{Source: "x", Destination: "q", DestinationType: topology.DestQueue, RoutingKey: "k"}

// sampleObjects are an object named "o" of each kind with a type of its
// own but vhosts (a binding: sampleBinding); an item kind's is
// sampleItem's.
var sampleObjects = func() map[Kind]Object {
	m := map[Kind]Object{kind.Binding: BindingObject{sampleBinding}}
	// A kind with a type of its own: an object of it named "o", every
	// setting at its default (an exchange's type, which has none, set).
	for _, s := range kind.VhostKinds() {
		if t, ok := topology.TypedOf(s.Kind); ok {
			m[s.Kind] = Object(topology.NewNamed(t, "o"))
		}
	}
	m[kind.Exchange].(*topology.Exchange).Type = "direct"
	return m
}()

// TestEveryVhostKindIsFound fails for a kind of a vhost's objects that
// the plan cannot find in, put into or take out of a vhost (vhostKinds,
// in objects.go): each is put, found, and taken out again.
func TestEveryVhostKindIsFound(t *testing.T) {
	b := sampleBinding
	objectOf := sampleObjects
	for _, s := range kind.All() {
		if s.Broker || s.Kind == kind.Vhost {
			continue
		}
		a, ok := vhostKindOf(s.Kind)
		if !ok {
			t.Errorf("kind %q: the plan cannot find its objects in a vhost (vhostKinds)", s.Kind)
			continue
		}
		o, name := objectOf[s.Kind], "o"
		if s.Kind == kind.Binding {
			name = BindingName(b)
		}
		if s.Item != nil {
			o = ItemObject{&topology.Item{Kind: s.Kind, Name: "o"}}
		}
		if o == nil {
			t.Errorf("kind %q: no object for this test", s.Kind)
			continue
		}
		v := topology.NewVhost("v")
		a.set(v, name, o)
		if got := ObjectIn(v, s.Kind, name); got == nil || !reflect.DeepEqual(got, o) {
			t.Errorf("kind %q: put %+v, found %+v", s.Kind, o, got)
		}
		if got := Lookup(v, s.Kind)(name); got == nil || !reflect.DeepEqual(got, o) {
			t.Errorf("kind %q: put %+v, its Lookup found %+v", s.Kind, o, got)
		}
		if got := Lookup(v, s.Kind)(name + "x"); got != nil {
			t.Errorf("kind %q: Lookup of a name v lacks found %+v", s.Kind, got)
		}
		a.set(v, name, nil)
		if got := ObjectIn(v, s.Kind, name); got != nil {
			t.Errorf("kind %q: taken out, still found %+v", s.Kind, got)
		}
		if got := Lookup(v, s.Kind)(name); got != nil {
			t.Errorf("kind %q: taken out, its Lookup still found %+v", s.Kind, got)
		}
	}
}
