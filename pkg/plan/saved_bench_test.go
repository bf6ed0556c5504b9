//go:build unix

package plan

import (
	"bytes"
	"fmt"
	"io"
	"runtime"
	"testing"

	"github.com/mqctl/mqctl/internal/gentopo"
)

// BenchmarkReadSaved reads the saved plan of make bench's replace file
// (benchReplacePlan) at 2,002 and 10,002 objects, as apply
// PLANFILE does (stream: StreamSaved from the file) and as it did (whole:
// the file in memory, decoded whole), with the CPU time and the memory a
// read holds: doc-B the document, held by the whole read; buffer-B the
// decoder's buffer at its largest; plan-B the heap the plan read holds.
func BenchmarkReadSaved(b *testing.B) {
	for _, n := range []int{500, 2500} {
		var buf bytes.Buffer
		if err := WriteSaved(&buf, benchReplacePlan(b, n)); err != nil {
			b.Fatal(err)
		}
		doc := buf.Bytes()
		for _, r := range []struct {
			name   string
			read   func() (*Plan, error)
			buffer func(io.Reader) error // what the read's decoder reads
		}{
			{"stream", func() (*Plan, error) { return StreamSaved(bytes.NewReader(doc)) },
				func(r io.Reader) error { _, err := StreamSaved(r); return err }},
			{"whole", func() (*Plan, error) { return readSavedWhole(doc, "bench.plan") },
				func(r io.Reader) error { return savedDecoder(r).Decode(&savedPlan{}) }},
		} {
			b.Run(fmt.Sprintf("%d/%s", gentopo.Objects(n), r.name), func(b *testing.B) {
				rs := &readSizes{r: bytes.NewReader(doc)}
				if err := r.buffer(rs); err != nil {
					b.Fatal(err)
				}
				var before, after runtime.MemStats
				runtime.GC()
				runtime.ReadMemStats(&before)
				p, err := r.read()
				if err != nil {
					b.Fatal(err)
				}
				runtime.GC()
				runtime.ReadMemStats(&after)
				runtime.KeepAlive(p)
				p = nil
				b.ReportAllocs()
				runtime.GC()
				cpu := cpuTime(b)
				for b.Loop() {
					if _, err := r.read(); err != nil {
						b.Fatal(err)
					}
				}
				b.ReportMetric(float64(cpuTime(b)-cpu)/float64(b.N), "cpu-ns/op")
				b.ReportMetric(float64(len(doc)), "doc-B")
				b.ReportMetric(float64(rs.max), "buffer-B")
				b.ReportMetric(float64(after.HeapAlloc)-float64(before.HeapAlloc), "plan-B")
			})
		}
	}
}
