package flow

import (
	"fmt"
	"slices"
	"strings"

	"github.com/mqctl/mqctl/pkg/route"
	"github.com/mqctl/mqctl/pkg/topology"
)

// refusing adds the queues declared on both sides that refuse publishes
// once full after the change where they did not, or sooner (Refusing).
func (c *vhostCompare) refusing() {
	for q, qb := range c.b.v.Queues {
		qa := c.a.v.Queues[q]
		if qb == nil || qa == nil || c.queueSame(qb, qa) || !c.a.rejectsPublish(q) {
			continue
		}
		if every, _ := c.a.refuses(q); every {
			continue // it refuses every message: the routes say so
		}
		before := c.b.rejectsPublish(q)
		if before && !c.a.stricterLimit(c.b, q) {
			continue
		}
		// A queue that, full, dropped its oldest messages (drop-head with
		// no route for its dead letters) lost one message for each one
		// published already: refusing the newest instead, at the same or
		// a higher limit, loses none that was not lost before.
		if !before && c.b.lengthLimits(q) != "" && c.b.sim.DropsHead(q) && c.b.sim.DeadLetterFate(q, route.MaxLen).Dropped && !c.a.stricterLimit(c.b, q) {
			continue
		}
		r := Refusing{Vhost: c.vhost, Queue: q, Type: c.a.v.Queues[q].Type, Limit: c.a.lengthLimits(q), BeforeLimit: c.b.lengthLimits(q), Cause: c.a.refusingCause(q), Unknown: c.a.onlyDeadLetters(q)}
		switch {
		case r.BeforeLimit == "":
		case c.b.sim.DropsHead(q):
			r.BeforeOverflow = "drop-head" // a quorum queue reads reject-publish-dlx so
		default:
			r.BeforeOverflow = c.b.queueString(q, "x-overflow", "drop-head")
		}
		c.d.Refusing = append(c.d.Refusing, r)
	}
}

// rejectsPublish reports whether queue q on side s refuses publishes once
// full: it has a length limit and overflow reject-publish (a classic or
// quorum queue; a stream takes no overflow, and a quorum queue reads
// reject-publish-dlx as drop-head). A classic queue's reject-publish-dlx
// refuses them too, but dead-letters them: the dead-letter flows tell
// where they go.
func (s *side) rejectsPublish(q string) bool {
	qq := s.v.Queues[q]
	if qq == nil || qq.Type == topology.QueueStream || s.lengthLimits(q) == "" {
		return false
	}
	return s.queueString(q, "x-overflow", "") == "reject-publish"
}

// stricterLimit reports whether queue q has on side s a length limit
// (in messages or bytes) that it had not on side b, or a lower one.
func (s *side) stricterLimit(b *side, q string) bool { return s.stricterLimitThan(q, b, q) }

// stricterLimitThan reports whether queue q has on side s a length limit
// (in messages or bytes) that queue p had not on side b, or a lower one.
func (s *side) stricterLimitThan(q string, b *side, p string) bool {
	for _, arg := range []string{"x-max-length", "x-max-length-bytes"} {
		va, ok := s.sim.QueueArg(q, arg)
		if !ok {
			continue
		}
		vb, had := b.sim.QueueArg(p, arg)
		na, okA := topology.Number(va)
		nb, okB := topology.Number(vb)
		if !had || (okA && okB && na < nb) {
			return true
		}
	}
	return false
}

// refusingCause says what queue q, which refuses publishes once full on
// side s, does with what is published to it then. Measured on RabbitMQ
// 4.3.6, 4.0.5 and 3.10.8 (limit 2, five publishes): a classic queue keeps
// 2 and refuses 3, a quorum queue keeps 3 (it checks the limit after each
// enqueue) and refuses 2; with confirms each refused publish is a
// basic.nack, without them nothing tells the publisher (rabbit_quorum_queue
// deliver0 drops a reject_publish without a correlation), and neither
// dead-letters a refused message, whatever its dead-letter exchange. A
// classic queue full so drops the dead letters another queue routes to it
// (at-most-once dead-lettering publishes without confirms: one of four
// kept); a quorum queue takes them past its limit (four of four: they
// are enqueued untracked: measured from classic and quorum sources, by
// TTL and by reject), which Refusing says, and a quorum queue only dead
// letters reach is not counted lost (Refusing.Unknown).
func (s *side) refusingCause(q string) string {
	text := s.refusingText(q)
	switch from := s.deadLetterSources(q); {
	case len(from) == 0:
	case s.v.Queues[q].Type != topology.QueueQuorum:
		text += fmt.Sprintf("; the dead letters of %s that reach it then are dropped (dead-lettering publishes them without confirms)", namesOfQueues(from))
	case s.onlyDeadLetters(q) == "": // else Refusing.Unknown says it
		text += fmt.Sprintf("; the dead letters of %s that reach it are taken even past its limit (RabbitMQ enqueues them untracked)", namesOfQueues(from))
	}
	return text
}

// refusingText is refusingCause without what it does with dead letters.
func (s *side) refusingText(q string) string {
	holds := "holds " + s.lengthLimits(q)
	if s.v.Queues[q].Type == topology.QueueQuorum {
		holds = "holds more than " + s.lengthLimits(q)
	}
	src := s.sim.QueueArgSource(q, "x-overflow")
	return fmt.Sprintf("once it %s it refuses what is published to it (overflow reject-publish, %s) and dead-letters none of it: a publisher using confirms gets a basic.nack for each message and can publish it again, one without confirms loses it without a word", holds, src)
}

// onlyDeadLetters says, for a quorum queue q of side s that some queue
// dead-letters to and that no exchange binds but those queues'
// dead-letter exchanges, that it refuses only what is published to it by
// name, which mqctl cannot tell anything does ("" otherwise): RabbitMQ
// takes the dead letters past its limit.
func (s *side) onlyDeadLetters(q string) string {
	from := s.deadLetterSources(q)
	if len(from) == 0 || s.v.Queues[q].Type != topology.QueueQuorum {
		return ""
	}
	dlx := map[string]bool{}
	for _, p := range from {
		if d := s.setup(p); d.configured {
			dlx[d.dlx] = true
		}
	}
	for _, b := range s.v.Bindings {
		if b != nil && b.DestinationType == topology.DestQueue && b.Destination == q && !dlx[b.Source] {
			return ""
		}
	}
	return fmt.Sprintf("it is the dead-letter queue of %s, whose dead letters it takes past its limit: it refuses only what is published to it by name, and mqctl cannot tell whether anything is", namesOfQueues(from))
}

// deadLetterSources returns the queues of side s, q's own aside, whose
// dead letters can reach queue q and that dead-letter at most once (a
// quorum queue dead-lettering at least once keeps what is refused),
// sorted.
func (s *side) deadLetterSources(q string) []string {
	var out []string
	for p, pq := range s.v.Queues {
		if pq == nil || p == q || s.sim.AtLeastOnce(p) {
			continue
		}
		if targets, _ := s.deadLetterTargets(p); slices.Contains(targets, q) {
			out = append(out, p)
		}
	}
	slices.Sort(out)
	return out
}

// namesOfQueues names queues qs ("queue \"a\"", "queues \"a\", \"b\"" and
// how many more).
func namesOfQueues(qs []string) string {
	quoted := make([]string, 0, min(len(qs), shownQueues))
	for _, n := range qs[:min(len(qs), shownQueues)] {
		quoted = append(quoted, fmt.Sprintf("%q", n))
	}
	text := plural2("queue ", "queues ", len(qs)) + strings.Join(quoted, ", ")
	if len(qs) > shownQueues {
		text += fmt.Sprintf(" and %d more", len(qs)-shownQueues)
	}
	return text
}
