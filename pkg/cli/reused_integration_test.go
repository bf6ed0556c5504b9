package cli_test

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/mqctl/mqctl/internal/testbroker"
	"github.com/mqctl/mqctl/pkg/broker"
	"github.com/mqctl/mqctl/pkg/plan"
	"github.com/mqctl/mqctl/pkg/topology"
)

const reusedFile = `version: 1
vhosts:
  ${VHOST}:
    exchanges:
      events: { type: topic }
    queues:
      keep: {}
      temp: { bindings: [{ exchange: events, routing_key: "temp.#" }] }
    policies:
      cap: { pattern: "^temp$", apply_to: queues, definition: { max-length: 100 } }
`

const keepOnly = `version: 1
vhosts:
  ${VHOST}:
    queues:
      keep: {}
`

// The sequence of issue 18, as a user runs it: mqctl applies a file with
// exchange events, queues keep and temp and policy cap; by hand, temp,
// events and cap are deleted and new objects made under the same names; a
// plan of a file naming only keep deletes none of them, says why and what
// to do, and so does apply; --delete-changed deletes them, as asked.
func TestReusedNamesAreNotDeleted(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.mustApply(reusedFile)
	ctx := context.Background()
	for _, err := range []error{
		h.c.DeleteQueue(ctx, h.vhost, "temp", broker.DeleteQueueOptions{}),
		h.c.DeleteExchange(ctx, h.vhost, "events", broker.DeleteExchangeOptions{}),
		h.c.DeletePolicy(ctx, h.vhost, "cap"),
		h.c.PutPolicy(ctx, h.vhost, &topology.Policy{Name: "cap", Pattern: "^other$", ApplyTo: "queues", Definition: topology.Args{"max-length": int64(100)}}),
	} {
		if err != nil {
			t.Fatal(err)
		}
	}
	testbroker.Declare(t, h.c, h.vhost, &topology.Vhost{
		Exchanges: map[string]*topology.Exchange{"events": {Name: "events", Type: "fanout", Durable: true}},
		Queues:    map[string]*topology.Queue{"temp": {Name: "temp", Type: topology.QueueClassic, Durable: true, Arguments: topology.Args{"x-max-length": int64(5)}}},
	})
	outside := []string{"exchange events", "policy cap", "queue temp"}

	f := h.write("keep.yaml", keepOnly)
	r := h.run("plan", "-f", f, "--detailed-exitcode")
	if r.code != 0 {
		t.Errorf("plan exit %d (want 0: nothing to change):\n%s", r.code, r)
	}
	for _, s := range []string{
		"No changes.",
		"Managed once, changed outside mqctl: not deleted.",
		`exchange "events" in vhost "` + h.vhost + `": it is no longer the exchange mqctl wrote`,
		`queue "temp" in vhost "` + h.vhost + `": it is no longer the queue mqctl wrote`,
		`policy "cap" in vhost "` + h.vhost + `": it is no longer the policy mqctl wrote`,
		"name it in the file again", "--delete-changed", "apply forgets them",
	} {
		if !strings.Contains(r.stdout, s) {
			t.Errorf("the plan does not say %q:\n%s", s, r.stdout)
		}
	}
	if strings.Contains(r.stdout, "- exchange") || strings.Contains(r.stdout, "- queue") || strings.Contains(r.stdout, "- policy") {
		t.Errorf("the plan deletes what was made by hand:\n%s", r.stdout)
	}
	p := h.planJSON(keepOnly)
	var got []string
	for _, o := range p.ChangedOutside {
		got = append(got, string(o.Kind)+" "+o.Name)
	}
	if !slices.Equal(got, outside) || !p.Empty() {
		t.Errorf("JSON plan: changes %v, changed_outside %v, want none and %v", h.rows(p), got, outside)
	}

	// Apply leaves them, and forgets them: the next plan counts them as
	// unmanaged.
	r = h.run("apply", "-f", f, "--auto-approve")
	if r.code != 0 {
		t.Fatalf("apply:\n%s", r)
	}
	v, rec := h.state()
	if v.Exchanges["events"] == nil || v.Exchanges["events"].Type != "fanout" || v.Queues["temp"] == nil || v.Policies["cap"] == nil {
		t.Fatalf("apply deleted what was made by hand: exchanges %v, queues %v, policies %v", v.ExchangeNames(), v.QueueNames(), v.PolicyNames())
	}
	for _, ref := range []plan.ObjectRef{{Kind: plan.KindExchange, Vhost: h.vhost, Name: "events"}, {Kind: plan.KindQueue, Vhost: h.vhost, Name: "temp"}, {Kind: plan.KindPolicy, Vhost: h.vhost, Name: "cap"}} {
		if recorded(rec, ref) {
			t.Errorf("mqctl's record still lists %v after the apply", ref)
		}
	}
	if p := h.planJSON(keepOnly); len(p.ChangedOutside) != 0 || len(p.Unmanaged) != 3 {
		t.Errorf("the plan after the apply: changed outside %v, unmanaged %v (want the 3 objects)", p.ChangedOutside, p.Unmanaged)
	}

	// Made again by mqctl, replaced by hand again, and deleted as asked.
	h.mustApply(reusedFile, "--allow-replace")
	testbroker.Declare(t, h.c, h.vhost, &topology.Vhost{Queues: map[string]*topology.Queue{"other": {Name: "other", Type: topology.QueueClassic, Durable: true}}})
	if err := h.c.DeletePolicy(ctx, h.vhost, "cap"); err != nil {
		t.Fatal(err)
	}
	if err := h.c.PutPolicy(ctx, h.vhost, &topology.Policy{Name: "cap", Pattern: "^other$", ApplyTo: "queues", Definition: topology.Args{"max-length": int64(7)}}); err != nil {
		t.Fatal(err)
	}
	r = h.run("plan", "-f", f, "--delete-changed")
	if r.code != 0 || !strings.Contains(r.stdout, "- policy \"cap\"") || !strings.Contains(r.stdout, "deleted as asked (--delete-changed)") {
		t.Errorf("plan --delete-changed does not delete the policy, as asked:\n%s", r)
	}
	r = h.run("apply", "-f", f, "--auto-approve", "--delete-changed")
	if r.code != 0 {
		t.Fatalf("apply --delete-changed:\n%s", r)
	}
	if v, _ := h.state(); v.Policies["cap"] != nil || v.Queues["temp"] != nil || v.Exchanges["events"] != nil || v.Queues["other"] == nil {
		t.Errorf("after apply --delete-changed: queues %v, exchanges %v, policies %v", v.QueueNames(), v.ExchangeNames(), v.PolicyNames())
	}
}
