package engine

import (
	"context"
	"fmt"
	"maps"
	"slices"

	"github.com/mqctl/mqctl/pkg/kind"
	"github.com/mqctl/mqctl/pkg/plan"
	"github.com/mqctl/mqctl/pkg/rmqversion"
	"github.com/mqctl/mqctl/pkg/topology"
)

// checkClientQueues refuses, before anything changes, what p would write
// to a client's exclusive queue: a queue it creates that the broker holds
// as one, and a binding it creates to one. A state read leaves exclusive
// queues out (a client's own, gone with its connection), so the plan
// showed such a queue, or a binding the client made to it, as one to
// create, and apply stopped there, the changes before it made: only the
// connection that declared an exclusive queue may declare or bind it
// (measured on 4.3.6, 4.0.5 and 3.10.8: the management API answers 400
// "cannot obtain exclusive access to locked queue"). A file gets such a
// binding from mqctl export --from a definitions export of RabbitMQ
// 4.3.3+, which leaves exclusive queues out and keeps their bindings
// (rmqversion StreamsDefinitions), or from a team declaring what an
// application declares for itself. The broker is asked only about the
// queues the plan would write that the state read lacks.
func (e *Engine) checkClientQueues(ctx context.Context, p *plan.Plan, version rmqversion.Version, desired *topology.Topology, l *Live) error {
	asked := map[string]map[string]bool{} // vhost -> queue names to ask about
	ask := func(vhost, q string) {
		if v := l.current.State.Vhosts[vhost]; v == nil || v.Queues[q] != nil || topology.IsReservedName(q) {
			return // a vhost the apply creates has none; a queue read is not exclusive
		}
		if _, unread := l.current.UnreadKind(vhost, kind.Queue); unread {
			return
		}
		if asked[vhost] == nil {
			asked[vhost] = map[string]bool{}
		}
		asked[vhost][q] = true
	}
	for _, c := range p.Changes {
		switch {
		case c.Action != plan.Create:
		case c.Kind == kind.Queue:
			ask(c.Vhost, c.Name)
		case c.Kind == kind.Binding:
			if b, ok := c.After.(plan.BindingObject); ok && b.Binding != nil && b.DestinationType == topology.DestQueue {
				ask(c.Vhost, b.Destination)
			}
		}
	}
	var out []rmqversion.Refusal
	for _, vh := range slices.Sorted(maps.Keys(asked)) {
		exclusive, err := e.c.ExclusiveQueues(ctx, vh, slices.Sorted(maps.Keys(asked[vh])))
		if err != nil {
			return err
		}
		if len(exclusive) == 0 {
			continue
		}
		holders := map[string]string{}
		holder := func(q string) string {
			if h, ok := holders[q]; ok {
				return h
			}
			h := e.c.QueueHolder(ctx, vh, q)
			if h == "" {
				h = "a client's connection"
			}
			holders[q] = h
			return h
		}
		v := desired.Vhosts[vh]
		for _, c := range p.Changes {
			if c.Vhost != vh || c.Action != plan.Create {
				continue
			}
			switch c.Kind {
			case kind.Queue:
				if !exclusive[c.Name] {
					continue
				}
				var pos topology.Pos
				if v != nil && v.Queues[c.Name] != nil {
					pos = v.Queues[c.Name].Pos
				}
				out = append(out, rmqversion.Refusal{Vhost: vh, Object: fmt.Sprintf("queue %q", c.Name), Key: "declare", Pos: pos,
					Reason: fmt.Sprintf("the broker holds it as an exclusive queue of %s, which only that connection may declare (any other gets HTTP 400 \"cannot obtain exclusive access to locked queue\") and which goes with that connection", holder(c.Name)),
					Fix:    "leave it out of the file: the client declares its own queue, and binds it, each time it connects"})
			case kind.Binding:
				b, ok := c.After.(plan.BindingObject)
				if !ok || b.Binding == nil || b.DestinationType != topology.DestQueue || !exclusive[b.Destination] {
					continue
				}
				out = append(out, rmqversion.Refusal{Vhost: vh, Object: fmt.Sprintf("binding from %q to queue %q", b.Source, b.Destination), Key: fmt.Sprintf("routing key %q", b.RoutingKey), Pos: b.Pos,
					Reason: fmt.Sprintf("the broker holds queue %q as an exclusive queue of %s, which only that connection may bind (any other gets HTTP 400 \"cannot obtain exclusive access to locked queue\")", b.Destination, holder(b.Destination)),
					Fix:    "remove the binding from the file: the client binds its own queue each time it connects"})
			}
		}
	}
	if len(out) == 0 {
		return nil
	}
	return &rmqversion.RefusalsError{Version: version, Refusals: out}
}
