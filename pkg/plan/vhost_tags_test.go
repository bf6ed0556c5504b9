package plan

import (
	"bytes"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/mqctl/mqctl/pkg/topology"
)

// TestVhostTags: the tags a file declares are compared with the broker's
// as a set; tags the file leaves out (nil) are the broker's, never a
// change; [] clears them. An update keeps the broker's description when
// the file has none (a PUT replaces it). The tags go through the JSON plan
// and the saved plan, [] apart from absent.
func TestVhostTags(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name       string
		file, have []string
		wantFields []FieldChange
		wantAfter  []string
	}{
		{"left out keeps the broker's", nil, []string{"a"}, nil, nil},
		{"the same", []string{"a", "b"}, []string{"a", "b"}, nil, nil},
		{"the same in another order, repeated", []string{"b", "a", "b"}, []string{"a", "b"}, nil, nil},
		{"added", []string{"a", "b"}, nil, []FieldChange{{Field: "tags", Before: nil, After: []string{"a", "b"}}}, []string{"a", "b"}},
		{"changed", []string{"c"}, []string{"a"}, []FieldChange{{Field: "tags", Before: []string{"a"}, After: []string{"c"}}}, []string{"c"}},
		{"cleared", []string{}, []string{"a"}, []FieldChange{{Field: "tags", Before: []string{"a"}, After: nil}}, []string{}},
		{"none, none on the broker", []string{}, nil, nil, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			desired := vh("v", func(v *topology.Vhost) { v.Tags = tc.file })
			broker := vh("v", func(v *topology.Vhost) { v.Tags, v.Description = tc.have, "kept" })
			p := Diff(desired, Current{Live: topology.Live{State: broker}})
			if tc.wantFields == nil {
				if len(p.Changes) != 0 {
					t.Fatalf("changes %+v, want none", p.Changes)
				}
				return
			}
			if len(p.Changes) != 1 || p.Changes[0].Action != Update {
				t.Fatalf("changes %+v, want one update", p.Changes)
			}
			c := p.Changes[0]
			if diff := cmp.Diff(tc.wantFields, c.Fields); diff != "" {
				t.Errorf("fields (-want +got):\n%s", diff)
			}
			after := c.After.(*VhostMeta)
			if after.Description != "kept" || !cmp.Equal(after.Tags, tc.wantAfter) || (after.Tags == nil) != (tc.wantAfter == nil) {
				t.Errorf("after = %+v, want description kept and tags %#v", after, tc.wantAfter)
			}
			var js bytes.Buffer
			if err := WriteJSON(&js, p); err != nil {
				t.Fatal(err)
			}
			fromJS, err := ReadJSON(&js)
			if err != nil {
				t.Fatal(err)
			}
			var saved bytes.Buffer
			if err := WriteSaved(&saved, p); err != nil {
				t.Fatal(err)
			}
			fromSaved, err := ReadSaved(&saved, "plan.bin")
			if err != nil {
				t.Fatal(err)
			}
			for what, back := range map[string]*Plan{"JSON plan": fromJS, "saved plan": fromSaved} {
				got := back.Changes[0].After.(*VhostMeta).Tags
				if !cmp.Equal(got, tc.wantAfter) || (got == nil) != (tc.wantAfter == nil) {
					t.Errorf("the %s's tags = %#v, want %#v", what, got, tc.wantAfter)
				}
			}
		})
	}
}

// TestVhostUpdateKeepsTheDescription: a PUT of a vhost replaces its
// description (RabbitMQ 4.3.6, 4.0.5 and 3.10.8 alike clear it on ""), so
// an update of a file without a description (here its default queue type)
// writes the broker's. Before, it wrote "" and cleared it.
func TestVhostUpdateKeepsTheDescription(t *testing.T) {
	t.Parallel()
	desired := vh("v", func(v *topology.Vhost) { v.DefaultQueueType = "quorum" })
	broker := vh("v", func(v *topology.Vhost) { v.Description = "kept" })
	p := Diff(desired, Current{Live: topology.Live{State: broker}})
	if len(p.Changes) != 1 || p.Changes[0].Action != Update {
		t.Fatalf("changes %+v, want one update", p.Changes)
	}
	if got := p.Changes[0].After.(*VhostMeta); got.Description != "kept" || got.DefaultQueueType != "quorum" {
		t.Errorf("after = %+v, want description kept, default queue type quorum", got)
	}
}
