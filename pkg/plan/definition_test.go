package plan

import (
	"slices"
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
			Object(&topology.Exchange{Name: "e", Type: "topic", Durable: true, Arguments: topology.Args{"x-a": int64(1)}}),
			Object(&topology.Exchange{Name: "e", Type: "direct", AutoDelete: true, Internal: true, Arguments: topology.Args{"x-a": int64(2)}}),
			keys(len(topology.ExchangeDefinition.Settings), func(i int) string { return topology.ExchangeDefinition.Settings[i].Key }, "arguments"), true},
		{"queue", kind.Queue,
			Object(&topology.Queue{Name: "q", Durable: true, Arguments: topology.Args{"x-a": int64(1), topology.QueueTypeArgument: "classic"}}),
			Object(&topology.Queue{Name: "q", Type: "quorum", AutoDelete: true, Arguments: topology.Args{"x-a": int64(2), topology.QueueTypeArgument: "quorum"}}),
			keys(len(topology.QueueDefinition.Settings), func(i int) string { return topology.QueueDefinition.Settings[i].Key }, "arguments"), true},
		{"operator policy", kind.OperatorPolicy,
			Object(&topology.Policy{Name: "p", Pattern: "^a", Definition: topology.Args{"x-a": int64(1)}}),
			Object(&topology.Policy{Name: "p", Pattern: "^b", ApplyTo: "queues", Priority: 2, Definition: topology.Args{"x-a": int64(2)}}),
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
	a, b := Object(&topology.Queue{Name: "q", Durable: true}), Object(&topology.Queue{Name: "q", Type: "classic", Durable: true})
	if f := ObjectFields(kind.Queue, a, b); len(f) != 0 || PrintOf(a.(topology.Named)) != PrintOf(b.(topology.Named)) {
		t.Errorf("a queue with no type and a classic queue differ: %+v", f)
	}
}

func printOf(k Kind, o Object) Print { return vhostKinds[k].print(o) }

// A stream's x-max-age compares by its length (topology.QueueArgForms), as
// RabbitMQ 4.3.6 compares it on a declare: a re-spelled age is no change
// and prints alike (the ownership record does not take the stream for one
// changed outside mqctl), another age forces a replace and shows both
// spellings as written. The print of an age in its largest whole unit is
// the one it had before the form. A policy's max-age is stored as written
// (rabbit_runtime_parameters keeps the term; GET gives the new spelling
// back on 3.10.8, 4.0.5 and 4.3.6): a re-spelled one is an update in place.
func TestMaxAgeComparesByLength(t *testing.T) {
	stream := func(age any) Object {
		return Object(&topology.Queue{Name: "st", Type: topology.QueueStream, Durable: true,
			Arguments: topology.Args{topology.MaxAgeArgument: age, topology.QueueTypeArgument: topology.QueueStream}})
	}
	policy := func(age any) Object {
		return Object(&topology.Policy{Name: "p", Pattern: "^st$", Definition: topology.Args{"max-age": age}})
	}
	for _, tc := range []struct {
		name       string
		k          Kind
		have, want Object
		fields     []FieldChange
	}{
		{"the same spelling", kind.Queue, stream("7D"), stream("7D"), nil},
		{"hours for days", kind.Queue, stream("7D"), stream("168h"), nil},
		{"seconds for days", kind.Queue, stream("7D"), stream("604800s"), nil},
		{"a leading zero", kind.Queue, stream("7D"), stream("07D"), nil},
		{"days for a month", kind.Queue, stream("1M"), stream("30D"), nil},
		{"another age", kind.Queue, stream("7D"), stream("8D"),
			[]FieldChange{{Field: "arguments.x-max-age", Before: "7D", After: "8D", Forces: true}}},
		{"twelve months are no year", kind.Queue, stream("1Y"), stream("12M"),
			[]FieldChange{{Field: "arguments.x-max-age", Before: "1Y", After: "12M", Forces: true}}},
		{"no age", kind.Queue, stream("7D"), stream("7d"),
			[]FieldChange{{Field: "arguments.x-max-age", Before: "7D", After: "7d", Forces: true}}},
		{"a policy's max-age as written", kind.Policy, policy("7D"), policy("168h"),
			[]FieldChange{{Field: "definition.max-age", Before: "7D", After: "168h"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if d := cmp.Diff(tc.fields, ObjectFields(tc.k, tc.have, tc.want)); d != "" {
				t.Errorf("fields (-want +got):\n%s", d)
			}
			if alike := printOf(tc.k, tc.have) == printOf(tc.k, tc.want); alike != (tc.fields == nil) {
				t.Errorf("the prints are alike: %v, want %v", alike, tc.fields == nil)
			}
		})
	}
	noForms := topology.QueueDefinition
	noForms.Forms = nil
	if q := stream("7D").(*topology.Queue); definitionPrint(noForms, q) != PrintOf(q) {
		t.Errorf("the print of a stream of x-max-age 7D is no longer the one it had")
	}
}

// TestLaterSettingsKeepThePrints: a setting added to a Definition after
// ownership records held prints (topology.Setting.Later) leaves the
// print and the description of an object that does not set it as they
// were, and is in both once it is set: an upgrade that adds a setting
// does not make every object mqctl manages look changed outside it.
// Without Later, the flag below changes every exchange's print.
func TestLaterSettingsKeepThePrints(t *testing.T) {
	var flag bool
	var weight int
	def := topology.ExchangeDefinition
	def.Settings = append(slices.Clone(def.Settings),
		topology.Setting[*topology.Exchange]{Key: "sealed", APIKey: "sealed", Default: false, Later: true, Value: func(*topology.Exchange) any { return flag }},
		topology.Setting[*topology.Exchange]{Key: "weight", APIKey: "weight", Default: 0, Later: true, Value: func(*topology.Exchange) any { return weight }})
	x := &topology.Exchange{Name: "e", Type: "topic", Durable: true, Internal: true}
	if definitionPrint(def, x) != PrintOf(x) {
		t.Errorf("Later settings at their defaults change the print")
	}
	if d := cmp.Diff(describeDefined(topology.ExchangeDefinition, x), describeDefined(def, x)); d != "" {
		t.Errorf("Later settings at their defaults change the description (-without +with):\n%s", d)
	}
	prints := map[Print]string{PrintOf(x): "neither"}
	for _, tc := range []struct {
		name   string
		flag   bool
		weight int
		shown  []string
	}{
		{"sealed", true, 0, []string{"internal: true", "sealed: true"}},
		{"weight", false, 3, []string{"internal: true", "weight: 3"}},
		{"both", true, 3, []string{"internal: true", "sealed: true", "weight: 3"}},
	} {
		flag, weight = tc.flag, tc.weight
		p := definitionPrint(def, x)
		if other, ok := prints[p]; ok {
			t.Errorf("%s prints as %s does", tc.name, other)
		}
		prints[p] = tc.name
		if d := cmp.Diff(tc.shown, describeDefined(def, x)); d != "" {
			t.Errorf("%s: description (-want +got):\n%s", tc.name, d)
		}
	}
	nonLater := slices.Clone(def.Settings)
	nonLater[len(nonLater)-2].Later = false
	flag, weight = false, 0
	if definitionPrint(topology.Definition[*topology.Exchange]{Print: def.Print, Settings: nonLater, Args: def.Args}, x) == PrintOf(x) {
		t.Errorf("a setting added without Later leaves the print as it was: this test shows nothing")
	}
}
