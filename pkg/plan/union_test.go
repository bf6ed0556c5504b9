package plan

import (
	"slices"
	"testing"
)

// TestUnion checks the merge of two sorted lists against the set of both,
// sorted, and that lists out of order still give that.
func TestUnion(t *testing.T) {
	tests := [][2][]string{
		{nil, nil},
		{{"a"}, nil},
		{nil, {"a"}},
		{{"a", "c", "e"}, {"b", "c", "d", "f"}},
		{{"a", "b"}, {"a", "b"}},
		{{"b"}, {"a", "a", "c"}},
		{{"c", "a"}, {"b", "a"}}, // not sorted: the slow path
		{{"", "a"}, {""}},
	}
	for _, tc := range tests {
		var want []string
		for _, s := range slices.Concat(tc[0], tc[1]) {
			if !slices.Contains(want, s) {
				want = append(want, s)
			}
		}
		slices.Sort(want)
		got := union(tc[0], tc[1])
		if !slices.Equal(got, want) {
			t.Errorf("union(%q, %q) = %q, want %q", tc[0], tc[1], got, want)
		}
	}
}
