package lint

import (
	"fmt"
	"strings"
	"testing"

	"github.com/mqctl/mqctl/internal/gentopo"
	"github.com/mqctl/mqctl/pkg/loader"
)

// Where one fanout dead-letter exchange takes every queue's dead letters
// to every DLQ (make bench's replace file), lint keeps no pair of queues
// it never reads: the dead letters arriving in a queue are kept only for
// a queue that dead-letters them on with their keys. At 2,500 queues
// every pair was 6.25 million arrivals, and lint ran past 150 s.
func TestFanoutDeadLettersKeepNoPairs(t *testing.T) {
	const n = 60
	top, err := loader.LoadBytes("replace.yaml", []byte(gentopo.ReplaceYAML("v", n)), loader.Options{})
	if err != nil {
		t.Fatal(err)
	}
	v := top.Vhosts["v"]
	f := newFacts(v, newSimulator(v, Options{}.Version.OrDefault()))
	reached := 0
	for _, d := range f.dl {
		reached = max(reached, len(d.Targets))
	}
	if reached < n {
		t.Fatalf("the file is not the fanout case: a queue's dead letters reach %d queues at most, want %d", reached, n)
	}
	for q, as := range f.arrivals {
		if d := f.dl[q]; d == nil || d.Missing || d.HasDLRK {
			t.Errorf("queue %q, which dead-letters nothing on with the keys they arrive with, keeps %d arrivals", q, len(as))
		}
	}
}

// joinOrQuoted says what joinOr of the quoted items says.
func TestJoinOrQuoted(t *testing.T) {
	for n := 1; n <= 8; n++ {
		items := make([]string, n)
		for i := range items {
			items[i] = fmt.Sprintf("k%d", i)
		}
		if got, want := joinOrQuoted(items), joinOr(quoteAll(items)); got != want {
			t.Errorf("%d items: joinOrQuoted says %q, joinOr of them quoted %q", n, got, want)
		}
	}
	if got := joinOrQuoted(strings.Fields("a b c d e f")); !strings.HasSuffix(got, " and 2 more") {
		t.Errorf("six items: %q", got)
	}
}
