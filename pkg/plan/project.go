package plan

import (
	"maps"
	"slices"

	"github.com/mqctl/mqctl/pkg/kind"
	"github.com/mqctl/mqctl/pkg/topology"
)

// Project returns the state as apply leaves it: cur with the plan's
// changes made, the objects it leaves alone (unmanaged, held back, changed
// outside mqctl) kept. cur is not changed; the result shares its objects.
// A binding whose end the changes delete goes with it, as on the broker.
// It covers the vhosts and every kind of their objects (the broker's own
// kinds, users and their access, are left out); message flows (pkg/flow)
// are computed from it.
func (p *Plan) Project(cur *topology.Topology) *topology.Topology {
	out := topology.New()
	if cur != nil {
		for name, v := range cur.Vhosts {
			out.Vhosts[name] = copyVhost(v)
		}
	}
	// Deletes of a kind kept in a list are made at once, per vhost.
	removals := map[Kind]map[string]map[string]bool{}
	for i := range p.Changes {
		c := &p.Changes[i]
		if c.Kind.Container() {
			projectVhost(out, c)
			continue
		}
		a, ok := vhostKindOf(c.Kind)
		if !ok {
			continue
		}
		v := out.Vhosts[c.Vhost]
		switch {
		case v == nil && c.Action == Delete:
		case c.Action == Delete && a.removeAll != nil:
			byVhost := removals[c.Kind]
			if byVhost == nil {
				byVhost = map[string]map[string]bool{}
				removals[c.Kind] = byVhost
			}
			if byVhost[c.Vhost] == nil {
				byVhost[c.Vhost] = map[string]bool{}
			}
			byVhost[c.Vhost][c.Name] = true
		case c.Action == Delete:
			a.set(v, c.Name, nil)
		default:
			a.set(out.Vhost(c.Vhost), c.Name, c.After)
		}
	}
	for k, byVhost := range removals {
		a, _ := vhostKindOf(k)
		for vh, names := range byVhost {
			if v := out.Vhosts[vh]; v != nil {
				a.removeAll(v, names)
			}
		}
	}
	for _, v := range out.Vhosts {
		dropLooseBindings(v)
	}
	return out
}

// copyVhost copies v's maps and binding list, sharing the objects.
func copyVhost(v *topology.Vhost) *topology.Vhost {
	c := *v
	for _, s := range kind.VhostKinds() {
		if t, ok := topology.TypedOf(s.Kind); ok {
			t.CloneIn(&c, v, s.Kind)
		}
	}
	c.Bindings = append([]*topology.Binding(nil), v.Bindings...)
	c.Items = make(topology.Items, len(v.Items))
	for k, byName := range v.Items {
		c.Items[k] = maps.Clone(byName)
	}
	return &c
}

// projectVhost makes change c of a vhost in t.
func projectVhost(t *topology.Topology, c *Change) {
	switch c.Action {
	case Delete:
		delete(t.Vhosts, c.Vhost)
	default:
		v := t.Vhost(c.Vhost)
		if m, ok := c.After.(*VhostMeta); ok {
			v.Description, v.DefaultQueueType = m.Description, m.DefaultQueueType
			if m.Tags != nil {
				v.Tags = m.Tags
			}
		}
	}
}

// dropLooseBindings removes the bindings whose source or destination is
// gone (the default exchange and amq.* are always there).
func dropLooseBindings(v *topology.Vhost) {
	exists := func(exchange string) bool {
		return exchange == "" || topology.IsBrokerExchange(exchange) || v.Exchanges[exchange] != nil
	}
	v.Bindings = slices.DeleteFunc(v.Bindings, func(b *topology.Binding) bool {
		if !exists(b.Source) {
			return true
		}
		if b.DestinationType == topology.DestExchange {
			return !exists(b.Destination)
		}
		return v.Queues[b.Destination] == nil
	})
}
