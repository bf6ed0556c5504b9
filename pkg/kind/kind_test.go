package kind_test

import (
	"slices"
	"testing"

	"github.com/mqctl/mqctl/pkg/kind"
)

// Items (what the file reader, the diff, export and the live read walk)
// holds every kind carried as topology.Item once: a vhost's in VhostItems,
// the users section's in Access.
func TestItemsCoverEveryItemKind(t *testing.T) {
	seen := map[kind.Kind]int{}
	for _, s := range kind.VhostItems() {
		seen[s.Kind]++
		if s.Declared {
			t.Errorf("%s is in VhostItems but declared under the users section (Spec.Declared)", s.Kind)
		}
	}
	for _, s := range kind.Access() {
		seen[s.Kind]++
		if !s.Declared {
			t.Errorf("%s is in Access but not Spec.Declared", s.Kind)
		}
	}
	for _, s := range kind.All() {
		switch n := seen[s.Kind]; {
		case s.Item != nil && n != 1:
			t.Errorf("%s is carried as topology.Item and in VhostItems or Access %d times, not once (vhostItems in kind.go)", s.Kind, n)
		case s.Item == nil && n != 0:
			t.Errorf("%s has no ItemSpec but is in VhostItems or Access", s.Kind)
		}
		if got := s.Kind.Item(); got != s.Item {
			t.Errorf("%s.Item() = %p, want its spec's %p", s.Kind, got, s.Item)
		}
	}
	if kind.Kind("frobnicator").Item() != nil {
		t.Error("an unknown kind has an ItemSpec")
	}
}

// A list-shaped kind is Named and keeps its list under its one field.
func TestListShapedKinds(t *testing.T) {
	for _, s := range kind.Items() {
		l := s.Item.List
		if l == nil {
			continue
		}
		if s.Item.Shape != kind.Named || len(s.Item.Fields) != 1 || s.Item.Fields[0].Name != l.Key || l.Validate == nil {
			t.Errorf("%s: a list-shaped kind is Named, with one field, its list %q, and checks each member", s.Kind, l.Key)
		}
	}
}

// TestFieldNames: the settings of an item kind, in the order of its
// fields, are the list every stage reads and writes them by (a
// permission's three regexps); a kind without item fields has none.
func TestFieldNames(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		k    kind.Kind
		want []string
	}{
		{kind.Permission, []string{"configure", "write", "read"}},
		{kind.User, []string{kind.UserPassword, kind.UserPasswordHash, kind.UserHashingAlgorithm, kind.UserTags}},
		{kind.TopicPermission, []string{}},
		{kind.Exchange, nil},
		{kind.Kind("nonsense"), nil},
	} {
		if got := tc.k.FieldNames(); !slices.Equal(got, tc.want) || (got == nil) != (tc.want == nil) {
			t.Errorf("%s.FieldNames() = %#v, want %#v", tc.k, got, tc.want)
		}
	}
}
