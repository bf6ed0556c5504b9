package engine

import (
	"context"
	"fmt"
	"time"

	"github.com/mqctl/mqctl/pkg/broker"
	"github.com/mqctl/mqctl/pkg/kind"
	"github.com/mqctl/mqctl/pkg/plan"
	"github.com/mqctl/mqctl/pkg/route"
	"github.com/mqctl/mqctl/pkg/topology"
)

// dlFate is where a queue's dead letters of one reason go, on one side of
// a plan: to a queue (or kept in the queue until one takes them:
// at-least-once dead-lettering), or dropped.
type dlFate struct {
	// dropped: RabbitMQ drops them, why says why.
	dropped bool
	why     string
	// configured: the queue has a dead-letter exchange, exchange.
	configured bool
	exchange   string
}

// deadLetterFate is where queue q's dead letters for reason r go, as sim
// (the vhost on one side of a plan) tells it: route.Simulator
// DeadLetterFate.
func deadLetterFate(sim *route.Simulator, q string, r route.Reason) dlFate {
	f := sim.DeadLetterFate(q, r)
	return dlFate{dropped: f.Dropped, why: f.Why, configured: f.Configured, exchange: f.Exchange}
}

// ending is a quorum queue that dead-letters at least once before the
// plan and not after it (its policy changes take away its dead-letter
// exchange, its at-least-once strategy or its overflow reject-publish):
// RabbitMQ deletes the dead letters it holds, those its dead-letter
// exchange has not taken, at once (rabbit_fifo_dlx:switch_from/3 at
// v4.3.5: "Deleted N dead-lettered messages"; measured on 4.3.6: 50 held,
// 0 after the policy change).
type ending struct {
	vhost, queue, by string
	// between: it dead-letters at least once after the plan, but not
	// while the apply runs (apply writes policies before it deletes those
	// the plan drops, and until then one of those is in force on it).
	between bool
	held    int64
}

// atLeastOnceEndings lists the queues of cur that p's policy changes make
// stop dead-lettering at least once (ending); what they hold is for the
// caller to read.
func atLeastOnceEndings(p *plan.Plan, cur *topology.Topology) []ending {
	var out []ending
	planEffects(p, cur, effects{onlyPolicies: true, between: true}, func(e effect) {
		if !e.was.AtLeastOnce(e.queue) {
			return
		}
		switch {
		case !e.will.AtLeastOnce(e.queue):
			out = append(out, ending{vhost: e.vhost, queue: e.queue, by: e.by})
		case !e.between.AtLeastOnce(e.queue):
			out = append(out, ending{vhost: e.vhost, queue: e.queue, by: e.betweenBy, between: true})
		}
	})
	return out
}

func (x ending) String() string {
	when := "no longer dead-letters at least once"
	if x.between {
		when = "does not dead-letter at least once while the apply runs: apply writes policies before it deletes those the plan drops, and until then a policy the plan drops is in force on it (drop that policy in an apply of its own first, then make the rest of the change); the queue"
	}
	return fmt.Sprintf("%s: quorum queue %q in vhost %q %s (dead-letter-strategy at-least-once, with a dead-letter exchange and overflow reject-publish), and it holds %d dead letters its dead-letter exchange has not taken: RabbitMQ deletes them at once",
		x.by, x.queue, x.vhost, when, x.held)
}

// readEndingLosses is the endings of p's policy changes that hold dead
// letters, all refused. Only the statistics count those dead letters
// (messages_dlx): apply reads them once they have been refreshed twice
// (broker CountAfterRefresh), so that they count every dead letter held
// when the check began; plan reads them as they are.
func (e *Engine) readEndingLosses(ctx context.Context, p *plan.Plan, cur *topology.Topology, inspect inspectFunc) (refused, told []string, err error) {
	xs := atLeastOnceEndings(p, cur)
	vhosts, queues := make([]string, len(xs)), make([]string, len(xs))
	for i, x := range xs {
		vhosts[i], queues[i] = x.vhost, x.queue
	}
	count := e.c.QueueCounts
	if inspect != nil {
		count = func(ctx context.Context, vhost string, names []string) (map[string]broker.QueueCount, error) {
			return e.c.CountAfterRefresh(ctx, vhost, names, refreshTimeout)
		}
	}
	counts, err := countByVhost(ctx, vhosts, queues, count)
	if err != nil {
		return nil, nil, err
	}
	for _, x := range xs {
		if x.held = counts[x.vhost][x.queue].DeadLettering; x.held > 0 {
			refused = append(refused, x.String())
		}
	}
	return refused, nil, nil
}

// expiring is a queue with a message TTL whose expired messages the plan
// makes RabbitMQ drop where they reached a queue before: its dead-letter
// exchange taken away (a policy), or what it routed them to deleted (the
// queue a delay tier returns messages to, the exchange, the binding). The
// messages it holds expire into nothing unless a consumer takes them
// first.
type expiring struct {
	vhost, queue string
	ttl          int64
	why          string
	// messages and consumers are what the queue holds and has, as read.
	messages, consumers int64
}

// queueExpirings lists the queues of cur, in the vhosts p changes, whose
// expired messages p makes RabbitMQ drop (expiring): those holding
// messages with a TTL (the one before p) whose dead letters p drops; what
// they hold is for the caller to read.
func queueExpirings(p *plan.Plan, cur *topology.Topology) []expiring {
	var out []expiring
	planEffects(p, cur, effects{worth: func(vh string, before *topology.Vhost) bool { return mayExpire(p, vh, before) }}, func(e effect) {
		// A message's expiry is set when it reaches the queue, from the
		// TTL in force then (classic and quorum queues, measured on
		// 4.3.6): what the queue holds expires by the TTL before the plan,
		// even once a policy change takes it away, and never where there
		// was none, whatever the plan gives it.
		ttl, ok := intArg(e.was, e.queue, "x-message-ttl")
		if !ok {
			return
		}
		after := deadLetterFate(e.will, e.queue, route.Expired)
		if !after.dropped || deadLetterFate(e.was, e.queue, route.Expired).dropped {
			return
		}
		out = append(out, expiring{vhost: e.vhost, queue: e.queue, ttl: ttl, why: after.why})
	})
	return out
}

// mayExpire reports whether a queue of vhost vh (before, as the broker
// holds it) may have a message TTL before or after p: a queue's own
// x-message-ttl, or a policy's or operator policy's message-ttl there or
// in p's changes. A vhost where none has one needs no simulation (a
// plan's check of a 10,000-object vhost took 15-30 ms for two).
func mayExpire(p *plan.Plan, vh string, before *topology.Vhost) bool {
	for _, q := range before.Queues {
		if q.Arguments.Has("x-message-ttl") {
			return true
		}
	}
	for _, k := range kind.PolicyKinds() {
		for _, pol := range before.PoliciesOf(k) {
			if pol.Definition.Has("message-ttl") {
				return true
			}
		}
	}
	for _, c := range p.Changes {
		if c.Vhost != vh {
			continue
		}
		if o, ok := plan.As[topology.Policy](c.After); ok && o.Definition.Has("message-ttl") {
			return true
		}
		if o, ok := plan.As[topology.Queue](c.After); ok && o.Arguments.Has("x-message-ttl") {
			return true
		}
	}
	return false
}

func (x expiring) String() string {
	held := plan.Change{Messages: x.messages}
	return fmt.Sprintf("queue %q in vhost %q holds %s with a message TTL of %s, and has no consumer: after the plan RabbitMQ drops them as they expire (%s), where they reached a queue before",
		x.queue, x.vhost, held.MessagesText(), time.Duration(x.ttl)*time.Millisecond, x.why)
}

// readExpiringLosses is the expirings of p that hold messages: refused
// when the queue has no consumer (nothing takes them before they expire),
// told otherwise.
func (e *Engine) readExpiringLosses(ctx context.Context, p *plan.Plan, cur *topology.Topology, inspect inspectFunc) (refused, told []string, err error) {
	xs := queueExpirings(p, cur)
	vhosts, queues := make([]string, len(xs)), make([]string, len(xs))
	for i, x := range xs {
		vhosts[i], queues[i] = x.vhost, x.queue
	}
	hs, err := e.readHeld(ctx, vhosts, queues, inspect)
	if err != nil {
		return nil, nil, err
	}
	for i, x := range xs {
		x.messages, x.consumers = max(hs[i].stats.Ready, hs[i].exact.Ready), hs[i].consumers(inspect != nil)
		switch {
		case x.messages == 0:
		case x.consumers == 0:
			refused = append(refused, x.String())
		default:
			held := plan.Change{Messages: x.messages}
			told = append(told, fmt.Sprintf("queue %q in vhost %q holds %s with a message TTL of %s: after the plan RabbitMQ drops those its %d consumers do not take before they expire (%s)",
				x.queue, x.vhost, held.MessagesText(), time.Duration(x.ttl)*time.Millisecond, x.consumers, x.why))
		}
	}
	return refused, told, nil
}
