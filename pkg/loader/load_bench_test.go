package loader

import (
	"testing"

	"github.com/mqctl/mqctl/internal/gentopo"
)

// BenchmarkLoad10k loads make bench's generated file of 10,002 objects:
// the part of a plan that comes before the broker's answer matters.
func BenchmarkLoad10k(b *testing.B) {
	data := []byte(gentopo.YAML("bench", 2500))
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := LoadBytes("topology.yaml", data, Options{}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkParseYAML10k is the YAML library's part of loading the same
// file, for a file outside the fast path (fastParse).
func BenchmarkParseYAML10k(b *testing.B) {
	data := []byte(gentopo.YAML("bench", 2500))
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		if _, _, err := decodeYAML(data); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkFastParse10k is the fast path's part of BenchmarkLoad10k: the
// same file read into nodes, scalars finished.
func BenchmarkFastParse10k(b *testing.B) {
	data := []byte(gentopo.YAML("bench", 2500))
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		p := &parser{file: "topology.yaml", lookup: func(string) (string, bool) { return "", false }, errs: newCollector()}
		if _, ok := fastParse(p, data); !ok {
			b.Fatal("the fast path gave up")
		}
	}
}
