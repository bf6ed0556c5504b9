package flow

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/mqctl/mqctl/pkg/route"
	"github.com/mqctl/mqctl/pkg/topology"
)

// routes adds the classes of messages published to each exchange of the
// vhost that reach other queues after the change than before.
func (c *vhostCompare) routes() {
	for _, x := range c.exchangeNames() {
		pb, pa := c.b.publishable(x), c.a.publishable(x)
		switch {
		case !pb && !pa:
			continue // internal, or missing, on both sides
		case x == "":
			c.defaultRoutes()
			continue
		case pb != pa:
			c.wholeExchange(x, pb)
			continue
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
			c.route(x, f, cl)
		}
	}
}

// defaultRoutes adds the routes of the default exchange: a key reaches
// the queue of that name, so the classes that move are the names of the
// queues declared on one side only, and of those declared on both that
// refuse every message (side.refuses) on one side only, each its own
// class (at most MaxClasses of them, the first by name). They are found
// by comparing the two sides' queue names, not enumerated from patterns:
// a teardown of 25,000 queues would otherwise build an automaton over
// every name. A queue that refuses every message is reached by no key.
func (c *vhostCompare) defaultRoutes() {
	var names []string
	for _, sides := range [][2]*side{{c.b, c.a}, {c.a, c.b}} {
		for q, v := range sides[0].v.Queues {
			if v != nil && !sides[1].hasQueue(q) {
				names = append(names, q)
			}
		}
	}
	for q := range c.b.v.Queues {
		if c.refusesNow(q) {
			names = append(names, q)
		}
	}
	sort.Strings(names)
	if len(names) > c.max {
		u := Unlisted{Vhost: c.vhost}
		for _, q := range names[c.max:] {
			if c.b.hasQueue(q) {
				u.Deleted++
			} else {
				u.New++
			}
		}
		c.d.Unlisted = append(c.d.Unlisted, u)
		names = names[:c.max]
		c.truncate("")
	}
	for _, q := range names {
		before, after := c.b.reachedByName(q), c.a.reachedByName(q)
		if before == nil && after == nil {
			continue // refused on one side, not declared on the other
		}
		r := Route{Vhost: c.vhost, Class: Class{Kind: ClassDefault, RoutingKey: q, Matches: []string{keyText(q, true)}}, Before: before, After: after}
		m := route.Message{RoutingKey: q, Many: true}
		switch {
		case before != nil:
			r.Loses = !c.a.deadLettersRefused(m, before)
			r.Cause = c.routeCause(m, route.Result{}, route.Result{}, nil, q)
		case c.b.hasQueue(q):
			r.Cause = c.gainCause(route.Result{}, q)
		}
		c.d.Routes = append(c.d.Routes, r)
	}
}

// reachedByName returns the queue a message published to the default
// exchange with key q reaches on side s: q, unless s does not declare it
// or it refuses every message (nil).
func (s *side) reachedByName(q string) []string {
	if !s.hasQueue(q) {
		return nil
	}
	if refused, _ := s.refuses(q); refused {
		return nil
	}
	return []string{q}
}

// wholeExchange adds the one route of exchange x when clients can publish
// to it on one side only (before when onBefore): every message published
// to it changes alike, from the queues it could reach to none (publishing
// to a deleted or internal exchange fails), or the other way. The classes
// of its keys are not enumerated: they would all say the same, and a
// teardown would build an automaton over every binding key of the vhost.
func (c *vhostCompare) wholeExchange(x string, onBefore bool) {
	s := c.a
	if onBefore {
		s = c.b
	}
	qs := s.reachableQueues(x)
	if len(qs) == 0 {
		return // no message published to it reached a queue, nor does now
	}
	r := Route{Vhost: c.vhost, Exchange: x, Class: Class{Kind: ClassEvery}, Selective: !s.sim.RoutesAlike(x)}
	if !onBefore {
		r.After = qs
		c.d.Routes = append(c.d.Routes, r)
		return
	}
	r.Before, r.Loses = qs, true
	r.Cause = fmt.Sprintf("exchange %q is now internal: clients cannot publish to it", x)
	if !c.a.exists(x) {
		r.Cause = fmt.Sprintf("exchange %q is deleted", x)
	}
	c.d.Routes = append(c.d.Routes, r)
}

// reachableQueues returns the queues a message published to exchange x
// can reach on side s, sorted: those bound to x or to an exchange its
// exchange-to-exchange bindings and alternate exchanges lead to, through
// plugin exchange types too. Whether some message's key or headers match
// each binding on the way is not asked.
func (s *side) reachableQueues(x string) []string {
	seen := map[string]bool{}
	var out []string
	for _, e := range s.reach([]string{x}, true) {
		for _, b := range s.from[e] {
			if b.DestinationType == topology.DestQueue && !seen[b.Destination] {
				seen[b.Destination] = true
				out = append(out, b.Destination)
			}
		}
	}
	sort.Strings(out)
	return out
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

// route publishes class cl (of flow f) 's representative to exchange x on
// both sides and adds a Route when it reaches other queues.
func (c *vhostCompare) route(x string, f *flowChange, cl msgClass) {
	class := c.class(x, f, cl)
	m := route.Message{Exchange: x, RoutingKey: cl.key, Headers: cl.headers, Class: !oneKey(class.Kind, cl.matches), Many: true}
	rb, ra := c.b.sim.Publish(m), c.a.sim.Publish(m)
	before, sb := c.b.reached(rb)
	after, sa := c.a.reached(ra)
	if slices.Equal(before, after) && sameSplits(sb, sa) {
		return
	}
	r := Route{Vhost: c.vhost, Exchange: x, Class: class, Before: before, After: after, BeforeSplits: sb, AfterSplits: sa}
	r.Loses = len(before) > 0 && len(after) == 0 && !c.a.deadLettersRefused(m, r.Lost())
	if lost := r.Lost(); len(lost) > 0 {
		r.Cause = c.lostCauses(m, rb, ra, sb, lost)
	} else if gained, ok := firstMissing(after, before); ok {
		r.Cause = c.gainCause(ra, gained)
	}
	c.d.Routes = append(c.d.Routes, r)
}

// class renders cl, a class of flow f, as a Class of exchange x's kind
// (after the change, or before when x is gone), with what tells it apart
// on each side when x's type changes what it routes by (telling).
func (c *vhostCompare) class(x string, f *flowChange, cl msgClass) Class {
	k := c.a.kind(x)
	if x != "" && !c.a.exists(x) {
		k = c.b.kind(x)
	}
	class := Class{Kind: k, RoutingKey: cl.key, Headers: cl.headers, Matches: cl.matches, ByHeaders: cl.byHeaders}
	if kb := c.b.kind(x); x != "" && c.b.exists(x) && c.a.exists(x) && telling(kb) != telling(k) {
		class.Before = &ClassSide{Kind: kb, Matches: f.sideTexts(cl.keys, cl.crits, onBefore)}
		class.After = &ClassSide{Kind: k, Matches: f.sideTexts(cl.keys, cl.crits, onAfter)}
		// A side where x ignores keys still routes by them where an
		// exchange behind x does: the class is of keys on both sides.
		class.Keyed = f.keyBehind
	} else {
		// x ignores keys on both sides, and one behind it does not.
		class.Keyed = f.keyRouted && telling(k) != "key"
	}
	return class
}

// telling says what an exchange of kind k tells messages apart by: "key"
// (topic, direct, the default exchange), "headers", or "" (nothing: every
// message alike).
func telling(k string) string {
	switch k {
	case ClassTopic, ClassDirect, ClassDefault:
		return "key"
	case ClassHeaders:
		return ClassHeaders
	}
	return ""
}

// oneKey reports whether a class of kind whose patterns are matches is a
// single routing key: a direct key, a queue's name on the default
// exchange, or a topic class that matches a pattern without wildcards.
// Any other class is of many keys, which an x-modulus-hash exchange
// splits (route.Message.Class).
func oneKey(kind string, matches []string) bool {
	switch kind {
	case ClassDefault:
		return true
	case ClassDirect:
		return len(matches) > 0
	case ClassTopic:
		for _, p := range matches {
			if !slices.ContainsFunc(strings.Split(p, "."), func(w string) bool { return w == "*" || w == "#" }) {
				return true
			}
		}
	}
	return false
}

// sameSplits reports whether a and b split alike.
func sameSplits(a, b []Split) bool {
	return slices.EqualFunc(a, b, func(x, y Split) bool {
		return x.Exchange == y.Exchange && slices.Equal(x.Queues, y.Queues) && x.Random == y.Random && x.Unsimulated == y.Unsimulated &&
			slices.EqualFunc(x.Through, y.Through, func(p, q route.SplitThrough) bool {
				return p.Exchange == q.Exchange && slices.Equal(p.Queues, q.Queues)
			})
	})
}

// reached returns the queues r reaches on side s, sorted (nil: none),
// and its splits: those of the simulator, then one for each exchange on
// its way whose routing mqctl does not simulate (r.Unsimulated), naming
// every queue it can lead to. Those queues are among the ones returned:
// that mqctl cannot tell where such an exchange routes a message does not
// make the message lost.
func (s *side) reached(r route.Result) ([]string, []Split) {
	qs, splits := queuesOf(r), r.Splits()
	refused := func(q string) bool { refused, _ := s.refuses(q); return refused }
	if s.anyRefuses() && slices.ContainsFunc(qs, refused) {
		// A copy: the simulator keeps the list of a result it remembers,
		// and DeleteFunc would clear its tail ("" where a queue was).
		qs = slices.DeleteFunc(slices.Clone(qs), refused)
	}
	if len(qs) == 0 {
		qs = nil
	}
	for _, x := range r.Unsimulated {
		u := s.reachableQueues(x)
		if len(u) == 0 {
			continue
		}
		t := s.ex[x].declared
		if t == "" {
			t = "unknown"
		}
		sp := Split{Exchange: x, Queues: u, Unsimulated: t}
		if sp.PicksOne() {
			for _, b := range s.from[x] {
				if b.DestinationType == topology.DestExchange && !slices.ContainsFunc(sp.Through, func(th route.SplitThrough) bool { return th.Exchange == b.Destination }) {
					if qs := s.reachableQueues(b.Destination); len(qs) > 0 {
						sp.Through = append(sp.Through, route.SplitThrough{Exchange: b.Destination, Queues: qs})
					}
				}
			}
		}
		splits = append(splits, sp)
		qs = mergeSorted(qs, u)
	}
	return qs, splits
}

// mergeSorted returns the union of sorted a and b, sorted, each once; nil
// for none.
func mergeSorted(a, b []string) []string {
	if len(b) == 0 {
		return a
	}
	out := make([]string, 0, len(a)+len(b))
	out = append(append(out, a...), b...)
	slices.Sort(out)
	return slices.Compact(out)
}

// queuesOf returns the queues r reaches, sorted; nil for none.
func queuesOf(r route.Result) []string {
	if len(r.Deliveries) == 0 {
		return nil
	}
	return r.Queues()
}

// firstMissing returns the first element of sorted a that sorted b
// lacks.
func firstMissing(a, b []string) (string, bool) {
	for _, x := range a {
		if _, found := slices.BinarySearch(b, x); !found {
			return x, true
		}
	}
	return "", false
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

// deadLettersRefused reports whether each of queues refuses message m and
// dead-letters it (reject-publish-dlx, see side.refuses) to some queue:
// the message is kept there.
func (s *side) deadLettersRefused(m route.Message, queues []string) bool {
	for _, q := range queues {
		a := s.sim.OnArrival(q, m)
		if !a.Refused || a.Reason == "" || len(queuesOf(s.sim.DeadLetter(q, a.Reason, m).Result)) == 0 {
			return false
		}
	}
	return len(queues) > 0
}

// lostCauses says why message m (results before and after, splits
// before) no longer reaches each of the queues lost: routeCause's for
// each, each cause once, in the order of the queues.
func (c *vhostCompare) lostCauses(m route.Message, before, after route.Result, splits []Split, lost []string) string {
	var causes []string
	for _, q := range lost {
		if cause := c.routeCause(m, before, after, splits, q); !slices.Contains(causes, cause) {
			causes = append(causes, cause)
		}
	}
	return strings.Join(causes, "; ")
}
