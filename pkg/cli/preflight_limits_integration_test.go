package cli_test

import (
	"strings"
	"testing"

	"github.com/mqctl/mqctl/internal/testbroker"
)

// Three queues of three shapes: the preflight would declare four queues
// (the three, and the sink its bindings need).
const limitedFile = `version: 1
vhosts:
  ${VHOST}:
    queues:
      plain: {}
      capped: { arguments: { x-max-length: 10 } }
      quorum: { type: quorum }
`

// TestPreflightWithinDefaultLimits: a broker that gives every new vhost
// named like a throwaway one a limit of one queue (default_limits in its
// configuration, a node of this test's own) gets the preflight skipped,
// with a note saying why, and an apply judged from the version table
// alone, which applies the file and leaves no throwaway vhost behind.
// RabbitMQ 3.10 has no default_limits (3.10.8's configuration schema
// lacks them; 4.0.5's and 4.3.6's have them).
func TestPreflightWithinDefaultLimits(t *testing.T) {
	t.Parallel()
	b := testbroker.New(t)
	v := b.Version()
	if !v.AtLeast(4, 0) {
		t.Skipf("RabbitMQ %s has no default_limits for new vhosts (3.10.8's rabbit.schema has none; 4.0.5's and 4.3.6's have them)", v)
	}
	const vhost = "limited"
	r, rh := applyOnPrivateNode(t, "default_limits.vhosts.1.pattern = ^mqctl-preflight-\ndefault_limits.vhosts.1.max_queues = 1", vhost, limitedFile)
	want := "the broker gives a new vhost a limit of 1 queues (default_limits in its configuration), fewer than the 4 the preflight would declare"
	if r.code != 0 || !strings.Contains(r.stderr, want) || !strings.Contains(r.stderr, "version table alone") {
		t.Fatalf("apply on a broker whose new vhosts may hold one queue: want exit 0 and a note saying %q:\n%s", want, r)
	}
	queues, err := rh.ListQueuesIn(vhost)
	if err != nil {
		t.Fatal(err)
	}
	if len(queues) != 3 {
		t.Errorf("the apply declared %d queues, want 3: %+v", len(queues), queues)
	}
	vhosts, err := rh.ListVhosts()
	if err != nil {
		t.Fatal(err)
	}
	for _, vh := range vhosts {
		if strings.HasPrefix(vh.Name, "mqctl-preflight-") {
			t.Errorf("a throwaway vhost is left behind: %s", vh.Name)
		}
	}
}
