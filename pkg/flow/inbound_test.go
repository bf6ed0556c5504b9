package flow

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/mqctl/mqctl/pkg/rmqversion"
	"github.com/mqctl/mqctl/pkg/topology"
)

// TestInboundIndex: past its first scans, inbound answers from one list
// of the bindings by destination and one map of where each queue's start,
// not a list per queue (two maps of 25,000 lists at the peak of a plan
// replacing 25,000 queues), and answers as the scans do: each queue's
// bindings from the reached exchanges (in the order of the exchanges'
// map, as the scans, then each exchange's own).
func TestInboundIndex(t *testing.T) {
	const n = 400
	v := topology.NewVhost("v")
	for _, x := range []string{"a", "b", "hidden"} {
		v.Exchanges[x] = &topology.Exchange{Name: x, Type: "direct", Durable: true}
	}
	for i := range n {
		q := fmt.Sprintf("q%03d", i)
		v.Queues[q] = &topology.Queue{Name: q, Type: "classic", Durable: true}
		v.Bindings = append(v.Bindings, &topology.Binding{Source: "a", Destination: q, DestinationType: topology.DestQueue, RoutingKey: q})
		if i%3 == 0 {
			v.Bindings = append(v.Bindings,
				&topology.Binding{Source: "a", Destination: q, DestinationType: topology.DestQueue, RoutingKey: q + ".again"},
				&topology.Binding{Source: "hidden", Destination: q, DestinationType: topology.DestQueue, RoutingKey: q})
		}
		if i%5 == 0 {
			v.Bindings = append(v.Bindings, &topology.Binding{Source: "b", Destination: q, DestinationType: topology.DestQueue, RoutingKey: "k"})
		}
	}
	s := newSide(v, "v", rmqversion.Default)
	reached := map[string]bool{"a": true, "b": true}
	scanned := func(q string) []*topology.Binding {
		in := &inbound{s: s, reached: reached}
		return in.of(q)
	}
	in := &inbound{s: s, reached: reached, scans: 8} // past its scans: the index
	for i := range n + 2 {
		q := fmt.Sprintf("q%03d", i)
		want := 1
		if i%3 == 0 {
			want++
		}
		if i%5 == 0 {
			want++
		}
		if i >= n {
			want = 0
		}
		got, scan := in.of(q), scanned(q)
		if len(got) != want || !slices.Equal(sorted(got), sorted(scan)) {
			t.Errorf("%s: %d bindings from the index, %d scanned, want %d, the same", q, len(got), len(scan), want)
		}
	}
	// Each exchange's bindings of a queue keep their order.
	if got := in.of("q000"); len(got) != 3 || slices.Index(got, v.Bindings[0]) > slices.Index(got, v.Bindings[1]) {
		t.Errorf("q000: %v, want exchange a's two bindings in their order", got)
	}
	// One list, one map: a few allocations, not one per queue.
	allocs := testing.AllocsPerRun(5, func() {
		in := &inbound{s: s, reached: reached, scans: 8}
		in.of("q000")
	})
	if allocs > n/10 {
		t.Errorf("making the index took %.0f allocations for %d queues, want at most %d", allocs, n, n/10)
	}
}

// sorted is bs by source and key.
func sorted(bs []*topology.Binding) []*topology.Binding {
	return slices.SortedFunc(slices.Values(bs), func(a, b *topology.Binding) int {
		if a.Source != b.Source {
			return strings.Compare(a.Source, b.Source)
		}
		return strings.Compare(a.RoutingKey, b.RoutingKey)
	})
}
