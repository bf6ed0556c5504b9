package topology

import (
	"slices"
	"testing"
)

// SortBindings orders bindings exactly as their Keys sort, which plans and
// the broker state fingerprint rely on.
func TestSortBindingsFollowsKeys(t *testing.T) {
	mk := func(src, dt, dst, rk string, args Args) *Binding {
		return &Binding{Source: src, DestinationType: dt, Destination: dst, RoutingKey: rk, Arguments: args}
	}
	v := NewVhost("/")
	v.Bindings = []*Binding{
		mk("events", DestQueue, "b", "k", nil),
		mk("ev", DestQueue, "b", "k", nil), // a prefix of the next source
		mk("events", DestExchange, "b", "k", nil),
		mk("events", DestQueue, "a", "k.longer", nil),
		mk("events", DestQueue, "a", "k", Args{"x-match": "any", "h": int64(2)}),
		mk("events", DestQueue, "a", "k", Args{"x-match": "any", "h": int64(1)}),
		mk("events", DestQueue, "a", "k", nil),
		mk("", DestQueue, "a", "", nil),
		mk("events", DestQueue, "a", "", nil),
	}
	want := slices.Clone(v.Bindings)
	slices.SortStableFunc(want, func(a, b *Binding) int {
		switch ka, kb := a.Key(), b.Key(); {
		case ka < kb:
			return -1
		case ka > kb:
			return 1
		}
		return 0
	})
	v.SortBindings()
	for i := range want {
		if v.Bindings[i] != want[i] {
			t.Fatalf("binding %d: got %q, want %q", i, v.Bindings[i].Key(), want[i].Key())
		}
	}
	if !slices.IsSortedFunc(v.Bindings, CompareBindings) {
		t.Error("not sorted by CompareBindings")
	}
}

// Equal bindings (a file may list one twice; the loader reports the
// second at its position) keep their order, sorted or not.
func TestSortBindingsKeepsEqualOnesInOrder(t *testing.T) {
	v := NewVhost("/")
	for i := range 200 {
		// 20 distinct bindings, each 10 times, shuffled by i*7 mod 200.
		j := i * 7 % 200
		v.Bindings = append(v.Bindings, &Binding{Source: "x", DestinationType: DestQueue, Destination: "q", RoutingKey: string(rune('a' + j%20)),
			Meta: Meta{Pos: Pos{Line: i + 1}}})
	}
	want := slices.Clone(v.Bindings)
	slices.SortStableFunc(want, CompareBindings)
	v.SortBindings()
	for i := range want {
		if v.Bindings[i] != want[i] {
			t.Fatalf("binding %d: got key %q line %d, want key %q line %d", i, v.Bindings[i].RoutingKey, v.Bindings[i].Pos.Line, want[i].RoutingKey, want[i].Pos.Line)
		}
	}
	v.SortBindings() // sorted already: unchanged
	for i := range want {
		if v.Bindings[i] != want[i] {
			t.Fatalf("sorted again, binding %d moved", i)
		}
	}
}
