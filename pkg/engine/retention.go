package engine

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/mqctl/mqctl/pkg/plan"
	"github.com/mqctl/mqctl/pkg/topology"
)

// retention is a stream to which a plan's policy changes give a retention
// it did not have, or a tighter one: a size (max-length-bytes,
// x-max-length-bytes) or an age (max-age, x-max-age). RabbitMQ applies it
// at once, removing the stream's oldest segments, whole, until what is
// left is within it, and never the segment it writes to (measured on
// 4.3.6: a stream of 1,000 messages of 1 kB in 24 segments of 50 kB kept
// 54 of them after a policy gave it max-length-bytes 100000). So only a
// stream of more than one segment can lose messages to it. What a stream
// holds, and in how many segments, only its statistics tell, and not the
// sizes or ages of its segments: whether the retention removes any of
// them is not known.
type retention struct {
	vhost, stream, by string
	// key and value are the retention in force after the plan; segment
	// the stream's largest segment (x-stream-max-segment-size-bytes).
	key, value string
	segment    int64
	// messages and segments are what the stream holds, as read; the
	// broker may not report segments (segmentsKnown).
	messages, segments int64
	segmentsKnown      bool
}

// defaultSegment is a stream segment's largest size, where neither the
// stream nor a policy gives one (rabbit_stream_queue at v4.3.5: 500 MB).
const defaultSegment = 500_000_000

// retentionKeys are a stream's retentions, as policy keys and arguments.
var retentionKeys = []struct{ policy, arg string }{
	{"max-length-bytes", "x-max-length-bytes"},
	{"max-age", "x-max-age"},
}

// streamRetentions lists the streams of cur that p's policy changes give a
// retention they did not have, or a tighter one; what they hold is for
// the caller to read.
func streamRetentions(p *plan.Plan, cur *topology.Topology) []retention {
	var out []retention
	planEffects(p, cur, effects{onlyPolicies: true, streams: true}, func(e effect) {
		for _, k := range retentionKeys {
			after, ok := e.will.QueueArg(e.queue, k.arg)
			if !ok {
				continue
			}
			if before, had := e.was.QueueArg(e.queue, k.arg); had && !tighter(k.arg, after, before) {
				continue
			}
			segment, ok := intArg(e.will, e.queue, "x-stream-max-segment-size-bytes")
			if !ok {
				segment = defaultSegment
			}
			out = append(out, retention{vhost: e.vhost, stream: e.queue, by: e.by, key: k.policy, value: fmt.Sprint(after), segment: segment})
		}
	})
	return out
}

// tighter reports whether retention a of key (x-max-length-bytes or
// x-max-age) keeps less than b; true when either cannot be read.
func tighter(key string, a, b any) bool {
	if key == "x-max-age" {
		as, aok := ageSeconds(a)
		bs, bok := ageSeconds(b)
		return !aok || !bok || as < bs
	}
	ai, aok := topology.Args{key: a}.Int(key)
	bi, bok := topology.Args{key: b}.Int(key)
	return !aok || !bok || ai < bi
}

// ageSeconds reads a stream's max-age in seconds (topology.MaxAgeMillis:
// a positive number and one unit of Y, M, D, h, m or s).
func ageSeconds(v any) (int64, bool) {
	ms, ok := topology.MaxAgeMillis(v)
	return ms / 1000, ok
}

// keepsAll reports whether r surely removes nothing of what its stream
// holds: a size of at least all its segments could hold (each at most
// r.segment bytes), or an age longer than its oldest message's (first, ms
// since the epoch, from its statistics; a minute's leeway for the clocks
// of broker and mqctl), at now.
func (r retention) keepsAll(first int64, now time.Time) bool {
	switch r.key {
	case "max-length-bytes":
		limit, err := strconv.ParseInt(r.value, 10, 64)
		return err == nil && r.segmentsKnown && r.segments*r.segment <= limit
	case "max-age":
		age, ok := ageSeconds(r.value)
		return ok && first > 0 && first+age*1000 > now.Add(time.Minute).UnixMilli()
	}
	return false
}

func (r retention) String() string {
	holds := fmt.Sprintf("%d messages in %d segments", r.messages, r.segments)
	if !r.segmentsKnown {
		holds = fmt.Sprintf("%d messages (this RabbitMQ does not report a stream's segments)", r.messages)
	}
	return fmt.Sprintf("%s: stream %q in vhost %q gets a retention of %s (%s), and it holds %s: RabbitMQ removes its oldest segments at once, whole, until the rest is within it, and mqctl cannot tell how many that is",
		r.by, r.stream, r.vhost, r.value, r.key, holds)
}

// readRetentionLosses is the retentions of p's policy changes on streams
// of more than one segment, all refused (on a broker that does not report
// segments, on streams that hold messages): only the statistics tell what
// a stream holds (a passive declare counts nothing of it), and not whether
// the retention removes any of it.
func (e *Engine) readRetentionLosses(ctx context.Context, p *plan.Plan, cur *topology.Topology, inspect inspectFunc) (refused, told []string, err error) {
	rs := streamRetentions(p, cur)
	vhosts, streams := make([]string, len(rs)), make([]string, len(rs))
	for i, r := range rs {
		vhosts[i], streams[i] = r.vhost, r.stream
	}
	counts, err := countByVhost(ctx, vhosts, streams, e.c.StreamCounts)
	if err != nil {
		return nil, nil, err
	}
	for _, r := range rs {
		st := counts[r.vhost][r.stream]
		r.messages, r.segments, r.segmentsKnown = st.Messages, st.Segments, st.SegmentsKnown
		if (r.segments > 1 || (!r.segmentsKnown && r.messages > 0)) && !r.keepsAll(st.FirstTimestamp, time.Now()) {
			refused = append(refused, r.String())
		}
	}
	return refused, nil, nil
}
