package routejson_test

import (
	"os"
	"reflect"
	"slices"
	"testing"

	"github.com/mqctl/mqctl/internal/jsondoc"
	"github.com/mqctl/mqctl/pkg/routejson"
)

// TestPageMatchesTypes: docs/route-json.md documents exactly the fields
// of the trace's types, each type in its section; a field added to a type
// without a row on the page (or the other way round) fails here.
func TestPageMatchesTypes(t *testing.T) {
	const page = "../../docs/route-json.md"
	data, err := os.ReadFile(page)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		heading string
		typ     any
	}{
		{"## The document", routejson.Trace{}},
		{"## A result", routejson.Result{}},
		{"## A message", routejson.Message{}},
		{"## A delivery", routejson.Delivery{}},
		{"## A step", routejson.Step{}},
		{"## A choice", routejson.Choice{}},
		{"## A target", routejson.Target{}},
		{"## A hop", routejson.Hop{}},
		{"## A dead-letter hop", routejson.DeadLetterHop{}},
		{"## A dead-letter route", routejson.DeadLetterRoute{}},
		{"## A delayed retry", routejson.DelayedRetry{}},
		{"## An arrival", routejson.Arrival{}},
	} {
		section, err := jsondoc.Section(string(data), c.heading)
		if err != nil {
			t.Errorf("%s: %v", page, err)
			continue
		}
		var documented []string
		for name := range jsondoc.Rows(section) {
			documented = append(documented, name)
		}
		slices.Sort(documented)
		if want := jsondoc.Fields(reflect.TypeOf(c.typ)); !slices.Equal(documented, want) {
			t.Errorf("%s, %q: documents %q, the type %T has %q", page, c.heading, documented, c.typ, want)
		}
	}
}
