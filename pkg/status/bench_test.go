package status

import (
	"testing"

	"github.com/mqctl/mqctl/internal/gentopo"
	"github.com/mqctl/mqctl/pkg/broker"
	"github.com/mqctl/mqctl/pkg/loader"
)

// BenchmarkBuild maps a listing of 10,000 queues (5,000 working queues,
// each with its DLQ) onto the file: role classification by simulation
// included.
func BenchmarkBuild(b *testing.B) {
	top, err := loader.LoadBytes("gen.yaml", []byte(gentopo.YAML("/", 5000)), loader.Options{})
	if err != nil {
		b.Fatal(err)
	}
	var list []broker.QueueActivity
	for _, q := range top.Vhosts["/"].QueueNames() {
		list = append(list, broker.QueueActivity{Name: q, Type: "classic", State: "running", Known: true, Messages: 1, Ready: 1})
	}
	live := map[string][]broker.QueueActivity{"/": list}
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		r := Build(top, live, Options{})
		if _, alerts, _ := r.Counts(); alerts != 5000 {
			b.Fatalf("%d alerts, want one per DLQ", alerts)
		}
	}
}
