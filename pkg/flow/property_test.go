package flow

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/mqctl/mqctl/internal/randtopo"
	"github.com/mqctl/mqctl/pkg/route"
	"github.com/mqctl/mqctl/pkg/topology"
)

// TestClassesAreExact compares Compare with the simulator on random
// topology pairs: a topology from randtopo.Generate, and a copy with a few
// random changes. For many random messages per exchange (and per queue
// and reason, for dead letters): when the simulator delivers a message
// differently before and after, Compare must report the class the message
// falls in (the class whose Matches are the patterns and criteria of the
// closure the message matches) with the queues the simulator gives; when
// it delivers alike, Compare must not report its class. And every
// reported class's example must route as reported.
func TestClassesAreExact(t *testing.T) {
	pairs, perExchange := 2000, 10
	if testing.Short() {
		pairs = 300
	}
	var st propertyStats
	for seed := uint64(1); seed <= uint64(pairs); seed++ {
		c := randtopo.Generate(seed, "/", 0)
		before := c.Topology()
		r := rand.New(rand.NewPCG(seed, 22))
		after := topology.New()
		after.Vhosts["/"] = cloneVhost(c.Vhost)
		changes := mutate(r, after.Vhosts["/"])
		d := Compare(before, after, Options{})
		p := &propertyCase{t: t, seed: seed, changes: changes, r: r, d: d, st: &st,
			b: route.New(before.Vhosts["/"]), a: route.New(after.Vhosts["/"]), vb: before.Vhosts["/"], va: after.Vhosts["/"]}
		p.checkReported()
		p.checkRoutes(perExchange)
		p.checkDeadLetters(perExchange / 2)
		p.checkSilenced()
		if st.disagreements > 20 {
			break
		}
	}
	t.Logf("pairs=%d keys=%d disagreements=%d (reported: routes %d, dead letters %d, delay tiers %d, silenced %d)",
		st.pairs, st.keys, st.disagreements, st.routes, st.deadLetters, st.tiers, st.silenced)
	if st.pairs < pairs && st.disagreements == 0 {
		t.Errorf("only %d pairs checked", st.pairs)
	}
}

type propertyStats struct {
	pairs, keys, disagreements           int
	routes, deadLetters, tiers, silenced int
}

// propertyCase is one topology pair under test.
type propertyCase struct {
	t       *testing.T
	seed    uint64
	changes []string
	r       *rand.Rand
	d       *Diff
	st      *propertyStats
	b, a    *route.Simulator
	vb, va  *topology.Vhost
}

// fail records a disagreement, described minimally.
func (p *propertyCase) fail(format string, args ...any) {
	p.t.Helper()
	p.st.disagreements++
	if p.st.disagreements <= 20 {
		p.t.Errorf("seed %d, changes %s: %s", p.seed, strings.Join(p.changes, "; "), fmt.Sprintf(format, args...))
	}
}

// checkReported simulates each reported class's example on both sides.
func (p *propertyCase) checkReported() {
	p.st.pairs++
	p.st.routes += len(p.d.Routes)
	p.st.deadLetters += len(p.d.DeadLetters)
	p.st.tiers += len(p.d.DelayTiers)
	p.st.silenced += len(p.d.Silenced)
	for _, r := range p.d.Routes {
		if r.Class.Kind == ClassEvery {
			p.checkEvery(r)
			continue
		}
		m := route.Message{Exchange: r.Exchange, RoutingKey: r.Class.RoutingKey, Headers: r.Class.Headers}
		qb, qa := queuesOf(p.b.Publish(m)), queuesOf(p.a.Publish(m))
		if !slices.Equal(qb, r.Before) || !slices.Equal(qa, r.After) || slices.Equal(qb, qa) {
			p.fail("route of %q, class %+v: reported %v -> %v, simulated %v -> %v", r.Exchange, r.Class, r.Before, r.After, qb, qa)
		}
		if got := p.signature(r.Exchange, m); !slices.Equal(got, r.Class.Matches) {
			p.fail("route of %q, class %+v: its example matches %q", r.Exchange, r.Class, got)
		}
	}
	for _, dl := range p.d.DeadLetters {
		if !dl.Sooner { // they go where they went: more of them, or sooner
			p.checkReportedDeadLetter(dl.Queue, dl.Reason, dl.Class, dl.Before, dl.After)
		}
	}
	for _, dt := range p.d.DelayTiers {
		p.checkReportedDeadLetter(dt.Queue, route.Expired, dt.Class, dt.Before, dt.After)
	}
}

// checkReportedDeadLetter simulates a reported dead letter's example.
func (p *propertyCase) checkReportedDeadLetter(q string, r route.Reason, class *Class, before, after *DeadLetterEnd) {
	var m route.Message
	if class != nil {
		m = route.Message{RoutingKey: class.RoutingKey, Headers: class.Headers}
	}
	eb, ea := p.ends(q, r, m)
	if !sameQueues(eb, before) || !sameQueues(ea, after) || sameEnd(eb, ea) {
		p.fail("dead letters of %q (%s), class %+v: reported %s -> %s, simulated %s -> %s", q, r, class, endQueuesText(before), endQueuesText(after), endQueuesText(eb), endQueuesText(ea))
	}
}

// sameQueues reports whether two ends reach the same queues.
func sameQueues(a, b *DeadLetterEnd) bool {
	return (a == nil) == (b == nil) && (a == nil || slices.Equal(a.Queues, b.Queues))
}

// endQueuesText renders an end's queues for a failure message.
func endQueuesText(e *DeadLetterEnd) string {
	if e == nil {
		return "(none)"
	}
	return fmt.Sprint(e.Queues)
}

// ends returns where queue q's dead letters of m for reason r go on both
// sides (nil where the queue does not dead-letter for r).
func (p *propertyCase) ends(q string, r route.Reason, m route.Message) (eb, ea *DeadLetterEnd) {
	rb, ra := p.reasons(q)
	if slices.Contains(rb, r) {
		eb = &DeadLetterEnd{Queues: queuesOf(p.b.DeadLetter(q, r, m).Result)}
	}
	if slices.Contains(ra, r) {
		ea = &DeadLetterEnd{Queues: queuesOf(p.a.DeadLetter(q, r, m).Result)}
	}
	return eb, ea
}

// checkRoutes publishes n random messages to every exchange clients can
// publish to on either side and compares with the reported routes.
func (p *propertyCase) checkRoutes(n int) {
	reported := map[string][]Route{}
	for _, r := range p.d.Routes {
		reported[r.Exchange] = append(reported[r.Exchange], r)
	}
	for _, x := range p.publishable() {
		if slices.Contains(p.d.Truncated, truncatedName("/", x)) {
			continue
		}
		pb, pa := publishableOn(p.b, x), publishableOn(p.a, x)
		vocab := p.vocabulary(x, x)
		for range n {
			m := vocab.message(p.r)
			m.Exchange = x
			p.st.keys++
			qb, qa := queuesOf(p.b.Publish(m)), queuesOf(p.a.Publish(m))
			if pb != pa {
				p.judgeEvery(fmt.Sprintf("publish to %q of key %q, headers %v", x, m.RoutingKey, m.Headers), x, pb, qb, qa, reported[x])
				continue
			}
			sig := p.signature(x, m)
			var found []Route
			for _, r := range reported[x] {
				if slices.Equal(r.Class.Matches, sig) {
					found = append(found, r)
				}
			}
			p.judge(fmt.Sprintf("publish to %q of key %q, headers %v (matches %q)", x, m.RoutingKey, m.Headers, sig), qb, qa, routeEnds(found))
		}
	}
}

// publishableOn reports whether clients can publish to exchange x on the
// side s simulates.
func publishableOn(s *route.Simulator, x string) bool {
	return x == "" || (s.Exchange(x) != nil && !s.Exchange(x).Internal)
}

// checkEvery checks a reported route of every message of an exchange:
// clients can publish to it on one side only, its messages reach queues
// there (Before or After, the other empty) and exactly the queues its
// bindings, exchange-to-exchange bindings and alternate exchanges lead
// to (bruteQueues).
func (p *propertyCase) checkEvery(r Route) {
	pb, pa := publishableOn(p.b, r.Exchange), publishableOn(p.a, r.Exchange)
	want, there, other := bruteQueues(p.b, p.vb, r.Exchange), r.Before, r.After
	if pa {
		want, there, other = bruteQueues(p.a, p.va, r.Exchange), r.After, r.Before
	}
	if pb == pa || len(there) == 0 || other != nil || !slices.Equal(there, want) || r.Loses != pb {
		p.fail("route of every message of %q (publishable before %v, after %v): reported %v -> %v (loses %v), its bindings lead to %v", r.Exchange, pb, pa, r.Before, r.After, r.Loses, want)
	}
}

// judgeEvery checks a message published to exchange x, which clients can
// publish to on one side only (before when onBefore): the other side
// delivers it nowhere, and where it goes on that side is among the
// queues of the exchange's one reported route (none when none is).
func (p *propertyCase) judgeEvery(what, x string, onBefore bool, qb, qa []string, reported []Route) {
	got, other := qb, qa
	if !onBefore {
		got, other = qa, qb
	}
	var every []string
	for _, r := range reported {
		if r.Class.Kind != ClassEvery {
			p.fail("%s: exchange %q is publishable on one side only, but a class %+v of it is reported", what, x, r.Class)
			return
		}
		every = append(r.Before, r.After...)
	}
	for _, q := range got {
		if _, ok := slices.BinarySearch(every, q); !ok || other != nil {
			p.fail("%s: simulated %v -> %v, reported every message reaching %v on one side", what, qb, qa, every)
			return
		}
	}
}

// bruteQueues returns the queues bound (by a binding whose destination is
// declared) to exchange x or to an exchange reached from it by
// exchange-to-exchange bindings and alternate exchanges, sorted: a walk of
// the vhost's declarations, without the flow package's indexes.
func bruteQueues(s *route.Simulator, v *topology.Vhost, x string) []string {
	seen, queues := map[string]bool{x: true}, map[string]bool{}
	for todo := []string{x}; len(todo) > 0; todo = todo[1:] {
		e := todo[0]
		if s.Exchange(e) == nil {
			continue
		}
		next := func(y string) {
			if !seen[y] && s.Exchange(y) != nil {
				seen[y] = true
				todo = append(todo, y)
			}
		}
		for _, b := range v.Bindings {
			switch {
			case b.Source != e || !declared(s, v, b):
			case b.DestinationType == topology.DestQueue:
				queues[b.Destination] = true
			default:
				next(b.Destination)
			}
		}
		if ae, ok := s.ExchangeArgs(e).String("alternate-exchange"); ok {
			next(ae)
		}
	}
	return sortedKeys(queues)
}

// ends is a reported class's Before and After.
type ends struct{ before, after []string }

// routeEnds returns the Before and After of routes.
func routeEnds(rs []Route) []ends {
	var out []ends
	for _, r := range rs {
		out = append(out, ends{r.Before, r.After})
	}
	return out
}

// judge compares a message's simulated queues with the reported classes
// whose Matches are the message's: none when it routes alike, else one
// with the simulated queues.
func (p *propertyCase) judge(what string, qb, qa []string, found []ends) {
	switch {
	case len(found) > 1:
		p.fail("%s: %d reported classes share its Matches: %v", what, len(found), found)
	case slices.Equal(qb, qa) && len(found) == 1:
		p.fail("%s: routes alike (%v) but its class is reported: %v -> %v", what, qb, found[0].before, found[0].after)
	case !slices.Equal(qb, qa) && len(found) == 0:
		p.fail("%s: simulated %v -> %v, not reported", what, qb, qa)
	case !slices.Equal(qb, qa) && (!slices.Equal(found[0].before, qb) || !slices.Equal(found[0].after, qa)):
		p.fail("%s: simulated %v -> %v, reported %v -> %v", what, qb, qa, found[0].before, found[0].after)
	}
}

// publishable returns the exchanges clients can publish to on either
// side, the default exchange included.
func (p *propertyCase) publishable() []string {
	out := []string{""}
	for _, v := range []*topology.Vhost{p.vb, p.va} {
		for _, n := range append(topology.BuiltinExchangeNames(), v.ExchangeNames()...) {
			if !slices.Contains(out, n) {
				out = append(out, n)
			}
		}
	}
	return out
}

// checkDeadLetters dead-letters n random messages from every queue of
// both sides for every reason and compares with the reported dead
// letters and delay tiers.
func (p *propertyCase) checkDeadLetters(n int) {
	for _, q := range p.vb.QueueNames() {
		if p.va.Queues[q] == nil {
			continue
		}
		for _, r := range unionReasons(p.reasons(q)) {
			p.checkDeadLetter(q, r, n)
		}
	}
}

// checkDeadLetter dead-letters n random messages from queue q for
// reason r.
func (p *propertyCase) checkDeadLetter(q string, r route.Reason, n int) {
	var reported []*Class
	var found []ends
	collect := func(class *Class, b, a *DeadLetterEnd) {
		reported = append(reported, class)
		found = append(found, ends{endQueues(b), endQueues(a)})
	}
	for _, dl := range p.d.DeadLetters {
		if dl.Queue == q && dl.Reason == r && !dl.Sooner {
			collect(dl.Class, dl.Before, dl.After)
		}
	}
	for _, dt := range p.d.DelayTiers {
		if dt.Queue == q && r == route.Expired {
			collect(dt.Class, dt.Before, dt.After)
		}
	}
	dlx := p.deadLetterExchanges(q, r)
	for _, x := range dlx {
		if slices.Contains(p.d.Truncated, truncatedName("/", x)) {
			return
		}
	}
	vocab := p.vocabulary(dlx...)
	// The keys by which messages reach q, which its dead letters keep.
	for _, s := range []*route.Simulator{p.b, p.a} {
		k := s.InboundKeys(q)
		for _, key := range append(slices.Clone(k.Patterns), k.Literals...) {
			vocab.keys = append(vocab.keys, key)
			vocab.words = append(vocab.words, splitKey(key)...)
		}
	}
	for range n {
		m := vocab.message(p.r)
		p.st.keys++
		eb, ea := p.ends(q, r, m)
		sig, classed, keyed := p.deadLetterSignature(q, r, m)
		if keyed && !p.reachesQueue(q, m) {
			continue // no such message is in q: its classes leave it out
		}
		var match []ends
		for i, c := range reported {
			if (c == nil && !classed) || (c != nil && classed && slices.Equal(c.Matches, sig)) {
				match = append(match, found[i])
			}
		}
		what := fmt.Sprintf("dead letters of %q (%s) of key %q, headers %v (matches %q)", q, r, m.RoutingKey, m.Headers, sig)
		p.judge(what, endQueues(eb), endQueues(ea), match)
	}
}

// endQueues renders an end as a list of queues, "(none)" for nil.
func endQueues(e *DeadLetterEnd) []string {
	if e == nil {
		return []string{"(none)"}
	}
	return e.Queues
}

// checkSilenced compares the reported silenced queues with a brute-force
// account: every queue's reach on each side, from every exchange
// publishers reach and every queue's dead letters, without Compare's
// shortcuts (only the changed sources, candidates first).
func (p *propertyCase) checkSilenced() {
	sb, sa := newSide(p.vb, "/", p.b.Version()), newSide(p.va, "/", p.a.Version())
	rb, ra := bruteReach(sb), bruteReach(sa)
	var want []string
	for _, q := range p.vb.QueueNames() {
		if p.va.Queues[q] != nil && rb[q] && !ra[q] {
			want = append(want, q)
		}
	}
	var got []string
	for _, s := range p.d.Silenced {
		got = append(got, s.Queue)
	}
	if !slices.Equal(got, want) {
		p.fail("silenced %q, brute force says %q", got, want)
	}
}

// bruteReach returns the queues of side s that publishers or another
// queue's dead letters reach.
func bruteReach(s *side) map[string]bool {
	out := map[string]bool{}
	in := &inbound{s: s, reached: s.publishedExchanges()}
	in.each(func(b *topology.Binding) { out[b.Destination] = true })
	for _, p := range s.v.QueueNames() {
		targets, anywhere := s.deadLetterTargets(p)
		for _, q := range s.v.QueueNames() {
			if q != p && (anywhere || slices.Contains(targets, q)) {
				out[q] = true
			}
		}
	}
	return out
}

// truncatedName is how Diff.Truncated names exchange x of vhost
// ("vhost/exchange": "//x" in vhost "/").
func truncatedName(vhost, x string) string { return vhost + "/" + x }
