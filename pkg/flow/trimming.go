package flow

import (
	"fmt"
	"strings"

	"github.com/mqctl/mqctl/pkg/loader"
	"github.com/mqctl/mqctl/pkg/topology"
)

// trimming adds the streams declared on both sides that keep less after
// the change (Trimming).
func (c *vhostCompare) trimming() {
	for q, qb := range c.b.v.Queues {
		qa := c.a.v.Queues[q]
		if qb == nil || qa == nil || qb.Type != topology.QueueStream || qa.Type != topology.QueueStream || c.queueSame(qb, qa) {
			continue
		}
		var tighter []string
		for _, arg := range []string{"x-max-length-bytes", "x-max-age"} {
			va, ok := c.a.retention(q, arg)
			if !ok {
				continue
			}
			if vb, had := c.b.retention(q, arg); !had || va < vb {
				tighter = append(tighter, arg)
			}
		}
		if len(tighter) == 0 {
			continue
		}
		var sources []string
		for _, arg := range tighter {
			sources = append(sources, c.a.sim.QueueArgSource(q, arg))
		}
		c.d.Trimming = append(c.d.Trimming, Trimming{Vhost: c.vhost, Queue: q, Before: c.b.retentionText(q), After: c.a.retentionText(q),
			Cause: fmt.Sprintf("it now keeps %s (%s): RabbitMQ removes its oldest segments, whole, past it, whether consumers have read them or not, and a consumer behind them loses them (never the segment it writes to: a stream of one segment loses none)",
				c.a.retentionText(q), strings.Join(sources, ", "))})
	}
}

// retention returns stream q's effective retention arg on side s, in
// bytes (x-max-length-bytes) or milliseconds (x-max-age).
func (s *side) retention(q, arg string) (int64, bool) {
	v, ok := s.sim.QueueArg(q, arg)
	if !ok {
		return 0, false
	}
	if arg == "x-max-age" {
		return topology.MaxAgeMillis(v)
	}
	n, isNum := topology.Number(v)
	return int64(n), isNum
}

// retentionText renders stream q's retention on side s ("1000000 bytes
// or 7d"), "" for none.
func (s *side) retentionText(q string) string {
	var parts []string
	if n, ok := s.retention(q, "x-max-length-bytes"); ok {
		parts = append(parts, s.valueText(q, "x-max-length-bytes", n, fmt.Sprintf("%d %s", n, plural2("byte", "bytes", int(min(n, 2)))), " bytes"))
	}
	if ms, ok := s.retention(q, "x-max-age"); ok {
		v, _ := s.sim.QueueArg(q, "x-max-age")
		parts = append(parts, s.valueText(q, "x-max-age", v, loader.FormatDuration(ms), ""))
	}
	return strings.Join(parts, " or ")
}
