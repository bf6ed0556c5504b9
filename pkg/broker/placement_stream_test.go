package broker

import (
	"context"
	"fmt"
	"runtime"
	"strings"
	"testing"
	"unsafe"
	"weak"
)

// TestEachQueuePlacementHoldsNoListing: each queue's placement is handed
// on as the listing is read, and nothing of it is held after: by the time
// the last queue comes, the first one's placement is garbage (its node's
// name is: the listing with the queue totals keeps the queues' names, to
// tell those it left out). A plan replacing
// 25,000 queues held the listing's elements and a map of their
// placements at its peak of memory.
func TestEachQueuePlacementHoldsNoListing(t *testing.T) {
	t.Parallel()
	const n = 300
	var b strings.Builder
	b.WriteString("[")
	for i := range n {
		if i > 0 {
			b.WriteString(",")
		}
		fmt.Fprintf(&b, `{"name":"q%05d","type":"classic","node":"rabbit@a","state":"running","internal_owner":false}`, i)
	}
	b.WriteString("]")
	for _, tc := range []struct {
		name    string
		depthOf []string
	}{
		{"placements alone", nil},
		{"with the queue totals", []string{"q00000"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, _ := fakeVersionAsked(t, "4.1.0", `["administrator"]`, map[string]string{"/api/queues/v": b.String()})
			var first weak.Pointer[byte]
			seen := 0
			stillHeld := false
			err := c.EachQueuePlacement(context.Background(), "v", tc.depthOf, func(p Placement) {
				if want := fmt.Sprintf("q%05d", seen); p.Name != want || p.Node != "rabbit@a" || p.Down {
					t.Errorf("queue %d: got %+v, want %s on rabbit@a, up", seen, p, want)
				}
				seen++
				switch seen {
				case 1:
					first = weak.Make(unsafe.StringData(p.Node))
				case n:
					runtime.GC()
					stillHeld = first.Value() != nil
				}
			})
			if err != nil {
				t.Fatal(err)
			}
			if seen != n {
				t.Fatalf("%d queues handed on, want %d", seen, n)
			}
			if stillHeld {
				t.Error("the first queue's placement is still held when the last one is read: the listing is kept whole")
			}
		})
	}
}
