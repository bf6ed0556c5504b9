package engine

import (
	"fmt"
	"strings"
	"testing"

	"github.com/mqctl/mqctl/pkg/broker"
)

// TestDownNotes: a few queues out of reach get a note each; many get one
// note per node that is down (or set of members that are), counting them
// and naming the first ten, instead of a note of three lines per queue
// (400 queues on a stopped node gave some 1,200 lines).
func TestDownNotes(t *testing.T) {
	t.Parallel()
	classic := &broker.Placement{Down: true, Node: "rabbit@n1"}
	quorum := &broker.Placement{Type: "quorum", Members: []string{"rabbit@n1", "rabbit@n2", "rabbit@n3"}, Online: []string{"rabbit@n3"}}
	build := func(n int) ([]queueRef, map[queueRef]*broker.Placement, map[queueRef][]string) {
		var refs []queueRef
		down := map[queueRef]*broker.Placement{}
		held := map[queueRef][]string{}
		for i := range n {
			r := queueRef{"v", fmt.Sprintf("q%02d", i)}
			refs = append(refs, r)
			down[r] = classic
			held[r] = []string{"delete queue " + r.name, "create binding x"}
		}
		r := queueRef{"v", "qq"}
		refs = append(refs, r)
		down[r], held[r] = quorum, []string{"delete queue qq"}
		return refs, down, held
	}
	few := downNotes(build(3))
	if len(few) != 4 || !strings.Contains(few[0], `queue "q00" in vhost "v" lives on node rabbit@n1, which is down`) ||
		!strings.Contains(few[3], `quorum queue "qq" in vhost "v" has 1 of its 3 members online (down: rabbit@n1, rabbit@n2)`) {
		t.Errorf("notes on 4 queues out of reach:\n%s", strings.Join(few, "\n"))
	}
	many := downNotes(build(400))
	if len(many) != 2 { // the quorum queue, alone without a majority, has a note of its own
		t.Fatalf("%d notes on 401 queues out of reach, want one per node or set of members down:\n%s", len(many), strings.Join(many, "\n"))
	}
	for _, want := range []string{
		`400 queues live on node rabbit@n1, which is down`, `with the 800 changes that wait for them`,
		`"q00" in vhost "v", "q01" in vhost "v"`, `"q09" in vhost "v" and 390 more`,
	} {
		if !strings.Contains(many[0], want) {
			t.Errorf("the note on node rabbit@n1 lacks %q:\n%s", want, many[0])
		}
	}
	if want := `quorum queue "qq" in vhost "v" has 1 of its 3 members online (down: rabbit@n1, rabbit@n2)`; !strings.Contains(many[1], want) {
		t.Errorf("the note on the quorum queue lacks %q:\n%s", want, many[1])
	}
	for _, n := range many {
		if strings.Contains(n, "3.10") || strings.Contains(n, "4.0 would") {
			t.Errorf("a note speaks of versions rather than of this broker: %s", n)
		}
	}
}
