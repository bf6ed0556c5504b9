package dlq

import (
	"encoding/json"
	"testing"

	gold "github.com/mqctl/mqctl/internal/golden"
	"github.com/mqctl/mqctl/internal/jsondoc"
)

// TestJSONObjectsEveryField: the objects of dlq peek's and replay's JSON
// (a message's properties, its deaths and first death, a replay target,
// a replay outcome, an overflow) are written with every field under the
// name and in the place testdata/json-objects-every-field.json pins
// (written from the model's own JSON, which was the output before the
// documents had these types: format_version 1's names and meanings change
// only by addition). A field the mapping misses, or a name that changes,
// fails here.
func TestJSONObjectsEveryField(t *testing.T) {
	var (
		p   Properties
		ds  []Death
		f   FirstDeath
		tg  Target
		os_ []Outcome
		ov  []Overflow
	)
	for _, v := range []any{&p, &ds, &f, &tg, &os_, &ov} {
		jsondoc.Fill(v, 2)
	}
	docs := []any{toPropertiesJSON(p), toDeathsJSON(ds), toFirstDeathJSON(f), toTargetJSON(&tg), toOutcomesJSON(os_), toOverflowsJSON(ov)}
	got, err := json.MarshalIndent(docs, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	gold.Check(t, "testdata/json-objects-every-field.json", got)
}
