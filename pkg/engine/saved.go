package engine

import (
	"bytes"
	"encoding/json"

	"github.com/mqctl/mqctl/pkg/kind"
	"github.com/mqctl/mqctl/pkg/plan"
	"github.com/mqctl/mqctl/pkg/topology"
)

// shareWithBroker lets saved plan p, whose fingerprint the broker's state
// read (state) matched, hold the broker's objects where it holds copies of
// them: each change's object before the change, and the bindings a replace
// takes down, are the ones read (as in a plan made by apply itself, whose
// changes hold the objects read), where they are the same as the plan
// saved them (their JSON, which is what apply sends of them); and the
// prints of the broker's objects, there to name what changed where the
// fingerprint differs, are let go of. Of the 50,002-object replace plan
// that was 12 MB of the 45 its changes held through the broker's read and
// after. Items (users, permissions, shovels, ...) keep their own: their
// JSON masks the secrets that may tell two apart.
func shareWithBroker(p *plan.Plan, state *topology.Topology) {
	p.ObjectPrints = nil
	type vhostKind struct {
		vhost string
		k     plan.Kind
	}
	lookups := map[vhostKind]func(string) plan.Object{}
	lookup := func(vhost string, k plan.Kind, name string) plan.Object {
		if vhost == "" || k.Container() {
			return nil
		}
		look, ok := lookups[vhostKind{vhost, k}]
		if !ok {
			look = plan.Lookup(state.Vhosts[vhost], k)
			lookups[vhostKind{vhost, k}] = look
		}
		return look(name)
	}
	for i := range p.Changes {
		c := &p.Changes[i]
		if c.Before != nil {
			if _, item := c.Before.(plan.ItemObject); !item {
				if read := lookup(c.Vhost, c.Kind, c.Name); read != nil && sameJSON(read, c.Before) {
					c.Before = read
				}
			}
		}
		for j, b := range c.Bindings {
			read, ok := lookup(c.Vhost, kind.Binding, plan.BindingName(b)).(plan.BindingObject)
			if ok && sameJSON(read.Binding, b) {
				c.Bindings[j] = read.Binding
			}
		}
	}
}

// sameJSON reports whether a and b encode as the same JSON.
func sameJSON(a, b any) bool {
	x, err := json.Marshal(a)
	if err != nil {
		return false
	}
	y, err := json.Marshal(b)
	return err == nil && bytes.Equal(x, y)
}
