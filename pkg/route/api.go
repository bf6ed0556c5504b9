// Package route simulates where RabbitMQ delivers a message: exchange types,
// exchange-to-exchange bindings, alternate exchanges, the default exchange,
// and dead-letter hops. It is a pure function of a topology.Vhost.
//
// This file fixes the package's API (used by lint, graph, the route command
// and later the topology tests); route.go implements it.
package route

import (
	"github.com/mqctl/mqctl/pkg/rmqversion"
	"github.com/mqctl/mqctl/pkg/topology"
)

// Reason is why a message leaves a queue as a dead letter, named as RabbitMQ
// names it in the x-death header.
type Reason string

const (
	Rejected      Reason = "rejected"       // basic.reject / basic.nack with requeue=false
	Expired       Reason = "expired"        // message TTL (queue x-message-ttl, policy, or per-message)
	MaxLen        Reason = "maxlen"         // overflow drop-head / reject-publish-dlx
	DeliveryLimit Reason = "delivery_limit" // quorum queue x-delivery-limit exceeded
)

// Message is what is published.
type Message struct {
	Exchange   string `json:"exchange"` // "" is the default exchange
	RoutingKey string `json:"routing_key"`
	// Headers are the message's headers. Arrays of strings in the CC and
	// BCC headers are more routing keys (sender-selected distribution);
	// RabbitMQ removes BCC from the message once routed. Inside arrays and
	// tables a value's Go type stands for the AMQP type a client sends it
	// as (int64 a long, int32 a signedint, float64 a double, …), which the
	// headers exchange compares there (see typedEqual).
	Headers map[string]any `json:"headers,omitempty"`
	// Expiration is the message's expiration property, its per-message
	// TTL: milliseconds as a decimal string, "" for none. In any queue but
	// a stream the message expires after the smaller of it and the queue's
	// message TTL (see ExpiresAfter). RabbitMQ refuses a publish whose
	// expiration is not a whole number from 0 to 315360000000 (see
	// ParseExpiration). A dead letter never has one: RabbitMQ removes it
	// and records it in the new x-death entry as original-expiration.
	Expiration string `json:"expiration,omitempty"`
	// Class makes the message stand for a class of messages whose routing
	// keys differ (pkg/flow's classes): an x-modulus-hash exchange the
	// class reaches picks one destination per message by a hash of its
	// keys, so the class is split among them all. Such an exchange is
	// then followed to each of its destinations, none Picked: Deliveries
	// hold every queue some message of the class reaches, and Splits says
	// which of them each message reaches one of. Its dead letters are a
	// class too, unless a dead-letter routing key gives them all one key.
	Class bool `json:"-"`
	// Many makes the message stand for many messages, whatever their keys
	// (pkg/flow's, every one): an x-local-random exchange picks one of its
	// queues at random for each, so they are split among them all, as a
	// Class is. Its dead letters are many too.
	Many bool `json:"-"`
	// Body, with BodyKnown, is the size of the message's body in bytes
	// (mqctl test's probe: topotest.ProbeBody). A queue with a length
	// limit in bytes above 0 then keeps it for certain where the limit
	// holds the body, the properties and the headers at their largest
	// (SizeBound); otherwise whether it fits is unknown (Arrival.Unsure).
	// Its dead letters keep it.
	Body      int64 `json:"-"`
	BodyKnown bool  `json:"-"`
	// keys, when set, are all the routing keys of a dead letter: RabbitMQ
	// keeps a message's CC and BCC keys on its dead letters (when no
	// dead-letter routing key replaces them), although BCC is gone from
	// the headers.
	keys []string
	// mc, set on the dead letters of a 3.13+ simulation, is what the
	// broker keeps beside the headers (see mcState).
	mc *mcState
}

// mcState is what RabbitMQ 3.13+ keeps of a dead letter beside its
// headers: message containers hold the death records, the BCC keys and
// the x-*-death-* values as annotations (mc.erl). Headers is the message
// as delivered: x-death rendered from the records, x-first-death-* and
// x-last-death-* from the annotations. The headers exchange routes by the
// message's own headers instead, with the annotations over them, so it
// sees the x-death header the client published (if any), not the records.
type mcState struct {
	// own is the x-death header the message was published with; hasOwn
	// says whether it had one.
	own    any
	hasOwn bool
	// bcc are the message's BCC keys, which x-death routing-keys leave out.
	bcc []string
}

// RoutingKeys returns every key the message is routed by: RoutingKey,
// then the CC and BCC keys (for a dead letter, the keys it carries).
// Elements of CC or BCC that are not strings are ignored, as RabbitMQ
// ignores them; a CC or BCC that is not an array makes RabbitMQ refuse the
// publish, and its keys are left out.
func (m Message) RoutingKeys() []string {
	keys, _ := m.routingKeys()
	return keys
}

// routingHeaders returns the headers the headers exchange routes m by: its
// headers, except that for a 3.13+ dead letter x-death is the header the
// client published (see mcState).
func (m Message) routingHeaders() map[string]any {
	if m.mc == nil {
		return m.Headers
	}
	h := make(map[string]any, len(m.Headers))
	for k, v := range m.Headers {
		h[k] = v
	}
	if m.mc.hasOwn {
		h["x-death"] = m.mc.own
	} else {
		delete(h, "x-death")
	}
	return h
}

// Step is one edge a message travelled to reach a queue.
type Step struct {
	Exchange   string `json:"exchange"`              // exchange the message was in
	Via        string `json:"via"`                   // "binding", "default", "alternate-exchange"
	BindingKey string `json:"binding_key,omitempty"` // routing key of the binding that matched
	To         string `json:"to"`                    // next exchange or queue name
	ToType     string `json:"to_type"`               // "exchange" or "queue"
	// ExchangeType is the routing type of Exchange ("direct", "fanout",
	// "topic", "headers"; a plugin type such as x-delayed-message is given
	// as the type it routes by).
	ExchangeType string `json:"exchange_type,omitempty"`
	// BindingArgs are the arguments of the binding that matched, set for
	// headers exchanges, where they are the match criteria.
	BindingArgs topology.Args `json:"binding_args,omitempty"`
}

// Delivery is one queue a message reaches, with the path it took.
type Delivery struct {
	Queue string `json:"queue"`
	Path  []Step `json:"path"`
}

// Result is where one publish (or one dead-letter publish) goes.
type Result struct {
	Message    Message    `json:"message"`
	Deliveries []Delivery `json:"deliveries"` // sorted by queue name, each queue at most once
	// Problems explain an empty or odd result: "exchange X is not declared",
	// "exchange X is internal: clients cannot publish to it",
	// "no binding matched and X has no alternate exchange", …
	Problems []string `json:"problems,omitempty"`
	// Unsimulated names the exchanges the message reached whose plugin type
	// mqctl does not simulate (x-consistent-hash, …): where they route is
	// unknown, so an empty Deliveries does not prove the message is lost.
	// An x-modulus-hash exchange before RabbitMQ 4.3 is one of them, and
	// OneOf says among which destinations it picks.
	Unsimulated []string `json:"unsimulated,omitempty"`
	// OneOf lists the exchanges the message reached that deliver each
	// message to exactly one of their bound destinations (x-modulus-hash),
	// never to all of them: one Choice per exchange, in the order reached.
	// Where the Choice is Picked, Deliveries hold what the picked
	// destination leads to; for a Message.Class, what each destination
	// leads to (Splits); otherwise (before RabbitMQ 4.3) the exchange is
	// in Unsimulated and Deliveries hold nothing through it.
	OneOf []Choice `json:"one_of,omitempty"`
	// DirectReply are the routing keys of a client's publish to the
	// default exchange that are Direct Reply-To addresses
	// (amq.rabbitmq.reply-to.…): the broker hands such a reply to the
	// consumer of the channel that sent the request, while that channel
	// is open, and drops it once it is gone; no queue holds it (see
	// rmqversion.Version.DirectReplyRouted for what mandatory does).
	DirectReply []string `json:"direct_reply,omitempty"`
	// queues are the queues of Deliveries, when known (a message-blind
	// exchange's shared result).
	queues []string
}

// Target is a destination of bindings.
type Target struct {
	Name string `json:"name"`
	Type string `json:"type"` // "queue" or "exchange"
	// Bindings is how many bindings of the exchange lead to it: each is
	// one entry of the list x-modulus-hash picks from, so a destination
	// bound twice gets twice the share of messages.
	Bindings int `json:"bindings"`
}

// Choice is an exchange that delivers a message to exactly one of its
// bound destinations: picked by a hash of the message's routing keys (an
// x-modulus-hash exchange), or at random (x-local-random).
type Choice struct {
	Exchange string `json:"exchange"`
	// Path is how the message reached Exchange (empty when it was
	// published to it).
	Path []Step `json:"path,omitempty"`
	// Among are the destinations the exchange picks from, as the broker
	// orders them (exchanges before queues, then by name), each once.
	Among []Target `json:"among"`
	// Picked is the destination this message's routing keys pick (RabbitMQ
	// 4.3+: erlang:phash2 of the routing keys, CC and BCC keys included,
	// modulo the number of bindings); nil when mqctl cannot tell (before
	// 4.3 the rabbitmq_sharding plugin picks from the bindings in an order
	// only the broker's metadata store knows; an x-local-random exchange
	// with more than one queue picks at random).
	Picked *Target `json:"picked,omitempty"`
	// Random: the exchange is x-local-random (RabbitMQ 4.0+), which picks
	// one of its classic queues at random among those on the node the
	// publisher is connected to, not by a hash of the routing keys; a
	// queue on another node gets nothing from that publisher.
	Random bool `json:"random,omitempty"`
}

// Queues returns the names of the queues among the choice's destinations
// (the exchanges among them lead further), in Among's order.
func (c Choice) Queues() []string {
	var out []string
	for _, t := range c.Among {
		if t.Type == topology.DestQueue {
			out = append(out, t.Name)
		}
	}
	return out
}

// Queues returns the names of the queues reached, sorted. The slice may
// be shared with other results: do not modify it.
func (r Result) Queues() []string {
	if r.queues != nil {
		return r.queues
	}
	out := make([]string, len(r.Deliveries))
	for i, d := range r.Deliveries {
		out[i] = d.Queue
	}
	return out
}

// Split is an exchange that picks one destination for each message
// (x-modulus-hash, x-local-random) that a class of messages
// (Message.Class) reaches, and the queues it leads them to: each message
// reaches one of Queues (sorted), not all: by a hash of its routing keys,
// or, where Random, at random among those on the publisher's node.
//
// Where Unsimulated is set (the exchange's type, which mqctl does not
// simulate: a plugin type, or x-modulus-hash before RabbitMQ 4.3 where
// the pick is not known), the Split is not the simulator's: Queues are
// every queue the exchange can lead a message to, and which of them a
// message reaches is unknown. An x-consistent-hash or x-modulus-hash
// exchange delivers each message to one of its destinations; another
// type to some of them, or none.
type Split struct {
	Exchange    string   `json:"exchange"`
	Queues      []string `json:"queues"`
	Random      bool     `json:"random,omitempty"`
	Unsimulated string   `json:"unsimulated,omitempty"`
	// Through are the destinations among those the exchange picks from
	// that are exchanges, by name, each with the queues of Queues it
	// leads to: a message that picks one reaches each of those (nil:
	// every destination is a queue).
	Through []SplitThrough `json:"through,omitempty"`
}

// SplitThrough is an exchange a Split's exchange picks as one
// destination, and the queues (sorted) it leads the message to.
type SplitThrough struct {
	Exchange string   `json:"exchange"`
	Queues   []string `json:"queues"`
}

// PicksOne reports whether s's exchange delivers each message to exactly
// one of its queues (or, Unsimulated, to one of its destinations): every
// split but that of a plugin type mqctl does not know to pick one.
func (s Split) PicksOne() bool {
	switch s.Unsimulated {
	case "", typeModulusHash, rmqversion.ConsistentHashExchangeType:
		return true
	}
	return false
}

// Splits returns where r, the route of a Message.Class, splits the class:
// each exchange that picks one destination (picksOne) it followed to more than one destination,
// with the queues of Deliveries reached through it (by the path each
// delivery reports), in the order of OneOf; nil for none. A queue the
// class also reaches by a way that picks nothing is listed here when its
// path is the one through the exchange.
func (r Result) Splits() []Split {
	var out []Split
	for _, c := range r.OneOf {
		if c.Picked != nil || len(c.Among) < 2 {
			continue
		}
		var qs []string
		through := map[string][]string{}
		for _, d := range r.Deliveries {
			for _, st := range d.Path {
				if st.Exchange == c.Exchange && picksOne(st.ExchangeType) {
					qs = append(qs, d.Queue)
					if st.ToType == topology.DestExchange {
						through[st.To] = append(through[st.To], d.Queue)
					}
					break
				}
			}
		}
		if len(qs) > 0 {
			s := Split{Exchange: c.Exchange, Queues: qs, Random: c.Random}
			for _, x := range sortedNames(through) {
				s.Through = append(s.Through, SplitThrough{Exchange: x, Queues: through[x]})
			}
			out = append(out, s)
		}
	}
	return out
}

// DeadLetterRoute is where a message dead-lettered from Queue for Reason goes.
type DeadLetterRoute struct {
	Queue  string `json:"queue"`
	Reason Reason `json:"reason"`
	// Configured is false when the queue has no dead-letter exchange (by
	// argument or policy): the message is discarded.
	Configured bool `json:"configured"`
	// Exchange is the effective dead-letter exchange ("" = default exchange).
	Exchange string `json:"exchange"`
	// RoutingKey is the key the dead letter carries: the queue's
	// dead-letter routing key when set, else the message's own key.
	RoutingKey string `json:"routing_key"`
	// KeyFromMessage is true when RoutingKey is the message's own key (no
	// dead-letter routing key is set).
	KeyFromMessage bool `json:"key_from_message"`
	// ExchangeMissing is true when Exchange is not declared in the vhost:
	// RabbitMQ silently drops the dead letter (keeps it: Held).
	ExchangeMissing bool `json:"exchange_missing"`
	// Cycles names the queues the dead letter was routed to but that
	// RabbitMQ's cycle detection drops it for: the message was dead-lettered
	// from that queue before and no x-death entry ahead of that one is a
	// rejection. From 3.13.3 the entries are the deaths most recent first,
	// so "ahead" is "since". Up to 3.12 RabbitMQ reorders x-death at each
	// death (rmqversion RegroupsXDeath), so "ahead" is not always "since":
	// a rejection can fall behind (the message is dropped although the
	// cycle had one) or stay ahead for ever (it circles between TTL queues
	// without end); 3.13.0-3.13.2 walk the entries in the order of their
	// queue names (ChecksDeathCyclesInKeyOrder). They are not in
	// Result.Deliveries.
	Cycles []string `json:"cycles,omitempty"`
	// Result is where the dead letter is delivered.
	Result Result `json:"result"`
	// Held is true when the dead letter reaches no queue (no binding
	// matches, or the dead-letter exchange is not declared; no cycle drops
	// it) and the queue dead-letters at least once (AtLeastOnce): RabbitMQ
	// keeps it in the queue, counted in its messages, and tries again until
	// a route exists, where a queue that dead-letters at most once drops it
	// (measured on 3.10.8, 4.0.5 and 4.3.6).
	Held bool `json:"held,omitempty"`
}

// Hop is a node of a full trace: a message arriving in a queue, and for each
// way it can leave as a dead letter, where it goes next.
type Hop struct {
	Delivery
	// Next holds one entry per applicable reason (rejected always; expired
	// when a queue TTL is in force or the message has an expiration;
	// only the reason of Arrival when the queue keeps nothing;
	// maxlen when overflow can dead-letter;
	// delivery_limit for quorum queues with a delivery limit).
	Next []DeadLetterHop `json:"next,omitempty"`
	// Loop is true when this queue is already on the path that led here (the
	// message comes back to it): the trace does not follow it again.
	Loop bool `json:"loop,omitempty"`
	// Truncated is true when the depth limit (or the trace's size budget)
	// stopped the trace at this queue although it can dead-letter further.
	Truncated bool `json:"truncated,omitempty"`
	// DelayedRetry is the queue's delayed retry (a 4.3 quorum queue's, see
	// Simulator.DelayedRetry): a message returned to it waits before it is
	// delivered again. nil when returned messages are available at once.
	DelayedRetry *DelayedRetry `json:"delayed_retry,omitempty"`
	// DeliveryLimit is the queue's delivery limit (a quorum queue's, see
	// Simulator.DeliveryLimit and DeliveryLimitRule for what counts).
	DeliveryLimit *int64 `json:"delivery_limit,omitempty"`
	// Arrival is set when the queue keeps nothing (a message TTL or a
	// length limit of 0, see Simulator.OnArrival): Next then holds only
	// the dead letter it makes of the message at once. Also set, kept,
	// where a limit of 0 lets the queue take only this message.
	Arrival *Arrival `json:"arrival,omitempty"`
}

// DeadLetterHop is one dead-letter edge of a trace.
type DeadLetterHop struct {
	Route DeadLetterRoute `json:"route"`
	Hops  []Hop           `json:"hops,omitempty"`
	// Loop names the queue where the path would revisit a queue already on
	// it; RabbitMQ drops such a message unless a step of the cycle was a
	// rejection (see Route.Cycles). The trace stops here instead of
	// spinning. With several such queues, Loop is the first by name.
	Loop string `json:"loop,omitempty"`
	// Dropped is true when RabbitMQ would drop the message at this point:
	// no queue receives it (cycle of automatic dead-lettering, no DLX,
	// missing DLX, unroutable).
	Dropped bool `json:"dropped,omitempty"`
	// ExpiresAfterMS, for reason expired, is how long the message stays in
	// the queue before it expires: the smaller of its expiration and the
	// queue's message TTL (see Simulator.ExpiresAfter).
	ExpiresAfterMS *int64 `json:"expires_after_ms,omitempty"`
}

// Trace is the full answer of `mqctl route`: the first publish and every
// dead-letter hop after it. `mqctl route -o json` writes it as
// pkg/routejson's types (WriteJSON), the public contract; the JSON tags
// of the model serve the tests that compare traces.
type Trace struct {
	Vhost   string `json:"vhost"`
	Publish Result `json:"publish"`
	Hops    []Hop  `json:"hops"`
}
