package lint_test

import (
	"bytes"
	"testing"

	gold "github.com/mqctl/mqctl/internal/golden"
	"github.com/mqctl/mqctl/internal/jsondoc"
	"github.com/mqctl/mqctl/pkg/lint"
)

// TestJSONEveryField: lint --format json writes every field of a finding
// under the name and in the place testdata/json-every-field.json pins
// (written from the model's own JSON for the finding's object and
// position, which was the output before the report had types of its own:
// format_version 1's names and meanings change only by addition). A
// field the report misses, or a name that changes, fails here.
func TestJSONEveryField(t *testing.T) {
	var f lint.Finding
	jsondoc.Fill(&f, 1)
	var got bytes.Buffer
	if err := lint.Write(&got, lint.FormatJSON, []lint.Finding{f}, nil, ""); err != nil {
		t.Fatal(err)
	}
	gold.Check(t, "testdata/json-every-field.json", got.Bytes())
}
