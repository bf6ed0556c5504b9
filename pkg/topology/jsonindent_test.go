package topology

import (
	"bytes"
	"encoding/json"
	"testing"
)

// TestJSONIndenterAsIndent: the indenter WriteHiddenJSON writes through
// makes the bytes json.Indent makes of the whole text, whatever the text's
// writes cut it at (one byte at a time, or all at once): empty and nested
// objects and lists, strings holding brackets, commas, colons, escaped
// quotes and backslashes, and whitespace between the tokens, which it
// drops as Indent does.
func TestJSONIndenterAsIndent(t *testing.T) {
	docs := []string{
		`{}`, `[]`, `"a"`, `5`,
		`{"a":[],"b":{},"c":[{}],"d":[[],[1,2]],"e":null,"f":true}`,
		`{"s":"{[,:]}","t":"\"}\\","u":"\\\"[","v":"\u003c\n"}`,
		"{ \"a\" : [ 1 ,\n 2 ] ,\t\"b\" : { } }",
		`[{"k":"v","l":[{"m":[]}]},"x",[[["y"]]]]`,
	}
	for _, doc := range docs {
		var want bytes.Buffer
		if err := json.Indent(&want, []byte(doc), "", "  "); err != nil {
			t.Fatalf("%s: %v", doc, err)
		}
		for _, step := range []int{1, 3, len(doc)} {
			var got bytes.Buffer
			d := &jsonIndenter{w: &got, indent: "  "}
			for i := 0; i < len(doc); i += step {
				if _, err := d.Write([]byte(doc[i:min(i+step, len(doc))])); err != nil {
					t.Fatal(err)
				}
			}
			if got.String() != want.String() {
				t.Errorf("%s in writes of %d bytes:\n got %s\nwant %s", doc, step, got.String(), want.String())
			}
		}
	}
}
