package plan

import (
	"slices"

	"github.com/mqctl/mqctl/pkg/kind"
	"github.com/mqctl/mqctl/pkg/topology"
)

// Successor names the queue that takes over from queue c deletes, when
// the plan moves every binding into that queue onto one other queue: the
// same sources, routing keys and arguments, the old bindings deleted (on
// their own, or with the queue) and the new ones made (a queue renamed in
// the file, most often). created
// reports whether the plan also creates that queue. It is "" when c is no
// queue's delete, when the queue had no bindings but its name's on the
// default exchange (nothing tells where its messages would go), or when
// no one queue, or more than one, takes all of them.
func (p *Plan) Successor(c *Change) (name string, created bool) {
	if c.Kind != kind.Queue || c.Action != Delete {
		return "", false
	}
	// The bindings into the queue that go: those the plan deletes on
	// their own (mqctl's), and those that go with it (Bindings).
	old := map[string]bool{}
	into := func(b *topology.Binding, name string) bool {
		return b != nil && b.DestinationType == topology.DestQueue && b.Destination == name
	}
	for _, b := range c.Bindings {
		if into(b, c.Name) {
			old[successorKey(b)] = true
		}
	}
	for i := range p.Changes {
		n := &p.Changes[i]
		if b, ok := n.Before.(BindingObject); ok && n.Action == Delete && n.Vhost == c.Vhost && into(b.Binding, c.Name) {
			old[successorKey(b.Binding)] = true
		}
	}
	if len(old) == 0 {
		return "", false
	}
	// The bindings the plan makes, by the queue they go to.
	made := map[string]map[string]bool{}
	var order []string
	for i := range p.Changes {
		n := &p.Changes[i]
		if n.Kind != kind.Binding || n.Vhost != c.Vhost || n.Action != Create {
			continue
		}
		b, ok := n.After.(BindingObject)
		if !ok || b.Binding == nil || b.DestinationType != topology.DestQueue || b.Destination == c.Name {
			continue
		}
		if made[b.Destination] == nil {
			made[b.Destination] = map[string]bool{}
			order = append(order, b.Destination)
		}
		made[b.Destination][successorKey(b.Binding)] = true
	}
	var found []string
	for _, q := range order {
		covers := true
		for k := range old {
			if !made[q][k] {
				covers = false
				break
			}
		}
		if covers {
			found = append(found, q)
		}
	}
	if len(found) != 1 {
		return "", false
	}
	name = found[0]
	created = slices.ContainsFunc(p.Changes, func(n Change) bool {
		return n.Kind == kind.Queue && n.Vhost == c.Vhost && n.Name == name && n.Action == Create
	})
	return name, created
}

// successorKey is what a binding into a queue is but for the queue: its
// source, routing key and arguments.
func successorKey(b *topology.Binding) string {
	return b.Source + "\x00" + b.RoutingKey + "\x00" + b.Arguments.Canonical()
}
