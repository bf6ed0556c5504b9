package engine_test

import (
	"context"
	"reflect"
	"testing"

	"github.com/mqctl/mqctl/pkg/engine"
)

// leftAloneFile declares a vhost default queue type (which a 3.10 broker
// does not store: the engine diffs a copy without it), the sugar that
// expands (a dead-letter queue pair, delay tiers), policies of both kinds,
// the vhost's limits and a binding.
const leftAloneFile = `version: 1
vhosts:
  ${VHOST}:
    default_queue_type: quorum
    exchanges:
      orders: { type: topic }
      orders.dlx: { type: topic }
    queues:
      work:
        bindings: [{ exchange: orders, routing_keys: [a, b] }]
        dead_letter: { exchange: orders.dlx, queue: work.dlq }
        retry: { delays: [10s] }
      plain: { type: classic }
    policies:
      cap: { pattern: "^plain$", apply_to: queues, definition: { max-length: 100 } }
    operator_policies:
      ttl: { pattern: "^plain$", apply_to: queues, definition: { message-ttl: 60000 } }
    limits: { max-queues: 100 }
`

// TestPlanAndApplyLeaveDesired: Plan and Apply never change the desired
// topology a caller hands them (issue 21, step 3: the plan holds every
// decision, and the caller's state is no scratch pad). The file is loaded
// twice; the engine gets one, which must still equal the other after a
// plan, an apply and a second plan. 4.3.6, 4.0.5 and 3.10.8 answer alike
// (3.10.8 stores no default queue type: the engine diffs a copy without
// it).
func TestPlanAndApplyLeaveDesired(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	desired, untouched := f.desired(leftAloneFile), f.desired(leftAloneFile)
	if !reflect.DeepEqual(desired, untouched) {
		t.Fatal("the file loaded twice differs: the test cannot tell a change")
	}
	if p := f.plan(desired); p.Empty() {
		t.Fatal("the first plan is empty: the test applies nothing")
	}
	if !reflect.DeepEqual(desired, untouched) {
		t.Errorf("RabbitMQ %s: Plan changed the desired topology", f.b.Version())
	}
	if _, err := f.eng.Apply(context.Background(), engine.ApplyInput{Desired: desired}, engine.ApplyOptions{}); err != nil {
		t.Fatalf("apply: %v", err)
	}
	if !reflect.DeepEqual(desired, untouched) {
		t.Errorf("RabbitMQ %s: Apply changed the desired topology", f.b.Version())
	}
	if p := f.plan(desired); !p.Empty() {
		t.Errorf("RabbitMQ %s: the plan after apply: %v", f.b.Version(), changes(p))
	}
	if !reflect.DeepEqual(desired, untouched) {
		t.Errorf("RabbitMQ %s: the second Plan changed the desired topology", f.b.Version())
	}
}
