package route

import (
	"bytes"
	"encoding/json"
	"testing"

	gold "github.com/mqctl/mqctl/internal/golden"
	"github.com/mqctl/mqctl/internal/jsondoc"
)

// TestJSONEveryField: route -o json writes every field of a trace, each
// under the name and in the place testdata/json-every-field.json pins
// (written from route.Trace's own JSON, which was the output before
// routejson: the names and meanings are a contract for scripts, and
// change only by addition). A field the mapping to routejson misses, or
// a name that changes, fails here.
func TestJSONEveryField(t *testing.T) {
	var tr Trace
	jsondoc.Fill(&tr, 3)
	var got bytes.Buffer
	if err := WriteJSON(&got, tr); err != nil {
		t.Fatal(err)
	}
	gold.Check(t, "testdata/json-every-field.json", got.Bytes())
}

// TestJSONNilAndEmpty: a list the trace leaves nil is null, an empty one
// [], as route.Trace's own JSON wrote them.
func TestJSONNilAndEmpty(t *testing.T) {
	for _, tc := range []struct {
		tr   Trace
		want string
	}{
		{Trace{}, `{"vhost":"","publish":{"message":{"exchange":"","routing_key":""},"deliveries":null},"hops":null}`},
		{Trace{Publish: Result{Deliveries: []Delivery{}}, Hops: []Hop{{Delivery: Delivery{Path: []Step{}}}}},
			`{"vhost":"","publish":{"message":{"exchange":"","routing_key":""},"deliveries":[]},"hops":[{"queue":"","path":[]}]}`},
	} {
		var got bytes.Buffer
		if err := WriteJSON(&got, tc.tr); err != nil {
			t.Fatal(err)
		}
		var compact bytes.Buffer
		if err := json.Compact(&compact, got.Bytes()); err != nil {
			t.Fatal(err)
		}
		if compact.String() != tc.want {
			t.Errorf("got  %s\nwant %s", compact.String(), tc.want)
		}
	}
}
