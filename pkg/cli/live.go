package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"sync"

	"github.com/mqctl/mqctl/pkg/broker"
	"github.com/mqctl/mqctl/pkg/lock"
	"github.com/mqctl/mqctl/pkg/ownership"
	"github.com/mqctl/mqctl/pkg/plan"
	"github.com/mqctl/mqctl/pkg/topology"
)

// live is the broker's side of a plan.
type live struct {
	info    *broker.Live
	records map[string]*ownership.Record
	current plan.Current
}

// readLive reads the scope vhosts and splits mqctl's ownership records off
// the topology.
func readLive(ctx context.Context, c *broker.Client, scope []string) (*live, error) {
	if len(scope) == 0 {
		// To the broker client no vhosts means every vhost: a file that
		// declares none must read (and so plan deletes in) none.
		info := &broker.Live{Server: c.Server(), Version: c.Version(), Vhosts: map[string]broker.VhostInfo{},
			Queues: map[string]map[string]broker.QueueStats{}, PropertiesKeys: map[string]map[string]string{}, Unread: map[string][]string{}}
		return &live{info: info, records: map[string]*ownership.Record{}, current: plan.Current{State: topology.New()}}, nil
	}
	state, info, err := c.ReadTopology(ctx, scope)
	if err != nil {
		return nil, err
	}
	recs, err := ownership.Extract(state)
	if err != nil {
		return nil, err
	}
	stats := map[plan.ObjectRef]plan.QueueStats{}
	for vh, qs := range info.Queues {
		for q, st := range qs {
			stats[plan.ObjectRef{Kind: plan.KindQueue, Vhost: vh, Name: q}] = plan.QueueStats{Messages: st.Messages, Consumers: st.Consumers}
		}
	}
	return &live{
		info:    info,
		records: recs,
		current: plan.Current{State: state, Managed: ownership.Merge(recs), Stats: stats, Fingerprint: info.Fingerprint},
	}, nil
}

// loadAndRead loads the file while it connects to the management API and,
// once the file's vhost names are known (before its objects are built and
// checked), reads those vhosts: loading is CPU work, the rest waits on the
// network. A file that does not load is reported at once.
func (g *globals) loadAndRead(ctx context.Context) (*topology.Topology, *broker.Client, *live, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var (
		c    *broker.Client
		cerr error
	)
	connected := make(chan struct{})
	go func() {
		defer close(connected)
		c, cerr = g.connectAPI(ctx)
	}()
	type read struct {
		scope []string
		l     *live
		err   error
	}
	var early chan read
	desired, err := g.loadTopologyScoped(func(scope []string) {
		early = make(chan read, 1)
		go func() {
			<-connected
			if cerr != nil {
				early <- read{err: cerr}
				return
			}
			l, err := readLive(ctx, c, scope)
			early <- read{scope, l, err}
		}()
	})
	if err != nil {
		cancel()
		<-connected
		if early != nil {
			<-early
		}
		return nil, nil, nil, err
	}
	<-connected
	if cerr != nil {
		return nil, nil, nil, cerr
	}
	var l *live
	if early != nil {
		r := <-early
		if slices.Equal(r.scope, desired.VhostNames()) {
			if r.err != nil {
				return nil, nil, nil, r.err
			}
			l = r.l
		}
	}
	return desired, c, l, nil
}

// planFor reads the broker for desired's vhosts (unless l already holds
// them) and diffs them.
func planFor(ctx context.Context, c *broker.Client, desired *topology.Topology, l *live, stderr io.Writer) (*plan.Plan, *live, error) {
	scope := desired.VhostNames()
	version := c.RabbitMQVersion()
	// What the broker would refuse is refused here, before anything
	// changes, naming the object and the key.
	if err := version.Check(desired); err != nil {
		return nil, nil, fmt.Errorf("plan refused, nothing was changed: %w", err)
	}
	if !version.StoresDefaultQueueType() {
		for _, v := range desired.Vhosts {
			if v.DefaultQueueType != "" {
				// The broker ignores it; the file's queues carry their types.
				v.DefaultQueueType = ""
			}
		}
	}
	if l == nil {
		var err error
		if l, err = readLive(ctx, c, scope); err != nil {
			return nil, nil, err
		}
	}
	for _, n := range l.info.Notes {
		fmt.Fprintf(stderr, "mqctl: note: %s\n", n)
	}
	p := plan.Diff(desired, l.current)
	if err := fillStakes(ctx, c, p, l); err != nil {
		return nil, nil, err
	}
	if err := holdBackDownQueues(ctx, c, p, l, stderr); err != nil {
		return nil, nil, err
	}
	p.Vhosts = scope
	return p, l, nil
}

// useColor reports whether output should be coloured: on a terminal,
// unless NO_COLOR is set (https://no-color.org).
func (g *globals) useColor() bool {
	if v, ok := g.env.LookupEnv("NO_COLOR"); ok && v != "" {
		return false
	}
	return g.env.IsTerminal
}

// inspectFunc reads one queue's exact state over AMQP.
type inspectFunc func(ctx context.Context, vhost, queue, queueType string) (lock.QueueState, error)

// refreshStakes sets the messages and consumers at stake in every queue the
// plan deletes or replaces from inspect: a passive declare answers from the
// queue itself, while the management API's statistics lag by up to the
// broker's collect_statistics_interval (5 s by default), so a message
// published just before would go unseen and the safety check would pass.
// For messages the larger figure wins: the statistics also count
// unacknowledged messages, the passive declare only ready ones.
func refreshStakes(ctx context.Context, p *plan.Plan, inspect inspectFunc) error {
	for i := range p.Changes {
		c := &p.Changes[i]
		if c.Kind != plan.KindQueue || (c.Action != plan.Delete && c.Action != plan.Replace) {
			continue
		}
		typ := topology.QueueClassic
		if c.Before != nil && c.Before.Queue != nil && c.Before.Queue.Type != "" {
			typ = c.Before.Queue.Type
		}
		st, err := inspect(ctx, c.Vhost, c.Name, typ)
		if err != nil {
			return fmt.Errorf("read the messages and consumers of queue %q in vhost %q: %w", c.Name, c.Vhost, err)
		}
		if st.Ready > c.Messages {
			c.Messages, c.MessagesAtLeast = st.Ready, st.AtLeast
		}
		if typ == topology.QueueStream {
			// A passive declare reports no consumers on a stream either:
			// the statistics are all there is.
			c.Consumers = max(c.Consumers, st.Consumers)
		} else {
			// The AMQP count is exact; the statistics may still count a
			// consumer that has left.
			c.Consumers = st.Consumers
		}
	}
	return nil
}

// hasStakes reports whether the plan deletes or replaces a queue.
func hasStakes(p *plan.Plan) bool {
	for _, c := range p.Changes {
		if c.Kind == plan.KindQueue && (c.Action == plan.Delete || c.Action == plan.Replace) {
			return true
		}
	}
	return false
}

// fillStakes reads the depth and consumers of the queues the plan deletes
// or replaces (the state read does not carry statistics, which would cost
// a full queue listing on every plan).
func fillStakes(ctx context.Context, c *broker.Client, p *plan.Plan, l *live) error {
	type lookup struct {
		change *plan.Change
		ref    plan.ObjectRef
		st     broker.QueueStats
		err    error
	}
	var todo []*lookup
	for i := range p.Changes {
		ch := &p.Changes[i]
		if ch.Kind != plan.KindQueue || (ch.Action != plan.Delete && ch.Action != plan.Replace) {
			continue
		}
		ref := plan.ObjectRef{Kind: plan.KindQueue, Vhost: ch.Vhost, Name: ch.Name}
		if st, ok := l.current.Stats[ref]; ok {
			ch.Messages, ch.Consumers = st.Messages, st.Consumers
			continue
		}
		todo = append(todo, &lookup{change: ch, ref: ref})
	}
	// The lookups run concurrently; each writes only its own entry, and
	// the results are merged once they are all in.
	var wg sync.WaitGroup
	sem := make(chan struct{}, 8)
	for _, lk := range todo {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			// No waiting for a just-declared queue's first statistics:
			// plan and apply read exact figures through AMQP next
			// (refreshStakes).
			lk.st, lk.err = c.QueueStatsNow(ctx, lk.ref.Vhost, lk.ref.Name)
		}()
	}
	wg.Wait()
	var errs []error
	for _, lk := range todo {
		if lk.err != nil && !errors.Is(lk.err, broker.ErrNotFound) {
			errs = append(errs, lk.err)
			continue
		}
		lk.change.Messages, lk.change.Consumers = lk.st.Messages, lk.st.Consumers
		if l.current.Stats == nil {
			l.current.Stats = map[plan.ObjectRef]plan.QueueStats{}
		}
		l.current.Stats[lk.ref] = plan.QueueStats{Messages: lk.st.Messages, Consumers: lk.st.Consumers}
	}
	return errors.Join(errs...)
}
