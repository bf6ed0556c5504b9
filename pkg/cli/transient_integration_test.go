package cli_test

import (
	"strings"
	"testing"

	"github.com/mqctl/mqctl/internal/testbroker"
)

const transientFile = `version: 1
vhosts:
  ${VHOST}:
    queues:
      scratch: { durable: false }
      keep: {}
`

// A 4.0 or later broker that denies transient non-exclusive queues (a
// node of this test's own, of the same version as the test broker) makes
// apply refuse the file before it changes anything, naming the queue and
// both fixes. What a broker that permits them does, on every version, is
// cmd/mqctl/testdata/live/transient_queues.txtar.
func TestTransientQueuesDenied(t *testing.T) {
	t.Parallel()
	b := testbroker.New(t)
	v := b.Version()
	if !v.AtLeast(4, 0) {
		t.Skipf("RabbitMQ %s has no deprecated feature transient_nonexcl_queues to deny", v)
	}
	const vhost = "transient"
	r, rh := applyOnPrivateNode(t, "deprecated_features.permit.transient_nonexcl_queues = false", vhost, transientFile)
	want := `apply refused, nothing was changed: transient (durable: false) queue "scratch" in vhost "transient": this RabbitMQ ` + v.Line()
	if r.code != 1 || !strings.Contains(r.stderr, want) || !strings.Contains(r.stderr, "durable: true") ||
		!strings.Contains(r.stderr, "deprecated_features.permit.transient_nonexcl_queues = true") {
		t.Errorf("apply on a broker that denies transient queues: want exit 1 saying %q and both fixes:\n%s", want, r)
	}
	left, err := rh.ListQueuesIn(vhost)
	if err != nil {
		t.Fatal(err)
	}
	if len(left) != 0 {
		t.Errorf("the refused apply left queues behind: %+v", left)
	}
}
