package plan

import (
	"runtime"
	"testing"

	"github.com/mqctl/mqctl/internal/gentopo"
	"github.com/mqctl/mqctl/pkg/loader"
	"github.com/mqctl/mqctl/pkg/topology"
)

// The no-op diff of make bench's 10,002-object vhost (BenchmarkDiffNoopBench)
// makes little garbage: a no-op plan diffs after its read, with its heap at
// the memory limit (cmd/mqctl), where every MB the diff makes brings the
// collector's next cycle nearer, and a cycle marks the whole heap (some
// 50 MB at 50,002 objects). It made 1.76 MB in 40,075 allocations before
// the names of the record's bindings were looked up from a reused buffer
// and the prints of the binding ends kept by name (1.04 MB, 35,122).
func TestNoopDiffGarbage(t *testing.T) {
	const n = 2500 // 10,002 objects
	desired, c := noopBench(t, n)
	const runs = 3
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	for range runs {
		Diff(desired, c)
	}
	runtime.ReadMemStats(&after)
	objects := float64(gentopo.Objects(n))
	bytes := float64(after.TotalAlloc-before.TotalAlloc) / runs
	allocs := float64(after.Mallocs-before.Mallocs) / runs
	if bytes > 1.3e6 || allocs > 3.75*objects {
		t.Errorf("the no-op diff of %.0f objects made %.2f MB in %.0f allocations, want at most 1.3 MB and %.0f (3.75 per object)",
			objects, bytes/1e6, allocs, 3.75*objects)
	}
}

// noopBench is make bench's file of n working queues (internal/gentopo)
// and the broker's state after its apply, as a RabbitMQ 4.x broker reads
// it back (x-queue-type on every queue), every object mqctl's: a no-op
// diff, checked to be one.
func noopBench(t testing.TB, n int) (*topology.Topology, Current) {
	t.Helper()
	load := func() *topology.Topology {
		top, err := loader.LoadBytes("bench.yaml", []byte(gentopo.YAML("bench", n)), loader.Options{})
		if err != nil {
			t.Fatal(err)
		}
		return top
	}
	desired, cur := load(), load()
	for _, q := range cur.Vhosts["bench"].Queues {
		if q.Arguments == nil {
			q.Arguments = topology.Args{}
		}
		q.Arguments[topology.QueueTypeArgument] = topology.QueueTypeOrClassic(q.Type)
	}
	c := Current{Live: topology.Live{State: cur}, Managed: ManagedOf(RecordedOf(cur, managedAll(cur)))}
	if p := Diff(desired, c); !p.Empty() {
		t.Fatalf("the no-op diff plans %+v", p.Summary())
	}
	return desired, c
}
