package engine

import (
	"context"
	"fmt"
	"strings"

	"github.com/mqctl/mqctl/pkg/kind"
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
		if c.Kind != kind.Exchange || c.Action != plan.Replace {
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

// deletedWith lists, for each exchange p deletes, what mqctl did not make
// and no file of any owner declares (made by hand or by an application)
// that loses its way with it: the bindings out of it the broker deletes
// with it (plan.BindingsDeletedWith; measured on 4.3.6: binding orders ->
// queue hand.q went with exchange orders, and the plan counted it among
// the unmanaged objects left alone), and the objects of cur that send
// messages to it (plan.Senders: a hand-made queue dead-lettering to it,
// whose dead letters are dropped from then on).
func deletedWith(p *plan.Plan, cur *topology.Topology) []string {
	var out []string
	lost := p.BindingsDeletedWith()
	unmanaged := map[plan.ObjectRef]bool{}
	for _, r := range p.Unmanaged {
		unmanaged[r] = true
	}
	senders := map[string][]plan.Sender{}
	for i := range p.Changes {
		c := &p.Changes[i]
		if c.Action != plan.Delete || c.Kind != kind.Exchange {
			continue
		}
		if _, ok := senders[c.Vhost]; !ok && cur != nil && cur.Vhosts[c.Vhost] != nil {
			senders[c.Vhost] = plan.Senders(c.Vhost, cur.Vhosts[c.Vhost])
		}
		var parts []string
		if bs := lost[i]; len(bs) > 0 {
			names := make([]string, len(bs))
			for j, b := range bs {
				names[j] = plan.BindingName(b)
			}
			what, them := "bindings", "they match no longer reach their destinations"
			if len(bs) == 1 {
				what, them = "binding", "it matches no longer reach its destination"
			}
			parts = append(parts, fmt.Sprintf("the broker deletes with it %d %s: %s; the messages %s", len(bs), what, strings.Join(names, ", "), them))
		}
		var sending []string
		for _, s := range senders[c.Vhost] {
			if s.To == c.Name && unmanaged[s.Ref] {
				sending = append(sending, s.String())
			}
		}
		if len(sending) > 0 {
			parts = append(parts, fmt.Sprintf("%s, %s messages to it, dropped once it is gone", strings.Join(sending, "; "), plural("sends", "send", len(sending))))
		}
		if len(parts) == 0 {
			continue
		}
		out = append(out, fmt.Sprintf("exchange %q in vhost %q is deleted, and what mqctl did not make and no file declares (made by hand or by an application) loses its way: %s",
			c.Name, c.Vhost, strings.Join(parts, "; and ")))
	}
	return out
}

// plural is one for n == 1, many otherwise.
func plural(one, many string, n int) string {
	if n == 1 {
		return one
	}
	return many
}

// readDeletedWithLosses is what the deleted exchanges take down that mqctl
// did not make (deletedWith), all refused.
func (e *Engine) readDeletedWithLosses(_ context.Context, p *plan.Plan, cur *topology.Topology, _ inspectFunc) (refused, told []string, err error) {
	return deletedWith(p, cur), nil, nil
}
