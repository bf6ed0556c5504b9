package route

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"reflect"
	"testing"
)

var updateJSON = flag.Bool("update-json", false, "rewrite testdata/json-every-field.json")

// fill sets every exported field of the value v points to: a string to
// the field's name, a number to 1, a bool to true, a pointer to a filled
// value, a slice to one filled element, a map to {"k": "v"}; structs
// within structs to depth levels (a trace nests hops in hops).
func fill(v reflect.Value, name string, depth int) {
	switch v.Kind() {
	case reflect.String:
		v.SetString(name)
	case reflect.Int, reflect.Int64:
		v.SetInt(1)
	case reflect.Bool:
		v.SetBool(true)
	case reflect.Pointer:
		v.Set(reflect.New(v.Type().Elem()))
		fill(v.Elem(), name, depth)
	case reflect.Slice:
		if depth == 0 {
			return
		}
		v.Set(reflect.MakeSlice(v.Type(), 1, 1))
		fill(v.Index(0), name, depth-1)
	case reflect.Map:
		v.Set(reflect.MakeMap(v.Type()))
		v.SetMapIndex(reflect.ValueOf("k"), reflect.ValueOf("v"))
	case reflect.Struct:
		for i := range v.NumField() {
			if f := v.Type().Field(i); f.IsExported() {
				fill(v.Field(i), f.Name, depth)
			}
		}
	}
}

// TestJSONEveryField: route -o json writes every field of a trace, each
// under the name and in the place testdata/json-every-field.json pins
// (written from route.Trace's own JSON, which was the output before
// routejson: the names and meanings are a contract for scripts, and
// change only by addition). A field the mapping to routejson misses, or
// a name that changes, fails here.
func TestJSONEveryField(t *testing.T) {
	var tr Trace
	fill(reflect.ValueOf(&tr).Elem(), "", 3)
	var got bytes.Buffer
	if err := WriteJSON(&got, tr); err != nil {
		t.Fatal(err)
	}
	const golden = "testdata/json-every-field.json"
	if *updateJSON {
		if err := os.WriteFile(golden, got.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got.Bytes(), want) {
		t.Errorf("route -o json of a trace with every field set differs from %s:\n%s", golden, got.String())
	}
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
