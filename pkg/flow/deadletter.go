package flow

import (
	"fmt"
	"slices"

	"github.com/mqctl/mqctl/pkg/route"
	"github.com/mqctl/mqctl/pkg/topology"
)

// dlSetup is how a queue dead-letters on one side: its effective
// dead-letter settings.
type dlSetup struct {
	// configured: a dead-letter exchange (a string) is in force.
	configured bool
	dlx        string
	// keyFrom: no dead-letter routing key is set, the dead letters keep
	// the message's own; else rk is theirs.
	keyFrom bool
	rk      string
	// holds: the queue dead-letters at least once (route
	// Simulator.AtLeastOnce), keeping what no queue takes.
	holds bool
}

// setup returns queue q's dead-letter settings.
func (s *side) setup(q string) dlSetup {
	var d dlSetup
	if v, ok := s.sim.QueueArg(q, "x-dead-letter-exchange"); ok {
		d.dlx, d.configured = v.(string)
	}
	v, _ := s.sim.QueueArg(q, "x-dead-letter-routing-key")
	rk, hasRK := v.(string)
	d.rk, d.keyFrom = rk, !hasRK
	d.holds = s.sim.AtLeastOnce(q)
	return d
}

// startOf returns where dead letters of setup d enter: its dead-letter
// exchange, or noExchange when it has none or it is not declared.
func (s *side) startOf(d dlSetup) string {
	if !d.configured || (d.dlx != "" && !s.exists(d.dlx)) {
		return noExchange
	}
	return d.dlx
}

// findDeadLetterChanges collects the queues whose dead letters may go
// elsewhere after the change: declared on one side only, or not
// dlUnchanged.
func (c *vhostCompare) findDeadLetterChanges() {
	c.dlChanged = map[string]bool{}
	for q, qb := range c.b.v.Queues {
		if qb == nil {
			continue
		}
		if qa := c.a.v.Queues[q]; qa == nil || !c.dlUnchanged(q, qb, qa) {
			c.dlChanged[q] = true
		}
	}
	for q, qa := range c.a.v.Queues {
		if qa != nil && !c.b.hasQueue(q) {
			c.dlChanged[q] = true
		}
	}
}

// dlUnchanged reports whether every dead letter of queue q (declared as
// qb before and qa after) goes where it went: same settings (at-least-once
// dead-lettering included), the same messages dead-lettered when full
// (the oldest, or the new ones it refuses: DeadLetterEnd.Refused), no
// tighter limit (side.tighter: with a dead-letter exchange or without,
// more of them go, or sooner), and a dead-letter exchange that routes the
// dead letters alike.
func (c *vhostCompare) dlUnchanged(q string, qb, qa *topology.Queue) bool {
	d := c.b.setup(q)
	if !c.queueSame(qb, qa) && (d != c.a.setup(q) || !slices.Equal(c.b.sim.Reasons(q), c.a.sim.Reasons(q)) || c.b.sim.DropsHead(q) != c.a.sim.DropsHead(q) ||
		slices.ContainsFunc(c.a.sim.Reasons(q), func(r route.Reason) bool { return c.a.tighter(c.b, q, r) != "" })) {
		return false
	}
	if !d.configured {
		return true
	}
	f := c.flow(c.b.startOf(d), c.a.startOf(d))
	return f.identical || (!d.keyFrom && !f.keyAffected(d.rk))
}

// deadLetters adds, for each queue declared on both sides, the dead
// letters (per reason, per class of messages) that go elsewhere after the
// change; a delay tier's expired messages go to DelayTiers.
func (c *vhostCompare) deadLetters() {
	for q := range c.dlChanged {
		if !c.b.hasQueue(q) || !c.a.hasQueue(q) {
			continue
		}
		tier := c.b.isTier(q) || c.a.isTier(q)
		rb, ra := c.b.sim.Reasons(q), c.a.sim.Reasons(q)
		perMessage := c.perMessageExpiry(q, rb, ra)
		if perMessage {
			rb, ra = append(slices.Clip(rb), route.Expired), append(slices.Clip(ra), route.Expired)
		}
		n := len(c.d.DeadLetters)
		for _, r := range unionReasons(rb, ra) {
			if perMessage && r == route.Expired && c.expiredLikeRejected(q) {
				// Rejected came first: its changes are the expired ones.
				for _, dl := range c.d.DeadLetters[n:] {
					if dl.Reason == route.Rejected {
						dl.Reason, dl.PerMessageTTL = route.Expired, true
						c.d.DeadLetters = append(c.d.DeadLetters, dl)
					}
				}
				continue
			}
			c.deadLetter(q, r, tier && r == route.Expired, slices.Contains(rb, r), slices.Contains(ra, r), perMessage && r == route.Expired)
		}
		c.sooner(q, rb, ra, n, tier)
	}
}

// sooner adds, for queue q (its reasons rb before and ra after), the
// dead letters that go where they went, but that it now dead-letters (or
// drops) more of, or sooner (DeadLetter.Sooner), where no change of
// theirs was reported (those from n on in c.d.DeadLetters). Without a
// dead-letter exchange they are lost; with one, more of them reach its
// queues, and only those it drops are lost. A delay tier's expired
// messages are not: its message TTL is its delay (DelayTier.DelayMS), and
// where they return is the tier's own flow. Before, the flows compared
// where dead letters go alone, and said no message went anywhere else
// where a queue now dropped after 1s what it kept an hour, or sent its
// messages to its dead-letter queue after 1s where it kept them an hour.
func (c *vhostCompare) sooner(q string, rb, ra []route.Reason, n int, tier bool) {
	for _, r := range ra {
		if !slices.Contains(rb, r) || (tier && r == route.Expired) || slices.ContainsFunc(c.d.DeadLetters[n:], func(dl DeadLetter) bool { return dl.Reason == r }) {
			continue
		}
		why := c.a.tighter(c.b, q, r)
		if why == "" {
			continue
		}
		// Where the dead letters keep their key, each class of keys the
		// dead-letter exchange tells apart goes its own way: the ends
		// merge them, and those of any class it drops are lost.
		classes, needK, kind := c.deadLetterClasses(q, r, true, true, false)
		var eb, ea, dropped *DeadLetterEnd
		for _, cl := range classes {
			m := deadLetterMessage(cl, needK, kind)
			b, a := c.b.end(q, r, m), c.a.end(q, r, m)
			eb, ea = mergeEnds(eb, b), mergeEnds(ea, a)
			if a.Dropped && dropped == nil {
				dropped = a
			}
		}
		dl := DeadLetter{Vhost: c.vhost, Queue: q, Reason: r, Before: eb, After: ea, Sooner: true, Cause: why}
		switch {
		case dropped != nil && ea.Dropped:
			dl.Loses, dl.Cause = true, why+"; "+dropped.Why
		case dropped != nil:
			dl.Loses, dl.Cause = true, why+"; some of them are dropped: "+dropped.Why
		}
		c.d.DeadLetters = append(c.d.DeadLetters, dl)
	}
}

// mergeEnds returns where the dead letters of two classes go, a and b
// (a nil: b alone): the queues either reaches, dropped where neither
// reaches one. Where they keep the message's key, the key is none of
// theirs.
func mergeEnds(a, b *DeadLetterEnd) *DeadLetterEnd {
	if a == nil {
		e := *b
		if e.KeyFromMessage {
			e.RoutingKey = ""
		}
		return &e
	}
	a.Queues = mergeSorted(a.Queues, b.Queues)
	if len(b.Splits) > 0 && !sameSplits(a.Splits, b.Splits) {
		a.Splits = append(a.Splits, b.Splits...)
	}
	a.Held = a.Held || b.Held
	if len(a.Queues) > 0 {
		a.Dropped, a.Held, a.Why = false, false, ""
	}
	return a
}

// tighter says, for reason r of queue q, what makes it dead-letter (or
// drop) more messages, or sooner, on side s than on side b: a lower
// length limit, a shorter message TTL, a lower delivery limit; "" for
// none.
func (s *side) tighter(b *side, q string, r route.Reason) string {
	switch r {
	case route.MaxLen:
		if s.stricterLimit(b, q) {
			return fmt.Sprintf("its length limit is now %s (was %s): once full it %s", s.lengthLimits(q), b.lengthLimits(q), s.whenFull(q))
		}
	case route.Expired:
		ta, okA := s.millis(q, "x-message-ttl")
		tb, okB := b.millis(q, "x-message-ttl")
		if okA && okB && ta < tb {
			return fmt.Sprintf("its messages now expire after %s (was %s; %s)", s.duration(q, "x-message-ttl", ta), b.duration(q, "x-message-ttl", tb), s.sim.QueueArgSource(q, "x-message-ttl"))
		}
	case route.DeliveryLimit:
		la, okA := s.sim.DeliveryLimit(q)
		lb, okB := b.sim.DeliveryLimit(q)
		if okA && okB && la < lb {
			return fmt.Sprintf("its delivery limit is now %s (was %s)", s.valueText(q, "x-delivery-limit", la, fmt.Sprint(la), ""), b.valueText(q, "x-delivery-limit", lb, fmt.Sprint(lb), ""))
		}
	}
	return ""
}

// perMessageExpiry reports whether queue q's expired dead letters are
// those of messages published with a TTL (the expiration property) alone:
// it has no message TTL on either side (rb and ra, its reasons, lack
// expired), is no stream on either (a stream dead-letters nothing), and
// has a dead-letter exchange on one side at least (without, such
// messages are dropped on both). Any queue may hold such messages: a
// delay queue of a per-message TTL holds nothing else.
func (c *vhostCompare) perMessageExpiry(q string, rb, ra []route.Reason) bool {
	return len(rb) > 0 && len(ra) > 0 && !slices.Contains(rb, route.Expired) && !slices.Contains(ra, route.Expired) &&
		(c.b.setup(q).configured || c.a.setup(q).configured)
}

// expiredLikeRejected reports whether queue q's expired dead letters go
// where its rejected ones go, on both sides, whatever the message: no
// headers exchange on their way (one could tell them apart by
// x-first-death-reason), and none of them can return to q, which drops
// an expired dead letter as a cycle where it takes back a rejected one.
// Comparing the rejected ones then tells the expired ones too, at half
// the cost (a plan replacing 10,000 queues compares each).
func (c *vhostCompare) expiredLikeRejected(q string) bool {
	starts := [2]string{}
	for i, s := range []*side{c.b, c.a} {
		d := s.setup(q)
		starts[i] = s.startOf(d)
		switch {
		case starts[i] == noExchange:
		case starts[i] == "":
			if d.keyFrom || d.rk == q {
				return false
			}
		case slices.Contains(s.targetsFrom(starts[i]).bound, q):
			return false
		}
	}
	f := c.flow(starts[0], starts[1])
	return !f.headers
}

// unionReasons returns the reasons of a or b, in route's order.
func unionReasons(a, b []route.Reason) []route.Reason {
	var out []route.Reason
	for _, r := range []route.Reason{route.Rejected, route.Expired, route.MaxLen, route.DeliveryLimit} {
		if slices.Contains(a, r) || slices.Contains(b, r) {
			out = append(out, r)
		}
	}
	return out
}

// sameEnd reports whether dead letters reach the same queues at both
// ends, or are held at both (nil: the queue does not dead-letter for the
// reason).
func sameEnd(a, b *DeadLetterEnd) bool {
	if a == nil || b == nil {
		return a == b
	}
	return slices.Equal(a.Queues, b.Queues) && sameSplits(a.Splits, b.Splits) && a.Held == b.Held && a.Refused == b.Refused
}

// end returns where queue q's dead letters of message m for reason r go
// on side s.
func (s *side) end(q string, r route.Reason, m route.Message) *DeadLetterEnd {
	d := s.sim.DeadLetter(q, r, m)
	qs, splits := s.reached(d.Result)
	e := &DeadLetterEnd{Configured: d.Configured, Exchange: d.Exchange, RoutingKey: d.RoutingKey, KeyFromMessage: d.KeyFromMessage, Queues: qs, Splits: splits,
		Refused: r == route.MaxLen && !s.sim.DropsHead(q)}
	if len(e.Queues) > 0 {
		return e
	}
	// Where the route reaches only queues that refuse every message
	// (side.refuses), the dead letters are refused there too: kept where
	// each dead-letters them on to a queue (reject-publish-dlx), held
	// where q dead-letters at least once (the broker tries again), else
	// dropped (measured on RabbitMQ 4.3.6, 4.0.5 and 3.10.8: an expired
	// dead letter routed to a classic queue with a length limit of 0 and
	// reject-publish is kept nowhere; with reject-publish-dlx it reaches
	// that queue's dead-letter queue).
	if refused := queuesOf(d.Result); len(refused) > 0 {
		if s.deadLettersRefused(m, refused) {
			for _, p := range refused {
				e.Queues = mergeSorted(e.Queues, queuesOf(s.sim.DeadLetter(p, route.MaxLen, m).Result))
			}
			return e
		}
		_, why := s.refuses(refused[0])
		held := s.sim.AtLeastOnce(q)
		e.Dropped, e.Held, e.Why = !held, held, fmt.Sprintf("queue %q refuses them: %s", refused[0], why)
		return e
	}
	e.Dropped, e.Held, e.Why = !d.Held, d.Held, s.why(d)
	return e
}

// why says why dead letters d reach no queue.
func (s *side) why(d route.DeadLetterRoute) string {
	switch {
	case !d.Configured && len(d.Result.Problems) > 0:
		return d.Result.Problems[0]
	case !d.Configured:
		return "no dead-letter exchange"
	case d.ExchangeMissing:
		return fmt.Sprintf("dead-letter exchange %q is not declared", d.Exchange)
	case len(d.Cycles) > 0:
		return fmt.Sprintf("dead-letter cycle: they would return to queue %q, which they were dead-lettered from, and RabbitMQ drops them", d.Cycles[0])
	case len(d.Result.Unsimulated) > 0:
		return fmt.Sprintf("DLX %q routes them to exchange %q, of a type mqctl does not simulate, which leads to no queue", d.Exchange, d.Result.Unsimulated[0])
	case d.Exchange == "":
		return fmt.Sprintf("DLX \"\" (the default exchange) has no queue named %q", d.RoutingKey)
	}
	switch s.kind(d.Exchange) {
	case ClassHeaders:
		return fmt.Sprintf("DLX %q has no binding for their headers", d.Exchange)
	case ClassFanout:
		return fmt.Sprintf("DLX %q has no binding", d.Exchange)
	}
	return fmt.Sprintf("DLX %q has no binding for %q", d.Exchange, d.RoutingKey)
}
