package engine

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/mqctl/mqctl/internal/parallel"
	"github.com/mqctl/mqctl/pkg/apply"
	"github.com/mqctl/mqctl/pkg/broker"
	"github.com/mqctl/mqctl/pkg/plan"
	"github.com/mqctl/mqctl/pkg/route"
	"github.com/mqctl/mqctl/pkg/topology"
)

// refreshTimeout is how long an apply waits for the statistics of the
// quorum queues it deletes to be refreshed twice (countHidden): two of
// RabbitMQ's default intervals are 10 s.
const refreshTimeout = 30 * time.Second

// countHidden counts, before an apply deletes or replaces quorum queues
// that the exact reads found empty and unused, the messages such a queue
// holds where a passive declare does not see them (holdsHidden): dead
// letters it keeps until its dead-letter exchange takes them, and on
// RabbitMQ 4.3 messages waiting for a delayed retry. It waits until the
// queues' statistics were refreshed twice since it began (so that they
// count every message that was in the queue then) and puts what they
// count into the plan, whose safety check (apply.Check) then refuses to
// lose them, before anything changes. Nothing is waited for with
// AllowDataLoss, or when the safety check refuses the plan anyway;
// o.Counting is told before the wait.
func (e *Engine) countHidden(ctx context.Context, p *plan.Plan, l *Live, o ApplyOptions) error {
	if o.AllowDataLoss || apply.Check(p, apply.Options{AllowReplace: o.AllowReplace}) != nil {
		return nil
	}
	hides := e.holdsHidden(l)
	perVhost := map[string][]*plan.Change{}
	var vhosts []string
	n := 0
	for i := range p.Changes {
		c := &p.Changes[i]
		if !c.RisksMessages() || plan.QueueType(c.Before) != topology.QueueQuorum || !hides(c.Vhost, c.Name) {
			continue
		}
		if _, ok := perVhost[c.Vhost]; !ok {
			vhosts = append(vhosts, c.Vhost)
		}
		perVhost[c.Vhost] = append(perVhost[c.Vhost], c)
		n++
	}
	if n == 0 {
		return nil
	}
	if o.Counting != nil {
		o.Counting(n)
	}
	var (
		mu     sync.Mutex
		counts = map[string]map[string]broker.QueueCount{}
		errs   = map[string]error{}
	)
	g := parallel.New(8)
	for _, vh := range vhosts {
		names := make([]string, len(perVhost[vh]))
		for i, c := range perVhost[vh] {
			names[i] = c.Name
		}
		g.Go(func() {
			got, err := e.c.CountAfterRefresh(ctx, vh, names, refreshTimeout)
			mu.Lock()
			defer mu.Unlock()
			counts[vh], errs[vh] = got, err
		})
	}
	g.Wait()
	slices.Sort(vhosts)
	for _, vh := range vhosts {
		if err := errs[vh]; err != nil {
			// A queue no Raft server runs for never refreshes: what it
			// holds, and the fix that loses nothing, are the broker's to
			// tell, and another apply would not count it either.
			names := make([]string, len(perVhost[vh]))
			for i, c := range perVhost[vh] {
				names[i] = c.Name
			}
			if advice := e.stoppedAdvice(ctx, vh, names); advice != "" || errors.Is(err, broker.ErrNotRunning) {
				return fmt.Errorf("nothing was changed: mqctl could not count the messages of the quorum queues it would delete or replace in vhost %q that a passive declare does not see (dead letters waiting for their dead-letter exchange, and on RabbitMQ 4.3 messages waiting for a delayed retry): %v%s: %w", vh, err, advice, apply.ErrRefused)
			}
			why := ""
			if errors.Is(err, broker.ErrNotRefreshed) {
				why = " (RabbitMQ refreshes them at each quorum queue's tick, quorum_tick_interval, and collects them every collect_statistics_interval: both must be well under 15 s, and the management plugin's metrics collector enabled)"
			}
			return fmt.Errorf("nothing was changed: mqctl could not count the messages of the quorum queues it would delete or replace in vhost %q that a passive declare does not see (dead letters waiting for their dead-letter exchange, and on RabbitMQ 4.3 messages waiting for a delayed retry), which only the queues' statistics count: %v%s: %w; run the apply again, or pass --allow-data-loss to delete them whatever they hold", vh, err, why, apply.ErrRefused)
		}
		for _, c := range perVhost[vh] {
			cnt := counts[vh][c.Name]
			if cnt.Gone {
				continue
			}
			// The exact reads counted the consumers; the statistics may
			// still count one that has left.
			if cnt.Messages > c.Messages {
				c.Messages, c.MessagesAtLeast = cnt.Messages, false
			}
			c.Delayed, c.DeadLettering = cnt.Delayed, cnt.DeadLettering
		}
	}
	return nil
}

// holdsHidden reports, for a quorum queue of the broker's state l, whether
// it may hold messages that a passive declare does not count (it reports
// the ready messages and the consumers: rabbit_fifo:query_stat/1 at
// v3.10.8, v4.0.5 and v4.3.5): every quorum queue of a broker whose
// quorum queues can hold messages back for a delayed retry or an AMQP 1.0
// delivery time (rmqversion PassiveDeclareHidesDelayed); on any version, a
// quorum queue that dead-letters at least once (deadLettersAtLeastOnce).
func (e *Engine) holdsHidden(l *Live) func(vhost, queue string) bool {
	if e.c.RabbitMQVersion().PassiveDeclareHidesDelayed() {
		return func(string, string) bool { return true }
	}
	byVhost := map[string]func(string) bool{}
	return func(vhost, queue string) bool {
		f, ok := byVhost[vhost]
		if !ok {
			f = deadLettersAtLeastOnce(l.current.State.Vhosts[vhost])
			byVhost[vhost] = f
		}
		return f(queue)
	}
}

// deadLettersAtLeastOnce reports, for a queue of v, whether it
// dead-letters at least once (route.Simulator.AtLeastOnce): it keeps each
// dead letter until the dead-letter exchange has routed it and every
// destination has taken it; with no route, for as long as there is none.
func deadLettersAtLeastOnce(v *topology.Vhost) func(queue string) bool {
	if v == nil {
		return func(string) bool { return false }
	}
	return route.New(v).AtLeastOnce
}
