package difftest

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sort"
	"strings"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/mqctl/mqctl/internal/randtopo"
	"github.com/mqctl/mqctl/pkg/apply"
	"github.com/mqctl/mqctl/pkg/broker"
	"github.com/mqctl/mqctl/pkg/plan"
	"github.com/mqctl/mqctl/pkg/rmqversion"
	"github.com/mqctl/mqctl/pkg/topology"
)

// Apply declares cs's topology in its vhost, which must exist and hold
// nothing of it yet: everything the management API can declare through
// plan and apply, then the bindings only AMQP can declare on conn.
func Apply(ctx context.Context, c *broker.Client, conn *amqp.Connection, cs *Case) error {
	v := *cs.Vhost
	v.Bindings = nil
	amqpOnly := map[*topology.Binding]bool{}
	for _, b := range cs.AMQPOnly {
		amqpOnly[b] = true
	}
	for _, b := range cs.Vhost.Bindings {
		if !amqpOnly[b] {
			v.Bindings = append(v.Bindings, b)
		}
	}
	desired := topology.New()
	desired.Vhosts[v.Name] = &v
	current := topology.New()
	current.Vhosts[v.Name] = topology.NewVhost(v.Name)
	p := plan.Diff(desired, plan.Current{Live: topology.Live{State: current}})
	// One request at a time: RabbitMQ 4.0 reads a vhost's policies before
	// the transaction that applies them to its queues and exchanges
	// (rabbit_policy:update_matched_objects, rabbit_db_policy:update at
	// v4.0.5; 3.10.8 reads them inside it), so two policies put at once
	// can leave a queue with the policies one of them saw: a lost policy
	// (seen as dead letters a policy's DLX should have routed, seeds 14
	// and 38 of a 4.0 run).
	res := apply.Execute(ctx, c, p, apply.Options{Parallelism: 1})
	if !res.OK() {
		var msgs []string
		for _, f := range res.Failed {
			msgs = append(msgs, fmt.Sprintf("%s: %v", f.Step, f.Err))
		}
		if res.RecordErr != nil {
			msgs = append(msgs, res.RecordErr.Error())
		}
		return fmt.Errorf("apply to vhost %q: %d failed, %d not run: %s", v.Name, len(res.Failed), len(res.Remaining), strings.Join(msgs, "; "))
	}
	if len(cs.AMQPOnly) == 0 {
		return nil
	}
	ch, err := conn.Channel()
	if err != nil {
		return fmt.Errorf("open a channel to bind: %w", err)
	}
	defer ch.Close()
	for _, b := range cs.AMQPOnly {
		args := amqp.Table(map[string]any(b.Arguments))
		if b.DestinationType == topology.DestExchange {
			err = ch.ExchangeBind(b.Destination, b.RoutingKey, b.Source, false, args)
		} else {
			err = ch.QueueBind(b.Destination, b.RoutingKey, b.Source, false, args)
		}
		if err != nil {
			return fmt.Errorf("bind %s %q to exchange %q with %s through AMQP: %w", b.DestinationType, b.Destination, b.Source, b.Arguments.Canonical(), err)
		}
	}
	return nil
}

// Options tune Run.
type Options struct {
	// Rounds is how many times the copies that arrived are rejected (some
	// of them) and the dead letters followed; 0 means 2.
	Rounds int
	// Settle is how long Run waits for copies the simulator predicts but
	// that have not arrived; 0 means 3s. Runs without disagreements never
	// wait for it.
	Settle time.Duration
	// MaxCopies caps the copies a rejection round may produce; 0 means
	// 400.
	MaxCopies int
	// Reject, when set, says which copies to reject (by queue) instead of
	// a seeded random choice.
	Reject func(queue string) bool
	// Version is the broker's RabbitMQ version (GET /api/overview
	// rabbitmq_version; see BrokerVersion), whose rules the simulator
	// follows. The zero Version is rmqversion.Default (4.3).
	Version rmqversion.Version
}

// BrokerVersion returns the version c's broker reports in GET
// /api/overview (rabbitmq_version), for Options.Version; an error when it
// reports none that parses.
func BrokerVersion(c *broker.Client) (rmqversion.Version, error) {
	v, err := rmqversion.Parse(c.Version())
	if err != nil {
		return rmqversion.Version{}, fmt.Errorf("the broker's version (GET /api/overview rabbitmq_version): %w", err)
	}
	return v, nil
}

// Disagreement is one message for which the broker and the simulator
// differ.
type Disagreement struct {
	Stage     string // "publish", "round 1", …
	Message   Message
	Simulator []string
	Broker    []string
}

// Stats count what a run compared.
type Stats struct {
	Topologies int
	Messages   int // published (or refused)
	Refused    int // publishes the broker refused (internal or missing exchange)
	Returned   int // publishes returned as unroutable
	Copies     int // copies found in queues and compared, over all rounds
	Rejected   int // copies rejected, whose dead letters were followed
	// Looping counts copies not rejected because the simulator says their
	// dead letters would then circle between TTL queues for ever.
	Looping int
	// DeadLetters counts the copies found that are dead letters, by the
	// reason of their latest death.
	DeadLetters map[string]int
	// Disagreements counts the messages the broker and the simulator
	// disagreed on (Result.Disagreements).
	Disagreements int
}

// Add adds o to s.
func (s *Stats) Add(o Stats) {
	s.Topologies += o.Topologies
	s.Messages += o.Messages
	s.Refused += o.Refused
	s.Returned += o.Returned
	s.Copies += o.Copies
	s.Rejected += o.Rejected
	s.Looping += o.Looping
	s.Disagreements += o.Disagreements
	for k, n := range o.DeadLetters {
		if s.DeadLetters == nil {
			s.DeadLetters = map[string]int{}
		}
		s.DeadLetters[k] += n
	}
}

// Result is what Run found.
type Result struct {
	Disagreements []Disagreement
	Stats         Stats
	// Found lists, stage by stage ("publish", "round 1", …), the copies
	// the broker held, each as "id queue" and its dead-letter headers
	// (deathSignature), sorted: what a test states as the answer.
	Found map[string][]string
}

type runner struct {
	conn  *amqp.Connection
	cs    *Case
	opts  Options
	p     *predictor
	ch    *amqp.Channel
	msgs  map[string]Message
	res   *Result
	skip  map[string]bool // messages already in disagreement at publish
	stage string
}

// Run publishes the case's messages on conn (its vhost holding the applied
// topology) and compares, message by message, the broker with the
// simulator: whether the publish is refused or returned as unroutable,
// which queues hold a copy, and, over opts.Rounds rounds of rejecting some
// copies, where the dead letters go. Messages that queues pass on at once
// (queue TTLs of 0 or 1 ms, a length limit of 0, per-message expiration 0)
// are followed as dead letters as they happen. An error means the run
// itself failed (a channel closed unexpectedly).
func Run(ctx context.Context, conn *amqp.Connection, cs *Case, opts Options) (*Result, error) {
	if opts.Rounds <= 0 {
		opts.Rounds = 2
	}
	if opts.Settle <= 0 {
		opts.Settle = 3 * time.Second
	}
	if opts.MaxCopies <= 0 {
		opts.MaxCopies = 400
	}
	r := &runner{conn: conn, cs: cs, opts: opts, p: newPredictor(cs.Vhost, opts.Version), msgs: map[string]Message{}, res: &Result{Found: map[string][]string{}}, skip: map[string]bool{}}
	r.res.Stats.Topologies = 1
	ch, err := conn.Channel()
	if err != nil {
		return nil, fmt.Errorf("open a channel: %w", err)
	}
	defer ch.Close()
	r.ch = ch
	for _, m := range cs.Messages {
		r.msgs[m.ID] = m
	}

	r.stage = "publish"
	expected, err := r.publish(ctx)
	if err != nil {
		return nil, err
	}
	for round := 0; ; round++ {
		found, err := r.drain(ctx, len(expected))
		if err != nil {
			return nil, err
		}
		matched := r.compare(expected, found)
		r.res.Stats.Copies += len(found)
		for _, f := range found {
			r.res.Found[r.stage] = append(r.res.Found[r.stage], f.answer)
		}
		sort.Strings(r.res.Found[r.stage])
		if round == opts.Rounds {
			for _, f := range found {
				if err := ch.Ack(f.tag, false); err != nil {
					return nil, fmt.Errorf("ack: %w", err)
				}
			}
			break
		}
		r.stage = fmt.Sprintf("round %d", round+1)
		expected, err = r.reject(round, found, matched)
		if err != nil {
			return nil, err
		}
	}
	r.res.Stats.Disagreements = len(r.res.Disagreements)
	return r.res, nil
}

func (r *runner) disagree(m Message, sim, brk []string) {
	r.res.Disagreements = append(r.res.Disagreements, Disagreement{Stage: r.stage, Message: m, Simulator: sim, Broker: brk})
}

// mayBeRefused reports whether the broker may refuse a publish of m: its
// exchange is internal or not declared. Such publishes go on a channel of
// their own, which the refusal closes.
func (r *runner) mayBeRefused(m Message) bool {
	for _, h := range []string{"CC", "BCC"} {
		if v, ok := m.Headers[h]; ok {
			if _, isArray := v.([]any); !isArray {
				return true
			}
		}
	}
	if m.Exchange == "" {
		return false
	}
	if x := r.cs.Vhost.Exchanges[m.Exchange]; x != nil {
		return x.Internal
	}
	for _, b := range randtopo.BuiltinSources() {
		if b == m.Exchange {
			return false
		}
	}
	return true
}

func publishing(m Message) amqp.Publishing {
	var h amqp.Table
	if m.Headers != nil {
		h = wire(m.Headers).(amqp.Table)
	}
	return amqp.Publishing{MessageId: m.ID, Headers: h, Expiration: m.Expiration, Body: []byte("difftest " + m.ID)}
}

// wire returns v with every table as an amqp.Table, the type the client
// encodes as a field table.
func wire(v any) any {
	switch x := v.(type) {
	case map[string]any:
		t := make(amqp.Table, len(x))
		for k, e := range x {
			t[k] = wire(e)
		}
		return t
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = wire(e)
		}
		return out
	}
	return v
}

// publish sends every message (mandatory, with confirms), compares
// refusals and returns, and returns the copies the simulator expects.
func (r *runner) publish(ctx context.Context) ([]copyState, error) {
	if err := r.ch.Confirm(false); err != nil {
		return nil, fmt.Errorf("confirm mode: %w", err)
	}
	returns := r.ch.NotifyReturn(make(chan amqp.Return, len(r.cs.Messages)+1))
	type sent struct {
		m  Message
		dc *amqp.DeferredConfirmation
	}
	var pending []sent
	outcome := map[string]string{} // message id -> "refused: …", "returned", "routed"
	for _, m := range r.cs.Messages {
		r.res.Stats.Messages++
		if r.mayBeRefused(m) {
			o, err := r.publishAlone(ctx, m)
			if err != nil {
				return nil, err
			}
			outcome[m.ID] = o
			continue
		}
		dc, err := r.ch.PublishWithDeferredConfirmWithContext(ctx, m.Exchange, m.RoutingKey, true, false, publishing(m))
		if err != nil {
			return nil, fmt.Errorf("publish %s: %w", m.ID, err)
		}
		pending = append(pending, sent{m, dc})
	}
	for _, s := range pending {
		ok, err := s.dc.WaitContext(ctx)
		if err != nil {
			return nil, fmt.Errorf("confirm of %s: %w", s.m.ID, err)
		}
		outcome[s.m.ID] = "routed"
		if !ok {
			outcome[s.m.ID] = "nacked by the broker"
		}
	}
	// Returns come before the confirm of the same publish.
	for len(returns) > 0 {
		ret := <-returns
		outcome[ret.MessageId] = "returned"
	}

	var expected []copyState
	for _, m := range r.cs.Messages {
		res := r.p.sim.Publish(m.Message)
		want := "routed"
		if why := refusal(res); why != "" {
			want = "refused: " + why
		} else if len(res.Deliveries) == 0 {
			want = "returned"
		}
		got := outcome[m.ID]
		switch got {
		case "returned":
			r.res.Stats.Returned++
		case "refused: internal", "refused: not found", "refused: precondition failed":
			r.res.Stats.Refused++
		}
		if got != want {
			r.skip[m.ID] = true
			sim := []string{want}
			sim = append(sim, res.Problems...)
			sim = append(sim, describeDeliveries(res)...)
			r.disagree(m, sim, []string{got})
			continue
		}
		cs, err := r.p.published(m, res)
		if err != nil {
			return nil, err
		}
		expected = append(expected, cs...)
	}
	return expected, nil
}

func describeDeliveries(res interface{ Queues() []string }) []string {
	if q := res.Queues(); len(q) > 0 {
		return []string{"queues " + strings.Join(q, ", ")}
	}
	return nil
}

// publishAlone publishes m on a channel of its own and says what the
// broker did: "refused: internal" (403), "refused: not found" (404),
// "returned" or "routed".
func (r *runner) publishAlone(ctx context.Context, m Message) (string, error) {
	ch, err := r.conn.Channel()
	if err != nil {
		return "", fmt.Errorf("open a channel: %w", err)
	}
	defer ch.Close()
	if err := ch.Confirm(false); err != nil {
		return "", fmt.Errorf("confirm mode: %w", err)
	}
	closed := ch.NotifyClose(make(chan *amqp.Error, 1))
	returns := ch.NotifyReturn(make(chan amqp.Return, 1))
	dc, err := ch.PublishWithDeferredConfirmWithContext(ctx, m.Exchange, m.RoutingKey, true, false, publishing(m))
	if err != nil {
		return "", fmt.Errorf("publish %s: %w", m.ID, err)
	}
	select {
	case e := <-closed:
		return refused(m, e)
	case <-dc.Done():
	case <-ctx.Done():
		return "", ctx.Err()
	}
	// A channel closed by the broker also settles the pending confirm;
	// the close notice is sent first.
	select {
	case e := <-closed:
		return refused(m, e)
	default:
	}
	if len(returns) > 0 {
		return "returned", nil
	}
	if !dc.Acked() {
		return "nacked by the broker", nil
	}
	return "routed", nil
}

func refused(m Message, e *amqp.Error) (string, error) {
	switch {
	case e == nil:
		return "", fmt.Errorf("publish %s: channel closed without a reason", m.ID)
	case e.Code == amqp.AccessRefused:
		return "refused: internal", nil
	case e.Code == amqp.NotFound:
		return "refused: not found", nil
	case e.Code == amqp.PreconditionFailed:
		return "refused: precondition failed", nil
	}
	return "refused: " + e.Error(), nil
}

// foundCopy is a copy taken from a queue with basic.get, not yet acked.
type foundCopy struct {
	key   string
	id    string
	queue string
	tag   uint64
	desc  string
	// answer is "id queue" and the dead-letter headers, for Result.Found.
	answer string
}

func (r *runner) found(queue string, d amqp.Delivery) foundCopy {
	h := map[string]any(d.Headers)
	ex := d.Exchange
	if ex == "" {
		ex = "(default)"
	}
	desc := fmt.Sprintf("%s (exchange %s, key %q", queue, ex, d.RoutingKey)
	if sig := deathSignature(h); sig != "" {
		desc += ", " + sig
	}
	desc += ")"
	if deaths, ok := h["x-death"].([]any); ok && len(deaths) > 0 {
		if reason, ok := asTable(deaths[0])["reason"].(string); ok {
			if r.res.Stats.DeadLetters == nil {
				r.res.Stats.DeadLetters = map[string]int{}
			}
			r.res.Stats.DeadLetters[reason]++
		}
	}
	answer := d.MessageId + " " + queue
	if sig := deathSignature(h); sig != "" {
		answer += " " + sig
	}
	return foundCopy{key: copyKey(d.MessageId, queue, d.Exchange, d.RoutingKey, h), id: d.MessageId, queue: queue, tag: d.DeliveryTag, desc: desc, answer: answer}
}

// drain takes every copy out of the queues that keep them (basic.get, not
// acked) until want copies arrived and nothing else moves, or until
// nothing arrived for opts.Settle. Queues the simulator says keep no
// message (TTL or length limit) are only watched: a message that stays in
// one too long is requeued (so that its TTL can act), and taken in the
// end.
func (r *runner) drain(ctx context.Context, want int) ([]foundCopy, error) {
	var out []foundCopy
	// Copies that keep coming (a dead-letter loop the simulator did not
	// predict) must not keep the run going.
	limit := 4*want + 500
	lastNew := time.Now()
	stuck := map[string]time.Time{}
	calm := false
	for {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		n := 0
		for _, q := range r.p.queues {
			if isPassOn(r.p, q) {
				continue
			}
			for {
				d, ok, err := r.ch.Get(q, false)
				if err != nil {
					return nil, fmt.Errorf("basic.get from %s: %w", q, err)
				}
				if !ok {
					break
				}
				out = append(out, r.found(q, d))
				n++
				if len(out) > limit {
					break
				}
			}
		}
		waiting := 0
		for _, q := range r.p.queues {
			if !isPassOn(r.p, q) {
				continue
			}
			qi, err := r.ch.QueueDeclarePassive(q, true, false, false, false, nil)
			if err != nil {
				return nil, fmt.Errorf("passive declare of %s: %w", q, err)
			}
			if qi.Messages == 0 {
				delete(stuck, q)
				continue
			}
			waiting += qi.Messages
			since, ok := stuck[q]
			if !ok {
				stuck[q] = time.Now()
			} else if time.Since(since) > 500*time.Millisecond {
				// Still there: put it back at the head, where TTLs act.
				if d, ok, err := r.ch.Get(q, false); err == nil && ok {
					if err := r.ch.Nack(d.DeliveryTag, false, true); err != nil {
						return nil, fmt.Errorf("requeue in %s: %w", q, err)
					}
				}
				stuck[q] = time.Now()
			}
		}
		if n > 0 {
			lastNew = time.Now()
			calm = false
		}
		quiet := time.Since(lastNew)
		switch {
		case len(out) > limit:
			return out, nil
		case n == 0 && waiting == 0 && len(out) == want:
			if calm {
				return out, nil
			}
			calm = true // look once more: a late copy may be on its way
		case len(out) > want && waiting == 0 && quiet > 200*time.Millisecond:
			return out, nil
		case quiet > r.opts.Settle:
			for _, q := range r.p.queues {
				if !isPassOn(r.p, q) {
					continue
				}
				for {
					d, ok, err := r.ch.Get(q, false)
					if err != nil {
						return nil, fmt.Errorf("basic.get from %s: %w", q, err)
					}
					if !ok {
						break
					}
					out = append(out, r.found(q, d))
					if len(out) > limit {
						break
					}
				}
			}
			return out, nil
		}
		if n == 0 {
			select {
			case <-ctx.Done():
				return nil, ctx.Err()
			case <-time.After(5 * time.Millisecond):
			}
		}
	}
}

// match pairs a found copy with the simulator's state of it.
type match struct {
	f foundCopy
	c copyState
}

// compare pairs found copies with expected ones by key and reports, per
// message, the copies only one side has.
func (r *runner) compare(expected []copyState, found []foundCopy) []match {
	byKey := map[string][]copyState{}
	for _, c := range expected {
		byKey[c.key()] = append(byKey[c.key()], c)
	}
	for k := range byKey {
		cs := byKey[k]
		sort.SliceStable(cs, func(i, j int) bool {
			return strings.Join(cs[i].history, ";") < strings.Join(cs[j].history, ";")
		})
	}
	sort.SliceStable(found, func(i, j int) bool { return found[i].key < found[j].key })
	var matched []match
	extra := map[string][]string{}
	for _, f := range found {
		if cs := byKey[f.key]; len(cs) > 0 {
			matched = append(matched, match{f: f, c: cs[0]})
			byKey[f.key] = cs[1:]
			continue
		}
		extra[f.id] = append(extra[f.id], f.desc)
	}
	missing := map[string][]copyState{}
	for _, cs := range byKey {
		for _, c := range cs {
			missing[c.id] = append(missing[c.id], c)
		}
	}
	ids := map[string]bool{}
	for id := range extra {
		ids[id] = true
	}
	for id := range missing {
		ids[id] = true
	}
	sorted := make([]string, 0, len(ids))
	for id := range ids {
		sorted = append(sorted, id)
	}
	sort.Strings(sorted)
	for _, id := range sorted {
		if r.skip[id] {
			continue
		}
		m, ok := r.msgs[id]
		if !ok {
			m = Message{ID: id}
		}
		// Both sides in full for this message, so the difference shows.
		var sim, brk []string
		for _, c := range expected {
			if c.id == id {
				sim = append(sim, describeCopies([]copyState{c})...)
			}
		}
		for _, f := range found {
			if f.id == id {
				brk = append(brk, f.desc)
			}
		}
		sort.Strings(sim)
		sort.Strings(brk)
		r.disagree(m, orNone(sim), orNone(brk))
	}
	return matched
}

func orNone(s []string) []string {
	if len(s) == 0 {
		return []string{"no copy in any queue"}
	}
	return s
}

// reject rejects some matched copies (more often where the queue has a
// dead-letter exchange), acks the rest, and returns the copies the
// simulator expects next.
func (r *runner) reject(round int, found []foundCopy, matched []match) ([]copyState, error) {
	rng := rand.New(rand.NewPCG(r.cs.Seed, uint64(round)+1))
	rejected := map[uint64]bool{}
	var expected []copyState
	for _, mt := range matched {
		if r.opts.Reject != nil {
			if !r.opts.Reject(mt.c.queue) {
				continue
			}
		} else {
			chance := 25
			if r.p.sim.QueueArgs(mt.c.queue).Has("x-dead-letter-exchange") {
				chance = 70
			}
			if rng.IntN(100) >= chance {
				continue
			}
		}
		next, err := r.p.rejected(mt.c)
		var loop *loopError
		if errors.As(err, &loop) {
			// The broker would keep the dead letters moving for ever:
			// nothing settles to compare (TestKnownCases proves the loop).
			r.res.Stats.Looping++
			continue
		}
		if err != nil {
			return nil, err
		}
		if len(expected)+len(next) > r.opts.MaxCopies {
			continue
		}
		rejected[mt.f.tag] = true
		expected = append(expected, next...)
	}
	for _, f := range found {
		var err error
		if rejected[f.tag] {
			r.res.Stats.Rejected++
			err = r.ch.Nack(f.tag, false, false)
		} else {
			err = r.ch.Ack(f.tag, false)
		}
		if err != nil {
			return nil, fmt.Errorf("settle %s in %s: %w", f.id, f.queue, err)
		}
	}
	return expected, nil
}

func isPassOn(p *predictor, q string) bool {
	_, ok := p.passOn[q]
	return ok
}
