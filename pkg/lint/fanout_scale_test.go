package lint

import (
	"fmt"
	"runtime"
	"strings"
	"testing"

	"github.com/mqctl/mqctl/internal/gentopo"
	"github.com/mqctl/mqctl/pkg/loader"
	"github.com/mqctl/mqctl/pkg/topology"
)

// Where one fanout dead-letter exchange takes every queue's dead letters
// to every DLQ (make bench's replace file), lint keeps no pair of queues
// it never reads: the dead letters arriving in a queue are kept only for
// a queue that dead-letters them on with their keys. At 2,500 queues
// every pair was 6.25 million arrivals, and lint ran past 150 s.
func TestFanoutDeadLettersKeepNoPairs(t *testing.T) {
	const n = 60
	top, err := loader.LoadBytes("replace.yaml", []byte(gentopo.ReplaceYAML("v", n)), loader.Options{})
	if err != nil {
		t.Fatal(err)
	}
	v := top.Vhosts["v"]
	f := newFacts(v, newSimulator(v, Options{}.Version.OrDefault()))
	reached := 0
	for _, d := range f.dl {
		reached = max(reached, len(d.Targets))
	}
	if reached < n {
		t.Fatalf("the file is not the fanout case: a queue's dead letters reach %d queues at most, want %d", reached, n)
	}
	for q, as := range f.arrivals {
		if d := f.dl[q]; d == nil || d.Missing || d.HasDLRK {
			t.Errorf("queue %q, which dead-letters nothing on with the keys they arrive with, keeps %d arrivals", q, len(as))
		}
	}
}

// joinOrQuoted says what joinOr of the quoted items says.
func TestJoinOrQuoted(t *testing.T) {
	for n := 1; n <= 8; n++ {
		items := make([]string, n)
		for i := range items {
			items[i] = fmt.Sprintf("k%d", i)
		}
		if got, want := joinOrQuoted(items), joinOr(quoteAll(items)); got != want {
			t.Errorf("%d items: joinOrQuoted says %q, joinOr of them quoted %q", n, got, want)
		}
	}
	if got := joinOrQuoted(strings.Fields("a b c d e f")); !strings.HasSuffix(got, " and 2 more") {
		t.Errorf("six items: %q", got)
	}
}

// loadReplace loads make bench's replace file with n working queues: one
// fanout dead-letter exchange takes every queue's dead letters to all n
// DLQs, and one headers exchange every message to all n queues.
func loadReplace(tb testing.TB, n int) *topology.Topology {
	tb.Helper()
	top, err := loader.LoadBytes("replace.yaml", []byte(gentopo.ReplaceYAML("v", n)), loader.Options{})
	if err != nil {
		tb.Fatal(err)
	}
	return top
}

// BenchmarkLintFanoutReplace lints make bench's replace file at 10,002
// objects (2,500 working queues).
func BenchmarkLintFanoutReplace(b *testing.B) {
	top := loadReplace(b, 2500)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := Run(top, Options{}); err != nil {
			b.Fatal(err)
		}
	}
}

// allocated returns the fewest bytes run allocates in three runs, each
// after prepare: a count, not a time, so it does not depend on the
// machine's load.
func allocated(prepare func(), run func()) uint64 {
	var least uint64
	for i := 0; i < 3; i++ {
		prepare()
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		run()
		runtime.ReadMemStats(&after)
		if n := after.TotalAlloc - before.TotalAlloc; i == 0 || n < least {
			least = n
		}
	}
	return least
}

// MQ104's grouping of the queues whose dead letters a binding also takes
// grows with the file, not with its square, where one fanout dead-letter
// exchange takes every queue's dead letters to every DLQ: the catchers of
// a queue were a list of every other DLQ's binding, and each binding a
// list of every other queue. Four times the queues may take up to eight
// times the bytes (the square took sixteen).
func TestCaughtGroupsGrowLinearly(t *testing.T) {
	grouping := func(n int) uint64 {
		top := loadReplace(t, n)
		v := top.Vhosts["v"]
		var p *Pass
		return allocated(func() {
			p = &Pass{Vhost: v, facts: newFacts(v, newSimulator(v, Options{}.Version.OrDefault())), enabled: func(string) bool { return true }}
		}, func() {
			g := p.caughtGroups()
			for _, name := range p.queueNames {
				if d := p.dl[name]; d != nil && !d.Missing {
					if cs, own := p.catchers(name, d); own {
						g.alone(cs)
					}
				}
			}
			if fs := g.findings(p); len(fs) != n {
				t.Fatalf("%d queues: %d findings on bindings, want one on each DLQ's", n, len(fs))
			}
		})
	}
	small, large := grouping(100), grouping(400)
	if large > 8*small {
		t.Errorf("MQ104's grouping allocates %d bytes at 100 queues, %d at 400: %.1f times as much, the square of the queues", small, large, float64(large)/float64(small))
	}
	t.Logf("%d bytes at 100 queues, %d at 400", small, large)
}

// Lint as a whole grows with the file, not with its square, where one
// fanout dead-letter exchange takes every queue's dead letters to every
// DLQ (make bench's replace file): the queues that share their dead
// letters' targets share the list, and what lint derives from it. Four
// times the queues may take up to eight times the bytes (the square took
// some sixteen).
func TestLintGrowsLinearly(t *testing.T) {
	lintBytes := func(n int) uint64 {
		top := loadReplace(t, n)
		return allocated(func() {}, func() {
			fs, err := Run(top, Options{})
			if err != nil {
				t.Fatal(err)
			}
			if len(fs) != 2*n {
				t.Fatalf("%d queues: %d findings, want %d (MQ104 on each DLQ's binding, MQ301 on each DLQ)", n, len(fs), 2*n)
			}
		})
	}
	small, large := lintBytes(100), lintBytes(400)
	if large > 8*small {
		t.Errorf("lint allocates %d bytes at 100 queues, %d at 400: %.1f times as much, the square of the queues", small, large, float64(large)/float64(small))
	}
	t.Logf("%d bytes at 100 queues, %d at 400", small, large)
}
