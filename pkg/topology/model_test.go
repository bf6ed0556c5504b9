package topology

import (
	"testing"

	"github.com/mqctl/mqctl/pkg/kind"
)

// TestTypedKindsComplete: every kind of a vhost's objects with a type of
// its own held by name (all but bindings, which are held by their ends,
// and the kinds carried as Items) has its Typed, and each Typed holds,
// renames and finds its objects.
func TestTypedKindsComplete(t *testing.T) {
	for _, s := range kind.VhostKinds() {
		if s.Item != nil || s.Kind == kind.Binding {
			continue
		}
		typ, ok := TypedOf(s.Kind)
		if !ok {
			t.Errorf("kind %s has no Typed", s.Kind)
			continue
		}
		v := NewVhost("v")
		o := typ.Renamed(typ.New(), "a")
		typ.MetaOf(o).Pos = Pos{Line: 3}
		typ.Def().SetArgs(o, Args{"x": 1})
		if o.ObjectPos().Line != 3 || typ.Def().Args(o)["x"] != 1 {
			t.Errorf("%s: position or arguments not set", s.Kind)
		}
		if o.ObjectName() != "a" || o.Typed() != typ {
			t.Errorf("%s: renamed to %q, of %v", s.Kind, o.ObjectName(), o.Typed())
		}
		m := typ.In(v, s.Kind)
		m.Set("a", o)
		if got, ok := typ.In(v, s.Kind).Get("a"); !ok || got != o || m.Len() != 1 || !m.Has("a") {
			t.Errorf("%s: the vhost does not hold what was set", s.Kind)
		}
		c := *v
		typ.CloneIn(&c, v, s.Kind)
		typ.In(&c, s.Kind).Set("b", o)
		if m.Has("b") || !typ.In(&c, s.Kind).Has("a") {
			t.Errorf("%s: the clone shares its map, or lacks what it cloned", s.Kind)
		}
		m.Set("a", nil)
		if m.Len() != 0 {
			t.Errorf("%s: not removed", s.Kind)
		}
		if d, ok := DefinitionOf(s.Kind); !ok || d.Print != typ.Key() {
			t.Errorf("%s: DefinitionOf gives %+v", s.Kind, d)
		}
	}
}
