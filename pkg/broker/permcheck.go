package broker

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"regexp"
	"sync"
	"sync/atomic"

	amqp "github.com/rabbitmq/amqp091-go"
)

// The management API shows a user who is not an administrator none of
// its own permissions (GET /api/permissions/{vhost}/{user} and
// /api/users/{user}/permissions answer 401 "Not administrator user" on
// 3.10.8, 4.0.5 and 4.3.6; /api/whoami gives only the name and tags), so
// an apply by such a user would learn that one is missing only when the
// broker refuses a change, after the ones before it were made.
// MissingPermissions asks the broker instead, over AMQP, with operations
// that RabbitMQ refuses, or that fail, before they change anything
// (rabbit_channel, 3.10 to 4.3, proven on 3.10.8, 4.0.5 and 4.3.6 by
// TestMissingPermissions):
//
//   - configure on a queue: queue.declare (not passive) of its name with
//     x-max-length -1. RabbitMQ checks configure on the name first; then a
//     queue that exists is compared with the declaration (PRECONDITION_FAILED
//     "inequivalent arg", it is left as it is) and a new one has its
//     arguments checked before it is made (PRECONDITION_FAILED "invalid
//     arg"): nothing is created either way.
//   - configure on an exchange: exchange.declare of its name, type direct,
//     with an alternate-exchange that is a number: configure first; an
//     exchange that exists is compared (declaring one never changes it), a
//     new one is refused for the argument's type before it is made.
//   - read on a queue: basic.consume with x-priority a string: read first,
//     then NOT_FOUND for a queue that does not exist, or PRECONDITION_FAILED
//     for the argument before any consumer is registered.
//   - write on a queue or an exchange: an unbind from amq.direct (amq.fanout
//     for amq.direct itself) with a routing key and an argument no binding
//     has: write on the destination first.
//   - read on an exchange: an unbind from it to the destination of the
//     binding that needs it (Need.Via), with the binding's own routing key
//     (the topic permissions are checked on it) and an argument no binding
//     has: write on the destination, then read on the exchange, then (a
//     topic exchange that exists) the topic permission on the key, then
//     nothing to remove. One answer tells the write on the destination
//     and the read on the exchange.
//   - configure on a queue declared with a dead-letter exchange, and read
//     on it and write on that exchange: a queue.declare as for configure
//     alone, with the dead-letter exchange: for a queue that does not
//     exist, configure, then read on the queue and write on the exchange
//     are checked before the arguments ("invalid arg 'x-max-length'" says
//     all three are there).
//
// Each distinct question is asked once, over a few channels at a time
// (most probes fail, and a failure closes its channel: a probe costs the
// broker a channel). Only the probes the answers before them do not
// settle are made.
//
// None of these removes, creates or changes anything, whatever exists when
// it runs: an unbind carries an argument of mqctl's with a value made for
// this check, so it matches no binding (never a queue.delete or a
// basic.get, which a queue declared in between would lose to).

// Need is one permission an operation of an apply needs in a vhost.
type Need struct {
	// Perm is "configure", "write" or "read".
	Perm string
	// Kind is "queue" or "exchange"; Name its name.
	Kind, Name string
	// ViaKind and Via name, for read on an exchange, the destination of
	// the binding (or the alternate exchange) that needs it: the probe
	// unbinds from the exchange to it, so it needs write there (a Need of
	// its own). With TopicKey, RoutingKey is that binding's key, whose
	// topic permission is checked too (Topic, in the answer).
	ViaKind, Via string
	RoutingKey   string
	TopicKey     bool
	// DeadLetter, for configure on a queue declared with a dead-letter
	// exchange, is that exchange (HasDeadLetter set; "" is the default
	// exchange): the probe declares the queue with it, which for a queue
	// that does not exist proves read on the queue and write on the
	// exchange in the same answer (rabbit_channel checks configure, then
	// read on the queue and write on the dead-letter exchange, then the
	// arguments).
	DeadLetter    string
	HasDeadLetter bool
	// Topic is set in an answer when what is missing is the topic
	// permission (read) on RoutingKey in exchange Name, not the vhost
	// permission.
	Topic bool
}

func (n Need) res() resource { return resource{n.Kind, n.Name} }

// MissingPermissions returns the needs the user lacks in vhost, each
// once (the writes first, then the reads on exchanges, each in the order
// given), asking the broker over one AMQP connection to the vhost
// at amqpURL (see above). A read on an exchange whose Via the user may not
// write to cannot be told: it is left out (the write is missing, and said
// when it is one of needs).
// The error is for a check that could not be made (the connection, or an
// answer that says nothing about permissions).
func (c *Client) MissingPermissions(ctx context.Context, amqpURL, vhost string, needs []Need) ([]Need, error) {
	missing, _, _, err := c.missingPermissions(ctx, amqpURL, vhost, needs)
	return missing, err
}

// missingPermissions is MissingPermissions, with the probes it made and
// the channels it opened.
func (c *Client) missingPermissions(ctx context.Context, amqpURL, vhost string, needs []Need) (missing []Need, probes, channels int64, err error) {
	if len(needs) == 0 {
		return nil, 0, 0, nil
	}
	conn, err := DialAMQP(ctx, AMQPDial{URL: amqpURL, Vhost: vhost, TLS: c.TLSConfig(), Name: "mqctl permission check"})
	if err != nil {
		return nil, 0, 0, err
	}
	defer conn.Close()
	pc := &permChecker{conn: conn, mark: probeMark(), said: map[Need]bool{}, topicSaid: map[Need]bool{}}
	wrap := func(err error) error {
		return fmt.Errorf("check the permissions of user %q in vhost %q: %w", c.user, vhost, err)
	}
	// The reads on exchanges, each answer telling the write on its
	// destination too, and configure (with the read and write a
	// dead-letter exchange needs); then what is left.
	var reads, configures, rest []Need
	queued := map[Need]bool{}
	for _, n := range needs {
		switch {
		case n.Perm == "read" && n.Kind == "exchange":
			k := Need{Perm: n.Perm, Kind: n.Kind, Name: n.Name, ViaKind: n.ViaKind, Via: n.Via, TopicKey: n.TopicKey}
			if n.TopicKey {
				k.RoutingKey = n.RoutingKey
			}
			if !queued[k] {
				queued[k] = true
				reads = append(reads, k)
			}
		case n.Perm == "configure":
			k := Need{Perm: n.Perm, Kind: n.Kind, Name: n.Name, DeadLetter: n.DeadLetter, HasDeadLetter: n.HasDeadLetter && n.Kind == "queue"}
			if !queued[k] {
				queued[k] = true
				configures = append(configures, k)
			}
		}
	}
	if err := pc.each(ctx, append(reads, configures...)); err != nil {
		return nil, pc.stats.probes.Load(), pc.stats.channels.Load(), wrap(err)
	}
	for _, n := range needs {
		if n.Perm == "read" && n.Kind == "exchange" {
			continue
		}
		k := n.plain()
		if _, known := pc.known(k); !known && !queued[k] {
			queued[k] = true
			rest = append(rest, k)
		}
	}
	if err := pc.each(ctx, rest); err != nil {
		return nil, pc.stats.probes.Load(), pc.stats.channels.Load(), wrap(err)
	}
	seen := map[Need]bool{}
	add := func(m Need) {
		if !seen[m] {
			seen[m] = true
			missing = append(missing, m)
		}
	}
	for _, n := range needs {
		if n.Perm == "read" && n.Kind == "exchange" {
			continue
		}
		if lacks, _ := pc.known(n.plain()); lacks {
			add(n.plain())
		}
	}
	for _, n := range needs {
		if n.Perm != "read" || n.Kind != "exchange" {
			continue
		}
		if lacks, known := pc.known(Need{Perm: "write", Kind: n.ViaKind, Name: n.Via}); lacks || !known {
			continue // the read cannot be told
		}
		plain := n.plain()
		if lacks, known := pc.known(plain); lacks {
			add(plain)
			continue
		} else if !known {
			continue
		}
		if n.TopicKey && pc.topicLacks(n.Name, n.RoutingKey) {
			add(Need{Perm: "read", Kind: "exchange", Name: n.Name, RoutingKey: n.RoutingKey, Topic: true})
		}
	}
	return missing, pc.stats.probes.Load(), pc.stats.channels.Load(), nil
}

// plain is n as a permission: perm, kind and name.
func (n Need) plain() Need { return Need{Perm: n.Perm, Kind: n.Kind, Name: n.Name} }

// probeMark is the value of the probes' unbind argument: made for this
// check, so that no binding has it.
func probeMark() string {
	b := make([]byte, 12)
	_, _ = rand.Read(b)
	return "mqctl-permission-check-" + hex.EncodeToString(b)
}

// probeArg is the argument mqctl's unbind probes carry.
const probeArg = "x-mqctl-permission-check"

// probeChannels is how many probes run at a time, each on its own
// channel of the check's connection. A probe that fails costs the broker
// a channel (about 0.5 ms of its CPU), one that passes (an unbind) a
// metadata store write, which many at a time share: 16 made the check of
// 5,000 queues (10,000 objects) take 3 s where one at a time took 10 s.
const probeChannels = 16

// probeStats counts the probes made and the channels opened.
type probeStats struct{ probes, channels atomic.Int64 }

type permChecker struct {
	conn *amqp.Connection
	mark string

	stats probeStats

	mu        sync.Mutex
	said      map[Need]bool // plain need → missing
	topicSaid map[Need]bool // {Name: exchange, RoutingKey: key} → missing
}

func (p *permChecker) known(n Need) (lacks, known bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	lacks, known = p.said[n]
	return lacks, known
}

func (p *permChecker) set(n Need, lacks bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.said[n.plain()] = lacks
}

func (p *permChecker) topicLacks(x, key string) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.topicSaid[Need{Name: x, RoutingKey: key}]
}

// each probes needs, probeChannels at a time.
func (p *permChecker) each(ctx context.Context, needs []Need) error {
	if len(needs) == 0 {
		return nil
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	work := make(chan Need)
	errs := make(chan error, probeChannels)
	var wg sync.WaitGroup
	for range min(probeChannels, len(needs)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			pr := &prober{ctx: ctx, p: p}
			defer pr.close()
			for n := range work {
				if err := pr.probe(n); err != nil {
					errs <- err
					cancel()
					return
				}
			}
		}()
	}
feed:
	for _, n := range needs {
		select {
		case work <- n:
		case <-ctx.Done():
			break feed
		}
	}
	close(work)
	wg.Wait()
	select {
	case err := <-errs:
		return err
	default:
	}
	return ctx.Err()
}

// prober makes probes on a channel of its own.
type prober struct {
	ctx context.Context
	p   *permChecker
	ch  *amqp.Channel // open, or nil
}

func (r *prober) close() {
	if r.ch != nil {
		r.ch.Close()
	}
}

// answer is what the broker said to one probe.
type answer struct {
	refused bool     // ACCESS_REFUSED
	res     resource // the object it names ("" when it names none)
	topic   bool     // a topic permission refused
	reason  string   // the broker's words, for an error
}

// topicRefusedRE matches "access to topic 'k' in exchange 'x' in vhost
// 'v' refused" (3.10; "read access to topic" from 4.0).
var topicRefusedRE = regexp.MustCompile(`access to topic '.*' in exchange '.*' in vhost '.*' refused for user '`)

// try runs f on a channel; a refusal or failure closes the channel, and
// the next probe opens another.
func (r *prober) try(f func(ch *amqp.Channel) error) (answer, error) {
	if err := r.ctx.Err(); err != nil {
		return answer{}, err
	}
	if r.ch == nil {
		ch, err := r.p.conn.Channel()
		if err != nil {
			return answer{}, err
		}
		r.p.stats.channels.Add(1)
		r.ch = ch
	}
	r.p.stats.probes.Add(1)
	err := f(r.ch)
	if err == nil {
		return answer{}, nil
	}
	r.ch = nil // closed by the broker's channel.close
	var ae *amqp.Error
	if !errors.As(err, &ae) {
		return answer{}, err
	}
	switch ae.Code {
	case amqp.AccessRefused:
		a := answer{refused: true, reason: ae.Reason}
		if res, ok := refusedResource(ae.Reason); ok {
			a.res = res
		}
		a.topic = topicRefusedRE.MatchString(ae.Reason)
		return a, nil
	case amqp.PreconditionFailed, amqp.NotFound, amqp.ResourceLocked:
		return answer{reason: ae.Reason}, nil
	}
	return answer{}, fmt.Errorf("the broker answered a permission probe with %d %s", ae.Code, ae.Reason)
}

// refuses says whether a refused the permission of n (perm, kind, name).
func (a answer) refuses(n Need) bool { return a.refused && a.res == n.res() }

// probe asks what n needs that the answers before have not told.
func (r *prober) probe(n Need) error {
	switch {
	case n.Perm == "read" && n.Kind == "exchange":
		return r.readExchange(n)
	case n.Perm == "configure" && n.Kind == "queue" && n.HasDeadLetter:
		return r.configureDeadLettered(n)
	}
	if _, known := r.p.known(n.plain()); known {
		return nil
	}
	var a answer
	var err error
	switch {
	case n.Perm == "configure" && n.Kind == "queue":
		a, err = r.declareQueue(n.Name, nil)
	case n.Perm == "configure" && n.Kind == "exchange":
		a, err = r.try(func(ch *amqp.Channel) error {
			return ch.ExchangeDeclare(n.Name, amqp.ExchangeDirect, true, false, false, false, amqp.Table{"alternate-exchange": int32(0)})
		})
	case n.Perm == "read" && n.Kind == "queue":
		a, err = r.try(func(ch *amqp.Channel) error {
			tag := "mqctl-permission-check"
			_, err := ch.Consume(n.Name, tag, false, false, false, false, amqp.Table{"x-priority": r.p.mark})
			if err == nil {
				// No broker measured takes a string priority; were one
				// to, the consumer goes at once, and what it was sent
				// goes back to the queue unacknowledged.
				_ = ch.Cancel(tag, false)
				ch.Close()
				r.ch = nil
			}
			return err
		})
	case n.Perm == "write":
		source := "amq.direct"
		if n.Name == source && n.Kind == "exchange" {
			source = "amq.fanout"
		}
		a, err = r.try(func(ch *amqp.Channel) error { return r.unbind(ch, n.Kind, n.Name, source, r.p.mark) })
	default:
		return fmt.Errorf("no probe for %s on %s", n.Perm, n.res())
	}
	if err != nil {
		return err
	}
	r.p.set(n, a.refuses(n))
	return nil
}

// declareQueue declares queue name with an x-max-length no queue takes,
// and the arguments in extra.
func (r *prober) declareQueue(name string, extra amqp.Table) (answer, error) {
	return r.try(func(ch *amqp.Channel) error {
		args := amqp.Table{"x-max-length": int32(-1)}
		for k, v := range extra {
			args[k] = v
		}
		_, err := ch.QueueDeclare(name, true, false, false, false, args)
		return err
	})
}

// argsCheckedRE matches the refusal of the probe's x-max-length by a
// queue.declare of a queue that does not exist: the permissions, the
// dead-letter exchange's with them, were all checked before it.
var argsCheckedRE = regexp.MustCompile(`^PRECONDITION_FAILED - invalid arg 'x-max-length' for queue `)

// configureDeadLettered probes configure on queue n.Name declared with
// dead-letter exchange n.DeadLetter, and with it read on the queue and
// write on the exchange.
func (r *prober) configureDeadLettered(n Need) error {
	conf := n.plain()
	read := Need{Perm: "read", Kind: "queue", Name: n.Name}
	write := Need{Perm: "write", Kind: "exchange", Name: n.DeadLetter}
	_, confKnown := r.p.known(conf)
	_, readKnown := r.p.known(read)
	_, writeKnown := r.p.known(write)
	if confKnown && readKnown && writeKnown {
		return nil
	}
	a, err := r.declareQueue(n.Name, amqp.Table{"x-dead-letter-exchange": n.DeadLetter})
	if err != nil {
		return err
	}
	switch {
	case a.refuses(write):
		r.p.set(conf, false)
		r.p.set(read, false)
		r.p.set(write, true)
	case a.refuses(conf):
		// Configure or read (3.10 does not say which): ask configure
		// alone. The declare checks nothing else on the queue.
		b, err := r.declareQueue(n.Name, nil)
		if err != nil {
			return err
		}
		lacksConf := b.refuses(conf)
		r.p.set(conf, lacksConf)
		if !lacksConf {
			r.p.set(read, true)
		}
	case !a.refused && argsCheckedRE.MatchString(a.reason):
		r.p.set(conf, false)
		r.p.set(read, false)
		r.p.set(write, false)
	default:
		// The queue exists (its arguments were compared, and the
		// dead-letter exchange not looked at), or something else
		// stopped the declare: only configure is told.
		r.p.set(conf, a.refuses(conf))
	}
	return nil
}

// readExchange probes read on exchange n.Name through its Via, with the
// topic permission on n.RoutingKey: one unbind answers write on the Via,
// then read on the exchange, then the topic permission.
func (r *prober) readExchange(n Need) error {
	plain := n.plain()
	via := Need{Perm: "write", Kind: n.ViaKind, Name: n.Via}
	if via.res() == plain.res() {
		// A refusal would not say which of the two it is: the write
		// first, alone.
		if err := r.probe(via); err != nil {
			return err
		}
	}
	viaLacks, viaKnown := r.p.known(via)
	lacks, known := r.p.known(plain)
	switch {
	case viaKnown && viaLacks:
		return nil // the read cannot be told
	case viaKnown && known && (lacks || !n.TopicKey):
		return nil
	}
	key := r.p.mark
	if n.TopicKey {
		key = n.RoutingKey
	}
	a, err := r.try(func(ch *amqp.Channel) error { return r.unbind(ch, n.ViaKind, n.Via, n.Name, key) })
	if err != nil {
		return err
	}
	if !viaKnown {
		r.p.set(via, a.refuses(via))
		if a.refuses(via) {
			return nil
		}
	}
	if !known {
		// Read on the exchange is checked before the topic permission:
		// any answer past it says the read is there.
		lacks = a.refuses(plain)
		r.p.set(plain, lacks)
	}
	if !lacks && a.refused && a.topic && n.TopicKey {
		r.p.mu.Lock()
		r.p.topicSaid[Need{Name: n.Name, RoutingKey: n.RoutingKey}] = true
		r.p.mu.Unlock()
	}
	return nil
}

// unbind removes the binding from source to the destination kind/name
// with key and mqctl's probe argument: there is none.
func (r *prober) unbind(ch *amqp.Channel, kind, name, source, key string) error {
	args := amqp.Table{probeArg: r.p.mark}
	if kind == "exchange" {
		return ch.ExchangeUnbind(name, key, source, false, args)
	}
	return ch.QueueUnbind(name, key, source, args)
}
