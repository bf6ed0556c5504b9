package lint

import (
	"fmt"
	"sort"
	"strings"

	"github.com/mqctl/mqctl/pkg/topology"
)

// classify decides what each queue is for, from the dead-letter routes and
// the sugar's roles when present: delay tiers, DLQs, queues that collect
// unroutable messages through alternate exchanges, and queues named as a
// DLQ that no dead letters reach.
func (f *facts) classify() {
	// Queues other queues' dead letters reach.
	reached := map[string]bool{}
	done := map[targetsKey]string{}
	for q, d := range f.dl {
		markTargets(reached, q, d.Targets, done)
	}
	f.findAlternates()
	f.nameDLQs(reached)
	cand := f.delayCandidates()
	// Queues reached by the dead letters of a queue that is no delay
	// candidate: DLQs (or working queues that take failures, MQ104).
	reachedByWork := map[string]bool{}
	done = map[targetsKey]string{}
	for q, d := range f.dl {
		if !cand[q] {
			markTargets(reachedByWork, q, d.Targets, done)
		}
	}
	f.candidates, f.reachedByWork = cand, reachedByWork
	tiers := f.tierCounts(cand)
	for _, q := range f.queueNames {
		if f.v.Queues[q].Role == topology.RoleDelay {
			if f.hasTTL(q) {
				f.delay[q] = true
			} else {
				f.perMsgDelay[q] = true
			}
			continue
		}
		if !cand[q] {
			continue
		}
		if f.isDelayTier(q, reached, cand, reachedByWork, tiers) {
			f.delay[q] = true
		}
	}
	done = map[targetsKey]string{}
	for _, q := range f.queueNames {
		if f.v.Queues[q].Role == topology.RoleDeadLetter {
			f.dlq[q] = true
		}
		d := f.dl[q]
		if d == nil || f.isDelay(q) {
			continue
		}
		markTargets(f.dlq, q, d.Targets, done)
	}
	for _, q := range f.queueNames {
		queue := f.v.Queues[q]
		d := f.dl[q]
		if d == nil || f.hasTTL(q) || f.isDelay(q) || f.dlq[q] || len(f.into[q]) > 0 ||
			queue.Role == topology.RoleDeadLetter || queue.Type == topology.QueueStream {
			continue
		}
		for _, t := range d.Targets {
			if t != q && !f.delay[t] && f.publishedTo(t) && f.v.Queues[t].Role != topology.RoleDeadLetter {
				f.perMsgDelay[q] = true
				break
			}
		}
	}
	f.findCollectors()
}

// delayCandidates are the queues that may be delay tiers: a queue-level
// TTL and a dead-letter exchange (not DLQs declared as such, not streams).
func (f *facts) delayCandidates() map[string]bool {
	out := map[string]bool{}
	for _, q := range f.queueNames {
		queue := f.v.Queues[q]
		if f.dl[q] != nil && f.hasTTL(q) && queue.Role == topology.RoleWorking && queue.Type != topology.QueueStream {
			out[q] = true
		}
	}
	return out
}

// tierCounts counts, per dead-letter exchange, the different TTLs of the
// delay candidates that dead-letter to it: delay tiers written by hand
// share one exchange and differ in their TTL (10s, 1m, 10m).
func (f *facts) tierCounts(cand map[string]bool) map[string]int {
	ttls := map[string]map[string]bool{}
	for q := range cand {
		x := f.dl[q].Exchange
		if ttls[x] == nil {
			ttls[x] = map[string]bool{}
		}
		ttls[x][fmt.Sprint(topology.Normalize(f.qargs[q][argTTL]))] = true
	}
	out := make(map[string]int, len(ttls))
	for x, set := range ttls {
		out[x] = len(set)
	}
	return out
}

// isDelayTier decides whether delay candidate q (a TTL and a dead-letter
// exchange) is a delay tier: a queue that holds messages for its TTL and
// then sends them back towards work. That is so when its expired messages
// reach a queue consumers work from; and, when they reach no other queue
// (a delay tier whose return is broken, MQ201), when its dead-letter
// exchange points back towards work: the default exchange (for a queue
// that no dead letters reach), or an exchange that feeds working queues.
// When they reach queues that look like DLQs, it is still a delay tier if
// its dead-letter exchange also feeds queues no dead letters reach at all
// (regular traffic: the exchange is a work exchange). A queue with a TTL
// whose expired messages go to a DLQ is a working queue.
func (f *facts) isDelayTier(q string, reachedBy map[string]bool, cand, reachedByWork map[string]bool, tiers map[string]int) bool {
	reached := reachedBy[q]
	d := f.dl[q]
	returnsToWork, elsewhere := false, false
	for _, t := range d.Targets {
		if t != q {
			elsewhere = true
			if f.workingLooking(t) && f.v.Queues[t].Role != topology.RoleDelay {
				returnsToWork = true
			}
		}
	}
	switch {
	case returnsToWork:
		return true
	case elsewhere:
		return d.Exchange != "" && f.feedsRegularTraffic(q, d.Exchange, cand, reachedBy)
	case !reached && (len(f.into[q]) == 0 || d.Exchange == ""):
		return true
	}
	return d.Exchange != "" && f.feedsWork(q, d.Exchange, cand, reachedByWork, tiers)
}

// feedsWork reports whether exchange x, the dead-letter exchange of delay
// candidate q, delivers to queues consumers work from: x is no
// dead-letter exchange of a queue without a TTL, and it is bound (directly
// or through exchange-to-exchange bindings) to a queue other than q that
// is no delay candidate and no DLQ (declared, reached by a working queue's
// dead letters, or named as one) and that has a dead-letter exchange of
// its own or receives regular traffic — any such queue when x is shared by
// delay candidates with different TTLs (tiers written by hand).
func (f *facts) feedsWork(q, x string, cand, reachedByWork map[string]bool, tiers map[string]int) bool {
	if !f.dlxOfCandidatesOnly(x, cand) {
		return false
	}
	for _, w := range f.memoWorkQueues("work", x, cand, reachedByWork) {
		if w != q && (f.dl[w] != nil || f.publishedTo(w) || tiers[x] >= 2) {
			return true
		}
	}
	return false
}

// feedsRegularTraffic reports whether exchange x, the dead-letter exchange
// of delay candidate q and of no queue without a TTL, also delivers to a
// queue that no dead letters reach at all (and that is no delay candidate
// nor a DLQ by name): clients publish there, so x is a work exchange.
func (f *facts) feedsRegularTraffic(q, x string, cand, reached map[string]bool) bool {
	if !f.dlxOfCandidatesOnly(x, cand) {
		return false
	}
	for _, w := range f.memoWorkQueues("regular", x, cand, reached) {
		if w != q {
			return true
		}
	}
	return false
}

// dlxOfCandidatesOnly reports whether every queue that dead-letters to x
// is a delay candidate (memoised per exchange: candidates sharing one
// exchange ask the same question).
func (f *facts) dlxOfCandidatesOnly(x string, cand map[string]bool) bool {
	key := "dlx\x00" + x
	if r, ok := f.exchangeMemo[key]; ok {
		return r != nil
	}
	ok := true
	for _, o := range f.dlxOf[x] {
		if !cand[o] {
			ok = false
			break
		}
	}
	if ok {
		f.exchangeMemo[key] = []string{}
	} else {
		f.exchangeMemo[key] = nil
	}
	return ok
}

// memoWorkQueues is workQueuesOf memoised per exchange and kind of reached
// set.
func (f *facts) memoWorkQueues(kind, x string, cand, reached map[string]bool) []string {
	key := kind + "\x00" + x
	if r, ok := f.exchangeMemo[key]; ok {
		return r
	}
	r := f.workQueuesOf(x, cand, reached)
	f.exchangeMemo[key] = r
	return r
}

// workQueuesOf lists the queues exchange x reaches through bindings and
// exchange-to-exchange bindings (whatever the key) that may be working
// queues: no delay candidates, no queues in reached (DLQs), no DLQs by
// name, no sugar roles. Sorted.
func (f *facts) workQueuesOf(x string, cand, reached map[string]bool) []string {
	var out []string
	for _, w := range f.reachableQueues(x) {
		wq := f.v.Queues[w]
		if wq == nil || cand[w] || reached[w] || wq.Role != topology.RoleWorking || f.isNamedDLQ(w) {
			continue
		}
		out = append(out, w)
	}
	return out
}

// reachableQueues lists the queues bound to exchange x, directly or
// through exchange-to-exchange bindings, whatever the routing key. Sorted.
func (f *facts) reachableQueues(x string) []string {
	seenX := map[string]bool{x: true}
	seenQ := map[string]bool{}
	work := []string{x}
	var out []string
	for len(work) > 0 {
		e := work[0]
		work = work[1:]
		for _, b := range f.from[e] {
			switch b.DestinationType {
			case topology.DestQueue:
				if !seenQ[b.Destination] {
					seenQ[b.Destination] = true
					out = append(out, b.Destination)
				}
			case topology.DestExchange:
				if !seenX[b.Destination] {
					seenX[b.Destination] = true
					work = append(work, b.Destination)
				}
			}
		}
	}
	sort.Strings(out)
	return out
}

// dlqSuffixes are the name endings that mark a DLQ by convention
// (orders.dlq, orders-dead-letter, orders_parking), after ".", "-" or "_".
var dlqSuffixes = []string{"dlq", "dead", "deadletter", "deadletters", "dead-letter", "dead-letters",
	"dead_letter", "dead_letters", "parking", "parkinglot", "parking-lot", "parking_lot"}

// nameDLQs finds the queues that no dead letters reach but that are named
// as a DLQ (Q.dlq, for queue Q when it is declared). The routing says
// nothing about them (a client may move failed messages there itself, a
// parking lot), so only their name tells that they are no working queue:
// lint asks them for no DLQ of their own and says why no dead letters
// reach them (MQ106). A queue fed only through alternate exchanges is
// none of them, whatever its name: the routing tells what it is for (it
// collects what other exchanges cannot route, see findCollectors).
func (f *facts) nameDLQs(reached map[string]bool) {
	for _, d := range f.queueNames {
		queue := f.v.Queues[d]
		if reached[d] || queue.Role != topology.RoleWorking || (f.dl[d] != nil && f.hasTTL(d)) {
			continue
		}
		if _, collects := f.fedOnlyUnroutable(d); collects {
			continue
		}
		if o, ok := dlqOrigin(d, f.v.Queues); ok {
			f.namedDLQ[d] = o
			if _, seen := f.dlqNamedFor[o]; o != "" && !seen {
				f.dlqNamedFor[o] = d
			}
		}
	}
}

// isNamedDLQ reports whether q is named as a DLQ and no dead letters reach
// it (see nameDLQs).
func (f *facts) isNamedDLQ(q string) bool {
	_, ok := f.namedDLQ[q]
	return ok
}

// dlqOrigin reports whether name is a DLQ's name by convention (see
// dlqSuffixes), and returns the declared queue whose DLQ the name makes it
// ("" when the name without its suffix is no declared queue).
func dlqOrigin(name string, queues map[string]*topology.Queue) (string, bool) {
	lower := strings.ToLower(name)
	for _, s := range dlqSuffixes {
		for _, sep := range []string{".", "-", "_"} {
			if !strings.HasSuffix(lower, sep+s) || len(name) == len(sep+s) {
				continue
			}
			if o := name[:len(name)-len(sep+s)]; queues[o] != nil {
				return o, true
			}
			return "", true
		}
	}
	return "", false
}

// findAlternates records what alternate exchanges deliver, before any
// queue is classified: the alternate exchanges and whose they are
// (f.aeOf), the queues they deliver to through bindings and
// exchange-to-exchange bindings whatever the key (f.aeFed), and the
// exchanges that carry nothing but unroutable messages (f.aeSrcs). An
// exchange's alternate exchange is the one the simulator routes by
// (route.Simulator.ExchangeArgs): its alternate-exchange argument, else
// the alternate-exchange key of the policy that applies to it; operator
// policies cannot set one. An alternate exchange that is not declared
// delivers nothing: the broker drops what would go there.
func (f *facts) findAlternates() {
	for _, x := range f.exchangeNames {
		if ae, ok := f.sim.ExchangeArgs(x).String(argAlternate); ok && ae != x && f.exchangeDeclared(ae) {
			f.aeOf[ae] = append(f.aeOf[ae], x)
		}
	}
	if len(f.aeOf) == 0 {
		return
	}
	for ae := range f.aeOf {
		for _, q := range f.reachableQueues(ae) {
			f.aeFed[q] = true
		}
	}
	// aeSrcs: exchange -> the exchanges whose unroutable messages it
	// carries, for the alternate exchanges that are no dead-letter
	// exchange and the exchanges only they are bound to.
	srcs := map[string][]string{}
	for ae, xs := range f.aeOf {
		if len(f.dlxOf[ae]) == 0 {
			srcs[ae] = xs
		}
	}
	into := map[string][]*topology.Binding{} // exchange-to-exchange bindings by destination
	for _, b := range f.v.Bindings {
		if b.DestinationType == topology.DestExchange {
			into[b.Destination] = append(into[b.Destination], b)
		}
	}
	for changed := true; changed; {
		changed = false
		for _, x := range f.exchangeNames {
			if _, done := srcs[x]; done || len(into[x]) == 0 || len(f.dlxOf[x]) > 0 || len(f.aeOf[x]) > 0 {
				continue
			}
			if from, ok := fedOnlyBy(into[x], srcs); ok {
				srcs[x] = from
				changed = true
			}
		}
	}
	f.aeSrcs = srcs
}

// fedOnlyUnroutable reports whether queue q is fed only through alternate
// exchanges: every binding into it comes from an exchange that is the
// alternate exchange of another, or that only such exchanges are bound
// to. It returns the exchanges whose unroutable messages it collects.
func (f *facts) fedOnlyUnroutable(q string) ([]string, bool) {
	if len(f.into[q]) == 0 || len(f.aeSrcs) == 0 {
		return nil, false
	}
	return fedOnlyBy(f.into[q], f.aeSrcs)
}

// findCollectors finds the queues fed only through alternate exchanges
// (see fedOnlyUnroutable) that are no DLQ nor delay queue. They collect
// what the other exchanges cannot route, as a DLQ collects dead letters.
func (f *facts) findCollectors() {
	for _, q := range f.queueNames {
		if f.dlq[q] || f.isDelay(q) {
			continue
		}
		if from, ok := f.fedOnlyUnroutable(q); ok {
			f.collects[q] = from
		}
	}
}

// fedOnlyBy reports whether every binding of bs comes from an exchange of
// srcs (exchange -> the exchanges whose unroutable messages it carries),
// and returns those exchanges, sorted and once each.
func fedOnlyBy(bs []*topology.Binding, srcs map[string][]string) ([]string, bool) {
	seen := map[string]bool{}
	var from []string
	for _, b := range bs {
		s, ok := srcs[b.Source]
		if !ok {
			return nil, false
		}
		for _, x := range s {
			if !seen[x] {
				seen[x] = true
				from = append(from, x)
			}
		}
	}
	sort.Strings(from)
	return from, true
}
