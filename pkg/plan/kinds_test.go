package plan

import (
	"reflect"
	"testing"

	"github.com/mqctl/mqctl/pkg/kind"
	"github.com/mqctl/mqctl/pkg/topology"
)

// TestEveryKindHasAnObjectType fails for a kind of the registry (kind.All)
// that the plan cannot carry through its stages: exactly one of its types
// of Object (objectTypes) carries it, an object of it is read back as
// itself from the saved plan and from the public JSON plan, a change of
// it is well formed, and a vhost holds
// it unless it is a vhost or the broker's own (TestEveryVhostKindIsFound
// checks how).
func TestEveryKindHasAnObjectType(t *testing.T) {
	t.Parallel()
	for _, s := range kind.All() {
		var carriers int
		for _, ot := range objectTypes {
			if objCarries(ot.object, s.Kind) {
				carriers++
			}
		}
		if carriers != 1 {
			t.Errorf("kind %q: %d types of Object carry it, want 1 (objectTypes, objects.go)", s.Kind, carriers)
			continue
		}
		o := sampleObjects[s.Kind]
		switch {
		case s.Kind == kind.Vhost:
			o = &VhostMeta{Name: "o", Description: "d"}
		case s.Item != nil:
			o = ItemObject{&topology.Item{Kind: s.Kind, Name: "o", Settings: topology.Args{"a": "b"}}}
		}
		if o == nil {
			t.Errorf("kind %q: no object for this test (sampleObjects)", s.Kind)
			continue
		}
		if !objCarries(o, s.Kind) {
			t.Errorf("kind %q: its object %T does not carry it", s.Kind, o)
		}
		if got := savedOf(o).object(); !reflect.DeepEqual(got, o) {
			t.Errorf("kind %q: saved %+v, read back %+v", s.Kind, o, got)
		}
		if got := planObject(jsonObject(o)); !reflect.DeepEqual(got, o) {
			t.Errorf("kind %q: JSON of %+v read back as %+v", s.Kind, o, got)
		}
		c := Change{Action: Create, Kind: s.Kind, Vhost: "v", Name: "o", After: o}
		if err := c.wellFormed(); err != nil {
			t.Errorf("kind %q: a create of it is not well formed: %v", s.Kind, err)
		}
		_, inVhost := vhostKindOf(s.Kind)
		if want := s.Kind != kind.Vhost && !s.Broker; inVhost != want {
			t.Errorf("kind %q: a vhost holds it %t, want %t (objectType.in)", s.Kind, inVhost, want)
		}
	}
}
