package cli_test

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/mqctl/mqctl/internal/brokerstate"
	"github.com/mqctl/mqctl/internal/testbroker"
	"github.com/mqctl/mqctl/pkg/lock"
	"github.com/mqctl/mqctl/pkg/topology"
)

const savedBefore = `version: 1
vhosts:
  ${VHOST}:
    queues:
      a: {}
`

const savedFile = `version: 1
vhosts:
  ${VHOST}:
    queues:
      a: {}
      b: { type: quorum }
`

// A saved plan is applied only while the broker is as it was when the plan
// was made.
func TestApplySavedPlan(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.mustApply(savedBefore)
	f := h.write("file.yaml", savedFile)
	planFile := filepath.Join(h.dir, "plan.json")

	r := h.run("plan", "-f", f, "-out", planFile)
	if r.code != 0 || !strings.Contains(r.stdout, "Saved the plan to "+planFile) {
		t.Fatalf("plan -out:\n%s", r)
	}
	// Someone changes the broker in between.
	testbroker.Declare(t, h.c, h.vhost, &topology.Vhost{Queues: map[string]*topology.Queue{
		"theirs": {Name: "theirs", Type: topology.QueueClassic, Durable: true}}})
	v0, _ := h.state()
	r = h.run("apply", planFile, "--auto-approve")
	if r.code != 1 {
		t.Fatalf("a stale plan was applied:\n%s", r)
	}
	for _, s := range []string{"the broker changed since this plan was made", "saved plan is stale", `mqctl plan --out ` + planFile} {
		if !strings.Contains(r.stderr, s) {
			t.Errorf("the refusal does not say %q:\n%s", s, r)
		}
	}
	if v1, _ := h.state(); !cmp.Equal(brokerstate.ObjectsOf(v0), brokerstate.ObjectsOf(v1), brokerstate.CmpObjects) {
		t.Errorf("the refused plan changed the broker: %v -> %v", v0.QueueNames(), v1.QueueNames())
	}

	// Planned again on the unchanged broker, it applies.
	if r := h.run("plan", "-f", f, "--out", planFile); r.code != 0 {
		t.Fatalf("plan --out:\n%s", r)
	}
	r = h.run("apply", planFile, "--auto-approve")
	if r.code != 0 || !strings.Contains(r.stdout, "Apply complete: 1 created") {
		t.Fatalf("apply of a fresh saved plan:\n%s", r)
	}
	unmanaged := &topology.Vhost{Queues: map[string]*topology.Queue{"theirs": {Name: "theirs", Type: topology.QueueClassic, Durable: true}}}
	assertBrokerHolds(t, h, savedFile, unmanaged)
	h.assertNoChanges(savedFile)
}

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
	assertBrokerHolds(t, h, savedFile, nil)
}

const partialBroken = `version: 1
vhosts:
  ${VHOST}:
    exchanges:
      ex: { type: direct }
    queues:
      good: { bindings: [{ exchange: ex, routing_key: good }] }
      bogus:
        arguments: { x-overflow: bogus }
        bindings: [{ exchange: ex, routing_key: bogus }]
    policies:
      cap: { pattern: "^good$", definition: { max-length: 10 } }
`

const policyBroken = `version: 1
vhosts:
  ${VHOST}:
    exchanges:
      ex: { type: direct }
    queues:
      good: { bindings: [{ exchange: ex, routing_key: good }] }
      bogus:
        arguments: { x-overflow: reject-publish }
        bindings: [{ exchange: ex, routing_key: bogus }]
    policies:
      cap: { pattern: "^good$", definition: { max-length: "ten" } }
`

const partialFixed = `version: 1
vhosts:
  ${VHOST}:
    exchanges:
      ex: { type: direct }
    queues:
      good: { bindings: [{ exchange: ex, routing_key: good }] }
      bogus:
        arguments: { x-overflow: reject-publish }
        bindings: [{ exchange: ex, routing_key: bogus }]
    policies:
      cap: { pattern: "^good$", definition: { max-length: 10 } }
`

// What the broker refuses is found by apply's preflight, before any
// change: nothing is done, and the error names the object, its place in
// the file and the broker's words. With --no-preflight an apply that the
// broker stops part way reports what was done, what failed (with the
// broker's reason) and what was left; a re-run with the cause fixed
// converges.
func TestApplyPartialFailure(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, broken string
		refused      string // what the preflight's error says
		want         []string
	}{
		{"a queue argument the broker refuses", partialBroken, `broken.yaml:8:7: queue "bogus" in vhost "${VHOST}": invalid arg 'x-overflow' for queue 'bogus'`, []string{
			"Apply did not finish.",
			"Done (2 steps):", `declare exchange "ex"`, `declare queue "good"`,
			"Failed (1):", `declare queue "bogus" in vhost "${VHOST}": the broker at`, "refused (400): invalid arg 'x-overflow' for queue 'bogus'",
			"Not done (3 steps):", "create binding ex -> queue bogus [bogus]", "create binding ex -> queue good [good]", `put policy "cap"`,
		}},
		{"a policy definition the broker refuses", policyBroken, `broken.yaml:12:7: policy "cap" in vhost "${VHOST}": Validation failed: <<"ten">> is not a valid maximum length`, []string{
			"Apply did not finish.",
			"Done (5 steps):", "create binding ex -> queue good [good]",
			"Failed (1):", `put policy "cap" in vhost "${VHOST}": the broker at`, `refused (400): Validation failed: <<"ten">> is not a valid maximum length`,
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			h := newHarness(t)
			f := h.write("broken.yaml", tc.broken)
			r := h.run("apply", "-f", f, "--auto-approve")
			if want := strings.ReplaceAll(tc.refused, "${VHOST}", h.vhost); r.code != 1 || !strings.Contains(r.stderr, "nothing was changed: the broker refuses 1 object of the plan") || !strings.Contains(r.stderr, want) {
				t.Fatalf("apply's preflight did not refuse it, saying %q:\n%s", want, r)
			}
			if _, rec := h.state(); rec != nil && len(rec.Managed) > 0 {
				t.Fatalf("the apply the preflight refused changed the broker: the record lists %v", rec.Managed)
			}

			r = h.run("apply", "-f", f, "--auto-approve", "--no-preflight")
			if r.code != 1 {
				t.Fatalf("apply did not fail:\n%s", r)
			}
			for _, s := range tc.want {
				if s = strings.ReplaceAll(s, "${VHOST}", h.vhost); !strings.Contains(r.stdout, s) {
					t.Errorf("the report does not say %q:\n%s", s, r)
				}
			}
			if !strings.Contains(r.stderr, "fix the cause and run mqctl apply again") {
				t.Errorf("the error does not say how to go on:\n%s", r)
			}
			// What was done is recorded as managed: dropping the good
			// queue from the file now deletes it.
			_, rec := h.state()
			if rec == nil || len(rec.Managed) == 0 {
				t.Errorf("the ownership record does not list what the failed apply did")
			}

			h.mustApply(partialFixed)
			assertBrokerHolds(t, h, partialFixed, nil)
			h.assertNoChanges(partialFixed)
		})
	}
}

// A file that declares no vhost plans nothing: it must not read the whole
// broker (to the broker client, no vhosts means every vhost) and plan the
// deletion of everything mqctl manages anywhere.
func TestApplyFileWithoutVhosts(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.mustApply(savedBefore)
	v0, rec0 := h.state()
	for _, content := range []string{"version: 1\nvhosts: {}\n", "version: 1\n"} {
		f := h.write("empty.yaml", content)
		if r := h.run("plan", "-f", f, "--detailed-exitcode"); r.code != 0 || !strings.Contains(r.stdout, "No changes.") {
			t.Errorf("plan of a file without vhosts:\n%s", r)
		}
		if r := h.run("apply", "-f", f, "--auto-approve"); r.code != 0 {
			t.Errorf("apply of a file without vhosts:\n%s", r)
		}
	}
	v1, rec1 := h.state()
	if !cmp.Equal(brokerstate.ObjectsOf(v0), brokerstate.ObjectsOf(v1), brokerstate.CmpObjects) || !cmp.Equal(rec0.Managed, rec1.Managed) {
		t.Errorf("a file without vhosts changed vhost %s: %v -> %v", h.vhost, v0.QueueNames(), v1.QueueNames())
	}
}
