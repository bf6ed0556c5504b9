package broker

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/mqctl/mqctl/internal/parallel"
)

// ListQueuesFrom is how many queues of one vhost must be read for their
// statistics to be listed in one request (GET /api/queues/{vhost}) rather
// than read one by one: a listing costs as much as a few single reads on a
// small vhost, and far less than thousands of them.
const ListQueuesFrom = 5

// QueueCount is a queue's messages and consumers as its statistics count
// them: Messages include those a quorum queue holds until its dead-letter
// exchange has taken them (at-least-once dead-lettering), of which
// DeadLettering are, and those a RabbitMQ 4.3 quorum queue holds back for
// a delayed retry, of which Delayed are. Ready, and their bytes
// ReadyBytes, are what a length limit counts (max-length and
// max-length-bytes leave unacknowledged messages out). A count the read
// did not ask for is 0.
type QueueCount struct {
	Messages, Ready, ReadyBytes, Delayed, DeadLettering, Consumers int64
	// Segments are a stream's segment files (its retention removes whole
	// ones, never the one written to), where the broker reports them
	// (SegmentsKnown: 3.10.8 does not, 4.0.5 and 4.3.6 do).
	Segments      int64
	SegmentsKnown bool
	// FirstTimestamp is the time of a stream's oldest message (ms since
	// the epoch; 0 when not known).
	FirstTimestamp int64
	// Gone: the queue no longer exists.
	Gone bool
}

// countOf is the count of a queue's statistics as read.
func countOf(r activityJSON) QueueCount {
	return QueueCount{Messages: value(r.Messages), Ready: value(r.Ready), ReadyBytes: value(r.ReadyBytes),
		Delayed: value(r.Delayed), DeadLettering: value(r.Dlx), Consumers: value(r.Consumers),
		Segments: value(r.Segments), SegmentsKnown: r.Segments != nil, FirstTimestamp: value(r.FirstTimestamp)}
}

// QueueCounts reads the statistics of the named queues of vhost as they
// are now (QueueCount, Gone for a queue that does not exist): listed in
// one request from ListQueuesFrom of them, otherwise read one by one.
func (c *Client) QueueCounts(ctx context.Context, vhost string, names []string) (map[string]QueueCount, error) {
	return c.counts(ctx, vhost, names, "name,messages,messages_ready,message_bytes_ready,consumers,messages_dlx", len(names) >= ListQueuesFrom)
}

// StreamCounts reads the statistics of the named streams of vhost
// (QueueCount, with their Segments; Gone for one that does not exist) from
// one listing of its queues: a read of one queue leaves a stream's
// segments out when it asks for columns (measured on 4.3.6), a listing
// does not.
func (c *Client) StreamCounts(ctx context.Context, vhost string, names []string) (map[string]QueueCount, error) {
	return c.counts(ctx, vhost, names, "name,messages,consumers,segments,first_timestamp", true)
}

// counts reads columns of the named queues of vhost (readColumns) as
// their QueueCount, Gone for a queue that does not exist.
func (c *Client) counts(ctx context.Context, vhost string, names []string, columns string, list bool) (map[string]QueueCount, error) {
	rows, err := c.readColumns(ctx, vhost, names, columns, list)
	if err != nil {
		return nil, err
	}
	out := make(map[string]QueueCount, len(names))
	for _, n := range names {
		r, ok := rows[n]
		out[n] = QueueCount{Gone: !ok}
		if ok {
			out[n] = countOf(r)
		}
	}
	return out, nil
}

// ReadySettle is how long after an exact read (a passive declare) a
// caller of ReadyCaughtUp reads a queue's bytes: a statistics interval for
// the queue to count again, and a collection interval for the management
// plugin to collect it (5 s each by default), with a second to spare.
const ReadySettle = 11 * time.Second

// ReadyTimeout is how long a caller of ReadyCaughtUp waits at most for the
// statistics to count what its exact read counted: two of RabbitMQ's
// default intervals are 10 s.
const ReadyTimeout = 30 * time.Second

// ReadyCaughtUp reads the statistics of queue q of vhost once settle has
// passed since the call, until they count at least ready messages ready
// and their bytes, within timeout: for a length limit in bytes, which only
// the statistics count. They lag: a classic queue counts (emit_stats) at
// most a statistics interval after a call to it, which the caller's
// passive declare was (rabbit_amqqueue_process reply/2 starts the stats
// timer, v4.3.5), and a quorum queue at each tick; the management plugin
// collects a count up to a collection interval later, its messages and
// its bytes apart, into two records (emit_stats/2). On 4.3.6 100 messages
// just published showed first as their bytes without their count, or as
// their count beside the bytes of before, and an idle_since of before
// beside a fresh count. settle covers both intervals (5 s each by
// default), so that the bytes read come from a count made after the call.
func (c *Client) ReadyCaughtUp(ctx context.Context, vhost, q string, ready int64, settle, timeout time.Duration) (QueueCount, error) {
	start := time.Now()
	deadline := start.Add(timeout)
	for {
		if wait := settle - time.Since(start); wait > 0 {
			select {
			case <-ctx.Done():
				return QueueCount{}, Interrupted(fmt.Sprintf("read the statistics of queue %q in vhost %q", q, vhost), "while waiting for the broker to refresh them", ctx.Err())
			case <-time.After(wait):
			}
		}
		rows, err := c.readColumns(ctx, vhost, []string{q}, "name,messages,messages_ready,message_bytes_ready,consumers", false)
		if err != nil {
			return QueueCount{}, err
		}
		r, ok := rows[q]
		if !ok {
			return QueueCount{Gone: true}, nil
		}
		if st := countOf(r); st.Ready >= ready && r.ReadyBytes != nil {
			return st, nil
		}
		if time.Now().After(deadline) {
			return QueueCount{}, fmt.Errorf("the statistics of queue %q in vhost %q did not count its %d ready messages and their bytes within %s: %w", q, vhost, ready, timeout, ErrNotRefreshed)
		}
		select {
		case <-ctx.Done():
			return QueueCount{}, Interrupted(fmt.Sprintf("read the statistics of queue %q in vhost %q", q, vhost), "while waiting for the broker to refresh them", ctx.Err())
		case <-time.After(refreshPoll):
		}
	}
}

// ErrNotRefreshed is CountAfterRefresh's error when a queue's statistics
// were not refreshed twice in time.
var ErrNotRefreshed = errors.New("statistics not refreshed")

// ErrNotRunning is CountAfterRefresh's error when some quorum queues'
// statistics did not change once while the others' were refreshed: their
// Raft server most likely does not run. RabbitMQ leaves a quorum queue so
// when the client that declares it through the management API goes away
// during the declaration (rabbit_quorum_queue:start_cluster writes the
// queue's record, then starts its servers, in the request's process, which
// the management API ends with the request): an apply killed, timed out
// or cut from the network (kill -9 mid-apply, 4.3.6); such a queue has no
// Raft log and holds nothing. A queue whose servers stopped for good
// (ra:stop_server, or crashing past their restart intensity) looks the
// same, its log on disk keeping what it held. Either answers a passive
// declare, refuses (nacks) every message published to it, and a basic.get
// answers "noproc" (StoppedQuorumQueues tells them apart and Stopped.Advice
// gives the fix for each). It wraps ErrNotRefreshed.
var ErrNotRunning = fmt.Errorf("its Raft server does not seem to run: RabbitMQ leaves a quorum queue so when its declaration was cut off (a client declaring it through the management API went away during it: an apply killed, timed out or cut from the network), with nothing in it, or when its Raft servers stopped for good, its log on disk keeping what it held; it refuses every message published to it; check it with rabbitmq-queues quorum_status (Raft State noproc), and mqctl status for the fix that loses nothing: %w", ErrNotRefreshed)

// refreshColumns are the columns CountAfterRefresh reads. A quorum queue
// reports its reductions with every tick, the same moment as its depth, so
// a new value is a new count.
const refreshColumns = "name,messages,messages_delayed,messages_dlx,consumers,reductions"

// refreshPoll is how often CountAfterRefresh reads the statistics.
const refreshPoll = 300 * time.Millisecond

// CountAfterRefresh reads the statistics of the named quorum queues of
// vhost until each has been refreshed twice since the call began, and
// returns what the last read counted, within timeout. From ListQueuesFrom
// queues on, each read lists the vhost's queues in one request.
//
// A quorum queue's statistics are a count the queue makes at each tick
// (quorum_tick_interval) and the management plugin collects at its own
// interval (collect_statistics_interval). The first new count read after
// the call may come from a tick before it; the second cannot: it was made
// after the first was collected. So what the returned count misses was
// published after the call began. That matters where a quorum queue holds
// messages that a passive declare does not count, and only the statistics
// do: dead letters held until the dead-letter exchange takes them
// (at-least-once dead-lettering), and on RabbitMQ 4.3 messages held back
// for a delayed retry (or an AMQP 1.0 delivery time).
func (c *Client) CountAfterRefresh(ctx context.Context, vhost string, names []string, timeout time.Duration) (map[string]QueueCount, error) {
	type watch struct {
		last    *int64 // the reductions last read
		seen    bool
		changes int
	}
	watches := make(map[string]*watch, len(names))
	for _, n := range names {
		watches[n] = &watch{}
	}
	out := make(map[string]QueueCount, len(names))
	deadline := time.Now().Add(timeout)
	pending := slices.Clone(names)
	slices.Sort(pending)
	list := len(names) >= ListQueuesFrom
	for {
		rows, err := c.readColumns(ctx, vhost, pending, refreshColumns, list)
		if err != nil {
			return nil, err
		}
		var still []string
		for _, n := range pending {
			w := watches[n]
			r, ok := rows[n]
			if !ok {
				out[n] = QueueCount{Gone: true}
				continue
			}
			if w.seen && !sameValue(w.last, r.Reductions) {
				w.changes++
			}
			w.seen, w.last = true, r.Reductions
			out[n] = countOf(r)
			if w.changes < 2 {
				still = append(still, n)
			}
		}
		pending = still
		if len(pending) == 0 {
			return out, nil
		}
		if time.Now().After(deadline) {
			q := make([]string, len(pending))
			var frozen []string
			for i, n := range pending {
				q[i] = strconv.Quote(n)
				if watches[n].changes == 0 {
					frozen = append(frozen, strconv.Quote(n))
				}
			}
			if len(frozen) > 0 && len(pending) < len(names) {
				// Others were refreshed: the statistics work, and these
				// queues did not tick once.
				return nil, fmt.Errorf("the statistics of queue %s in vhost %q did not change once within %s, while those of the other quorum queues did: %w", strings.Join(frozen, ", "), vhost, timeout, ErrNotRunning)
			}
			return nil, fmt.Errorf("the statistics of queue %s in vhost %q were not refreshed twice within %s: %w", strings.Join(q, ", "), vhost, timeout, ErrNotRefreshed)
		}
		select {
		case <-ctx.Done():
			return nil, Interrupted(fmt.Sprintf("read the statistics of the queues of vhost %q", vhost), "while waiting for the broker to refresh them", ctx.Err())
		case <-time.After(refreshPoll):
		}
	}
}

// readColumns reads the statistics columns of the named queues of vhost,
// by name: all the vhost's in one request (list), or queue by queue. A
// queue that does not exist has no entry.
func (c *Client) readColumns(ctx context.Context, vhost string, names []string, columns string, list bool) (map[string]activityJSON, error) {
	query := url.Values{"columns": {columns}}
	out := make(map[string]activityJSON, len(names))
	if list {
		var rows []activityJSON
		if err := c.do(ctx, &request{method: http.MethodGet, path: seg("queues", vhost), query: query,
			op: fmt.Sprintf("list the statistics of the queues of vhost %q", vhost), vhost: vhost}, listOf[activityJSON]{&rows}); err != nil {
			return nil, err
		}
		for _, r := range rows {
			out[r.Name] = r
		}
		return out, nil
	}
	var (
		mu    sync.Mutex
		first error
	)
	g := parallel.New(8)
	for _, n := range names {
		g.Go(func() {
			var r activityJSON
			err := c.do(ctx, &request{method: http.MethodGet, path: seg("queues", vhost, n), query: query,
				op: fmt.Sprintf("read queue %q in vhost %q", n, vhost), vhost: vhost}, &r)
			mu.Lock()
			defer mu.Unlock()
			switch {
			case errors.Is(err, ErrNotFound):
			case err != nil:
				if first == nil {
					first = err
				}
			default:
				r.Name = n
				out[n] = r
			}
		})
	}
	g.Wait()
	return out, first
}

func sameValue(a, b *int64) bool {
	return (a == nil) == (b == nil) && (a == nil || *a == *b)
}

func value(p *int64) int64 {
	if p == nil {
		return 0
	}
	return *p
}
