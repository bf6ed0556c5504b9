package cli

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"net/url"
	"os"
	"slices"
	"strings"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"
	"github.com/spf13/cobra"

	"github.com/mqctl/mqctl/pkg/broker"
	"github.com/mqctl/mqctl/pkg/dlq"
	"github.com/mqctl/mqctl/pkg/loader"
	"github.com/mqctl/mqctl/pkg/lock"
	"github.com/mqctl/mqctl/pkg/rmqversion"
	"github.com/mqctl/mqctl/pkg/route"
	"github.com/mqctl/mqctl/pkg/suggest"
	"github.com/mqctl/mqctl/pkg/topology"
)

func newDLQCmd(g *globals) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "dlq",
		Short: "Inspect dead letters and replay them to where they came from",
		Example: `  mqctl dlq peek orders.shipping.dlq --vhost shop
  mqctl dlq replay orders.shipping.dlq --vhost shop --dry-run`,
		Long: `dlq works on one dead-letter queue of one vhost (--vhost; default: the file's
only vhost when a file is given or ./topology.yaml exists, else "/"). The queue
need not be declared in the file. It reads the queue with basic.get, so a
stream (which refuses basic.get, and keeps its messages for consumers that
read it from an offset) is refused before anything is read: read a stream
with a stream consumer, and keep dead letters for replay in a classic or
quorum queue.

  mqctl dlq peek QUEUE      show dead letters without removing them
  mqctl dlq replay QUEUE    republish them where they came from, confirmed`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return cmd.Help() },
	}
	cmd.AddCommand(newDLQPeekCmd(g), newDLQReplayCmd(g))
	return cmd
}

func newDLQPeekCmd(g *globals) *cobra.Command {
	var (
		limit, maxBody int
		raw, allowHold bool
	)
	cmd := &cobra.Command{
		Use:   "peek QUEUE",
		Short: "Show dead letters without removing them",
		Example: `  mqctl dlq peek orders.shipping.dlq
  mqctl dlq peek orders.shipping.dlq --vhost shop --limit 5 -o json`,
		Long: `peek shows the first --limit messages of QUEUE: message id, timestamp, the
exchange and routing key they arrived by, properties, headers, the decoded
x-death history (each queue the message died in, why, how often, and where it
had been published), where replay would send it, and the body — as text when
it is printable UTF-8, else as a hex dump (base64 with --raw), cut at
--max-body bytes.

The messages stay in the queue, in order: peek takes them unacknowledged and
returns them. On a RabbitMQ 4.3 quorum queue whose delayed retry (type returned
or all, by argument or policy) holds returned messages back, they would wait
out of order and out of reach: peek refuses unless --allow-delayed-retry. The broker then marks them redelivered, and a quorum queue
counts the return as a delivery attempt (with a delivery limit, a message
peeked too often is dead-lettered or dropped; peek warns when that applies).

-o json writes a versioned document (format_version 1).`,
		Args: exactQueueArg,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := g.checkOutput("text", "json"); err != nil {
				return err
			}
			if limit < 1 {
				return fmt.Errorf("--limit %d: peek shows at least 1 message", limit)
			}
			if maxBody < 0 {
				return fmt.Errorf("--max-body %d: give a number of bytes, or 0 to show whole bodies", maxBody)
			}
			view := newDLQView(g, cmd)
			s, err := g.openDLQ(cmd.Context(), view, args[0], "dlq peek")
			if err != nil {
				return err
			}
			defer s.close()
			if err := s.refuseStream(cmd.Context(), args[0]); err != nil {
				return err
			}
			if !allowHold {
				if err := s.refuseDelayedRead(args[0], "peek"); err != nil {
					return err
				}
			} else if d, ok := s.delayedRetry(args[0]); ok {
				view.note("%q has %s: the messages shown are held back for at least %s before they can be read again", args[0], describeDelay(d), time.Duration(d.MinMS)*time.Millisecond)
			}
			if n := s.deliveryLimit(args[0]); n > 0 && s.version.CountsRequeueAsDelivery() {
				view.note("%q is a quorum queue with a delivery limit of %d: each peek counts as a delivery of the messages it shows, and past the limit the broker dead-letters or drops them", args[0], n)
			}
			res, err := dlq.Peek(cmd.Context(), s.conn, args[0], limit)
			if err != nil {
				return fmt.Errorf("vhost %q: %w", s.vhost, err)
			}
			if d, ok := s.delayedRetry(args[0]); ok && res.InQueue == 0 {
				res.Delayed, res.DelayedRetry = s.delayed(cmd.Context(), args[0]), describeDelay(d)
			}
			return view.peek(res, dlq.PeekRender{Vhost: s.vhost, MaxBody: maxBody, Raw: raw})
		},
	}
	f := cmd.Flags()
	f.IntVar(&limit, "limit", dlq.DefaultPeekLimit, "show at most this many messages")
	f.IntVar(&maxBody, "max-body", dlq.DefaultMaxBody, "show at most this many bytes of each body (0: all)")
	f.BoolVar(&raw, "raw", false, "show binary bodies as base64 instead of a hex dump")
	f.BoolVar(&allowHold, "allow-delayed-retry", false, "peek a quorum queue whose delayed retry holds back the messages peek returns (RabbitMQ 4.3)")
	return cmd
}

// replayOptions are the flags of dlq replay (Flags → Options → Validate
// → Run).
type replayOptions struct {
	limit          int
	dryRun         bool
	toExchange     string
	routingKey     string
	fromQueue      string
	allowHold      bool
	retryHeaders   []string
	dropExpiration bool
	allowDataLoss  bool
	confirmTimeout time.Duration
}

// replayLong is dlq replay's --help.
const replayLong = `replay takes the messages of QUEUE one at a time and republishes each to where
it was originally published: the exchange and routing key (and CC keys) of its
first dead-lettering, read from the x-death header — never the dead-letter
exchange it passed through last, which would lead straight back into the DLQ.
--to-exchange and --routing-key send them elsewhere (--to-exchange "" with
--routing-key Q sends them to queue Q alone). A destination that leads back
into QUEUE is refused. --from-queue Q replays only the messages that died in
queue Q (per x-death) and leaves the others in QUEUE: when a DLQ collects the
dead letters of several queues, --from-queue Q --to-exchange "" --routing-key Q
sends each queue's messages back to it alone.

Each message is published with the mandatory flag and a publisher confirm, and
removed from QUEUE only once the broker confirmed it: a crash or a broken
connection loses nothing, and at worst one message — the one in flight — ends
up in both places. A message that comes back unroutable, is nacked, or has no
x-death (it was published straight into QUEUE; pass --to-exchange) stays in
QUEUE, in its place, and is reported. So does a message whose original route
no longer reaches the queue it died in (that queue was deleted, or its
binding removed): replayed, it would reach only queues that had taken it
already. Declare or bind the queue again, or name the destination with
--to-exchange "" --routing-key QUEUE. Before publishing, replay checks the
queues the route reaches for one that is full and refuses publishes
(max-length with overflow reject-publish): the broker would nack the publish,
yet every other queue reached would keep a copy, so the message stays in QUEUE
and nothing is published. So does a message whose route reaches a queue that
cannot take it now, as the management API tells, asked once per queue before
the first message bound for it: a classic queue whose node is down (the broker
would nack the publish, the other queues keeping their copy), a quorum queue or
stream without a majority (it would leave the publish unconfirmed until
--confirm-timeout), or a queue deleted since the replay read the bindings; the
report names the node or the members down. A queue that goes away while the
replay runs is found by the first publish bound for it: nacked (the queue
asked again), or confirmed having missed it (the route's queues are looked at
after each confirm): that message stays in QUEUE unless it reached the queue
it died in, the report names the queues that took a copy of it ("copies
made"), and the messages after it bound there are not published. A nack whose
cause is not found holds back the messages after it bound for the same
exchange and routing key.

A queue with a max-length or max-length-bytes and overflow drop-head (the
default) takes every message and pushes out its oldest ones past the limit.
When the vhost has one, replay reads all the messages it replays (holding them
in memory) before publishing the first, adds up what they bring to each queue
their routes reach, copies included, and weighs that against what the queue
holds now: where older messages would be pushed out and lost (no dead-letter
exchange, or one that routes them to no queue), the replay is refused and
nothing is published, unless --allow-data-loss; where they are dead-lettered
to a queue, a note says so. --dry-run says the same.

The message keeps its body and properties (message id, correlation id,
timestamp, content type, delivery mode, priority, headers…) but starts fresh:
x-death, x-first-death-*, x-delivery-count and x-acquired-count are removed, and so is the retry
counter named by --retry-header (default x-retry-count; repeatable; '' keeps
every header). A user-id other than the publishing user's is dropped (the
broker would refuse it). Its expiration (per-message TTL), which the broker
removes when it dead-letters a message and keeps in x-death as
original-expiration, is restored from the message's first dead-lettering, so
it keeps the TTL it was published with. RabbitMQ counts a message's TTL from
when it enters a queue: the replayed message gets its whole TTL again from the
replay, even when it ran out while the message sat in QUEUE (it does not
expire at once); a message that died because it expired expires again, back
into QUEUE, unless a consumer takes it within its TTL (the report notes it).
--drop-expiration replays the messages without an expiration.

Without --limit, replay takes as many messages as QUEUE holds when it starts:
one that dies again is not replayed twice.

--dry-run reads the messages and prints where each would go (with the queues
that destination reaches now), publishing and removing nothing; the messages
read are marked redelivered. Like the replay, it exits 1 when some messages
would not be replayed. On a RabbitMQ 4.3 quorum queue whose delayed
retry (type returned or all) holds returned messages back, a dry run would put
them on hold: it refuses unless --allow-delayed-retry, and a replay says which
messages it left wait for their retry.

Exit codes: 0 when every message taken was replayed or skipped, 1 when some
could not be replayed or the replay was interrupted (run it again).`

func newDLQReplayCmd(g *globals) *cobra.Command {
	o := replayOptions{confirmTimeout: dlq.DefaultConfirmTimeout}
	cmd := &cobra.Command{
		Use:   "replay QUEUE",
		Short: "Republish dead letters to where they came from",
		Example: `  mqctl dlq replay orders.shipping.dlq --dry-run    # where each would go; nothing moved
  mqctl dlq replay orders.shipping.dlq --limit 10
  mqctl dlq replay shared.dlq --from-queue orders.shipping`,
		Long: replayLong,
		Args: exactQueueArg,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := o.validate(g); err != nil {
				return err
			}
			return o.run(cmd, g, args[0])
		},
	}
	f := cmd.Flags()
	f.IntVar(&o.limit, "limit", 0, "replay at most this many messages (0: all it holds when the replay starts)")
	f.BoolVar(&o.dryRun, "dry-run", false, "print where each message would go; publish and remove nothing")
	f.StringVar(&o.toExchange, "to-exchange", "", `publish to this exchange instead of the original one ("" is the default exchange)`)
	f.StringVar(&o.routingKey, "routing-key", "", "publish with this routing key instead of the original one(s)")
	f.StringVar(&o.fromQueue, "from-queue", "", "replay only the messages that died in this queue (per x-death); leave the others")
	f.BoolVar(&o.allowHold, "allow-delayed-retry", false, "dry-run a quorum queue whose delayed retry holds back the messages read (RabbitMQ 4.3)")
	f.BoolVar(&o.allowDataLoss, "allow-data-loss", false, "replay even when the messages push older ones out of a full drop-head queue that loses them")
	f.BoolVar(&o.dropExpiration, "drop-expiration", false, "republish without an expiration (default: the one the message was published with, from x-death)")
	f.StringArrayVar(&o.retryHeaders, "retry-header", []string{dlq.DefaultRetryHeader}, "retry-attempt header to remove (repeatable; '' removes none)")
	f.DurationVar(&o.confirmTimeout, "confirm-timeout", o.confirmTimeout, "how long to wait for the broker to confirm each message before stopping")
	return cmd
}

func (o *replayOptions) validate(g *globals) error {
	if err := g.checkOutput("text", "json"); err != nil {
		return err
	}
	if o.limit < 0 {
		return fmt.Errorf("--limit %d: give a number of messages, or 0 for all", o.limit)
	}
	if o.confirmTimeout <= 0 {
		return fmt.Errorf("--confirm-timeout %s: give a positive duration, such as 30s", o.confirmTimeout)
	}
	return nil
}

// run replays queue's messages and shows what became of each.
func (o *replayOptions) run(cmd *cobra.Command, g *globals, queue string) error {
	view := newDLQView(g, cmd)
	s, err := g.openDLQ(cmd.Context(), view, queue, "dlq replay")
	if err != nil {
		return err
	}
	defer s.close()
	if err := s.refuseStream(cmd.Context(), queue); err != nil {
		return err
	}
	hold, holds := s.delayedRetry(queue)
	switch {
	case holds && o.dryRun && !o.allowHold:
		return s.refuseDelayedRead(queue, "a dry run")
	case holds:
		view.note("%q has %s: a message that is skipped or fails, or only read (--dry-run), goes back to it and is held back for at least %s before it can be read again", queue, describeDelay(hold), time.Duration(hold.MinMS)*time.Millisecond)
	}
	opts := dlq.ReplayOptions{
		Queue: queue, Limit: o.limit, DryRun: o.dryRun, User: s.user, FromQueue: o.fromQueue,
		ConfirmTimeout: o.confirmTimeout, Router: s.router(), DropExpiration: o.dropExpiration,
		AllowDataLoss: o.allowDataLoss, ReadyBytes: s.readyBytes(cmd.Context(), view),
	}
	if s.client != nil {
		opts.Reach = dlq.BrokerReach(cmd.Context(), s.client, s.vhost)
	}
	for _, h := range o.retryHeaders {
		if h != "" {
			opts.RetryHeaders = append(opts.RetryHeaders, h)
		}
	}
	if cmd.Flags().Changed("to-exchange") {
		opts.Override.Exchange = &o.toExchange
	}
	if cmd.Flags().Changed("routing-key") {
		opts.Override.RoutingKey = &o.routingKey
	}
	if n := s.deliveryLimit(queue); n > 0 && s.version.CountsRequeueAsDelivery() {
		view.note("%q is a quorum queue with a delivery limit of %d: a message that is skipped, fails or is only read (--dry-run) counts a delivery, and past the limit the broker dead-letters or drops it", queue, n)
	}
	if n := s.fromQueueNote(o.fromQueue); n != "" {
		view.note("%s", n)
	}
	if opts.Router == nil {
		view.note("the bindings of vhost %q could not be read (%v): a destination leading back into %q is caught only when it is the way the messages came in", s.vhost, s.liveErr, queue)
	}
	opts.Progress = view.progress(o.dryRun)
	opts.MayWrite = func(x string) string {
		return s.lacks(cmd.Context(), broker.Need{Perm: "write", Kind: "exchange", Name: x}, "replaying a dead letter publishes it to its destination exchange")
	}
	rep, err := dlq.Replay(cmd.Context(), s.conn, opts)
	if err != nil {
		return fmt.Errorf("vhost %q: %w", s.vhost, err)
	}
	if holds {
		rep.DelayedRetry = describeDelay(hold)
		if rep.InQueue == 0 || rep.Skipped+rep.Failed > 0 {
			rep.Delayed = s.delayed(cmd.Context(), queue)
		}
	}
	if err := view.replay(rep, dlq.ReplayRender{Vhost: s.vhost}); err != nil {
		return err
	}
	switch {
	case rep.Interrupted != nil:
		return &ExitCodeError{Code: ExitError, Err: fmt.Errorf("the replay was interrupted: %w; run it again to continue", rep.Interrupted)}
	case rep.Failed > 0 && o.dryRun:
		// As the replay would: a script that dry-runs before it replays
		// stops here.
		return &ExitCodeError{Code: ExitError, Err: fmt.Errorf("%d of %d messages would not be replayed and would stay in %q (a dry run: nothing was published or removed)", rep.Failed, len(rep.Outcomes), queue)}
	case rep.Failed > 0:
		return &ExitCodeError{Code: ExitError, Err: fmt.Errorf("%d of %d messages could not be replayed and stay in %q", rep.Failed, len(rep.Outcomes), queue)}
	}
	return nil
}

func exactQueueArg(cmd *cobra.Command, args []string) error {
	if len(args) != 1 || args[0] == "" {
		return fmt.Errorf("%s takes one argument, the queue's name (got %d); e.g. mqctl %s orders.shipping.dlq --vhost /", cmd.CommandPath(), len(args), strings.TrimPrefix(cmd.CommandPath(), "mqctl "))
	}
	return nil
}

// dlqSession is what a dlq command works with: the vhost, an AMQP
// connection to it, and the vhost as the broker's definitions show it.
type dlqSession struct {
	vhost   string
	user    string // the AMQP user
	conn    *amqp.Connection
	live    *topology.Vhost
	liveErr error
	version rmqversion.Version // the broker's
	client  *broker.Client
	amqpURL string
}

// lacks asks the broker whether the user has n's permission in the
// session's vhost (broker.Client.MissingPermissions: probes that change
// nothing), and says what it lacks, why (why) and the fix; "" when it has
// it, or when the check could not be made (the broker refuses then).
func (s *dlqSession) lacks(ctx context.Context, n broker.Need, why string) string {
	missing, err := s.client.MissingPermissions(ctx, s.amqpURL, s.vhost, []broker.Need{n})
	if err != nil || len(missing) == 0 {
		return ""
	}
	return s.client.LacksPermission(s.vhost, n, why)
}

// delayedRetry returns queue's delayed retry when returning a message
// with basic.nack (requeue) puts it on hold: a RabbitMQ 4.3 quorum queue
// whose effective delayed-retry type (argument, policy or operator
// policy) is returned or all. peek, a dry run and the messages a replay
// leaves are returned so.
func (s *dlqSession) delayedRetry(queue string) (route.DelayedRetry, bool) {
	if s.live == nil {
		return route.DelayedRetry{}, false
	}
	d, ok := route.NewWith(s.live, route.Options{Version: s.version}).DelayedRetry(queue)
	if !ok || !d.Delays(false) {
		return route.DelayedRetry{}, false
	}
	return d, true
}

// delayed reads how many messages queue holds back for a delayed retry,
// from the broker's statistics (a passive declare does not count them);
// 0 when it reports none.
func (s *dlqSession) delayed(ctx context.Context, queue string) int {
	if !s.version.DelayedRetry() || s.client == nil {
		return 0
	}
	list, err := s.client.ListQueueActivity(ctx, s.vhost)
	if err != nil {
		return 0
	}
	for _, q := range list {
		if q.Name == queue && q.Delayed != nil {
			return int(*q.Delayed)
		}
	}
	return 0
}

// describeDelay is the wait of d in words.
func describeDelay(d route.DelayedRetry) string {
	wait := (time.Duration(d.MinMS) * time.Millisecond).String()
	if d.MaxMS != d.MinMS {
		wait = fmt.Sprintf("%s to %s", wait, time.Duration(d.MaxMS)*time.Millisecond)
	}
	return fmt.Sprintf("delayed retry type %s, %s", d.Type, wait)
}

// refuseDelayedRead refuses peek and a dry run on a queue whose delayed
// retry would put the messages they read and return on hold.
func (s *dlqSession) refuseDelayedRead(queue, what string) error {
	d, ok := s.delayedRetry(queue)
	if !ok {
		return nil
	}
	return fmt.Errorf("%q is a quorum queue with %s: the messages %s reads go back to it with a nack, and the broker holds each back for at least %s, out of order and out of reach of peek and replay until then; replay without reading first (mqctl dlq replay %s), or pass --allow-delayed-retry to go ahead",
		queue, describeDelay(d), what, time.Duration(d.MinMS)*time.Millisecond, queue)
}

// refuseStream refuses, before anything is read, a queue that is a
// stream (dlq.StreamError): its type from the vhost's definitions, or,
// when those could not be read, from the queue itself. A queue whose type
// cannot be told is read: a stream's refusal of basic.get is turned into
// the same error then.
func (s *dlqSession) refuseStream(ctx context.Context, queue string) error {
	typ := ""
	if s.live != nil {
		if q := s.live.Queues[queue]; q != nil {
			typ = q.Type
		}
	} else if s.client != nil {
		if q, err := s.client.GetQueue(ctx, s.vhost, queue); err == nil {
			typ = q.Type
		}
	}
	if typ != topology.QueueStream {
		return nil
	}
	return fmt.Errorf("vhost %q: %w", s.vhost, &dlq.StreamError{Queue: queue})
}

// fromQueueNote is the note for a --from-queue that names no queue of
// the vhost, as a typo does: only the messages that died in it are
// replayed, so nothing may be, and the others are skipped as having died
// elsewhere. A queue deleted since its messages died is a right answer
// too, so it is a note, not a refusal. "" when the queue exists, or the
// vhost's queues could not be read.
func (s *dlqSession) fromQueueNote(q string) string {
	if q == "" || s.live == nil || s.live.Queues[q] != nil {
		return ""
	}
	n := fmt.Sprintf("--from-queue %q: vhost %q has no queue of that name, so only messages that died in it before it was deleted are replayed; the others are skipped and stay", q, s.vhost)
	if guess := suggest.Closest(q, slices.Sorted(maps.Keys(s.live.Queues))); guess != "" {
		n += fmt.Sprintf(" (did you mean %q?)", guess)
	}
	return n
}

func (s *dlqSession) close() {
	if s.conn != nil {
		_ = s.conn.Close()
	}
}

// router routes over the live bindings; nil when they could not be read.
func (s *dlqSession) router() dlq.Router {
	if s.live == nil {
		return nil
	}
	return dlq.NewTopologyRouter(s.live, s.version)
}

// readyBytes reads the bytes of a queue's ready messages from its
// statistics once they count the ready messages an exact read counted
// (broker ReadyCaughtUp, as apply reads them); nil without the management
// API.
func (s *dlqSession) readyBytes(ctx context.Context, view dlqView) func(string, int) (int64, error) {
	if s.client == nil {
		return nil
	}
	return func(queue string, ready int) (int64, error) {
		view.note("queue %q has a max-length-bytes: reading the bytes it holds from its statistics, which lag (%s)", queue, broker.ReadySettle)
		st, err := s.client.ReadyCaughtUp(ctx, s.vhost, queue, int64(ready), broker.ReadySettle, broker.ReadyTimeout)
		return st.ReadyBytes, err
	}
}

func (s *dlqSession) deliveryLimit(queue string) int64 {
	if s.live == nil {
		return 0
	}
	return dlq.DeliveryLimit(s.live, queue, s.version)
}

// openDLQ resolves the vhost, checks queue against the file (notes only),
// reads the vhost's definitions and opens the AMQP connection.
func (g *globals) openDLQ(ctx context.Context, view dlqView, queue, action string) (*dlqSession, error) {
	vhost, file, err := g.dlqVhost(view)
	if err != nil {
		return nil, err
	}
	if file != nil {
		if note := fileNote(file, vhost, queue); note != "" {
			view.note("%s", note)
		}
	}
	c, amqpURL, err := g.connect(ctx)
	if err != nil {
		return nil, err
	}
	s := &dlqSession{vhost: vhost, version: c.RabbitMQVersion(), client: c, amqpURL: amqpURL}
	if u, err := url.Parse(amqpURL); err == nil && u.User != nil {
		s.user = u.User.Username()
	}
	top, _, err := c.ReadTopology(ctx, []string{vhost})
	switch {
	case errors.Is(err, broker.ErrVhostNotFound):
		return nil, fmt.Errorf("vhost %q does not exist on %s (or you have no permissions on it); pass --vhost", vhost, c.Server())
	case err != nil:
		s.liveErr = err
	case top.Vhosts[vhost] == nil:
		s.liveErr = fmt.Errorf("the broker returned no definitions for vhost %q", vhost)
	default:
		s.live = top.Vhosts[vhost]
	}
	if err := refuseUnreachable(ctx, c, vhost, queue); err != nil {
		return nil, err
	}
	do := broker.AMQPDial{URL: amqpURL, Vhost: vhost, Name: lock.DefaultName(action)}
	if strings.HasPrefix(amqpURL, "amqps:") {
		do.TLS = c.TLSConfig()
	}
	if s.conn, err = broker.DialAMQP(ctx, do); err != nil {
		return nil, err
	}
	// Reading a dead letter (basic.get) takes read on its queue: without
	// it the read was refused with the broker's words alone (or, from
	// 4.3.1 where the user has no permission on the queue, its passive
	// declare, naming configure).
	if lacks := s.lacks(ctx, broker.Need{Perm: "read", Kind: "queue", Name: queue}, "reading dead letters takes read on their queue"); lacks != "" {
		s.close()
		return nil, fmt.Errorf("%s: nothing was read: %s", action, lacks)
	}
	return s, nil
}

// refuseUnreachable refuses to read queue while the broker says it cannot
// be reached: a classic queue whose home node is down, or a quorum queue
// or stream without a majority of its members online. Over AMQP such a
// queue reads as one that does not exist (a classic queue on a down node
// answers a passive declare with 404 on 4.3) or as an empty one (a quorum
// queue without a majority), when its messages wait on the stopped
// node's disk. What the broker reports of its placement tells (as plan
// and apply tell it, broker.Placement); a queue it does not list, or a
// placement it does not answer, is left to the AMQP read to judge.
func refuseUnreachable(ctx context.Context, c *broker.Client, vhost, queue string) error {
	p, found, err := c.FindQueuePlacement(ctx, vhost, queue)
	if err != nil || !found {
		return nil
	}
	switch {
	case p.Down:
		return fmt.Errorf("queue %q in vhost %q lives on node %s, which is down: its messages wait on that node's disk, and until "+
			"the node is back RabbitMQ can neither count nor deliver them (the queue would read as missing or empty); start %s "+
			"again (or wait for it) and run this again", queue, vhost, p.HomeNode(), p.HomeNode())
	case p.NoMajority():
		return fmt.Errorf("%s queue %q in vhost %q has %s: without a majority RabbitMQ can neither "+
			"count nor deliver its messages (the queue would read as empty); bring the members' nodes back until a majority "+
			"of them is online and run this again", p.Replicated(), queue, vhost, p.MembersOnline())
	}
	return nil
}

// dlqVhost picks the one vhost a dlq command works on: --vhost; else the
// only vhost of the file (-f, or ./topology.yaml when present); else "/".
// The file is returned for checks, nil when there is none.
func (g *globals) dlqVhost(view dlqView) (string, *topology.Topology, error) {
	if len(g.vhosts) > 1 {
		return "", nil, fmt.Errorf("dlq works on one vhost at a time; --vhost names %d (%s)", len(g.vhosts), strings.Join(g.vhosts, ", "))
	}
	var file *topology.Topology
	opts := g.loaderOptions()
	switch {
	case len(g.files) > 0:
		t, err := loader.Load(g.files, opts)
		if err != nil {
			return "", nil, err
		}
		g.loaded(t)
		file = t
	default:
		if _, err := os.Stat(loader.DefaultFile); err == nil {
			t, err := loader.Load([]string{loader.DefaultFile}, opts)
			if err != nil {
				view.note("ignoring ./topology.yaml, which does not load (%v); pass -f to use a file", firstLine(err))
			} else {
				g.loaded(t)
				file = t
			}
		}
	}
	if len(g.vhosts) == 1 {
		return g.vhosts[0], file, nil
	}
	if file == nil {
		return "/", nil, nil
	}
	names := file.VhostNames()
	if len(names) != 1 {
		return "", nil, fmt.Errorf("the file declares %d vhosts (%s); pass --vhost to pick one", len(names), strings.Join(names, ", "))
	}
	return names[0], file, nil
}

func firstLine(err error) string {
	s, _, _ := strings.Cut(err.Error(), "\n")
	return s
}

// fileNote says when the file does not see queue as a dead-letter queue
// of vhost: dlq works on any queue, but a typo is worth a word.
func fileNote(file *topology.Topology, vhost, queue string) string {
	v := file.Vhosts[vhost]
	if v == nil {
		return ""
	}
	q := v.Queues[queue]
	if q == nil {
		return fmt.Sprintf("queue %q is not declared in vhost %q of the file (declared: %s)", queue, vhost, strings.Join(keys(v.Queues), ", "))
	}
	if q.Role == topology.RoleDeadLetter || receivesDeadLetters(v, queue) {
		return ""
	}
	role := q.Role
	if role == "" {
		role = topology.RoleWorking
	}
	return fmt.Sprintf("in the file, queue %q is a %s queue: no dead-letter exchange leads to it", queue, role)
}

// receivesDeadLetters reports whether a binding of some queue's effective
// dead-letter exchange leads to queue.
func receivesDeadLetters(v *topology.Vhost, queue string) bool {
	sim := route.New(v)
	dlx := map[string]bool{}
	for name := range v.Queues {
		if x, ok := sim.QueueArgs(name).String("x-dead-letter-exchange"); ok {
			dlx[x] = true
		}
	}
	for _, b := range v.Bindings {
		if dlx[b.Source] && b.DestinationType == topology.DestQueue && b.Destination == queue {
			return true
		}
	}
	return false
}
