package flow

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/mqctl/mqctl/pkg/route"
	"github.com/mqctl/mqctl/pkg/topology"
)

// silenced adds the queues declared on both sides that publishers or dead
// letters reach before and that nothing but the default exchange reaches
// after. Only what changed can cut a queue off: a binding (from an
// exchange publishers reach) that is gone or no longer reached, a queue
// whose dead letters go elsewhere. So the candidates are the queues those
// reached before, and each is then looked for after.
func (c *vhostCompare) silenced() {
	if !c.sharesAQueue() {
		return // a teardown, a vhost created: nothing to look for
	}
	rb, ra := c.b.publishedExchanges(), c.a.publishedExchanges()
	changed := sortedKeys(c.dlChanged)
	db := c.b.deadLetterReach(changed)
	// da, where the changed queues' dead letters go after, is made when a
	// candidate first needs it: most are still bound after (a plan that
	// replaces every queue rebinds them all), and for the bench's 12,500
	// changed queues it was 12,500 simulated dead letters and their index
	// for none.
	var da *dlReach
	reachedAfter := func(q string) bool {
		if da == nil {
			da = c.a.deadLetterReach(changed)
		}
		return da.reaches(q)
	}
	candidates := c.lostBindings(rb, ra)
	for q := range db.byTarget {
		candidates[q] = true
	}
	if len(db.anywhere) > 0 {
		for q := range c.b.v.Queues {
			candidates[q] = true
		}
	}
	inB, inA := &inbound{s: c.b, reached: rb}, &inbound{s: c.a, reached: ra}
	var ua *dlReach
	for _, q := range sortedKeys(candidates) {
		if !c.b.hasQueue(q) || !c.a.hasQueue(q) || len(inA.of(q)) > 0 || reachedAfter(q) {
			continue
		}
		if len(inB.of(q)) == 0 && !db.reaches(q) {
			continue // a candidate only as a dead letter's possible target, and only its own
		}
		if c.a.federated(q) {
			continue // its federation link brings it the messages of its upstream queues
		}
		if c.shovels.feeds(q) {
			continue // a shovel moves messages into it
		}
		if ua == nil {
			ua = c.a.deadLetterReach(c.unchangedQueues())
		}
		if !ua.reaches(q) {
			c.d.Silenced = append(c.d.Silenced, Silenced{Vhost: c.vhost, Queue: q, Cause: c.silenceCause(q, inB.of(q), db), Unknown: c.shovels.mayFeed(q)})
		}
	}
}

// federated reports whether queue q is federated on side s: the policy in
// force on it names federation upstreams (federation-upstream or
// federation-upstream-set), so the federation plugin's link moves the
// messages of the upstream queues of that name into it, through no
// exchange.
func (s *side) federated(q string) bool {
	name, _ := s.sim.QueuePolicies(q)
	p := s.v.Policies[name]
	return p != nil && (p.Definition.Has("federation-upstream") || p.Definition.Has("federation-upstream-set"))
}

// sharesAQueue reports whether a queue is declared on both sides: only
// such a queue can be silenced. Where none is, reaching every queue's dead
// letters (two thirds of the comparison of a teardown's 50,000 objects)
// would find nothing.
func (c *vhostCompare) sharesAQueue() bool {
	small, big := c.b, c.a
	if len(small.v.Queues) > len(big.v.Queues) {
		small, big = big, small
	}
	for q := range small.v.Queues {
		if big.hasQueue(q) {
			return true
		}
	}
	return false
}

// lostBindings returns the queues of the bindings that reached them from
// an exchange of rb (reached by publishers before) and that are gone or
// no longer reached (ra) after.
func (c *vhostCompare) lostBindings(rb, ra map[string]bool) map[string]bool {
	out := map[string]bool{}
	for x := range rb {
		lost := c.b.from[x]
		if ra[x] {
			lost = bindingsOnlyIn(c.b.from[x], c.a.from[x])
		}
		for _, b := range lost {
			if b.DestinationType == topology.DestQueue {
				out[b.Destination] = true
			}
		}
	}
	return out
}

// sortedKeys returns the keys of m, sorted.
func sortedKeys(m map[string]bool) []string {
	out := mapKeys(m)
	sort.Strings(out)
	return out
}

// publishedExchanges returns the exchanges publishers reach: those
// clients can publish to, and those these lead to.
func (s *side) publishedExchanges() map[string]bool {
	var seeds []string
	for x, info := range s.ex {
		if !info.internal {
			seeds = append(seeds, x)
		}
	}
	out := map[string]bool{}
	for _, x := range s.reach(seeds, true) {
		out[x] = true
	}
	return out
}

// inbound finds the bindings that reach a queue from the exchanges of
// reached on side s: by scanning their bindings for the first few
// queues, by an index made once past those.
type inbound struct {
	s       *side
	reached map[string]bool
	// bound are the queue bindings of the reached exchanges, by their
	// destination (each destination's in the order each gives them), and
	// index where each destination's start in bound: a map of a list per
	// queue was two maps of 25,000 lists (some 4 MB) at the peak of a
	// plan replacing 25,000 queues.
	bound []*topology.Binding
	index map[string]int32
	scans int
}

// of returns the bindings into queue q from the reached exchanges.
func (in *inbound) of(q string) []*topology.Binding {
	if in.index == nil && in.scans < 8 {
		in.scans++
		var out []*topology.Binding
		in.each(func(b *topology.Binding) {
			if b.Destination == q {
				out = append(out, b)
			}
		})
		return out
	}
	if in.index == nil {
		in.each(func(b *topology.Binding) { in.bound = append(in.bound, b) })
		slices.SortStableFunc(in.bound, func(a, b *topology.Binding) int { return strings.Compare(a.Destination, b.Destination) })
		in.index = map[string]int32{}
		for i, b := range in.bound {
			if i == 0 || in.bound[i-1].Destination != b.Destination {
				in.index[b.Destination] = int32(i)
			}
		}
	}
	i, ok := in.index[q]
	if !ok {
		return nil
	}
	j := int(i) + 1
	for j < len(in.bound) && in.bound[j].Destination == q {
		j++
	}
	return in.bound[i:j:j]
}

// each calls f for every queue binding of the reached exchanges.
func (in *inbound) each(f func(*topology.Binding)) {
	for x := range in.reached {
		for _, b := range in.s.from[x] {
			if b.DestinationType == topology.DestQueue {
				f(b)
			}
		}
	}
}

// dlReach is, per queue, the queues whose dead letters reach it. The
// sources that reach the same targets (the very same list, as a fanout
// dead-letter exchange's route is shared) are one group: N queues that
// dead-letter into one fanout exchange of N queues are N sources and N
// targets, not N×N pairs.
type dlReach struct {
	groups   []dlGroup
	byTarget map[string][]int // target queue -> the groups that reach it, each once
	// anywhere are queues whose dead letters may reach any queue (the
	// default exchange with the messages' own keys), sorted.
	anywhere []string
}

// dlGroup is the queues (sorted) whose dead letters reach targets.
type dlGroup struct {
	targets []string
	sources []string
}

// reaches reports whether some other queue's dead letters reach q.
func (r *dlReach) reaches(q string) bool {
	_, n := r.sources(q, 0)
	return n > 0
}

// sources returns the first (by name) at most k of the other queues
// whose dead letters reach q, and how many they are.
func (r *dlReach) sources(q string, k int) (first []string, n int) {
	take := func(ps []string) {
		taken := 0
		for _, p := range ps {
			if p == q {
				continue
			}
			n++
			if taken < k {
				first = append(first, p)
				taken++
			}
		}
	}
	for _, g := range r.byTarget[q] {
		take(r.groups[g].sources)
	}
	take(r.anywhere)
	sort.Strings(first)
	if len(first) > k {
		first = first[:k]
	}
	return first, n
}

// unchangedQueues returns the queues declared on both sides whose dead
// letters go where they went.
func (c *vhostCompare) unchangedQueues() []string {
	var out []string
	for q, qq := range c.a.v.Queues {
		if qq != nil && !c.dlChanged[q] {
			out = append(out, q)
		}
	}
	return out
}

// deadLetterReach returns where the dead letters of queues can go on side
// s (those it does not declare are left out).
func (s *side) deadLetterReach(queues []string) *dlReach {
	queues = slices.Sorted(slices.Values(queues))
	r := &dlReach{byTarget: map[string][]int{}}
	type listID struct {
		first *string
		n     int
	}
	group := map[listID]int{}
	for _, p := range queues {
		if !s.hasQueue(p) {
			continue
		}
		targets, anywhere := s.deadLetterTargets(p)
		if anywhere {
			r.anywhere = append(r.anywhere, p)
		}
		if len(targets) == 0 {
			continue
		}
		id := listID{&targets[0], len(targets)}
		g, ok := group[id]
		if !ok {
			g = len(r.groups)
			group[id] = g
			r.groups = append(r.groups, dlGroup{targets: targets})
			for _, q := range targets {
				if gs := r.byTarget[q]; len(gs) == 0 || gs[len(gs)-1] != g {
					r.byTarget[q] = append(gs, g)
				}
			}
		}
		r.groups[g].sources = append(r.groups[g].sources, p)
	}
	return r
}

// deadLetterTargets returns the queues queue p's dead letters can reach:
// exactly where a dead-letter routing key sends them through exchanges
// that route by key alone, else every queue bound in the dead-letter
// exchange's closure; anywhere when the default exchange takes them by
// the messages' own keys.
func (s *side) deadLetterTargets(p string) (targets []string, anywhere bool) {
	d := s.setup(p)
	start := s.startOf(d)
	if start == noExchange || len(s.sim.Reasons(p)) == 0 {
		return nil, false
	}
	if start == "" {
		if d.keyFrom {
			return nil, true
		}
		if s.hasQueue(d.rk) {
			return []string{d.rk}, false
		}
		return nil, false
	}
	t := s.targetsFrom(start)
	if !d.keyFrom && !t.headers {
		return queuesOf(s.sim.DeadLetter(p, route.Rejected, route.Message{}).Result), false
	}
	return t.bound, false
}

// startTargets is what an exchange's closure can deliver to, whatever
// the key and headers.
type startTargets struct {
	headers bool     // some exchange of the closure routes by headers
	bound   []string // the queues bound from the closure
}

// targetsFrom returns (and remembers) what the closure of exchange start
// (plugin exchanges included) can deliver to.
func (s *side) targetsFrom(start string) *startTargets {
	if t, ok := s.targets[start]; ok {
		return t
	}
	t := &startTargets{}
	for _, x := range s.reach([]string{start}, true) {
		t.headers = t.headers || s.kind(x) == ClassHeaders
		for _, b := range s.from[x] {
			if b.DestinationType == topology.DestQueue {
				t.bound = append(t.bound, b.Destination)
			}
		}
	}
	s.targets[start] = t
	return t
}

// silenceCause says what cut queue q off: what became of the bindings
// and the dead-letter sources that reached it before.
func (c *vhostCompare) silenceCause(q string, bindings []*topology.Binding, db *dlReach) string {
	sources, n := db.sources(q, shownSources)
	var causes []string
	seen := map[string]bool{}
	add := func(s string) {
		if !seen[s] {
			seen[s] = true
			causes = append(causes, s)
		}
	}
	for _, b := range bindings {
		add(c.lostBinding(b, len(bindings) == 1 && n == 0))
	}
	for _, p := range sources {
		if c.a.hasQueue(p) {
			add(fmt.Sprintf("the dead letters of queue %q no longer reach it", p))
		} else {
			add(fmt.Sprintf("queue %q, whose dead letters reached it, is deleted", p))
		}
	}
	if more := n - len(sources); more > 0 {
		add(fmt.Sprintf("and the dead letters of %d more queues no longer reach it", more))
	}
	return strings.Join(causes, "; ")
}

// shownSources is how many of the queues whose dead letters no longer
// reach a silenced queue its cause names.
const shownSources = 3

// lostBinding says why binding b, which reached its queue from a
// publishable exchange before, does not after; only says it was the
// queue's only way in.
func (c *vhostCompare) lostBinding(b *topology.Binding, only bool) string {
	x, k := b.Source, c.b.kind(b.Source)
	switch {
	case !c.a.exists(x):
		return fmt.Sprintf("exchange %q is deleted", x)
	case !c.a.hasBinding(x, b.Destination, b.DestinationType, b.RoutingKey, b.Arguments, true) && only:
		return fmt.Sprintf("its only binding, %s, is gone", bindingFrom(k, x, b.RoutingKey, b.Arguments))
	case !c.a.hasBinding(x, b.Destination, b.DestinationType, b.RoutingKey, b.Arguments, true):
		return fmt.Sprintf("its binding %s is gone", bindingFrom(k, x, b.RoutingKey, b.Arguments))
	case c.a.ex[x].internal && !c.b.ex[x].internal:
		return fmt.Sprintf("exchange %q is now internal and no exchange clients publish to reaches it", x)
	}
	return fmt.Sprintf("exchange %q is no longer reached from an exchange clients publish to", x)
}
