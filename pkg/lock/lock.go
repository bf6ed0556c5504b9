// Package lock keeps two applies from interleaving on one vhost. The lock
// is an exclusive, server-side queue named QueueName held open over an AMQP
// connection: RabbitMQ refuses a second exclusive declaration
// (RESOURCE_LOCKED) while the first connection lives, and drops the queue
// by itself when that connection closes — so a crashed or killed apply
// never leaves a stale lock behind.
package lock

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"os"
	"strings"
	"sync"
	"syscall"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/mqctl/mqctl/internal/shell"
	"github.com/mqctl/mqctl/pkg/broker"
)

// QueueName is the lock queue declared in every vhost an apply changes.
const QueueName = "mqctl.lock"

// ArgHolder is the lock queue's argument naming who holds it (Options.Name):
// unlike the owner connection's details, which the management API shows
// only once the broker has emitted that connection's statistics, queue
// arguments can be read as soon as the queue exists.
const ArgHolder = "x-mqctl-holder"

// ErrHeld is wrapped by the error returned when another apply holds a lock.
var ErrHeld = errors.New("another apply holds the lock")

// releaseGrace is how long Acquire tries again, past its wait, before it
// says who holds the lock: the broker refuses the lock for a moment after
// its holder's connection closed (an apply killed -9 and run again at
// once: 4.3.6, where the queue was gone by the time the holder was looked
// for, and 4.0.5, where it still named the dead process), then drops the
// queue.
const releaseGrace = 3 * time.Second

// BreakAdvice says when a lock whose apply is gone frees itself, and how
// to break it before: the lock lives as long as its AMQP connection, which
// the broker closes at once when the process ends (killed -9 included),
// and when it has missed the connection's heartbeats (10 s: about 30 s,
// measured on 4.0.5 and 4.3.6 with the holder stopped) when its host hung
// or lost the network.
const BreakAdvice = "If that apply is no longer running, the broker frees the lock by itself: at once when its process ended, about 30 s after its host hung or lost the network; " +
	"to break the lock before, close that apply's AMQP connection (the management UI's Connections page, or rabbitmqctl close_connection), which stops that apply before its next step"

// Holder describes who holds a lock, for the error message.
type Holder func(ctx context.Context, vhost string) string

// Options configure Acquire.
type Options struct {
	// URL is the AMQP URL without vhost path (amqp://user:pass@host:5672).
	URL string
	// TLS is used for amqps URLs.
	TLS *tls.Config
	// Name identifies this apply in the broker's connection list.
	Name string
	// Wait is how long to keep trying while another apply holds the lock.
	Wait time.Duration
	// Holder, when set, names the current holder in the error.
	Holder Holder
	// Waiting, when set, is told once that Acquire waits for holder.
	Waiting func(vhost, holder string)
	// ConfirmEvery is how old Check lets the last confirmation by the
	// broker be: 0 means DefaultConfirmEvery, a negative value asks at
	// every Check.
	ConfirmEvery time.Duration
}

// Lock is a held lock on one vhost (from Peek: an AMQP connection to it
// that holds no lock, for Inspect only). Its methods may be called from
// several goroutines at once: each Inspect uses a channel of its own.
type Lock struct {
	Vhost string
	// host is the AMQP host:port of its connection, for Check's error.
	host string
	// confirmEvery is Options.ConfirmEvery, defaulted.
	confirmEvery time.Duration

	mu   sync.Mutex
	conn *amqp.Connection
	// held is true for a lock (Acquire), false for a Peek.
	held bool
	// idle are channels of Inspect that answered their last passive
	// declare: the next Inspect reuses one instead of opening a channel
	// (two round trips fewer). A failed declare closes its channel, which
	// is then dropped. At most as many as Inspects ran at once.
	idle []*amqp.Channel

	// checkMu serialises Check: one round trip answers every caller
	// waiting for it. confirmed is when the last round trip that found
	// the lock ours began (wall and monotonic clock), checked when Check
	// last ran; lost, once set, is the reason the lock is gone for good.
	checkMu   sync.Mutex
	checkCh   *amqp.Channel
	confirmed time.Time
	checked   time.Time
	lost      error
}

// ErrLost is wrapped by Check's error once the lock is no longer this
// apply's: another apply may have taken it since.
var ErrLost = errors.New("the apply lock was lost")

// DefaultConfirmEvery is how old the last confirmation of a lock may be
// before Check asks the broker again (one synchronous round trip on the
// lock's connection, about 0.1 ms on the same machine): well under the
// time the broker gives a silent connection before it closes it (two to
// three heartbeat intervals of 10 s after it last heard from it:
// rabbit_heartbeat's receiver, at v4.3.5), so that a process stopped (Ctrl-Z, SIGSTOP) or a host that
// hung long enough to lose the lock learns it before its next write, even
// when the closed connection is not yet noticed (the socket is read by
// another goroutine, which may not have run since the process woke up).
const DefaultConfirmEvery = time.Second

// confirmTimeout bounds Check's round trip: a lock the broker does not
// confirm in that time is taken as lost (the node or the network hangs).
const confirmTimeout = 5 * time.Second

// pausedAfter is the gap between two Checks from which Check's error says
// the apply was paused: steps run one after the other, so a gap of seconds
// is a process that was stopped or a host that hung.
const pausedAfter = 5 * time.Second

// DefaultName is the connection name an apply announces: who and where.
func DefaultName(action string) string {
	host, _ := os.Hostname()
	user := os.Getenv("USER")
	if user == "" {
		user = "unknown"
	}
	return fmt.Sprintf("mqctl %s by %s@%s (pid %d) since %s", action, user, host, os.Getpid(), time.Now().UTC().Format(time.RFC3339))
}

// Acquire takes the lock of vhost, waiting up to opts.Wait while another
// apply holds it. It gives up as soon as ctx ends, also while the
// connection is being opened (see dial).
func Acquire(ctx context.Context, vhost string, opts Options) (*Lock, error) {
	start := time.Now()
	deadline := start.Add(opts.Wait)
	holder := func() string {
		if opts.Holder != nil {
			if h := opts.Holder(ctx, vhost); h != "" {
				return h
			}
		}
		return "another apply"
	}
	told := false
	for {
		l, err := try(ctx, vhost, opts)
		if err == nil {
			return l, nil
		}
		if !errors.Is(err, ErrHeld) {
			return nil, err
		}
		if time.Now().After(deadline) {
			if time.Since(start) < releaseGrace {
				// A holder whose connection closed a moment ago (an
				// apply killed and run again at once) still holds the
				// lock until the broker has dropped its queue.
				select {
				case <-ctx.Done():
				case <-time.After(100 * time.Millisecond):
				}
				continue
			}
			who := holder()
			waited := ""
			if opts.Wait > 0 {
				waited = fmt.Sprintf(" (waited %s)", opts.Wait)
			}
			return nil, fmt.Errorf("vhost %q is locked by %s%s: %w; wait for it to finish, or pass --lock-timeout to wait longer. %s", vhost, who, waited, ErrHeld, BreakAdvice)
		}
		if !told && opts.Waiting != nil {
			told = true
			opts.Waiting(vhost, holder())
		}
		select {
		case <-ctx.Done():
			return nil, broker.Interrupted(fmt.Sprintf("waiting for the lock of vhost %q", vhost), "while another apply held it", ctx.Err())
		case <-time.After(500 * time.Millisecond):
		}
	}
}

func try(ctx context.Context, vhost string, opts Options) (*Lock, error) {
	conn, err := dial(ctx, vhost, fmt.Sprintf("the apply lock of vhost %q", vhost), opts, false)
	if err != nil {
		return nil, err
	}
	ch, err := conn.Channel()
	if err != nil {
		conn.Close()
		return nil, fmt.Errorf("AMQP channel for the apply lock of vhost %q: %w", vhost, err)
	}
	args := amqp.Table{"x-queue-type": "classic"}
	if opts.Name != "" {
		args[ArgHolder] = opts.Name
	}
	_, err = ch.QueueDeclare(QueueName, false, true, true, false, args)
	if err != nil {
		conn.Close()
		var ae *amqp.Error
		if errors.As(err, &ae) && ae.Code == amqp.ResourceLocked {
			return nil, fmt.Errorf("vhost %q: %w", vhost, ErrHeld)
		}
		if errors.As(err, &ae) && ae.Code == amqp.AccessRefused {
			return nil, fmt.Errorf("declare the apply lock queue %q in vhost %q: user %q lacks configure permission on queue %q in vhost %q: its configure regexp does not match %q (apply locks a vhost with an exclusive queue of that name)",
				QueueName, vhost, urlUser(opts.URL), QueueName, vhost, QueueName)
		}
		if errors.As(err, &ae) && ae.Code == amqp.PreconditionFailed && strings.Contains(ae.Reason, "queue limit") {
			return nil, fmt.Errorf("declare the apply lock queue %q in vhost %q: %w; the vhost holds as many queues as its max-queues allows, and apply locks a vhost with a queue of its own: raise max-queues by one at least (rabbitmqctl set_vhost_limits), with room for the queues the file and applications declare",
				QueueName, vhost, err)
		}
		return nil, fmt.Errorf("declare the apply lock queue %q in vhost %q: %w", QueueName, vhost, err)
	}
	return newLock(vhost, opts, conn), nil
}

// newLock is the lock of vhost held by conn.
func newLock(vhost string, opts Options, conn *amqp.Connection) *Lock {
	every := opts.ConfirmEvery
	if every == 0 {
		every = DefaultConfirmEvery
	}
	return &Lock{Vhost: vhost, host: urlHost(opts.URL), confirmEvery: every, conn: conn, held: true}
}

// dial opens an AMQP connection to vhost for purpose (what its error says
// the connection was for). It returns as soon as ctx ends, with an error
// that wraps ctx.Err(), even while the connection is still being opened
// (broker.DialAMQP stops the TCP connect and both handshakes on ctx).
// batch queues its writes (broker.AMQPDial.Batch).
func dial(ctx context.Context, vhost, purpose string, opts Options, batch bool) (*amqp.Connection, error) {
	conn, err := broker.DialAMQP(ctx, broker.AMQPDial{URL: opts.URL, Vhost: vhost, TLS: opts.TLS, Name: opts.Name, Batch: batch})
	if err != nil && ctx.Err() != nil {
		// Stopped by ctx: say what for, and why.
		return nil, broker.Interrupted(fmt.Sprintf("open an AMQP connection to %s for %s", urlHost(opts.URL), purpose), "before the broker answered", ctx.Err())
	}
	return conn, err
}

// Peek opens an AMQP connection to vhost for Inspect only: it takes no
// lock (plan uses it to read exact queue depths). Release closes it. It
// gives up as soon as ctx ends, also while the connection is being opened.
// Its writes are batched (broker.AMQPDial.Batch): the passive declares of
// the goroutines that read at once share write calls and packets.
func Peek(ctx context.Context, vhost string, opts Options) (*Lock, error) {
	conn, err := dial(ctx, vhost, fmt.Sprintf("reading the queues of vhost %q", vhost), opts, true)
	if err != nil {
		return nil, err
	}
	return &Lock{Vhost: vhost, conn: conn}, nil
}

// Release drops the lock: it deletes the lock queue, then closes the
// connection (which closes the channels of Inspect). Closing alone would
// delete the exclusive queue too, but RabbitMQ 4.3 does that after the
// connection is gone, asynchronously: an apply right after could still
// meet the lock. A lock whose delete fails still goes with its connection.
func (l *Lock) Release() error {
	if l == nil {
		return nil
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.conn == nil {
		return nil
	}
	if l.held && !l.conn.IsClosed() {
		if ch, err := l.conn.Channel(); err == nil {
			_, _ = ch.QueueDelete(QueueName, false, false, false)
			_ = ch.Close()
		}
	}
	err := l.conn.Close()
	l.conn, l.idle = nil, nil
	if errors.Is(err, amqp.ErrClosed) {
		return nil
	}
	return err
}

// Lost reports whether the lock's connection has closed under us.
func (l *Lock) Lost() bool {
	if l == nil {
		return true
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.conn == nil || l.conn.IsClosed()
}

// Check reports, with an error wrapping ErrLost, when the lock is no
// longer this apply's: its connection closed (the broker closes it when
// it has not heard from the process for 20 to 30 s: stopped, or its host
// hung; or its node went down; or someone closed it), or its queue is
// gone or another connection's (deleted by hand). It asks the broker when
// the last confirmation is older than Options.ConfirmEvery (wall clock or
// monotonic clock: a machine that slept stops the latter), with a passive
// declare of the lock queue on the lock's own connection; concurrent
// calls share that round trip. Once lost, a lock stays lost.
func (l *Lock) Check() error {
	if l == nil {
		return fmt.Errorf("no apply lock is held: %w", ErrLost)
	}
	l.checkMu.Lock()
	defer l.checkMu.Unlock()
	if l.lost != nil {
		return l.lost
	}
	now := time.Now()
	gap := since(l.checked, now)
	l.checked = now
	l.mu.Lock()
	conn := l.conn
	l.mu.Unlock()
	if conn == nil || conn.IsClosed() {
		return l.lose(gap, l.closed(gap))
	}
	if !l.confirmed.IsZero() && since(l.confirmed, now) < l.confirmEvery {
		return nil
	}
	if err := l.confirm(conn, gap); err != nil {
		return l.lose(gap, err.Error())
	}
	l.confirmed = now
	return nil
}

// since is how long ago t was at now, by the wall clock or the monotonic
// clock, whichever says longer (the monotonic clock stops while the
// machine sleeps); 0 for the zero time.
func since(t, now time.Time) time.Duration {
	if t.IsZero() {
		return 0
	}
	return max(now.Sub(t), now.Round(0).Sub(t.Round(0)))
}

// confirm asks the broker whether the lock queue is still this
// connection's: a passive declare on the lock's connection answers only
// for the exclusive queue of that connection.
func (l *Lock) confirm(conn *amqp.Connection, gap time.Duration) error {
	type answer struct{ err error }
	done := make(chan answer, 1)
	go func() {
		if l.checkCh == nil || l.checkCh.IsClosed() {
			ch, err := conn.Channel()
			if err != nil {
				done <- answer{fmt.Errorf("%s (%v)", l.closed(gap), err)}
				return
			}
			l.checkCh = ch
		}
		_, err := l.checkCh.QueueDeclarePassive(QueueName, false, true, true, false, nil)
		var ae *amqp.Error
		switch {
		case err == nil:
		case errors.As(err, &ae) && ae.Code == amqp.NotFound:
			err = fmt.Errorf("its queue %q was deleted (by hand, or with its connection)", QueueName)
		case errors.As(err, &ae) && ae.Code == amqp.ResourceLocked:
			err = fmt.Errorf("its queue %q belongs to another connection now", QueueName)
		case conn.IsClosed() || errors.Is(err, amqp.ErrClosed) || connBroken(err):
			err = errors.New(l.closed(gap))
		}
		done <- answer{err}
	}()
	select {
	case a := <-done:
		return a.err
	case <-time.After(confirmTimeout):
		return fmt.Errorf("the broker did not confirm it within %s (the node or the network hangs)", confirmTimeout)
	}
}

// connBroken reports whether err is the lock connection's own I/O
// failing (the broker reset or closed the socket) before the client's
// reader has marked the connection closed: the passive declare then fails
// writing to it ("write: connection reset by peer", seen after the
// connection was closed through the management API), which is the
// connection closed all the same.
func connBroken(err error) bool {
	var ne *net.OpError
	return errors.As(err, &ne) || errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE)
}

// closed says that the lock's connection closed, and why it may have:
// after a gap of pausedAfter or more since the last Check, lose says why.
func (l *Lock) closed(gap time.Duration) string {
	host := l.host
	if host == "" {
		host = "the broker"
	}
	if gap >= pausedAfter {
		return fmt.Sprintf("its AMQP connection to %s closed", host)
	}
	return fmt.Sprintf("its AMQP connection to %s closed: that node may be down or restarting, or the connection was closed by hand", host)
}

// lose records why the lock was lost: what Check found, and, when no
// Check ran for long before (gap), that the apply was silent that long,
// which is how a stopped process loses its lock.
func (l *Lock) lose(gap time.Duration, why string) error {
	msg := fmt.Sprintf("the apply lock of vhost %q was lost: %s", l.Vhost, why)
	if gap >= pausedAfter {
		msg += fmt.Sprintf(" while this apply made no request for %s (was it stopped, with Ctrl-Z or SIGSTOP, or did its host hang? the broker closes a connection it has not heard from for 20 to 30 s)", gap.Round(time.Second))
	}
	l.lost = &lostError{msg: msg}
	return l.lost
}

// lostError is Check's error once the lock is lost; it wraps ErrLost.
type lostError struct{ msg string }

func (e *lostError) Error() string { return e.msg }
func (e *lostError) Unwrap() error { return ErrLost }

// channel returns an open channel for Inspect alone: an idle one, or a
// new one on the lock's connection.
func (l *Lock) channel() (*amqp.Channel, error) {
	l.mu.Lock()
	conn := l.conn
	if conn == nil || conn.IsClosed() {
		l.mu.Unlock()
		return nil, fmt.Errorf("the apply lock's connection to vhost %q is closed", l.Vhost)
	}
	for len(l.idle) > 0 {
		ch := l.idle[len(l.idle)-1]
		l.idle = l.idle[:len(l.idle)-1]
		if !ch.IsClosed() {
			l.mu.Unlock()
			return ch, nil
		}
	}
	l.mu.Unlock()
	// Opening a channel is a round trip: not under the mutex, so that
	// concurrent Inspects open theirs at once.
	ch, err := conn.Channel()
	if err != nil {
		return nil, fmt.Errorf("AMQP channel in vhost %q: %w", l.Vhost, err)
	}
	return ch, nil
}

// idleChannel keeps ch, which just answered, for the next Inspect.
func (l *Lock) idleChannel(ch *amqp.Channel) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.conn == nil {
		_ = ch.Close()
		return
	}
	l.idle = append(l.idle, ch)
}

// urlHost is the host and port of an AMQP URL (never its password), for
// errors.
func urlHost(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" {
		return "the broker"
	}
	return u.Host
}

// urlUser is the user name of an AMQP URL.
func urlUser(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || u.User == nil {
		return ""
	}
	return u.User.Username()
}

// QueueState is what AMQP's passive declare tells about a queue, straight
// from the queue process (no statistics delay).
type QueueState struct {
	Ready     int64 // messages ready for delivery
	Consumers int64
	Exists    bool
	// AtLeast: Ready is a lower bound (a stream read found a message but
	// cannot count them).
	AtLeast bool
}

// Inspect reads queue's ready-message and consumer counts with a passive
// declare on the lock's connection (the lock's vhost). Concurrent calls
// run at once, each on its own channel.
func (l *Lock) Inspect(queue string) (QueueState, error) {
	st, _, err := l.inspect(queue)
	return st, err
}

// QuorumStatTimeout is how long a quorum queue's passive declare waits for
// its leader's count: past it the broker answers 0 messages and 0
// consumers, whatever the queue holds (rabbit_quorum_queue:stat/1, a
// timeout of 250 ms whose {timeout, _}, like any error, becomes {ok, 0, 0}
// at v3.10.8, v4.0.5 and v4.3.5).
const QuorumStatTimeout = 250 * time.Millisecond

// quorumTries is how many passive declares InspectQuorum makes before it
// gives up on a leader that does not answer in time.
const quorumTries = 3

// ErrUncounted is InspectQuorum's error for a quorum queue whose leader
// did not answer its count in time: its "0 messages" is the broker's
// stand-in, not a count.
var ErrUncounted = errors.New("not counted")

// InspectQuorum is Inspect for a quorum queue, whose passive declare
// answers 0 messages and 0 consumers when its leader does not answer
// within QuorumStatTimeout (a leader busy, suspended or stalled on its
// disk): such an answer is no count, and read as one it let a plan show
// nothing at stake and an apply delete a queue that held messages. An
// answer of 0 and 0 that took the broker QuorumStatTimeout or more (the
// declare's time less a round trip on the channel, with some slack for
// the network's jitter) is asked again, a few times; when every answer was
// so, the error wraps ErrUncounted. An answer with a message or a consumer
// is the leader's own.
func (l *Lock) InspectQuorum(queue string) (QueueState, error) {
	for try := 1; ; try++ {
		st, took, err := l.inspect(queue)
		if err != nil || !st.Exists || st.Ready > 0 || st.Consumers > 0 || took < QuorumStatTimeout-quorumSlack {
			return st, err
		}
		rtt, err := l.roundTrip()
		if err != nil {
			return QueueState{}, err
		}
		if took-rtt < QuorumStatTimeout-quorumSlack {
			return st, nil // the network's time, not the leader's
		}
		if try == quorumTries {
			return QueueState{}, fmt.Errorf("the leader of quorum queue %q in vhost %q did not answer within %v, %d times (a passive declare took %v): RabbitMQ then answers 0 messages whatever the queue holds, so its messages are %w (check its leader: rabbitmq-queues quorum_status --vhost %s %s; run again once it answers)",
				queue, l.Vhost, QuorumStatTimeout, quorumTries, took.Round(time.Millisecond), ErrUncounted, shell.Quote(l.Vhost), shell.Quote(queue))
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// quorumSlack is what InspectQuorum allows the network's jitter between
// the round trip it measures and the declare's.
const quorumSlack = 100 * time.Millisecond

// roundTrip measures a round trip to the broker on a channel of the
// lock's connection (basic.qos, which the channel answers itself).
func (l *Lock) roundTrip() (time.Duration, error) {
	ch, err := l.channel()
	if err != nil {
		return 0, err
	}
	start := time.Now()
	if err := ch.Qos(0, 0, false); err != nil {
		_ = ch.Close()
		return 0, fmt.Errorf("AMQP round trip in vhost %q: %w", l.Vhost, err)
	}
	took := time.Since(start)
	l.idleChannel(ch)
	return took, nil
}

// inspect is Inspect, with the time the passive declare took.
func (l *Lock) inspect(queue string) (QueueState, time.Duration, error) {
	ch, err := l.channel()
	if err != nil {
		return QueueState{}, 0, err
	}
	start := time.Now()
	q, err := ch.QueueDeclarePassive(queue, false, false, false, false, nil)
	took := time.Since(start)
	if err != nil {
		// A failed passive declare closes the channel (it is not kept);
		// the connection lives.
		_ = ch.Close()
		var ae *amqp.Error
		if errors.As(err, &ae) && ae.Code == amqp.NotFound && outOfReach(ae.Reason) {
			// The queue exists but its node is down: its messages cannot
			// be counted, which is not the same as none.
			return QueueState{}, took, fmt.Errorf("queue %q in vhost %q exists but is %w, so its messages cannot be counted (broker: %s)", queue, l.Vhost, ErrOutOfReach, ae.Reason)
		}
		if errors.As(err, &ae) && ae.Code == amqp.NotFound {
			return QueueState{}, took, nil
		}
		if errors.As(err, &ae) && ae.Code == amqp.ResourceLocked {
			// Another connection's exclusive queue: in use by definition.
			return QueueState{Exists: true, Consumers: 1}, took, nil
		}
		return QueueState{}, took, fmt.Errorf("inspect queue %q in vhost %q: %w", queue, l.Vhost, err)
	}
	l.idleChannel(ch)
	return QueueState{Ready: int64(q.Messages), Consumers: int64(q.Consumers), Exists: true}, took, nil
}

// ErrOutOfReach is Inspect's error for a queue that exists on a node that
// is down: the error is the queue's own, and the connection lives.
var ErrOutOfReach = errors.New("out of reach")

// outOfReach reports whether a passive declare's NOT_FOUND says the queue
// exists but cannot answer, which is every NOT_FOUND but "no queue '…' in
// vhost '…'" (rabbit_amqqueue's not_found; the same text on 3.10, 4.0 and
// 4.3): "home node … of durable queue … is down or inaccessible" (3.10, a
// node down), "queue … process is stopped by supervisor" (4.0, the same),
// "queue … has crashed and failed to restart", "failed to perform
// operation on queue … due to timeout" (its process did not come back
// within 60 s, as while its node restarts) and "…: its leader … may be
// stopping or being demoted". Read as a queue that does not exist, those
// counted no message at stake in a queue that holds some.
func outOfReach(reason string) bool {
	return !strings.HasPrefix(strings.TrimPrefix(reason, "NOT_FOUND - "), "no queue '")
}

// StreamWait is how long InspectStream waits for a stream's first message.
const StreamWait = 2 * time.Second

// InspectStream is Inspect for a stream. A passive declare reports no
// messages for a stream whatever it holds, so InspectStream also reads it
// from its first offset (reading a stream removes nothing) and reports at
// least one ready message when a delivery arrives within wait.
func (l *Lock) InspectStream(queue string, wait time.Duration) (QueueState, error) {
	st, err := l.Inspect(queue)
	if err != nil || !st.Exists {
		return st, err
	}
	// A channel of its own, closed after: the consumer goes with it.
	l.mu.Lock()
	conn := l.conn
	l.mu.Unlock()
	if conn == nil {
		return QueueState{}, fmt.Errorf("the apply lock's connection to vhost %q is closed", l.Vhost)
	}
	ch, err := conn.Channel()
	if err != nil {
		return QueueState{}, fmt.Errorf("AMQP channel in vhost %q: %w", l.Vhost, err)
	}
	defer ch.Close()
	if err := ch.Qos(1, 0, false); err != nil {
		return QueueState{}, fmt.Errorf("read stream %q in vhost %q: %w", queue, l.Vhost, err)
	}
	deliveries, err := ch.Consume(queue, "", false, false, false, false, amqp.Table{"x-stream-offset": "first"})
	if err != nil {
		return QueueState{}, fmt.Errorf("read stream %q in vhost %q: %w", queue, l.Vhost, err)
	}
	timer := time.NewTimer(wait)
	defer timer.Stop()
	select {
	case _, ok := <-deliveries:
		if ok && st.Ready == 0 {
			st.Ready, st.AtLeast = 1, true
		}
	case <-timer.C:
	}
	return st, nil
}
