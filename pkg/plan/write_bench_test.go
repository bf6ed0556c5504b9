//go:build unix

package plan

import (
	"fmt"
	"io"
	"runtime"
	"testing"

	"github.com/mqctl/mqctl/internal/gentopo"
)

// BenchmarkWritePlan writes make bench's replace plan (benchReplacePlan)
// as plan --out writes it (saved: WriteSaved) and as plan -o json does
// (json: WriteJSON), at 10,002 and 50,002 objects, with the CPU time it
// takes (cpu-ns/op) and what it allocates: the saved plan's write is what
// plan --out takes beyond plan, most of it the collector's work on what
// it allocates.
func BenchmarkWritePlan(b *testing.B) {
	for _, n := range []int{2500, 12500} {
		p := benchReplacePlan(b, n)
		for _, w := range []struct {
			name  string
			write func(io.Writer, *Plan) error
		}{{"saved", WriteSaved}, {"json", WriteJSON}} {
			b.Run(fmt.Sprintf("%d/%s", gentopo.Objects(n), w.name), func(b *testing.B) {
				b.ReportAllocs()
				runtime.GC()
				cpu := cpuTime(b)
				for b.Loop() {
					if err := w.write(io.Discard, p); err != nil {
						b.Fatal(err)
					}
				}
				b.ReportMetric(float64(cpuTime(b)-cpu)/float64(b.N), "cpu-ns/op")
			})
		}
	}
}
