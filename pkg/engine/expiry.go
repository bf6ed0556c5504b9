package engine

import (
	"context"
	"fmt"
	"time"

	"github.com/mqctl/mqctl/pkg/plan"
	"github.com/mqctl/mqctl/pkg/topology"
)

// expiry is a queue to which a plan's policy changes give an expiry
// (expires, x-expires) it did not have, or a shorter one: RabbitMQ deletes
// a queue, with its messages, once it has been unused that long (no
// consumer, no basic.get, not declared again), counted from when the
// policy is applied (measured on 4.3.6: a classic and a quorum queue
// holding 3 messages each, without consumers, were gone 2 s after a policy
// with expires 2000 was put).
type expiry struct {
	vhost, queue string
	ms           int64
	by           string
	// messages and consumers are what the queue holds and has, as read.
	messages, consumers int64
}

// queueExpiries lists the queues of cur that the policy changes of p give
// an expiry they did not have, or a shorter one (policyEffects); what they
// hold is for the caller to read.
func queueExpiries(p *plan.Plan, cur *topology.Topology) []expiry {
	var out []expiry
	policyEffects(p, cur, func(e effect) {
		ms, ok := intArg(e.will, e.queue, "x-expires")
		if !ok {
			return
		}
		if old, had := intArg(e.was, e.queue, "x-expires"); had && old <= ms {
			return
		}
		out = append(out, expiry{vhost: e.vhost, queue: e.queue, ms: ms, by: e.by})
	})
	return out
}

// String says what applying x does, for a note or a refusal.
func (x expiry) String() string {
	held := plan.Change{Messages: x.messages}
	return fmt.Sprintf("%s: queue %q in vhost %q gets an expiry of %s (expires), and it holds %s and has no consumer: RabbitMQ deletes the queue, with its messages, once it has been unused that long",
		x.by, x.queue, x.vhost, time.Duration(x.ms)*time.Millisecond, held.MessagesText())
}

// readExpiries reads what the queues of xs hold and how many consumers
// they have (readHeld; with inspect, the consumers exactly: the statistics
// may still count one that left) and returns those that hold messages and
// have no consumer: nothing uses them, so the expiry runs out unless one
// comes.
func (e *Engine) readExpiries(ctx context.Context, xs []expiry, inspect inspectFunc) ([]expiry, error) {
	vhosts, queues := make([]string, len(xs)), make([]string, len(xs))
	for i, x := range xs {
		vhosts[i], queues[i] = x.vhost, x.queue
	}
	hs, err := e.readHeld(ctx, vhosts, queues, inspect)
	if err != nil {
		return nil, err
	}
	var out []expiry
	for i, x := range xs {
		x.messages, x.consumers = max(hs[i].stats.Messages, hs[i].exact.Ready), hs[i].consumers(inspect != nil)
		if x.messages > 0 && x.consumers == 0 {
			out = append(out, x)
		}
	}
	return out, nil
}

// readExpiryLosses is the expiries of p's policy changes as losses, all
// refused.
func (e *Engine) readExpiryLosses(ctx context.Context, p *plan.Plan, cur *topology.Topology, inspect inspectFunc) (refused, told []string, err error) {
	xs, err := e.readExpiries(ctx, queueExpiries(p, cur), inspect)
	for _, x := range xs {
		refused = append(refused, x.String())
	}
	return refused, nil, err
}
