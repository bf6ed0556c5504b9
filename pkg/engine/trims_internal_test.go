package engine

import (
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/mqctl/mqctl/pkg/kind"
	"github.com/mqctl/mqctl/pkg/plan"
	"github.com/mqctl/mqctl/pkg/topology"
)

// TestLimitTrims: the queues whose messages over a length limit RabbitMQ
// drops at once when a plan's policy changes are applied are those given a
// limit they did not have, or a lower one, with overflow drop-head; named
// with the policies that give the limit and the dead-letter exchange that
// takes what is over it.
func TestLimitTrims(t *testing.T) {
	policy, put := queuePolicy, putPolicy
	cur := func() *topology.Topology {
		top := topology.New()
		v := topology.NewVhost("v")
		for _, q := range []*topology.Queue{
			{Name: "plain", Durable: true},
			{Name: "quorum", Type: topology.QueueQuorum, Durable: true},
			{Name: "rejects", Durable: true, Arguments: topology.Args{"x-overflow": "reject-publish"}},
			{Name: "dead-letters", Durable: true, Arguments: topology.Args{"x-dead-letter-exchange": "dlx"}},
			{Name: "dlq", Durable: true},
			{Name: "unrouted", Durable: true, Arguments: topology.Args{"x-dead-letter-exchange": "void", "x-dead-letter-routing-key": "k"}},
			{Name: "stream", Type: topology.QueueStream, Durable: true},
			{Name: "capped", Durable: true, Arguments: topology.Args{"x-max-length": int64(5)}},
			{Name: "gone", Durable: true},
			{Name: "qrejects", Type: topology.QueueQuorum, Durable: true, Arguments: topology.Args{"x-max-length": int64(10), "x-overflow": "reject-publish"}},
			{Name: "held", Durable: true},
			{Name: "renamed", Durable: true},
		} {
			v.Queues[q.Name] = q
		}
		v.Exchanges["dlx"] = &topology.Exchange{Name: "dlx", Type: "fanout", Durable: true}
		v.Exchanges["void"] = &topology.Exchange{Name: "void", Type: "direct", Durable: true}
		v.Bindings = append(v.Bindings, &topology.Binding{Source: "dlx", DestinationType: topology.DestQueue, Destination: "dlq"})
		v.Policies["old"] = policy("old", "^plain$", topology.Args{"max-length": int64(100)})
		v.Policies["rej"] = policy("rej", "^held$", topology.Args{"overflow": "reject-publish"})
		// keep shadows floor's lower limit on renamed.
		v.Policies["keep"] = prioritised(policy("keep", "^renamed$", topology.Args{"max-length": int64(100)}), 5)
		v.Policies["floor"] = policy("floor", "^renamed$", topology.Args{"max-length": int64(2)})
		// top outranks mid's lower limit on lowered.
		v.Queues["lowered"] = &topology.Queue{Name: "lowered", Durable: true}
		v.Policies["top"] = prioritised(policy("top", "^lowered$", topology.Args{"max-length": int64(100)}), 5)
		v.Policies["mid"] = prioritised(policy("mid", "^lowered$", topology.Args{"max-length": int64(2)}), 3)
		top.Vhosts["v"] = v
		return top
	}
	// dlx: "" for a queue without a dead-letter exchange, "void" for
	// one whose dead-letter exchange routes its dead letters nowhere.
	row := func(q, key string, limit int64, by, dlx string) trim {
		unit := "messages"
		if key == "max-length-bytes" {
			unit = "bytes"
		}
		fate := dlFate{dropped: true, why: "no dead-letter exchange"}
		switch dlx {
		case "void":
			fate = dlFate{dropped: true, configured: true, exchange: "void", why: `dead-letter exchange "void" routes them, with key "k", to no queue`}
		case "dlx":
			fate = dlFate{configured: true, exchange: "dlx"}
		}
		return trim{vhost: "v", queue: q, key: key, unit: unit, limit: limit, by: by, fate: fate}
	}
	for _, tc := range []struct {
		name    string
		changes []plan.Change
		want    []trim
	}{
		{
			name:    "a new limit on every queue",
			changes: []plan.Change{put(kind.Policy, policy("cap", "^(quorum|rejects|dead-letters|unrouted|stream|capped|gone)$", topology.Args{"max-length": int64(10), "max-length-bytes": int64(1000)}))},
			want: []trim{
				// capped keeps its own lower max-length (the smaller applies).
				row("capped", "max-length-bytes", 1000, `policy "cap"`, ""),
				row("dead-letters", "max-length", 10, `policy "cap"`, "dlx"),
				row("dead-letters", "max-length-bytes", 1000, `policy "cap"`, "dlx"),
				row("gone", "max-length", 10, `policy "cap"`, ""),
				row("gone", "max-length-bytes", 1000, `policy "cap"`, ""),
				row("quorum", "max-length", 10, `policy "cap"`, ""),
				row("quorum", "max-length-bytes", 1000, `policy "cap"`, ""),
				// Its dead-letter exchange routes what is over the limit
				// to no queue: it is lost all the same.
				row("unrouted", "max-length", 10, `policy "cap"`, "void"),
				row("unrouted", "max-length-bytes", 1000, `policy "cap"`, "void"),
			},
		},
		{
			name:    "a lower limit",
			changes: []plan.Change{{Action: plan.Update, Kind: kind.Policy, Vhost: "v", Name: "old", After: plan.Of(policy("old", "^plain$", topology.Args{"max-length": int64(50)}))}},
			want:    []trim{row("plain", "max-length", 50, `policy "old"`, "")},
		},
		{
			// A classic queue applies the limit while it still drops its
			// head, then the overflow; a quorum queue takes both at once,
			// and a classic queue whose own argument rejects keeps it.
			name:    "a limit that comes with reject-publish",
			changes: []plan.Change{put(kind.Policy, policy("cap", "^(quorum|rejects|dead-letters|gone)$", topology.Args{"max-length": int64(10), "overflow": "reject-publish"}))},
			want: []trim{
				late(row("dead-letters", "max-length", 10, `policy "cap"`, "dlx"), "reject-publish"),
				late(row("gone", "max-length", 10, `policy "cap"`, ""), "reject-publish"),
			},
		},
		{
			// A quorum queue does not know reject-publish-dlx and falls
			// back to drop-head; a classic queue applies the limit first.
			name:    "a limit with reject-publish-dlx",
			changes: []plan.Change{put(kind.Policy, policy("cap", "^(quorum|gone)$", topology.Args{"max-length": int64(10), "overflow": "reject-publish-dlx"}))},
			want: []trim{
				late(row("gone", "max-length", 10, `policy "cap"`, ""), "reject-publish-dlx"),
				row("quorum", "max-length", 10, `policy "cap"`, ""),
			},
		},
		{
			name:    "a lower limit that comes with reject-publish-dlx",
			changes: []plan.Change{{Action: plan.Update, Kind: kind.Policy, Vhost: "v", Name: "old", After: plan.Of(policy("old", "^plain$", topology.Args{"max-length": int64(50), "overflow": "reject-publish-dlx"}))}},
			want:    []trim{late(row("plain", "max-length", 50, `policy "old"`, ""), "reject-publish-dlx")},
		},
		{
			// The queue rejects publishes already when the limit comes.
			name:    "a limit added to a policy that rejects",
			changes: []plan.Change{{Action: plan.Update, Kind: kind.Policy, Vhost: "v", Name: "rej", After: plan.Of(policy("rej", "^held$", topology.Args{"max-length": int64(5), "overflow": "reject-publish"}))}},
		},
		{
			name:    "a higher limit",
			changes: []plan.Change{{Action: plan.Update, Kind: kind.Policy, Vhost: "v", Name: "old", After: plan.Of(policy("old", "^plain$", topology.Args{"max-length": int64(500)}))}},
		},
		{
			// A quorum queue takes its overflow from its policy; a classic
			// queue keeps its own.
			name:    "drop-head for a queue that refused publishes over the same limit",
			changes: []plan.Change{put(kind.Policy, policy("heads", "^(q?rejects)$", topology.Args{"overflow": "drop-head"}))},
			want:    []trim{row("qrejects", "max-length", 10, `policy "heads"`, "")},
		},
		{
			name:    "a policy deleted, another's lower limit in force",
			changes: []plan.Change{{Action: plan.Delete, Kind: kind.Policy, Vhost: "v", Name: "old", Before: plan.Of(policy("old", "^plain$", topology.Args{"max-length": int64(100)}))}, put(kind.Policy, policy("low", "^pla", topology.Args{"max-length": int64(30)}))},
			want:    []trim{row("plain", "max-length", 30, `policy "low" and policy "old"`, "")},
		},
		{
			// apply writes keep2 before it deletes keep (make before
			// break): floor's limit is never in force on the queue. Before
			// the late deletes (kind.LatePhase) it was, meanwhile.
			name: "a policy renamed over a lower-priority limit",
			changes: []plan.Change{
				{Action: plan.Delete, Kind: kind.Policy, Vhost: "v", Name: "keep", Before: plan.Of(prioritised(policy("keep", "^renamed$", topology.Args{"max-length": int64(100)}), 5))},
				put(kind.Policy, prioritised(policy("keep2", "^renamed$", topology.Args{"max-length": int64(100)}), 5)),
			},
		},
		{
			// top's priority drops below mid's, and mid goes: apply
			// writes top before it deletes mid, so mid's limit is in force
			// on the queue meanwhile.
			name: "a priority lowered beside a policy dropped",
			changes: []plan.Change{
				{Action: plan.Update, Kind: kind.Policy, Vhost: "v", Name: "top",
					Before: plan.Of(prioritised(policy("top", "^lowered$", topology.Args{"max-length": int64(100)}), 5)),
					After:  plan.Of(prioritised(policy("top", "^lowered$", topology.Args{"max-length": int64(100)}), 1))},
				{Action: plan.Delete, Kind: kind.Policy, Vhost: "v", Name: "mid", Before: plan.Of(prioritised(policy("mid", "^lowered$", topology.Args{"max-length": int64(2)}), 3))},
			},
			want: []trim{between(row("lowered", "max-length", 2, `policy "mid" and policy "top"`, ""))},
		},
		{
			// floor's limit is in force while the apply runs, and after.
			name: "a policy deleted over a lower-priority limit",
			changes: []plan.Change{
				{Action: plan.Delete, Kind: kind.Policy, Vhost: "v", Name: "keep", Before: plan.Of(prioritised(policy("keep", "^renamed$", topology.Args{"max-length": int64(100)}), 5))},
			},
			want: []trim{row("renamed", "max-length", 2, `policy "keep"`, "")},
		},
		{
			name:    "an operator policy below the policy",
			changes: []plan.Change{put(kind.OperatorPolicy, policy("ops", "^plain$", topology.Args{"max-length": int64(20)}))},
			want:    []trim{row("plain", "max-length", 20, `operator policy "ops"`, "")},
		},
		{
			name: "a queue the plan deletes",
			changes: []plan.Change{
				put(kind.Policy, policy("cap", "^gone$", topology.Args{"max-length": int64(10)})),
				{Action: plan.Delete, Kind: kind.Queue, Vhost: "v", Name: "gone", Before: plan.Of(&topology.Queue{Name: "gone", Durable: true})},
			},
		},
		{
			name:    "no policy change",
			changes: []plan.Change{{Action: plan.Create, Kind: kind.Queue, Vhost: "v", Name: "new", After: plan.Of(&topology.Queue{Name: "new", Durable: true})}},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := limitTrims(&plan.Plan{Changes: tc.changes}, cur())
			if d := cmp.Diff(tc.want, got, cmp.AllowUnexported(trim{}, dlFate{})); d != "" {
				t.Errorf("trims (-want +got):\n%s", d)
			}
		})
	}
}

// late is t with the overflow that comes into force after its limit.
func late(t trim, overflow string) trim {
	t.late = overflow
	return t
}

// between is t in force while the apply runs.
func between(t trim) trim {
	t.between = true
	return t
}

// prioritised is p with priority n.
func prioritised(p *topology.Policy, n int) *topology.Policy {
	p.Priority = n
	return p
}

// queuePolicy is a policy of queues.
func queuePolicy(name, pattern string, def topology.Args) *topology.Policy {
	return &topology.Policy{Name: name, Pattern: pattern, ApplyTo: "queues", Definition: def}
}

// putPolicy is a plan's change that creates policy p (of kind k) in vhost v.
func putPolicy(k plan.Kind, p *topology.Policy) plan.Change {
	return plan.Change{Action: plan.Create, Kind: k, Vhost: "v", Name: p.Name, After: plan.Of(p)}
}

// TestTrimText: what a note and a refusal say of a trim.
func TestTrimText(t *testing.T) {
	for _, tc := range []struct {
		t    trim
		want string
	}{
		{trim{vhost: "v", queue: "jobs", key: "max-length", unit: "messages", limit: 10, by: `policy "cap"`, held: 50, fate: dlFate{dropped: true, why: "no dead-letter exchange"}},
			`policy "cap": queue "jobs" in vhost "v" gets a length limit of 10 messages (max-length, overflow drop-head), and it holds 50: RabbitMQ drops the oldest 40 at once (no dead-letter exchange)`},
		{trim{vhost: "v", queue: "jobs", key: "max-length-bytes", unit: "bytes", limit: 1000, by: `operator policy "ops"`, fate: dlFate{configured: true, exchange: "dlx"}, held: 4096},
			`operator policy "ops": queue "jobs" in vhost "v" gets a length limit of 1000 bytes (max-length-bytes, overflow drop-head), and it holds 4096: RabbitMQ dead-letters its oldest messages, 3096 bytes or more, at once to exchange "dlx"`},
		{trim{vhost: "v", queue: "jobs", key: "max-length", unit: "messages", limit: 5, by: `policy "cap"`, held: 50,
			fate: dlFate{dropped: true, configured: true, exchange: "dlx", why: `dead-letter exchange "dlx" routes them, with key "nowhere", to no queue`}},
			`policy "cap": queue "jobs" in vhost "v" gets a length limit of 5 messages (max-length, overflow drop-head), and it holds 50: RabbitMQ dead-letters the oldest 45 at once, and they are lost: dead-letter exchange "dlx" routes them, with key "nowhere", to no queue`},
		{trim{vhost: "v", queue: "jobs", key: "max-length", unit: "messages", limit: 2, by: `policy "mid" and policy "top"`, held: 5, between: true, fate: dlFate{dropped: true, why: "no dead-letter exchange"}},
			`policy "mid" and policy "top": queue "jobs" in vhost "v" gets a length limit of 2 messages (max-length, overflow drop-head) while the apply runs (apply writes policies before it deletes those the plan drops, and until then a policy the plan drops is in force on it), and it holds 5: RabbitMQ drops the oldest 3 at once (no dead-letter exchange); to avoid it, drop that policy in an apply of its own first, then make the rest of the change`},
	} {
		if got := tc.t.String(); got != tc.want {
			t.Errorf("got  %s\nwant %s", got, tc.want)
		}
	}
}

// TestPlanEffectsTeardown: a plan that deletes every queue of a vhost
// visits none, and its changes cost no allocation each: before, each of
// the five callers listed the policy kinds anew for every change and the
// deleted queues in a map, 25,000 of them at 50,002 objects.
func TestPlanEffectsTeardown(t *testing.T) {
	cur := topology.New()
	v := topology.NewVhost("v")
	p := &plan.Plan{}
	for i := range 1000 {
		q := &topology.Queue{Name: fmt.Sprintf("q%04d", i), Durable: true}
		v.Queues[q.Name] = q
		p.Changes = append(p.Changes, plan.Change{Action: plan.Delete, Kind: kind.Queue, Vhost: "v", Name: q.Name, Before: plan.Of(q)})
	}
	cur.Vhosts["v"] = v
	visited := 0
	allocs := testing.AllocsPerRun(5, func() {
		planEffects(p, cur, effects{}, func(effect) { visited++ })
	})
	if visited != 0 {
		t.Errorf("visited %d queues the plan deletes", visited)
	}
	if allocs > 200 {
		t.Errorf("%v allocations for 1,000 deleted queues, want at most 200 (none per change)", allocs)
	}
}
