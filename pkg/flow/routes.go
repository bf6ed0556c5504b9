package flow

import (
	"slices"
	"sort"

	"github.com/mqctl/mqctl/pkg/route"
)

// routes adds the classes of messages published to each exchange of the
// vhost that reach other queues after the change than before.
func (c *vhostCompare) routes() {
	for _, x := range c.exchangeNames() {
		pb, pa := c.b.publishable(x), c.a.publishable(x)
		if !pb && !pa {
			continue // internal, or missing, on both sides
		}
		f := c.flow(startIf(pb, x), startIf(pa, x))
		if f.identical {
			continue
		}
		classes, truncated := c.classes(f, classRequest{keys: f.keyRouted, pruneKeys: f.keysOnly, pruneHeaders: f.headersOnly, skip: publishSkip, memo: "publish"})
		if truncated {
			c.truncate(x)
		}
		for _, cl := range classes {
			c.route(x, cl)
		}
	}
}

// startIf is x when ok, else noExchange.
func startIf(ok bool, x string) string {
	if ok {
		return x
	}
	return noExchange
}

// exchangeNames returns the exchanges of either side, the default
// exchange ("") first, then sorted.
func (c *vhostCompare) exchangeNames() []string {
	seen := map[string]bool{}
	for _, s := range []*side{c.b, c.a} {
		for x := range s.ex {
			seen[x] = true
		}
	}
	names := mapKeys(seen)
	sort.Strings(names)
	return append([]string{""}, names...)
}

// route publishes class cl's representative to exchange x on both sides
// and adds a Route when it reaches other queues.
func (c *vhostCompare) route(x string, cl msgClass) {
	m := route.Message{Exchange: x, RoutingKey: cl.key, Headers: cl.headers}
	rb, ra := c.b.sim.Publish(m), c.a.sim.Publish(m)
	before, after := queuesOf(rb), queuesOf(ra)
	if slices.Equal(before, after) {
		return
	}
	r := Route{Vhost: c.vhost, Exchange: x, Class: c.class(x, cl), Before: before, After: after,
		Gained: minus(after, before), Lost: minus(before, after)}
	r.Loses = len(before) > 0 && len(after) == 0
	if len(r.Lost) > 0 {
		r.Cause = c.routeCause(m, rb, r.Lost[0])
	}
	c.d.Routes = append(c.d.Routes, r)
}

// class renders cl as a Class of exchange x's kind (after the change,
// or before when x is gone).
func (c *vhostCompare) class(x string, cl msgClass) Class {
	k := c.a.kind(x)
	if x != "" && !c.a.exists(x) {
		k = c.b.kind(x)
	}
	return Class{Kind: k, RoutingKey: cl.key, Headers: cl.headers, Matches: cl.matches}
}

// queuesOf returns the queues r reaches, sorted; nil for none.
func queuesOf(r route.Result) []string {
	if len(r.Deliveries) == 0 {
		return nil
	}
	return r.Queues()
}

// minus returns the elements of sorted a that sorted b lacks; nil for
// none.
func minus(a, b []string) []string {
	var out []string
	for _, x := range a {
		if _, found := slices.BinarySearch(b, x); !found {
			out = append(out, x)
		}
	}
	return out
}
