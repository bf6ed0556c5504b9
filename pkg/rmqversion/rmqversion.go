// Package rmqversion owns the RabbitMQ versions mqctl targets and what
// differs between them: what a version refuses, what it fills in by itself
// and what it does differently at run time (dead-lettering, delivery limits).
//
// Live commands take the version the broker reports; offline commands take
// --rabbitmq-version (env MQCTL_RABBITMQ_VERSION), Default when unset.
package rmqversion

import (
	"fmt"
	"strconv"
	"strings"
)

// Version is a RabbitMQ release, major.minor[.patch]. The zero Version
// stands for Default.
type Version struct {
	Major, Minor, Patch int
	// HasPatch is false for a version given as major.minor ("4.0").
	HasPatch bool
	// facts are what a live broker reports about itself (WithFacts): where
	// it reports one, it wins over the table.
	facts *Facts
}

// Default is the version offline commands judge for when none is given:
// what production teams run today (4.3 shipped in April 2026; Debian
// forky ships 4.3.6).
var Default = Version{Major: 4, Minor: 3}

// Supported is the range mqctl is built and tested for: every test runs
// against 3.10, 4.0 and 4.3 (the project's scripts/broker); 4.1 and 4.2
// are judged by the same table of version facts (AtLeast).
var (
	Oldest = Version{Major: 3, Minor: 10}
	Newest = Version{Major: 4, Minor: 3}
)

// EnvVar names the environment variable offline commands read.
const EnvVar = "MQCTL_RABBITMQ_VERSION"

// Parse reads "4.0", "4.0.5", "3.10.8" (and tolerates a suffix such as
// "4.0.5+1.g123" or "4.1.0-beta.1" after the numbers).
func Parse(s string) (Version, error) {
	orig := s
	s = strings.TrimSpace(s)
	if i := strings.IndexAny(s, "+-~ "); i >= 0 {
		s = s[:i]
	}
	parts := strings.Split(s, ".")
	if len(parts) < 2 || len(parts) > 3 {
		return Version{}, fmt.Errorf("RabbitMQ version %q: want MAJOR.MINOR such as 4.0 or 3.10 (a patch, 4.0.5, may follow)", orig)
	}
	var n [3]int
	for i, p := range parts {
		v, err := strconv.Atoi(p)
		if err != nil || v < 0 || p == "" {
			return Version{}, fmt.Errorf("RabbitMQ version %q: %q is not a number; want MAJOR.MINOR such as 4.0 or 3.10", orig, p)
		}
		n[i] = v
	}
	return Version{Major: n[0], Minor: n[1], Patch: n[2], HasPatch: len(parts) == 3}, nil
}

// MustParse is Parse for constants; it panics on a malformed version.
func MustParse(s string) Version {
	v, err := Parse(s)
	if err != nil {
		panic(err)
	}
	return v
}

// OrDefault returns v, or Default for the zero Version.
func (v Version) OrDefault() Version {
	if v == (Version{}) {
		return Default
	}
	return v
}

// String renders the version as given ("4.0" or "4.0.5").
func (v Version) String() string {
	v = v.OrDefault()
	if v.HasPatch {
		return fmt.Sprintf("%d.%d.%d", v.Major, v.Minor, v.Patch)
	}
	return fmt.Sprintf("%d.%d", v.Major, v.Minor)
}

// Line is the release series, "4.0" for 4.0.5.
func (v Version) Line() string {
	v = v.OrDefault()
	return fmt.Sprintf("%d.%d", v.Major, v.Minor)
}

// AtLeast reports whether v is major.minor or later.
func (v Version) AtLeast(major, minor int) bool {
	v = v.OrDefault()
	return v.Major > major || (v.Major == major && v.Minor >= minor)
}

// Supported reports whether v lies in the range mqctl is tested for; a
// later 4.x is judged as 4.x.
func (v Version) Supported() bool {
	v = v.OrDefault()
	return v.AtLeast(Oldest.Major, Oldest.Minor) && v.Major <= Newest.Major
}

// StoresDefaultQueueType: the vhost's default queue type is kept (3.11+);
// 3.10 ignores it.
func (v Version) StoresDefaultQueueType() bool { return v.AtLeast(3, 11) }

// FillsDefaultQueueType: the broker gives every vhost a default queue type
// ("classic" when none is asked for) and reports it (4.0+).
func (v Version) FillsDefaultQueueType() bool { return v.AtLeast(4, 0) }

// PolicyApplyToQueueTypes: apply-to classic_queues, quorum_queues and
// streams exist (3.12+).
func (v Version) PolicyApplyToQueueTypes() bool { return v.AtLeast(3, 12) }

// ClassicMirroring: the ha-* policy keys are accepted (before 4.0; 4.0
// removed classic queue mirroring and refuses them with HTTP 400).
func (v Version) ClassicMirroring() bool { return !v.AtLeast(4, 0) }

// PlacementsWithoutStats: a queue listing with disable_stats=true still
// reports where each queue lives and what state it is in (node, state,
// and a quorum queue's or stream's leader, members and online), exactly
// as the listing with statistics does, at a fraction of its cost (seen on
// 4.0.5: 0.8 s against 3.6 s for 25,000 queues). 3.10.8 leaves out a
// quorum queue's node and a stream's members and online members there,
// and reports "live" for "running" (pkg/broker
// TestQueuePlacementsAgainstBroker states both): before 4.0 placements are read with
// the statistics.
func (v Version) PlacementsWithoutStats() bool { return v.AtLeast(4, 0) }

// QuorumDeliveryLimit is the delivery limit a quorum queue has when none is
// set: 20 from 4.0 (past it a message is dead-lettered, or dropped without
// a dead-letter exchange; 4.0.1 release notes, rabbit_quorum_queue.erl
// gather_policy_config at v4.0.5), none (0) before.
func (v Version) QuorumDeliveryLimit() int {
	if v.AtLeast(4, 0) {
		return 20
	}
	return 0
}

// CountsRequeueAsDelivery: a quorum queue counts a message returned with
// basic.nack requeue=true (as dlq peek and replay return what they only
// read) towards its delivery limit. 4.3 counts failed deliveries only
// (basic.reject requeue=true does count; nack does not, and the new
// x-acquired-count header counts every acquisition); before, every return
// counted (rabbit_fifo return_one at v4.0.5 and v4.3.5; pkg/dlq's
// TestPeekAndTheDeliveryLimit states each version's answer).
func (v Version) CountsRequeueAsDelivery() bool { return !v.AtLeast(4, 3) }

// ProtectsTaggedUsers: a user tagged "protected" cannot be changed or
// deleted through the management API (400 "Protected users cannot be
// modified via the HTTP API"; 4.2.0 release notes), only with rabbitmqctl.
func (v Version) ProtectsTaggedUsers() bool { return v.AtLeast(4, 2) }

// ValidatesShovelQueueArgs: a shovel's src-queue-args and
// dest-queue-args are checked as a queue declare checks them, and refused
// with HTTP 400 (4.3.0+; see checkShovelQueueArgs).
func (v Version) ValidatesShovelQueueArgs() bool { return v.AtLeast(4, 3) }

// DirectReplyRouted: a client's publish to the default exchange with a
// Direct Reply-To key (amq.rabbitmq.reply-to.…) counts as routed, to the
// requester's volatile queue (rabbit_volatile_queue, 4.2.0+), even when
// the requester is gone. Before 4.2 the channel hands the reply to the
// requester's channel beside routing (rabbit_channel deliver_reply/2 at
// v3.10.8 and v4.0.5), and the publish counts as unroutable: with
// mandatory it is returned (basic.return NO_ROUTE) although delivered.
func (v Version) DirectReplyRouted() bool { return v.AtLeast(4, 2) }

// DeprecatesTransientQueues: transient (non-durable) non-exclusive queues
// are a deprecated feature (transient_nonexcl_queues), refused where the
// broker denies it (4.0+).
func (v Version) DeprecatesTransientQueues() bool { return v.AtLeast(4, 0) }

// IgnoresClientXDeath: an x-death header a client publishes is not taken as
// dead-letter history: the first death starts a new one (and sets the
// x-first-death-* headers), the client's entries neither count up nor take
// part in cycle detection, and the delivered dead letter's x-death holds
// the broker's entries only. So in 3.13.0-3.13.2 (message containers,
// rabbitmq-server#10709, #11331) and from 4.0 (4.0.1 release notes, "AMQP
// 0.9.1 x-death header"; mc.erl record_death at v4.0.5). 3.10-3.12 read the
// header and update it (rabbit_dead_letter.erl update_x_death_header at
// v3.10.8), and so does 3.13.3+ again (#11339, backported to 3.13.x only).
// A 3.13 given without a patch is judged as the latest 3.13.
func (v Version) IgnoresClientXDeath() bool {
	return v.AtLeast(4, 0) || (v.AtLeast(3, 13) && !v.atLeastPatch(3, 13, 3))
}

// RegroupsXDeath: before each death the broker regroups an x-death list of
// two or more entries by queue and reason, keeping the first of each, and
// the fold returns them reversed: after deaths in q1, q2, q3 the list is
// [q3, q1, q2] (rabbit_dead_letter.erl group_by_queue_and_reason at
// v3.10.8; the same code is mc_compat.erl's at 3.13, kept for old
// messages). Before 3.13. From 3.13 (message containers) the broker keeps
// its own death records, most recent first, a repeated death moving its
// entry to the front: [q3, q2, q1] (mc.erl record_death at v4.0.5).
func (v Version) RegroupsXDeath() bool { return !v.AtLeast(3, 13) }

// ChecksDeathCyclesInKeyOrder: dead-letter cycle detection walks the death
// records in the order of their (queue, reason) keys, queue names compared
// byte by byte, instead of most recent first (mc.erl is_cycle_v1 over
// maps:keys/1): 3.13.0-3.13.2. 3.13.3 replaced it with the ordered death
// list (rabbitmq-server#11174, #11048, fixing #11159, feature flag
// message_containers_deaths_v2), as 4.0 has it (mc.erl is_cycle_v2 at
// v4.0.5); before 3.13 the x-death header is walked in its order.
func (v Version) ChecksDeathCyclesInKeyOrder() bool {
	return v.AtLeast(3, 13) && !v.atLeastPatch(3, 13, 3)
}

// DeadLettersReachStreams: a dead letter routed to a stream is written to
// it (3.12+). Before 3.12 RabbitMQ drops it: rabbit_stream_queue:deliver/2
// leaves out a delivery without a channel, which dead-lettering is (its
// "stateless" clause does nothing at v3.10.8 and v3.11.28; it writes the
// message from v3.12.0). Measured on 3.10.8: a dead letter a fanout dead-letter
// exchange routed to a stream was gone, a publish to that exchange
// landed.
func (v Version) DeadLettersReachStreams() bool { return v.AtLeast(3, 12) }

// SetsLastDeathHeaders: every death also sets x-last-death-reason,
// x-last-death-queue and x-last-death-exchange on the dead letter (3.13+,
// message-container annotations; mc.erl record_death at v4.0.5). 3.10-3.12
// set only the x-first-death-* headers, at the first death.
func (v Version) SetsLastDeathHeaders() bool { return v.AtLeast(3, 13) }

// KeepsCCWithDeadLetterRoutingKey: a dead letter routed by the queue's
// x-dead-letter-routing-key keeps its CC header (3.13+: rabbit_dead_letter
// publish/5 at v4.0.5 sets the routing keys only, and mc_compat.erl at 3.13
// has the CC removal commented out); 3.10-3.12 remove CC then
// (rabbit_dead_letter.erl make_msg at v3.10.8). Either way the CC keys no
// longer route the dead letter.
func (v Version) KeepsCCWithDeadLetterRoutingKey() bool { return v.AtLeast(3, 13) }

// XDeathKeysLessBCC: an x-death entry's routing-keys are the message's
// routing keys less its BCC keys, one occurrence each (mc.erl record_death
// at v4.0.5: RKeys0 -- BccKeys), 3.13+; 3.10-3.12 take the message's first
// routing key and the keys in its CC header (rabbit_dead_letter.erl
// make_msg at v3.10.8). They differ in order when a BCC key repeats the
// routing key, and after a dead-letter routing key that a BCC key equals.
func (v Version) XDeathKeysLessBCC() bool { return v.AtLeast(3, 13) }

// HeadersMatchNumberTypes: the headers exchange compares a criterion with
// the message's header with =:= (3.13+, rabbit_exchange_type_headers.erl
// match/2 at v4.0.5, over mc:routing_headers): an integer never equals a
// float, so a binding's 1 does not match a header 1.0. Before 3.13 it
// compares with == (headers_match/5 at v3.10.8), and 1 matches 1.0.
// Integers of any width match each other in both, and inside arrays and
// tables the AMQP field types are compared in both.
func (v Version) HeadersMatchNumberTypes() bool { return v.AtLeast(3, 13) }

// HeadersTimestampMillis: the headers exchange sees a timestamp header as
// its value in milliseconds (3.13+, mc_amqpl:routing_value/2 at v4.0.5
// and v4.3.5 multiplies the AMQP timestamp, in seconds, by 1000; Message
// Containers, rabbitmq-server#5077), so a criterion 1700000000000 matches
// the timestamp 1700000000. Before 3.13 it compares the seconds
// (headers_match/5 at v3.10.8 compares the values as sent).
func (v Version) HeadersTimestampMillis() bool { return v.AtLeast(3, 13) }

// OperatorPolicyOverflow: operator policies may set overflow and
// queue-version, and where a policy sets them too the operator policy's
// value wins (3.12.7+, release notes of 3.12.7, rabbitmq-server#9636,
// #9548; rabbit_policies.erl merge_policy_value at v4.0.5); before, the
// broker refuses an operator policy with those keys. A 3.12 given without
// a patch is judged as the latest 3.12.
func (v Version) OperatorPolicyOverflow() bool { return v.atLeastPatch(3, 12, 7) }

// NegativeDeliveryLimitDisables: a quorum queue's delivery limit of -1 (or
// any negative one) means none, and where the queue's argument and a
// policy disagree and either is negative the larger applies (4.0+, 4.0.1
// release notes; rabbit_fifo.erl update_config and rabbit_quorum_queue.erl
// resolve_delivery_limit at v4.0.5). Before, a policy's delivery-limit
// must be 0 or more, the smaller value applies, and a negative limit
// would dead-letter a message at its first return (rabbit_fifo.erl
// return_one at v3.10.8).
func (v Version) NegativeDeliveryLimitDisables() bool { return v.AtLeast(4, 0) }

// UnsupportedPolicyKeys returns the policy keys queue type typ ("classic",
// "quorum", "stream") does not support: a policy or operator policy whose
// definition holds any of them does not apply to a queue of that type at
// all, so a lower-priority one may apply instead
// (rabbit_queue_type:is_policy_applicable over the type's capabilities()
// unsupported_policies). The lists are 4.0.5's from 4.0 and 3.10.8's
// before (rabbit_classic_queue.erl, rabbit_quorum_queue.erl,
// rabbit_stream_queue.erl at v4.0.5 and v3.10.8): 4.0 adds
// max-in-memory-length, max-in-memory-bytes and target-group-size for
// classic queues and target-group-size for streams, and no longer lists
// queue-leader-locator for classic queues; in which 3.11-3.13 release
// each of those changed is not established here. A key a version does
// not know is refused with the policy, so listing it changes nothing.
func (v Version) UnsupportedPolicyKeys(typ string) []string {
	switch typ {
	case "classic":
		keys := []string{"max-age", "stream-max-segment-size-bytes", "initial-cluster-size", "delivery-limit", "dead-letter-strategy"}
		if v.AtLeast(4, 0) {
			return append(keys, "max-in-memory-length", "max-in-memory-bytes", "target-group-size")
		}
		return append(keys, "queue-leader-locator")
	case "quorum":
		return []string{"max-priority", "queue-mode", "single-active-consumer", "ha-mode", "ha-params",
			"ha-sync-mode", "ha-promote-on-shutdown", "ha-promote-on-failure", "queue-master-locator",
			"max-age", "stream-max-segment-size-bytes", "initial-cluster-size"}
	case "stream":
		keys := []string{"expires", "message-ttl", "dead-letter-exchange", "dead-letter-routing-key",
			"max-length", "max-in-memory-length", "max-in-memory-bytes", "max-priority", "overflow",
			"queue-mode", "single-active-consumer", "delivery-limit", "ha-mode", "ha-params",
			"ha-sync-mode", "ha-promote-on-shutdown", "ha-promote-on-failure", "queue-master-locator",
			"dead-letter-strategy"}
		if v.AtLeast(4, 0) {
			return append(keys, "target-group-size")
		}
		return keys
	}
	return nil
}

// atLeastPatch reports whether v is major.minor.patch or later; a version
// of that line given without a patch stands for its latest patch.
func (v Version) atLeastPatch(major, minor, patch int) bool {
	v = v.OrDefault()
	if v.Major != major || v.Minor != minor {
		return v.AtLeast(major, minor)
	}
	return !v.HasPatch || v.Patch >= patch
}
