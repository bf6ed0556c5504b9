package plan

import (
	"bufio"
	"bytes"
	"encoding/json"
	"testing"
)

// TestWriteIndentedAsEncoder: the plan's changes written one at a time
// read byte for byte as json.Encoder with a two-space indent writes the
// whole document: nil, empty and full lists, a string that holds the
// field's own text, HTML characters (escaped alike), nested values.
func TestWriteIndentedAsEncoder(t *testing.T) {
	type elem struct {
		Name   string         `json:"name"`
		Fields []string       `json:"fields,omitempty"`
		Args   map[string]any `json:"args,omitempty"`
	}
	type doc struct {
		Version string   `json:"format_version"`
		Vhosts  []string `json:"vhosts"`
		Changes []elem   `json:"changes"`
		Notes   []string `json:"notes"`
		Extra   *elem    `json:"extra,omitempty"`
	}
	tests := []struct {
		name string
		d    doc
	}{
		{"nil changes", doc{Version: "1", Vhosts: []string{"/"}}},
		{"no changes", doc{Version: "1", Changes: []elem{}, Notes: []string{}}},
		{"changes", doc{Version: "1", Vhosts: []string{"a", "b"}, Changes: []elem{
			{Name: "q1", Fields: []string{"x-max-length"}, Args: map[string]any{"b": 1, "a": []any{"x", map[string]any{"k": true}}}},
			{Name: "<&>"},
			{Name: "\n  \"changes\": null"},
		}, Notes: []string{"n"}, Extra: &elem{Name: "e"}}},
		{"the field's text in a vhost", doc{Version: "1", Vhosts: []string{"\n  \"changes\": null"}, Changes: []elem{{Name: "q"}}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var want bytes.Buffer
			enc := json.NewEncoder(&want)
			enc.SetIndent("", "  ")
			if err := enc.Encode(tt.d); err != nil {
				t.Fatal(err)
			}
			d := tt.d
			changes := d.Changes
			d.Changes = nil
			var got bytes.Buffer
			bw := bufio.NewWriter(&got)
			if err := (&indentWriter{w: bw}).object(&d, "", sliceHole("changes", changes)); err != nil {
				t.Fatal(err)
			}
			bw.WriteString("\n")
			bw.Flush()
			if got.String() != want.String() {
				t.Errorf("got\n%s\nwant\n%s", got.String(), want.String())
			}
		})
	}
}
