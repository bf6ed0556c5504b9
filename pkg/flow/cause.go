package flow

import (
	"fmt"
	"slices"

	"github.com/mqctl/mqctl/pkg/route"
	"github.com/mqctl/mqctl/pkg/topology"
)

// routeCause says why message m, which reached queue lost before (result
// before), does not reach it after (result after): the first thing on its
// way there that the change removed, else an exchange on that way that
// picks one destination by a hash of the key and now picks another among
// other destinations, else why nothing on the exchange routes it now.
func (c *vhostCompare) routeCause(m route.Message, before, after route.Result, splits []Split, lost string) string {
	x := m.Exchange
	switch {
	case x != "" && !c.a.exists(x):
		return fmt.Sprintf("exchange %q is deleted", x)
	case !c.a.publishable(x):
		return fmt.Sprintf("exchange %q is now internal: clients cannot publish to it", x)
	case !c.a.hasQueue(lost):
		return fmt.Sprintf("queue %q is deleted", lost)
	}
	if refused, why := c.a.refuses(lost); refused {
		if c.a.deadLettersRefused(m, []string{lost}) {
			why += fmt.Sprintf(" to %s", queues(queuesOf(c.a.sim.DeadLetter(lost, route.MaxLen, m).Result)))
		}
		return fmt.Sprintf("queue %q refuses it: %s", lost, why)
	}
	for _, d := range before.Deliveries {
		if d.Queue != lost {
			continue
		}
		for _, st := range d.Path {
			if cause := c.stepCause(st, m); cause != "" {
				return cause
			}
		}
	}
	for _, sp := range splits {
		if sp.Unsimulated != "" && slices.Contains(sp.Queues, lost) {
			return c.unsimulatedCause(sp.Exchange, lost)
		}
	}
	if cause := repickCause(m, before, after, lost); cause != "" {
		return cause
	}
	return c.noMatch(x, m)
}

// repickCause says that an exchange on the way of message m to queue lost
// (result before) picked it by a hash of the routing key and picks
// another destination after the change (result after), its destinations
// being others: the hash is taken modulo their number, so adding or
// removing one moves keys among the others too. "" when none did.
func repickCause(m route.Message, before, after route.Result, lost string) string {
	var path []route.Step
	for _, d := range before.Deliveries {
		if d.Queue == lost {
			path = d.Path
		}
	}
	for _, cb := range before.OneOf {
		if cb.Picked == nil || !slices.ContainsFunc(path, func(st route.Step) bool { return st.Exchange == cb.Exchange }) {
			continue
		}
		for _, ca := range after.OneOf {
			if ca.Exchange != cb.Exchange || ca.Picked == nil || *ca.Picked == *cb.Picked {
				continue
			}
			return fmt.Sprintf("exchange %q picks one of its destinations by a hash of the routing key, and they are now %s (were %s): the hash of %q picks %s where it picked %s",
				cb.Exchange, queues(targetNames(ca.Among)), queues(targetNames(cb.Among)), m.RoutingKey, targetName(*ca.Picked), targetName(*cb.Picked))
		}
	}
	return ""
}

// targetNames names destinations as targetName does.
func targetNames(ts []route.Target) []string {
	out := make([]string, len(ts))
	for i, t := range ts {
		out[i] = targetName(t)
	}
	return out
}

// targetName names a destination: a queue by its name, an exchange as
// exchange "name".
func targetName(t route.Target) string {
	if t.Type == topology.DestExchange {
		return fmt.Sprintf("exchange %q", t.Name)
	}
	return t.Name
}

// unsimulatedCause says why exchange x, of a type mqctl does not
// simulate, which could lead to queue lost before the change, cannot
// after: the binding on the way that is gone, else the exchange is gone
// or leads elsewhere.
func (c *vhostCompare) unsimulatedCause(x, lost string) string {
	if !c.a.exists(x) {
		return fmt.Sprintf("exchange %q is deleted", x)
	}
	for _, e := range c.b.reach([]string{x}, true) {
		for _, b := range c.b.from[e] {
			if b.DestinationType == topology.DestQueue && b.Destination == lost && !c.a.hasBinding(e, lost, b.DestinationType, b.RoutingKey, b.Arguments, true) {
				return fmt.Sprintf("the binding %s is gone", bindingTo(c.b.kind(e), e, lost, b.RoutingKey, b.Arguments))
			}
		}
	}
	return fmt.Sprintf("exchange %q, of type %s, no longer leads to queue %q", x, c.a.ex[x].declared, lost)
}

// gainCause says why a message reaches queue gained after the change
// (result after) where it did not before, when the queue refused every
// message before or an exchange on its way there changed type; ""
// otherwise.
func (c *vhostCompare) gainCause(after route.Result, gained string) string {
	if refused, why := c.b.refuses(gained); refused && c.a.hasQueue(gained) {
		return fmt.Sprintf("queue %q refused it before the change: %s", gained, why)
	}
	for _, d := range after.Deliveries {
		if d.Queue != gained {
			continue
		}
		for _, st := range d.Path {
			if cause := c.typeCause(st.Exchange); cause != "" {
				return cause
			}
		}
	}
	return ""
}

// typeCause says that exchange e, declared on both sides, changed type;
// "" when it did not.
func (c *vhostCompare) typeCause(e string) string {
	if e == "" || !c.b.exists(e) || !c.a.exists(e) {
		return ""
	}
	if ib, ia := c.b.ex[e], c.a.ex[e]; ib.typ != ia.typ {
		return fmt.Sprintf("exchange %q is now of type %s (was %s)", e, ia.declared, ib.declared)
	}
	return ""
}

// stepCause says what the change removed of step st, "" when nothing.
func (c *vhostCompare) stepCause(st route.Step, m route.Message) string {
	e := st.Exchange
	if st.Via == route.ViaDefault {
		return ""
	}
	if !c.a.exists(e) {
		return fmt.Sprintf("exchange %q is deleted", e)
	}
	if cause := c.typeCause(e); cause != "" {
		return cause
	}
	ia := c.a.ex[e]
	k := c.a.kind(e)
	switch st.Via {
	case route.ViaBinding:
		if !c.a.hasBinding(e, st.To, st.ToType, st.BindingKey, st.BindingArgs, k == ClassHeaders) {
			return fmt.Sprintf("the binding %s is gone", bindingTo(k, e, st.To, st.BindingKey, st.BindingArgs))
		}
	case route.ViaAlternate:
		if ia.hasAE && ia.ae != st.To {
			return fmt.Sprintf("the alternate exchange of exchange %q is now %q (was %q)", e, ia.ae, st.To)
		}
		if !ia.hasAE {
			return fmt.Sprintf("exchange %q no longer has alternate exchange %q", e, st.To)
		}
		if b := c.a.matching(e, m); b != nil {
			return fmt.Sprintf("the binding %s now matches, so its alternate exchange %q is not used", bindingTo(k, e, b.Destination, b.RoutingKey, b.Arguments), st.To)
		}
	}
	if st.ToType == topology.DestExchange && !c.a.exists(st.To) {
		return fmt.Sprintf("exchange %q is deleted", st.To)
	}
	return ""
}

// noMatch says why nothing routes m from exchange x after the change.
func (c *vhostCompare) noMatch(x string, m route.Message) string {
	if x == "" {
		return fmt.Sprintf("no queue is named %q", m.RoutingKey)
	}
	if b := c.a.matching(x, m); b != nil {
		return fmt.Sprintf("what exchange %q routes %s to reaches no queue", x, describe(c.a.kind(x), m))
	}
	info := c.a.ex[x]
	msg := fmt.Sprintf("no binding on %q matches %s", x, describe(c.a.kind(x), m))
	switch {
	case !info.hasAE:
		return msg + " and it has no alternate exchange"
	case !c.a.exists(info.ae):
		return msg + fmt.Sprintf(" and its alternate exchange %q is not declared", info.ae)
	}
	return msg + fmt.Sprintf(", nor does its alternate exchange %q route it to a queue", info.ae)
}

// describe renders what an exchange of kind k routes m by.
func describe(k string, m route.Message) string {
	switch k {
	case ClassHeaders:
		if len(m.Headers) == 0 {
			return "a message without headers"
		}
		return "headers " + topology.Args(m.Headers).Canonical()
	case ClassFanout, ClassOther:
		return "the message"
	}
	return fmt.Sprintf("%q", m.RoutingKey)
}

// bindingFrom renders a binding of exchange x (of kind k) by its source
// and what it matches: `from "x" with key "k"`.
func bindingFrom(k, x, key string, args topology.Args) string {
	return fmt.Sprintf("from %q", x) + bindingMatch(k, key, args)
}

// bindingTo renders a binding of exchange x (of kind k) by its source,
// its destination and what it matches: `from "x" to "q" with key "k"`.
func bindingTo(k, x, dest, key string, args topology.Args) string {
	return fmt.Sprintf("from %q to %q", x, dest) + bindingMatch(k, key, args)
}

// bindingMatch renders what a binding of an exchange of kind k matches:
// its key or its arguments ("" for a fanout binding without key).
func bindingMatch(k, key string, args topology.Args) string {
	switch {
	case k == ClassHeaders:
		return " with arguments " + args.Canonical()
	case k == ClassFanout && key == "":
		return ""
	}
	return fmt.Sprintf(" with key %q", key)
}

// hasBinding reports whether side s routes exchange x by a binding to
// (destType, dest) with key key (and arguments args, withArgs).
func (s *side) hasBinding(x, dest, destType, key string, args topology.Args, withArgs bool) bool {
	for _, b := range s.bindings(x) {
		if b.Destination == dest && b.DestinationType == destType && b.RoutingKey == key && (!withArgs || argsEqual(b.Arguments, args)) {
			return true
		}
	}
	return false
}

// matching returns a binding of exchange x that message m matches on side
// s, nil when none does.
func (s *side) matching(x string, m route.Message) *topology.Binding {
	k := s.kind(x)
	for _, b := range s.bindings(x) {
		var ok bool
		switch k {
		case ClassTopic:
			ok = route.TopicMatch(b.RoutingKey, m.RoutingKey)
		case ClassDirect, ClassDefault:
			ok = b.RoutingKey == m.RoutingKey
		case ClassHeaders:
			ok, _ = route.HeadersMatch(b.Arguments, m.Headers, s.sim.Version())
		default:
			ok = true
		}
		if ok {
			return b
		}
	}
	return nil
}
