package plan

import (
	"maps"
	"slices"

	"github.com/mqctl/mqctl/pkg/topology"
)

// Project returns the state as apply leaves it: cur with the plan's
// changes made, the objects it leaves alone (unmanaged, held back, changed
// outside mqctl) kept. cur is not changed; the result shares its objects.
// A binding whose end the changes delete goes with it, as on the broker.
// It covers the vhost kinds that route messages (exchanges, queues,
// bindings, policies, operator policies and the vhosts themselves), which
// is what message flows (pkg/flow) are computed from.
func (p *Plan) Project(cur *topology.Topology) *topology.Topology {
	out := topology.New()
	if cur != nil {
		for name, v := range cur.Vhosts {
			out.Vhosts[name] = copyVhost(v)
		}
	}
	for i := range p.Changes {
		project(out, &p.Changes[i])
	}
	for _, v := range out.Vhosts {
		dropLooseBindings(v)
	}
	return out
}

// copyVhost copies v's maps and binding list, sharing the objects.
func copyVhost(v *topology.Vhost) *topology.Vhost {
	c := *v
	c.Exchanges = maps.Clone(v.Exchanges)
	c.Queues = maps.Clone(v.Queues)
	c.Policies = maps.Clone(v.Policies)
	c.OperatorPolicies = maps.Clone(v.OperatorPolicies)
	c.Bindings = append([]*topology.Binding(nil), v.Bindings...)
	return &c
}

// project makes change c in t.
func project(t *topology.Topology, c *Change) {
	if c.Kind == KindVhost {
		switch c.Action {
		case Delete:
			delete(t.Vhosts, c.Vhost)
		default:
			v := t.Vhost(c.Vhost)
			if m := c.After.Vhost; m != nil {
				v.Description, v.DefaultQueueType = m.Description, m.DefaultQueueType
			}
		}
		return
	}
	v := t.Vhosts[c.Vhost]
	if v == nil {
		if c.Action == Delete {
			return
		}
		v = t.Vhost(c.Vhost)
	}
	var after *Object
	if c.Action != Delete {
		after = c.After
	}
	switch c.Kind {
	case KindExchange:
		setOrDelete(v.Exchanges, c.Name, objectField(after, func(o *Object) *topology.Exchange { return o.Exchange }))
	case KindQueue:
		setOrDelete(v.Queues, c.Name, objectField(after, func(o *Object) *topology.Queue { return o.Queue }))
	case KindPolicy:
		setOrDelete(v.Policies, c.Name, objectField(after, func(o *Object) *topology.Policy { return o.Policy }))
	case KindOperatorPolicy:
		setOrDelete(v.OperatorPolicies, c.Name, objectField(after, func(o *Object) *topology.Policy { return o.Policy }))
	case KindBinding:
		projectBinding(v, c)
	}
}

// objectField is f(o), nil for no object.
func objectField[T any](o *Object, f func(*Object) *T) *T {
	if o == nil {
		return nil
	}
	return f(o)
}

// setOrDelete sets m[name] to o, or deletes it when o is nil.
func setOrDelete[T any](m map[string]*T, name string, o *T) {
	if o == nil {
		delete(m, name)
		return
	}
	m[name] = o
}

// projectBinding makes a binding's change in v: a binding is created or
// deleted (it has no other action).
func projectBinding(v *topology.Vhost, c *Change) {
	switch c.Action {
	case Delete:
		if c.Before == nil || c.Before.Binding == nil {
			return
		}
		key := c.Before.Binding.Key()
		for i, b := range v.Bindings {
			if b.Key() == key {
				v.Bindings = append(v.Bindings[:i], v.Bindings[i+1:]...)
				return
			}
		}
	default:
		if c.After != nil && c.After.Binding != nil {
			v.Bindings = append(v.Bindings, c.After.Binding)
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
