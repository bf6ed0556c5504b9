package plan

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
)

// writeIndented writes doc as a json.Encoder indenting by two spaces
// writes it, but for its top-level field key, an array that the caller
// holds apart (elems) and left nil in doc: its elements are encoded one at
// a time. A plan's changes are most of it: a 50,002-object teardown's
// JSON plan held the whole document encoded twice over (compact, then
// indented) and peaked at 128-149 MB; now it holds one change's text at a
// time. The bytes are the same.
func writeIndented[T any](w io.Writer, doc any, key string, elems []T) error {
	head, err := json.MarshalIndent(doc, "", "  ")
	if err != nil {
		return err
	}
	// A key inside a string value has its quotes escaped, and no string
	// holds a raw newline: this is the field itself.
	marker := []byte("\n  \"" + key + "\": null")
	i := bytes.Index(head, marker)
	if i < 0 {
		return fmt.Errorf("encoding the plan: no top-level field %q", key)
	}
	bw := bufio.NewWriter(w)
	bw.Write(head[:i+len(marker)-len("null")])
	switch {
	case elems == nil:
		bw.WriteString("null")
	case len(elems) == 0:
		bw.WriteString("[]")
	default:
		bw.WriteString("[")
		for j := range elems {
			if j > 0 {
				bw.WriteString(",")
			}
			bw.WriteString("\n    ")
			b, err := json.MarshalIndent(&elems[j], "    ", "  ")
			if err != nil {
				return err
			}
			bw.Write(b)
		}
		bw.WriteString("\n  ]")
	}
	bw.Write(head[i+len(marker):])
	bw.WriteString("\n")
	return bw.Flush()
}
