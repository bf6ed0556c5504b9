package engine

import (
	"fmt"
	"slices"
	"testing"
)

// TestShortLackLines: a refusal names the first 20 missing permissions
// and counts the others by what they lack; before, a user whose regexps
// covered none of a file's 5,000 queues got a refusal (and a plan note)
// of 5,000 lines.
func TestShortLackLines(t *testing.T) {
	lines := func(n int) []string {
		out := make([]string, n)
		for i := range out {
			out[i] = fmt.Sprintf("  line %d", i)
		}
		return out
	}
	tests := []struct {
		name  string
		kinds []string
		last  string // the last line; "" for all the lines kept
	}{
		{"twenty", slices.Repeat([]string{"configure on %d queue"}, 20), ""},
		{"one more", slices.Repeat([]string{"configure on %d queue"}, 21), "  and 1 more: configure on 1 queue"},
		{"many", append(append(append(slices.Repeat([]string{"write on %d exchange"}, 20), slices.Repeat([]string{"configure on %d queue"}, 4978)...), "write on %d exchange", "a tag for %d policy", "a tag for %d policy"), "the topic permission on %d routing key"),
			"  and 4982 more: configure on 4978 queues, write on 1 exchange, a tag for 2 policies, the topic permission on 1 routing key"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := lines(len(tt.kinds))
			got := shortLackLines(slices.Clone(in), tt.kinds)
			if tt.last == "" {
				if !slices.Equal(got, in) {
					t.Errorf("got %q, want the lines as they were", got)
				}
				return
			}
			if len(got) != maxLackLines+1 || !slices.Equal(got[:maxLackLines], in[:maxLackLines]) || got[maxLackLines] != tt.last {
				t.Errorf("got %d lines ending %q; want the first %d and %q", len(got), got[len(got)-1], maxLackLines, tt.last)
			}
		})
	}
}
