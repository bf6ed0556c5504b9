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
	"github.com/mqctl/mqctl/pkg/topology"
)

// refreshTimeout is how long an apply waits for the statistics of the
// quorum queues it deletes to be refreshed twice (countDelayed): two of
// RabbitMQ's default intervals are 10 s.
const refreshTimeout = 30 * time.Second

// countDelayed counts, before an apply deletes or replaces quorum queues
// that the exact reads found empty and unused, the messages that wait in
// them for a delayed retry, where a passive declare does not see them
// (RabbitMQ 4.3+: rmqversion PassiveDeclareHidesDelayed). It waits until
// the queues' statistics were refreshed twice since it began (so that
// they count every message that was in the queue then) and puts what they
// count into the plan, whose safety check (apply.Check) then refuses to
// lose them, before anything changes. Nothing is waited for with
// AllowDataLoss, or when the safety check refuses the plan anyway; o.Counting
// is told before the wait.
func (e *Engine) countDelayed(ctx context.Context, p *plan.Plan, o ApplyOptions) error {
	if o.AllowDataLoss || !e.c.RabbitMQVersion().PassiveDeclareHidesDelayed() {
		return nil
	}
	if apply.Check(p, apply.Options{AllowReplace: o.AllowReplace}) != nil {
		return nil
	}
	perVhost := map[string][]*plan.Change{}
	var vhosts []string
	n := 0
	for i := range p.Changes {
		c := &p.Changes[i]
		if !c.RisksMessages() || plan.QueueType(c.Before) != topology.QueueQuorum {
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
			why := ""
			if errors.Is(err, broker.ErrNotRefreshed) {
				why = " (RabbitMQ refreshes them at each quorum queue's tick, quorum_tick_interval, and collects them every collect_statistics_interval: both must be well under 15 s, and the management plugin's metrics collector enabled)"
			}
			return fmt.Errorf("nothing was changed: mqctl could not count the messages that wait for a delayed retry in the quorum queues it would delete or replace in vhost %q, which RabbitMQ 4.3 counts in the queues' statistics only: %v%s: %w; run the apply again, or pass --allow-data-loss to delete them whatever they hold", vh, err, why, apply.ErrRefused)
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
			c.Delayed = cnt.Delayed
		}
	}
	return nil
}
