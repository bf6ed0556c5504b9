//go:build unix

package plan

import (
	"fmt"
	"runtime"
	"syscall"
	"testing"

	"github.com/mqctl/mqctl/internal/gentopo"
)

// BenchmarkDiffNoopBench diffs the file of make bench (internal/gentopo)
// against the same file as a RabbitMQ 4.x broker reads it back after
// apply (x-queue-type on every queue), every object mqctl's: the diff of
// the bench's no-op plan, at its sizes (objects = 4n+2), the regression
// guard for the no-op plan's time after its read (issue 19).
func BenchmarkDiffNoopBench(b *testing.B) {
	for _, n := range []int{2500, 12500} {
		b.Run(fmt.Sprintf("%d", gentopo.Objects(n)), func(b *testing.B) {
			desired, c := noopBench(b, n)
			b.ReportAllocs()
			runtime.GC() // the loads' garbage is not the diff's
			cpu := cpuTime(b)
			for b.Loop() {
				Diff(desired, c)
			}
			b.ReportMetric(float64(cpuTime(b)-cpu)/float64(b.N), "cpu-ns/op")
		})
	}
}

// cpuTime is the CPU time (user and system, every thread) the process has
// used, in nanoseconds: on a machine shared with a broker and other work,
// a benchmark's wall time says little, its CPU time more.
func cpuTime(b *testing.B) int64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return ru.Utime.Nano() + ru.Stime.Nano()
}
