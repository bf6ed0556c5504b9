package lint

import (
	"fmt"
	"strings"

	"github.com/mqctl/mqctl/pkg/route"
	"github.com/mqctl/mqctl/pkg/topology"
)

// caught is what takes a queue's dead letters beside its own DLQ.
type caught struct {
	// Bindings are the bindings into other queues its dead letters
	// follow (the last step of each route the simulation took), but for
	// those marked `# mqctl:ignore MQ104`, collectors by intent, which
	// Ignored counts.
	Bindings []*topology.Binding
	Ignored  int
}

// catchers returns what takes the dead letters of queue name beside its
// own DLQ, when the queue already does its part: it sets a dead-letter
// routing key no other queue sends to the same exchange, and its dead
// letters reach a DLQ of its own (declared for it, or bound with exactly
// that key). false otherwise: then the queue's own key is the fix
// (runDLCrossDelivered).
func (p *Pass) catchers(name string, d *dlInfo) (caught, bool) {
	var c caught
	if !d.HasDLRK || p.dlrkShared(name, d) {
		return c, false
	}
	var own bool
	seen := map[*topology.Binding]bool{}
	for _, r := range d.Routes {
		for _, del := range r.Route.Result.Deliveries {
			tq := p.Vhost.Queues[del.Queue]
			if tq == nil || len(del.Path) == 0 || p.isDelay(del.Queue) || del.Queue == name {
				continue // dead letters back in their own queue are MQ105's
			}
			last := del.Path[len(del.Path)-1]
			b := p.bindingOf(last)
			switch {
			case tq.Origin == name || (tq.Origin == "" && last.Exchange == d.Exchange && last.BindingKey == d.DLRK):
				own = true
			case b == nil || seen[b]:
			case b.Meta.Ignores("MQ104") || b.Meta.Ignores("dead-letters-cross-delivered"):
				seen[b] = true
				c.Ignored++
			default:
				seen[b] = true
				c.Bindings = append(c.Bindings, b)
			}
		}
	}
	return c, own && len(c.Bindings)+c.Ignored > 0
}

// dlrkShared reports whether another queue dead-letters to the exchange
// of queue name with the same routing key. Counted once per vhost
// (facts.dlrkSenders): a scan of every queue for each one cost a
// 10,002-object lint some 370 ms (5,000 queues, 25 million comparisons).
func (p *Pass) dlrkShared(name string, d *dlInfo) bool {
	return d.HasDLRK && p.dlrkSenders[[2]string{d.Exchange, d.DLRK}] > 1
}

// bindingOf returns the binding into a queue that step s of a route
// followed, or nil.
func (p *Pass) bindingOf(s route.Step) *topology.Binding {
	for _, b := range p.into[s.To] {
		if b.Source == s.Exchange && b.RoutingKey == s.BindingKey {
			return b
		}
	}
	return nil
}

// caughtBy groups, by binding, the queues whose dead letters, sent with
// their own key to their own DLQ, the binding also takes.
type caughtBy struct {
	order  []*topology.Binding
	queues map[*topology.Binding][]string
}

// caughtGroups returns, for each binding that takes the dead letters of
// queues that do their part (catchers), those queues, but for the ones
// marked `# mqctl:ignore MQ104` themselves.
func (p *Pass) caughtGroups() caughtBy {
	g := caughtBy{queues: map[*topology.Binding][]string{}}
	for _, name := range p.queueNames {
		d := p.dl[name]
		q := p.Vhost.Queues[name]
		if d == nil || d.Missing || p.isDelay(name) || q.Meta.Ignores("MQ104") || q.Meta.Ignores("dead-letters-cross-delivered") {
			continue
		}
		cs, own := p.catchers(name, d)
		if !own {
			continue
		}
		for _, b := range cs.Bindings {
			if g.queues[b] == nil {
				g.order = append(g.order, b)
			}
			g.queues[b] = append(g.queues[b], name)
		}
	}
	return g
}

// shared reports whether binding b takes the dead letters of more than one
// queue: then it has a finding of its own.
func (g caughtBy) shared(b *topology.Binding) bool { return len(g.queues[b]) > 1 }

// alone returns the bindings of bs that take the dead letters of one queue
// only.
func (g caughtBy) alone(bs []*topology.Binding) []*topology.Binding {
	var out []*topology.Binding
	for _, b := range bs {
		if !g.shared(b) {
			out = append(out, b)
		}
	}
	return out
}

// findings are MQ104's findings on the bindings that take the dead letters
// of several queues: one each, naming the queues, with one fix.
func (g caughtBy) findings(p *Pass) []Finding {
	var out []Finding
	for _, b := range g.order {
		names := g.queues[b]
		if len(names) < 2 {
			continue
		}
		var keys []string
		seen := map[string]bool{} // of keys: a fanout DLX's binding takes thousands
		exch := map[string]bool{}
		var first *dlInfo
		for _, n := range names {
			d := p.dl[n]
			if first == nil {
				first = d
			}
			exch[d.Exchange] = true
			if !seen[d.DLRK] {
				seen[d.DLRK] = true
				keys = append(keys, d.DLRK)
			}
		}
		to := "to their dead-letter exchanges"
		if len(exch) == 1 {
			to = "to " + exchangeLabel(first.Exchange)
		}
		out = append(out, p.bindingFinding(b,
			"binding %s also takes the dead letters of %d queues (%s): each sends them %s with its own routing key (%s), which its DLQ is bound with, and the binding's key %q matches them too. "+
				"A failure in one consumer shows up beside other queues' failures, and replaying a DLQ delivers messages to consumers that never saw them. %s",
			bindingName(b), len(names), queuesList(names), to, joinOrQuoted(keys), b.RoutingKey, p.catcherFix(keys, b)))
	}
	return out
}

// caughtMessage is MQ104's message for queue name whose dead letters, sent
// with its own key to its own DLQ, bindings cs also take.
func (p *Pass) caughtMessage(name string, d *dlInfo, settled []string, cs []*topology.Binding) string {
	var named, fixes []string
	for _, b := range cs {
		named = append(named, "binding "+bindingName(b))
		fixes = append(fixes, p.catcherFix([]string{d.DLRK}, b))
	}
	verb := "matches"
	if len(cs) > 1 {
		verb = "match"
	}
	return fmt.Sprintf("dead letters of queue %q reach %d queues (%s): the queue sends them to %s with its own routing key %q, which its DLQ is bound with, and %s also %s that key. "+
		"A failure in one consumer shows up beside other queues' failures, and replaying a DLQ delivers messages to consumers that never saw them. %s",
		name, len(settled), queuesList(settled), exchangeLabel(d.Exchange), d.DLRK, joinOr(named), verb, strings.Join(fixes, " "))
}

// catcherFix says what to do about binding b, which takes dead letters
// sent with keys (each a queue's own) beside their DLQs.
func (p *Pass) catcherFix(keys []string, b *topology.Binding) string {
	matched := joinOrQuoted(keys)
	origin := p.Vhost.Queues[b.Destination].Origin
	if od := p.dl[origin]; od != nil && od.HasDLRK && od.DLRK == b.RoutingKey && hasWildcard(b.RoutingKey) && p.exchangeType(b.Source) == "topic" {
		return fmt.Sprintf("Queue %s is the DLQ of queue %q, bound with that queue's dead-letter routing key %q (%s), and on a topic exchange * and # are wildcards: the key is a pattern that also matches %s. "+
			"Give queue %q a dead-letter routing key without wildcard words (dead_letter.routing_key; dead_letter.queue binds its DLQ with it), or dead-letter it to a direct exchange, where keys match exactly.",
			b.Destination, origin, b.RoutingKey, keyOrigin(origin, od), matched, origin)
	}
	return fmt.Sprintf("Narrow the key of binding %s so that it no longer matches %s, or remove the binding; if queue %s is meant to collect every dead letter it matches, that is fine: mark the binding with `# mqctl:ignore MQ104`, which silences this for each queue whose dead letters it collects.",
		bindingName(b), matched, b.Destination)
}

// keyOrigin says where queue q's dead-letter routing key comes from.
func keyOrigin(q string, d *dlInfo) string {
	if d.DLRK == q {
		return "its name, which dead_letter takes as the key by default"
	}
	return "set by dead_letter.routing_key or x-dead-letter-routing-key"
}
