package route

import (
	"fmt"
	"strings"
	"testing"
)

// render draws a trace compactly for comparisons:
// queue{reason>queue{…} reason>DROPPED reason>queue(LOOP)}.
func render(hops []Hop) string {
	var parts []string
	for _, h := range hops {
		s := h.Queue
		switch {
		case h.Loop:
			s += "(LOOP)"
		case h.Truncated:
			s += "(TRUNC)"
		}
		if len(h.Next) > 0 {
			var next []string
			for _, n := range h.Next {
				d := string(n.Route.Reason) + ">"
				if n.Dropped {
					d += "DROPPED"
					if n.Loop != "" {
						d += "(cycle " + n.Loop + ")"
					}
				} else {
					d += render(n.Hops)
				}
				next = append(next, d)
			}
			s += "{" + strings.Join(next, " ") + "}"
		}
		parts = append(parts, s)
	}
	return strings.Join(parts, ",")
}

// sugar builds what the loader expands §3 sugar into: queue q with a DLQ
// pair on dlx and one delay tier.
func sugar() *vb {
	return vhost().ex("orders", "topic").ex("orders.dlx", "direct").
		q("Q", "x-dead-letter-exchange", "orders.dlx", "x-dead-letter-routing-key", "Q").
		q("Q.dlq").
		q("Q.retry.10s", "x-message-ttl", 10000, "x-dead-letter-exchange", "", "x-dead-letter-routing-key", "Q").
		bind("orders", "Q", "order.created").
		bind("orders.dlx", "Q.dlq", "Q")
}

func TestTrace(t *testing.T) {
	tests := []struct {
		name  string
		b     *vb
		m     Message
		depth int
		want  string
	}{
		{
			name:  "DLQ pair",
			b:     sugar(),
			m:     msg("orders", "order.created"),
			depth: DefaultDepth,
			want:  "Q{rejected>Q.dlq{rejected>DROPPED}}",
		},
		{
			name:  "delay tier returns to its queue alone",
			b:     sugar(),
			m:     msg("", "Q.retry.10s"),
			depth: DefaultDepth,
			want:  "Q.retry.10s{rejected>Q{rejected>Q.dlq{rejected>DROPPED}} expired>Q{rejected>Q.dlq{rejected>DROPPED}}}",
		},
		{
			name: "retry loop through a rejection is delivered, and marked as a loop",
			b: vhost().ex("retry", "direct").
				q("Q", "x-dead-letter-exchange", "retry", "x-dead-letter-routing-key", "Q.retry.10s").
				q("Q.retry.10s", "x-message-ttl", 10000, "x-dead-letter-exchange", "", "x-dead-letter-routing-key", "Q").
				bind("retry", "Q.retry.10s", "Q.retry.10s"),
			m:     msg("", "Q"),
			depth: DefaultDepth,
			want:  "Q{rejected>Q.retry.10s{rejected>Q(LOOP) expired>Q(LOOP)}}",
		},
		{
			name: "expiry loop without a rejection is dropped by the broker",
			b: vhost().ex("retry", "direct").
				q("Q", "x-message-ttl", 5, "x-dead-letter-exchange", "retry", "x-dead-letter-routing-key", "Q.retry").
				q("Q.retry", "x-message-ttl", 10000, "x-dead-letter-exchange", "", "x-dead-letter-routing-key", "Q").
				bind("retry", "Q.retry", "Q.retry"),
			m:     msg("", "Q"),
			depth: DefaultDepth,
			want:  "Q{rejected>Q.retry{rejected>Q(LOOP) expired>Q(LOOP)} expired>Q.retry{rejected>Q(LOOP) expired>DROPPED(cycle Q)}}",
		},
		{
			name:  "self loop on expiry",
			b:     vhost().q("Q", "x-message-ttl", 5, "x-dead-letter-exchange", "", "x-dead-letter-routing-key", "Q"),
			m:     msg("", "Q"),
			depth: DefaultDepth,
			want:  "Q{rejected>Q(LOOP) expired>DROPPED(cycle Q)}",
		},
		{
			name: "missing DLX and unroutable dead letters are dropped",
			b: vhost().ex("dlx", "direct").q("a", "x-dead-letter-exchange", "ghost").q("b", "x-dead-letter-exchange", "dlx").
				ex("in", "fanout").bind("in", "a", "").bind("in", "b", ""),
			m:     msg("in", "k"),
			depth: DefaultDepth,
			want:  "a{rejected>DROPPED},b{rejected>DROPPED}",
		},
		{
			name:  "a dead letter into an unsimulated plugin exchange is not reported as dropped",
			b:     vhost().ex("hash", "x-consistent-hash").q("a", "x-dead-letter-exchange", "hash").q("h").bind("hash", "h", "1"),
			m:     msg("", "a"),
			depth: DefaultDepth,
			want:  "a{rejected>}",
		},
		{
			name: "depth limit",
			b: vhost().ex("dlx", "direct").
				q("q1", "x-dead-letter-exchange", "", "x-dead-letter-routing-key", "q2").
				q("q2", "x-dead-letter-exchange", "", "x-dead-letter-routing-key", "q3").
				q("q3", "x-dead-letter-exchange", "", "x-dead-letter-routing-key", "q4").q("q4"),
			m:     msg("", "q1"),
			depth: 2,
			want:  "q1{rejected>q2{rejected>q3(TRUNC)}}",
		},
		{
			name:  "depth 0: the publish only",
			b:     sugar(),
			m:     msg("orders", "order.created"),
			depth: 0,
			want:  "Q(TRUNC)",
		},
		{
			name:  "unroutable publish",
			b:     sugar(),
			m:     msg("orders", "nothing"),
			depth: DefaultDepth,
			want:  "",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tr := tt.b.sim().Trace(tt.m, tt.depth)
			if got := render(tr.Hops); got != tt.want {
				t.Errorf("trace =\n  %s\nwant\n  %s", got, tt.want)
			}
			if tr.Vhost != "/" {
				t.Errorf("vhost = %q", tr.Vhost)
			}
		})
	}
}

// TestTraceNeverSpins: every queue dead-letters to every queue through a
// fanout; the trace must stop (loops and the size budget) quickly.
func TestTraceNeverSpins(t *testing.T) {
	b := vhost().ex("all", "fanout")
	for i := 0; i < 12; i++ {
		q := fmt.Sprintf("q%02d", i)
		b.q(q, "x-dead-letter-exchange", "all", "x-message-ttl", 1, "x-max-length", 1).bind("all", q, "")
	}
	tr := b.sim().Trace(msg("all", ""), 50)
	if len(tr.Hops) != 12 {
		t.Fatalf("publish reached %d queues", len(tr.Hops))
	}
	truncated := 0
	var walk func([]Hop)
	walk = func(hs []Hop) {
		for _, h := range hs {
			if h.Truncated {
				truncated++
			}
			for _, n := range h.Next {
				walk(n.Hops)
			}
		}
	}
	walk(tr.Hops)
	if truncated == 0 {
		t.Errorf("an exploding trace was not cut by the budget")
	}
}

// bigVhost: n queues, each bound to one direct exchange twice (2n
// bindings), each dead-lettering through it to its own DLQ key.
func bigVhost(n int) *vb {
	b := vhost().ex("work", "direct")
	for i := 0; i < n; i++ {
		q := fmt.Sprintf("svc%03d.q%05d", i%100, i)
		b.q(q, "x-dead-letter-exchange", "work", "x-dead-letter-routing-key", q+".dead", "x-message-ttl", 60000, "x-max-length", 1000)
		b.bind("work", q, q).bind("work", q, "svc.all")
	}
	return b
}

func BenchmarkDeadLetterAll(b *testing.B) {
	v := bigVhost(10000)
	names := v.v.QueueNames()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		s := v.sim()
		for _, name := range names {
			s.DeadLetter(name, Rejected, msg("work", name))
		}
	}
}
