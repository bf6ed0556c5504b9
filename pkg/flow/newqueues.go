package flow

import (
	"fmt"
	"slices"
	"strings"

	"github.com/mqctl/mqctl/pkg/route"
	"github.com/mqctl/mqctl/pkg/topology"
)

// newQueueLimits adds, for each queue declared after the change only
// (new, or under a new name) that has a length limit and now takes what
// reached other queues before (From: a queue renamed, or what a route or
// dead-letter route moved to it), what it does with messages once full:
// the dead letters of its overflow (drop-head, a classic queue's
// reject-publish-dlx) as DeadLetters of reason maxlen, and what overflow
// reject-publish refuses as Refusing, each marked NewQueue. Before, the
// flows said only that routes now reach it. It may lose them where one of
// those queues kept more (no limit, or a higher one). A new queue that
// takes nothing from another (what reaches it reached no queue before, or
// reaches another still) changes the fate of no message: the routes say
// it is reached, and its limit is not listed (a first apply of thousands
// of capped queues would list each).
// After routes and deadLetters, whose moves tell From.
func (c *vhostCompare) newQueueLimits() {
	var moved map[string][]string
	for _, q := range c.a.v.QueueNames() {
		qa := c.a.v.Queues[q]
		if qa == nil || c.b.hasQueue(q) || qa.Type == topology.QueueStream || c.a.lengthLimits(q) == "" {
			continue
		}
		if every, _ := c.a.refuses(q); every {
			continue // it refuses every message: the routes say so
		}
		if moved == nil {
			moved = c.movedInto()
		}
		from := moved[q]
		if len(from) == 0 {
			continue
		}
		// What it drops (or refuses) once full is lost to the change where
		// it reached a queue before that kept more: no limit, or a higher
		// one.
		keptMore := slices.ContainsFunc(from, func(p string) bool { return c.a.stricterLimitThan(q, c.b, p) })
		text := fmt.Sprintf("; what reaches it reached %s before the change, and no longer does", namesOfQueues(from))
		if c.a.rejectsPublish(q) {
			r := Refusing{Vhost: c.vhost, Queue: q, Type: qa.Type, Limit: c.a.lengthLimits(q), Cause: "it is new: " + c.a.refusingText(q) + text, NewQueue: true, From: from, KeptMore: keptMore}
			if keptMore {
				// What it does with the dead letters other queues route
				// to it: each such queue's targets are looked at, too
				// dear for every new queue of a plan that creates
				// thousands, and of no weight where nothing is lost.
				r.Cause, r.Unknown = "it is new: "+c.a.refusingCause(q)+text, c.a.onlyDeadLetters(q)
			}
			c.d.Refusing = append(c.d.Refusing, r)
			continue
		}
		if !slices.Contains(c.a.sim.Reasons(q), route.MaxLen) {
			continue
		}
		n := len(c.d.DeadLetters)
		c.deadLetter(q, route.MaxLen, false, false, true, false)
		for i := n; i < len(c.d.DeadLetters); i++ {
			dl := &c.d.DeadLetters[i]
			dl.NewQueue, dl.From = true, from
			dl.Loses = dl.After != nil && dl.After.Dropped && keptMore
			dl.Cause = fmt.Sprintf("it is new, with a length limit of %s (%s), and when full %s", c.a.lengthLimits(q), c.a.limitSource(q), c.a.whenFull(q))
			if dl.After != nil && dl.After.Dropped {
				dl.Cause += "; " + dl.After.Why
			}
			dl.Cause += text
		}
	}
}

// limitSource says what gives queue q its length limits on side s: its
// arguments, a policy's keys.
func (s *side) limitSource(q string) string {
	var srcs []string
	for _, arg := range []string{"x-max-length", "x-max-length-bytes"} {
		if src := s.sim.QueueArgSource(q, arg); src != "" {
			srcs = append(srcs, src)
		}
	}
	return strings.Join(srcs, ", ")
}

// movedInto returns, per queue, the queues of the before side that some
// messages reached before the change and that now reach it instead (a
// route or dead-letter route that lost them and gained it), sorted.
func (c *vhostCompare) movedInto() map[string][]string {
	out := map[string][]string{}
	add := func(gained, lost []string) {
		if len(lost) == 0 {
			return
		}
		for _, q := range gained {
			out[q] = mergeSorted(out[q], lost)
		}
	}
	for _, r := range c.d.Routes {
		if r.Vhost == c.vhost {
			add(r.Gained(), r.Lost())
		}
	}
	ends := func(b, a *DeadLetterEnd) {
		var qb, qa []string
		if b != nil {
			qb = b.Queues
		}
		if a != nil {
			qa = a.Queues
		}
		add(minus(qa, qb), minus(qb, qa))
	}
	for _, dl := range c.d.DeadLetters {
		if dl.Vhost == c.vhost {
			ends(dl.Before, dl.After)
		}
	}
	for _, t := range c.d.DelayTiers {
		if t.Vhost == c.vhost {
			ends(t.Before, t.After)
		}
	}
	return out
}
