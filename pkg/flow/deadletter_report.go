package flow

import (
	"fmt"
	"strings"

	"github.com/mqctl/mqctl/pkg/route"
	"github.com/mqctl/mqctl/pkg/topology"
)

// deadLetter adds queue q's dead letters for reason r that go elsewhere
// after the change: one report, or one per class of messages when where
// they go depends on the message (its key, kept when no dead-letter
// routing key is set, or its headers, when a headers exchange routes
// them). tier reports them as a delay tier's; inB and inA say whether
// the queue dead-letters for r on each side; perMessage that r is expired
// and only messages published with a TTL expire (DeadLetter.PerMessageTTL).
func (c *vhostCompare) deadLetter(q string, r route.Reason, tier, inB, inA, perMessage bool) {
	classes, needK, kind := c.deadLetterClasses(q, r, inB, inA, true)
	for _, cl := range classes {
		m := deadLetterMessage(cl, needK, kind)
		var eb, ea *DeadLetterEnd
		if inB {
			eb = c.b.end(q, r, m)
		}
		if inA {
			ea = c.a.end(q, r, m)
		}
		if sameEnd(eb, ea) {
			continue
		}
		var class *Class
		if needK || cl.byHeaders {
			class = &Class{Kind: kind, RoutingKey: cl.key, Headers: cl.headers, Matches: cl.matches, Keyed: needK && telling(kind) != "key", ByHeaders: cl.byHeaders}
		}
		c.report(q, r, tier, perMessage, class, eb, ea)
	}
}

// deadLetterMessage is the message that stands for class cl of dead
// letters: without classes of keys (needK false), the one class is of
// every key. kind is the dead-letter exchange's.
func deadLetterMessage(cl msgClass, needK bool, kind string) route.Message {
	return route.Message{RoutingKey: cl.key, Headers: cl.headers, Class: !needK || !oneKey(kind, cl.matches), Many: true}
}

// deadLetterClasses returns the classes of queue q's dead letters for
// reason r that the dead-letter exchanges of both sides tell apart (inB,
// inA: whether q dead-letters for r on each side), whether they are
// classes of keys (needK), and the kind of the dead-letter exchange.
// prune leaves out the classes that go where they went for certain (only
// those matching a changed binding can go elsewhere).
func (c *vhostCompare) deadLetterClasses(q string, r route.Reason, inB, inA, prune bool) (classes []msgClass, needK bool, kind string) {
	sb, sa := c.b.setup(q), c.a.setup(q)
	f := c.flow(startIf(inB, c.b.startOf(sb)), startIf(inA, c.a.startOf(sa)))
	needK = f.keyRouted && ((inB && sb.configured && sb.keyFrom) || (inA && sa.configured && sa.keyFrom))
	// Only the classes that match a changed binding can go elsewhere when
	// the dead letters keep their key (or their key stays) and are held
	// (or not) alike; else every class can, the unroutable ones too.
	sameKeys := prune && inB && inA && sb.keyFrom == sa.keyFrom && (sb.keyFrom || sb.rk == sa.rk) && sb.holds == sa.holds
	classes = []msgClass{{}}
	if needK || f.headers {
		req := classRequest{keys: needK, pruneKeys: sameKeys && f.keysOnly, pruneHeaders: sameKeys && f.headersOnly,
			skip: deathSkip, context: c.deathContext(q, r), memo: "dead-letter"}
		if needK {
			req.gates = c.inboundGates(q)
		}
		if !sb.keyFrom {
			req.keyB = &sb.rk
		}
		if !sa.keyFrom {
			req.keyA = &sa.rk
		}
		if f.headers || req.gates != nil {
			req.memo += "\x00" + q + "\x00" + string(r)
		}
		var truncated bool
		if classes, truncated = c.classes(f, req); truncated {
			c.truncate(c.dlxName(f))
		}
	}
	dlxSide := c.a
	if f.startA == noExchange {
		dlxSide = c.b
	}
	return classes, needK, dlxSide.kind(c.dlxName(f))
}

// inboundGates returns the keys by which messages reach queue q on
// either side (route.Simulator.InboundKeys), as gate patterns: the only
// keys its dead letters can keep. nil when a message of any key can reach
// it.
func (c *vhostCompare) inboundGates(q string) []keyPattern {
	var out []keyPattern
	for _, s := range []*side{c.b, c.a} {
		k := s.sim.InboundKeys(q)
		if k.Any {
			return nil
		}
		for _, p := range k.Patterns {
			out = append(out, keyPattern{text: p, gate: true})
		}
		for _, l := range k.Literals {
			out = append(out, keyPattern{text: l, literal: true, gate: true})
		}
	}
	return out
}

// dlxName names the dead-letter exchange of f: after the change, or
// before when there is none after.
func (c *vhostCompare) dlxName(f *flowChange) string {
	if f.startA != noExchange {
		return f.startA
	}
	return f.startB
}

// report adds a DeadLetter (or, for a delay tier, a DelayTier) for queue
// q's dead letters of class (nil: all of them) for reason r that went to
// eb and go to ea.
//
// The queue is declared on both sides (deadLetters), so dead letters that
// reached a queue before, were held in the queue (at-least-once
// dead-lettering), or were not dead letters at all (eb nil: the queue kept
// those messages), and are dropped after are lost: for example a classic
// queue made a quorum queue, which drops a message whose deliveries fail
// past its delivery limit when it has no dead-letter exchange.
func (c *vhostCompare) report(q string, r route.Reason, tier, perMessage bool, class *Class, eb, ea *DeadLetterEnd) {
	// A full queue that refused the new messages (and dead-lettered
	// them) and now drops its oldest ones instead, dead letters of which
	// no queue takes, loses messages a publisher using confirms was told
	// of and could publish again.
	refusedNoMore := eb != nil && ea != nil && eb.Refused && !ea.Refused
	// A full queue that refused the new messages (reject-publish) and now
	// refuses them and dead-letters them nowhere (reject-publish-dlx), at
	// the same limit or a higher one, loses none it did not: the
	// publisher is told as it was.
	refusedStill := eb == nil && ea != nil && ea.Refused && c.b.rejectsPublish(q) && !c.a.stricterLimit(c.b, q)
	loses := ea != nil && ea.Dropped && !refusedStill && (eb == nil || len(eb.Queues) > 0 || eb.Held || refusedNoMore)
	var causes []string
	if eb != nil && ea != nil && eb.Refused != ea.Refused {
		causes = append(causes, c.overflowMoved(q, ea.Refused))
	}
	if loses {
		causes = append(causes, c.lossCause(q, r, eb, ea))
	}
	cause := strings.Join(causes, "; ")
	if !tier {
		c.d.DeadLetters = append(c.d.DeadLetters, DeadLetter{Vhost: c.vhost, Queue: q, Reason: r, PerMessageTTL: perMessage, Class: class, Before: eb, After: ea, Loses: loses, Cause: cause})
		return
	}
	t := DelayTier{Vhost: c.vhost, Queue: q, Class: class, Before: eb, After: ea, Loses: loses, Cause: cause}
	for _, s := range []*side{c.b, c.a} {
		if qq := s.v.Queues[q]; qq != nil && qq.Origin != "" {
			t.Origin = qq.Origin
		}
		if v, ok := s.sim.QueueArg(q, "x-message-ttl"); ok {
			if ms, isInt := topology.Normalize(v).(int64); isInt {
				t.DelayMS, t.DelayWritten = ms, s.written(q, "x-message-ttl", ms)
			}
		}
	}
	c.d.DelayTiers = append(c.d.DelayTiers, t)
}

// lossCause says why queue q's dead letters for reason r, which went to
// eb, are dropped at ea: what made the queue start dead-lettering them
// (eb nil), or stop holding them (eb held), then why they reach no queue.
func (c *vhostCompare) lossCause(q string, r route.Reason, eb, ea *DeadLetterEnd) string {
	switch {
	case eb == nil:
		return c.startsDropping(q, r) + "; " + ea.Why
	case eb.Held && ea.Configured:
		return c.stopsHolding(q) + "; " + ea.Why
	case eb.Configured && !ea.Configured:
		if gone := c.dlxGone(q, eb.Exchange); gone != "" {
			return gone
		}
	}
	return ea.Why
}

// dlxGone says what took queue q's dead-letter exchange dlx away, which
// leaves it none, where the queue is declared on both sides: its own
// argument removed, or the policy that set it no longer setting it or
// applying to the queue ("" when neither explains it).
func (c *vhostCompare) dlxGone(q, dlx string) string {
	const arg = "x-dead-letter-exchange"
	if c.b.v.Queues[q].Arguments.Has(arg) {
		if !c.a.v.Queues[q].Arguments.Has(arg) {
			return fmt.Sprintf("its dead-letter exchange %q is removed", dlx)
		}
		return ""
	}
	pb, _ := c.b.sim.QueuePolicies(q)
	pa, _ := c.a.sim.QueuePolicies(q)
	switch {
	case pb == "":
		return ""
	case pa == pb:
		return fmt.Sprintf("policy %q no longer sets its dead-letter exchange (%q), so it has none", pb, dlx)
	case pa == "":
		return fmt.Sprintf("policy %q, which set its dead-letter exchange %q, no longer applies to it, so it has none", pb, dlx)
	}
	return fmt.Sprintf("policy %q applies to it now instead of policy %q, which set its dead-letter exchange %q, and sets none", pa, pb, dlx)
}

// stopsHolding says what ended queue q's at-least-once dead-lettering:
// its type, its dead-letter-strategy or its overflow (rabbit_quorum_queue
// dlh/5: at-least-once needs all three), and what that does.
func (c *vhostCompare) stopsHolding(q string) string {
	const fate = ": it no longer dead-letters at least once, and drops the dead letters no queue takes where it kept them until one did (what it holds of them is deleted when the change is applied; mqctl apply refuses that without --allow-data-loss)"
	if t := c.a.v.Queues[q].Type; t != c.b.v.Queues[q].Type {
		return fmt.Sprintf("it is now a %s queue", t) + fate
	}
	if v := c.a.queueString(q, "x-dead-letter-strategy", "at-most-once, the default"); v != "at-least-once" {
		return fmt.Sprintf("its dead-letter-strategy is now %s (was at-least-once)", v) + fate
	}
	return fmt.Sprintf("its overflow is now %s (was reject-publish), with which RabbitMQ falls back to at-most-once dead-lettering", c.a.queueString(q, "x-overflow", "drop-head, the default")) + fate
}

// queueString returns queue q's effective argument key on side s as a
// string, none when it is not set.
func (s *side) queueString(q, key, none string) string {
	v, ok := s.sim.QueueArg(q, key)
	if !ok {
		return none
	}
	return fmt.Sprint(v)
}

// isTier reports whether queue q is a delay tier on side s: a
// retry.delays tier, or a queue that lets its messages expire into a
// dead-letter exchange and that no exchange but the default binds.
func (s *side) isTier(q string) bool {
	qq := s.v.Queues[q]
	if qq == nil {
		return false
	}
	if qq.Role == topology.RoleDelay {
		return true
	}
	_, ttl := s.sim.QueueArg(q, "x-message-ttl")
	_, dlx := s.sim.QueueArg(q, "x-dead-letter-exchange")
	return ttl && dlx && !s.isBound(q)
}

// deathContext returns the headers the broker gives a first dead letter
// of queue q for reason r before routing it (route.Simulator.DeadLetter),
// as far as a headers exchange sees them: x-first-death-*, from 3.13
// x-last-death-*, and up to 3.12 x-death (its entry's routing keys left
// empty: no criterion can ask for them).
func (c *vhostCompare) deathContext(q string, r route.Reason) map[string]any {
	h := map[string]any{"x-first-death-reason": string(r), "x-first-death-queue": q, "x-first-death-exchange": ""}
	if c.ver.SetsLastDeathHeaders() {
		h["x-last-death-reason"], h["x-last-death-queue"], h["x-last-death-exchange"] = string(r), q, ""
	}
	if c.ver.RegroupsXDeath() {
		h["x-death"] = []any{map[string]any{"count": int64(1), "reason": string(r), "queue": q, "exchange": "", "routing-keys": []any{}}}
	}
	return h
}

// lengthLimits renders queue q's length limits on side s ("100
// messages or 1048576 bytes"), "" for none.
func (s *side) lengthLimits(q string) string {
	var limits []string
	if v, ok := s.sim.QueueArg(q, "x-max-length"); ok {
		unit := " " + plural2("message", "messages", countOf(v))
		limits = append(limits, s.valueText(q, "x-max-length", v, fmt.Sprint(v)+unit, " messages"))
	}
	if v, ok := s.sim.QueueArg(q, "x-max-length-bytes"); ok {
		unit := " " + plural2("byte", "bytes", countOf(v))
		limits = append(limits, s.valueText(q, "x-max-length-bytes", v, fmt.Sprint(v)+unit, " bytes"))
	}
	return strings.Join(limits, " or ")
}

// countOf is v as a count for plural2: 1 for one, else 2.
func countOf(v any) int {
	if n, ok := topology.Number(v); ok && n == 1 {
		return 1
	}
	return 2
}

// whenFull says what queue q does on side s when it is full and its
// overflow dead-letters.
func (s *side) whenFull(q string) string {
	if s.sim.DropsHead(q) {
		return "drops its oldest messages (overflow drop-head)"
	}
	return "refuses new messages (a publisher using confirms gets a basic.nack) and dead-letters them (overflow reject-publish-dlx)"
}

// overflowMoved says what a full queue q does with messages after the
// change, where its overflow moved between drop-head (as the queue reads
// it) and a classic queue's reject-publish-dlx: it dead-letters (or
// drops, without a dead-letter exchange) the new messages it refuses
// (refused, after) or its oldest ones (measured on RabbitMQ 4.3.6, 4.0.5
// and 3.10.8, TestOverflowDeadLettersAgainstBroker).
func (c *vhostCompare) overflowMoved(q string, refused bool) string {
	was, now := c.b.overflowText(q), c.a.overflowText(q)
	if refused {
		return fmt.Sprintf("its overflow is now %s (was %s): once it holds its length limit of %s it refuses each new message (a publisher using confirms gets a basic.nack and can publish it again; one without confirms is told nothing) and dead-letters it, where it took it and dead-lettered its oldest message", now, was, c.a.lengthLimits(q))
	}
	return fmt.Sprintf("its overflow is now %s (was %s): once it holds its length limit of %s it takes each new message and dead-letters its oldest, and the publisher is told nothing, where it refused the new message (a publisher using confirms got a basic.nack and could publish it again) and dead-lettered it", now, was, c.a.lengthLimits(q))
}

// overflowText names queue q's overflow on side s as the queue reads it.
func (s *side) overflowText(q string) string {
	v := s.queueString(q, "x-overflow", "drop-head, the default")
	if v == "reject-publish-dlx" && s.sim.DropsHead(q) {
		return "reject-publish-dlx, which a quorum queue reads as drop-head"
	}
	return v
}

// maxLenCause says what makes queue q dead-letter for reason maxlen after
// the change: a length limit it did not have (newLengthLimit), or, where
// it had one, an overflow that now dead-letters (drop-head or
// reject-publish-dlx, where it was reject-publish).
func (c *vhostCompare) maxLenCause(q string) string {
	had := c.b.lengthLimits(q)
	if had == "" {
		return c.a.newLengthLimit(q)
	}
	return fmt.Sprintf("its overflow is now %s (was %s): when it reaches its length limit of %s it %s", c.a.overflowText(q), c.b.overflowText(q), c.a.lengthLimits(q), c.a.whenFull(q))
}

// newLengthLimit says what a length limit queue q did not have before
// does on side s: it drops the oldest message when the queue is full and,
// when the limit comes from a policy (not an argument of the queue, which
// a replace declares afresh), it drops at once what the queue holds over
// it when the policy is put (measured on 3.10.8, 4.0.5 and 4.3.6; apply
// refuses that without --allow-data-loss, engine limitTrims).
func (s *side) newLengthLimit(q string) string {
	what := "a length limit"
	if limits := s.lengthLimits(q); limits != "" {
		what += " of " + limits
	}
	text := "it now has " + what + ", and when full " + s.whenFull(q)
	if own := s.v.Queues[q]; own != nil && !own.Arguments.Has("x-max-length") && !own.Arguments.Has("x-max-length-bytes") {
		text += fmt.Sprintf(", starting with what it holds over the limit when %s is put (mqctl apply refuses that without --allow-data-loss)", s.policyOf(q, "x-max-length", "x-max-length-bytes"))
	}
	return text
}

// newDeliveryLimit says what the delivery limit queue q did not have
// before does on side s, as the target version counts it
// (route.Simulator.DeliveryLimitRule: every return before 4.3, failed
// deliveries only on 4.3).
func (s *side) newDeliveryLimit(q string) string {
	limit, _ := s.sim.DeliveryLimit(q)
	when, counts := s.sim.DeliveryLimitRule(limit, !s.setup(q).configured)
	if written, ok := s.envFor(q).WrittenAs("x-delivery-limit", fmt.Sprint(limit)); ok {
		when = strings.Replace(when, fmt.Sprintf(" %d ", limit), " "+written+" ", 1)
	}
	source := s.sim.QueueArgSource(q, "x-delivery-limit")
	if source == "" {
		source = "the delivery limit quorum queues have by default"
	}
	return fmt.Sprintf("it now %s (%s): %s", when, source, counts)
}

// startsDropping says what makes queue q dead-letter for reason r after
// the change, where it did not before.
func (c *vhostCompare) startsDropping(q string, r route.Reason) string {
	s := c.a
	switch r {
	case route.Expired:
		if v, ok := s.sim.QueueArg(q, "x-message-ttl"); ok {
			if ms, isInt := topology.Normalize(v).(int64); isInt {
				return fmt.Sprintf("its messages now expire after %s (%s)", s.duration(q, "x-message-ttl", ms), s.sim.QueueArgSource(q, "x-message-ttl"))
			}
		}
		return fmt.Sprintf("its messages now expire (%s)", s.sim.QueueArgSource(q, "x-message-ttl"))
	case route.MaxLen:
		return c.maxLenCause(q)
	case route.DeliveryLimit:
		return s.newDeliveryLimit(q)
	}
	return fmt.Sprintf("it now dead-letters messages (%s)", r)
}

// policyOf names the policy (or operator policy) that sets one of queue
// q's effective arguments args on side s, the first that one sets: "policy
// \"limits\"" ("the policy" when none does).
func (s *side) policyOf(q string, args ...string) string {
	for _, a := range args {
		if src := s.sim.QueueArgSource(q, a); src != "" && src != a {
			return src[:strings.LastIndex(src, "'s ")]
		}
	}
	return "the policy"
}
