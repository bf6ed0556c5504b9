package engine

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/mqctl/mqctl/internal/parallel"
	"github.com/mqctl/mqctl/pkg/broker"
	"github.com/mqctl/mqctl/pkg/kind"
	"github.com/mqctl/mqctl/pkg/lock"
	"github.com/mqctl/mqctl/pkg/plan"
	"github.com/mqctl/mqctl/pkg/topology"
)

// inspectFunc reads one queue's exact state over AMQP. The exact reads
// (startExact) call it from several goroutines at once.
type inspectFunc func(ctx context.Context, vhost, queue, queueType string) (lock.QueueState, error)

// StakeReaders is how many queues the exact reads read at once: each read
// is a round trip to the queue's process (a passive declare on a channel
// of its own), so thousands of them one after the other cost seconds of
// waiting, while a handful in flight keep the broker busy without
// crowding out the other clients.
const StakeReaders = 16

// exactReads are the exact reads of the queues a plan deletes or
// replaces, which set the messages and consumers at stake in them: a
// passive declare answers from the queue itself, while the management
// API's statistics lag by up to the broker's collect_statistics_interval
// (5 s by default), so a message published just before would go unseen and
// the safety check would pass. For messages the larger figure wins: the
// statistics also count unacknowledged messages, the passive declare only
// ready ones. They start (startExact) as soon as the plan's changes are
// known, while the queues out of reach are still being looked for (that
// listing is as slow as the exact reads of a plan that deletes thousands
// of queues), and are merged (merge) into the changes the plan still holds
// once it is final. Those held back in between are read for nothing.
type exactReads struct {
	// list holds the reads in the plan's order, in one allocation: a
	// plan that deletes 25,000 queues held 6.8 MB of reads (a channel and
	// a map entry each) through its peak, and holds 2.8 MB now.
	list []exactRead
	// mu guards each read's done; cond is signalled as reads end.
	mu   sync.Mutex
	cond *sync.Cond
	// cancel ends the reads not yet begun once merge is done.
	cancel context.CancelFunc
	// openErr is the error of opening the reads (dialling), if that failed:
	// every read carries it.
	openErr error
}

type exactRead struct {
	ref  plan.ObjectRef
	typ  string
	st   lock.QueueState
	err  error
	done bool // st and err are set (under exactReads.mu)
}

// startExact begins reading the queues p deletes or replaces through the
// inspect function open gives, up to StakeReaders at once, in the plan's
// order. After a failed read no further one starts, except after a queue
// out of reach (lock.ErrOutOfReach): that one's change is held back, and
// the others are still wanted. It reads the changes' identities only, and
// changes nothing in p. Nil when nothing is at stake.
func startExact(ctx context.Context, p *plan.Plan, open func(context.Context) (inspectFunc, error)) *exactReads {
	n := 0
	for i := range p.Changes {
		if p.Changes[i].RisksMessages() {
			n++
		}
	}
	if n == 0 {
		return nil
	}
	reads := &exactReads{list: make([]exactRead, 0, n)}
	reads.cond = sync.NewCond(&reads.mu)
	for i := range p.Changes {
		if c := &p.Changes[i]; c.RisksMessages() {
			reads.list = append(reads.list, exactRead{ref: c.Ref(), typ: plan.QueueType(c.Before)})
		}
	}
	ctx, reads.cancel = context.WithCancel(ctx)
	go reads.run(ctx, open)
	return reads
}

// finish records the outcome of read i.
func (reads *exactReads) finish(i int, st lock.QueueState, err error) {
	reads.mu.Lock()
	r := &reads.list[i]
	r.st, r.err, r.done = st, err, true
	reads.mu.Unlock()
	reads.cond.Broadcast()
}

// wait blocks until read i is done and returns its outcome.
func (reads *exactReads) wait(i int) (lock.QueueState, error) {
	reads.mu.Lock()
	defer reads.mu.Unlock()
	for !reads.list[i].done {
		reads.cond.Wait()
	}
	return reads.list[i].st, reads.list[i].err
}

// run carries out the reads; every read is done when it returns.
func (reads *exactReads) run(ctx context.Context, open func(context.Context) (inspectFunc, error)) {
	inspect, err := open(ctx)
	if err != nil {
		reads.openErr = err
		for i := range reads.list {
			reads.finish(i, lock.QueueState{}, err)
		}
		return
	}
	var (
		wg     sync.WaitGroup
		failed = make(chan struct{})
		first  = -1 // the failed read that stopped the others
		once   sync.Once
		next   = make(chan int)
	)
	for range min(StakeReaders, len(reads.list)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				r := reads.list[i] // ref and typ: never written once started
				st, err := inspect(ctx, r.ref.Vhost, r.ref.Name, r.typ)
				if err != nil && !errors.Is(err, lock.ErrOutOfReach) {
					once.Do(func() { first = i; close(failed) })
				}
				reads.finish(i, st, err)
			}
		}()
	}
	// Every read handed out is read to its end; those not handed out
	// (after a failure) come after the failed one in the plan's order, and
	// carry its error.
	left := len(reads.list)
dispatch:
	for i := range reads.list {
		if ctx.Err() != nil {
			left = i
			break
		}
		select {
		case <-failed:
			left = i
			break dispatch
		default:
		}
		select {
		case next <- i:
		case <-failed:
			left = i
			break dispatch
		case <-ctx.Done():
			left = i
			break dispatch
		}
	}
	close(next)
	wg.Wait()
	for i := left; i < len(reads.list); i++ {
		if err := ctx.Err(); err != nil {
			reads.finish(i, lock.QueueState{}, err)
		} else {
			_, ferr := reads.wait(first)
			reads.finish(i, lock.QueueState{}, fmt.Errorf("not read, once the read of queue %q had failed: %w", reads.list[first].ref.Name, ferr))
		}
	}
}

// merge updates the changes p still holds, in the plan's order, up to the
// first read that failed, whose error it returns: what reading them one
// after the other would have done. ready are the statistics' ready
// messages of the changes whose Messages the statistics set (fillStakes;
// nil for a saved plan's, whose figures are the plan's): those lag, and
// a classic queue's read stands in for them, so that a queue drained a
// moment ago is not held to hold what it held; the rest of the
// statistics' figure (unacknowledged messages) stays. Elsewhere the
// larger figure wins: a quorum queue whose Raft servers do not run
// answers a passive declare with 0 messages whatever it holds, and a
// stream's read is a lower bound.
//
// It waits for those reads only; the others are cancelled. The changes p holds are those the reads began
// with, in the same order, less those held back since: each is matched to
// its read walking both lists once.
func (reads *exactReads) merge(p *plan.Plan, ready map[plan.ObjectRef]int64) error {
	if reads == nil {
		return nil
	}
	defer reads.cancel()
	j := 0
	for i := range p.Changes {
		c := &p.Changes[i]
		if !c.RisksMessages() {
			continue
		}
		ref := c.Ref()
		k := j
		for k < len(reads.list) && reads.list[k].ref != ref {
			k++
		}
		if k == len(reads.list) {
			continue // not read: not at stake when the reads began
		}
		j = k + 1
		st, err := reads.wait(k)
		if err != nil {
			if reads.openErr != nil {
				return reads.openErr
			}
			return fmt.Errorf("read the messages and consumers of queue %q in vhost %q: %w", c.Name, c.Vhost, err)
		}
		statsReady, fromStats := ready[ref]
		switch {
		case fromStats && !st.AtLeast && topology.QueueTypeOrClassic(reads.list[k].typ) == topology.QueueClassic:
			c.Messages = st.Ready + max(0, c.Messages-statsReady)
		case st.Ready > c.Messages:
			c.Messages, c.MessagesAtLeast = st.Ready, st.AtLeast
		case st.AtLeast:
			// The read found no more than the statistics, and is itself
			// a lower bound (a stream that plan does not read): the
			// statistics, which lag, may miss what came since.
			c.MessagesAtLeast = true
		}
		if reads.list[k].typ == topology.QueueStream {
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

// abandon ends the reads without merging them.
func (reads *exactReads) abandon() {
	if reads != nil {
		reads.cancel()
	}
}

// readStakes fills in the messages and consumers at stake in the queues p
// deletes or replaces: from the statistics (fillStakes) and exactly over
// AMQP (the reads known.exact began), the two merged once both are in. err
// is the statistics' failure; exactErr the exact reads' (or opening them),
// after which the statistics' figures stand.
func (e *Engine) readStakes(ctx context.Context, p *plan.Plan, l *Live, known stakes) (exactErr, err error) {
	if !hasStakes(p) {
		known.exact.abandon()
		return nil, nil
	}
	ready := map[plan.ObjectRef]int64{}
	err = e.fillStakes(ctx, p, l, known, nil, ready)
	if err != nil {
		known.exact.abandon()
		return nil, err
	}
	exactErr = known.exact.merge(p, ready)
	if (known.exact == nil || exactErr != nil) && len(known.depthOnly) > 0 {
		// Without the exact reads, the consumers of the queues whose
		// depth came from the queue totals are the statistics' to tell.
		if err := e.fillStakes(ctx, p, l, known, known.depthOnly, nil); err != nil {
			return nil, err
		}
	}
	return exactErr, nil
}

// hasStakes reports whether the plan deletes or replaces a queue.
func hasStakes(p *plan.Plan) bool {
	for _, c := range p.Changes {
		if c.RisksMessages() {
			return true
		}
	}
	return false
}

// listStakesFrom is how many queues of one vhost must be at stake for
// fillStakes to list the vhost's queues in one request rather than read
// them one by one.
const listStakesFrom = broker.ListQueuesFrom

// fillStakes reads the depth and consumers of the queues the plan deletes
// or replaces (the state read does not carry statistics, which would cost
// a full queue listing on every plan): with one GET /api/queues/{vhost}
// for a vhost where more than a few are at stake, with one GET per queue
// otherwise, or where the listing failed. Both read the same statistics;
// plan and apply then read exact figures over AMQP, queue by queue
// (startExact, and apply's check at deletion time).
func (e *Engine) fillStakes(ctx context.Context, p *plan.Plan, l *Live, known stakes, only map[plan.ObjectRef]bool, ready map[plan.ObjectRef]int64) error {
	set := func(ch *plan.Change, ref plan.ObjectRef, st broker.QueueStats) {
		ch.Messages, ch.Consumers = st.Messages, st.Consumers
		if ready != nil && st.ReadyKnown {
			ready[ref] = st.Ready
		}
	}
	type lookup struct {
		change *plan.Change
		ref    plan.ObjectRef
		st     broker.QueueStats
		err    error
		done   bool // read by the vhost's listing
	}
	var todo []*lookup
	perVhost := map[string][]*lookup{}
	var vhosts []string
	for i := range p.Changes {
		ch := &p.Changes[i]
		if !ch.RisksMessages() {
			continue
		}
		ref := ch.Ref()
		if only != nil && !only[ref] {
			continue
		}
		if st, ok := known.read[ref]; ok && !(only != nil && known.depthOnly[ref]) {
			set(ch, ref, st)
			continue
		}
		if st, ok := l.current.Queue(ref.Vhost, ref.Name); ok {
			set(ch, ref, st)
			continue
		}
		lk := &lookup{change: ch, ref: ref}
		todo = append(todo, lk)
		if _, ok := perVhost[ch.Vhost]; !ok {
			vhosts = append(vhosts, ch.Vhost)
		}
		perVhost[ch.Vhost] = append(perVhost[ch.Vhost], lk)
	}
	// The reads run concurrently; each writes only its own entries, and
	// the results are merged once they are all in.
	g := parallel.New(8)
	for _, vh := range vhosts {
		lks := perVhost[vh]
		if len(lks) < listStakesFrom {
			continue
		}
		g.Go(func() {
			byName, err := e.c.ListQueueStats(ctx, vh)
			if err != nil {
				return // read queue by queue below, which reports the errors
			}
			for _, lk := range lks {
				// A queue the listing does not hold is gone: nothing at
				// stake, as for a single read that finds no queue.
				lk.st = byName[lk.ref.Name]
				lk.done = true
			}
		})
	}
	g.Wait()
	for _, lk := range todo {
		if lk.done {
			continue
		}
		g.Go(func() {
			// No waiting for a just-declared queue's first statistics:
			// plan and apply read exact figures through AMQP next
			// (startExact).
			lk.st, lk.err = e.c.QueueStatsNow(ctx, lk.ref.Vhost, lk.ref.Name)
		})
	}
	g.Wait()
	var errs []error
	for _, lk := range todo {
		if lk.err != nil && !errors.Is(lk.err, broker.ErrNotFound) {
			errs = append(errs, lk.err)
			continue
		}
		set(lk.change, lk.ref, lk.st)
	}
	return errors.Join(errs...)
}

// stakes are the depths and consumers of queues at stake that a step
// read before readStakes (holdBackDownQueues' listing: with statistics
// before 4.0; from 4.0 the depths alone, from the queue totals), handed to
// it so that it does not read them again. The live state read stays as it
// was read.
type stakes struct {
	read map[plan.ObjectRef]broker.QueueStats
	// depthOnly are those of read whose consumers were not counted: the
	// exact reads count them, and where those do not run (or fail) the
	// statistics are read for them after all (readStakes).
	depthOnly map[plan.ObjectRef]bool
	// exact are the exact reads begun beside that listing (nil when none
	// were asked for, or nothing is at stake).
	exact *exactReads
}

// add records the figures of queue r; depthOnly when they hold no
// consumers.
func (s *stakes) add(r queueRef, st broker.QueueStats, depthOnly bool) {
	ref := plan.ObjectRef{Kind: kind.Queue, Vhost: r.vhost, Name: r.name}
	if s.read == nil {
		s.read = map[plan.ObjectRef]broker.QueueStats{}
	}
	s.read[ref] = st
	if depthOnly {
		if s.depthOnly == nil {
			s.depthOnly = map[plan.ObjectRef]bool{}
		}
		s.depthOnly[ref] = true
	}
}

// peeks are AMQP connections that read exact queue depths for a plan,
// one per vhost, opened when first needed; unlike apply's, they take no
// lock. inspect may be called from several goroutines at once, and after
// close, which a read still running when the plan ends may do: it then
// fails, and a connection it dials is closed at once.
type peeks struct {
	c   *broker.Client
	url func(context.Context) (string, error)

	// resolved asks url once, for open and warm alike; urlErr is its
	// failure.
	resolved sync.Once
	urlErr   error

	mu     sync.Mutex
	opts   lock.Options // set by open
	conns  map[string]*peek
	closed bool
}

// peek is the connection of one vhost, dialled once: the reads of that
// vhost that come meanwhile wait for it, and share its error.
type peek struct {
	once sync.Once
	conn *lock.Lock
	err  error
}

// errPlanEnded is the error of an exact read that starts once the plan
// has ended (peeks.close).
var errPlanEnded = errors.New("the plan has ended")

// newPeeks returns the peeks of a plan on the broker behind c, whose AMQP
// URL url gives once the first read needs it (open).
func newPeeks(c *broker.Client, url func(context.Context) (string, error)) *peeks {
	return &peeks{c: c, url: url, conns: map[string]*peek{}}
}

// open gives the exact reads (startExact) inspect, once the broker's AMQP
// URL is known.
func (p *peeks) open(ctx context.Context) (inspectFunc, error) {
	p.resolved.Do(func() {
		amqpURL, err := p.url(ctx)
		p.mu.Lock()
		defer p.mu.Unlock()
		if err != nil {
			p.urlErr = err
			return
		}
		p.opts = lockOptions(p.c, amqpURL, "plan")
	})
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.urlErr != nil {
		return nil, p.urlErr
	}
	return p.inspect, nil
}

// warm makes ready, in the background, what the exact reads of vhosts
// will ask for first: the broker's AMQP URL (a port-listener check and,
// where the node does not listen on the protocol's own port, an
// overview that sums up the broker's statistics: 0.45 s of its CPU on
// RabbitMQ 4.3.6 holding 30,000 queues) and a connection to each vhost.
// The plan calls it beside the diff, once the broker's state is read,
// where the diff will put a queue at stake (Live.droppedQueues): the
// reads then begin at once instead of after those round trips. A plan
// that reads nothing after all has made one connection for nothing,
// closed with the others (close); a failure here is met again, and
// reported, by the reads.
func (p *peeks) warm(ctx context.Context, vhosts []string) {
	go func() {
		if _, err := p.open(ctx); err != nil {
			return
		}
		for _, vh := range vhosts {
			_, _ = p.conn(ctx, vh)
		}
	}()
}

// lockOptions are the options of the AMQP connections of an action ("plan"
// or "apply") to the broker behind c.
func lockOptions(c *broker.Client, amqpURL, action string) lock.Options {
	opts := lock.Options{URL: amqpURL, Name: lock.DefaultName(action)}
	if strings.HasPrefix(amqpURL, "amqps:") {
		opts.TLS = c.TLSConfig()
	}
	return opts
}

func (p *peeks) inspect(ctx context.Context, vhost, queue, queueType string) (lock.QueueState, error) {
	if queueType == topology.QueueStream {
		// plan does not read streams: the probe would show as a consumer
		// in the statistics for a few seconds and make an apply that
		// follows refuse the stream's delete. apply reads it. The
		// statistics' figure, which lags by seconds, is then all the plan
		// knows: a lower bound (a stream published to a moment ago counts
		// none yet), never "nothing at stake".
		return lock.QueueState{Exists: true, AtLeast: true}, nil
	}
	conn, err := p.conn(ctx, vhost)
	if err != nil {
		return lock.QueueState{}, err
	}
	if queueType == topology.QueueQuorum {
		return conn.InspectQuorum(queue)
	}
	return conn.Inspect(queue)
}

// conn is the connection of vhost, dialled by the first caller (a read,
// or warm) with its ctx: the reads of one plan share one, so one that
// ended ends them all.
func (p *peeks) conn(ctx context.Context, vhost string) (*lock.Lock, error) {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return nil, errPlanEnded
	}
	pk, ok := p.conns[vhost]
	if !ok {
		pk = &peek{}
		p.conns[vhost] = pk
	}
	opts := p.opts
	p.mu.Unlock()
	pk.once.Do(func() {
		conn, err := lock.Peek(ctx, vhost, opts)
		p.mu.Lock()
		defer p.mu.Unlock()
		if err == nil && p.closed {
			_ = conn.Release()
			conn, err = nil, errPlanEnded
		}
		pk.conn, pk.err = conn, err
	})
	return pk.conn, pk.err
}

// close closes the connections, and every one dialled after.
func (p *peeks) close() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.closed = true
	for vh, pk := range p.conns {
		if pk.conn != nil {
			_ = pk.conn.Release()
		}
		delete(p.conns, vh)
	}
}
