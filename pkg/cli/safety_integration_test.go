package cli_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
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
	// It also says how a lock whose apply is gone frees itself, and how to
	// break it (before, only "wait for it to finish", which a hung or
	// cut-off apply never does).
	for _, s := range []string{"is locked by", `"integration test holder"`, "--lock-timeout", "about 30 s after its host hung or lost the network", "rabbitmqctl close_connection"} {
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

// Two applies of one file that creates its vhost, at once: one creates
// the vhost and takes its lock, the other waits for it (--lock-timeout)
// and finds nothing left to do. The second's connection to the vhost the
// first has just created was refused ("vhost … is down", 2 runs in 5 on
// 4.3.6), and it failed blaming its "create vhost" step; DialAMQP now
// asks again for a few seconds.
func TestTwoAppliesCreateOneVhost(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	for round := range 4 {
		vhost := freshVhostName(t, h.b)
		env := map[string]string{"VHOST": vhost}
		f := h.write(fmt.Sprintf("new-%d.yaml", round), "version: 1\nvhosts:\n  ${VHOST}:\n    queues:\n      q: {}\n")
		var wg sync.WaitGroup
		results := make([]result, 2)
		for i := range results {
			wg.Add(1)
			go func() {
				defer wg.Done()
				results[i] = runMqctl(h.b, env, "apply", "-f", f, "--auto-approve", "--lock-timeout", "30s")
			}()
		}
		wg.Wait()
		for i, r := range results {
			if r.code != 0 {
				t.Fatalf("round %d: apply %d of two at once on a new vhost failed:\n%s", round, i+1, r)
			}
		}
	}
}
