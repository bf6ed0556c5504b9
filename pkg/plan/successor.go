package plan

import (
	"fmt"

	"github.com/mqctl/mqctl/internal/shell"
	"github.com/mqctl/mqctl/pkg/kind"
	"github.com/mqctl/mqctl/pkg/topology"
)

// Successors returns a function that names the queue taking over from a
// queue the plan deletes, when the plan moves every binding into that
// queue onto one other queue: the same sources, routing keys and
// arguments, the old bindings deleted (on their own, or with the queue)
// and the new ones made (a queue renamed in the file, most often).
// created reports whether the plan also creates that queue. It answers ""
// for a change that is no queue's delete, for a queue that had no
// bindings but its name's on the default exchange (nothing tells where its
// messages would go), and where no one queue, or more than one, takes all
// of them. The plan's bindings are indexed once, on the first call: a
// teardown that deletes thousands of queues holding messages asks for
// each.
func (p *Plan) Successors() func(c *Change) (name string, created bool) {
	var idx *successorIndex
	return func(c *Change) (string, bool) {
		if c.Kind != kind.Queue || c.Action != Delete {
			return "", false
		}
		if idx == nil {
			idx = newSuccessorIndex(p)
		}
		return idx.of(c)
	}
}

type queueKey struct{ vhost, name string }

// successorIndex is what Successors looks at, indexed.
type successorIndex struct {
	// gone are the bindings into each queue that the plan deletes on
	// their own (by successorKey).
	gone map[queueKey][]string
	// made are the queues that the plan makes a binding into, by the
	// vhost and successorKey of the binding; to, the keys made into each.
	made map[queueKey][]string
	to   map[queueKey]map[string]bool
	// created are the queues the plan creates.
	created map[queueKey]bool
}

func newSuccessorIndex(p *Plan) *successorIndex {
	x := &successorIndex{gone: map[queueKey][]string{}, made: map[queueKey][]string{}, to: map[queueKey]map[string]bool{}, created: map[queueKey]bool{}}
	for i := range p.Changes {
		n := &p.Changes[i]
		switch {
		case n.Kind == kind.Queue && n.Action == Create:
			x.created[queueKey{n.Vhost, n.Name}] = true
		case n.Kind != kind.Binding:
		case n.Action == Delete:
			if b, ok := n.Before.(BindingObject); ok && intoQueue(b.Binding) {
				q := queueKey{n.Vhost, b.Destination}
				x.gone[q] = append(x.gone[q], successorKey(b.Binding))
			}
		case n.Action == Create:
			if b, ok := n.After.(BindingObject); ok && intoQueue(b.Binding) {
				q, k := queueKey{n.Vhost, b.Destination}, successorKey(b.Binding)
				if x.to[q] == nil {
					x.to[q] = map[string]bool{}
				}
				x.to[q][k] = true
				byKey := queueKey{n.Vhost, k}
				x.made[byKey] = append(x.made[byKey], b.Destination)
			}
		}
	}
	return x
}

// of answers for c, a queue's delete.
func (x *successorIndex) of(c *Change) (string, bool) {
	var old []string
	for _, b := range c.Bindings {
		if intoQueue(b) && b.Destination == c.Name {
			old = append(old, successorKey(b))
		}
	}
	old = append(old, x.gone[queueKey{c.Vhost, c.Name}]...)
	if len(old) == 0 {
		return "", false
	}
	// The candidates are the queues a binding like the first is made
	// into; the one that takes them all, if only one does.
	found := ""
	for _, q := range x.made[queueKey{c.Vhost, old[0]}] {
		if q == c.Name || q == found {
			continue
		}
		keys := x.to[queueKey{c.Vhost, q}]
		covers := true
		for _, k := range old[1:] {
			if !keys[k] {
				covers = false
				break
			}
		}
		if !covers {
			continue
		}
		if found != "" {
			return "", false
		}
		found = q
	}
	if found == "" {
		return "", false
	}
	return found, x.created[queueKey{c.Vhost, found}]
}

func intoQueue(b *topology.Binding) bool {
	return b != nil && b.DestinationType == topology.DestQueue
}

// successorKey is what a binding into a queue is but for the queue: its
// source, routing key and arguments.
func successorKey(b *topology.Binding) string {
	return b.Source + "\x00" + b.RoutingKey + "\x00" + b.Arguments.Canonical()
}

// MoveAdvice is the way to keep the messages of the queue change c
// deletes when the plan moves all its bindings onto queue to (created: a
// queue the plan creates; Successors), as a rename in the file does: move
// them there first with mqctl's own replay, which removes each only once
// the broker has confirmed its copy.
func MoveAdvice(c Change, to string, created bool) string {
	move := fmt.Sprintf("mqctl dlq replay %s --vhost %s --to-exchange '' --routing-key %s", shell.Quote(c.Name), shell.Quote(c.Vhost), shell.Quote(to))
	stop := ""
	if c.Consumers > 0 {
		stop = "stop its consumers, "
	}
	if created {
		return fmt.Sprintf("its bindings move to queue %q, which this plan creates: to keep its messages, %sapply once with both queues in the file, move the messages across (%s), then apply this file", to, stop, move)
	}
	return fmt.Sprintf("its bindings move to queue %q: to keep its messages, %smove them across first (%s), then apply", to, stop, move)
}
