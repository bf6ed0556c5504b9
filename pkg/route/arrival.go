package route

import (
	"fmt"
	"slices"

	"github.com/mqctl/mqctl/pkg/topology"
)

// What a queue with a message TTL of 0 or a length limit of 0 does with a
// message that arrives when no consumer takes it at once (the simulator
// models no consumers). The same on RabbitMQ 3.10.8, 4.0.5 and 4.3.5:
//
// Classic queues (rabbit_amqqueue_process): maybe_deliver_or_enqueue/3
// first asks will_overflow/2 (length + 1 > max-length): with overflow
// reject-publish the message is refused (send_reject_publish: a basic.nack
// to a publisher using confirms), with reject-publish-dlx it is
// dead-lettered as maxlen and refused. Otherwise deliver_or_enqueue/3
// discards it at once when the queue's TTL is 0 and it has no dead-letter
// exchange (counted as expired); else it enqueues it, maybe_drop_head/1
// dead-letters the head as maxlen while the queue is over max-length, and
// drop_expired_msgs/1 (Now >= expiry, expiry = arrival + TTL) expires a
// message whose TTL (the smaller of the queue's and its expiration) is 0.
//
// Quorum queues (rabbit_fifo): a TTL of 0 sets the expiry one millisecond
// after the enqueue (update_expiry_header/3: "we discard the message if it
// cannot be consumed within the same millisecond"), so it expires then.
// After each enqueue evaluate_limit drops the head as maxlen while the
// queue is over its limit (drop-head, and reject-publish-dlx, which quorum
// queues do not know and read as drop-head: rabbit_quorum_queue:overflow/3)
// before the expiry comes. With reject-publish the limit is checked when a
// publisher registers and after each enqueue (is_over_limit/1: ready
// messages > max-length), so an empty queue with a limit of 0 takes the
// message, and refuses the next publishes while it holds it.
//
// Streams have neither a message TTL nor a length limit: they keep it.

// Arrival is what a queue does with a message the moment it arrives.
type Arrival struct {
	// Reason is set when the queue dead-letters the message at once (or
	// drops it, without a dead-letter exchange): expired for a message TTL
	// of 0 (the queue's, or the message's expiration "0"), maxlen for a
	// length limit of 0 that drops the head or refuses with
	// reject-publish-dlx. "" when the queue keeps it or only refuses it.
	Reason Reason `json:"reason,omitempty"`
	// Refused: a classic queue with a length limit of 0 and overflow
	// reject-publish or reject-publish-dlx refuses the message: it never
	// enters the queue, and a publisher using confirms gets a basic.nack.
	Refused bool `json:"refused,omitempty"`
	// Why says why, as a clause; set also on a kept message when a limit
	// of 0 is in force (a quorum queue with reject-publish), or when
	// Unsure.
	Why string `json:"why,omitempty"`
	// Unsure: the queue may keep the message or not, depending on what the
	// simulator does not know: its size, against a length limit in bytes
	// above 0 (see bytesLimitWhy). Keeps then reports true, the answer
	// for a message that fits.
	Unsure bool `json:"unsure,omitempty"`
}

// Keeps reports whether the queue holds the message (when Unsure, only if
// it fits).
func (a Arrival) Keeps() bool { return a.Reason == "" && !a.Refused }

// OnArrival is what queue name does with message m (as it arrives: a
// published message, or a dead letter) when no consumer takes it at once.
// A queue that is not declared, and a stream, keep it.
func (s *Simulator) OnArrival(name string, m Message) Arrival {
	q, ok := s.v.Queues[name]
	if !ok || q == nil || queueType(q) == topology.QueueStream {
		return Arrival{}
	}
	args := s.queues[name].args
	limit := zeroLimit(args)
	overflow, _ := args.String("x-overflow")
	if limit != "" {
		if a, decided := zeroLimitArrival(q, overflow, limit); decided {
			return a
		}
	}
	ttl, hasTTL := args.Int("x-message-ttl")
	_, hasDLX := args["x-dead-letter-exchange"]
	classic := queueType(q) == topology.QueueClassic
	switch exp, expires := s.ExpiresAfter(name, m); {
	case hasTTL && ttl == 0 && classic && !hasDLX:
		return Arrival{Reason: Expired, Why: "its message TTL is 0 and it has no dead-letter exchange: a classic queue discards a message no consumer takes at once"}
	case limit != "" && s.DropsHead(name):
		return Arrival{Reason: MaxLen, Why: limit + " (overflow drop-head): it drops its head, the message, as soon as it holds it"}
	case expires && exp == 0:
		return Arrival{Reason: Expired, Why: expiresAtOnceWhy(hasTTL && ttl == 0, classic)}
	case limit != "":
		return Arrival{Why: limit + " with overflow reject-publish: a quorum queue takes a message while it holds none (it checks the limit after the enqueue) and refuses publishes (basic.nack) while it holds one"}
	}
	if n, ok := args.Int("x-max-length-bytes"); ok && n > 0 && (classic || overflow != "reject-publish") && !(m.BodyKnown && SizeBound(m) <= n) {
		return Arrival{Unsure: true, Why: bytesLimitWhy(n, m, overflow, classic, s.ver.AtLeast(4, 3))}
	}
	return Arrival{}
}

// SizeBound is the most bytes message m (BodyKnown) can count against a
// queue's length limit in bytes: its body, and twice its headers and
// properties as AMQP 0-9-1 encodes them (RabbitMQ 4.3's quorum queues
// count those too, in an encoding of their own), properties other than
// the headers taken at 512 bytes (a message id, a content type, an
// expiration: mqctl test's probe has those).
func SizeBound(m Message) int64 {
	return m.Body + 512 + 2*amqpSize(m.Headers)
}

// amqpSize is how many bytes AMQP 0-9-1 encodes v in, as a field value
// (a table: its length and each field's name, type and value).
func amqpSize(v any) int64 {
	switch x := v.(type) {
	case map[string]any:
		n := int64(4)
		for k, e := range x {
			n += 1 + int64(len(k)) + 1 + amqpSize(e)
		}
		return n
	case topology.Args:
		return amqpSize(map[string]any(x))
	case []any:
		n := int64(4)
		for _, e := range x {
			n += 1 + amqpSize(e)
		}
		return n
	case string:
		return 4 + int64(len(x))
	case []byte:
		return 4 + int64(len(x))
	case nil:
		return 0
	case bool, int8, uint8:
		return 1
	case int16, uint16:
		return 2
	case int32, uint32, float32, int:
		return 4
	}
	return 8 // long, double, timestamp, and a decimal's 5 with room
}

// bytesLimitWhy says why a queue with a length limit in bytes n above 0
// (overflow, classic or quorum, meta: a quorum queue of RabbitMQ 4.3)
// may not keep a message, which the simulator cannot tell: a message
// bigger than the limit overflows the queue even when it is empty
// (will_overflow/2 and over_max_length/1 of rabbit_amqqueue_process
// compare the bodies' bytes, rabbit_fifo's is_over_limit/1 the bytes it
// counts on enqueue: the body on 3.10 and 4.0, the body and the encoded
// properties and headers from 4.3.0, maybe_enqueue/8), and the simulator
// knows no message's size. A quorum queue with reject-publish takes the
// message while it holds none (the limit is checked after the enqueue), so
// it is not asked.
func bytesLimitWhy(n int64, m Message, overflow string, classic, meta bool) string {
	counted := "its body fits"
	if !classic && meta {
		counted = "its body, properties and headers fit"
	}
	var bigger string
	switch {
	case classic && overflow == "reject-publish":
		bigger = "refused (basic.nack)"
	case classic && overflow == "reject-publish-dlx":
		bigger = "refused (basic.nack) and dead-lettered as maxlen"
	default:
		bigger = "dead-lettered as maxlen as soon as it arrives (dropped without a dead-letter exchange)"
	}
	size := "and the simulator does not know a message's size"
	if m.BodyKnown {
		size = fmt.Sprintf("which the simulator cannot tell for this one (a %d-byte body, up to %d bytes with its properties and headers)", m.Body, SizeBound(m))
	}
	return fmt.Sprintf("its length limit in bytes is %d: it keeps the message only if %s in it, %s; a bigger one is %s", n, counted, size, bigger)
}

// zeroLimit names the limit of 0 that effective queue arguments args set,
// as a clause: a length limit of 0, or a limit of 0 in bytes, which every
// message with a body exceeds (an empty one fits: the queues compare the
// bytes of the bodies they hold with it, will_overflow/2 and
// over_max_length/1 in rabbit_amqqueue_process at v3.10.8, v4.0.5 and
// v4.3.5; rabbit_fifo's is_over_limit/1 likewise). "" when neither.
// Measured on RabbitMQ 4.3.6, 4.0.5 and 3.10.8: x-max-length-bytes 0
// does with a message what x-max-length 0 does, per overflow and queue
// type.
func zeroLimit(args topology.Args) string {
	if n, ok := args.Int("x-max-length"); ok && n == 0 {
		return "its length limit is 0"
	}
	if n, ok := args.Int("x-max-length-bytes"); ok && n == 0 {
		return "its length limit in bytes is 0 (every message with a body exceeds it)"
	}
	return ""
}

// zeroLimitArrival is what classic queue name, with a limit of 0 (named
// by limit, see zeroLimit), does with a message when its overflow refuses
// it (decided): with reject-publish it refuses it, with
// reject-publish-dlx it dead-letters it too.
func zeroLimitArrival(q *topology.Queue, overflow, limit string) (a Arrival, decided bool) {
	if queueType(q) != topology.QueueClassic {
		return Arrival{}, false
	}
	switch overflow {
	case "reject-publish":
		return Arrival{Refused: true, Why: limit + " with overflow reject-publish: it refuses every message (the publisher gets a basic.nack)"}, true
	case "reject-publish-dlx":
		return Arrival{Reason: MaxLen, Refused: true, Why: limit + " with overflow reject-publish-dlx: it refuses every message (the publisher gets a basic.nack) and dead-letters it"}, true
	}
	return Arrival{}, false
}

func expiresAtOnceWhy(queueTTL, classic bool) string {
	what := "the message's expiration is 0"
	if queueTTL {
		what = "its message TTL is 0"
	}
	if classic {
		return what + ": a classic queue expires a message no consumer takes at once"
	}
	return what + ": a quorum queue expires a message no consumer takes within the millisecond"
}

// Landing is where a message ends up after a route (a publish, or a
// dead letter) when no consumer takes it at once: the queues that keep a
// copy, after following the dead letters of the queues that keep nothing
// (see OnArrival).
type Landing struct {
	// Queues keep a copy, sorted, each once.
	Queues []string
	// Passed are the queues reached that keep nothing, in the order met.
	Passed []Passage
	// Results are the routes followed: the first, then the dead letters
	// of Passed, for what they say beyond their deliveries (Problems,
	// Unsimulated, OneOf).
	Results []Result
	// Endless: the dead letters go from queue to queue without end, each
	// keeping nothing (RabbitMQ 3.10-3.12 after a rejection, see
	// DeadLetterRoute.Cycles); Queues are those reached until maxLandHops.
	Endless bool
}

// Passage is a queue a message reached that keeps nothing.
type Passage struct {
	Queue   string
	Arrival Arrival
	// DeadLetter is where it goes from there; nil when the queue only
	// refuses it.
	DeadLetter *DeadLetterRoute
}

// Refused returns the queues of l that refuse the message (the publisher
// gets a basic.nack), in the order met.
func (l Landing) Refused() []string {
	var out []string
	for _, p := range l.Passed {
		if p.Arrival.Refused {
			out = append(out, p.Queue)
		}
	}
	return out
}

// maxLandHops bounds the dead-letter hops Land follows.
const maxLandHops = 32

// Land follows route r (whose Message is the message routed) to where the
// message ends up when no consumer takes it at once.
func (s *Simulator) Land(r Result) Landing {
	var l Landing
	s.land(r, &l, 0)
	slices.Sort(l.Queues)
	l.Queues = slices.Compact(l.Queues)
	if l.Queues == nil {
		l.Queues = []string{}
	}
	return l
}

func (s *Simulator) land(r Result, l *Landing, depth int) {
	l.Results = append(l.Results, r)
	for _, d := range r.Deliveries {
		a := s.OnArrival(d.Queue, r.Message)
		if a.Keeps() {
			l.Queues = append(l.Queues, d.Queue)
			continue
		}
		p := Passage{Queue: d.Queue, Arrival: a}
		if a.Reason != "" {
			dl := s.DeadLetter(d.Queue, a.Reason, r.Message)
			p.DeadLetter = &dl
		}
		l.Passed = append(l.Passed, p)
		switch {
		case p.DeadLetter == nil:
		case depth >= maxLandHops:
			l.Endless = true
		default:
			s.land(p.DeadLetter.Result, l, depth+1)
		}
	}
}

// ArrivalText renders what queue q does with a message on arrival, for a
// queue that keeps nothing: "expires on arrival: its message TTL is 0 …".
func ArrivalText(a Arrival) string {
	switch {
	case a.Refused && a.Reason != "":
		return fmt.Sprintf("refused and dead-lettered (%s) on arrival: %s", a.Reason, a.Why)
	case a.Refused:
		return "refused on arrival: " + a.Why
	case a.Reason == Expired:
		return "expires on arrival: " + a.Why
	case a.Reason == MaxLen:
		return "dropped as maxlen on arrival: " + a.Why
	}
	return a.Why
}
