package flow

import (
	"strings"
	"testing"

	"github.com/mqctl/mqctl/internal/gentopo"
	"github.com/mqctl/mqctl/pkg/loader"
	"github.com/mqctl/mqctl/pkg/topology"
)

// BenchmarkCompare10k compares the generated topology of 10,002 objects
// (gentopo: 2,500 working queues, each with its DLQ and a binding on a
// topic exchange) with the same file but one binding's key changed, each
// loaded on its own as plan loads a file and reads a broker.
func BenchmarkCompare10k(b *testing.B) {
	const n = 2500
	y := gentopo.YAML("/", n)
	changed := strings.Replace(y, `"svc007.event7.#"`, `"svc007.event7.created"`, 1)
	if changed == y {
		b.Fatal("the binding to change is not in the generated file")
	}
	before, after := load(b, y), load(b, changed)
	if objects := len(before.Vhosts["/"].Queues) + len(before.Vhosts["/"].Bindings) + len(before.Vhosts["/"].Exchanges); objects != gentopo.Objects(n) {
		b.Fatalf("%d objects, want %d", objects, gentopo.Objects(n))
	}
	var d *Diff
	b.ReportAllocs()
	for b.Loop() {
		d = Compare(before, after, Options{})
	}
	if len(d.Routes) != 1 || d.Routes[0].Class.RoutingKey != "svc007.event7" || !d.Routes[0].Loses || len(d.DeadLetters)+len(d.DelayTiers)+len(d.Silenced) != 0 {
		b.Fatalf("unexpected diff: %+v", d)
	}
}

// load reads an mqctl file.
func load(tb testing.TB, y string) *topology.Topology {
	tb.Helper()
	t, err := loader.LoadBytes("gen.yaml", []byte(y), loader.Options{})
	if err != nil {
		tb.Fatal(err)
	}
	return t
}

// BenchmarkCompareTeardown50k compares the generated topology of 50,002
// objects with nothing: the flows of a plan that deletes the whole vhost,
// the worst case for a plan's memory (issue 19's 50k < 100 MB).
func BenchmarkCompareTeardown50k(b *testing.B) {
	before := load(b, gentopo.YAML("/", 12500))
	var d *Diff
	b.ReportAllocs()
	for b.Loop() {
		d = Compare(before, nil, Options{})
	}
	b.ReportMetric(float64(len(d.Routes)), "routes")
	if !d.LosesMessages() {
		b.Fatalf("a teardown loses no message: %+v", d.Summary())
	}
}

// BenchmarkCompareReplace10k compares the generated topology of 10,002
// objects with the one the benchmark's replace plan applies: the topic
// exchange made a headers exchange whose bindings (without criteria) take
// every message to all 2,500 working queues, and the direct dead-letter
// exchange made a fanout one that takes each queue's dead letters to all
// 2,500 DLQs. Every class and every queue's dead letters now reach
// thousands of queues; the simulator shares one result for each such
// exchange rather than computing and keeping one per message.
func BenchmarkCompareReplace10k(b *testing.B) {
	const n = 2500
	y := gentopo.YAML("/", n)
	r := strings.Replace(y, "events: { type: topic }", "events: { type: headers }", 1)
	r = strings.Replace(r, "events.dlx: { type: direct }", "events.dlx: { type: fanout }", 1)
	if r == y {
		b.Fatal("the exchanges to replace are not in the generated file")
	}
	before, after := load(b, y), load(b, r)
	var d *Diff
	b.ReportAllocs()
	for b.Loop() {
		d = Compare(before, after, Options{})
	}
	b.ReportMetric(float64(len(d.Routes)), "routes")
	b.ReportMetric(float64(len(d.DeadLetters)), "dead-letters")
	if len(d.Routes) == 0 || len(d.DeadLetters) == 0 || len(d.Routes[0].After) != n {
		b.Fatalf("unexpected diff: %+v", d.Summary())
	}
}
