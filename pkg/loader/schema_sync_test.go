package loader

import (
	"encoding/json"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/mqctl/mqctl/schema"
)

// TestSchemaFieldsMatchLoader keeps schema/mqctl.schema.json and the
// loader's field lists in step: every mapping has the same field names in
// both.
func TestSchemaFieldsMatchLoader(t *testing.T) {
	var doc map[string]any
	if err := json.Unmarshal(schema.JSON(), &doc); err != nil {
		t.Fatal(err)
	}
	at := func(path ...string) map[string]any {
		var cur any = doc
		for _, p := range path {
			m, ok := cur.(map[string]any)
			if !ok {
				t.Fatalf("schema has no %v", path)
			}
			cur = m[p]
		}
		m, ok := cur.(map[string]any)
		if !ok {
			t.Fatalf("schema has no object at %v", path)
		}
		return m
	}
	props := func(path ...string) []string {
		var names []string
		for k := range at(append(path, "properties")...) {
			names = append(names, k)
		}
		slices.Sort(names)
		return names
	}
	def := func(name string) []string { return []string{"$defs", name} }
	queueProp := func(name string) []string { return []string{"$defs", "queueBody", "properties", name} }
	tests := []struct {
		schemaPath []string
		loader     []string
	}{
		{nil, topFields},
		{[]string{"properties", "lint"}, lintFields},
		{def("vhost"), vhostFields},
		{[]string{"$defs", "vhost", "properties", "defaults"}, defaultsFields},
		{def("exchange"), exchangeFields},
		{def("queueBody"), queueFields},
		{def("deadLetterQueue"), []string{"name"}},
		{queueProp("limits"), limitsFields},
		{queueProp("dead_letter"), deadLetterFields},
		{queueProp("retry"), retryFields},
		{queueProp("alert"), alertFields},
		{def("queueBinding"), queueBindingFields},
		{def("vhostBinding"), bindingFields},
		{def("policy"), policyFields},
		{def("user"), userFields()},
		{[]string{"$defs", "user", "properties", "access", "additionalProperties"}, accessFields},
	}
	for _, tt := range tests {
		want := slices.Sorted(slices.Values(tt.loader))
		if diff := cmp.Diff(want, props(tt.schemaPath...)); diff != "" {
			t.Errorf("schema %v properties differ from the loader's (-loader +schema):\n%s", tt.schemaPath, diff)
		}
	}
	// The DLQ mapping is a queue body plus its name.
	if got := at("$defs", "deadLetterQueue")["$ref"]; got != "#/$defs/queueBody" {
		t.Errorf("deadLetterQueue $ref = %v", got)
	}
	if !slices.Equal(dlQueueFields, append([]string{"name"}, queueFields...)) {
		t.Errorf("dlQueueFields = %v", dlQueueFields)
	}
}
