package cli_test

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	rabbithole "github.com/michaelklishin/rabbit-hole/v2"
	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/mqctl/mqctl/internal/brokerstate"
	"github.com/mqctl/mqctl/internal/testbroker"
	"github.com/mqctl/mqctl/pkg/ownership"
	"github.com/mqctl/mqctl/pkg/plan"
	"github.com/mqctl/mqctl/pkg/topology"
)

// applyCase is one plan/apply scenario against the real broker.
type applyCase struct {
	name string
	// newVhost: the vhost does not exist before; mqctl creates it.
	newVhost bool
	// before is applied with mqctl first (its objects become managed).
	before string
	// unmanaged objects are declared straight through the management API
	// after before: mqctl did not make them.
	unmanaged string
	// setup runs after before and unmanaged (publish, consume, …).
	setup func(t *testing.T, h *harness)
	// file is the topology planned and applied.
	file string
	// plan lists the expected changes as "<+|~|-/+|-> <kind> <name>".
	plan []string
	// planText are substrings of the human plan.
	planText []string
	// unmanagedCount and adopt are the expected sizes of the plan's lists.
	unmanagedCount, adopt int
	// refused are applies that must fail and change nothing.
	refused []refusal
	// flags are those of the apply that must succeed.
	flags []string
	// check runs last.
	check func(t *testing.T, h *harness)
}

type refusal struct {
	flags []string
	want  []string // substrings of the output
	// wantAny: for each entry, one of its substrings is in the output
	// (where the broker may answer either way).
	wantAny [][]string
	check   func(t *testing.T, h *harness)
}

// everything uses every field of the file format.
const everything = `version: 1
vhosts:
  ${VHOST}:
    description: every field of the file
    exchanges:
      orders: { type: topic, alternate_exchange: orders.ae }
      orders.ae: { type: fanout }
      orders.internal: { type: topic, internal: true }
      orders.dlx: { type: direct }
      match: { type: headers }
      scratch: { type: fanout, durable: false, auto_delete: true }
      events: { type: direct, durable: true, auto_delete: false, internal: false }
    queues:
      orders.shipping:
        type: quorum
        bindings:
          - exchange: orders
            routing_keys: [order.created, order.paid]
        dead_letter:
          exchange: orders.dlx
          queue: orders.shipping.dlq
          strategy: at-least-once
        delivery_limit: 5
        single_active_consumer: true
        limits: { max_length: 1000, max_length_bytes: 10MiB, overflow: reject-publish }
        retry:
          delays: [10s, 1m]
      orders.billing:
        dead_letter:
          exchange: orders.dlx
          routing_key: billing.dead
          queue: { name: orders.billing.dead, type: quorum }
        bindings:
          - { exchange: orders, routing_key: "order.*" }
      orders.audit:
        type: stream
        arguments: { x-max-age: 7D, x-stream-max-segment-size-bytes: 1048576 }
        bindings:
          - { exchange: orders.internal, routing_key: "#" }
      orders.priority:
        max_priority: 10
        limits: { max_length: 500, max_length_bytes: 1MiB, overflow: drop-head, message_ttl: 1h, expires: 7d }
        arguments: { x-queue-mode: lazy }
        bindings:
          - exchange: match
            arguments: { x-match: all, region: eu, tier: 2 }
          - exchange: match
            arguments: { x-match: any, vip: true }
      orders.unrouted:
        alert: { max_depth: 100 }
        bindings: [{ exchange: orders.ae }]
      transient:
        durable: false
        auto_delete: true
        bindings: [{ exchange: scratch }]
    bindings:
      - { source: orders, destination: orders.internal, destination_type: exchange, routing_key: "order.#" }
      - { source: events, destination: match, destination_type: exchange, routing_key: "", arguments: { x-note: e2e } }
    policies:
      cap:
        pattern: "^orders\\.unrouted$"
        apply_to: queues
        priority: 1
        definition: { max-length: 5000, message-ttl: 60000 }
      ae:
        pattern: "^scratch$"
        apply_to: exchanges
        definition: { alternate-exchange: orders.ae }
    operator_policies:
      ceiling:
        pattern: ".*"
        apply_to: queues
        definition: { max-length-bytes: 1073741824 }
`

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

func TestApplyCases(t *testing.T) {
	cases := []applyCase{
		{
			name: "create every field",
			file: everything,
			plan: []string{
				"~ vhost ${VHOST}",
				"+ exchange events", "+ exchange match", "+ exchange orders", "+ exchange orders.ae", "+ exchange orders.dlx",
				"+ exchange orders.internal", "+ exchange scratch",
				"+ queue orders.audit", "+ queue orders.billing", "+ queue orders.billing.dead", "+ queue orders.priority",
				"+ queue orders.shipping", "+ queue orders.shipping.dlq", "+ queue orders.shipping.retry.10s",
				"+ queue orders.shipping.retry.1m", "+ queue orders.unrouted", "+ queue transient",
				`+ binding events -> exchange match [] {"x-note":"e2e"}`,
				`+ binding match -> queue orders.priority [] {"region":"eu","tier":2,"x-match":"all"}`,
				`+ binding match -> queue orders.priority [] {"vip":true,"x-match":"any"}`,
				"+ binding orders -> exchange orders.internal [order.#]",
				"+ binding orders -> queue orders.billing [order.*]",
				"+ binding orders -> queue orders.shipping [order.created]",
				"+ binding orders -> queue orders.shipping [order.paid]",
				"+ binding orders.ae -> queue orders.unrouted []",
				"+ binding orders.dlx -> queue orders.billing.dead [billing.dead]",
				"+ binding orders.dlx -> queue orders.shipping.dlq [orders.shipping]",
				"+ binding orders.internal -> queue orders.audit [#]",
				"+ binding scratch -> queue transient []",
				"+ policy ae", "+ policy cap", "+ operator_policy ceiling",
			},
			planText: []string{`~ description: "mqctl test `, `→ "every field of the file"`, "Plan: 32 to create, 1 to update, 0 to replace, 0 to delete."},
			check: func(t *testing.T, h *harness) {
				// The broker's own view of typed settings: integers stay integers.
				defs := definitionsOf(t, h.b, h.vhost)
				args := queueArgsIn(defs, "orders.priority")
				for k, want := range map[string]string{"x-max-priority": "10", "x-max-length": "500", "x-max-length-bytes": "1048576",
					"x-overflow": "drop-head", "x-message-ttl": "3600000", "x-expires": "604800000", "x-queue-mode": "lazy"} {
					if got := jsonString(args[k]); got != want {
						t.Errorf("orders.priority %s = %s, want %s", k, got, want)
					}
				}
				ship := queueArgsIn(defs, "orders.shipping")
				for k, want := range map[string]string{"x-queue-type": "quorum", "x-delivery-limit": "5", "x-dead-letter-strategy": "at-least-once",
					"x-dead-letter-exchange": "orders.dlx", "x-dead-letter-routing-key": "orders.shipping", "x-single-active-consumer": "true"} {
					if got := jsonString(ship[k]); got != want {
						t.Errorf("orders.shipping %s = %s, want %s", k, got, want)
					}
				}
			},
		},
		{
			name:     "create the vhost itself",
			newVhost: true,
			file: `version: 1
vhosts:
  ${VHOST}:
    description: made by mqctl
    default_queue_type: quorum
    queues:
      work: {}
      old.style: { type: classic }
`,
			plan:     []string{"+ vhost ${VHOST}", "+ queue old.style", "+ queue work"},
			planText: []string{`description: "made by mqctl"`},
			check: func(t *testing.T, h *harness) {
				v, rec := h.state()
				if v.Description != "made by mqctl" {
					t.Errorf("description = %q", v.Description)
				}
				if _, ok := rec.Managed[plan.ObjectRef{Kind: plan.KindVhost, Vhost: h.vhost, Name: h.vhost}]; !ok {
					t.Errorf("the vhost mqctl created is not in its record: %v", rec.Managed)
				}
				if v.Queues["work"].Type != topology.QueueQuorum {
					t.Errorf("work is %s, want quorum from default_queue_type", v.Queues["work"].Type)
				}
			},
		},
		{
			name: "update policies and the vhost description in place",
			before: `version: 1
vhosts:
  ${VHOST}:
    description: first
    queues: { q: {} }
    policies:
      cap: { pattern: "^q$", apply_to: queues, priority: 1, definition: { max-length: 5000 } }
    operator_policies:
      ceiling: { pattern: ".*", apply_to: queues, definition: { max-length-bytes: 1000000 } }
`,
			setup: func(t *testing.T, h *harness) {
				ch := h.b.Channel(t, h.vhost)
				publish(t, ch, "q", 3)
				// Tags are not in the file: a description update keeps them.
				resp, err := h.b.RH.PutVhost(h.vhost, rabbithole.VhostSettings{Description: "first", Tags: rabbithole.VhostTags{"team-a", "prod"}})
				if resp != nil {
					resp.Body.Close()
				}
				if err != nil {
					t.Fatal(err)
				}
			},
			file: `version: 1
vhosts:
  ${VHOST}:
    description: second
    queues: { q: {} }
    policies:
      cap: { pattern: "^q", apply_to: all, priority: 2, definition: { max-length: 6000, overflow: reject-publish } }
    operator_policies:
      ceiling: { pattern: ".*", apply_to: queues, definition: { max-length-bytes: 2000000 } }
`,
			plan:     []string{"~ vhost ${VHOST}", "~ policy cap", "~ operator_policy ceiling"},
			planText: []string{`~ definition.max-length: 5000 → 6000`, `~ definition.overflow: (none) → "reject-publish"`, `~ priority: 1 → 2`, `~ apply_to: "queues" → "all"`},
			check: func(t *testing.T, h *harness) {
				if n := depth(t, h.b, h.vhost, "q"); n != 3 {
					t.Errorf("q holds %d messages after a policy update, want the 3 it had", n)
				}
				info, err := h.b.RH.GetVhost(h.vhost)
				if err != nil {
					t.Fatal(err)
				}
				if tags := strings.Join(sortedStrings(info.Tags), ","); tags != "prod,team-a" {
					t.Errorf("vhost tags after the description update = %q, want prod,team-a", tags)
				}
			},
		},
		{
			name:   "queues holding messages are not deleted or replaced without --allow-data-loss",
			before: dataBefore,
			setup: func(t *testing.T, h *harness) {
				// Published right before the plan: the management API's
				// statistics may not show them yet.
				ch := h.b.Channel(t, h.vhost)
				publish(t, ch, "q", 1)
				publish(t, ch, "qq", 2)
				publish(t, ch, "qs", 4)
			},
			file: dataAfter,
			plan: []string{"-/+ queue q", "- queue qq", "- queue qs", "- binding ex -> queue q [old]"},
			refused: []refusal{
				{flags: []string{"--allow-replace"},
					want: []string{`queue "q"`, "holds 1 message", `queue "qq"`, "holds 2 messages", `queue "qs"`, "--allow-data-loss", "nothing was changed"},
					// A stream's exact read finds at least 1 message (it
					// cannot count them); once the statistics (emitted every
					// 5 s) have counted the stream's 4, those win: a CI run
					// on 3.10.8 said "holds 4 messages" 0.37 s into the case.
					wantAny: [][]string{{"holds at least 1 message", "holds 4 messages"}},
					check: func(t *testing.T, h *harness) {
						if n := depth(t, h.b, h.vhost, "q"); n != 1 {
							t.Errorf("q holds %d messages after the refused apply, want 1", n)
						}
						if n := depth(t, h.b, h.vhost, "qq"); n != 2 {
							t.Errorf("qq holds %d messages after the refused apply, want 2", n)
						}
					}},
			},
			flags: []string{"--allow-replace", "--allow-data-loss"},
			check: func(t *testing.T, h *harness) {
				if n := depth(t, h.b, h.vhost, "q"); n != 0 {
					t.Errorf("q holds %d messages after the replace, want 0", n)
				}
			},
		},
		{
			name:   "queues with consumers are not deleted or replaced without --allow-data-loss",
			before: dataBefore,
			setup: func(t *testing.T, h *harness) {
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
				// statistics (a passive declare reports none), which show
				// a new consumer after collect_statistics_interval.
				waitConsumers(t, h, "qs", 1)
			},
			file: dataAfter,
			plan: []string{"-/+ queue q", "- queue qq", "- queue qs", "- binding ex -> queue q [old]"},
			refused: []refusal{{flags: []string{"--allow-replace"},
				want: []string{`queue "q" in vhost "${VHOST}" would be replaced but holds 0 messages and has 1 consumer`,
					`queue "qq" in vhost "${VHOST}" would be deleted but holds 0 messages and has 1 consumer`,
					`queue "qs" in vhost "${VHOST}" would be deleted but holds 0 messages and has 1 consumer`,
					"--allow-data-loss", "nothing was changed"}}},
			flags: []string{"--allow-replace", "--allow-data-loss"},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			runApplyCase(t, tc)
		})
	}
}

func runApplyCase(t *testing.T, tc applyCase) {
	var h *harness
	if tc.newVhost {
		h = newHarnessNoVhost(t)
	} else {
		h = newHarness(t)
	}
	if tc.before != "" {
		h.mustApply(tc.before)
	}
	var unmanaged *topology.Vhost
	if tc.unmanaged != "" {
		unmanaged = h.load(tc.unmanaged).Vhosts[h.vhost]
		testbroker.Declare(t, h.c, h.vhost, unmanaged)
	}
	if tc.setup != nil {
		tc.setup(t, h)
	}

	p := h.planJSON(tc.file)
	if diff := cmp.Diff(sortedStrings(tc.plan), sortedStrings(h.rows(p))); diff != "" {
		t.Errorf("plan (-want +got):\n%s", diff)
	}
	if len(p.Unmanaged) != tc.unmanagedCount {
		t.Errorf("plan lists %d unmanaged objects, want %d: %v", len(p.Unmanaged), tc.unmanagedCount, p.Unmanaged)
	}
	if len(p.Adopt) != tc.adopt {
		t.Errorf("plan adopts %d objects, want %d: %v", len(p.Adopt), tc.adopt, p.Adopt)
	}
	if len(tc.planText) > 0 {
		r := h.run("plan", "-f", h.write("text.yaml", tc.file))
		for _, s := range tc.planText {
			if !strings.Contains(r.stdout, s) {
				t.Errorf("the plan does not say %q:\n%s", s, r)
			}
		}
	}

	f := h.write("file.yaml", tc.file)
	for _, rf := range tc.refused {
		v0, rec0 := h.state()
		r := h.run(append([]string{"apply", "-f", f, "--auto-approve"}, rf.flags...)...)
		if r.code != 1 {
			t.Fatalf("apply %v was not refused:\n%s", rf.flags, r)
		}
		for _, s := range rf.want {
			if s = strings.ReplaceAll(s, "${VHOST}", h.vhost); !strings.Contains(r.stdout+r.stderr, s) {
				t.Errorf("the refusal of apply %v does not say %q:\n%s", rf.flags, s, r)
			}
		}
		for _, alts := range rf.wantAny {
			if !slices.ContainsFunc(alts, func(s string) bool { return strings.Contains(r.stdout+r.stderr, s) }) {
				t.Errorf("the refusal of apply %v says none of %q:\n%s", rf.flags, alts, r)
			}
		}
		v1, rec1 := h.state()
		if diff := cmp.Diff(brokerstate.ObjectsOf(v0), brokerstate.ObjectsOf(v1), brokerstate.CmpObjects); diff != "" {
			t.Errorf("the refused apply %v changed the broker (-before +after):\n%s", rf.flags, diff)
		}
		if diff := cmp.Diff(rec0.Managed, rec1.Managed); diff != "" {
			t.Errorf("the refused apply %v changed the ownership record (-before +after):\n%s", rf.flags, diff)
		}
		if rf.check != nil {
			rf.check(t, h)
		}
	}

	r := h.run(append([]string{"apply", "-f", f, "--auto-approve"}, tc.flags...)...)
	if r.code != 0 {
		t.Fatalf("apply failed:\n%s", r)
	}
	if !strings.Contains(r.stdout, "Apply complete") && !strings.Contains(r.stdout, "Recorded") {
		t.Errorf("apply does not say it completed:\n%s", r)
	}
	assertBrokerHolds(t, h, tc.file, unmanaged)
	if _, rec := h.state(); !tc.newVhost && rec != nil && recorded(rec, plan.ObjectRef{Kind: plan.KindVhost, Vhost: h.vhost, Name: h.vhost}) {
		t.Errorf("mqctl recorded the vhost that existed before it as managed (it would delete it once dropped from the file)")
	}
	h.assertNoChanges(tc.file)
	if tc.check != nil {
		tc.check(t, h)
	}
}

// recorded reports whether rec lists ref.
func recorded(rec *ownership.Record, ref plan.ObjectRef) bool {
	_, ok := rec.Managed[ref]
	return ok
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

func queueArgsIn(defs map[string]any, queue string) map[string]any {
	list, _ := defs["queues"].([]any)
	for _, e := range list {
		if q, ok := e.(map[string]any); ok && q["name"] == queue {
			a, _ := q["arguments"].(map[string]any)
			return a
		}
	}
	return nil
}

// jsonString renders a decoded JSON value as its JSON text (numbers as
// written by the broker, strings unquoted).
func jsonString(v any) string {
	switch x := v.(type) {
	case nil:
		return "(absent)"
	case string:
		return x
	default:
		b, err := json.Marshal(x)
		if err != nil {
			return fmt.Sprint(x)
		}
		return string(b)
	}
}
