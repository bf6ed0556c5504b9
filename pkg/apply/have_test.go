package apply

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/mqctl/mqctl/pkg/kind"
	"github.com/mqctl/mqctl/pkg/plan"
	"github.com/mqctl/mqctl/pkg/topology"
)

// TestHaveIsHeldNow: a write starts from the object as the broker holds it
// now (Options.Current) for a kind whose driver keeps what the broker
// holds (KeepsCurrent: a vhost, whose tags a file that declares none
// keeps), and from its change's Before for the others, or where the
// broker's is not known; a create starts from nothing.
func TestHaveIsHeldNow(t *testing.T) {
	now := topology.New()
	v := topology.NewVhost("v")
	v.Description, v.Tags = "now", []string{"kept"}
	v.Exchanges["x"] = &topology.Exchange{Name: "x", Type: "topic", Durable: true}
	now.Vhosts["v"] = v
	current := func(k plan.Kind, vhost, name string) plan.Object { return plan.ObjectOf(now, k, vhost, name) }

	planned := &plan.VhostMeta{Name: "v", Description: "planned"}
	plannedX := plan.Of(&topology.Exchange{Name: "x", Type: "direct", Durable: true})
	tests := []struct {
		name    string
		k       plan.Kind
		step    Step
		current func(plan.Kind, string, string) plan.Object
		want    plan.Object
	}{
		{"a vhost updated: as held now", kind.Vhost,
			Step{Vhost: "v", Name: "v", Change: &plan.Change{Action: plan.Update, Kind: kind.Vhost, Vhost: "v", Name: "v", Before: planned}},
			current, &plan.VhostMeta{Name: "v", Description: "now", Tags: []string{"kept"}}},
		{"a vhost the state does not hold: as planned", kind.Vhost,
			Step{Vhost: "w", Name: "w", Change: &plan.Change{Action: plan.Update, Kind: kind.Vhost, Vhost: "w", Name: "w", Before: &plan.VhostMeta{Name: "w"}}},
			current, &plan.VhostMeta{Name: "w"}},
		{"a vhost without Current: as planned", kind.Vhost,
			Step{Vhost: "v", Name: "v", Change: &plan.Change{Action: plan.Update, Kind: kind.Vhost, Vhost: "v", Name: "v", Before: planned}},
			nil, planned},
		{"a vhost created: nothing", kind.Vhost,
			Step{Vhost: "v", Name: "v", Change: &plan.Change{Action: plan.Create, Kind: kind.Vhost, Vhost: "v", Name: "v"}},
			current, nil},
		{"an exchange: as planned", kind.Exchange,
			Step{Vhost: "v", Name: "x", Change: &plan.Change{Action: plan.Replace, Kind: kind.Exchange, Vhost: "v", Name: "x", Before: plannedX}},
			current, plannedX},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o, ok := objectOf(tt.k)
			if !ok {
				t.Fatalf("no object for %s", tt.k)
			}
			e := &executor{opts: Options{Current: tt.current}}
			if diff := cmp.Diff(tt.want, e.have(tt.step, o)); diff != "" {
				t.Errorf("have (-want +got):\n%s", diff)
			}
		})
	}
}
