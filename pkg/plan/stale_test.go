package plan

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/mqctl/mqctl/pkg/topology"
)

// TestStaleBindings: a binding mqctl's record lists that neither the file
// nor the broker holds is a stale entry, found through its kind's index
// (vhostKind.index), and one the broker still holds is not.
func TestStaleBindings(t *testing.T) {
	t.Parallel()
	ends := func(v *topology.Vhost) { v.Exchanges["e"] = x("e", "direct"); v.Queues["q"] = q("q", nil) }
	recorded := vh("/", func(v *topology.Vhost) {
		ends(v)
		v.Bindings = append(v.Bindings, bind("e", "q", "gone"), bind("e", "q", "kept"))
	})
	current := vh("/", func(v *topology.Vhost) { ends(v); v.Bindings = append(v.Bindings, bind("e", "q", "kept")) })
	desired := vh("/", func(v *topology.Vhost) { ends(v); v.Bindings = append(v.Bindings, bind("e", "q", "kept")) })
	p := Diff(desired, Current{Live: topology.Live{State: current}, Managed: ManagedOf(Recorded(recorded))})
	want := []ObjectRef{BindingRef("/", bind("e", "q", "gone"))}
	if diff := cmp.Diff(want, p.Stale); diff != "" {
		t.Errorf("stale entries (-want +got):\n%s", diff)
	}
}
