package plan

import (
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/mqctl/mqctl/pkg/topology"
)

// TestBindingsDeletedWith: the bindings an exchange's delete takes down
// that mqctl did not make are not left alone (not among the unmanaged
// objects), and those to a destination the plan keeps are what apply
// refuses to lose. Before, a hand-made queue's binding to an exchange the
// file dropped was listed both under the delete and among the unmanaged
// objects "left alone".
func TestBindingsDeletedWith(t *testing.T) {
	ours := func(v *topology.Vhost) {
		v.Exchanges["e"] = x("e", "topic")
		v.Queues["a"] = q("a", nil)
		v.Bindings = []*topology.Binding{bind("e", "a", "k")}
	}
	tests := []struct {
		name      string
		theirs    func(v *topology.Vhost)
		lost      []string // BindingsDeletedWith, by name
		unmanaged []string
	}{
		{
			name: "a hand-made queue bound to the dropped exchange",
			theirs: func(v *topology.Vhost) {
				v.Queues["hand"] = q("hand", nil)
				v.Bindings = append(v.Bindings, bind("e", "hand", "x"))
			},
			lost:      []string{"e -> queue hand [x]"},
			unmanaged: []string{"hand"},
		},
		{
			name:   "a hand-made binding to a queue the plan deletes too: that delete's loss",
			theirs: func(v *topology.Vhost) { v.Bindings = append(v.Bindings, bind("e", "a", "other")) },
		},
		{
			name: "a hand-made exchange bound into the dropped one: its loss is the delete's own",
			theirs: func(v *topology.Vhost) {
				v.Exchanges["hx"] = x("hx", "fanout")
				v.Bindings = append(v.Bindings, &topology.Binding{Source: "hx", Destination: "e", DestinationType: topology.DestExchange})
			},
			unmanaged: []string{"hx"},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cur := vh("/", func(v *topology.Vhost) { ours(v); tc.theirs(v) })
			p := Diff(vh("/", nil), Current{Live: topology.Live{State: cur}, Managed: ManagedOf(Recorded(vh("/", ours)))})
			var lost []string
			for _, bs := range p.BindingsDeletedWith() {
				for _, b := range bs {
					lost = append(lost, BindingName(b))
				}
			}
			if diff := cmp.Diff(tc.lost, lost); diff != "" {
				t.Errorf("bindings deleted with their exchange (-want +got):\n%s", diff)
			}
			var unmanaged []string
			for _, r := range p.Unmanaged {
				unmanaged = append(unmanaged, r.Name)
			}
			slices.Sort(unmanaged)
			if diff := cmp.Diff(tc.unmanaged, unmanaged); diff != "" {
				t.Errorf("unmanaged, left alone (-want +got):\n%s", diff)
			}
		})
	}
}
