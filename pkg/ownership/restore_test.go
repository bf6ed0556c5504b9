package ownership

import (
	"strings"
	"testing"

	"github.com/mqctl/mqctl/pkg/topology"
)

// A restore list reads back as written, once per binding across lists,
// and is split off the topology with the bindings on it; a damaged one
// is an error that says what to do.
func TestRestoreLists(t *testing.T) {
	a := &topology.Binding{Source: "ex", Destination: "theirs", DestinationType: topology.DestQueue, RoutingKey: "t"}
	b := &topology.Binding{Source: "ex", Destination: "down", DestinationType: topology.DestExchange, RoutingKey: "k", Arguments: topology.Args{"x-match": "all"}}
	long := &topology.Binding{Source: "ex", Destination: "q", DestinationType: topology.DestQueue, RoutingKey: strings.Repeat("k", 2*ChunkSize)}
	for _, tc := range []struct {
		name  string
		lists [][]*topology.Binding
		want  []*topology.Binding
		bad   string
	}{
		{name: "one list", lists: [][]*topology.Binding{{a, b}}, want: []*topology.Binding{a, b}},
		{name: "two lists share a binding", lists: [][]*topology.Binding{{a}, {a, b}}, want: []*topology.Binding{a, b}},
		{name: "longer than a chunk", lists: [][]*topology.Binding{{long}}, want: []*topology.Binding{long}},
		{name: "damaged", bad: "is unreadable"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v := topology.NewVhost("v")
			v.Exchanges = map[string]*topology.Exchange{"ex": {Name: "ex", Type: "direct", Durable: true}}
			for i, l := range tc.lists {
				x := RestoreExchange(int64(i+1), l)
				v.Exchanges[x.Name] = x
				v.Bindings = append(v.Bindings, &topology.Binding{Source: x.Name, Destination: "ex", DestinationType: topology.DestExchange})
			}
			if tc.bad != "" {
				v.Exchanges[RestorePrefix+"9"] = &topology.Exchange{Name: RestorePrefix + "9", Arguments: topology.Args{ArgRestore: []any{"[{"}}}
			}
			top := topology.New()
			top.Vhosts["v"] = v
			recs, err := Extract(top)
			if tc.bad != "" {
				if err == nil || !strings.Contains(err.Error(), tc.bad) {
					t.Fatalf("Extract = %v, want an error saying %q", err, tc.bad)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			r := recs["v"]
			if len(r.RestoreLists) != len(tc.lists) || len(r.Restore) != len(tc.want) {
				t.Fatalf("lists %v, bindings %d, want %d lists and %d bindings", r.RestoreLists, len(r.Restore), len(tc.lists), len(tc.want))
			}
			for i, b := range tc.want {
				if r.Restore[i].Key() != b.Key() {
					t.Errorf("binding %d: %+v, want %+v", i, r.Restore[i], b)
				}
			}
			if len(v.Exchanges) != 1 || len(v.Bindings) != 0 {
				t.Errorf("left in the topology: exchanges %v, bindings %d", v.ExchangeNames(), len(v.Bindings))
			}
		})
	}
}
