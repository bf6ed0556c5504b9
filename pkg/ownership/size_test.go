package ownership_test

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/mqctl/mqctl/internal/gentopo"
	"github.com/mqctl/mqctl/pkg/loader"
	"github.com/mqctl/mqctl/pkg/ownership"
	"github.com/mqctl/mqctl/pkg/plan"
	"github.com/mqctl/mqctl/pkg/topology"
)

// managedAll lists every object of vhost vh of t (and the vhost), with
// its print, as the record of an apply that created them all does.
func managedAll(t *topology.Topology, vh string) map[plan.ObjectRef]plan.Print {
	v := t.Vhosts[vh]
	refs := map[plan.ObjectRef]plan.Print{}
	for _, c := range plan.Diff(t, plan.Current{}).Changes {
		if c.Vhost == vh {
			refs[plan.ObjectRef{Kind: c.Kind, Vhost: vh, Name: c.Name}] = c.Print
		}
	}
	if len(refs) != 1+len(v.Exchanges)+len(v.Queues)+len(v.Bindings)+len(v.Policies) {
		panic(fmt.Sprintf("the plan of vhost %q creates %d objects", vh, len(refs)))
	}
	return refs
}

// recordJSON is the record exchange as GET /api/definitions/{vhost} lists it.
func recordJSON(t testing.TB, vh string, e *topology.Exchange) int {
	data, err := json.Marshal(map[string]any{"name": e.Name, "vhost": vh, "type": e.Type, "durable": e.Durable,
		"auto_delete": e.AutoDelete, "internal": e.Internal, "arguments": e.Arguments})
	if err != nil {
		t.Fatal(err)
	}
	return len(data)
}

// TestRecordSizeBound: the record is at most 10% of the size of the vhost's
// definitions (the generated bench topology, as gentopo renders it for the
// broker's definitions import) at 1k, 10k and 50k objects; the plain list
// of format 1 was about 40%.
func TestRecordSizeBound(t *testing.T) {
	t.Parallel()
	sizes := []int{1000, 10000, 50000}
	if testing.Short() {
		sizes = sizes[:2]
	}
	for _, objects := range sizes {
		n := (objects + 1) / 4
		vh := fmt.Sprintf("bench-%d", objects)
		top, err := loader.LoadBytes("gen.yaml", []byte(gentopo.YAML(vh, n)), loader.Options{})
		if err != nil {
			t.Fatal(err)
		}
		defs, err := gentopo.Definitions(top.Vhosts[vh])
		if err != nil {
			t.Fatal(err)
		}
		refs := managedAll(top, vh)
		rec := recordJSON(t, vh, ownership.Exchange(vh, 1, refs))
		old := recordJSON(t, vh, ownership.PlainExchange(vh, 1, refs))
		ratio, oldRatio := float64(rec)/float64(len(defs)), float64(old)/float64(len(defs))
		t.Logf("%d objects: definitions %d bytes, record %d bytes (%.1f%%), format 1 %d bytes (%.1f%%)",
			gentopo.Objects(n), len(defs), rec, 100*ratio, old, 100*oldRatio)
		if ratio > 0.10 {
			t.Errorf("%d objects: the record is %.1f%% of the definitions, want at most 10%%", objects, 100*ratio)
		}
	}
}
