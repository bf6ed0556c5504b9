package engine

import (
	"fmt"
	"maps"
	"slices"
	"testing"

	"github.com/mqctl/mqctl/pkg/kind"
	"github.com/mqctl/mqctl/pkg/plan"
	"github.com/mqctl/mqctl/pkg/topology"
)

// TestShortLackLines: a refusal names the first 20 missing permissions
// and counts the others by what they lack; before, a user whose regexps
// covered none of a file's 5,000 queues got a refusal (and a plan note)
// of 5,000 lines.
func TestShortLackLines(t *testing.T) {
	lines := func(n int) []string {
		out := make([]string, n)
		for i := range out {
			out[i] = fmt.Sprintf("  line %d", i)
		}
		return out
	}
	tests := []struct {
		name  string
		kinds []string
		last  string // the last line; "" for all the lines kept
	}{
		{"twenty", slices.Repeat([]string{"configure on %d queue"}, 20), ""},
		{"one more", slices.Repeat([]string{"configure on %d queue"}, 21), "  and 1 more: configure on 1 queue"},
		{"many", append(append(append(slices.Repeat([]string{"write on %d exchange"}, 20), slices.Repeat([]string{"configure on %d queue"}, 4978)...), "write on %d exchange", "a tag for %d policy", "a tag for %d policy"), "the topic permission on %d routing key"),
			"  and 4982 more: configure on 4978 queues, write on 1 exchange, a tag for 2 policies, the topic permission on 1 routing key"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := lines(len(tt.kinds))
			got := shortLackLines(slices.Clone(in), tt.kinds)
			if tt.last == "" {
				if !slices.Equal(got, in) {
					t.Errorf("got %q, want the lines as they were", got)
				}
				return
			}
			if len(got) != maxLackLines+1 || !slices.Equal(got[:maxLackLines], in[:maxLackLines]) || got[maxLackLines] != tt.last {
				t.Errorf("got %d lines ending %q; want the first %d and %q", len(got), got[len(got)-1], maxLackLines, tt.last)
			}
		})
	}
}

// TestPermissionWantsOfKeptVhosts: an administrator whose permissions
// allow everything in a vhost needs no probe there (adminVhosts), and the
// wants of such a vhost were built for every change and then dropped: 30
// MB of a 50,002-object replace plan's memory. permissionWants now builds
// the wants of the vhosts keep keeps alone, and asks keep about the
// vhosts it has a want in, never one with other changes only (a policy:
// an administrator's own permissions are read for no more vhosts than
// before).
func TestPermissionWantsOfKeptVhosts(t *testing.T) {
	b := &topology.Binding{Source: "x", Destination: "q", DestinationType: topology.DestQueue, RoutingKey: "k"}
	q := &topology.Queue{Name: "q", Type: topology.QueueClassic, Durable: true}
	p := &plan.Plan{Changes: []plan.Change{
		{Action: plan.Create, Kind: kind.Queue, Vhost: "a", Name: "q", After: plan.Of(q)},
		{Action: plan.Create, Kind: kind.Binding, Vhost: "a", Name: plan.BindingName(b), After: plan.BindingObject{Binding: b}},
		{Action: plan.Create, Kind: kind.Queue, Vhost: "b", Name: "q", After: plan.Of(q)},
		{Action: plan.Create, Kind: kind.Binding, Vhost: "b", Name: plan.BindingName(b), After: plan.BindingObject{Binding: b}},
		{Action: plan.Create, Kind: kind.Policy, Vhost: "c", Name: "p", After: plan.Of(&topology.Policy{Name: "p", Pattern: ".*"})},
	}}
	live := &Live{current: plan.Current{Live: topology.Live{State: &topology.Topology{}}}}
	all := permissionWants(p, live, false, nil)
	for _, tt := range []struct {
		name string
		kept []string
	}{
		{"every vhost", []string{"a", "b"}},
		{"one", []string{"a"}},
		{"none", nil},
	} {
		t.Run(tt.name, func(t *testing.T) {
			asked := map[string]bool{}
			got := permissionWants(p, live, false, func(vh string) bool {
				asked[vh] = true
				return slices.Contains(tt.kept, vh)
			})
			if want := []string{"a", "b"}; !slices.Equal(slices.Sorted(maps.Keys(asked)), want) {
				t.Errorf("keep asked about vhosts %v; want %v", slices.Sorted(maps.Keys(asked)), want)
			}
			if !slices.Equal(slices.Sorted(maps.Keys(got)), tt.kept) {
				t.Errorf("wants in vhosts %v; want %v", slices.Sorted(maps.Keys(got)), tt.kept)
			}
			for _, vh := range tt.kept {
				if len(got[vh]) == 0 || len(got[vh]) != len(all[vh]) {
					t.Errorf("vhost %s: %d wants; want %d, as without keep", vh, len(got[vh]), len(all[vh]))
				}
			}
		})
	}
}
