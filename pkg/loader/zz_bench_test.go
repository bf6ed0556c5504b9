package loader

import (
	"os"
	"testing"
)

func BenchmarkZZLoad(b *testing.B) {
	data, _ := os.ReadFile("/tmp/gen/t10k.yaml")
	for b.Loop() {
		if _, err := LoadBytes("t.yaml", data, Options{}); err != nil {
			b.Fatal(err)
		}
	}
}
