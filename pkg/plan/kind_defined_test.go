package plan

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/mqctl/mqctl/pkg/kind"
	pj "github.com/mqctl/mqctl/pkg/planjson"
	"github.com/mqctl/mqctl/pkg/topology"
)

// TestPublicFormsMatchTheModel: every field of a typed kind's type in the
// public JSON plan (pkg/planjson) is a field of its model type of the same
// JSON name, so that the JSON plan writes and reads every one of them; a
// public field the model lacks (or a model type without a field of
// planjson.Object named as its kind's Key) would be written empty.
func TestPublicFormsMatchTheModel(t *testing.T) {
	forms, unmatched := matchPublicForms()
	if len(unmatched) > 0 {
		t.Errorf("public fields no model field matches: %v", unmatched)
	}
	for _, k := range topology.TypedKinds() {
		if _, ok := forms[k.Key()]; !ok {
			t.Errorf("no public form for %s", k.Key())
		}
	}
}

// TestDefinedObjectsInJSON: an exchange, a queue and a policy are written
// in the public JSON plan under their types' fields, every setting, and
// read back alike.
func TestDefinedObjectsInJSON(t *testing.T) {
	x := &topology.Exchange{Name: "x", Type: "topic", Durable: true, AutoDelete: true, Internal: true, Arguments: topology.Args{"alternate-exchange": "ae"}}
	q := &topology.Queue{Name: "q", Type: "quorum", Durable: true, Arguments: topology.Args{"x-max-length": int64(10)}}
	p := &topology.Policy{Name: "p", Pattern: "^q$", ApplyTo: "queues", Priority: 3, Definition: topology.Args{"max-length": int64(5)}}
	for _, tc := range []struct {
		k    Kind
		o    Object
		want *pj.Object
	}{
		{kind.Exchange, Of(x), &pj.Object{Exchange: &pj.Exchange{Name: "x", Type: "topic", Durable: true, AutoDelete: true, Internal: true, Arguments: map[string]any{"alternate-exchange": "ae"}}}},
		{kind.Queue, Of(q), &pj.Object{Queue: &pj.Queue{Name: "q", Type: "quorum", Durable: true, Arguments: map[string]any{"x-max-length": int64(10)}}}},
		{kind.OperatorPolicy, Of(p), &pj.Object{Policy: &pj.Policy{Name: "p", Pattern: "^q$", ApplyTo: "queues", Priority: 3, Definition: map[string]any{"max-length": int64(5)}}}},
	} {
		got := jsonObject(tc.o)
		if d := cmp.Diff(tc.want, got); d != "" {
			t.Errorf("%s in JSON (-want +got):\n%s", tc.k, d)
		}
		back := planObject(got)
		if f := ObjectFields(tc.k, tc.o, back); back == nil || len(f) != 0 || !objCarries(back, tc.k) {
			t.Errorf("%s read back as %#v, differing in %v", tc.k, back, f)
		}
	}
}
