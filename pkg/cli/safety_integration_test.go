package cli_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/mqctl/mqctl/pkg/lock"
)

const savedFile = `version: 1
vhosts:
  ${VHOST}:
    queues:
      a: {}
      b: { type: quorum }
`

// Two applies on one vhost never interleave: the second fails naming the
// holder, or waits with --lock-timeout.
func TestApplyLock(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	f := h.write("file.yaml", savedFile)
	held, err := lock.Acquire(context.Background(), h.vhost, lock.Options{URL: amqpURL(h.b), Name: "integration test holder"})
	if err != nil {
		t.Fatalf("take the lock: %v", err)
	}
	defer held.Release()

	r := h.run("apply", "-f", f, "--auto-approve")
	if r.code != 1 {
		t.Fatalf("apply ran while another held the lock:\n%s", r)
	}
	for _, s := range []string{"is locked by", `"integration test holder"`, "--lock-timeout"} {
		if !strings.Contains(r.stderr, s) {
			t.Errorf("the lock error does not say %q:\n%s", s, r)
		}
	}
	if v, _ := h.state(); len(v.Queues) != 0 {
		t.Errorf("apply changed the broker without the lock: queues %v", v.QueueNames())
	}

	released := make(chan time.Time, 1)
	go func() {
		time.Sleep(time.Second)
		held.Release()
		released <- time.Now()
	}()
	r = h.run("apply", "-f", f, "--auto-approve", "--lock-timeout", "20s")
	if !strings.Contains(r.stderr, `is locked by "integration test holder"`) || !strings.Contains(r.stderr, "waiting up to 20s") {
		t.Errorf("apply does not say whose lock it waits for:\n%s", r)
	}
	finished := time.Now()
	if r.code != 0 {
		t.Fatalf("apply --lock-timeout did not wait for the lock:\n%s", r)
	}
	if rel := <-released; finished.Before(rel) {
		t.Errorf("apply finished at %s, before the lock was released at %s", finished, rel)
	}
	assertBrokerHolds(t, h, savedFile)
}
