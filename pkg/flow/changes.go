package flow

import (
	"github.com/mqctl/mqctl/pkg/topology"
)

// exchangeChange is how one exchange routes differently after the change
// than before, apart from where its destinations lead.
type exchangeChange struct {
	// same is true when the exchange exists on both sides or neither,
	// with the same routing type and alternate exchange.
	same bool
	// changed are the bindings it routes by on one side only (where it
	// exists on both): added, removed, or whose destination is declared
	// on one side only.
	changed []*topology.Binding
}

// exchangeChange returns (and remembers) how exchange x changes.
func (c *vhostCompare) exchangeChange(x string) *exchangeChange {
	if ch, ok := c.exchanges[x]; ok {
		return ch
	}
	ch := &exchangeChange{}
	switch {
	case x == "":
		ch.same = true
		ch.changed = c.queuesOnOneSide()
	case c.b.exists(x) != c.a.exists(x):
	case !c.b.exists(x):
		ch.same = true
	default:
		ib, ia := c.b.ex[x], c.a.ex[x]
		ch.same = ib.typ == ia.typ && ib.declared == ia.declared && ib.hasAE == ia.hasAE && ib.ae == ia.ae
		if ch.same {
			// Where the simulator does not simulate the type, its
			// bindings still say where it can route (side.reached).
			ch.changed = bindingsOnOneSide(c.b.from[x], c.a.from[x])
			// A binding into a queue that now refuses every message, or
			// no longer does, routes where it did, but what it routes is
			// refused or kept otherwise.
			for _, b := range c.b.from[x] {
				if b.DestinationType == topology.DestQueue && c.refusesNow(b.Destination) {
					ch.changed = append(ch.changed, b)
				}
			}
		}
	}
	c.exchanges[x] = ch
	return ch
}

// bindingsOnOneSide returns the bindings of either sorted list that the
// other lacks.
func bindingsOnOneSide(bs, as []*topology.Binding) []*topology.Binding {
	return append(bindingsOnlyIn(bs, as), bindingsOnlyIn(as, bs)...)
}

// bindingsOnlyIn merges two sorted binding lists and returns those of bs
// that as lacks (a binding twice in bs and once in as counts once).
func bindingsOnlyIn(bs, as []*topology.Binding) []*topology.Binding {
	var out []*topology.Binding
	i, j := 0, 0
	for i < len(bs) {
		d := -1
		if j < len(as) {
			d = topology.CompareBindings(bs[i], as[j])
		}
		switch {
		case d == 0:
			i++
			j++
		case d < 0:
			out = append(out, bs[i])
			i++
		default:
			j++
		}
	}
	return out
}

// queuesOnOneSide returns the default exchange's bindings to the queues
// declared on one side only, and to those declared on both that refuse
// every message on one side only: the routing keys that reach a queue on
// one side and nothing on the other.
func (c *vhostCompare) queuesOnOneSide() []*topology.Binding {
	var out []*topology.Binding
	for _, pair := range [2][2]*side{{c.b, c.a}, {c.a, c.b}} {
		for n, q := range pair[0].v.Queues {
			if q != nil && (!pair[1].hasQueue(n) || (pair[0] == c.b && c.refusesNow(n))) {
				out = append(out, &topology.Binding{Destination: n, DestinationType: topology.DestQueue, RoutingKey: n})
			}
		}
	}
	return out
}

// queueSame reports whether queue q, declared as qb before and qa
// after, is declared alike, with the same policies in force: its
// effective settings are then the same.
func (c *vhostCompare) queueSame(qb, qa *topology.Queue) bool {
	return c.policiesSame && (qb == qa || (qb.Type == qa.Type && argsEqual(qb.Arguments, qa.Arguments)))
}

// argsEqual reports whether two argument tables hold equal values,
// without rendering them.
func argsEqual(a, b topology.Args) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		w, ok := b[k]
		if !ok || !topology.ValueEqual(v, w) {
			return false
		}
	}
	return true
}

// policiesEqual reports whether two sets of policies are the same.
func policiesEqual(a, b map[string]*topology.Policy) bool {
	if len(a) != len(b) {
		return false
	}
	for n, p := range a {
		q := b[n]
		if (p == nil) != (q == nil) {
			return false
		}
		if p != nil && (p.Pattern != q.Pattern || p.ApplyTo != q.ApplyTo || p.Priority != q.Priority || !argsEqual(p.Definition, q.Definition)) {
			return false
		}
	}
	return true
}
