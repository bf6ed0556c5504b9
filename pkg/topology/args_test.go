package topology

import (
	"strings"
	"testing"
)

// ValueEqual answers as the canonical forms compare, for the scalars it
// compares directly as for the rest.
func TestValueEqual(t *testing.T) {
	for _, tc := range []struct {
		x, y any
		want bool
	}{
		{"a", "a", true},
		{"a", "b", false},
		{"1", 1, false},
		{1, "1", false},
		{1, int64(1), true},
		{int32(7), uint8(7), true},
		{1, 2, false},
		{1.0, 1, true}, // a whole float is an integer, as JSON gives it
		{1.5, 1, false},
		{true, true, true},
		{true, false, false},
		{true, "true", false},
		{nil, nil, true},
		{nil, "", false},
		{[]any{"a", 1}, []any{"a", int64(1)}, true},
		{map[string]any{"k": 1}, map[string]any{"k": 1.0}, true},
		{map[string]any{"k": 1}, map[string]any{"k": "1"}, false},
	} {
		var sx, sy strings.Builder
		writeCanonical(&sx, tc.x)
		writeCanonical(&sy, tc.y)
		if got := ValueEqual(tc.x, tc.y); got != tc.want || got != (sx.String() == sy.String()) {
			t.Errorf("ValueEqual(%#v, %#v) = %v, want %v (canonical %s and %s)", tc.x, tc.y, got, tc.want, sx.String(), sy.String())
		}
	}
}
