package flow

import (
	"fmt"

	"github.com/mqctl/mqctl/pkg/topology"
)

// expiring adds the queues declared on both sides that expire after the
// change where they did not, or sooner (Expiring).
func (c *vhostCompare) expiring() {
	for q, qb := range c.b.v.Queues {
		qa := c.a.v.Queues[q]
		if qb == nil || qa == nil || c.queueSame(qb, qa) {
			continue
		}
		after, ok := c.a.expiry(q)
		if !ok {
			continue
		}
		before, had := c.b.expiry(q)
		if had && before <= after {
			continue
		}
		x := Expiring{Vhost: c.vhost, Queue: q, AfterMS: after, Cause: c.a.expiryCause(q, after), AfterWritten: c.a.written(q, "x-expires", after)}
		if had {
			x.BeforeMS, x.BeforeWritten = &before, c.b.written(q, "x-expires", before)
		}
		c.d.Expiring = append(c.d.Expiring, x)
	}
}

// expiry returns queue q's effective expiry on side s, in milliseconds
// (x-expires, by argument or policy), and whether it has one.
func (s *side) expiry(q string) (int64, bool) { return s.millis(q, "x-expires") }

// millis returns queue q's effective argument arg on side s (a time in
// milliseconds: x-expires, x-message-ttl), and whether it has one.
func (s *side) millis(q, arg string) (int64, bool) {
	v, ok := s.sim.QueueArg(q, arg)
	if !ok {
		return 0, false
	}
	ms, isInt := topology.Normalize(v).(int64)
	return ms, isInt
}

// expiryCause says what the expiry ms of queue q on side s does: where it
// comes from a policy (not the queue's own argument, which a replace
// declares afresh), the time counts from when the policy is put, and
// mqctl apply refuses it for a queue holding messages without a consumer
// (measured on 4.3.6).
func (s *side) expiryCause(q string, ms int64) string {
	const fate = ", and RabbitMQ then deletes it with whatever it holds, dead-lettering none of it"
	if own := s.v.Queues[q]; own != nil && topology.Normalize(own.Arguments["x-expires"]) == ms {
		return fmt.Sprintf("it now expires once unused for %s (x-expires)", s.duration(q, "x-expires", ms)) + fate
	}
	return fmt.Sprintf("it now expires once unused for %s (%s)", s.duration(q, "x-expires", ms), s.sim.QueueArgSource(q, "x-expires")) + fate +
		fmt.Sprintf("; the time counts from when %s is put (mqctl apply refuses that for a queue that holds messages and has no consumer, without --allow-data-loss)", s.policyOf(q, "x-expires"))
}
