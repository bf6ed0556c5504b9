package route

import (
	"slices"
	"testing"
)

// TestOnArrival: what a queue does with a message no consumer takes at
// once, where a message TTL or a length limit of 0 is in force. The
// answers are the same on 3.10, 4.0 and 4.3 (rabbit_amqqueue_process and
// rabbit_fifo at v3.10.8, v4.0.5 and v4.3.5; see arrival.go).
func TestOnArrival(t *testing.T) {
	b := vhost().ex("dlx", "fanout").
		q("plain").
		q("ttl1", "x-message-ttl", 1, "x-dead-letter-exchange", "dlx").
		q("c.ttl0", "x-message-ttl", 0, "x-dead-letter-exchange", "dlx").
		q("c.ttl0.nodlx", "x-message-ttl", 0).
		typed("qq.ttl0", "quorum", "x-message-ttl", 0, "x-dead-letter-exchange", "dlx").
		q("c.len0", "x-max-length", 0, "x-dead-letter-exchange", "dlx").
		q("c.len0.ttl0", "x-max-length", 0, "x-message-ttl", 0, "x-dead-letter-exchange", "dlx").
		q("c.len0.ttl0.nodlx", "x-max-length", 0, "x-message-ttl", 0).
		q("c.len0.reject", "x-max-length", 0, "x-overflow", "reject-publish", "x-dead-letter-exchange", "dlx").
		q("c.len0.rejectdlx", "x-max-length", 0, "x-overflow", "reject-publish-dlx", "x-dead-letter-exchange", "dlx").
		typed("qq.len0", "quorum", "x-max-length", 0).
		typed("qq.len0.rejectdlx", "quorum", "x-max-length", 0, "x-overflow", "reject-publish-dlx").
		typed("qq.len0.reject", "quorum", "x-max-length", 0, "x-overflow", "reject-publish").
		typed("qq.len0.reject.ttl0", "quorum", "x-max-length", 0, "x-overflow", "reject-publish", "x-message-ttl", 0).
		q("c.bytes0", "x-max-length-bytes", 0, "x-dead-letter-exchange", "dlx").
		q("c.bytes0.reject", "x-max-length-bytes", 0, "x-overflow", "reject-publish").
		q("c.bytes0.rejectdlx", "x-max-length-bytes", 0, "x-overflow", "reject-publish-dlx", "x-dead-letter-exchange", "dlx").
		q("c.bytes0.ttl0.nodlx", "x-max-length-bytes", 0, "x-message-ttl", 0).
		q("c.bytes1", "x-max-length-bytes", 1, "x-dead-letter-exchange", "dlx").
		q("c.bytes1.reject", "x-max-length-bytes", 1, "x-overflow", "reject-publish").
		typed("qq.bytes1", "quorum", "x-max-length-bytes", 1).
		typed("qq.bytes1.reject", "quorum", "x-max-length-bytes", 1, "x-overflow", "reject-publish").
		typed("qq.bytes0", "quorum", "x-max-length-bytes", 0, "x-dead-letter-exchange", "dlx").
		typed("qq.bytes0.reject", "quorum", "x-max-length-bytes", 0, "x-overflow", "reject-publish").
		q("bytes.policy").policy("nobytes", "^bytes\\.", "queues", 0, "max-length-bytes", 0).
		typed("qq", "quorum").
		typed("s", "stream").
		q("by.policy").policy("zero", "^by\\.", "queues", 0, "message-ttl", 0)
	tests := []struct {
		queue, exp string
		reason     Reason
		refused    bool
		why        bool // Why is set on a kept message
		unsure     bool // whether it keeps it depends on its size
	}{
		{queue: "plain"},
		{queue: "ttl1"}, // a delay tier's TTL > 0: kept until it expires
		{queue: "c.ttl0", reason: Expired},
		{queue: "c.ttl0.nodlx", reason: Expired},
		{queue: "qq.ttl0", reason: Expired},
		{queue: "by.policy", reason: Expired},
		{queue: "c.len0", reason: MaxLen},
		{queue: "c.len0.ttl0", reason: MaxLen},        // maybe_drop_head before drop_expired_msgs
		{queue: "c.len0.ttl0.nodlx", reason: Expired}, // deliver_or_enqueue's discard
		{queue: "c.len0.reject", refused: true},       // will_overflow: never enqueued
		{queue: "c.len0.rejectdlx", reason: MaxLen, refused: true},
		{queue: "qq.len0", reason: MaxLen},
		{queue: "qq.len0.rejectdlx", reason: MaxLen}, // read as drop-head
		{queue: "qq.len0.reject", why: true},         // taken: not over the limit until it holds it
		{queue: "qq.len0.reject.ttl0", reason: Expired},
		// A limit of 0 bytes, which every message with a body exceeds,
		// acts as a length limit of 0 (measured on 4.3.6, 4.0.5, 3.10.8:
		// internal/difftest TestMaxLengthBytesZeroAgainstBroker).
		{queue: "c.bytes0", reason: MaxLen},
		{queue: "c.bytes0.reject", refused: true},
		{queue: "c.bytes0.rejectdlx", reason: MaxLen, refused: true},
		{queue: "c.bytes0.ttl0.nodlx", reason: Expired},
		// A limit above 0 bytes: whether the queue keeps the message depends
		// on its size, which the simulator does not know (internal/difftest
		// TestMaxLengthBytesAgainstBroker); a quorum queue with
		// reject-publish takes it while it holds none.
		{queue: "c.bytes1", why: true, unsure: true},
		{queue: "c.bytes1.reject", why: true, unsure: true},
		{queue: "qq.bytes1", why: true, unsure: true},
		{queue: "qq.bytes1.reject"},
		{queue: "qq.bytes0", reason: MaxLen},
		{queue: "qq.bytes0.reject", why: true},
		{queue: "bytes.policy", reason: MaxLen},
		{queue: "plain", exp: "0", reason: Expired},
		{queue: "qq", exp: "0", reason: Expired},
		{queue: "ttl1", exp: "0", reason: Expired},
		{queue: "c.len0", exp: "0", reason: MaxLen},
		{queue: "plain", exp: "5"},
		{queue: "s", exp: "0"}, // streams never expire messages
		{queue: "undeclared"},
	}
	for _, ver := range []string{"3.10", "4.0", "4.3"} {
		s := b.simFor(ver)
		for _, tc := range tests {
			got := s.OnArrival(tc.queue, Message{RoutingKey: "k", Expiration: tc.exp})
			if got.Reason != tc.reason || got.Refused != tc.refused || got.Keeps() == (tc.reason != "" || tc.refused) {
				t.Errorf("%s: OnArrival(%s, expiration %q) = %+v, want reason %q refused %v", ver, tc.queue, tc.exp, got, tc.reason, tc.refused)
			}
			if got.Unsure != tc.unsure {
				t.Errorf("%s: OnArrival(%s, expiration %q).Unsure = %v, want %v (%s)", ver, tc.queue, tc.exp, got.Unsure, tc.unsure, got.Why)
			}
			if wantWhy := tc.why || !got.Keeps(); (got.Why != "") != wantWhy {
				t.Errorf("%s: OnArrival(%s, expiration %q).Why = %q", ver, tc.queue, tc.exp, got.Why)
			}
		}
	}
}

// TestLand: where a message ends up when the queues it reaches keep
// nothing: their dead letters are followed to the queues that keep them.
func TestLand(t *testing.T) {
	b := vhost().ex("ex", "fanout").ex("dlx", "fanout").ex("dlx2", "fanout").ex("self", "fanout").
		q("zero", "x-message-ttl", 0, "x-dead-letter-exchange", "dlx").bind("ex", "zero", "").
		q("hop", "x-max-length", 0, "x-dead-letter-exchange", "dlx2").bind("dlx", "hop", "").
		q("catch").bind("dlx2", "catch", "").
		q("full", "x-max-length", 0, "x-overflow", "reject-publish").bind("ex", "full", "").
		q("kept").bind("ex", "kept", "").
		q("loop", "x-message-ttl", 0, "x-dead-letter-exchange", "self").bind("self", "loop", "").
		q("nodlx", "x-message-ttl", 0)
	tests := []struct {
		name    string
		m       Message
		want    []string
		passed  []string
		refused []string
	}{
		{"through two queues that keep nothing", msg("ex", "k"), []string{"catch", "kept"}, []string{"full", "zero", "hop"}, []string{"full"}},
		{"dead-letter cycle", msg("self", "k"), []string{}, []string{"loop"}, nil},
		{"dropped without a dead-letter exchange", msg("", "nodlx"), []string{}, []string{"nodlx"}, nil},
		{"expiration 0 in a plain queue", expiring(msg("", "kept"), "0"), []string{}, []string{"kept"}, nil},
		{"a dead letter has no expiration", expiring(msg("", "zero"), "0"), []string{"catch"}, []string{"zero", "hop"}, nil},
	}
	for _, ver := range []string{"3.10", "4.0", "4.3"} {
		s := b.simFor(ver)
		for _, tc := range tests {
			l := s.Land(s.Publish(tc.m))
			var passed []string
			for _, p := range l.Passed {
				passed = append(passed, p.Queue)
			}
			if !slices.Equal(l.Queues, tc.want) || !slices.Equal(passed, tc.passed) || !slices.Equal(l.Refused(), tc.refused) || l.Endless {
				t.Errorf("%s, %s: Land = queues %q, passed %q, refused %q, endless %v; want %q, %q, %q", ver, tc.name, l.Queues, passed, l.Refused(), l.Endless, tc.want, tc.passed, tc.refused)
			}
		}
	}
}

// TestTraceArrival: a queue that keeps nothing lists only the dead letter
// it makes at once, with why.
func TestTraceArrival(t *testing.T) {
	s := vhost().ex("ex", "fanout").ex("dlx", "fanout").
		q("zero", "x-message-ttl", 0, "x-dead-letter-exchange", "dlx").bind("ex", "zero", "").
		q("catch").bind("dlx", "catch", "").sim()
	tr := s.Trace(msg("ex", "k"), DefaultDepth)
	if len(tr.Hops) != 1 || tr.Hops[0].Arrival == nil || tr.Hops[0].Arrival.Reason != Expired {
		t.Fatalf("hops = %+v, want zero with an arrival that expires it", tr.Hops)
	}
	next := tr.Hops[0].Next
	if len(next) != 1 || next[0].Route.Reason != Expired || len(next[0].Hops) != 1 || next[0].Hops[0].Queue != "catch" {
		t.Errorf("zero's dead letters = %+v, want only expired, to catch", next)
	}
	if c := next[0].Hops[0]; c.Arrival != nil || len(c.Next) != 1 || c.Next[0].Route.Reason != Rejected {
		t.Errorf("catch = %+v, want it to keep the message (rejected only)", c)
	}
}
