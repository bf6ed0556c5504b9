package definitions

import (
	"fmt"
	"strings"
	"testing"

	"github.com/mqctl/mqctl/pkg/kind"
	"github.com/mqctl/mqctl/pkg/topology"
)

// Every kind of policy (kind.PolicyKinds) is read from its section by
// both definitions paths, the broker's answer (DecodeStream, MapLive) and
// a definitions file (Read), into its own map of the vhost, apart from
// the other kinds': a kind of policy that one of them misses fails here.
func TestEveryKindOfPolicyIsMapped(t *testing.T) {
	kinds := kind.PolicyKinds()
	if len(kinds) < 2 {
		t.Fatalf("PolicyKinds = %v, want policies and operator policies", kinds)
	}
	var live, file []string
	for _, k := range kinds {
		p := fmt.Sprintf(`{"name": %q, "vhost": "v", "pattern": "^%s$", "apply-to": "queues", "priority": 1, "definition": {"max-length": 7}}`, "p-"+string(k), k)
		live = append(live, fmt.Sprintf("%q: [%s]", k.Section(), p))
		file = append(file, fmt.Sprintf("%q: [%s]", k.Section(), p))
	}
	doc := decodeDoc(t, "{"+strings.Join(live, ", ")+"}")
	for _, k := range kinds {
		if got := doc.PoliciesOf(k); got == nil || len(*got) != 1 {
			t.Errorf("decoded document's %s = %v, want one", k.Plural(), got)
		}
	}
	v, err := MapLive(LiveVhost{Name: "v"}, doc)
	if err != nil {
		t.Fatal(err)
	}
	check := func(from string, v *topology.Vhost) {
		t.Helper()
		for _, k := range kinds {
			ps := v.PoliciesOf(k)
			if len(ps) != 1 || ps["p-"+string(k)] == nil {
				t.Errorf("%s: vhost's %s = %v, want only p-%s", from, k.Plural(), ps, k)
				continue
			}
			if p := ps["p-"+string(k)]; p.Pattern != "^"+string(k)+"$" || p.Priority != 1 || p.Definition["max-length"] != int64(7) {
				t.Errorf("%s: %s p-%s = %+v", from, k.Label(), k, p)
			}
		}
	}
	check("MapLive", v)
	top, _, err := Read("defs.json", []byte(`{"vhosts": [{"name": "v"}], `+strings.Join(file, ", ")+"}"))
	if err != nil {
		t.Fatal(err)
	}
	check("Read", top.Vhosts["v"])
}
