package broker

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"regexp"

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
//   - read on an exchange: an unbind from it to a destination the user may
//     write to (Need.Via), with the binding's own routing key (the topic
//     permissions are checked on it) and an argument no binding has: write
//     on the destination, then read on the exchange, then (a topic exchange)
//     the topic permission on the key, then nothing to remove.
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
// write to cannot be told: it is left out (the write is missing, and said).
// The error is for a check that could not be made (the connection, or an
// answer that says nothing about permissions).
func (c *Client) MissingPermissions(ctx context.Context, amqpURL, vhost string, needs []Need) ([]Need, error) {
	if len(needs) == 0 {
		return nil, nil
	}
	conn, err := DialAMQP(ctx, AMQPDial{URL: amqpURL, Vhost: vhost, TLS: c.TLSConfig(), Name: "mqctl permission check"})
	if err != nil {
		return nil, err
	}
	defer conn.Close()
	pc := &permChecker{ctx: ctx, conn: conn, mark: probeMark(), said: map[Need]bool{}}
	defer pc.close()
	var missing []Need
	seen := map[Need]bool{}
	// The writes first: a read on an exchange is probed through a
	// destination the user may write to.
	for _, pass := range []func(Need) bool{
		func(n Need) bool { return !(n.Perm == "read" && n.Kind == "exchange") },
		func(n Need) bool { return n.Perm == "read" && n.Kind == "exchange" },
	} {
		for _, n := range needs {
			if !pass(n) {
				continue
			}
			lacks, err := pc.lacks(n)
			if err != nil {
				return nil, fmt.Errorf("check the permissions of user %q in vhost %q: %w", c.user, vhost, err)
			}
			for _, m := range lacks {
				if !seen[m] {
					seen[m] = true
					missing = append(missing, m)
				}
			}
		}
	}
	return missing, nil
}

// probeMark is the value of the probes' unbind argument: made for this
// check, so that no binding has it.
func probeMark() string {
	b := make([]byte, 12)
	_, _ = rand.Read(b)
	return "mqctl-permission-check-" + hex.EncodeToString(b)
}

// probeArg is the argument mqctl's unbind probes carry.
const probeArg = "x-mqctl-permission-check"

type permChecker struct {
	ctx  context.Context
	conn *amqp.Connection
	ch   *amqp.Channel // open, or nil
	mark string
	said map[Need]bool // need (Topic false, no key) → missing
}

func (p *permChecker) close() {
	if p.ch != nil {
		p.ch.Close()
	}
}

// answer is what the broker said to one probe.
type answer struct {
	refused bool     // ACCESS_REFUSED
	res     resource // the object it names ("" when it names none)
	topic   bool     // a topic permission refused
}

// topicRefusedRE matches "access to topic 'k' in exchange 'x' in vhost
// 'v' refused" (3.10; "read access to topic" from 4.0).
var topicRefusedRE = regexp.MustCompile(`access to topic '.*' in exchange '.*' in vhost '.*' refused for user '`)

// try runs f on a channel; a refusal or failure closes the channel, and
// the next probe opens another.
func (p *permChecker) try(f func(ch *amqp.Channel) error) (answer, error) {
	if err := p.ctx.Err(); err != nil {
		return answer{}, err
	}
	if p.ch == nil {
		ch, err := p.conn.Channel()
		if err != nil {
			return answer{}, err
		}
		p.ch = ch
	}
	err := f(p.ch)
	if err == nil {
		return answer{}, nil
	}
	p.ch = nil // closed by the broker's channel.close
	var ae *amqp.Error
	if !errors.As(err, &ae) {
		return answer{}, err
	}
	switch ae.Code {
	case amqp.AccessRefused:
		a := answer{refused: true}
		if res, ok := refusedResource(ae.Reason); ok {
			a.res = res
		}
		a.topic = topicRefusedRE.MatchString(ae.Reason)
		return a, nil
	case amqp.PreconditionFailed, amqp.NotFound, amqp.ResourceLocked:
		return answer{}, nil
	}
	return answer{}, fmt.Errorf("the broker answered a permission probe with %d %s", ae.Code, ae.Reason)
}

// lacks probes n: what of it is missing (n itself, its topic permission,
// or nothing).
func (p *permChecker) lacks(n Need) ([]Need, error) {
	plain := Need{Perm: n.Perm, Kind: n.Kind, Name: n.Name}
	missing, known := p.said[plain]
	if n.Perm == "read" && n.Kind == "exchange" {
		return p.readExchange(n, missing, known)
	}
	if known {
		if missing {
			return []Need{plain}, nil
		}
		return nil, nil
	}
	var a answer
	var err error
	switch {
	case n.Perm == "configure" && n.Kind == "queue":
		a, err = p.try(func(ch *amqp.Channel) error {
			_, err := ch.QueueDeclare(n.Name, true, false, false, false, amqp.Table{"x-max-length": int32(-1)})
			return err
		})
	case n.Perm == "configure" && n.Kind == "exchange":
		a, err = p.try(func(ch *amqp.Channel) error {
			return ch.ExchangeDeclare(n.Name, amqp.ExchangeDirect, true, false, false, false, amqp.Table{"alternate-exchange": int32(0)})
		})
	case n.Perm == "read" && n.Kind == "queue":
		a, err = p.try(func(ch *amqp.Channel) error {
			tag := "mqctl-permission-check"
			_, err := ch.Consume(n.Name, tag, false, false, false, false, amqp.Table{"x-priority": p.mark})
			if err == nil {
				// No broker measured takes a string priority; were one
				// to, the consumer goes at once, and what it was sent
				// goes back to the queue unacknowledged.
				_ = ch.Cancel(tag, false)
				ch.Close()
				p.ch = nil
			}
			return err
		})
	case n.Perm == "write":
		source := "amq.direct"
		if n.Name == source && n.Kind == "exchange" {
			source = "amq.fanout"
		}
		a, err = p.try(func(ch *amqp.Channel) error { return p.unbind(ch, n.Kind, n.Name, source, p.mark) })
	default:
		return nil, fmt.Errorf("no probe for %s on %s", n.Perm, n.res())
	}
	if err != nil {
		return nil, err
	}
	missing = a.refused && a.res == n.res()
	p.said[plain] = missing
	if missing {
		return []Need{plain}, nil
	}
	return nil, nil
}

// readExchange probes read on exchange n.Name through its Via, and the
// topic permission on n.RoutingKey.
func (p *permChecker) readExchange(n Need, missing, known bool) ([]Need, error) {
	via := Need{Perm: "write", Kind: n.ViaKind, Name: n.Via}
	if viaMissing, err := p.lacks(via); err != nil || len(viaMissing) > 0 {
		return nil, err // the write is said; the read cannot be told
	}
	plain := Need{Perm: n.Perm, Kind: n.Kind, Name: n.Name}
	switch {
	case known && missing:
		return []Need{plain}, nil
	case known && !n.TopicKey:
		return nil, nil
	}
	key := p.mark
	if n.TopicKey {
		key = n.RoutingKey
	}
	a, err := p.try(func(ch *amqp.Channel) error { return p.unbind(ch, n.ViaKind, n.Via, n.Name, key) })
	if err != nil {
		return nil, err
	}
	if !known {
		// Read on the exchange is checked before the topic permission:
		// any answer past it says the read is there.
		missing = a.refused && a.res == plain.res()
		p.said[plain] = missing
	}
	switch {
	case missing:
		return []Need{plain}, nil
	case a.refused && a.topic && n.TopicKey:
		return []Need{{Perm: "read", Kind: "exchange", Name: n.Name, RoutingKey: n.RoutingKey, Topic: true}}, nil
	}
	return nil, nil
}

// unbind removes the binding from source to the destination kind/name
// with key and mqctl's probe argument: there is none.
func (p *permChecker) unbind(ch *amqp.Channel, kind, name, source, key string) error {
	args := amqp.Table{probeArg: p.mark}
	if kind == "exchange" {
		return ch.ExchangeUnbind(name, key, source, false, args)
	}
	return ch.QueueUnbind(name, key, source, args)
}
