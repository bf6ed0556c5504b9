package cli_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/mqctl/mqctl/internal/brokerstate"
	"github.com/mqctl/mqctl/pkg/plan"
	"github.com/mqctl/mqctl/pkg/topology"
)

// The other plan/apply scenarios against the real broker are live
// scripts: cmd/mqctl/testdata/live/apply_*.txtar.

const dataBefore = `version: 1
vhosts:
  ${VHOST}:
    exchanges:
      ex: { type: direct }
    queues:
      q:
        limits: { max_length: 100 }
        bindings: [{ exchange: ex, routing_key: q }, { exchange: ex, routing_key: old }]
      qq: { type: quorum }
      qs: { type: stream }
`

const dataAfter = `version: 1
vhosts:
  ${VHOST}:
    exchanges:
      ex: { type: direct }
    queues:
      q:
        limits: { max_length: 200 }
        bindings: [{ exchange: ex, routing_key: q }]
`

// Queues with consumers are not deleted or replaced without
// --allow-data-loss. (In Go, not a script: the consumers must stay
// connected while plan and apply run.)
func TestApplyQueuesWithConsumers(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.mustApply(dataBefore)
	ch := h.b.Channel(t, h.vhost)
	if err := ch.Qos(10, 0, false); err != nil { // streams want a prefetch
		t.Fatal(err)
	}
	for _, q := range []string{"q", "qq", "qs"} {
		if _, err := ch.Consume(q, "test-consumer-"+q, false, false, false, false, amqp.Table{}); err != nil {
			t.Fatal(err)
		}
	}
	// RabbitMQ 3.10 tells a stream's consumers only through its
	// statistics (a passive declare reports none), which show a new
	// consumer after collect_statistics_interval.
	waitConsumers(t, h, "qs", 1)

	p := h.planJSON(dataAfter)
	if diff := cmp.Diff([]string{"- binding ex -> queue q [old]", "- queue qq", "- queue qs", "-/+ queue q"}, sortedStrings(h.rows(p))); diff != "" {
		t.Errorf("plan (-want +got):\n%s", diff)
	}
	if len(p.Unmanaged) != 0 || len(p.Adopt) != 0 {
		t.Errorf("plan lists unmanaged objects %v and adopts %v, want none", p.Unmanaged, p.Adopt)
	}

	f := h.write("file.yaml", dataAfter)
	v0, rec0 := h.state()
	r := h.run("apply", "-f", f, "--auto-approve", "--allow-replace")
	if r.code != 1 {
		t.Fatalf("apply --allow-replace was not refused:\n%s", r)
	}
	for _, s := range []string{
		`queue "q" in vhost "` + h.vhost + `" would be replaced but holds 0 messages and has 1 consumer`,
		`queue "qq" in vhost "` + h.vhost + `" would be deleted but holds 0 messages and has 1 consumer`,
		`queue "qs" in vhost "` + h.vhost + `" would be deleted but holds 0 messages and has 1 consumer`,
		"--allow-data-loss", "nothing was changed",
	} {
		if !strings.Contains(r.stdout+r.stderr, s) {
			t.Errorf("the refusal of apply --allow-replace does not say %q:\n%s", s, r)
		}
	}
	v1, rec1 := h.state()
	if diff := cmp.Diff(brokerstate.ObjectsOf(v0), brokerstate.ObjectsOf(v1), brokerstate.CmpObjects); diff != "" {
		t.Errorf("the refused apply changed the broker (-before +after):\n%s", diff)
	}
	if diff := cmp.Diff(rec0.Managed, rec1.Managed); diff != "" {
		t.Errorf("the refused apply changed the ownership record (-before +after):\n%s", diff)
	}

	r = h.run("apply", "-f", f, "--auto-approve", "--allow-replace", "--allow-data-loss")
	if r.code != 0 || !strings.Contains(r.stdout, "Apply complete") {
		t.Fatalf("apply --allow-replace --allow-data-loss:\n%s", r)
	}
	assertBrokerHolds(t, h, dataAfter, nil)
	if _, rec := h.state(); rec != nil {
		if _, ok := rec.Managed[plan.ObjectRef{Kind: plan.KindVhost, Vhost: h.vhost, Name: h.vhost}]; ok {
			t.Errorf("mqctl recorded the vhost that existed before it as managed (it would delete it once dropped from the file)")
		}
	}
	h.assertNoChanges(dataAfter)
}

// assertBrokerHolds checks that the test vhost holds exactly the file's
// objects plus the unmanaged ones it does not name, and that the
// ownership record lists exactly the file's objects.
func assertBrokerHolds(t *testing.T, h *harness, file string, unmanaged *topology.Vhost) {
	t.Helper()
	if err := brokerstate.Holds(context.Background(), h.c, h.vhost, h.load(file).Vhosts[h.vhost], unmanaged); err != nil {
		t.Error(err)
	}
}

// waitConsumers waits until the management API reports n consumers on queue.
func waitConsumers(t *testing.T, h *harness, queue string, n int64) {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for {
		st, err := h.c.QueueStatsNow(context.Background(), h.vhost, queue)
		if err != nil {
			t.Fatal(err)
		}
		if st.Consumers == n {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the broker reports %d consumers on %s after 15 s, want %d", st.Consumers, queue, n)
		}
		time.Sleep(200 * time.Millisecond)
	}
}
