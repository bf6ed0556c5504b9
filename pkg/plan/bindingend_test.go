package plan

import (
	"slices"
	"testing"

	"github.com/mqctl/mqctl/pkg/kind"
	"github.com/mqctl/mqctl/pkg/topology"
)

// TestBindingEndsAreWhatBindingsHangOn: the kinds the diff treats as a
// binding's ends (kind.Spec.BindingEnd: it meets them before the
// bindings, their replaces and deletes take bindings down, a binding to
// one the plan deletes is refused) are exactly the kinds a binding's
// source and destination can be, and a replace or delete of each takes
// bindings down while one of any other kind does not.
func TestBindingEndsAreWhatBindingsHangOn(t *testing.T) {
	t.Parallel()
	var ends []Kind
	for _, dt := range []string{topology.DestQueue, topology.DestExchange} {
		src, dst := BindingEnds("v", &topology.Binding{Source: "x", Destination: "d", DestinationType: dt})
		for _, r := range []ObjectRef{src, dst} {
			if !slices.Contains(ends, r.Kind) {
				ends = append(ends, r.Kind)
			}
		}
	}
	got := kind.BindingEnds()
	slices.Sort(ends)
	slices.Sort(got)
	if !slices.Equal(got, ends) {
		t.Errorf("kind.BindingEnds() = %v; a binding's ends are of kinds %v", got, ends)
	}
	for _, s := range kind.All() {
		for _, a := range []Action{Replace, Delete} {
			if want := slices.Contains(ends, s.Kind); takesDown(Change{Action: a, Kind: s.Kind}) != want {
				t.Errorf("a %s of %s: takes bindings down %t, want %t", a, s.Kind.WithArticle(), !want, want)
			}
		}
	}
}
