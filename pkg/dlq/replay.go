package dlq

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"
)

// Actions taken on a message by Replay.
const (
	ActionReplayed    = "replayed"     // republished, confirmed, removed from the DLQ
	ActionWouldReplay = "would-replay" // dry run: would be republished
	ActionSkipped     = "skipped"      // left in the DLQ: no destination known
	ActionFailed      = "failed"       // left in the DLQ: the republish did not succeed
)

// Kinds of failure.
const (
	FailLoop        = "would loop back into the DLQ"
	FailNoExchange  = "exchange not found"
	FailPermission  = "no write permission"
	FailUnroutable  = "unroutable"
	FailNacked      = "nacked"
	FailRefused     = "refused"
	FailInterrupted = "interrupted"
	// FailOriginGone: the queue the message died in was deleted; its
	// original route would deliver it only elsewhere.
	FailOriginGone = "origin queue deleted"
	// FailOriginUnreached: the original route no longer reaches the queue
	// the message died in (a binding removed).
	FailOriginUnreached = "origin queue not reached"
	// FailFull: a queue the route reaches is full and refuses publishes
	// (overflow reject-publish); checked before publishing, since a
	// refused publish still leaves a copy in every other queue reached.
	FailFull = "destination full"
	// FailUnavailable: a queue the route reaches cannot take messages now
	// (ReplayOptions.Reach: its node down, no majority, deleted since the
	// bindings were read); checked before publishing, for the same reason,
	// and again once a publish bound for it failed or missed it.
	FailUnavailable = "destination unavailable"
	// FailHeldBack: an earlier publish of the replay bound for the same
	// destination was nacked, for a cause not found: the messages after
	// it bound there are not published, since each would leave one more
	// copy in the route's other queues.
	FailHeldBack = "held back after a nack"
)

// DefaultConfirmTimeout is how long Replay waits for a publisher confirm.
const DefaultConfirmTimeout = 30 * time.Second

// ReplayOptions configure Replay.
type ReplayOptions struct {
	// Queue is the dead-letter queue.
	Queue string
	// Limit caps how many messages are taken from the queue; 0 means the
	// messages it holds when the replay starts (never more: a replayed
	// message that dies again is not replayed twice in one run).
	Limit int
	// DryRun reads the messages and reports where each would go; nothing
	// is published and every message stays in the queue.
	DryRun bool
	// Override replaces the destination taken from x-death.
	Override Override
	// FromQueue, when set, replays only the messages that first died in
	// this queue (their x-death origin); the others are skipped
	// (SkipOtherOrigin) and stay in the DLQ, in their places.
	FromQueue string
	// RetryHeaders are removed from each republished message.
	RetryHeaders []string
	// User is the AMQP user publishing: a message's user-id other than
	// this one is dropped (the broker would refuse the publish).
	User string
	// DropExpiration republishes the messages without an expiration
	// (Republish restores the one they were published with).
	DropExpiration bool
	// ConfirmTimeout bounds the wait for each confirm (default
	// DefaultConfirmTimeout); when it passes, the replay stops.
	ConfirmTimeout time.Duration
	// Router, when set, is asked where each destination leads: a
	// destination that reaches the DLQ itself is refused, and the dry run
	// reports the queues reached.
	Router Router
	// Progress, when set, is told each outcome as it happens.
	Progress func(Outcome)
	// MayWrite, when set, is asked once per destination exchange ("" the
	// default exchange) whether the user may publish there: lacks says
	// what permission it lacks and the fix, "" when it may (or when that
	// cannot be told). A message whose destination it may not write to
	// fails (FailPermission) before it is published, and stays in the
	// DLQ.
	MayWrite func(exchange string) (lacks string)
	// AllowDataLoss replays messages that push older ones out of a queue
	// that loses them (Overflow.Lost), which is refused otherwise
	// (DataLossError).
	AllowDataLoss bool
	// ReadyBytes, when set, reads the bytes of the ready messages of
	// queue, which holds ready of them by an exact read: for a
	// max-length-bytes, which only the management API's statistics
	// count. Without it a byte limit is not checked.
	ReadyBytes func(queue string, ready int) (int64, error)

	// Reach, when set, says whether a queue can take a publish now: nil
	// when it can, else why not (Unavailable). It is asked once per queue
	// and run, before the first message whose route reaches the queue is
	// published: a classic queue whose node is down nacks the publish
	// while the other queues of the route keep a copy (4.3.6), and a
	// quorum queue without a majority leaves it unconfirmed until the
	// confirm timeout, after which the message is in the DLQ and may
	// still reach the queue once the majority is back.
	Reach func(queue string) (*Unavailable, error)

	// afterConfirm is called once a republish is confirmed, before the
	// dead letter is acked: tests break the connection there.
	afterConfirm func(index int)
}

// Outcome is what happened to one message.
type Outcome struct {
	Index     int    `json:"index"`
	MessageID string `json:"message_id,omitempty"`
	Action    string `json:"action"`
	// Target is set for replayed, would-replay and failed messages.
	Target *Target `json:"target,omitempty"`
	// Queues are the queues the destination reaches per the Router; they
	// are known only when Routed is true.
	Queues []string `json:"queues,omitempty"`
	Routed bool     `json:"queues_known,omitempty"`
	// Kind classifies a skip (Skip*) or failure (Fail*).
	Kind string `json:"kind,omitempty"`
	// Reason explains a skip or failure.
	Reason string `json:"reason,omitempty"`
	// Notes are changes made to the message beyond the documented ones.
	Notes []string `json:"notes,omitempty"`
	// Copies are the queues that took a copy of a message left in the
	// DLQ (or may have: a nacked publish), its publish having gone out
	// while a queue of its route refused or missed it: a replay run again
	// as it is delivers them another.
	Copies []string `json:"copies,omitempty"`
}

// Report is the result of a replay.
type Report struct {
	Queue string
	// InQueue is the number of ready messages when the replay started.
	InQueue int
	// Limit is how many messages the replay set out to take.
	Limit    int
	DryRun   bool
	Outcomes []Outcome
	// Replayed, Skipped and Failed count outcomes (Replayed counts
	// would-replay in a dry run).
	Replayed, Skipped, Failed int
	// Interrupted is set when the replay stopped early (broken connection,
	// confirm timeout, cancelled): every message not replayed is still in
	// the DLQ, and the one in flight, if any, may be in both.
	Interrupted error
	// Delayed and DelayedRetry are as PeekResult's: messages held back for
	// a delayed retry, set by the caller.
	Delayed      int
	DelayedRetry string
	// Uncounted: the queue's count (its passive declare) was 0, yet a
	// read found a message: the replay took what the queue held, up to
	// the limit asked, as it found it (PeekResult.Uncounted).
	Uncounted bool
	// Overflows are the queues the replay's messages push older messages
	// out of (a note each); Refusal, in a dry run, the refusal the replay
	// would make without AllowDataLoss.
	Overflows []Overflow
	Refusal   *DataLossError
}

func (r *Report) add(o Outcome, progress func(Outcome)) {
	switch o.Action {
	case ActionReplayed, ActionWouldReplay:
		r.Replayed++
	case ActionSkipped:
		r.Skipped++
	case ActionFailed:
		r.Failed++
	}
	r.Outcomes = append(r.Outcomes, o)
	if progress != nil {
		progress(o)
	}
}

// Replay moves dead letters from opts.Queue back to where they came from,
// one at a time, on one channel of conn:
//
//  1. basic.get takes the next message, unacknowledged;
//  2. it is published (mandatory) to its destination, on the same channel
//     in confirm mode;
//  3. only when the broker confirms the publish — and returned nothing —
//     is the dead letter acked, removing it from the DLQ.
//
// When a queue of the vhost pushes out its oldest messages past a length
// limit (Router.MayPushOut), every message is taken (step 1) and judged
// before the first is published: what they add together to each queue of
// their routes is weighed against what it holds now, and a replay that
// would push out messages that are then lost is refused, nothing
// published (DataLossError), unless AllowDataLoss. The messages taken are
// then held in memory until published.
//
// A message that fails (returned as unroutable, nacked, refused before
// publishing) or is skipped stays unacked until the end, then goes back to
// the DLQ in its place. Since each message is acked before the next is
// published, on the same channel (the broker handles a channel's frames in
// order), a connection lost at any point leaves every message in the DLQ or
// at its destination, and at most one — the one whose confirm arrived but
// whose ack did not — in both.
//
// ctx is checked between messages: cancelling finishes the message in
// flight (its confirm, then its ack) and stops, leaving no duplicate.
//
// The error is for a replay that could not start (no such queue, no
// channel, a stream: StreamError) or was refused (DataLossError); once it
// runs, problems are in the report (Interrupted).
func Replay(ctx context.Context, conn *amqp.Connection, opts ReplayOptions) (*Report, error) {
	if opts.ConfirmTimeout <= 0 {
		opts.ConfirmTimeout = DefaultConfirmTimeout
	}
	ch, err := conn.Channel()
	if err != nil {
		return nil, fmt.Errorf("open an AMQP channel: %w", err)
	}
	defer ch.Close()
	q, err := ch.QueueDeclarePassive(opts.Queue, false, false, false, false, nil)
	if err != nil {
		return nil, queueError(opts.Queue, err)
	}
	rep := &Report{Queue: opts.Queue, InQueue: q.Messages, Limit: q.Messages, DryRun: opts.DryRun}
	r := &replayer{conn: conn, ch: ch, opts: opts, exchanges: map[string]error{}, reached: map[string]*Unavailable{}, into: map[[2]string]bool{}, nacked: map[string]int{}}
	defer func() {
		if r.side != nil {
			r.side.Close()
		}
	}()
	// --to-exchange is every message's destination: one that does not
	// exist (or that the user may not publish to) is refused before a
	// message is read, not message by message.
	if x := opts.Override.Exchange; x != nil && *x != "" {
		if err := r.exchangeExists(*x); err != nil {
			var np noPermission
			switch {
			case errors.As(err, &np):
				return nil, fmt.Errorf("replay of %q refused, nothing read or published: --to-exchange %q: %s", opts.Queue, *x, np.lacks)
			case errors.Is(err, errNoExchange):
				return nil, fmt.Errorf("replay of %q refused, nothing read or published: exchange %q, given by --to-exchange, does not exist; declare it, or name another (--to-exchange \"\" is the default exchange)", opts.Queue, *x)
			default:
				return nil, err
			}
		}
	}
	var probe *amqp.Delivery
	if opts.Limit > 0 && opts.Limit < rep.Limit {
		rep.Limit = opts.Limit
	}
	if rep.Limit == 0 {
		// A count of 0 is checked with a basic.get, the queue's own
		// answer (Peek): a quorum queue whose leader does not answer in
		// time is counted 0 whatever it holds. The message read is the
		// replay's first (replayer.first): returned with a nack, it
		// would count as a delivery (before 4.3) or wait out a delayed
		// retry (4.3's returned and all).
		d, ok, err := ch.Get(opts.Queue, false)
		if err != nil {
			if se := streamGetError(opts.Queue, err); se != nil {
				return nil, se
			}
			return nil, uncountedError(opts.Queue, err)
		}
		if !ok {
			return rep, nil
		}
		limit, ok := uncountedLimit(opts)
		if !ok {
			// The message read goes back, as a peek returns its
			// messages.
			if err := ch.Nack(d.DeliveryTag, false, true); err != nil {
				return nil, fmt.Errorf("return the message read from %q: %w (the broker returns it when the connection closes)", opts.Queue, err)
			}
			return nil, uncountedReplayError(opts.Queue)
		}
		probe = &d
		rep.Uncounted, rep.Limit = true, limit
	}
	r.first = probe
	if !opts.DryRun {
		if err := ch.Confirm(false); err != nil {
			return nil, fmt.Errorf("put the channel in confirm mode: %w", err)
		}
		r.returns = ch.NotifyReturn(make(chan amqp.Return, 4))
	}
	r.closed = ch.NotifyClose(make(chan *amqp.Error, 1))
	if err := r.run(ctx, rep); err != nil {
		return nil, err
	}
	return rep, nil
}

// uncountedLimit is how many messages a replay takes from a queue whose
// count came back 0 while a read found a message in it: --limit's, or,
// in a dry run (which returns every message it read at its end, so takes
// each once), until the queue says it is empty. Without --limit a replay
// is refused (ok false): it takes at most what the queue holds when it
// starts, so that a message that dies again is not replayed twice in one
// run, and that is not known.
func uncountedLimit(opts ReplayOptions) (limit int, ok bool) {
	switch {
	case opts.Limit > 0:
		return opts.Limit, true
	case opts.DryRun:
		return math.MaxInt, true
	}
	return 0, false
}

// run takes the messages of rep in batches (window), judges each batch,
// then sends it. A queue that pushes out its oldest messages past a
// length limit (Router.DropsHead) makes the whole run one batch, judged
// before the first publish (checkOverflows). Every message taken and
// not replayed is returned to the DLQ, in its place, at the end. The
// error is a replay refused before anything was published.
func (r *replayer) run(ctx context.Context, rep *Report) error {
	window := 1
	if r.opts.Router != nil && r.opts.Router.MayPushOut() {
		window = rep.Limit
	}
	var held uint64 // highest delivery tag left unacked on purpose
	for taken := 0; taken < rep.Limit; {
		batch, err := r.take(ctx, taken, min(window, rep.Limit-taken))
		var se *StreamError
		if errors.As(err, &se) {
			return se // nothing was taken: the replay could not start
		}
		if err != nil || len(batch) == 0 {
			held = max(held, r.interrupted(rep, batch, err))
			break
		}
		if err := r.checkOverflows(rep, batch); err != nil {
			r.giveBack(rep, batch[len(batch)-1].m.tag)
			return err
		}
		held = max(held, r.send(ctx, rep, batch))
		if rep.Interrupted != nil || len(batch) < window {
			break
		}
		taken += len(batch)
	}
	r.giveBack(rep, held)
	return nil
}

// pending is a message taken and judged (decide): its outcome so far,
// and when send, what is published.
type pending struct {
	m    Message
	pub  amqp.Publishing
	o    Outcome
	send bool
}

// errDrained ends a batch when the DLQ holds fewer messages than counted
// (another consumer took some).
var errDrained = errors.New("drained")

// take takes up to n more messages (basic.get, unacked), numbered from
// first+1, judging each. The error stops the replay: a *StreamError when
// nothing could be taken from a stream, errDrained when the DLQ ran dry,
// else what interrupted it, with the message it befell last in batch.
func (r *replayer) take(ctx context.Context, first, n int) ([]pending, error) {
	var batch []pending
	for i := first + 1; i <= first+n; i++ {
		if err := ctx.Err(); err != nil {
			return batch, fmt.Errorf("cancelled: %w", err)
		}
		d, ok, err := r.get()
		if err != nil {
			if se := streamGetError(r.opts.Queue, err); se != nil && i == 1 {
				return nil, se
			}
			return batch, fmt.Errorf("take the next message from %q: %w", r.opts.Queue, err)
		}
		if !ok {
			if len(batch) == 0 {
				return nil, errDrained
			}
			return batch, nil
		}
		p := pending{m: fromDelivery(i, d)}
		p.o, p.pub, p.send, err = r.decide(&p.m)
		batch = append(batch, p)
		if err != nil {
			return batch, &decideError{err}
		}
	}
	return batch, nil
}

// get takes the next message: first, read before the replay started (an
// uncounted queue's), then basic.get's.
func (r *replayer) get() (amqp.Delivery, bool, error) {
	if d := r.first; d != nil {
		r.first = nil
		return *d, true, nil
	}
	return r.ch.Get(r.opts.Queue, false)
}

// decideError is an error judging the last message of a batch.
type decideError struct{ error }

func (e *decideError) Unwrap() error { return e.error }

// interrupted records in rep why taking batch stopped (err; nothing when
// the DLQ ran dry) and returns the delivery tag up to which its messages
// go back. Nothing of batch was published; the message an error judging
// it befell is reported.
func (r *replayer) interrupted(rep *Report, batch []pending, err error) uint64 {
	if err == nil || errors.Is(err, errDrained) {
		return 0
	}
	rep.Interrupted = err
	var de *decideError
	if errors.As(err, &de) {
		o := batch[len(batch)-1].o
		o.Action, o.Kind, o.Reason = ActionFailed, FailInterrupted, de.error.Error()
		rep.Interrupted = de.error
		rep.add(o, r.opts.Progress)
	}
	if len(batch) == 0 {
		return 0
	}
	return batch[len(batch)-1].m.tag
}

// send publishes (or, in a dry run, judges) the messages of batch in
// order, reporting each, and returns the highest delivery tag left
// unacked on purpose. It stops at the first error (rep.Interrupted).
func (r *replayer) send(ctx context.Context, rep *Report, batch []pending) uint64 {
	var held uint64
	last := batch[len(batch)-1].m.tag
	for i := range batch {
		p := &batch[i]
		if err := ctx.Err(); err != nil {
			rep.Interrupted = fmt.Errorf("cancelled: %w", err)
			return last
		}
		o, err := r.finish(p, len(batch) > 1)
		if err != nil {
			rep.Interrupted = err
			o.Action, o.Kind, o.Reason = ActionFailed, FailInterrupted, err.Error()
			rep.add(o, r.opts.Progress)
			if i < len(batch)-1 {
				return last
			}
			return held
		}
		if o.Action != ActionReplayed {
			held = p.m.tag
		}
		rep.add(o, r.opts.Progress)
	}
	return held
}

// giveBack returns every unacked delivery up to held, each one left on
// purpose, to the DLQ in its place. (Closing the channel would return
// them too.)
func (r *replayer) giveBack(rep *Report, held uint64) {
	if held == 0 || r.ch.IsClosed() {
		return
	}
	if err := r.ch.Nack(held, true, true); err != nil && rep.Interrupted == nil {
		rep.Interrupted = fmt.Errorf("return the messages left to %q: %w (the broker returns them when the connection closes)", r.opts.Queue, err)
	}
}

// Unavailable is a queue that cannot take a publish now
// (ReplayOptions.Reach).
type Unavailable struct {
	Queue string
	// Why it cannot, after the queue's name: "lives on node N, which is
	// down", "is a quorum queue with 1 of its 3 members online (down: …)".
	Why string
	// Fix is what brings it back: "start N again".
	Fix string
	// Unconfirmed: the broker would leave the publish unconfirmed (no
	// majority) rather than nack it (a classic queue whose node is down,
	// 4.x). Missed: the publish would pass the queue by and reach the
	// route's other queues alone, confirmed (a queue deleted; a classic
	// queue whose node is down, 3.10, whose bindings route nothing then).
	Unconfirmed, Missed bool
}

type replayer struct {
	conn *amqp.Connection
	ch   *amqp.Channel
	// first is the message read before the replay started (an uncounted
	// queue's, Report.Uncounted), taken first (get).
	first     *amqp.Delivery
	side      *amqp.Channel // for passive exchange checks, which close a channel on failure
	opts      ReplayOptions
	returns   <-chan amqp.Return
	closed    <-chan *amqp.Error
	exchanges map[string]error        // checked exchanges: nil = exists
	reached   map[string]*Unavailable // queues asked of Reach: nil = can take a publish
	// into are the (exchange, routing key) pairs dead letters of this run
	// arrived by: dead-letter routes into the DLQ.
	into map[[2]string]bool
	// nacked are the destinations (destKey) a publish of this run was
	// nacked at, for a cause not found, with that message's index: the
	// messages after it bound there are held back (FailHeldBack).
	nacked map[string]int
}

// destKey names the destination of t: the exchange, routing key and CC
// keys its publish goes by.
func destKey(t Target) string {
	return strings.Join(append([]string{t.Exchange, t.RoutingKey}, t.CC...), "\x00")
}

// decide judges message m: its outcome, and whether it is to be sent
// (then pub is what is published). An error means the replay cannot go
// on.
func (r *replayer) decide(m *Message) (o Outcome, pub amqp.Publishing, send bool, err error) {
	o = Outcome{Index: m.Index, MessageID: m.Properties.MessageID}
	if len(m.Deaths.Entries) > 0 {
		r.into[[2]string{m.Exchange, m.RoutingKey}] = true
	}
	t, skip := Choose(m, r.opts.Override)
	if skip != nil {
		o.Action, o.Kind, o.Reason = ActionSkipped, skip.Kind, skip.Detail
		return o, pub, false, nil
	}
	if r.opts.FromQueue != "" && t.OriginQueue != r.opts.FromQueue {
		o.Action, o.Kind = ActionSkipped, SkipOtherOrigin
		o.Reason = fmt.Sprintf("it died in %q, not in %q (--from-queue)", t.OriginQueue, r.opts.FromQueue)
		if t.OriginQueue == "" {
			o.Reason = fmt.Sprintf("where it died is unknown, so not in %q (--from-queue)", r.opts.FromQueue)
		}
		return o, pub, false, nil
	}
	o.Target = &t
	pub, notes := Republish(m, t, RepublishOptions{RetryHeaders: r.opts.RetryHeaders, User: r.opts.User, DropExpiration: r.opts.DropExpiration})
	o.Notes = notes
	var refused string
	if r.opts.Router != nil {
		rt := r.opts.Router.Route(t, pub.Headers)
		o.Queues, o.Routed, refused = rt.Queues, rt.Known, rt.Refused
	}
	if LoopsBack(t, m, r.opts.Queue) || r.into[[2]string{t.Exchange, t.RoutingKey}] || (o.Routed && slices.Contains(o.Queues, r.opts.Queue)) {
		o.Action, o.Kind = ActionFailed, FailLoop
		o.Reason = fmt.Sprintf("exchange %q with routing key %q leads back into %q itself; pass --to-exchange/--routing-key to send it elsewhere", t.Exchange, t.RoutingKey, r.opts.Queue)
		return o, pub, false, nil
	}
	if refused != "" {
		o.Action, o.Kind, o.Reason = ActionFailed, FailRefused, refused
		return o, pub, false, nil
	}
	if err := r.exchangeExists(t.Exchange); err != nil {
		var np noPermission
		if errors.As(err, &np) {
			o.Action, o.Kind, o.Reason = ActionFailed, FailPermission, np.lacks
			return o, pub, false, nil
		}
		if !errors.Is(err, errNoExchange) {
			return o, pub, false, err
		}
		o.Action, o.Kind = ActionFailed, FailNoExchange
		o.Reason = fmt.Sprintf("exchange %q does not exist; declare it, or pass --to-exchange", t.Exchange)
		if r.opts.Override.Exchange != nil {
			o.Reason = fmt.Sprintf("exchange %q, given by --to-exchange, does not exist; declare it, or name another", t.Exchange)
		}
		return o, pub, false, nil
	}
	if refused, err := r.refuseUnavailable(&o); refused || err != nil {
		return o, pub, false, err
	}
	if r.heldBack(&o) {
		return o, pub, false, nil
	}
	if kind, reason := r.originMissed(t, o); kind != "" {
		o.Action, o.Kind, o.Reason = ActionFailed, kind, reason
		return o, pub, false, nil
	}
	if refusedFull, err := r.refuseFull(&o); refusedFull || err != nil {
		return o, pub, false, err
	}
	if r.opts.DryRun && o.Routed && len(o.Queues) == 0 {
		o.Action, o.Kind = ActionFailed, FailUnroutable
		o.Reason = fmt.Sprintf("no queue is bound to exchange %q for routing key %q (per the broker's bindings now)", t.Exchange, t.RoutingKey)
		return o, pub, false, nil
	}
	return o, pub, true, nil
}

// downNow asks Reach again, past what it said before, about the queues
// of o's route, after a publish went unconfirmed: "" when none is out of
// reach, else which and what brings it back.
func (r *replayer) downNow(o Outcome) string {
	var desc, fixes []string
	for _, u := range r.recheck(o) {
		desc = append(desc, fmt.Sprintf("queue %q %s", u.Queue, u.Why))
		if !slices.Contains(fixes, u.Fix) {
			fixes = append(fixes, u.Fix)
		}
	}
	if len(desc) == 0 {
		return ""
	}
	return fmt.Sprintf(" (since the replay began, %s: %s, and run the replay again)", strings.Join(desc, ", and "), strings.Join(fixes, ", and "))
}

// refuseUnavailable fails o when a queue of its route cannot take a
// publish now (ReplayOptions.Reach, asked once per queue and run), and so
// the queue it died in, when its route no longer reaches it: RabbitMQ
// 3.10 leaves the bindings of a classic queue whose node is down out of
// its listings (and its routing), which is no binding removed.
func (r *replayer) refuseUnavailable(o *Outcome) (bool, error) {
	if !o.Routed {
		return false, nil
	}
	var down []*Unavailable
	for _, q := range r.routeQueues(*o) {
		u, asked := r.reached[q]
		if !asked && r.opts.Reach != nil {
			var err error
			if u, err = r.opts.Reach(q); err != nil {
				return false, err
			}
			r.reached[q] = u
		}
		if u != nil {
			down = append(down, u)
		}
	}
	if len(down) == 0 {
		return false, nil
	}
	o.Action, o.Kind, o.Reason = ActionFailed, FailUnavailable, unavailableReason(*o.Target, *o, down)
	return true, nil
}

// routeQueues are the queues of o's route, and the queue it died in when
// its route no longer reaches it (see refuseUnavailable).
func (r *replayer) routeQueues(o Outcome) []string {
	queues := o.Queues
	if t := o.Target; t != nil && t.From == FromDeath && t.OriginQueue != "" && !slices.Contains(queues, t.OriginQueue) && r.opts.Router.HasQueue(t.OriginQueue) {
		queues = append(slices.Clone(queues), t.OriginQueue)
	}
	return queues
}

// recheck asks Reach again, past what it said before, about the queues of
// o's route (routeQueues), after a publish bound for them failed or
// missed one: its answers replace the earlier ones, so that no message
// after it bound for a queue now out of reach is published
// (refuseUnavailable). It returns the queues out of reach.
func (r *replayer) recheck(o Outcome) []*Unavailable {
	if !o.Routed || r.opts.Reach == nil {
		return nil
	}
	var down []*Unavailable
	for _, q := range r.routeQueues(o) {
		u, err := r.opts.Reach(q)
		if err != nil {
			continue // what it said before stands
		}
		r.reached[q] = u
		if u != nil {
			down = append(down, u)
		}
	}
	return down
}

// heldBack fails o, not to be published, when a publish of this run bound
// for the same destination was nacked for a cause not found (nacked).
func (r *replayer) heldBack(o *Outcome) bool {
	first, ok := r.nacked[destKey(*o.Target)]
	if !ok {
		return false
	}
	t := o.Target
	o.Action, o.Kind = ActionFailed, FailHeldBack
	o.Reason = fmt.Sprintf("not published: the broker nacked message #%d, bound for the same exchange %q and routing key %q, earlier in this replay, and each publish there would leave one more copy in the queues of the route that took it; left in the DLQ: find the queue that refuses (see message #%d), make room in it or bring it back, and run the replay again",
		first, t.Exchange, t.RoutingKey, first)
	return true
}

// missedNow returns the queues of o's route (more than one: a publish that
// reaches none comes back unroutable) that do not exist now, after its
// publish was confirmed (passive declares on the side channel): deleted
// since the replay checked them, they missed it, or, on 3.10, a classic
// queue whose node went down (its bindings route nothing then).
func (r *replayer) missedNow(o Outcome) ([]string, error) {
	if !o.Routed || len(o.Queues) < 2 {
		return nil, nil
	}
	var gone []string
	for _, q := range o.Queues {
		ch, err := r.sideChannel()
		if err != nil {
			return nil, err
		}
		_, err = ch.QueueDeclarePassive(q, false, false, false, false, nil)
		var ae *amqp.Error
		if errors.As(err, &ae) && ae.Code == amqp.NotFound {
			gone = append(gone, q)
		}
	}
	return gone, nil
}

// outOfReach is what is known of the queues gone (missedNow) once Reach
// was asked again (down): Reach's answer, or that the queue is gone. Each
// is kept for the messages after it (refuseUnavailable).
func (r *replayer) outOfReach(gone []string, down []*Unavailable) []*Unavailable {
	for _, q := range gone {
		if slices.ContainsFunc(down, func(u *Unavailable) bool { return u.Queue == q }) {
			continue
		}
		u := &Unavailable{Queue: q, Why: "no longer exists (deleted during the replay)",
			Fix: fmt.Sprintf("declare %q again, with its bindings", q), Missed: true}
		r.reached[q] = u
		down = append(down, u)
	}
	return down
}

// sentReason explains a message whose publish went out, left in the DLQ,
// or replayed (replayed: it reached the queue it died in): answer is what
// the broker did ("the broker nacked the publish"); down, the queues of
// its route found out of reach since the replay checked them; copies,
// the others, which took a copy.
func sentReason(t Target, down []*Unavailable, answer string, copies []string, replayed bool) string {
	var b strings.Builder
	desc := make([]string, len(down))
	var fixes []string
	for i, u := range down {
		desc[i] = fmt.Sprintf("queue %q %s", u.Queue, u.Why)
		if !slices.Contains(fixes, u.Fix) {
			fixes = append(fixes, u.Fix)
		}
	}
	fmt.Fprintf(&b, "since the replay checked it, %s: %s", strings.Join(desc, ", and "), answer)
	switch {
	case len(copies) > 0 && strings.Contains(answer, "nacked"):
		// A nack says one queue refused, not which kept a copy.
		fmt.Fprintf(&b, ", and %s, which the route reaches too, may each hold a copy now", quoteAll(copies))
	case len(copies) > 0:
		fmt.Fprintf(&b, ", and %s, which the route reaches too, took a copy", quoteAll(copies))
	}
	if replayed {
		fmt.Fprintf(&b, "; removed from the DLQ: it reached %q, where it died; the messages after it bound for %s are not published", t.OriginQueue, quoteAll(unavailableNames(down)))
		return b.String()
	}
	b.WriteString("; the messages after it bound there are not published; left in the DLQ: ")
	inDown := slices.ContainsFunc(down, func(u *Unavailable) bool { return u.Queue == t.OriginQueue })
	switch {
	case t.OriginQueue != "" && len(copies) > 0 && inDown:
		fmt.Fprintf(&b, "%[1]s, and run the replay again with --from-queue %[2]s --to-exchange \"\" --routing-key %[2]s to send it to %[2]q alone, where it died (running it again as it is delivers another copy to %[3]s)", strings.Join(fixes, ", and "), t.OriginQueue, quoteAll(copies))
	case t.OriginQueue != "" && slices.Contains(copies, t.OriginQueue):
		fmt.Fprintf(&b, "%[1]q, where it died, may hold it now: look there before you replay it again; else %[2]s and run the replay again, with --from-queue %[1]s --to-exchange \"\" --routing-key %[1]s to send it to %[1]q alone", t.OriginQueue, strings.Join(fixes, ", and "))
	case len(copies) > 0:
		fmt.Fprintf(&b, "%s, and run the replay again (it delivers another copy to %s)", strings.Join(fixes, ", and "), quoteAll(copies))
	default:
		fmt.Fprintf(&b, "%s, and run the replay again", strings.Join(fixes, ", and "))
	}
	return b.String()
}

func unavailableNames(down []*Unavailable) []string {
	names := make([]string, len(down))
	for i, u := range down {
		names[i] = u.Queue
	}
	return names
}

// others are the queues of o's route not among down.
func others(queues []string, down []*Unavailable) []string {
	var out []string
	for _, q := range queues {
		if !slices.ContainsFunc(down, func(u *Unavailable) bool { return u.Queue == q }) {
			out = append(out, q)
		}
	}
	return out
}

// unavailableReason explains a replay refused because the queues down
// (of o's route) cannot take a publish now, with the queues that would
// take a copy regardless.
func unavailableReason(t Target, o Outcome, down []*Unavailable) string {
	var b strings.Builder
	desc := make([]string, len(down))
	fixes := make([]string, 0, len(down))
	answer := "the publish would miss it"
	for i, u := range down {
		desc[i] = fmt.Sprintf("queue %q %s", u.Queue, u.Why)
		if !slices.Contains(fixes, u.Fix) {
			fixes = append(fixes, u.Fix)
		}
		switch {
		case u.Unconfirmed:
			answer = "the broker would leave the publish unconfirmed until the confirm timeout, and the message could still reach the queue later"
		case !u.Missed && !strings.HasPrefix(answer, "the broker would leave"):
			answer = "the broker would nack the publish"
		}
	}
	them := "it"
	if len(down) > 1 {
		them = "they"
	}
	fmt.Fprintf(&b, "%s, so %s cannot take messages now: %s", strings.Join(desc, ", and "), them, answer)
	var others []string
	for _, q := range o.Queues {
		if !slices.ContainsFunc(down, func(u *Unavailable) bool { return u.Queue == q }) {
			others = append(others, q)
		}
	}
	if len(others) > 0 {
		fmt.Fprintf(&b, ", and %s, which the route reaches too, would take a copy regardless", quoteAll(others))
	}
	b.WriteString("; nothing was published; left in the DLQ: ")
	switch {
	case t.OriginQueue != "" && slices.Contains(others, t.OriginQueue):
		// Where it died can take it now; the others had their copy
		// when it was first published.
		fmt.Fprintf(&b, "run the replay again with --from-queue %[1]s --to-exchange \"\" --routing-key %[1]s to send it to %[1]q alone, where it died, or %[2]s and run it again as it is", t.OriginQueue, strings.Join(fixes, ", and "))
	case t.OriginQueue != "" && len(others) > 0:
		fmt.Fprintf(&b, "%[1]s, and run the replay again, with --from-queue %[2]s --to-exchange \"\" --routing-key %[2]s to send it to %[2]q alone, where it died", strings.Join(fixes, ", and "), t.OriginQueue)
	default:
		fmt.Fprintf(&b, "%s, and run the replay again", strings.Join(fixes, ", and "))
	}
	return b.String()
}

// refuseFull fails o when a queue of its route is full and refuses
// publishes (fullQueues).
func (r *replayer) refuseFull(o *Outcome) (bool, error) {
	full, err := r.fullQueues(*o)
	if err != nil || len(full) == 0 {
		return false, err
	}
	o.Action, o.Kind, o.Reason = ActionFailed, FailFull, fullReason(*o.Target, *o, full, false)
	return true, nil
}

// finish sends p, judged to be sent or not (decide): a message not to be
// sent keeps its outcome; in a dry run one to be sent would be replayed;
// otherwise it is published, once a queue of its route that refuses
// publishes past its length is checked again when earlier messages of
// its batch (batched) may have filled it. An error means the replay
// cannot go on.
func (r *replayer) finish(p *pending, batched bool) (Outcome, error) {
	switch {
	case !p.send:
		return p.o, nil
	case r.opts.DryRun:
		p.o.Action = ActionWouldReplay
		return p.o, nil
	}
	if batched {
		// Judged before the earlier messages of its batch were sent: a
		// publish of one may have found a queue of its route out of
		// reach, or been nacked, since.
		if refused, err := r.refuseUnavailable(&p.o); refused || err != nil {
			return p.o, err
		}
		if r.heldBack(&p.o) {
			return p.o, nil
		}
		if refused, err := r.refuseFull(&p.o); refused || err != nil {
			return p.o, err
		}
	}
	return r.publish(&p.m, *p.o.Target, p.pub, p.o)
}

// originMissed refuses a replay to where the message was first published
// when that route no longer reaches the queue it died in: the queue was
// deleted, or its binding removed. Replayed, it would reach only queues
// that had already taken it (or none), and leave the DLQ for good. A
// destination the user names (--to-exchange and --routing-key) is theirs.
func (r *replayer) originMissed(t Target, o Outcome) (kind, reason string) {
	if t.From != FromDeath || t.OriginQueue == "" || !o.Routed || slices.Contains(o.Queues, t.OriginQueue) {
		return "", ""
	}
	route := fmt.Sprintf("exchange %q with routing key %q", t.Exchange, t.RoutingKey)
	reaches := "now reaches no queue"
	if len(o.Queues) > 0 {
		reaches = "now reaches only " + quoteAll(o.Queues) + ", where it did not die"
	}
	if !r.opts.Router.HasQueue(t.OriginQueue) {
		return FailOriginGone, fmt.Sprintf("it died in queue %q, which no longer exists (deleted), and %s %s; left in the DLQ: declare %q again (with its binding) and run the replay again, or send it to a queue you name with --from-queue %s --to-exchange \"\" --routing-key QUEUE",
			t.OriginQueue, route, reaches, t.OriginQueue, t.OriginQueue)
	}
	return FailOriginUnreached, fmt.Sprintf("%[1]s no longer reaches queue %[2]q, where it died (its binding was removed?), and %[3]s; left in the DLQ: bind %[2]q again and run the replay again, or pass --from-queue %[2]s --to-exchange \"\" --routing-key %[2]s to send it there alone",
		route, t.OriginQueue, reaches)
}

// publish republishes m and acks it once confirmed.
func (r *replayer) publish(m *Message, t Target, pub amqp.Publishing, o Outcome) (Outcome, error) {
	dc, err := r.ch.PublishWithDeferredConfirm(t.Exchange, t.RoutingKey, true, false, pub)
	if err != nil {
		return o, fmt.Errorf("publish message #%d to exchange %q: %w", m.Index, t.Exchange, err)
	}
	timer := time.NewTimer(r.opts.ConfirmTimeout)
	defer timer.Stop()
	select {
	case <-dc.Done():
	case e := <-r.closed:
		return o, fmt.Errorf("the channel closed while waiting for the broker to confirm message #%d: %w", m.Index, closeErr(e))
	case <-timer.C:
		return o, fmt.Errorf("no confirm for message #%d within %s; it may or may not have been delivered, and stays in the DLQ too%s", m.Index, r.opts.ConfirmTimeout, r.downNow(o))
	}
	if r.ch.IsClosed() {
		return o, fmt.Errorf("the channel closed while waiting for the broker to confirm message #%d", m.Index)
	}
	// The broker sends basic.return before the basic.ack of the same
	// publish, and the client hands them over in that order.
	select {
	case ret := <-r.returns:
		o.Action, o.Kind = ActionFailed, FailUnroutable
		o.Reason = fmt.Sprintf("the broker returned it (%d %s): no queue is bound to exchange %q for routing key %q", ret.ReplyCode, ret.ReplyText, ret.Exchange, ret.RoutingKey)
		return o, nil
	default:
	}
	if !dc.Acked() {
		return r.nacked1(t, o), nil
	}
	gone, err := r.missedNow(o)
	if err != nil {
		return o, fmt.Errorf("message #%d was republished, but whether every queue of its route took it could not be told (%w): it stays in the DLQ too", m.Index, err)
	}
	if len(gone) > 0 {
		down := r.outOfReach(gone, r.recheck(o))
		copies := others(o.Queues, down)
		if t.OriginQueue == "" || !slices.Contains(copies, t.OriginQueue) {
			o.Action, o.Kind = ActionFailed, FailUnavailable
			o.Reason, o.Copies = sentReason(t, down, "the publish missed it", copies, false), copies
			return o, nil
		}
		o.Notes = append(o.Notes, sentReason(t, down, "the publish missed it", copies, true))
	}
	if r.opts.afterConfirm != nil {
		r.opts.afterConfirm(m.Index)
	}
	if err := r.ch.Ack(m.tag, false); err != nil {
		return o, fmt.Errorf("message #%d was republished but could not be removed from the DLQ (%w): it is in both", m.Index, err)
	}
	o.Action = ActionReplayed
	return o, nil
}

// nacked1 is the outcome of message o's publish to t, nacked: a queue of
// its route refused it, and the others may each have taken a copy. The
// cause is looked for (a queue full, or out of reach: Reach asked again);
// the messages after it bound for a queue out of reach, or, when no cause
// is found, for the same destination, are not published.
func (r *replayer) nacked1(t Target, o Outcome) Outcome {
	o.Action, o.Kind = ActionFailed, FailNacked
	o.Reason = "the broker nacked the publish (a destination queue refuses messages: full with overflow reject-publish, or unavailable)"
	if full, err := r.fullQueues(o); err == nil && len(full) > 0 {
		o.Reason = fullReason(t, o, full, true)
		for _, q := range o.Queues {
			if !slices.ContainsFunc(full, func(f fullQueue) bool { return f.name == q }) {
				o.Copies = append(o.Copies, q)
			}
		}
		return o
	}
	if down := r.recheck(o); len(down) > 0 {
		o.Copies = others(o.Queues, down)
		o.Reason = sentReason(t, down, "the broker nacked the publish", o.Copies, false)
		return o
	}
	r.nacked[destKey(t)] = o.Index
	if o.Routed && len(o.Queues) > 1 {
		o.Reason = nackedReason(o.Queues, t.OriginQueue)
		o.Copies = o.Queues
	}
	o.Reason += "; the messages after it bound for the same exchange and routing key are not published"
	return o
}

// checkOverflows judges what batch, about to be sent, adds to each queue
// of its messages' routes that pushes out its oldest messages past a
// length limit (Router.DropsHead), by what the queue holds now: the
// overflows go into rep, and a DataLossError refuses the replay when
// some are lost, unless AllowDataLoss (in a dry run, rep.Refusal).
func (r *replayer) checkOverflows(rep *Report, batch []pending) error {
	if r.opts.Router == nil {
		return nil
	}
	loads := loadsOf(batch)
	var all, lost []Overflow
	for _, q := range slices.Sorted(maps.Keys(loads)) {
		h, ok := r.opts.Router.DropsHead(q)
		if !ok {
			continue
		}
		held, err := r.readyIn(q, h.HasBytes)
		if err != nil {
			return err
		}
		for _, o := range overflows(q, h, held, *loads[q]) {
			all = append(all, o)
			if o.Lost {
				lost = append(lost, o)
			}
		}
	}
	rep.Overflows = all
	if len(lost) == 0 || r.opts.AllowDataLoss {
		return nil
	}
	refusal := &DataLossError{Queue: r.opts.Queue, Overflows: lost}
	if r.opts.DryRun {
		rep.Refusal = refusal
		return nil
	}
	return refusal
}

// loadsOf sums what the messages of batch to be sent add to each queue of
// their routes.
func loadsOf(batch []pending) map[string]*load {
	loads := map[string]*load{}
	for _, p := range batch {
		if !p.send || !p.o.Routed {
			continue
		}
		for _, q := range p.o.Queues {
			l := loads[q]
			if l == nil {
				l = &load{}
				loads[q] = l
			}
			l.messages++
			l.bytes += int64(len(p.m.Body))
			if origin := p.o.Target.OriginQueue; origin != "" {
				l.origins = appendNew(l.origins, origin)
			}
		}
	}
	return loads
}

// readyIn reads what queue q holds ready: its messages exactly (a passive
// declare), and, when bytes and ReadyBytes can, their bytes (-1 when not
// read). A queue that cannot be read holds nothing as far as the replay
// can tell: its publishes answer for it.
func (r *replayer) readyIn(q string, bytes bool) (ready, error) {
	n, ok, err := r.depth(q)
	if err != nil || !ok {
		return ready{bytes: -1}, err
	}
	held := ready{messages: int64(n), bytes: -1}
	if bytes && r.opts.ReadyBytes != nil {
		b, err := r.opts.ReadyBytes(q, n)
		if err != nil {
			return held, fmt.Errorf("read the bytes queue %q holds, for its max-length-bytes: %w", q, err)
		}
		held.bytes = b
	}
	return held, nil
}

// depth reads how many ready messages queue q holds, exactly (a passive
// declare on the side channel); false when it cannot be read (gone, or
// unreadable: the channel closed).
func (r *replayer) depth(q string) (int, bool, error) {
	ch, err := r.sideChannel()
	if err != nil {
		return 0, false, err
	}
	st, err := ch.QueueDeclarePassive(q, false, false, false, false, nil)
	if err != nil {
		return 0, false, nil
	}
	return st.Messages, true, nil
}

// fullQueues returns the queues of o's route that refuse publishes past a
// length limit (RejectsAt) and hold that many ready messages now (a
// passive declare on the side channel). A byte limit is not checked: a
// publish it refuses is nacked and told then.
func (r *replayer) fullQueues(o Outcome) ([]fullQueue, error) {
	if !o.Routed || r.opts.Router == nil {
		return nil, nil
	}
	var full []fullQueue
	for _, q := range o.Queues {
		limit, ok := r.opts.Router.RejectsAt(q)
		if !ok {
			continue
		}
		n, ok, err := r.depth(q)
		if err != nil {
			return nil, err
		}
		if ok && int64(n) >= limit { // one gone or unreadable: the publish answers for it
			full = append(full, fullQueue{name: q, held: n, limit: limit})
		}
	}
	return full, nil
}

// fullQueue is a queue that refuses publishes: it holds held ready
// messages, its max-length is limit.
type fullQueue struct {
	name  string
	held  int
	limit int64
}

// fullReason explains a replay refused, or nacked (nacked), because full
// (fullQueues) refuse it, with the queues that took, or would take, a copy
// regardless.
func fullReason(t Target, o Outcome, full []fullQueue, nacked bool) string {
	var b strings.Builder
	desc := make([]string, len(full))
	for i, f := range full {
		desc[i] = fmt.Sprintf("queue %q holds %s, its max-length %d,", f.name, plural(f.held, "message"), f.limit)
	}
	verb := "would refuse the publish"
	if nacked {
		verb = "nacked the publish"
	}
	fmt.Fprintf(&b, "%s and refuses more (overflow reject-publish): the broker %s", strings.Join(desc, " and "), verb)
	var others []string
	for _, q := range o.Queues {
		if !slices.ContainsFunc(full, func(f fullQueue) bool { return f.name == q }) {
			others = append(others, q)
		}
	}
	if len(others) > 0 {
		if nacked {
			fmt.Fprintf(&b, ", and %s, which the route reaches too, may each hold a copy now: running the replay again delivers another copy there", quoteAll(others))
		} else {
			fmt.Fprintf(&b, ", and %s, which the route reaches too, would take a copy regardless; nothing was published", quoteAll(others))
		}
	}
	b.WriteString("; left in the DLQ: make room (let its consumers catch up, or raise its limit) and run the replay again")
	if t.OriginQueue != "" && len(others) > 0 {
		fmt.Fprintf(&b, ", with --from-queue %[1]s --to-exchange \"\" --routing-key %[1]s to send it to %[1]q alone, where it died", t.OriginQueue)
	}
	return b.String()
}

func quoteAll(names []string) string {
	q := make([]string, len(names))
	for i, n := range names {
		q[i] = strconv.Quote(n)
	}
	return strings.Join(q, ", ")
}

var errNoExchange = errors.New("no such exchange")

// noPermission: the user may not publish to the exchange (MayWrite).
type noPermission struct{ lacks string }

func (e noPermission) Error() string { return e.lacks }

// exchangeExists checks an exchange with a passive declare on a side
// channel (a failed one closes its channel; the replay channel must live),
// and that the user may publish to it (MayWrite). From 4.3.1 a passive
// declare takes a permission on the exchange, any of the three
// (rabbit_channel check_any_resource_access_permitted), and its refusal
// names configure: what the publish needs, write, is told by MayWrite.
func (r *replayer) exchangeExists(name string) error {
	if err, ok := r.exchanges[name]; ok {
		return err
	}
	var err error
	if name != "" {
		side, serr := r.sideChannel()
		if serr != nil {
			return serr
		}
		err = side.ExchangeDeclarePassive(name, "", false, false, false, false, nil)
	}
	var ae *amqp.Error
	switch {
	case err == nil:
	case errors.As(err, &ae) && ae.Code == amqp.NotFound:
		err = errNoExchange
	case errors.As(err, &ae) && ae.Code == amqp.AccessRefused && r.opts.MayWrite != nil:
		err = nil // the user has no permission on it: MayWrite says which
	default:
		return fmt.Errorf("check exchange %q: %w", name, err)
	}
	if err == nil && r.opts.MayWrite != nil {
		if lacks := r.opts.MayWrite(name); lacks != "" {
			err = noPermission{lacks}
		}
	}
	r.exchanges[name] = err
	return err
}

// sideChannel returns the channel for passive checks, opening a new one
// when a failed check closed the last.
func (r *replayer) sideChannel() (*amqp.Channel, error) {
	if r.side == nil || r.side.IsClosed() {
		ch, err := r.conn.Channel()
		if err != nil {
			return nil, fmt.Errorf("open an AMQP channel: %w", err)
		}
		r.side = ch
	}
	return r.side, nil
}

func closeErr(e *amqp.Error) error {
	if e == nil {
		return amqp.ErrClosed
	}
	return e
}

// queueError explains a failed passive declare of the DLQ.
func queueError(queue string, err error) error {
	var ae *amqp.Error
	if errors.As(err, &ae) {
		switch ae.Code {
		case amqp.NotFound:
			return fmt.Errorf("queue %q does not exist in this vhost; check the name and --vhost", queue)
		case amqp.ResourceLocked:
			return fmt.Errorf("queue %q is exclusive to another connection: it cannot be read from here", queue)
		case amqp.AccessRefused:
			return fmt.Errorf("access to queue %q refused: %s", queue, ae.Reason)
		}
	}
	return fmt.Errorf("inspect queue %q: %w", queue, err)
}

// nackedReason is why a publish whose route reaches queues (more than one)
// was nacked, and the fix, for a message that died in origin ("" where
// unknown). --routing-key alone would send every message of a shared DLQ
// to the queue it names, those that died elsewhere too: the fix names
// --from-queue.
func nackedReason(queues []string, origin string) string {
	reason := fmt.Sprintf("the broker nacked the publish: one of the queues the route reaches (%s) refused it (full with overflow reject-publish, or unavailable), and the others may each have taken a copy: running the replay again delivers another copy to those; find the queue that refuses, and make room in it or bring it back", quoteAll(queues))
	if origin != "" {
		reason += fmt.Sprintf(", or send it to %[1]q alone, where it died, with --from-queue %[1]s --to-exchange \"\" --routing-key %[1]s", origin)
	}
	return reason
}
