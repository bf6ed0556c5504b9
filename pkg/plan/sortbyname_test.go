package plan

import (
	"slices"
	"strings"
	"testing"
)

// sortByName puts the changes of a kind the diff met unsorted (differ.named)
// in name order, moving each along the cycles of the order, whatever the
// order it gets them in.
func TestSortByName(t *testing.T) {
	for _, tc := range []struct {
		name string
		in   []string
	}{
		{"none", nil},
		{"one", []string{"a"}},
		{"sorted", []string{"a", "b", "c"}},
		{"reversed", []string{"e", "d", "c", "b", "a"}},
		{"one cycle", []string{"b", "c", "d", "a"}},
		{"two cycles and a fixed point", []string{"b", "a", "c", "f", "d", "e"}},
		{"swaps", []string{"b", "a", "d", "c"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cs := make([]Change, len(tc.in))
			for i, n := range tc.in {
				// Reason tells each change apart from a copy of another.
				cs[i] = Change{Name: n, Reason: "reason of " + n}
			}
			sortByName(cs)
			var got []string
			for _, c := range cs {
				if c.Reason != "reason of "+c.Name {
					t.Errorf("change %q carries %q: moved apart from its fields", c.Name, c.Reason)
				}
				got = append(got, c.Name)
			}
			want := slices.Sorted(slices.Values(tc.in))
			if !slices.Equal(got, want) {
				t.Errorf("sortByName(%s) = %s, want %s", strings.Join(tc.in, " "), strings.Join(got, " "), strings.Join(want, " "))
			}
		})
	}
}
