package lint

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/mqctl/mqctl/pkg/route"
	"github.com/mqctl/mqctl/pkg/topology"
)

// caught is what takes a queue's dead letters beside its own DLQ: the
// bindings into other queues its dead letters follow (the last step of
// each route the simulation took), but for those marked `# mqctl:ignore
// MQ104`, collectors by intent, which Ignored counts. They are the
// entries of the queue's catchIndex but for the few that are the queue's
// own (skip): where one fanout exchange takes every queue's dead letters
// to every DLQ, every queue shares one index of thousands of bindings,
// and a list of them per queue was the square of the queues.
type caught struct {
	ix      *catchIndex
	skip    []int // entries of ix that are the queue's own, ascending
	n       int   // bindings: entries with a binding, not ignored, not skipped
	Ignored int
}

func (c caught) skips(i int) bool {
	for _, s := range c.skip {
		if s == i {
			return true
		}
	}
	return false
}

// catchEntry is one delivery of a dead-letter route that catchers reads:
// into a declared queue that is no delay queue, through a binding.
type catchEntry struct {
	queue, origin string // the queue delivered to, and its Origin
	exchange, key string // the exchange and binding key of the last step
	b             *topology.Binding
	ignored       bool // b is marked `# mqctl:ignore MQ104`
}

// catchIndex is what catchers reads from the deliveries of one
// dead-letter route, built once for every queue whose dead letters take
// it (a message-blind exchange shares its deliveries, route.fixedRoute),
// with the entries each queue may own found by name and key.
type catchIndex struct {
	entries  []catchEntry
	bindings int // entries with a binding, not ignored
	ignored  int // entries with a binding, ignored
	byQueue  map[string][]int
	byOrigin map[string][]int
	byKey    map[[2]string][]int // entries into queues of no origin, by (exchange, binding key)
}

// catchKey identifies the deliveries of a route: a shared result keeps
// its slice.
type catchKey struct {
	first *route.Delivery
	n     int
}

// catchIndexOf returns the catchIndex of the deliveries of d's routes.
func (p *Pass) catchIndexOf(d *dlInfo) *catchIndex {
	if len(d.Routes) == 1 {
		ds := d.Routes[0].Route.Result.Deliveries
		if len(ds) == 0 {
			return &catchIndex{}
		}
		k := catchKey{&ds[0], len(ds)}
		if ix := p.catchIx[k]; ix != nil {
			return ix
		}
		ix := p.newCatchIndex(d.Routes)
		p.catchIx[k] = ix
		return ix
	}
	return p.newCatchIndex(d.Routes)
}

func (p *Pass) newCatchIndex(routes []keyRoute) *catchIndex {
	ix := &catchIndex{}
	var seen map[*topology.Binding]bool
	dup := func(b *topology.Binding) bool {
		if seen == nil && len(ix.entries) < catchIndexScans {
			return slices.ContainsFunc(ix.entries, func(e catchEntry) bool { return e.b == b })
		}
		if seen == nil {
			seen = map[*topology.Binding]bool{}
			for _, e := range ix.entries {
				seen[e.b] = true
			}
		}
		if seen[b] {
			return true
		}
		seen[b] = true
		return false
	}
	for _, r := range routes {
		for _, del := range r.Route.Result.Deliveries {
			tq := p.Vhost.Queues[del.Queue]
			if tq == nil || len(del.Path) == 0 || p.isDelay(del.Queue) {
				continue
			}
			last := del.Path[len(del.Path)-1]
			b := p.bindingOf(last)
			if b != nil {
				// The same binding again is the same queue, origin and
				// step: it says nothing new.
				if dup(b) {
					continue
				}
			}
			e := catchEntry{queue: del.Queue, origin: tq.Origin, exchange: last.Exchange, key: last.BindingKey, b: b}
			if b != nil {
				e.ignored = b.Meta.Ignores("MQ104") || b.Meta.Ignores("dead-letters-cross-delivered")
				if e.ignored {
					ix.ignored++
				} else {
					ix.bindings++
				}
			}
			ix.entries = append(ix.entries, e)
		}
	}
	if len(ix.entries) > catchIndexScans {
		ix.byQueue, ix.byOrigin, ix.byKey = map[string][]int{}, map[string][]int{}, map[[2]string][]int{}
		for i, e := range ix.entries {
			ix.byQueue[e.queue] = append(ix.byQueue[e.queue], i)
			if e.origin != "" {
				ix.byOrigin[e.origin] = append(ix.byOrigin[e.origin], i)
			} else {
				ix.byKey[[2]string{e.exchange, e.key}] = append(ix.byKey[[2]string{e.exchange, e.key}], i)
			}
		}
	}
	return ix
}

// catchIndexScans is how many entries a catchIndex looks through rather
// than keep maps of them: most queues' dead letters reach a queue or two.
const catchIndexScans = 8

// ownEntries returns the entries of ix that are queue name's (d) own: into
// name itself, and (own) into a DLQ of name's, declared for it or bound
// with its exchange and key.
func (ix *catchIndex) ownEntries(name string, d *dlInfo) (self, own []int) {
	if ix.byQueue == nil {
		for i, e := range ix.entries {
			switch {
			case e.queue == name:
				self = append(self, i)
			case e.origin == name || (e.origin == "" && e.exchange == d.Exchange && e.key == d.DLRK):
				own = append(own, i)
			}
		}
		return self, own
	}
	self = ix.byQueue[name]
	for _, i := range ix.byOrigin[name] {
		if ix.entries[i].queue != name {
			own = append(own, i)
		}
	}
	for _, i := range ix.byKey[[2]string{d.Exchange, d.DLRK}] {
		if ix.entries[i].queue != name {
			own = append(own, i)
		}
	}
	return self, own
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
	ix := p.catchIndexOf(d)
	c.ix = ix
	// Dead letters back in their own queue are MQ105's; those that reach
	// a DLQ of the queue's own are where they belong.
	self, owned := ix.ownEntries(name, d)
	own := len(owned) > 0
	c.skip = append(slices.Clip(self), owned...)
	sort.Ints(c.skip)
	c.n, c.Ignored = ix.bindings, ix.ignored
	for _, i := range c.skip {
		switch e := ix.entries[i]; {
		case e.b == nil:
		case e.ignored:
			c.Ignored--
		default:
			c.n--
		}
	}
	return c, own && c.n+c.Ignored > 0
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
// their own key to their own DLQ, the binding also takes. The queues of
// one catchIndex are kept once (members), and a binding names the
// entries it is in: its queues are those members for whom the entry is
// not their own. Where one fanout exchange takes every queue's dead
// letters to every DLQ, a list of queues per binding was the square of
// the queues.
type caughtBy struct {
	order  []*topology.Binding
	count  map[*topology.Binding]int
	parts  map[*topology.Binding][]catchPart
	groups map[*catchIndex]*catchGroup
	place  map[string]int        // queue -> its place in queue order
	alones map[*catchIndex][]int // see alone
}

// catchGroup is the queues that share a catchIndex.
type catchGroup struct {
	members []string       // in queue order
	pos     map[string]int // member -> its place in members
	byKey   map[[2]string][]int
	keys    map[string]int // dead-letter routing key -> members sending with it
	exchs   map[string]int // dead-letter exchange -> members sending to it
}

// catchPart is entry e of catchIndex ix: binding ix.entries[e].b.
type catchPart struct {
	ix *catchIndex
	e  int
}

// caughtGroups returns, for each binding that takes the dead letters of
// queues that do their part (catchers), those queues, but for the ones
// marked `# mqctl:ignore MQ104` themselves.
func (p *Pass) caughtGroups() caughtBy {
	g := caughtBy{count: map[*topology.Binding]int{}, parts: map[*topology.Binding][]catchPart{}, groups: map[*catchIndex]*catchGroup{}}
	var ixs []*catchIndex
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
		cg := g.groups[cs.ix]
		if cg == nil {
			cg = &catchGroup{pos: map[string]int{}, byKey: map[[2]string][]int{}, keys: map[string]int{}, exchs: map[string]int{}}
			g.groups[cs.ix] = cg
			ixs = append(ixs, cs.ix)
		}
		cg.pos[name] = len(cg.members)
		cg.byKey[[2]string{d.Exchange, d.DLRK}] = append(cg.byKey[[2]string{d.Exchange, d.DLRK}], len(cg.members))
		cg.members = append(cg.members, name)
		cg.keys[d.DLRK]++
		cg.exchs[d.Exchange]++
	}
	// A binding comes in the order of the first queue whose dead letters
	// it takes, then of the entries of that queue's index.
	type first struct{ queue, entry int }
	place := make(map[string]int, len(p.queueNames))
	for i, n := range p.queueNames {
		place[n] = i
	}
	g.place, g.alones = place, map[*catchIndex][]int{}
	firsts := map[*topology.Binding]first{}
	for _, ix := range ixs {
		cg := g.groups[ix]
		for i, e := range ix.entries {
			if e.b == nil || e.ignored {
				continue
			}
			skipped := cg.skipped(ix, i)
			n := len(cg.members) - len(skipped)
			if n == 0 {
				continue
			}
			g.count[e.b] += n
			g.parts[e.b] = append(g.parts[e.b], catchPart{ix, i})
			m := 0
			for m < len(cg.members) && slices.Contains(skipped, m) {
				m++
			}
			f := first{place[cg.members[m]], i}
			if old, ok := firsts[e.b]; !ok || f.queue < old.queue {
				if !ok {
					g.order = append(g.order, e.b)
				}
				firsts[e.b] = f
			}
		}
	}
	sort.SliceStable(g.order, func(i, j int) bool {
		a, b := firsts[g.order[i]], firsts[g.order[j]]
		if a.queue != b.queue {
			return a.queue < b.queue
		}
		return a.entry < b.entry
	})
	return g
}

// skipped returns the places of the members of cg for whom entry i of ix
// is their own (see catchers), ascending.
func (cg *catchGroup) skipped(ix *catchIndex, i int) []int {
	e := ix.entries[i]
	var out []int
	add := func(m int) {
		if !slices.Contains(out, m) {
			out = append(out, m)
		}
	}
	if m, ok := cg.pos[e.queue]; ok {
		add(m)
	}
	if e.origin != "" {
		if m, ok := cg.pos[e.origin]; ok {
			add(m)
		}
	} else {
		for _, m := range cg.byKey[[2]string{e.exchange, e.key}] {
			add(m)
		}
	}
	sort.Ints(out)
	return out
}

// shared reports whether binding b takes the dead letters of more than one
// queue: then it has a finding of its own.
func (g caughtBy) shared(b *topology.Binding) bool { return g.count[b] > 1 }

// alone returns the bindings of c that take the dead letters of one queue
// only. The entries of its index that are such bindings are found once
// for every queue that shares the index.
func (g caughtBy) alone(c caught) []*topology.Binding {
	es, ok := g.alones[c.ix]
	if !ok {
		for i, e := range c.ix.entries {
			if e.b != nil && !e.ignored && !g.shared(e.b) {
				es = append(es, i)
			}
		}
		g.alones[c.ix] = es
	}
	var out []*topology.Binding
	for _, i := range es {
		if !c.skips(i) {
			out = append(out, c.ix.entries[i].b)
		}
	}
	return out
}

// catchSummary is what MQ104's finding on a binding says of the queues
// whose dead letters it takes: how many, the first of them, their
// dead-letter routing keys (how many, the first of them) and whether
// they all send to one exchange (first).
type catchSummary struct {
	queues     int
	firstNames []string
	keys       int
	firstKeys  []string
	oneExch    bool
	first      string
}

// summary sums up the queues whose dead letters binding b takes.
func (g caughtBy) summary(p *Pass, b *topology.Binding) catchSummary {
	parts := g.parts[b]
	if len(parts) == 1 {
		return g.partSummary(p, parts[0])
	}
	// Several routes reach b (each queue's own, on a topic exchange):
	// list the queues, in queue order.
	var names []string
	for _, pt := range parts {
		cg := g.groups[pt.ix]
		skipped := cg.skipped(pt.ix, pt.e)
		for m, n := range cg.members {
			if !slices.Contains(skipped, m) {
				names = append(names, n)
			}
		}
	}
	sort.SliceStable(names, func(i, j int) bool { return g.place[names[i]] < g.place[names[j]] })
	var s catchSummary
	s.queues = len(names)
	s.firstNames = names[:min(len(names), queuesListShows+1)]
	seen := map[string]bool{}
	exch := map[string]bool{}
	for _, n := range names {
		d := p.dl[n]
		if len(exch) == 0 {
			s.first = d.Exchange
		}
		exch[d.Exchange] = true
		if !seen[d.DLRK] {
			seen[d.DLRK] = true
			s.keys++
			if len(s.firstKeys) <= joinOrShows {
				s.firstKeys = append(s.firstKeys, d.DLRK)
			}
		}
	}
	s.oneExch = len(exch) == 1
	return s
}

// partSummary is summary where one entry of one catchIndex is all that
// reaches the binding: its group's members but those the entry is their
// own, their keys and exchanges counted from the group's.
func (g caughtBy) partSummary(p *Pass, pt catchPart) catchSummary {
	cg := g.groups[pt.ix]
	skipped := cg.skipped(pt.ix, pt.e)
	var s catchSummary
	s.queues = len(cg.members) - len(skipped)
	keys, exchs := map[string]int{}, map[string]int{} // of the skipped members
	for _, m := range skipped {
		d := p.dl[cg.members[m]]
		keys[d.DLRK]++
		exchs[d.Exchange]++
	}
	s.keys = len(cg.keys)
	for k, n := range keys {
		if cg.keys[k] == n {
			s.keys--
		}
	}
	nexch := len(cg.exchs)
	for x, n := range exchs {
		if cg.exchs[x] == n {
			nexch--
		}
	}
	s.oneExch = nexch == 1
	seen := map[string]bool{}
	for m, n := range cg.members {
		if slices.Contains(skipped, m) {
			continue
		}
		d := p.dl[n]
		if len(s.firstNames) == 0 {
			s.first = d.Exchange
		}
		if len(s.firstNames) <= queuesListShows {
			s.firstNames = append(s.firstNames, n)
		}
		if !seen[d.DLRK] && len(s.firstKeys) <= joinOrShows {
			seen[d.DLRK] = true
			s.firstKeys = append(s.firstKeys, d.DLRK)
		}
		if len(s.firstNames) > queuesListShows && (len(s.firstKeys) > joinOrShows || len(s.firstKeys) == s.keys) {
			break
		}
	}
	return s
}

// findings are MQ104's findings on the bindings that take the dead letters
// of several queues: one each, naming the queues, with one fix.
func (g caughtBy) findings(p *Pass) []Finding {
	var out []Finding
	for _, b := range g.order {
		if g.count[b] < 2 {
			continue
		}
		s := g.summary(p, b)
		to := "to their dead-letter exchanges"
		if s.oneExch {
			to = "to " + exchangeLabel(s.first)
		}
		matched := joinOrQuotedOf(s.firstKeys, s.keys)
		why := fmt.Sprintf("and the binding's key %q matches them too", b.RoutingKey)
		if p.ignoresKeys(b.Source) {
			why = fmt.Sprintf("but %s ignores keys and delivers them all to every queue bound to it", p.exchangeKindLabel(b.Source, p.exchangeType(b.Source)))
		}
		out = append(out, p.bindingFinding(b,
			"binding %s also takes the dead letters of %d queues (%s): each sends them %s with its own routing key (%s), which its DLQ is bound with, %s. "+
				"A failure in one consumer shows up beside other queues' failures, and replaying a DLQ delivers messages to consumers that never saw them. %s",
			bindingName(b), s.queues, queuesListOf(s.firstNames, s.queues), to, matched, why, p.catcherFix(matched, b)))
	}
	return out
}

// caughtMessage is MQ104's message for queue name whose dead letters, sent
// with its own key to its own DLQ, bindings cs also take.
func (p *Pass) caughtMessage(name string, d *dlInfo, settled []string, cs []*topology.Binding) string {
	var named, fixes []string
	for _, b := range cs {
		named = append(named, "binding "+bindingName(b))
		fixes = append(fixes, p.catcherFix(joinOrQuoted([]string{d.DLRK}), b))
	}
	verb := "matches that key"
	if len(cs) > 1 {
		verb = "match that key"
	}
	if slices.ContainsFunc(cs, func(b *topology.Binding) bool { return p.ignoresKeys(b.Source) }) {
		verb = "takes them whatever the key"
		if len(cs) > 1 {
			verb = "take them whatever the key"
		}
	}
	return fmt.Sprintf("dead letters of queue %q reach %d queues (%s): the queue sends them to %s with its own routing key %q, which its DLQ is bound with, and %s also %s. "+
		"A failure in one consumer shows up beside other queues' failures, and replaying a DLQ delivers messages to consumers that never saw them. %s",
		name, len(settled), queuesList(settled), exchangeLabel(d.Exchange), d.DLRK, joinOr(named), verb, strings.Join(fixes, " "))
}

// catcherFix says what to do about binding b, which takes dead letters
// sent with keys (each a queue's own) beside their DLQs, matched being
// those keys as joinOrQuoted says them.
func (p *Pass) catcherFix(matched string, b *topology.Binding) string {
	origin := p.Vhost.Queues[b.Destination].Origin
	if od := p.dl[origin]; od != nil && od.HasDLRK && od.DLRK == b.RoutingKey && hasWildcard(b.RoutingKey) && p.exchangeType(b.Source) == "topic" {
		return fmt.Sprintf("Queue %s is the DLQ of queue %q, bound with that queue's dead-letter routing key %q (%s), and on a topic exchange * and # are wildcards: the key is a pattern that also matches %s. "+
			"Give queue %q a dead-letter routing key without wildcard words (dead_letter.routing_key; dead_letter.queue binds its DLQ with it), or dead-letter it to a direct exchange, where keys match exactly.",
			b.Destination, origin, b.RoutingKey, keyOrigin(origin, od), matched, origin)
	}
	if p.ignoresKeys(b.Source) {
		// No key of the binding's would narrow it: the exchange's type is
		// what takes every queue's dead letters to every DLQ.
		return fmt.Sprintf("Make %s a direct exchange (type: direct), which delivers a message only to the queues bound with its key, so that each DLQ takes its own queue's dead letters alone; if queue %s is meant to collect every dead letter that reaches the exchange, that is fine: mark the binding with `# mqctl:ignore MQ104`, which silences this for each queue whose dead letters it collects.",
			exchangeLabel(b.Source), b.Destination)
	}
	return fmt.Sprintf("Narrow the key of binding %s so that it no longer matches %s, or remove the binding; if queue %s is meant to collect every dead letter it matches, that is fine: mark the binding with `# mqctl:ignore MQ104`, which silences this for each queue whose dead letters it collects.",
		bindingName(b), matched, b.Destination)
}

// ignoresKeys reports whether exchange x delivers what reaches it to every
// queue bound to it, whatever the binding's key (a fanout exchange): no
// narrower key would keep a binding of it from taking a message.
func (p *Pass) ignoresKeys(x string) bool {
	return x != "" && p.exchangeType(x) == "fanout"
}

// keyOrigin says where queue q's dead-letter routing key comes from.
func keyOrigin(q string, d *dlInfo) string {
	if d.DLRK == q {
		return "its name, which dead_letter takes as the key by default"
	}
	return "set by dead_letter.routing_key or x-dead-letter-routing-key"
}
