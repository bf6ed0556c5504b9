package planjson

import (
	"encoding/json"
	"strconv"
)

// Flows is what a change does to messages (docs/plan-json.md, "Message
// flows"): in the JSON plan, where "before" is the broker as read and
// "after" the broker as apply leaves it; in "mqctl diff -o json", the old
// files and the new.
type Flows struct {
	// QueueLists are the lists of queue names the entries below name, each
	// written once: a list field of an entry (a route's before and after,
	// an end's queues, a split's, from) is the index of its list here
	// (format_version 3). Many classes of messages reach the same queues:
	// written in place, those lists made the document grow with the square
	// of the queues.
	QueueLists [][]string `json:"queue_lists"`
	// LosesMessages is true when any entry below loses messages.
	LosesMessages bool        `json:"loses_messages"`
	Routes        []FlowRoute `json:"routes"`
	DeadLetters   []FlowDead  `json:"dead_letters"`
	DelayTiers    []FlowTier  `json:"delay_tiers"`
	Silenced      []FlowQueue `json:"silenced"`
	// Expiring are the queues that now expire, or sooner (absent when
	// none).
	Expiring []FlowExpiring `json:"expiring,omitempty"`
	// Refusing are the queues that now refuse publishes once full, or
	// sooner (absent when none).
	Refusing []FlowRefusing `json:"refusing,omitempty"`
	// Trimming are the streams that now keep less (absent when none).
	Trimming []FlowTrimming `json:"trimming,omitempty"`
	// Links are the shovels and federation upstreams that move messages
	// elsewhere (absent when none).
	Links []FlowLink `json:"links,omitempty"`
	// Truncated names the exchanges ("vhost/exchange") with more classes
	// of keys than mqctl enumerates: not all of theirs are listed.
	Truncated []string `json:"truncated"`
	// Unlisted counts, per vhost, the queues declared on one side only
	// whose names on the default exchange have no route listed (absent
	// when none).
	Unlisted []FlowUnlisted `json:"unlisted,omitempty"`
	// Ties are the queues and exchanges whose policy the flows assume
	// where two policies with different definitions tie (absent when
	// none).
	Ties []FlowTie `json:"ties,omitempty"`
	// Unknown are the vhosts whose flows mqctl could not tell (it could
	// not read their exchanges, queues, bindings or policies), and why.
	Unknown []FlowUnknown `json:"unknown"`
}

// FlowClass is a class of messages that every binding on both sides
// treats alike, by a representative.
type FlowClass struct {
	Kind       string         `json:"kind"`
	RoutingKey string         `json:"routing_key"`
	Headers    map[string]any `json:"headers,omitempty"`
	Matches    []string       `json:"matches"`
	// Keyed, present when true, says the class is of routing keys
	// although its kind (fanout, other) ignores them: an exchange behind
	// it routes by key (flow.Class.Keyed).
	Keyed bool `json:"keyed,omitempty"`
	// ByHeaders, present when true, says the criteria of a headers
	// exchange on the class's way tell it apart (flow.Class.ByHeaders).
	ByHeaders bool `json:"by_headers,omitempty"`
	// Before and After, present when the exchange's type changed, say
	// what tells the class apart on each side (flow.Class.Before).
	Before *FlowClassSide `json:"before,omitempty"`
	After  *FlowClassSide `json:"after,omitempty"`
}

// FlowClassSide is how one side of the change tells a class apart: the
// kind of the exchange there and the keys or criteria of that side the
// class matches.
type FlowClassSide struct {
	Kind    string   `json:"kind"`
	Matches []string `json:"matches"`
}

// FlowRoute is a class of messages published to an exchange that reaches
// other queues after the change.
type FlowRoute struct {
	Vhost    string    `json:"vhost"`
	Exchange string    `json:"exchange"`
	Class    FlowClass `json:"class"`
	// Before and After are the queues the class reaches on each side: the
	// indexes of their lists in Flows.QueueLists. What After adds to
	// Before and drops (version 2's gained and lost) is their difference.
	Before        int         `json:"before"`
	After         int         `json:"after"`
	BeforeSplits  []FlowSplit `json:"before_splits,omitempty"`
	AfterSplits   []FlowSplit `json:"after_splits,omitempty"`
	Selective     bool        `json:"selective,omitempty"`
	LosesMessages bool        `json:"loses_messages"`
	Cause         string      `json:"cause,omitempty"`
}

// FlowSplit is an exchange that splits a class of messages among queues
// (x-modulus-hash, by a hash of the routing keys; x-local-random, Random,
// at random among those on the publisher's node): each message reaches
// one of them. Unsimulated, the exchange's type, says that mqctl does not
// simulate it (a plugin type, or x-modulus-hash before RabbitMQ 4.3): the
// queues are those it can lead to, and which of them a message reaches is
// unknown.
type FlowSplit struct {
	Exchange string `json:"exchange"`
	// Queues is the index of the split's queues in Flows.QueueLists.
	Queues      int    `json:"queues"`
	Random      bool   `json:"random,omitempty"`
	Unsimulated string `json:"unsimulated,omitempty"`
	// Through are the destinations the exchange picks among that are
	// exchanges, each with the queues of Queues it leads to (absent when
	// every destination is a queue).
	Through []FlowSplitThrough `json:"through,omitempty"`
}

// FlowSplitThrough is an exchange a split's exchange picks as one
// destination, and the queues it leads a message to.
type FlowSplitThrough struct {
	Exchange string `json:"exchange"`
	// Queues is the index of its queues in Flows.QueueLists.
	Queues int `json:"queues"`
}

// FlowEnd is where dead letters (or a delay tier's messages) go.
type FlowEnd struct {
	Configured     bool   `json:"configured"`
	Exchange       string `json:"exchange"`
	RoutingKey     string `json:"routing_key"`
	KeyFromMessage bool   `json:"key_from_message"`
	// Queues is the index of the queues the dead letters reach in
	// Flows.QueueLists.
	Queues  int         `json:"queues"`
	Splits  []FlowSplit `json:"splits,omitempty"`
	Dropped bool        `json:"dropped"`
	Why     string      `json:"why,omitempty"`
	Held    bool        `json:"held,omitempty"`
	// Refused, for reason maxlen: the dead letters are the new messages
	// the full queue refuses, not its oldest (flow.DeadLetterEnd.Refused).
	Refused bool `json:"refused,omitempty"`
}

// FlowDead is a queue's dead letters for one reason (and, when they keep
// the message's key, one class of keys) that go somewhere else.
type FlowDead struct {
	Vhost  string `json:"vhost"`
	Queue  string `json:"queue"`
	Reason string `json:"reason"`
	// PerMessageTTL, present when true, says the queue has no message
	// TTL: reason expired is of messages published with a TTL of their
	// own (flow.DeadLetter.PerMessageTTL).
	PerMessageTTL bool       `json:"per_message_ttl,omitempty"`
	Class         *FlowClass `json:"class,omitempty"`
	Before        *FlowEnd   `json:"before"`
	After         *FlowEnd   `json:"after"`
	LosesMessages bool       `json:"loses_messages"`
	Cause         string     `json:"cause,omitempty"`
	// NewQueue: the queue is declared after the change only; From: the
	// queues what reaches it reached before, the index of their list in
	// Flows.QueueLists (absent when none); Sooner: they go where they
	// went, more of them or sooner after (flow.DeadLetter).
	NewQueue bool `json:"new_queue,omitempty"`
	From     *int `json:"from,omitempty"`
	Sooner   bool `json:"sooner,omitempty"`
}

// FlowTier is a delay tier whose messages return somewhere else.
type FlowTier struct {
	Vhost         string     `json:"vhost"`
	Queue         string     `json:"queue"`
	Origin        string     `json:"origin,omitempty"`
	DelayMS       Millis     `json:"delay_ms"`
	Class         *FlowClass `json:"class,omitempty"`
	Before        *FlowEnd   `json:"before"`
	After         *FlowEnd   `json:"after"`
	LosesMessages bool       `json:"loses_messages"`
	Cause         string     `json:"cause,omitempty"`
	// FromEnv: DelayMS is a value the files took from the environment,
	// shown as they wrote it.
	FromEnv bool `json:"from_env,omitempty"`
}

// FlowExpiring is a queue that now expires, or sooner: once unused that
// long, RabbitMQ deletes it with the messages it holds.
type FlowExpiring struct {
	Vhost    string  `json:"vhost"`
	Queue    string  `json:"queue"`
	BeforeMS *Millis `json:"before_ms,omitempty"`
	AfterMS  Millis  `json:"after_ms"`
	Cause    string  `json:"cause"`
	// FromEnv: BeforeMS or AfterMS is a value the files took from the
	// environment, shown as they wrote it.
	FromEnv bool `json:"from_env,omitempty"`
}

// Millis is a flow's duration in milliseconds: an integer, or, where it is
// a value the files took from the environment, which may be a secret, the
// string they wrote for it ("${TTL}"), as the document shows every such
// value (a field change's before and after, an argument).
type Millis struct {
	MS int64
	// Written is what the files wrote ("${TTL}"); "" for a value of
	// their own.
	Written string
}

// MarshalJSON writes Written, a string, where set; MS otherwise.
func (m Millis) MarshalJSON() ([]byte, error) {
	if m.Written != "" {
		return json.Marshal(m.Written)
	}
	return strconv.AppendInt(nil, m.MS, 10), nil
}

// UnmarshalJSON reads an integer into MS, a string into Written.
func (m *Millis) UnmarshalJSON(b []byte) error {
	if len(b) > 0 && b[0] == '"' {
		*m = Millis{}
		return json.Unmarshal(b, &m.Written)
	}
	*m = Millis{}
	return json.Unmarshal(b, &m.MS)
}

// FlowRefusing is a queue that now refuses publishes once full, or sooner
// (flow.Refusing).
type FlowRefusing struct {
	Vhost          string `json:"vhost"`
	Queue          string `json:"queue"`
	Type           string `json:"type"`
	Limit          string `json:"limit"`
	BeforeLimit    string `json:"before_limit,omitempty"`
	BeforeOverflow string `json:"before_overflow,omitempty"`
	Cause          string `json:"cause"`
	Unknown        string `json:"unknown,omitempty"`
	// NewQueue: the queue is declared after the change only; From: the
	// queues what reaches it reached before, the index of their list in
	// Flows.QueueLists (absent when none); KeptMore: one of them kept more
	// (flow.Refusing).
	NewQueue bool `json:"new_queue,omitempty"`
	From     *int `json:"from,omitempty"`
	KeptMore bool `json:"kept_more,omitempty"`
}

// FlowTrimming is a stream that now keeps less (flow.Trimming).
type FlowTrimming struct {
	Vhost  string `json:"vhost"`
	Queue  string `json:"queue"`
	Before string `json:"before,omitempty"`
	After  string `json:"after"`
	Cause  string `json:"cause"`
}

// FlowLink is a shovel or federation upstream added, removed, or moving
// messages from or to elsewhere (flow.Link).
type FlowLink struct {
	Vhost   string `json:"vhost"`
	Kind    string `json:"kind"`
	Name    string `json:"name"`
	Before  string `json:"before,omitempty"`
	After   string `json:"after,omitempty"`
	Effect  string `json:"effect"`
	Unknown string `json:"unknown,omitempty"`
	Loses   bool   `json:"loses_messages,omitempty"`
}

// FlowQueue is a queue nothing reaches any more.
type FlowQueue struct {
	Vhost string `json:"vhost"`
	Queue string `json:"queue"`
	Cause string `json:"cause"`
	// Unknown, present when set, says why mqctl cannot tell whether the
	// queue is silenced (flow.Silenced.Unknown): it is then not counted
	// as lost.
	Unknown string `json:"unknown,omitempty"`
}

// FlowUnknown is a vhost whose flows mqctl could not tell.
type FlowUnknown struct {
	Vhost  string `json:"vhost"`
	Reason string `json:"reason"`
}

// FlowUnlisted is how many queues of a vhost, declared on one side only,
// have no route of their own listed: New after the change only, Deleted
// before it only (what they hold is deleted with them).
type FlowUnlisted struct {
	Vhost   string `json:"vhost"`
	New     int    `json:"new"`
	Deleted int    `json:"deleted"`
}

// FlowTie is a queue or exchange that two policies (or operator policies)
// with different definitions match at the same, highest priority: RabbitMQ
// applies one of them, which is not defined; the flows assume Assumed
// (flow.Tie).
type FlowTie struct {
	Vhost    string `json:"vhost"`
	Side     string `json:"side"`
	Kind     string `json:"kind"`
	Name     string `json:"name"`
	Operator bool   `json:"operator,omitempty"`
	Assumed  string `json:"assumed"`
	Other    string `json:"other"`
}
