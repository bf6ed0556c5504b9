package topotest_test

import (
	"bytes"
	"encoding/json"
	"testing"

	gold "github.com/mqctl/mqctl/internal/golden"
	"github.com/mqctl/mqctl/internal/jsondoc"
	"github.com/mqctl/mqctl/pkg/topotest"
)

// TestJSONEveryField: mqctl test -o json writes every field of a report,
// each under the name and in the place testdata/json-every-field.json
// pins (written from Report's own JSON, which was the output before the
// report had types of its own: format_version 1's names and meanings
// change only by addition). A field WriteJSON misses, or a name that
// changes, fails here.
func TestJSONEveryField(t *testing.T) {
	var r topotest.Report
	jsondoc.Fill(&r, 2)
	var got bytes.Buffer
	if err := topotest.WriteJSON(&got, &r); err != nil {
		t.Fatal(err)
	}
	gold.Check(t, "testdata/json-every-field.json", got.Bytes())
}

// TestJSONNilLists: a list the report leaves nil is null (tests,
// expected, got) or absent (not_run, hops), as Report's own JSON wrote
// them.
func TestJSONNilLists(t *testing.T) {
	r := topotest.Report{FormatVersion: "1", Tests: []topotest.Outcome{{Name: "t"}}}
	var got, compact bytes.Buffer
	if err := topotest.WriteJSON(&got, &r); err != nil {
		t.Fatal(err)
	}
	if err := json.Compact(&compact, got.Bytes()); err != nil {
		t.Fatal(err)
	}
	const want = `{"format_version":"1","live":false,"tests":[{"name":"t","vhost":"","pos":{},"passed":false,"expected":null,"got":null}],"passed":0,"failed":0,"unknown":0}`
	if compact.String() != want {
		t.Errorf("got  %s\nwant %s", compact.String(), want)
	}
	got.Reset()
	if err := topotest.WriteJSON(&got, &topotest.Report{}); err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(got.Bytes(), []byte(`"tests": null`)) {
		t.Errorf("a report without tests: %s", got.String())
	}
}
