package engine

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mqctl/mqctl/pkg/broker"
	"github.com/mqctl/mqctl/pkg/kind"
	"github.com/mqctl/mqctl/pkg/lock"
	"github.com/mqctl/mqctl/pkg/ownership"
	"github.com/mqctl/mqctl/pkg/plan"
	"github.com/mqctl/mqctl/pkg/topology"
)

// stakesPlan deletes n classic queues q0..q(n-1) of vhost "v" (each with
// the statistics' figures given by stats, when set), replaces a stream and
// deletes an exchange: only the queues are read.
func stakesPlan(n int, stats func(i int) (messages, consumers int64)) *plan.Plan {
	p := &plan.Plan{}
	for i := range n {
		c := plan.Change{Action: plan.Delete, Kind: kind.Queue, Vhost: "v", Name: fmt.Sprintf("q%d", i),
			Before: plan.Of(&topology.Queue{Type: topology.QueueClassic})}
		if stats != nil {
			c.Messages, c.Consumers = stats(i)
		}
		p.Changes = append(p.Changes, c)
	}
	p.Changes = append(p.Changes,
		plan.Change{Action: plan.Replace, Kind: kind.Queue, Vhost: "v", Name: "s",
			Before: plan.Of(&topology.Queue{Type: topology.QueueStream}), Consumers: 2},
		plan.Change{Action: plan.Delete, Kind: kind.Exchange, Vhost: "v", Name: "x"})
	return p
}

// refreshStakes reads the exact figures of the queues p deletes or
// replaces through inspect and merges them into p, as plan and apply do
// once their plan is final.
func refreshStakes(ctx context.Context, p *plan.Plan, inspect inspectFunc) error {
	return startExact(ctx, p, func(context.Context) (inspectFunc, error) { return inspect, nil }).merge(p, nil)
}

// waitFor fails the test rather than hang when what the test waits for
// never happens (a read that was to run beside others ran alone).
func waitFor(t *testing.T, ch <-chan struct{}, what string) {
	t.Helper()
	select {
	case <-ch:
	case <-time.After(time.Minute):
		t.Fatalf("gave up waiting: %s", what)
	}
}

// TestRefreshStakesFigures: every queue the plan deletes or replaces is
// read, each change gets its own queue's figures (the larger message
// count, the AMQP consumer count except on a stream) whatever order the
// concurrent reads finish in, and nothing else is read.
func TestRefreshStakesFigures(t *testing.T) {
	t.Parallel()
	const n = 3*StakeReaders + 5
	// The statistics lag: they count q1's unacknowledged messages, and a
	// consumer of q2 that has left.
	p := stakesPlan(n, func(i int) (int64, int64) {
		switch i {
		case 1:
			return 50, 0
		case 2:
			return 0, 3
		}
		return 0, 0
	})
	var mu sync.Mutex
	read := map[string]string{}
	inspect := func(_ context.Context, vhost, queue, typ string) (lock.QueueState, error) {
		mu.Lock()
		read[queue] = typ
		mu.Unlock()
		var i int
		if _, err := fmt.Sscanf(queue, "q%d", &i); err != nil {
			// The stream: no consumers over AMQP, one message found.
			return lock.QueueState{Exists: true, Ready: 1, AtLeast: true}, nil
		}
		if i%2 == 0 {
			// Finish out of order: the even reads wait a little.
			time.Sleep(time.Millisecond)
		}
		return lock.QueueState{Exists: true, Ready: int64(i), Consumers: int64(i % 3)}, nil
	}
	if err := refreshStakes(context.Background(), p, inspect); err != nil {
		t.Fatal(err)
	}
	if len(read) != n+1 {
		t.Errorf("%d queues read, want %d (every queue deleted or replaced, nothing else)", len(read), n+1)
	}
	if read["s"] != topology.QueueStream || read["q0"] != topology.QueueClassic {
		t.Errorf("queue types passed to inspect: stream %q, classic %q", read["s"], read["q0"])
	}
	for i := range n {
		c := p.Changes[i]
		wantMsgs, wantCons := int64(i), int64(i%3)
		if i == 1 {
			wantMsgs = 50 // the statistics' figure is larger
		}
		if c.Messages != wantMsgs || c.Consumers != wantCons || c.MessagesAtLeast {
			t.Errorf("queue %s: %d messages (at least %t), %d consumers at stake, want %d and %d",
				c.Name, c.Messages, c.MessagesAtLeast, c.Consumers, wantMsgs, wantCons)
		}
	}
	s := p.Changes[n]
	if s.Messages != 1 || !s.MessagesAtLeast || s.Consumers != 2 {
		t.Errorf("stream: %d messages (at least %t), %d consumers, want at least 1 and the statistics' 2 consumers", s.Messages, s.MessagesAtLeast, s.Consumers)
	}
}

// TestRefreshStakesConcurrent: the reads run side by side, never more than
// StakeReaders of them at once.
func TestRefreshStakesConcurrent(t *testing.T) {
	t.Parallel()
	const n = 4 * StakeReaders
	p := stakesPlan(n, nil)
	var inFlight, most atomic.Int64
	all := make(chan struct{})
	var once sync.Once
	inspect := func(_ context.Context, _, queue, _ string) (lock.QueueState, error) {
		now := inFlight.Add(1)
		defer inFlight.Add(-1)
		for {
			m := most.Load()
			if now <= m || most.CompareAndSwap(m, now) {
				break
			}
		}
		if now == StakeReaders {
			once.Do(func() { close(all) })
		}
		// The first reads return only once StakeReaders of them are in
		// flight: reads one after the other would never get there.
		waitFor(t, all, fmt.Sprintf("%d reads at once (queue %s)", StakeReaders, queue))
		return lock.QueueState{Exists: true}, nil
	}
	if err := refreshStakes(context.Background(), p, inspect); err != nil {
		t.Fatal(err)
	}
	if m := most.Load(); m > StakeReaders {
		t.Errorf("%d reads at once, want at most %d", m, StakeReaders)
	}
}

// TestRefreshStakesError: a failed read is reported as reading the queues
// one after the other reported it (the first failure in the plan's order,
// naming its queue and wrapping the cause), the changes before it carry
// their exact figures, and no read starts once one has failed.
func TestRefreshStakesError(t *testing.T) {
	t.Parallel()
	const n = 10 * StakeReaders
	failAt := StakeReaders + 3
	p := stakesPlan(n, nil)
	cause := errors.New("connection refused")
	var reads atomic.Int64
	inspect := func(_ context.Context, _, queue, _ string) (lock.QueueState, error) {
		reads.Add(1)
		var i int
		_, _ = fmt.Sscanf(queue, "q%d", &i)
		if i == failAt || i == failAt+2 {
			return lock.QueueState{}, fmt.Errorf("queue %d: %w", i, cause)
		}
		if i > failAt {
			// The reads after the failure take a while, so that the
			// test sees whether they keep being started.
			time.Sleep(5 * time.Millisecond)
		}
		return lock.QueueState{Exists: true, Ready: 7}, nil
	}
	err := refreshStakes(context.Background(), p, inspect)
	if !errors.Is(err, cause) {
		t.Fatalf("refreshStakes = %v, want an error wrapping %v", err, cause)
	}
	want := fmt.Sprintf(`read the messages and consumers of queue "q%d" in vhost "v": queue %d: %v`, failAt, failAt, cause)
	if err.Error() != want {
		t.Errorf("error %q, want %q", err, want)
	}
	for i := range failAt {
		if c := p.Changes[i]; c.Messages != 7 {
			t.Errorf("queue %s before the failed read: %d messages at stake, want 7", c.Name, c.Messages)
		}
	}
	// The reads in flight when the failure came finish; no more start.
	if r := reads.Load(); r > n/2 {
		t.Errorf("%d of %d queues read although the read of q%d failed", r, n+1, failAt)
	}
}

// TestRefreshStakesCancelled: a cancelled context stops the reads and is
// the error.
func TestRefreshStakesCancelled(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	var reads atomic.Int64
	inspect := func(context.Context, string, string, string) (lock.QueueState, error) {
		reads.Add(1)
		return lock.QueueState{Exists: true}, nil
	}
	err := refreshStakes(ctx, stakesPlan(5*StakeReaders, nil), inspect)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("refreshStakes = %v, want context.Canceled", err)
	}
	if reads.Load() != 0 {
		t.Errorf("%d queues read after the context ended", reads.Load())
	}
}

// TestRefreshStakesNothing: a plan without queues at stake reads nothing.
func TestRefreshStakesNothing(t *testing.T) {
	t.Parallel()
	p := &plan.Plan{Changes: []plan.Change{{Action: plan.Create, Kind: kind.Queue, Vhost: "v", Name: "q"}}}
	err := refreshStakes(context.Background(), p, func(context.Context, string, string, string) (lock.QueueState, error) {
		t.Error("a queue was read")
		return lock.QueueState{}, nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestReadStakesDepthOnly: the depths a placements listing took from the
// queue totals (4.0+, no consumers counted) stand, and the consumers are
// the exact reads'; the statistics are not listed. When the exact reads
// cannot run, the statistics are listed after all, for the consumers.
func TestReadStakesDepthOnly(t *testing.T) {
	t.Parallel()
	const n = 6
	var listed atomic.Int64
	c := fakeAPI(t, "4.3.6", "rabbit@c1", func(w http.ResponseWriter, r *http.Request) bool {
		if r.URL.Path != "/api/queues/v" {
			return false
		}
		listed.Add(1)
		var l []string
		for i := range n {
			l = append(l, fmt.Sprintf(`{"name":"q%d","messages":5,"consumers":2}`, i))
		}
		_, _ = w.Write([]byte("[" + strings.Join(l, ",") + "]"))
		return true
	})
	e := New(c, Options{})
	known := func() stakes {
		var s stakes
		for i := range n {
			s.add(queueRef{"v", fmt.Sprintf("q%d", i)}, broker.QueueStats{Messages: 4, Known: true}, true)
		}
		return s
	}
	l := &Live{current: plan.Current{Live: topology.Live{State: topology.New()}}}
	exact := func(context.Context) (inspectFunc, error) {
		return func(context.Context, string, string, string) (lock.QueueState, error) {
			return lock.QueueState{Exists: true, Ready: 1, Consumers: 3}, nil
		}, nil
	}
	p := stakesPlan(n, nil)
	p.Changes = p.Changes[:n] // the queues only
	k := known()
	k.exact = startExact(context.Background(), p, exact)
	if exactErr, err := e.readStakes(context.Background(), p, l, k); err != nil || exactErr != nil {
		t.Fatal(err, exactErr)
	}
	for _, ch := range p.Changes {
		if ch.Messages != 4 || ch.Consumers != 3 {
			t.Errorf("with the exact reads, %s: %d messages and %d consumers at stake, want the totals' 4 and the exact 3", ch.Name, ch.Messages, ch.Consumers)
		}
	}
	if listed.Load() != 0 {
		t.Errorf("the statistics were listed %d times beside the totals and the exact reads", listed.Load())
	}
	refused := errors.New("AMQP refused")
	p = stakesPlan(n, nil)
	p.Changes = p.Changes[:n]
	k = known()
	k.exact = startExact(context.Background(), p, func(context.Context) (inspectFunc, error) { return nil, refused })
	exactErr, err := e.readStakes(context.Background(), p, l, k)
	if err != nil || !errors.Is(exactErr, refused) {
		t.Fatalf("readStakes = %v, %v; want the exact reads' error", err, exactErr)
	}
	for _, ch := range p.Changes {
		if ch.Messages != 5 || ch.Consumers != 2 {
			t.Errorf("without the exact reads, %s: %d messages and %d consumers at stake, want the statistics' 5 and 2", ch.Name, ch.Messages, ch.Consumers)
		}
	}
	if listed.Load() != 1 {
		t.Errorf("the statistics were listed %d times without the exact reads, want once", listed.Load())
	}
}

// TestExactReadsHeldBack: the exact reads begin before the queues out of
// reach are held back. A queue out of reach does not stop the others'
// reads, and once its change is held back, neither its failure nor a read
// that never returns (a quorum queue without a majority) holds up or fails
// the merge of the changes the plan keeps.
func TestExactReadsHeldBack(t *testing.T) {
	t.Parallel()
	const n = 4 * StakeReaders
	const down, stuck = 3, 5
	p := stakesPlan(n, nil)
	release := make(chan struct{})
	defer close(release)
	var reads atomic.Int64
	inspect := func(_ context.Context, vhost, queue, _ string) (lock.QueueState, error) {
		reads.Add(1)
		switch queue {
		case fmt.Sprintf("q%d", down):
			return lock.QueueState{}, fmt.Errorf("queue %q in vhost %q exists but is %w", queue, vhost, lock.ErrOutOfReach)
		case fmt.Sprintf("q%d", stuck):
			<-release
		}
		return lock.QueueState{Exists: true, Ready: 9}, nil
	}
	reads0 := startExact(context.Background(), p, func(context.Context) (inspectFunc, error) { return inspect, nil })
	p.HoldBack(func(c *plan.Change) (string, string) {
		if c.Name == fmt.Sprintf("q%d", down) || c.Name == fmt.Sprintf("q%d", stuck) {
			return plan.HeldNodeDown, "down"
		}
		return "", ""
	})
	merged := make(chan error, 1)
	go func() { merged <- reads0.merge(p, nil) }()
	var err error
	select {
	case err = <-merged:
	case <-time.After(time.Minute):
		t.Fatal("the merge waited for the read of a queue held back")
	}
	if err != nil {
		t.Fatalf("merge = %v, want the kept changes merged without the held-back queues' reads", err)
	}
	for _, c := range p.Changes[:n-2] {
		if c.Messages != 9 {
			t.Errorf("queue %s: %d messages at stake, want the exact read's 9", c.Name, c.Messages)
		}
	}
	// The merge waits for no held-back queue's read: the reads of q3 and
	// q5 (whose read never ends) may start after it returns, on a busy
	// machine; each must start all the same.
	for deadline := time.Now().Add(time.Minute); reads.Load() < n+1 && time.Now().Before(deadline); {
		time.Sleep(10 * time.Millisecond)
	}
	if r := reads.Load(); r != n+1 {
		t.Errorf("%d queues read, want every one of the %d (a queue out of reach stops no read)", r, n+1)
	}

	// A queue out of reach that the plan still holds is the merge's error.
	p = stakesPlan(n, nil)
	err = startExact(context.Background(), p, func(context.Context) (inspectFunc, error) {
		return func(_ context.Context, vhost, queue, _ string) (lock.QueueState, error) {
			if queue == fmt.Sprintf("q%d", down) {
				return lock.QueueState{}, fmt.Errorf("queue %q in vhost %q exists but is %w", queue, vhost, lock.ErrOutOfReach)
			}
			return lock.QueueState{Exists: true}, nil
		}, nil
	}).merge(p, nil)
	if !errors.Is(err, lock.ErrOutOfReach) || !strings.Contains(err.Error(), fmt.Sprintf("queue \"q%d\"", down)) {
		t.Errorf("merge = %v, want the read of q%d out of reach", err, down)
	}
}

// TestExactReadsBesideListing: the exact reads of a plan that deletes many
// queues run while the queue listing that looks for those out of reach is
// read, not after it: the listing here answers only once a queue has been
// read exactly.
func TestExactReadsBesideListing(t *testing.T) {
	t.Parallel()
	const n = 2 * listStakesFrom
	read := make(chan struct{})
	var once sync.Once
	c := fakeAPI(t, "4.3.6", "rabbit@c1", func(w http.ResponseWriter, r *http.Request) bool {
		if r.URL.Path != "/api/queues/v" {
			return false
		}
		select {
		case <-read:
		case <-time.After(20 * time.Second):
			w.WriteHeader(http.StatusServiceUnavailable)
			return true
		}
		var l []string
		for i := range n {
			l = append(l, fmt.Sprintf(`{"name":"q%d","type":"classic","node":"rabbit@c1","state":"running","messages":5}`, i))
		}
		_, _ = w.Write([]byte("[" + strings.Join(l, ",") + "]"))
		return true
	})
	if _, err := c.ReadFacts(context.Background()); err != nil {
		t.Fatal(err)
	}
	e := New(c, Options{})
	state := topology.New()
	v := state.Vhost("v")
	p := stakesPlan(n, nil)
	p.Changes = p.Changes[:n] // the queues only
	for _, ch := range p.Changes {
		v.Queues[ch.Name] = &topology.Queue{Name: ch.Name, Type: topology.QueueClassic}
	}
	l := &Live{current: plan.Current{Live: topology.Live{State: state}}}
	known, err := e.holdBack(context.Background(), p, l, func(context.Context) (inspectFunc, error) {
		return func(context.Context, string, string, string) (lock.QueueState, error) {
			once.Do(func() { close(read) })
			return lock.QueueState{Exists: true, Ready: 1, Consumers: 1}, nil
		}, nil
	})
	if err != nil {
		t.Fatalf("holdBack = %v (the listing waited in vain for an exact read)", err)
	}
	if exactErr, err := e.readStakes(context.Background(), p, l, known); err != nil || exactErr != nil {
		t.Fatal(err, exactErr)
	}
	for _, ch := range p.Changes {
		if ch.Messages != 5 || ch.Consumers != 1 {
			t.Errorf("%s: %d messages and %d consumers at stake, want the listing's 5 and the exact read's 1", ch.Name, ch.Messages, ch.Consumers)
		}
	}
}

// TestPeeksAfterClose: a plan's exact read that starts after the plan has
// ended (a read of a queue held back, still dispatched) neither dials nor
// leaves a connection open: it fails with errPlanEnded.
func TestPeeksAfterClose(t *testing.T) {
	t.Parallel()
	asked := false
	pk := newPeeks(nil, func(context.Context) (string, error) {
		asked = true
		return "amqp://127.0.0.1:1", nil // never dialled
	})
	inspect, err := pk.open(context.Background())
	if err != nil || !asked {
		t.Fatalf("open = %v (URL asked: %v)", err, asked)
	}
	pk.close()
	if _, err := inspect(context.Background(), "v", "q", topology.QueueClassic); !errors.Is(err, errPlanEnded) {
		t.Errorf("inspect after close = %v, want errPlanEnded", err)
	}
	if len(pk.conns) != 0 {
		t.Errorf("%d connections after close", len(pk.conns))
	}
}

// TestPlanStreamStakesLowerBound: plan does not read a stream over AMQP
// (peeks.inspect), so what its statistics count, which lag by seconds,
// is a lower bound: a stream published to a moment ago whose statistics
// count none yet is at stake with messages unknown, never with nothing.
func TestPlanStreamStakesLowerBound(t *testing.T) {
	t.Parallel()
	pk := newPeeks(nil, nil)
	for _, stats := range []int64{0, 4} {
		p := &plan.Plan{Changes: []plan.Change{{Action: plan.Replace, Kind: kind.Queue, Vhost: "v", Name: "s",
			Before: plan.Of(&topology.Queue{Type: topology.QueueStream}), Messages: stats}}}
		if err := refreshStakes(context.Background(), p, pk.inspect); err != nil {
			t.Fatalf("a stream needs no AMQP read in a plan: %v", err)
		}
		if c := p.Changes[0]; c.Messages != stats || !c.MessagesAtLeast {
			t.Errorf("stream with %d messages by its statistics: %d messages (at least %t), want a lower bound of %d", stats, c.Messages, c.MessagesAtLeast, stats)
		}
	}
}

// TestDroppedQueues: the plan warms its exact reads (peeks.warm) for the
// vhosts where the file drops a queue mqctl's record lists and the broker
// holds (a delete, and so an exact read, to come); not for a queue the
// file still declares, one mqctl does not manage, or one already gone.
func TestDroppedQueues(t *testing.T) {
	t.Parallel()
	managed := func(names ...string) *ownership.Record {
		r := &ownership.Record{Vhost: "v", Managed: map[plan.ObjectRef]plan.Print{}}
		for _, n := range names {
			r.Managed[plan.ObjectRef{Kind: kind.Queue, Vhost: "v", Name: n}] = 0
		}
		return r
	}
	for _, tc := range []struct {
		name     string
		record   *ownership.Record
		broker   []string // queues of vhost v on the broker
		declared []string // queues of vhost v in the file
		want     []string
	}{
		{"managed queue dropped", managed("a", "b"), []string{"a", "b"}, []string{"a"}, []string{"v"}},
		{"every queue dropped", managed("a"), []string{"a"}, nil, []string{"v"}},
		{"nothing dropped", managed("a", "b"), []string{"a", "b"}, []string{"a", "b"}, nil},
		{"unmanaged queue not declared", managed("a"), []string{"a", "app"}, []string{"a"}, nil},
		{"managed queue gone from the broker", managed("a", "b"), []string{"a"}, []string{"a"}, nil},
		{"no record", nil, []string{"a"}, nil, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			state, desired := topology.New(), topology.New()
			for _, q := range tc.broker {
				state.Vhost("v").Queues[q] = &topology.Queue{Name: q}
			}
			desired.Vhost("v")
			for _, q := range tc.declared {
				desired.Vhost("v").Queues[q] = &topology.Queue{Name: q}
			}
			l := &Live{scope: []string{"v"}, records: map[string]*ownership.Record{}, current: plan.Current{Live: topology.Live{State: state}}}
			if tc.record != nil {
				l.records["v"] = tc.record
			}
			if got := l.droppedQueues(desired)(); !slices.Equal(got, tc.want) {
				t.Errorf("droppedQueues = %v, want %v", got, tc.want)
			}
		})
	}
}

// TestPeeksWarm: warm asks for the AMQP URL and dials beside the diff;
// the reads that follow share both, asking nothing again, and meet the
// dial's failure as their own.
func TestPeeksWarm(t *testing.T) {
	t.Parallel()
	var asked atomic.Int32
	pk := newPeeks(nil, func(context.Context) (string, error) {
		asked.Add(1)
		return "amqp://127.0.0.1:1", nil // refused
	})
	defer pk.close()
	pk.warm(context.Background(), []string{"v"})
	inspect, err := pk.open(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	_, err = inspect(context.Background(), "v", "q", topology.QueueClassic)
	if err == nil {
		t.Fatal("a read through a refused connection succeeded")
	}
	if _, err2 := inspect(context.Background(), "v", "q2", topology.QueueClassic); err2 == nil || err2.Error() != err.Error() {
		t.Errorf("second read = %v, want the dial's error %v", err2, err)
	}
	if n := asked.Load(); n != 1 {
		t.Errorf("the AMQP URL was asked %d times, want once", n)
	}
}

// TestPeeksURLError: a failure to find the AMQP URL is every open's.
func TestPeeksURLError(t *testing.T) {
	t.Parallel()
	fail := errors.New("no overview")
	pk := newPeeks(nil, func(context.Context) (string, error) { return "", fail })
	defer pk.close()
	pk.warm(context.Background(), []string{"v"})
	for range 2 {
		if _, err := pk.open(context.Background()); !errors.Is(err, fail) {
			t.Errorf("open = %v, want %v", err, fail)
		}
	}
}

// TestRefreshStakesReadyFromTheRead: where the statistics told how many of
// a classic queue's messages were ready, the exact read's ready messages stand in for
// those, and the rest of the statistics' figure (unacknowledged messages)
// stays: a queue drained since the statistics' last sample is not held to
// hold what it held, and one whose consumer holds messages unacknowledged
// still counts them. A stream's read, a lower bound, is not taken for the
// statistics' ready messages, nor a quorum queue's; nor is any read
// without them (the larger figure wins, as before).
func TestRefreshStakesReadyFromTheRead(t *testing.T) {
	t.Parallel()
	type stats struct{ messages, ready int64 }
	for _, tc := range []struct {
		name      string
		stats     stats
		known     bool // the statistics' ready messages are known
		quorum    bool
		readReady int64
		want      int64
	}{
		{"drained since the statistics", stats{3, 3}, true, false, 0, 0},
		{"filled since the statistics", stats{0, 0}, true, false, 4, 4},
		{"unacknowledged, nothing ready", stats{5, 0}, true, false, 0, 5},
		{"some of each, more ready now", stats{5, 2}, true, false, 4, 7},
		{"statistics' ready unknown: the larger figure", stats{3, 0}, false, false, 0, 3},
		{"statistics' ready unknown, the read larger", stats{3, 0}, false, false, 6, 6},
		// A quorum queue whose Raft servers do not run answers 0.
		{"a quorum queue: the larger figure", stats{3, 3}, true, true, 0, 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			p := stakesPlan(1, func(int) (int64, int64) { return tc.stats.messages, 0 })
			if tc.quorum {
				p.Changes[0].Before = plan.Of(&topology.Queue{Type: topology.QueueQuorum})
			}
			ready := map[plan.ObjectRef]int64{}
			if tc.known {
				ready[p.Changes[0].Ref()] = tc.stats.ready
			}
			// The stream's statistics: 9 messages, 4 of them ready.
			p.Changes[1].Messages = 9
			ready[p.Changes[1].Ref()] = 4
			inspect := func(_ context.Context, _, queue, _ string) (lock.QueueState, error) {
				if queue == "s" {
					return lock.QueueState{Exists: true, Ready: 1, AtLeast: true}, nil
				}
				return lock.QueueState{Exists: true, Ready: tc.readReady}, nil
			}
			reads := startExact(context.Background(), p, func(context.Context) (inspectFunc, error) { return inspect, nil })
			if err := reads.merge(p, ready); err != nil {
				t.Fatal(err)
			}
			if c := p.Changes[0]; c.Messages != tc.want || c.MessagesAtLeast {
				t.Errorf("queue: %d messages at stake (at least %t), want %d", c.Messages, c.MessagesAtLeast, tc.want)
			}
			if s := p.Changes[1]; s.Messages != 9 || !s.MessagesAtLeast {
				t.Errorf("stream: %d messages at stake (at least %t), want the statistics' 9, at least", s.Messages, s.MessagesAtLeast)
			}
		})
	}
}
