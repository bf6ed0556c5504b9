package engine

import (
	"context"
	"fmt"
	"strings"

	"github.com/mqctl/mqctl/pkg/plan"
	"github.com/mqctl/mqctl/pkg/topology"
)

// unrestored lists, for each exchange p replaces, the bindings (from the
// broker: bindingsOf) that its replace takes down and apply cannot put
// back: those to queues the state read leaves out, exclusive queues (only
// the connection that declared one may bind it: the management API
// answers 400 "cannot obtain exclusive access to locked queue") and
// server-named ones, never managed. They are a client's own (a
// subscriber's or a reply queue), the plan does not list them among the
// bindings the replace restores, and once the exchange is declared again
// the messages they matched reach no queue until the client binds again
// (measured on 4.3.6: a subscriber's exclusive queue bound to an exchange
// whose type changed received nothing after the apply).
func unrestored(ctx context.Context, p *plan.Plan, cur *topology.Topology, bindingsOf func(ctx context.Context, vhost, exchange string) ([]*topology.Binding, error)) ([]string, error) {
	var out []string
	for i := range p.Changes {
		c := &p.Changes[i]
		if c.Kind != plan.KindExchange || c.Action != plan.Replace {
			continue
		}
		bs, err := bindingsOf(ctx, c.Vhost, c.Name)
		if err != nil {
			return nil, err
		}
		v := cur.Vhosts[c.Vhost]
		var lost []string
		for _, b := range bs {
			if b.DestinationType != topology.DestQueue || (v != nil && v.Queues[b.Destination] != nil) {
				continue
			}
			lost = append(lost, plan.BindingName(b))
		}
		if len(lost) == 0 {
			continue
		}
		what := "bindings"
		if len(lost) == 1 {
			what = "binding"
		}
		out = append(out, fmt.Sprintf("exchange %q in vhost %q is replaced, which takes down %d %s to exclusive or server-named queues (a client's own, which only its connection may bind: apply restores none of them): %s; the messages they match reach no queue until the clients bind again",
			c.Name, c.Vhost, len(lost), what, strings.Join(lost, ", ")))
	}
	return out, nil
}

// readUnrestoredLosses is the replaced exchanges' bindings apply cannot
// restore (unrestored), all refused.
func (e *Engine) readUnrestoredLosses(ctx context.Context, p *plan.Plan, cur *topology.Topology, _ inspectFunc) (refused, told []string, err error) {
	refused, err = unrestored(ctx, p, cur, e.c.SourceBindings)
	return refused, nil, err
}

// deletedWith lists, for each exchange p deletes, the bindings out of it
// the broker deletes with it that mqctl did not make and that no file of
// any owner declares (plan.BindingsDeletedWith): a queue made by hand or
// by an application, bound to an exchange a team's file dropped (measured
// on 4.3.6: binding orders -> queue hand.q went with exchange orders, and
// the plan counted it among the unmanaged objects left alone).
func deletedWith(p *plan.Plan) []string {
	var out []string
	lost := p.BindingsDeletedWith()
	for i := range p.Changes {
		bs := lost[i]
		if len(bs) == 0 {
			continue
		}
		c := &p.Changes[i]
		names := make([]string, len(bs))
		for j, b := range bs {
			names[j] = plan.BindingName(b)
		}
		what, them := "bindings", "they match no longer reach their destinations"
		if len(bs) == 1 {
			what, them = "binding", "it matches no longer reach its destination"
		}
		out = append(out, fmt.Sprintf("exchange %q in vhost %q is deleted, which deletes with it %d %s that mqctl did not make and no file declares (made by hand or by an application): %s; the messages %s",
			c.Name, c.Vhost, len(bs), what, strings.Join(names, ", "), them))
	}
	return out
}

// readDeletedWithLosses is the deleted exchanges' bindings mqctl did not
// make (deletedWith), all refused.
func (e *Engine) readDeletedWithLosses(_ context.Context, p *plan.Plan, _ *topology.Topology, _ inspectFunc) (refused, told []string, err error) {
	return deletedWith(p), nil, nil
}
