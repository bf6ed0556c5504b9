package route

import (
	"reflect"
	"testing"

	"github.com/mqctl/mqctl/pkg/topology"
)

// TestInboundKeys: the keys by which a message can reach a queue are its
// name (the default exchange) and the keys of the bindings into it from
// exchanges that route by key; an exchange that routes otherwise admits
// any key.
func TestInboundKeys(t *testing.T) {
	v := topology.NewVhost("/")
	for name, typ := range map[string]string{"orders": "topic", "direct": "direct", "fan": "fanout", "hdr": "headers"} {
		v.Exchanges[name] = &topology.Exchange{Name: name, Type: typ}
	}
	for _, q := range []string{"work", "keyed", "fanned", "matched", "alone"} {
		v.Queues[q] = &topology.Queue{Name: q, Type: topology.QueueClassic}
	}
	bind := func(src, dst, key string) {
		v.Bindings = append(v.Bindings, &topology.Binding{Source: src, Destination: dst, DestinationType: topology.DestQueue, RoutingKey: key})
	}
	bind("orders", "work", "order.*")
	bind("orders", "keyed", "ship.#")
	bind("direct", "keyed", "ship")
	bind("fan", "fanned", "")
	bind("orders", "matched", "a")
	bind("hdr", "matched", "")
	s := New(v)
	tests := []struct {
		queue          string
		want           InboundKeys
		admits, refuse []string
	}{
		{"work", InboundKeys{Patterns: []string{"order.*"}, Literals: []string{"work"}}, []string{"order.x", "work"}, []string{"other", "order", "order.x.y"}},
		{"keyed", InboundKeys{Patterns: []string{"ship.#"}, Literals: []string{"keyed", "ship"}}, []string{"ship", "ship.a.b", "keyed"}, []string{"work"}},
		{"fanned", InboundKeys{Any: true}, []string{"anything"}, nil},
		{"matched", InboundKeys{Any: true}, []string{"anything"}, nil},
		{"alone", InboundKeys{Literals: []string{"alone"}}, []string{"alone"}, []string{"", "a"}},
	}
	for _, tc := range tests {
		got := s.InboundKeys(tc.queue)
		if !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s: got %+v, want %+v", tc.queue, got, tc.want)
		}
		for _, k := range tc.admits {
			if !got.Admits(k) {
				t.Errorf("%s does not admit %q", tc.queue, k)
			}
		}
		for _, k := range tc.refuse {
			if got.Admits(k) {
				t.Errorf("%s admits %q", tc.queue, k)
			}
		}
	}
}
