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

// savedRead is a read of a saved plan doc, and what its decoder reads
// from r, for BenchmarkReadSaved.
type savedRead struct {
	name   string
	read   func(doc []byte) (*Plan, error)
	buffer func(r io.Reader) error
}

// savedReads are the read apply PLANFILE makes (stream: StreamSaved from
// the file) and the one it made (whole: the file in memory, decoded whole).
func savedReads() []savedRead {
	return []savedRead{
		{"stream", func(doc []byte) (*Plan, error) { return StreamSaved(bytes.NewReader(doc)) },
			func(r io.Reader) error { _, err := StreamSaved(r); return err }},
		{"whole", func(doc []byte) (*Plan, error) { return readSavedWhole(doc, "bench.plan") },
			func(r io.Reader) error { return savedDecoder(r).Decode(&savedPlan{}) }},
	}
}

// BenchmarkReadSaved reads the saved plan of make bench's replace file
// (benchReplacePlan) at 2,002 and 10,002 objects each way (savedReads),
// with the CPU time and the memory a read holds: doc-B the document, held
// by the whole read; buffer-B the decoder's buffer at its largest; plan-B
// the heap the plan read holds.
func BenchmarkReadSaved(b *testing.B) {
	for _, n := range []int{500, 2500} {
		var buf bytes.Buffer
		if err := WriteSaved(&buf, benchReplacePlan(b, n)); err != nil {
			b.Fatal(err)
		}
		doc := buf.Bytes()
		for _, r := range savedReads() {
			b.Run(fmt.Sprintf("%d/%s", 4*n+2, r.name), func(b *testing.B) {
				rs := &readSizes{r: bytes.NewReader(doc)}
				if err := r.buffer(rs); err != nil {
					b.Fatal(err)
				}
				var before, after runtime.MemStats
				runtime.GC()
				runtime.ReadMemStats(&before)
				p, err := r.read(doc)
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
					if _, err := r.read(doc); err != nil {
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
