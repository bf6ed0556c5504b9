package engine

import (
	"testing"

	"github.com/mqctl/mqctl/pkg/kind"
	"github.com/mqctl/mqctl/pkg/plan"
	"github.com/mqctl/mqctl/pkg/topology"
)

// TestTakesLockByKind: the changes that take apply's lock and record in
// their vhost (and the permissions for them) are those of exchanges,
// queues and bindings, asked of the kinds' facts (an end of a binding, or
// named by its ends), never of any other kind.
func TestTakesLockByKind(t *testing.T) {
	want := map[kind.Kind]bool{kind.Exchange: true, kind.Queue: true, kind.Binding: true}
	for _, s := range kind.All() {
		if got := takesLock(s.Kind); got != want[s.Kind] {
			t.Errorf("takesLock(%s) = %t, want %t", s.Kind, got, want[s.Kind])
		}
	}
}

// TestTouchedQueue: the existing queue a change acts on is the queue
// deleted or replaced, or the queue a binding created or deleted ends in;
// none for a queue created, a binding to an exchange, or another kind.
func TestTouchedQueue(t *testing.T) {
	toQueue := plan.BindingObject{Binding: &topology.Binding{Source: "x", Destination: "q", DestinationType: topology.DestQueue}}
	toExchange := plan.BindingObject{Binding: &topology.Binding{Source: "x", Destination: "y", DestinationType: topology.DestExchange}}
	tests := []struct {
		name string
		ch   plan.Change
		want string // "" for none
	}{
		{"queue deleted", plan.Change{Action: plan.Delete, Kind: kind.Queue, Vhost: "v", Name: "q"}, "q"},
		{"queue replaced", plan.Change{Action: plan.Replace, Kind: kind.Queue, Vhost: "v", Name: "q"}, "q"},
		{"queue created", plan.Change{Action: plan.Create, Kind: kind.Queue, Vhost: "v", Name: "q"}, ""},
		{"binding to a queue created", plan.Change{Action: plan.Create, Kind: kind.Binding, Vhost: "v", After: toQueue}, "q"},
		{"binding to a queue deleted", plan.Change{Action: plan.Delete, Kind: kind.Binding, Vhost: "v", Before: toQueue}, "q"},
		{"binding to an exchange", plan.Change{Action: plan.Create, Kind: kind.Binding, Vhost: "v", After: toExchange}, ""},
		{"exchange deleted", plan.Change{Action: plan.Delete, Kind: kind.Exchange, Vhost: "v", Name: "q"}, ""},
		{"policy deleted", plan.Change{Action: plan.Delete, Kind: kind.Policy, Vhost: "v", Name: "q"}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, ok := touchedQueue(tt.ch)
			got := ""
			if ok {
				got = r.name
				if r.vhost != "v" {
					t.Errorf("vhost %q, want v", r.vhost)
				}
			}
			if got != tt.want {
				t.Errorf("touchedQueue = %q, want %q", got, tt.want)
			}
		})
	}
}
