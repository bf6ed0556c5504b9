package topotest

import (
	"context"
	"crypto/rand"
	"crypto/tls"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/mqctl/mqctl/internal/shell"
	"github.com/mqctl/mqctl/pkg/broker"
	"github.com/mqctl/mqctl/pkg/engine"
	"github.com/mqctl/mqctl/pkg/kind"
	"github.com/mqctl/mqctl/pkg/route"
	"github.com/mqctl/mqctl/pkg/topology"
)

// VhostPrefix starts the name of every throwaway vhost.
const VhostPrefix = "mqctl-test-"

// DefaultWait is how long a live test waits for a dead letter to arrive.
const DefaultWait = 5 * time.Second

// LiveOptions configure RunLive.
type LiveOptions struct {
	// AMQPURL is the broker's AMQP URL with credentials and without a
	// vhost (broker.Client.AMQPURL). It is never printed.
	AMQPURL string
	// TLS is used for amqps URLs.
	TLS *tls.Config
	// Wait bounds how long a test waits for its message to arrive: a test
	// that expects a dead letter to reach no queue takes this long.
	Wait time.Duration
	// Log receives one line when a throwaway vhost is ready and one when it
	// is deleted; nil discards them.
	Log io.Writer
}

// RunLive checks tests on the broker behind c. For each vhost the tests
// use it creates a vhost named mqctl-test-<random>, applies the file's
// vhost into it (through the engine, as mqctl apply does), runs the tests there one
// after the other, and deletes the vhost, also when a test or the run
// fails or ctx is cancelled.
//
// Each test publishes a probe message with a unique message id, mandatory
// and with publisher confirms (so "reached no queue" is the broker's own
// answer), then reads every queue of the vhost with basic.get to see
// which ones hold a copy:
//   - publish: the queues holding the probe must be exactly the expected.
//   - reject: the copy in the queue is rejected (basic.nack,
//     requeue=false); the queues its dead letter reaches, told by the
//     x-death header (latest death: that queue, reason rejected), must be
//     exactly the expected.
//   - expire and retry: waiting for a real queue TTL (10 minutes for a
//     10m delay tier) is not practical, so the probe is published again
//     with a per-message expiration of 0, which makes the queue expire it
//     on arrival (mqctl leaves that queue unread meanwhile, lest basic.get
//     take the probe out first). This runs the real dead-letter wiring of
//     that queue (its x-dead-letter-exchange and routing key, by argument
//     or policy, and the bindings behind them); that the queue has a TTL
//     at all is checked on the file, as offline. Copies that expire from
//     other queues the probe reached are told apart by their x-death entry.
//
// Streams, which basic.get cannot read, are read by a consumer each.
//
// An error that stops the run (a vhost whose copy the broker refuses, a
// broker gone) comes with the report of the tests done before it, which
// names those not run (Report.NotRun); nil before any vhost is tried.
func RunLive(ctx context.Context, c *broker.Client, t *topology.Topology, tests []topology.Test, o LiveOptions) (*Report, error) {
	if o.Wait <= 0 {
		o.Wait = DefaultWait
	}
	if o.Log == nil {
		o.Log = io.Discard
	}
	if !c.IsAdmin() {
		// Only an administrator may create and delete vhosts. Before, the
		// run tried, and said the throwaway vhost might exist and should
		// be deleted by hand, though none was made.
		return nil, fmt.Errorf("mqctl test --live makes a throwaway vhost for the tests of each vhost and deletes it after, which takes the administrator tag: user %q has %s; nothing was changed. Run it as an administrator (an administrator can give the tag, keeping the user's own: rabbitmqctl set_user_tags %s), or run mqctl test without --live, which checks the tests on the routing simulator",
			c.Username(), tagsPhrase(c.Tags()), strings.Join(shell.Words(append(append([]string{c.Username()}, c.Tags()...), "administrator")), " "))
	}
	out := make([]Outcome, len(tests))
	done := make([]bool, len(tests))
	var order []string
	byVhost := map[string][]int{}
	for i, tc := range tests {
		if _, seen := byVhost[tc.Vhost]; !seen {
			order = append(order, tc.Vhost)
		}
		byVhost[tc.Vhost] = append(byVhost[tc.Vhost], i)
	}
	for _, vh := range order {
		v := t.Vhosts[vh]
		var res []Outcome
		err := fmt.Errorf("vhost %q is not in the topology", vh)
		if v != nil {
			var group []topology.Test
			for _, i := range byVhost[vh] {
				group = append(group, tests[i])
			}
			res, err = runVhost(ctx, c, v, group, o)
		}
		for j, oc := range res {
			out[byVhost[vh][j]], done[byVhost[vh][j]] = oc, true
		}
		if err != nil {
			// The tests already run keep their outcomes: the report
			// holds them, and names those that did not run.
			return partialReport(tests, out, done), err
		}
	}
	return newReport(true, out), nil
}

// partialReport is the report of a live run stopped by an error: the
// outcomes of the tests done, in file order, and the names of the others
// (Report.NotRun).
func partialReport(tests []topology.Test, out []Outcome, done []bool) *Report {
	var ran []Outcome
	var notRun []string
	for i, tc := range tests {
		if done[i] {
			ran = append(ran, out[i])
		} else {
			notRun = append(notRun, tc.Name)
		}
	}
	r := newReport(true, ran)
	r.NotRun = notRun
	return r
}

// runVhost runs the tests of one vhost in a throwaway copy of it.
func runVhost(ctx context.Context, c *broker.Client, src *topology.Vhost, tests []topology.Test, o LiveOptions) (outcomes []Outcome, err error) {
	name := VhostPrefix + randomHex(6)
	defer func() {
		// A fresh context: the vhost goes also after Ctrl-C.
		dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
		defer cancel()
		if ctx.Err() != nil {
			// A second Ctrl-C ends the process at once (cmd/mqctl).
			fmt.Fprintf(o.Log, "interrupted: deleting the throwaway vhost %q (another Ctrl-C would leave it behind: rabbitmqctl delete_vhost %s deletes it)\n", name, name)
		}
		derr := c.DeleteVhost(dctx, name)
		switch {
		case derr == nil:
			fmt.Fprintf(o.Log, "deleted the throwaway vhost %q\n", name)
		case errors.Is(derr, broker.ErrNotFound):
		default:
			err = errors.Join(err, fmt.Errorf("could not delete the throwaway vhost %q: %w; delete it with the management UI or rabbitmqctl delete_vhost %s", name, derr, name))
		}
	}()
	left, err := applyCopy(ctx, c, src, name, o.AMQPURL)
	if err != nil {
		return nil, err
	}
	fmt.Fprintf(o.Log, "applied vhost %q into the throwaway vhost %q (%d queues); running %d %s\n", src.Name, name, len(src.Queues), len(tests), plural("test", len(tests)))
	if len(left) > 0 {
		fmt.Fprintf(o.Log, "left out of the throwaway vhost %q: %s\n", name, strings.Join(left, "; "))
	}

	p, err := newProber(ctx, c, src, name, o)
	if err != nil {
		return nil, err
	}
	defer p.close()
	sim := route.NewWith(src, route.Options{Version: c.RabbitMQVersion()})
	for i, tc := range tests {
		oc, err := p.run(ctx, sim, tc, i)
		if err != nil {
			return outcomes, fmt.Errorf("test %q: %w", tc.Name, err)
		}
		outcomes = append(outcomes, oc)
	}
	return outcomes, nil
}

// applyCopy creates vhost name holding everything src declares, through
// the engine, as mqctl apply would (its AMQP connections to amqpURL), but
// what trialVhost leaves out, which left names: the objects that act
// beyond the vhost (kind.Spec.ReachesOut: a shovel copied there would move
// the real messages of the queues its URIs name, on this broker or
// another, and a federation link would take messages from the upstream)
// and the vhost's limits. Without them the copy routes as src does: a
// policy that names an upstream still applies, and starts no link.
func applyCopy(ctx context.Context, c *broker.Client, src *topology.Vhost, name, amqpURL string) (left []string, err error) {
	v, left := trialVhost(src)
	v.Name = name
	v.Description = fmt.Sprintf("mqctl test: throwaway copy of vhost %q, deleted after the run", src.Name)
	v.DefaultQueueType = "" // every queue carries its type after expansion
	v.Tags = nil            // the copy is not the vhost: none of its tags
	desired := topology.New()
	desired.Vhosts[name] = v
	out, err := engine.New(c, engine.Options{AMQPURL: amqpURL}).Apply(ctx, engine.ApplyInput{Desired: desired}, engine.ApplyOptions{})
	if err == nil {
		return left, nil
	}
	// The broker's and the plan's words name the objects in the
	// throwaway vhost, which the user never wrote and which is gone by the
	// time they read them: they name the file's vhost instead.
	own := strings.NewReplacer("vhost "+strconv.Quote(name), "vhost "+strconv.Quote(src.Name))
	if out == nil || out.Result == nil {
		return nil, &applyError{msg: fmt.Sprintf("applying vhost %q into the throwaway vhost %q failed: %s", src.Name, name, own.Replace(err.Error())), err: err}
	}
	res := out.Result
	var why []string
	for _, f := range res.Failed {
		why = append(why, fmt.Sprintf("%s: %v", f.Step, f.Err))
	}
	if res.Interrupted {
		why = append(why, "interrupted")
	}
	if len(why) == 0 && res.RecordErr != nil {
		why = append(why, res.RecordErr.Error())
	}
	if len(why) == 0 {
		why = append(why, err.Error())
	}
	return nil, fmt.Errorf("applying vhost %q into the throwaway vhost %q failed: %s", src.Name, name, own.Replace(strings.Join(why, "; ")))
}

// applyError is a failed apply of a throwaway vhost, said in the file's
// words; it wraps the engine's error (a cancelled run stays
// context.Canceled).
type applyError struct {
	msg string
	err error
}

func (e *applyError) Error() string { return e.msg }
func (e *applyError) Unwrap() error { return e.err }

// trialVhost is a copy of src as a throwaway vhost holds it for the tests,
// and left says what it leaves out, and why: the objects that act beyond
// the vhost (kind.Spec.ReachesOut), and its limits, which bound
// connections and queues, not where a message goes: the copy would be
// refused for a limit that leaves no room for the apply's lock queue or
// the run's connection, where an offline run answers.
func trialVhost(src *topology.Vhost) (v *topology.Vhost, left []string) {
	cp := *src
	cp.Items = nil
	var out, limits []string
	for _, spec := range kind.All() {
		for _, n := range src.Items.Names(spec.Kind) {
			switch {
			case spec.ReachesOut:
				out = append(out, fmt.Sprintf("%s %q", spec.Label, n))
			case spec.Kind == kind.VhostLimits:
				limits = append(limits, spec.Label)
			default:
				cp.Items.Put(src.Items.Get(spec.Kind, n))
			}
		}
	}
	if len(out) > 0 {
		left = append(left, strings.Join(out, ", ")+" (they would move or copy real messages beyond it; the tests do not follow them)")
	}
	if len(limits) > 0 {
		left = append(left, "its vhost limits (they bound connections and queues, not where messages go)")
	}
	return &cp, left
}

// Trial returns what RunLive applies for tests, under the vhosts' own
// names: each vhost a test runs in, as its throwaway copy holds it
// (trialVhost). A check of it for a RabbitMQ version
// (rmqversion.Version.Check) refuses what a --live run on that version
// would be refused, so an offline run can refuse it too.
func Trial(t *topology.Topology, tests []topology.Test) *topology.Topology {
	out := topology.New()
	for _, tc := range tests {
		if v := t.Vhosts[tc.Vhost]; v != nil && out.Vhosts[tc.Vhost] == nil {
			out.Vhosts[tc.Vhost], _ = trialVhost(v)
		}
	}
	return out
}

// prober publishes probes into one throwaway vhost and finds their copies.
type prober struct {
	v *topology.Vhost
	// c and vhost publish through the management API the probes whose
	// headers hold a table of two or more fields (publish).
	c       *broker.Client
	vhost   string
	queues  []string // every queue but streams, read with basic.get
	streams *streamWatch
	conn    *amqp.Connection
	ch      *amqp.Channel
	returns chan amqp.Return
	wait    time.Duration
	run0    string // random part of this run's message ids
	// seen are the messages read during the current test; sweeps reject
	// the copy of probe rejectID in queue reject, and do not read queue
	// skip.
	seen     []copyOf
	reject   string
	rejectID string
	skip     string
}

func newProber(ctx context.Context, c *broker.Client, v *topology.Vhost, vhost string, o LiveOptions) (*prober, error) {
	conn, err := broker.DialAMQP(ctx, broker.AMQPDial{URL: o.AMQPURL, Vhost: vhost, TLS: o.TLS, Name: "mqctl test"})
	if err != nil {
		return nil, err
	}
	p := &prober{v: v, c: c, vhost: vhost, conn: conn, wait: o.Wait, run0: randomHex(4)}
	var streams []string
	for _, q := range v.QueueNames() {
		if v.Queues[q].Type == topology.QueueStream {
			streams = append(streams, q)
		} else {
			p.queues = append(p.queues, q)
		}
	}
	if p.ch, err = conn.Channel(); err != nil {
		conn.Close()
		return nil, fmt.Errorf("open an AMQP channel in vhost %q: %w", vhost, err)
	}
	if err := p.ch.Confirm(false); err != nil {
		conn.Close()
		return nil, fmt.Errorf("publisher confirms in vhost %q: %w", vhost, err)
	}
	p.returns = p.ch.NotifyReturn(make(chan amqp.Return, 64))
	if p.streams, err = watchStreams(ctx, conn, streams); err != nil {
		conn.Close()
		return nil, err
	}
	return p, nil
}

func (p *prober) close() { p.conn.Close() }

// copyOf is one copy of a probe found in a queue.
type copyOf struct {
	id    string // message id
	queue string
	// diedIn and reason are the latest x-death entry ("" when the copy was
	// never dead-lettered).
	diedIn, reason string
}

// run runs test number i.
func (p *prober) run(ctx context.Context, sim *route.Simulator, tc topology.Test, i int) (Outcome, error) {
	o := newOutcome(tc)
	pred := predict(sim, p.v, tc)
	o.Hops = pred.hops
	if pred.problem != "" && pred.static {
		// The file itself says it cannot work (a queue without a TTL, a
		// stream): the broker would only hide it.
		o.Message = pred.problem
		return o, nil
	}
	if err := p.purge(); err != nil {
		return o, err
	}
	p.seen = p.seen[:0]
	id := fmt.Sprintf("mqctl-test-%s-%d", p.run0, i)
	routed, err := p.publish(ctx, tc.Publish, id, "")
	switch {
	case errors.As(err, new(*refusedError)) && len(pred.refused) > 0:
		// Refused by the queues the simulator says refuse it; the
		// others keep their copies.
		routed = true
	case errors.As(err, new(*refusedError)):
		o.Message = err.Error()
		return o, nil
	case err != nil:
		return o, err
	}
	switch {
	case tc.Action == topology.ActionNone:
		err = p.delivered(ctx, tc, pred, id, routed, &o)
	case tc.Action == topology.ActionExpire && slices.Contains(pred.passed, tc.Queue):
		err = p.expiredOnArrival(ctx, tc, pred, id, &o)
	default:
		err = p.diedIn(ctx, tc, pred, id, routed, &o)
	}
	return o, err
}

// delivered is the rest of a test without action: where the probe id,
// published (routed: the broker took it), lands.
func (p *prober) delivered(ctx context.Context, tc topology.Test, pred prediction, id string, routed bool, o *Outcome) (err error) {
	// A copy dead-lettered by a queue that keeps nothing (a message
	// TTL or length limit of 0) lands where its dead letter does.
	fresh := func(c copyOf) bool { return c.id == id && (c.diedIn == "" || slices.Contains(pred.passed, c.diedIn)) }
	o.Got = []string{}
	if routed {
		if o.Got, err = p.collect(ctx, p.publishWait(tc.Expect), tc.Expect, fresh, true); err != nil {
			return err
		}
	}
	p.judge(o, pred)
	return nil
}

// expiredOnArrival is the rest of a test whose queue expires the probe id
// on arrival (the prediction has no problem): the dead letter of this
// publish is the answer.
func (p *prober) expiredOnArrival(ctx context.Context, tc topology.Test, pred prediction, id string, o *Outcome) (err error) {
	died := func(c copyOf) bool { return c.id == id && c.diedIn == tc.Queue && c.reason == string(route.Expired) }
	if o.Got, err = p.collect(ctx, p.wait, tc.Expect, died, true); err != nil {
		return err
	}
	p.judge(o, pred)
	return nil
}

// diedIn is the rest of a test that rejects the probe id, published
// (routed: the broker took it), in its queue, or lets it expire there:
// where its dead letter lands.
func (p *prober) diedIn(ctx context.Context, tc topology.Test, pred prediction, id string, routed bool, o *Outcome) (err error) {
	// The probe must reach the queue to be rejected or expire there; the
	// copy there is rejected as soon as it is read.
	verb := map[topology.TestAction]string{topology.ActionReject: "rejected", topology.ActionExpire: "expire"}[tc.Action]
	if tc.Action == topology.ActionReject {
		p.reject, p.rejectID = tc.Queue, id
	}
	reached := []string{}
	if routed {
		inQueue := func(c copyOf) bool { return c.id == id && c.diedIn == "" }
		if reached, err = p.collect(ctx, p.publishWait([]string{tc.Queue}), []string{tc.Queue}, inQueue, false); err != nil {
			return err
		}
	}
	p.reject = ""
	if !slices.Contains(reached, tc.Queue) {
		o.Message = fmt.Sprintf("on the broker the message does not reach queue %q (it reaches %s), so it cannot be %s there", tc.Queue, list(reached), verb)
		return nil
	}
	reason := string(route.Rejected)
	if tc.Action == topology.ActionExpire {
		reason = string(route.Expired)
		id += "-expire"
		// Left alone, so that basic.get does not take the probe out of the
		// queue before the queue expires it.
		p.skip = tc.Queue
		defer func() { p.skip = "" }()
		_, err := p.publish(ctx, tc.Publish, id, "0")
		if errors.As(err, new(*refusedError)) {
			o.Message = err.Error()
			return nil
		}
		if err != nil {
			return err
		}
	}
	died := func(c copyOf) bool { return c.id == id && c.diedIn == tc.Queue && c.reason == reason }
	if o.Got, err = p.collect(ctx, p.wait, tc.Expect, died, true); err != nil {
		return err
	}
	p.judge(o, pred)
	return nil
}

// judge judges a live outcome. Where an exchange on the way picks at
// random (pred.random), what the broker did this time decides nothing:
// the outcome is unknown unless the message reached a queue no pick can
// lead to.
func (p *prober) judge(o *Outcome, pred prediction) {
	if !pred.random {
		o.judge(p.onBroker(pred, *o), p.v, pred)
		return
	}
	got := o.Got
	o.Got = pred.queues
	o.judgeUnsure(pred)
	o.Got = got
	if o.Unknown {
		o.Message = fmt.Sprintf("the broker delivered it to %s this time, which decides nothing: %s; the answer changes from run to run. Test what the message certainly reaches, or publish to one of the queues by name (the default exchange)",
			list(got), strings.Join(pred.unsure, "; "))
	}
}

// publishWait bounds the search for the copies of a publish in the
// queues want. The broker confirms a publish once every queue it routes to
// has taken the message, so they are all there at the first look; streams
// are read by consumers, which see it a moment later.
func (p *prober) publishWait(want []string) time.Duration {
	for _, q := range want {
		if slices.Contains(p.streams.names, q) {
			return p.wait
		}
	}
	return min(p.wait, time.Second)
}

// refusedError is a probe the broker did not take (basic.nack).
type refusedError struct{ m topology.TestMessage }

func (e *refusedError) Error() string {
	return fmt.Sprintf("the broker refused the message published to %s with key %q (basic.nack): a queue it routes to is full with overflow reject-publish, or could not take it", exchangeName(e.m.Exchange), e.m.RoutingKey)
}

// onBroker is the suffix of a live failure message: what the simulator
// predicts.
func (p *prober) onBroker(pred prediction, o Outcome) string {
	switch {
	case pred.problem != "":
		return " on the broker, where the simulator says: " + pred.problem
	case len(pred.unsure) > 0:
		return " on the broker (the simulator cannot tell: " + strings.Join(pred.unsure, "; ") + ")"
	case slices.Equal(pred.queues, o.Got):
		return " on the broker, as the simulator predicts"
	default:
		return " on the broker, but the simulator predicts " + list(pred.queues)
	}
}

// purge empties every queue (streams cannot be purged; their old
// messages carry other message ids).
func (p *prober) purge() error {
	for _, q := range p.queues {
		if _, err := p.ch.QueuePurge(q, false); err != nil {
			return fmt.Errorf("purge queue %q: %w", q, err)
		}
	}
	return nil
}

// publish sends the probe, mandatory, and waits for the broker's confirm.
// It reports whether the message reached a queue (false: returned as
// unroutable).
//
// A probe whose headers hold a table of two or more fields goes through
// the management API, which sends the table's fields sorted by name, as
// a binding declared through it (as mqctl declares them) holds them:
// RabbitMQ compares a table field by field in the order sent, and
// amqp091-go sends a table in Go's map order, so over AMQP such a probe
// matched an equal binding about one time in two (the simulator names the
// cause: a client's field order).
func (p *prober) publish(ctx context.Context, m topology.TestMessage, id, expiration string) (bool, error) {
	if topology.HasMultiFieldTable(map[string]any(m.Headers)) && broker.HeadersPublishable(m.Headers) {
		routed, err := p.c.Publish(ctx, p.vhost, broker.Publishing{Exchange: m.Exchange, RoutingKey: m.RoutingKey,
			MessageID: id, Expiration: expiration, ContentType: "text/plain", Headers: m.Headers, Body: ProbeBody})
		if errors.Is(err, broker.ErrPublishRefused) {
			return false, &refusedError{m: m}
		}
		return routed, err
	}
	headers, err := table(m.Headers)
	if err != nil {
		return false, err
	}
	msg := amqp.Publishing{MessageId: id, Headers: headers, Expiration: expiration, ContentType: "text/plain",
		Body: []byte(ProbeBody)}
	dc, err := p.ch.PublishWithDeferredConfirmWithContext(ctx, m.Exchange, m.RoutingKey, true, false, msg)
	if err != nil {
		return false, fmt.Errorf("publish the probe to %s: %w", exchangeName(m.Exchange), err)
	}
	cctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	acked, err := dc.WaitContext(cctx)
	if err != nil {
		return false, fmt.Errorf("waiting for the broker to confirm the probe: %w", err)
	}
	if !acked {
		return false, &refusedError{m: m}
	}
	// A mandatory message that reached no queue is returned before the
	// broker confirms it.
	routed := true
	for {
		select {
		case r := <-p.returns:
			if r.MessageId == id {
				routed = false
			}
			continue
		default:
		}
		return routed, nil
	}
}

// collect reads every queue, again and again, and returns the queues
// holding a copy that match accepts, sorted:
//   - without exact, as soon as every queue of want holds one;
//   - with exact, 200ms after every queue of want holds one (in case
//     another queue gets one too), or, when some are still missing, a
//     second after the first copy arrived: the broker routes a message (or
//     a dead letter) to all its queues at once, so a queue still without a
//     copy by then gets none. A missing stream is waited for longer, as a
//     consumer reads it.
//
// Until a first copy arrives it looks for at most wait: only a message
// that lands nowhere takes that long.
func (p *prober) collect(ctx context.Context, wait time.Duration, want []string, match func(copyOf) bool, exact bool) ([]string, error) {
	deadline := time.Now().Add(wait)
	var firstAt, allAt time.Time
	for {
		if err := p.sweep(); err != nil {
			return nil, err
		}
		found := map[string]bool{}
		for _, c := range slices.Concat(p.seen, p.streams.copies()) {
			if match(c) {
				found[c.queue] = true
			}
		}
		now := time.Now()
		stopAt := deadline
		missingStream := false
		for _, q := range want {
			missingStream = missingStream || (!found[q] && slices.Contains(p.streams.names, q))
		}
		switch {
		case len(want) > 0 && len(found) >= len(want) && containsAll(found, want):
			if !exact {
				return sortedKeys(found), nil
			}
			if allAt.IsZero() {
				allAt = now
			}
			stopAt = allAt.Add(200 * time.Millisecond)
		case exact && len(found) > 0 && !missingStream:
			if firstAt.IsZero() {
				firstAt = now
			}
			if t := firstAt.Add(time.Second); t.Before(stopAt) {
				stopAt = t
			}
		}
		if !now.Before(stopAt) {
			return sortedKeys(found), nil
		}
		if err := sleep(ctx, min(50*time.Millisecond, stopAt.Sub(now))); err != nil {
			return nil, err
		}
	}
}

func containsAll(found map[string]bool, want []string) bool {
	for _, q := range want {
		if !found[q] {
			return false
		}
	}
	return true
}

// sweep drains every queue once with basic.get, recording each message
// in p.seen. Every message is acknowledged, except the copy of probe
// p.rejectID in queue p.reject, which is rejected (requeue=false) so that
// the broker dead-letters it.
func (p *prober) sweep() error {
	for _, q := range p.queues {
		if q == p.skip {
			continue
		}
		for range 10000 {
			d, ok, err := p.ch.Get(q, false)
			if err != nil {
				return fmt.Errorf("read queue %q: %w", q, err)
			}
			if !ok {
				break
			}
			c := copyOf{id: d.MessageId, queue: q}
			c.diedIn, c.reason = latestDeath(d.Headers)
			p.seen = append(p.seen, c)
			if p.reject == q && c.id == p.rejectID && c.diedIn == "" {
				p.reject = "" // once
				if err := d.Nack(false, false); err != nil {
					return fmt.Errorf("reject the probe in queue %q: %w", q, err)
				}
				continue
			}
			if err := d.Ack(false); err != nil {
				return fmt.Errorf("acknowledge a message of queue %q: %w", q, err)
			}
		}
	}
	return nil
}

// latestDeath reads the newest x-death entry: the queue the message was
// last dead-lettered from, and why.
func latestDeath(h amqp.Table) (queue, reason string) {
	deaths, _ := h["x-death"].([]any)
	if len(deaths) == 0 {
		return "", ""
	}
	e, _ := deaths[0].(amqp.Table)
	queue, _ = e["queue"].(string)
	reason, _ = e["reason"].(string)
	return queue, reason
}

// table converts message headers into an AMQP table.
func table(h map[string]any) (amqp.Table, error) {
	t, err := broker.AMQPTable(h)
	if err != nil {
		return nil, fmt.Errorf("probe headers: %w", err)
	}
	return t, nil
}

func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

func sortedKeys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b) // crypto/rand.Read never fails (Go 1.24+)
	return hex.EncodeToString(b)
}

func plural(w string, n int) string {
	if n == 1 {
		return w
	}
	return w + "s"
}

// tagsPhrase names a user's tags for a message.
func tagsPhrase(tags []string) string {
	if len(tags) == 0 {
		return "no tags"
	}
	return "the tags " + strings.Join(tags, ", ")
}
