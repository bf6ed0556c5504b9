package plan

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/mqctl/mqctl/pkg/kind"
	"github.com/mqctl/mqctl/pkg/topology"
)

// Two objects that differ in every setting of their kind's definition
// (topology.ExchangeDefinition, QueueDefinition, PolicyDefinition) and in
// one argument differ, in the plan, by exactly those fields, in the
// definition's order, forcing a replace where the kind cannot change in
// place; and their prints differ. A setting added to a definition is
// compared and printed with no code of its own: the want lists below are
// the definitions' keys.
func TestDefinitionsCompareEverySetting(t *testing.T) {
	keys := func(settings int, f func(int) string, argsKey string) []string {
		var out []string
		for i := range settings {
			out = append(out, f(i))
		}
		return append(out, argsKey+".x-a")
	}
	for _, tc := range []struct {
		name       string
		k          Kind
		have, want Object
		fields     []string
		forces     bool
	}{
		{"exchange", kind.Exchange,
			ExchangeObject{&topology.Exchange{Name: "e", Type: "topic", Durable: true, Arguments: topology.Args{"x-a": int64(1)}}},
			ExchangeObject{&topology.Exchange{Name: "e", Type: "direct", AutoDelete: true, Internal: true, Arguments: topology.Args{"x-a": int64(2)}}},
			keys(len(topology.ExchangeDefinition.Settings), func(i int) string { return topology.ExchangeDefinition.Settings[i].Key }, "arguments"), true},
		{"queue", kind.Queue,
			QueueObject{&topology.Queue{Name: "q", Durable: true, Arguments: topology.Args{"x-a": int64(1), topology.QueueTypeArgument: "classic"}}},
			QueueObject{&topology.Queue{Name: "q", Type: "quorum", AutoDelete: true, Arguments: topology.Args{"x-a": int64(2), topology.QueueTypeArgument: "quorum"}}},
			keys(len(topology.QueueDefinition.Settings), func(i int) string { return topology.QueueDefinition.Settings[i].Key }, "arguments"), true},
		{"operator policy", kind.OperatorPolicy,
			PolicyObject{&topology.Policy{Name: "p", Pattern: "^a", Definition: topology.Args{"x-a": int64(1)}}},
			PolicyObject{&topology.Policy{Name: "p", Pattern: "^b", ApplyTo: "queues", Priority: 2, Definition: topology.Args{"x-a": int64(2)}}},
			keys(len(topology.PolicyDefinition.Settings), func(i int) string { return topology.PolicyDefinition.Settings[i].Key }, "definition"), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fields := ObjectFields(tc.k, tc.have, tc.want)
			var got []string
			for _, f := range fields {
				got = append(got, f.Field)
				if f.Forces != tc.forces {
					t.Errorf("%s: forces a replace = %v, want %v", f.Field, f.Forces, tc.forces)
				}
			}
			if diff := cmp.Diff(tc.fields, got); diff != "" {
				t.Errorf("fields (-want +got):\n%s", diff)
			}
			if printOf(tc.k, tc.have) == printOf(tc.k, tc.want) {
				t.Errorf("the two objects print alike")
			}
			if len(ObjectFields(tc.k, tc.have, tc.have)) != 0 {
				t.Errorf("an object differs from itself")
			}
		})
	}
	// A queue type left out is classic: no field, the same print.
	a, b := QueueObject{&topology.Queue{Name: "q", Durable: true}}, QueueObject{&topology.Queue{Name: "q", Type: "classic", Durable: true}}
	if f := ObjectFields(kind.Queue, a, b); len(f) != 0 || QueuePrint(a.Queue) != QueuePrint(b.Queue) {
		t.Errorf("a queue with no type and a classic queue differ: %+v", f)
	}
}

func printOf(k Kind, o Object) Print { return vhostKinds[k].print(o) }
