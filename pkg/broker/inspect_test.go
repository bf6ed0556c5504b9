package broker

import (
	"reflect"
	"strings"
	"testing"

	"github.com/mqctl/mqctl/pkg/kind"
	"github.com/mqctl/mqctl/pkg/topology"
)

// printedState is one vhost holding one object of each kind with a type of
// its own, every field of them set.
func printedState() *topology.Topology {
	t := topology.New()
	v := topology.NewVhost("v")
	v.Description, v.DefaultQueueType = "d", "quorum"
	v.Exchanges["x"] = &topology.Exchange{Name: "x", Type: "topic", Durable: true, Internal: true, Arguments: topology.Args{"alternate-exchange": "ae"}}
	v.Queues["q"] = &topology.Queue{Name: "q", Type: "quorum", Durable: true, Arguments: topology.Args{"x-max-length": int64(5)}}
	v.Bindings = []*topology.Binding{{Source: "x", Destination: "q", DestinationType: topology.DestQueue, RoutingKey: "a.#", Arguments: topology.Args{"k": "v"}}}
	for _, k := range kind.PolicyKinds() {
		v.PoliciesOf(k)["p"] = &topology.Policy{Name: "p", Pattern: "^q$", ApplyTo: "queues", Priority: 1, Definition: topology.Args{"max-length": int64(9)}}
	}
	t.Vhosts["v"] = v
	return t
}

// TestFingerprintCoversEveryField changes each field an exchange, a
// queue, a binding or a policy carries in JSON, one at a time, and checks
// that the state's print changes: a field the hand-written print leaves
// out would let a saved plan apply over a broker changed since. Fields the
// model keeps for the file alone (json:"-") are not the broker's and stay
// out of it.
func TestFingerprintCoversEveryField(t *testing.T) {
	base, _ := Fingerprints(printedState(), nil)
	baseSums := ObjectSums(printedState(), nil)
	if again, _ := Fingerprints(printedState(), nil); again != base {
		t.Fatalf("the same state prints %s then %s", base, again)
	}
	objects := map[string]func(*topology.Vhost) []any{
		"exchange": func(v *topology.Vhost) []any { return []any{v.Exchanges["x"]} },
		"queue":    func(v *topology.Vhost) []any { return []any{v.Queues["q"]} },
		"binding":  func(v *topology.Vhost) []any { return []any{v.Bindings[0]} },
		"policy": func(v *topology.Vhost) []any {
			var out []any
			for _, k := range kind.PolicyKinds() {
				out = append(out, v.PoliciesOf(k)["p"])
			}
			return out
		},
	}
	checked := 0
	for what, of := range objects {
		for i := range of(printedState().Vhosts["v"]) {
			typ := reflect.TypeOf(of(printedState().Vhosts["v"])[i]).Elem()
			for f := range typ.NumField() {
				field := typ.Field(f)
				if tag := field.Tag.Get("json"); tag == "-" || !field.IsExported() {
					continue
				}
				state := printedState()
				obj := reflect.ValueOf(of(state.Vhosts["v"])[i]).Elem().Field(f)
				switch obj.Kind() {
				case reflect.String:
					obj.SetString(obj.String() + "'")
				case reflect.Bool:
					obj.SetBool(!obj.Bool())
				case reflect.Int, reflect.Int64:
					obj.SetInt(obj.Int() + 1)
				case reflect.Map:
					obj.SetMapIndex(reflect.ValueOf("another"), reflect.ValueOf(any(int64(1))))
				default:
					t.Errorf("%s field %s is a %s: teach this test (and topologyPrint) to change it", what, field.Name, obj.Kind())
					continue
				}
				checked++
				if got, _ := Fingerprints(state, nil); got == base {
					t.Errorf("%s #%d: changing %s leaves the fingerprint as it was", what, i, field.Name)
				}
				// And the sum of that object alone (ObjectSums, with which
				// apply names what changed since a plan was saved).
				if n := changedSums(baseSums, ObjectSums(state, nil)); n != 1 {
					t.Errorf("%s #%d: changing %s changes the sums of %d objects, want 1", what, i, field.Name, n)
				}
			}
		}
	}
	if checked < 20 {
		t.Errorf("only %d fields changed: the test reads no object", checked)
	}
}

// TestFingerprintTellsFieldsApart checks that values moved from one field
// to the next, or between objects, print differently: every string is
// written with its length, every table with its end.
func TestFingerprintTellsFieldsApart(t *testing.T) {
	print := func(edit func(v *topology.Vhost)) string {
		s := printedState()
		edit(s.Vhosts["v"])
		p, _ := Fingerprints(s, nil)
		return p
	}
	a := print(func(v *topology.Vhost) { v.Bindings[0].Destination, v.Bindings[0].RoutingKey = "q", "ab" })
	b := print(func(v *topology.Vhost) { v.Bindings[0].Destination, v.Bindings[0].RoutingKey = "qa", "b" })
	if a == b {
		t.Errorf("a binding to q with key ab prints as one to qa with key b")
	}
	c := print(func(v *topology.Vhost) { v.Queues["q"].Arguments = nil; v.Queues["q"].Name = "q" })
	d := print(func(v *topology.Vhost) { v.Queues["q"].Arguments = topology.Args{} })
	if c != d {
		t.Errorf("no arguments and an empty table print differently (the broker holds them alike)")
	}
	if !strings.HasPrefix(a, "sha256:") {
		t.Errorf("print %q lacks its prefix", a)
	}
}

// changedSums counts the objects whose sums differ between a and b, the
// sums of the same objects in the same order.
func changedSums(a, b []ObjectSum) int {
	n := 0
	for i := range min(len(a), len(b)) {
		if a[i].Sum != b[i].Sum {
			n++
		}
	}
	return n + max(len(a), len(b)) - min(len(a), len(b))
}
