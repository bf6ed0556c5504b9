package testcluster_test

import (
	"context"
	"strings"
	"testing"

	"github.com/mqctl/mqctl/internal/testcluster"
)

// TestRefusedReplaceOfQueueOnNodeDown: a file whose change of a queue the
// broker would refuse (x-max-length: -1, refused by every version) is
// refused before anything changes, also while the queue's node is down and
// the replace would be held back this run; the rest of the file (a new
// queue) is not made either. This is the contract, not an accident of the
// order in which the engine refuses (SplitRefusals) and then holds back:
// the refusal's fix is the file's whatever the node does, and going ahead
// with the rest would carry the file out half way, refusing it only once
// the node is back. Once the file is fixed, the replace is held back with
// its reason and the rest is applied. (Checked by hand on 4.3.6, with
// x-queue-version: 1 too.)
func TestRefusedReplaceOfQueueOnNodeDown(t *testing.T) {
	c := testcluster.New(t)
	ctx := context.Background()
	r := newRunner(t, c, c.Vhost(t))
	const before = `version: 1
vhosts:
  ${VHOST}:
    queues:
      q: {}
`
	// Declared through c2 alone: the classic queue lives on c2.
	r.mustApply(c.ServerList(2), before)
	qs, err := c.Queues(ctx, 1, r.vhost)
	if err != nil {
		t.Fatal(err)
	}
	if n := qs["q"].Node; n != c.Node(2) {
		t.Fatalf("classic queue q, declared through c2, lives on %q, not on c2 (%s)", n, c.Node(2))
	}
	c.StopNode(t, 2)
	file := func(limit string) string {
		return `version: 1
vhosts:
  ${VHOST}:
    queues:
      q: { arguments: { x-max-length: ` + limit + ` } }
      other: {}
`
	}
	from := c.ServerList(1, 3)
	for _, cmd := range [][]string{{"plan"}, {"apply", "--auto-approve", "--allow-replace"}} {
		res := r.run(from, append([]string{cmd[0], "-f", r.file(file("-1"))}, cmd[1:]...)...)
		if res.code != 1 || !strings.Contains(res.stderr, "nothing was changed") || !strings.Contains(res.stderr, "x-max-length: -1") {
			t.Errorf("%s of a refused change of queue q, its node down: want it refused before anything changes, naming x-max-length: -1:\n%s", cmd[0], res)
		}
	}
	qs, err = c.Queues(ctx, 1, r.vhost)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := qs["other"]; ok {
		t.Errorf("the refused apply created queue other")
	}
	// Fixed: the rest is applied, the replace held back with its reason.
	res := r.run(from, "apply", "-f", r.file(file("5")), "--auto-approve", "--allow-replace")
	if res.code != 0 || !strings.Contains(res.stderr+res.stdout, "which is down") {
		t.Errorf("apply of the fixed file, q's node down: want the replace of q held back (its node down) and the rest applied:\n%s", res)
	}
	if qs, err = c.Queues(ctx, 1, r.vhost); err != nil {
		t.Fatal(err)
	} else if _, ok := qs["other"]; !ok {
		t.Errorf("apply of the fixed file did not create queue other:\n%s", res)
	}
}
