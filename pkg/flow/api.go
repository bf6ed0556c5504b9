// Package flow tells what a topology change does to messages: for each
// exchange, the classes of routing keys (or headers) that reach a
// different set of queues before and after; for each queue, where its dead
// letters go per reason; for each delay tier, where its messages return;
// and which queues nothing reaches any more. It is a pure function of two
// topologies, built on the routing simulator (pkg/route), and exact: the
// classes come from the binding patterns on both sides, not from samples.
//
// This file fixes the package's API (used by plan, the diff command and
// their views); the other files implement it.
package flow

import (
	"github.com/mqctl/mqctl/pkg/rmqversion"
	"github.com/mqctl/mqctl/pkg/route"
	"github.com/mqctl/mqctl/pkg/topology"
)

// Options tune Compare.
type Options struct {
	// Version is the RabbitMQ version whose routing rules both sides
	// follow (route.Options.Version); zero is rmqversion.Default.
	Version rmqversion.Version
	// Vhosts restricts the comparison to these vhosts; nil compares every
	// vhost on either side.
	Vhosts []string
	// MaxClasses caps the key classes enumerated per exchange (0: a
	// default of 1,000). An exchange whose patterns make more is listed
	// in Diff.Truncated, and its classes past the cap are not reported:
	// a plan that deletes a 50,000-object vhost would otherwise list (and
	// hold in memory) tens of thousands of classes that all say the same,
	// that its messages now go nowhere.
	MaxClasses int
	// Here is the broker the after side is applied to, as its shovels'
	// URIs name it (a plan knows its listeners): a queue a shovel of
	// after publishes to through a URI naming a host is then known to
	// be fed (the URI is this broker) or not (another broker). nil (mqctl
	// diff) knows only a URI without a host, or of the local protocol, as
	// this broker: a queue a shovel may feed through any other is not
	// counted silenced, but said to be unknown (Silenced.Unknown).
	Here *Here
	// Env are the values the files took from the environment
	// (topology.Topology.Env): where a flow's words show one as the
	// value of its field (a length limit, a TTL), they show what the file
	// wrote instead (${N}), as the plan's field changes do.
	Env topology.EnvValues
}

// Class kinds: how the keys of a class are told apart.
const (
	ClassTopic   = "topic"   // a topic exchange's routing keys
	ClassDirect  = "direct"  // a direct exchange's routing keys
	ClassFanout  = "fanout"  // any key: a fanout exchange ignores it
	ClassHeaders = "headers" // a headers exchange's header sets
	ClassDefault = "default" // the default exchange: the key is a queue name
	ClassOther   = "other"   // a plugin exchange type (x-consistent-hash, x-modulus-hash before 4.3, …): one class, any key
	// ClassEvery is every message published to an exchange that clients
	// can publish to on one side of the change only (it is created,
	// deleted, or made internal or not): every message changes alike, so
	// its keys are not told apart. Before (or After) are then the queues
	// its messages can reach, each by some key or headers.
	ClassEvery = "every"
)

// Class is a set of messages that every binding pattern on both sides
// treats alike: they all reach the same queues before, and the same queues
// after. Example is one of them, the shortest the patterns allow.
type Class struct {
	Kind string `json:"kind"`
	// Example is the representative message: its routing key (and for a
	// headers exchange, its headers).
	RoutingKey string         `json:"routing_key"`
	Headers    map[string]any `json:"headers,omitempty"`
	// Matches are the binding keys (topic patterns, direct keys) or, for
	// headers, the bindings' x-match criteria rendered as text, on either
	// side, that the class matches, sorted: with Example, what describes
	// the class to a reader ("order.* and #.shipped"). Empty when the
	// class matches none of them ("any other key"). A direct key (or a
	// queue name, for the default exchange) with a "*" or "#" word is
	// followed by " (literal)": it matches only itself, unlike the topic
	// pattern it looks like. Criteria are their arguments as
	// topology.Args.Canonical renders them ("{}" for none).
	Matches []string `json:"matches,omitempty"`
	// Keyed is true where the class is of routing keys although the
	// exchange's Kind does not route by key (fanout, headers, other), on
	// both sides: an exchange behind it does, so RoutingKey is the
	// class's representative key, and where Matches names no pattern the
	// class is of the keys no binding names, not every message. Where the
	// exchange's type changed (Before, After), Keyed is true where an
	// exchange behind it routes by key on either side, whatever the
	// exchange's own kind on each: the class is of keys on both sides.
	Keyed bool `json:"keyed,omitempty"`
	// ByHeaders is true where the criteria of a headers exchange on the
	// class's way tell it apart: the class is of the header sets that
	// match exactly the criteria Matches names (none of them, where it
	// names none), Headers its representative's.
	ByHeaders bool `json:"by_headers,omitempty"`
	// Before and After are set when the exchange tells messages apart
	// by other means before the change than after (its type changed from
	// one routing by key, by headers or by neither to another: topic to
	// fanout, say): what tells the class apart on each side,
	// its kind there and the patterns or criteria of that side it
	// matches (Matches holds both sides'). Kind is After's kind.
	Before *ClassSide `json:"before,omitempty"`
	After  *ClassSide `json:"after,omitempty"`
}

// ClassSide is how one side of the change tells a class apart.
type ClassSide struct {
	Kind    string   `json:"kind"`
	Matches []string `json:"matches,omitempty"`
}

// Route is one class of messages published to one exchange that reaches
// a different set of queues after the change than before.
type Route struct {
	Vhost    string `json:"vhost"`
	Exchange string `json:"exchange"` // "" is the default exchange
	Class    Class  `json:"class"`
	// Before and After are the queues the class reaches, sorted (nil:
	// none).
	Before []string `json:"before"`
	After  []string `json:"after"`
	// BeforeSplits and AfterSplits say which of Before and After an
	// x-modulus-hash exchange splits the class among: each message
	// reaches one of a split's queues, picked by a hash of its routing
	// keys, not all of them (nil: none; the class reaches every queue
	// listed).
	BeforeSplits []Split `json:"before_splits,omitempty"`
	AfterSplits  []Split `json:"after_splits,omitempty"`
	// Selective, for a class of kind ClassEvery, says that its messages
	// do not all reach every queue listed: an exchange on the way routes
	// each message by its routing key or headers (or picks one of its
	// queues), so each reaches those its bindings match.
	Selective bool `json:"selective,omitempty"`
	// Loses is true when the class reached a queue before and reaches none
	// after: its messages are now dropped (or returned to a mandatory
	// publisher), Cause says why. When it still reaches some queue but
	// has lost others (Lost), Cause says why it no longer reaches them:
	// each lost queue's cause, each once, joined by "; ".
	Loses bool   `json:"loses_messages,omitempty"`
	Cause string `json:"cause,omitempty"`
}

// Split is an x-modulus-hash exchange that splits a class of messages
// among queues: each message reaches one of them (route.Split).
type Split = route.Split

// Gained returns the queues the class reaches after and not before,
// sorted; nil for none. They are not kept in the Route: where every class
// of a large exchange now reaches its thousands of queues, each Route
// would hold a copy of them.
func (r Route) Gained() []string { return minus(r.After, r.Before) }

// Lost returns the queues the class reached before and not after, sorted;
// nil for none.
func (r Route) Lost() []string { return minus(r.Before, r.After) }

// Reason is why a queue dead-letters a message (route.Reason: rejected,
// expired, maxlen, delivery_limit).
type Reason = route.Reason

// DeadLetterEnd is where a queue's dead letters for one reason go.
type DeadLetterEnd struct {
	// Exchange is the effective dead-letter exchange ("" the default
	// exchange) and RoutingKey the key the dead letters carry (the
	// message's own when KeyFromMessage).
	Configured     bool   `json:"configured"`
	Exchange       string `json:"exchange,omitempty"`
	RoutingKey     string `json:"routing_key,omitempty"`
	KeyFromMessage bool   `json:"key_from_message,omitempty"`
	// Queues are the queues the dead letters reach, sorted; Splits
	// which of them an x-modulus-hash exchange splits them among (each
	// dead letter reaches one of a split's queues).
	Queues []string `json:"queues"`
	Splits []Split  `json:"splits,omitempty"`
	// Dropped is true when they reach no queue; Why says why ("no
	// dead-letter exchange", `dead-letter exchange "x" is not declared`,
	// `DLX "billing.dlx" has no binding for "billing-typo"`, a cycle).
	Dropped bool   `json:"dropped,omitempty"`
	Why     string `json:"why,omitempty"`
	// Held is true when they reach no queue and the queue dead-letters at
	// least once (route.DeadLetterRoute.Held): RabbitMQ keeps them in the
	// queue and tries again until a route exists. Dropped is then false,
	// and Why says why they reach none.
	Held bool `json:"held,omitempty"`
	// Refused, for reason maxlen, is true when the dead letters are the
	// messages the full queue refuses (a classic queue's overflow
	// reject-publish-dlx: the publisher gets a basic.nack for each, and
	// can publish it again), not its oldest messages, which it drops to
	// take the new ones (drop-head, the default, and a quorum queue's
	// reject-publish-dlx: the publisher is told nothing).
	Refused bool `json:"refused,omitempty"`
}

// DeadLetter is one queue's dead letters for one reason whose destination
// changes. When the dead letters keep the message's own routing key on
// either side, their destination depends on it: Class then says which keys
// (on the dead-letter exchange) the change applies to, and there is one
// DeadLetter per class that moves.
type DeadLetter struct {
	Vhost  string `json:"vhost"`
	Queue  string `json:"queue"`
	Reason Reason `json:"reason"`
	// PerMessageTTL, for reason expired, says that the queue has no
	// message TTL on either side: the dead letters are of the messages
	// published with a TTL of their own (the expiration property), which
	// any queue may hold (a delay queue of per-message TTLs holds nothing
	// else).
	PerMessageTTL bool           `json:"per_message_ttl,omitempty"`
	Class         *Class         `json:"class,omitempty"`
	Before        *DeadLetterEnd `json:"before"` // nil: the queue does not exist, or does not dead-letter for Reason
	After         *DeadLetterEnd `json:"after"`
	// Loses is true when they reached a queue before and are dropped
	// after; Cause says why (After.Why).
	Loses bool   `json:"loses_messages,omitempty"`
	Cause string `json:"cause,omitempty"`
	// NewQueue, for reason maxlen, says the queue is declared after the
	// change only (new, or under a new name) and has a length limit:
	// Before is nil because it did not exist. From are the queues that
	// what reaches it reached before and no longer does (a route moved to
	// it); Loses is true only where its dead letters are dropped and one
	// of From kept more (no length limit, or a higher one): what reached
	// no queue before, or still reaches another, is not lost to its being
	// full.
	NewQueue bool     `json:"new_queue,omitempty"`
	From     []string `json:"from,omitempty"`
	// Sooner says the dead letters go where they went, but the queue now
	// dead-letters (or drops) more of them, or sooner: a lower length
	// limit, a shorter message TTL, a lower delivery limit (Cause says
	// which). Without a dead-letter exchange they are dropped on both
	// sides, and Loses is true; with one, more of them reach its queues
	// (Before and After merge the classes of keys it tells apart), and
	// Loses is true only where it drops some of them. A delay tier's
	// shorter message TTL is not reported so: it is the tier's delay.
	Sooner bool `json:"sooner,omitempty"`
}

// DelayTier is one delay queue (a retry.delays tier, or a queue that lets
// its messages expire into a dead-letter exchange and declares no
// consumer-facing role) whose expired messages return somewhere else.
type DelayTier struct {
	Vhost string `json:"vhost"`
	Queue string `json:"queue"`
	// Origin is the working queue the tier was declared for, when the
	// file says (topology.Queue.Origin); "" otherwise.
	Origin string `json:"origin,omitempty"`
	// Class, as in DeadLetter, is set when where the tier's messages
	// return depends on the message (no dead-letter routing key, or a
	// headers exchange on the way): one DelayTier per class that moves.
	Class *Class `json:"class,omitempty"`
	// DelayMS is the tier's message TTL after the change (before it when
	// the tier is gone).
	DelayMS int64 `json:"delay_ms"`
	// DelayWritten, where the tier's TTL is a value the files took from
	// the environment, is what the files wrote for it ("${DELAY}"), which
	// the text ("${DELAY} ms") and the JSON plan show in its place; ""
	// otherwise.
	DelayWritten string         `json:"-"`
	Before       *DeadLetterEnd `json:"before"`
	After        *DeadLetterEnd `json:"after"`
	Loses        bool           `json:"loses_messages,omitempty"`
	Cause        string         `json:"cause,omitempty"`
}

// Silenced is a queue that exists after the change and that some exchange
// other than the default one, or some dead-letter route, reached before,
// but that nothing but the default exchange reaches after (a federated
// queue, which its federation link feeds, is not; nor a queue a shovel
// publishes to).
type Silenced struct {
	Vhost string `json:"vhost"`
	Queue string `json:"queue"`
	// Cause says what cut it off (`its only binding, from "orders" with
	// key "order.paid", is gone`).
	Cause string `json:"cause"`
	// Unknown, when set, says why mqctl cannot tell whether the queue
	// is silenced: a shovel publishes to a queue of its name through a
	// URI that may be this broker or another (Options.Here). Such a
	// queue does not count as lost (LosesMessages).
	Unknown string `json:"unknown,omitempty"`
}

// Expiring is a queue declared on both sides that expires after the
// change (x-expires, by argument or policy) where it did not, or sooner:
// once it has been unused that long (no consumer, no basic.get),
// RabbitMQ deletes it with every message it holds. Whether it holds any
// then is not known (mqctl diff cannot tell, a plan cannot tell for
// later), so it may lose messages, as a new length limit or message TTL
// without a dead-letter exchange may.
type Expiring struct {
	Vhost string `json:"vhost"`
	Queue string `json:"queue"`
	// BeforeMS is the queue's expiry before the change (nil: none), and
	// AfterMS after it.
	BeforeMS *int64 `json:"before_ms,omitempty"`
	AfterMS  int64  `json:"after_ms"`
	Cause    string `json:"cause"`
	// BeforeWritten and AfterWritten, where the expiry is a value the
	// files took from the environment, are what the files wrote for it
	// ("${EXP}"), which the text ("${EXP} ms") and the JSON plan show in
	// its place; "" otherwise.
	BeforeWritten string `json:"-"`
	AfterWritten  string `json:"-"`
}

// Refusing is a queue declared on both sides that refuses publishes once
// full after the change where it did not, or sooner: a length limit it
// did not have (or a lower one), or overflow reject-publish where it had
// another, by argument or policy; or a queue declared after the change
// only that does (NewQueue). What is published to it once full is
// refused: a publisher using confirms gets a basic.nack and can publish
// it again, one without confirms loses it, and nothing is dead-lettered.
// mqctl cannot tell whether the publishers use confirms, so it may lose
// messages, as a new length limit without a dead-letter exchange may.
type Refusing struct {
	Vhost string `json:"vhost"`
	Queue string `json:"queue"`
	Type  string `json:"type"` // classic or quorum
	// Limit is its length limit after the change ("1000 messages or
	// 1048576 bytes"); BeforeLimit before it ("" for none), with the
	// overflow it had then, as the queue reads it (BeforeOverflow:
	// drop-head by default, and for a quorum queue's reject-publish-dlx).
	Limit          string `json:"limit"`
	BeforeLimit    string `json:"before_limit,omitempty"`
	BeforeOverflow string `json:"before_overflow,omitempty"`
	Cause          string `json:"cause"`
	// Unknown, when set, says why mqctl cannot tell whether anything is
	// refused: a quorum dead-letter queue that no other exchange binds
	// takes the dead letters past its limit, and refuses only what is
	// published to it by name. Such a queue does not count as lost.
	Unknown string `json:"unknown,omitempty"`
	// NewQueue and From, as in DeadLetter: the queue is declared after the
	// change only, and From are the queues what reaches it reached before
	// and no longer does. A new queue counts as lost only where one of
	// them kept more than it does (KeptMore: no length limit, or a higher
	// one).
	NewQueue bool     `json:"new_queue,omitempty"`
	From     []string `json:"from,omitempty"`
	KeptMore bool     `json:"kept_more,omitempty"`
}

// loses reports whether what r refuses is lost to the change.
func (r Refusing) loses() bool { return r.Unknown == "" && (!r.NewQueue || r.KeptMore) }

// Trimming is a stream declared on both sides that keeps less after the
// change: a retention (max-length-bytes, max-age, by argument or policy)
// it did not have, or a tighter one. RabbitMQ removes its oldest
// segments past it, whole, read or not: a consumer behind them loses
// them. What the stream holds is not known, so it may lose messages, as a
// new message TTL without a dead-letter exchange may.
type Trimming struct {
	Vhost string `json:"vhost"`
	Queue string `json:"queue"`
	// Before and After are its retention ("1000000 bytes or 7d"; ""
	// for none).
	Before string `json:"before,omitempty"`
	After  string `json:"after"`
	Cause  string `json:"cause"`
}

// Link is a shovel or federation upstream that is added, removed, or
// takes messages from or moves them to somewhere else after the change.
// A shovel removed leaves the messages of a queue it consumed from in
// that queue, where they pile up until something else consumes them (or
// its length limit or message TTL acts: Effect says so); a shovel that
// consumed from an exchange no longer copies its messages. Neither is
// counted as lost. Where a URI names a host mqctl cannot place, Unknown
// says so. Where the queue they pile up in drops some (Loses), the
// change loses them.
type Link struct {
	Vhost string `json:"vhost"`
	Kind  string `json:"kind"` // "shovel" or "federation_upstream"
	Name  string `json:"name"`
	// Before and After say where it took messages from and to (a
	// shovel), or the upstream it connects to; "" where it does not
	// exist on that side.
	Before  string `json:"before,omitempty"`
	After   string `json:"after,omitempty"`
	Effect  string `json:"effect"`
	Unknown string `json:"unknown,omitempty"`
	// Loses is true where a shovel removed leaves messages in a queue of
	// the vhost that drops (or refuses) some once full or expired,
	// without a dead-letter exchange: Effect says how.
	Loses bool `json:"loses_messages,omitempty"`
}

// Diff is what a change does to messages. Every list is sorted by vhost,
// then exchange or queue, then class.
type Diff struct {
	Routes      []Route      `json:"routes,omitempty"`
	DeadLetters []DeadLetter `json:"dead_letters,omitempty"`
	DelayTiers  []DelayTier  `json:"delay_tiers,omitempty"`
	Silenced    []Silenced   `json:"silenced,omitempty"`
	Expiring    []Expiring   `json:"expiring,omitempty"`
	Refusing    []Refusing   `json:"refusing,omitempty"`
	Trimming    []Trimming   `json:"trimming,omitempty"`
	Links       []Link       `json:"links,omitempty"`
	// Truncated names the exchanges ("vhost/exchange") whose key classes
	// went past Options.MaxClasses: not every class of theirs is listed.
	Truncated []string `json:"truncated,omitempty"`
	// Unlisted counts, per vhost, the queues declared on one side only
	// whose names on the default exchange are past Options.MaxClasses (the
	// first by name are Routes): their routes are not listed.
	Unlisted []Unlisted `json:"unlisted,omitempty"`
	// Ties are the queues and exchanges whose policy the flows assume,
	// where two policies with different definitions tie.
	Ties []Tie `json:"ties,omitempty"`
}

// Tie is a queue or exchange that two policies (or operator policies)
// with different definitions both match at the highest priority, on one
// side of the change or both (route.PolicyTie): RabbitMQ applies one of
// them, which is not defined. The flows assume Assumed (the first by
// name); where RabbitMQ applies Other, the object's messages may go
// elsewhere than they say.
type Tie struct {
	Vhost    string `json:"vhost"`
	Side     string `json:"side"` // "before", "after", or "both"
	Kind     string `json:"kind"` // "queue" or "exchange"
	Name     string `json:"name"`
	Operator bool   `json:"operator,omitempty"` // operator policies
	Assumed  string `json:"assumed"`
	Other    string `json:"other"`
}

// Unlisted is how many queues of a vhost, declared on one side only, have
// no route of their own in Diff.Routes: New are declared after the change
// only (their names now reach them on the default exchange), Deleted
// before it only (their names reach no queue any more, and what they hold
// is deleted with them).
type Unlisted struct {
	Vhost   string `json:"vhost"`
	New     int    `json:"new"`
	Deleted int    `json:"deleted"`
}

// Compare returns what changing before into after does to messages. Either
// side may be nil (an empty broker). Only what differs is computed: an
// exchange whose bindings, arguments and downstream are the same on both
// sides is not enumerated.
//
// The classes are of messages without CC and BCC headers: a message with
// them goes where each of its keys goes. An x-modulus-hash exchange
// (RabbitMQ 4.3+) picks one of its destinations by a hash of the key, not
// by a pattern: a class that passes through one is reported with its
// Example's pick, and other keys of the class may pick another of its
// destinations.
func Compare(before, after *topology.Topology, o Options) *Diff {
	return compare(before, after, o)
}

// Empty reports whether the change moves no message.
func (d *Diff) Empty() bool {
	return d == nil || len(d.Routes)+len(d.DeadLetters)+len(d.DelayTiers)+len(d.Silenced)+len(d.Expiring)+len(d.Refusing)+len(d.Trimming)+len(d.Links)+len(d.Unlisted) == 0
}

// LosesMessages reports whether the change loses messages: a class that is
// now unroutable, dead letters or delayed messages now dropped, a queue
// nothing reaches any more, one that now expires (sooner), or one that
// now refuses publishes once full (sooner), or a stream that keeps less. It also
// reports true where an exchange's classes went past Options.MaxClasses
// (Truncated, but for the default exchange's queue names, which Unlisted
// counts): the classes past the cap were not compared, and any of them may
// lose messages; saying none does would let a change through that drops
// them.
func (d *Diff) LosesMessages() bool {
	if d == nil {
		return false
	}
	if len(d.truncatedExchanges()) > 0 {
		return true
	}
	for _, r := range d.Routes {
		if r.Loses {
			return true
		}
	}
	for _, dl := range d.DeadLetters {
		if dl.Loses {
			return true
		}
	}
	for _, t := range d.DelayTiers {
		if t.Loses {
			return true
		}
	}
	for _, u := range d.Unlisted {
		if u.Deleted > 0 {
			return true
		}
	}
	for _, l := range d.Links {
		if l.Loses {
			return true
		}
	}
	for _, s := range d.Silenced {
		if s.Unknown == "" {
			return true
		}
	}
	for _, r := range d.Refusing {
		if r.loses() {
			return true
		}
	}
	return len(d.Expiring)+len(d.Trimming) > 0
}
