package testcluster_test

import (
	"bytes"
	"context"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/mqctl/mqctl/internal/testcluster"
	"github.com/mqctl/mqctl/pkg/broker"
	"github.com/mqctl/mqctl/pkg/cli"
	"github.com/mqctl/mqctl/pkg/kind"
	"github.com/mqctl/mqctl/pkg/plan"
	"github.com/mqctl/mqctl/pkg/topology"
)

// The tests drive the real mqctl command line (cli.Main) against the three
// nodes of scripts/cluster, each in a vhost of its own. Topology files name
// their vhost ${VHOST}.

// base: quorum queues of initial group size 3 and 2, a quorum queue with
// none (the broker's default), classic queues, bindings and a policy.
const base = `version: 1
vhosts:
  ${VHOST}:
    exchanges:
      orders: { type: topic }
      orders.dlx: { type: topic }
    queues:
      orders.shipping:
        type: quorum
        arguments: { x-quorum-initial-group-size: 3 }
        bindings: [{ exchange: orders, routing_keys: [order.created, order.paid] }]
        dead_letter: { exchange: orders.dlx, queue: orders.shipping.dlq }
      orders.billing:
        type: quorum
        arguments: { x-quorum-initial-group-size: 2 }
        delivery_limit: 5
        bindings: [{ exchange: orders, routing_key: order.paid }]
      orders.audit:
        type: quorum
        bindings: [{ exchange: orders, routing_key: "#" }]
      orders.scratch:
        bindings: [{ exchange: orders, routing_key: order.created }]
        limits: { max_length: 1000 }
    policies:
      orders-ttl:
        pattern: "^orders\\.scratch$"
        apply_to: queues
        definition: { message-ttl: 60000 }
`

// changed adds a quorum queue, a classic queue, a binding and a policy to
// base.
const changed = base + `      orders-cap:
        pattern: "^orders\\.late$"
        apply_to: queues
        definition: { max-length: 500 }
`

const changedQueues = `      orders.late:
        type: quorum
        arguments: { x-quorum-initial-group-size: 3 }
        bindings: [{ exchange: orders, routing_key: order.late }]
      orders.late.log:
        bindings: [{ exchange: orders, routing_key: order.late }]
`

// withChange is base plus the objects of changed (queues go before the
// policies section).
func withChange() string {
	i := strings.Index(changed, "    policies:")
	return changed[:i] + changedQueues + changed[i:]
}

type result struct {
	args           []string
	stdout, stderr string
	code           int
}

func (r result) String() string {
	return fmt.Sprintf("mqctl %s: exit %d\n--- stdout:\n%s--- stderr:\n%s", strings.Join(r.args, " "), r.code, r.stdout, r.stderr)
}

// runner runs mqctl against the cluster in one test vhost.
type runner struct {
	t     *testing.T
	c     *testcluster.Cluster
	vhost string
	dir   string
}

func newRunner(t *testing.T, c *testcluster.Cluster, vhost string) *runner {
	return &runner{t: t, c: c, vhost: vhost, dir: t.TempDir()}
}

// run runs mqctl with args against the management endpoints servers
// (--server, comma-separated) with the test credentials.
func (r *runner) run(servers string, args ...string) result {
	r.t.Helper()
	var stdout, stderr bytes.Buffer
	full := append(append([]string{}, args...), "--server", servers, "--username", r.c.Username, "--password", r.c.Password)
	env := map[string]string{"VHOST": r.vhost}
	e := cli.Env{
		Stdin: strings.NewReader(""), Stdout: &stdout, Stderr: &stderr,
		LookupEnv: func(k string) (string, bool) { v, ok := env[k]; return v, ok },
	}
	code := cli.Main(context.Background(), full, e)
	return result{args: full, stdout: stdout.String(), stderr: stderr.String(), code: code}
}

func (r *runner) file(content string) string {
	r.t.Helper()
	p := filepath.Join(r.dir, "topology.yaml")
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		r.t.Fatal(err)
	}
	return p
}

func (r *runner) mustApply(servers, content string, flags ...string) result {
	r.t.Helper()
	res := r.run(servers, append([]string{"apply", "-f", r.file(content), "--auto-approve"}, flags...)...)
	if res.code != 0 {
		r.t.Fatalf("apply through %s failed:\n%s", servers, res)
	}
	return res
}

// assertNoChanges checks that `plan --detailed-exitcode` through servers
// exits 0.
func (r *runner) assertNoChanges(servers, content, when string) {
	r.t.Helper()
	r.assertNothingToApply(servers, content, when, false)
}

// assertNothingToApply checks that a plan through servers gives apply
// nothing to do: with held, the plan holds changes back (a queue on a
// node that is down), which differs from the file, and plan
// --detailed-exitcode exits 2 with the text that says so; without, it
// exits 0.
func (r *runner) assertNothingToApply(servers, content, when string, held bool) {
	r.t.Helper()
	res := r.run(servers, "plan", "-f", r.file(content), "--detailed-exitcode")
	switch {
	case !held && res.code != 0:
		r.t.Errorf("%s: plan through %s is not empty:\n%s", when, servers, res)
	case held && (res.code != 2 || !strings.HasPrefix(res.stdout, "Nothing for apply to change: ")):
		r.t.Errorf("%s: plan through %s does not hold back changes alone (exit 2, nothing for apply to change):\n%s", when, servers, res)
	}
}

func (r *runner) planJSON(servers, content string) *plan.Plan {
	r.t.Helper()
	res := r.run(servers, "plan", "-f", r.file(content), "-o", "json")
	if res.code != 0 {
		r.t.Fatalf("plan failed:\n%s", res)
	}
	p, err := plan.ReadJSON(strings.NewReader(res.stdout))
	if err != nil {
		r.t.Fatalf("plan -o json is not a plan: %v\n%s", err, res)
	}
	return p
}

func changeOf(p *plan.Plan, kind plan.Kind, name string) *plan.Change {
	for i := range p.Changes {
		if p.Changes[i].Kind == kind && p.Changes[i].Name == name {
			return &p.Changes[i]
		}
	}
	return nil
}

// TestQuorumGroupSizesPlannedAndIdempotentOnEveryNode applies quorum queues
// with initial group sizes 3 and 2 through the endpoint list c1,c2,c3: the
// plan shows the sizes, the broker places that many replicas, and a second
// plan read from each node alone is empty. A changed group size is a
// replace (the broker keeps the argument it was declared with).
func TestQuorumGroupSizesPlannedAndIdempotentOnEveryNode(t *testing.T) {
	c := testcluster.New(t)
	r := newRunner(t, c, c.Vhost(t))
	all := c.ServerList(1, 2, 3)

	p := r.planJSON(all, base)
	for name, want := range map[string]string{"orders.shipping": "3", "orders.billing": "2"} {
		ch := changeOf(p, kind.Queue, name)
		var q *topology.Queue
		ok := false
		if ch != nil {
			q, ok = plan.As[topology.Queue](ch.After)
		}
		if ch == nil || ch.Action != plan.Create || !ok {
			t.Fatalf("plan has no create of queue %s: %+v", name, p.Changes)
		}
		if got := fmt.Sprint(q.Arguments["x-quorum-initial-group-size"]); got != want {
			t.Errorf("plan: queue %s x-quorum-initial-group-size = %s, want %s", name, got, want)
		}
	}

	r.mustApply(all, base)
	for n := 1; n <= 3; n++ {
		r.assertNoChanges(c.Server(n), base, "after apply")
	}

	qs, err := c.Queues(context.Background(), 2, r.vhost)
	if err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]int{"orders.shipping": 3, "orders.billing": 2, "orders.shipping.dlq": 3, "orders.audit": 3} {
		q := qs[name]
		if q.Type != "quorum" || len(q.Members) != want {
			t.Errorf("queue %s: type %q with %d members %v, want quorum with %d", name, q.Type, len(q.Members), q.Members, want)
		}
		if !slices.Contains(q.Members, q.Leader) {
			t.Errorf("queue %s: leader %q is not one of its members %v", name, q.Leader, q.Members)
		}
	}

	// Growing orders.billing to 3 replicas is a replace forced by the argument.
	grown := strings.Replace(base, "x-quorum-initial-group-size: 2", "x-quorum-initial-group-size: 3", 1)
	p = r.planJSON(c.Server(3), grown)
	ch := changeOf(p, kind.Queue, "orders.billing")
	if ch == nil || ch.Action != plan.Replace || len(p.Changes) != 1 {
		t.Fatalf("plan after changing the group size: want only a replace of orders.billing, got %+v", p.Changes)
	}
	if !strings.Contains(ch.Reason, "x-quorum-initial-group-size") {
		t.Errorf("the replace does not say the group size forced it: %q", ch.Reason)
	}
	r.mustApply(all, grown, "--allow-replace")
	for n := 1; n <= 3; n++ {
		r.assertNoChanges(c.Server(n), grown, "after the replace")
	}
	qs, err = c.Queues(context.Background(), 1, r.vhost)
	if err != nil {
		t.Fatal(err)
	}
	if m := qs["orders.billing"].Members; len(m) != 3 {
		t.Errorf("orders.billing after the replace has members %v, want 3", m)
	}

	// A group size larger than the cluster: the broker places one replica
	// per node and keeps the argument as given, so the plan stays empty.
	large := strings.Replace(grown, "    policies:", `      orders.wide:
        type: quorum
        arguments: { x-quorum-initial-group-size: 5 }
    policies:`, 1)
	r.mustApply(all, large)
	for n := 1; n <= 3; n++ {
		r.assertNoChanges(c.Server(n), large, "group size 5 on 3 nodes")
	}
	qs, err = c.Queues(context.Background(), 3, r.vhost)
	if err != nil {
		t.Fatal(err)
	}
	if q := qs["orders.wide"]; len(q.Members) != 3 || fmt.Sprint(q.Arguments["x-quorum-initial-group-size"]) != "5" {
		t.Errorf("orders.wide: members %v, arguments %v; want 3 members and the group size kept at 5", q.Members, q.Arguments)
	}
}

// TestDeclarationVisibleOnTheNextNode applies through c2 and plans through
// c3 at once, round after round (a new vhost, new and changed objects,
// deletes): the plan never reads a stale state.
func TestDeclarationVisibleOnTheNextNode(t *testing.T) {
	c := testcluster.New(t)
	r := newRunner(t, c, c.FreshVhostName(t))
	rounds := []string{
		base,
		withChange(),
		strings.Replace(withChange(), "max-length: 500", "max-length: 700", 1),
		base,
	}
	for i, content := range rounds {
		r.mustApply(c.Server(2), content)
		r.assertNoChanges(c.Server(3), content, fmt.Sprintf("round %d", i+1))
		r.assertNoChanges(c.Server(1), content, fmt.Sprintf("round %d", i+1))
	}
}

// queueBlocks are the declarations of base's queues that tests drop.
var queueBlocks = map[string]string{
	"orders.scratch": `      orders.scratch:
        bindings: [{ exchange: orders, routing_key: order.created }]
        limits: { max_length: 1000 }
`,
	"orders.billing": `      orders.billing:
        type: quorum
        arguments: { x-quorum-initial-group-size: 2 }
        delivery_limit: 5
        bindings: [{ exchange: orders, routing_key: order.paid }]
`,
}

// without is base without the named queues (keys of queueBlocks).
func without(t *testing.T, queues ...string) string {
	out := base
	for _, q := range queues {
		next := strings.Replace(out, queueBlocks[q], "", 1)
		if next == out {
			t.Fatalf("the test file does not declare %s as expected", q)
		}
		out = next
	}
	return out
}

// TestWhileFirstNodeIsDown stops c1, the first endpoint of the list c1,c2,c3,
// for the length of its first subtests, then starts it again.
//
// Failover: plan and apply through c1,c2,c3 go to c2 (over HTTP and HTTPS);
// a change made meanwhile (new quorum and classic queues, bindings, a
// policy) is on c1 once it is back; quorum queues keep a majority.
//
// A classic queue lives on one node: orders.scratch, declared through c1,
// is there, and so is one of the two members of the quorum queue
// orders.billing, which keeps no majority while c1 is down. Both hold a
// message, which waits on c1's disk. The broker lists both queues, and
// would delete them if asked: 3.10 answers 404 to deleting the classic
// queue (and hides its bindings), 4.0 deletes it, message and all, and both
// force the quorum queue away. mqctl recognises them from what the broker
// reports about their node and members, leaves them alone and says so
// (never "create binding" again, never a delete); once c1 is back, the
// deletes show with the messages at stake and are refused without
// --allow-data-loss.
func TestWhileFirstNodeIsDown(t *testing.T) {
	c := testcluster.New(t)
	ctx := context.Background()
	version, err := c.Version(ctx, 2)
	if err != nil {
		t.Fatal(err)
	}
	v310 := strings.HasPrefix(version, "3.")
	all := c.ServerList(1, 2, 3)
	failover := newRunner(t, c, c.Vhost(t))
	failover.mustApply(all, base)
	keep := newRunner(t, c, c.Vhost(t))
	keep.mustApply(all, base)
	for _, q := range []string{"orders.scratch", "orders.billing"} {
		var routed struct {
			Routed bool `json:"routed"`
		}
		msg := map[string]any{"properties": map[string]any{"delivery_mode": 2}, "routing_key": q, "payload": "kept", "payload_encoding": "string"}
		if err := c.Do(ctx, 1, "POST", "exchanges/"+url.PathEscape(keep.vhost)+"/amq.default/publish", msg, &routed); err != nil || !routed.Routed {
			t.Fatalf("publish into %s: routed %v, %v", q, routed.Routed, err)
		}
	}
	for _, r := range []*runner{failover, keep} {
		qs, err := c.Queues(ctx, 1, r.vhost)
		if err != nil {
			t.Fatal(err)
		}
		if n := qs["orders.scratch"].Node; n != c.Node(1) {
			t.Fatalf("classic queue orders.scratch, declared through c1, lives on %q, not on c1 (%s)", n, c.Node(1))
		}
		// Both versions place a quorum queue's first member on the node
		// that declares it.
		if m := qs["orders.billing"].Members; len(m) != 2 || !slices.Contains(m, c.Node(1)) {
			t.Fatalf("quorum queue orders.billing, declared through c1 with 2 members, has members %v, not c1 (%s) and one more", m, c.Node(1))
		}
	}

	c.StopNode(t, 1)

	t.Run("plan and apply fail over", func(t *testing.T) {
		r := failover
		r.t = t
		// orders.scratch is on c1. 3.10 hides its binding meanwhile: the
		// diff would create it again, and mqctl says it waits for c1,
		// holding the binding back (plan --detailed-exitcode exits 2: the
		// broker differs from the file). 4.0 lists it: nothing to create,
		// nothing to say (exit 0).
		res := r.run(all, "plan", "-f", r.file(base), "--detailed-exitcode")
		if want := map[bool]int{true: 2, false: 0}[v310]; res.code != want {
			t.Errorf("RabbitMQ %s: plan through c1,c2,c3 with c1 stopped exits %d, want %d:\n%s", version, res.code, want, res)
		}
		var bindings []struct {
			Source string `json:"source"`
		}
		if err := c.Do(ctx, 2, "GET", "queues/"+url.PathEscape(r.vhost)+"/orders.scratch/bindings", nil, &bindings); err != nil {
			t.Fatal(err)
		}
		listed := slices.ContainsFunc(bindings, func(b struct {
			Source string `json:"source"`
		}) bool {
			return b.Source == "orders"
		})
		if listed == v310 {
			t.Errorf("RabbitMQ %s with c1 stopped: the binding orders -> orders.scratch listed: %v; want 3.10 to hide it and 4.0 to list it", version, listed)
		}
		note := fmt.Sprintf("queue %q in vhost %q lives on node %s, which is down", "orders.scratch", r.vhost, c.Node(1))
		said := strings.Contains(res.stderr, note) && strings.Contains(res.stderr, "create binding orders -> queue orders.scratch [order.created]")
		switch {
		case v310 && !said:
			t.Errorf("RabbitMQ %s hides the binding of orders.scratch; the plan with c1 stopped does not say that it waits for c1 (%q):\n%s", version, note, res)
		case !v310 && strings.Contains(res.stderr, "orders.scratch"):
			t.Errorf("RabbitMQ %s lists the binding of orders.scratch; the plan with c1 stopped has nothing to hold back, yet speaks of it:\n%s", version, res)
		}
		// The same over HTTPS, with the CA the three nodes share.
		res = r.run(c.HTTPSServerList(1, 2, 3), "plan", "-f", r.file(base), "--detailed-exitcode", "--ca-cert", c.CACert())
		if want := map[bool]int{true: 2, false: 0}[v310]; res.code != want {
			t.Errorf("RabbitMQ %s: plan over HTTPS with c1 stopped exits %d, want %d:\n%s", version, res.code, want, res)
		}

		res = r.mustApply(all, withChange())
		if !strings.Contains(res.stdout, "Apply complete: 5 created") {
			t.Errorf("apply with c1 stopped did not create the 2 queues, 2 bindings and the policy:\n%s", res)
		}
		r.assertNothingToApply(all, withChange(), "c1 stopped, after the change", v310)
		r.assertNothingToApply(c.Server(3), withChange(), "c1 stopped, after the change", v310)

		qs, err := c.Queues(ctx, 2, r.vhost)
		if err != nil {
			t.Fatal(err)
		}
		// Quorum queues keep a majority with 2 of 3 members: a leader on c2
		// or c3. orders.late, declared meanwhile with group size 3, has c1
		// among its members too (offline for now).
		for _, name := range []string{"orders.shipping", "orders.audit", "orders.late"} {
			q := qs[name]
			if q.Leader == "" || q.Leader == c.Node(1) || len(q.Online) != 2 || len(q.Members) != 3 {
				t.Errorf("quorum queue %s with c1 stopped: leader %q, members %v, online %v; want a leader on c2 or c3, 3 members, 2 online",
					name, q.Leader, q.Members, q.Online)
			}
		}
	})

	t.Run("queues that wait for c1 are not deleted", func(t *testing.T) {
		r := keep
		r.t = t
		// What the broker reports, from which mqctl tells: the classic
		// queue is "down" in the listing on both versions; the quorum queue
		// has 1 of its 2 members online ("minority" on 4.0, no state on 3.10).
		qs, err := c.Queues(ctx, 2, r.vhost)
		if err != nil {
			t.Fatal(err)
		}
		if q := qs["orders.scratch"]; q.State != "down" || q.Node != c.Node(1) {
			t.Errorf("RabbitMQ %s lists orders.scratch with state %q on node %q; want \"down\" on %s", version, q.State, q.Node, c.Node(1))
		}
		if q := qs["orders.billing"]; len(q.Online) != 1 || (v310 && q.State != "") || (!v310 && q.State != "minority") {
			t.Errorf("RabbitMQ %s lists orders.billing with state %q, online %v; want 1 online, with no state on 3.10 and \"minority\" on 4.0", version, q.State, q.Online)
		}
		// Listed with the queue totals (how mqctl reads the depths of the
		// queues at stake from 4.0), every version leaves the quorum queue
		// without a majority out (3.10.8, 4.0.5 and 4.3.6 alike), as if it
		// did not exist: QueuePlacements must list it all the same.
		totals, err := c.QueuesWithTotals(ctx, 2, r.vhost)
		if err != nil {
			t.Fatal(err)
		}
		if want := []string{"orders.audit", "orders.scratch", "orders.shipping", "orders.shipping.dlq"}; !slices.Equal(totals, want) {
			t.Errorf("RabbitMQ %s lists %v with the queue totals; want %v (orders.billing, without a majority, left out)", version, totals, want)
		}
		// mqctl's own listing (without the statistics on 4.0, which still
		// reports placements then; with them on 3.10) tells the same.
		bc, err := broker.Connect(ctx, broker.Config{Server: c.Server(2), Username: c.Username, Password: c.Password})
		if err != nil {
			t.Fatal(err)
		}
		pl, err := bc.QueuePlacements(ctx, r.vhost, []string{"orders.scratch", "orders.billing", "orders.shipping"})
		if err != nil {
			t.Fatal(err)
		}
		if p := pl["orders.scratch"]; !p.Down || p.Node != c.Node(1) {
			t.Errorf("RabbitMQ %s: QueuePlacements says orders.scratch is %+v; want down on %s", version, p, c.Node(1))
		}
		if p := pl["orders.billing"]; !p.NoMajority() {
			t.Errorf("RabbitMQ %s: QueuePlacements says orders.billing is %+v; want it without a majority", version, p)
		}
		if p := pl["orders.shipping"]; p.Down || p.NoMajority() {
			t.Errorf("RabbitMQ %s: QueuePlacements says orders.shipping (2 of 3 members online) is %+v; want it reachable", version, p)
		}

		res := r.mustApply(all, without(t, "orders.scratch", "orders.billing"))
		for _, s := range []string{
			fmt.Sprintf("queue %q in vhost %q lives on node %s, which is down", "orders.scratch", r.vhost, c.Node(1)),
			"delete queue orders.scratch",
			fmt.Sprintf("quorum queue %q in vhost %q has 1 of its 2 members online (down: %s)", "orders.billing", r.vhost, c.Node(1)),
			"delete queue orders.billing",
			"delete binding orders -> queue orders.billing [order.paid]",
		} {
			if !strings.Contains(res.stderr, s) {
				t.Errorf("apply with c1 stopped does not say %q:\n%s", s, res)
			}
		}
		// 3.10 hides the binding of orders.scratch, 4.0 lists it: its
		// delete is held back with the queue.
		if s := "delete binding orders -> queue orders.scratch [order.created]"; !v310 && !strings.Contains(res.stderr, s) {
			t.Errorf("apply with c1 stopped (RabbitMQ %s lists the binding) does not say %q:\n%s", version, s, res)
		}
		if strings.Contains(res.stdout, "delete queue") || strings.Contains(res.stdout, "delete binding") {
			t.Errorf("apply with c1 stopped claims to delete orders.scratch or orders.billing:\n%s", res)
		}
	})

	c.StartNode(t, 1)

	t.Run("the change made meanwhile is on c1", func(t *testing.T) {
		r := failover
		r.t = t
		r.assertNoChanges(c.Server(1), withChange(), "c1 back")
		r.assertNoChanges(all, withChange(), "c1 back")
	})

	t.Run("the queues are back with their messages", func(t *testing.T) {
		r := keep
		r.t = t
		file := without(t, "orders.scratch", "orders.billing")
		p := r.planJSON(c.Server(1), file)
		for _, b := range []struct{ queue, binding string }{
			{"orders.scratch", "orders -> queue orders.scratch [order.created]"},
			{"orders.billing", "orders -> queue orders.billing [order.paid]"},
		} {
			if ch := changeOf(p, kind.Queue, b.queue); ch == nil || ch.Action != plan.Delete || ch.Messages != 1 {
				t.Errorf("plan with c1 back: want the delete of %s with 1 message at stake, got %+v", b.queue, p.Changes)
			}
			if ch := changeOf(p, kind.Binding, b.binding); ch == nil || ch.Action != plan.Delete {
				t.Errorf("plan with c1 back: want the binding %s (visible again on 3.10) deleted with its queue; got %+v", b.binding, p.Changes)
			}
		}
		if len(p.Changes) != 4 {
			t.Errorf("plan with c1 back: want the 2 deletes and their bindings, nothing else; got %+v", p.Changes)
		}
		res := r.run(all, "apply", "-f", r.file(file), "--auto-approve")
		if res.code == 0 || !strings.Contains(res.stderr, "--allow-data-loss") {
			t.Errorf("apply deleted queues holding messages without --allow-data-loss:\n%s", res)
		}
	})
}

// publishKept publishes one persistent message into queue through node n
// (the default exchange) and fails the test unless it was routed.
func publishKept(t *testing.T, c *testcluster.Cluster, n int, vhost, queue string) {
	t.Helper()
	var routed struct {
		Routed bool `json:"routed"`
	}
	msg := map[string]any{"properties": map[string]any{"delivery_mode": 2}, "routing_key": queue, "payload": "kept", "payload_encoding": "string"}
	if err := c.Do(context.Background(), n, "POST", "exchanges/"+url.PathEscape(vhost)+"/amq.default/publish", msg, &routed); err != nil || !routed.Routed {
		t.Fatalf("publish into %s: routed %v, %v", queue, routed.Routed, err)
	}
}

// listsBinding reports whether node n lists a binding from exchange source
// to queue with routing key key.
func listsBinding(t *testing.T, c *testcluster.Cluster, n int, vhost, source, queue, key string) bool {
	t.Helper()
	var bindings []struct {
		Source     string `json:"source"`
		RoutingKey string `json:"routing_key"`
	}
	if err := c.Do(context.Background(), n, "GET", "queues/"+url.PathEscape(vhost)+"/"+url.PathEscape(queue)+"/bindings", nil, &bindings); err != nil {
		t.Fatal(err)
	}
	for _, b := range bindings {
		if b.Source == source && b.RoutingKey == key {
			return true
		}
	}
	return false
}

// parked is a classic queue without bindings, for the quorum vhost of
// TestSavedPlanWhileFirstNodeIsDown.
const parked = `      orders.parked: {}
`

// TestSavedPlanWhileFirstNodeIsDown saves a plan (plan --out) with the
// whole cluster up, stops c1, and applies the saved plan: the changes on
// the queues out of reach, and on their bindings, are held back, as they
// are for apply -f (TestWhileFirstNodeIsDown).
//
// The saved plan deletes empty queues; each gets a message after the plan
// is saved and before c1 stops, as a queue in use does. Nothing else stops
// such an apply: the check at apply time reads a queue out of reach as
// empty (a passive declare of a classic queue on a down node answers "not
// found"), so without the hold-back 4.0 deletes the bindings, forces the
// quorum queue away with its message, and takes the classic queue's
// delete for done.
//
// Two vhosts, each with its own saved plan, all declared through c1:
//
//   - classic: the classic queue orders.scratch (on c1, bound to orders),
//     which the saved plan deletes with its binding. 4.0 keeps listing the
//     binding with c1 stopped, so the fingerprint is the saved plan's: mqctl
//     holds both deletes back and says why. 3.10 hides the binding while c1
//     is down, so the broker state is not the saved plan's: apply refuses
//     the plan as stale before changing anything.
//   - quorum: the quorum queue orders.billing (members c1 and one more,
//     bound to orders) and the classic queue orders.parked (on c1, no
//     bindings), which the saved plan deletes with the binding. Nothing the
//     fingerprint covers changes on either version when c1 stops, so both
//     apply the plan and hold back its three changes, with a note per queue
//     (3.10 answers 404 for orders.parked, which a delete would take for
//     done; both would force orders.billing away).
//
// Once c1 is back the queues hold their messages: a new plan shows the
// deletes with the message at stake, and the saved plan, current again on
// both versions (3.10 lists the binding again), is refused without
// --allow-data-loss.
func TestSavedPlanWhileFirstNodeIsDown(t *testing.T) {
	c := testcluster.New(t)
	ctx := context.Background()
	version, err := c.Version(ctx, 2)
	if err != nil {
		t.Fatal(err)
	}
	v310 := strings.HasPrefix(version, "3.")
	all := c.ServerList(1, 2, 3)

	classic := newRunner(t, c, c.Vhost(t))
	classic.mustApply(all, base)
	classicGone := without(t, "orders.scratch")

	quorum := newRunner(t, c, c.Vhost(t))
	// No classic queue with a binding here: on 3.10 its hidden binding
	// would make this plan stale too.
	withParked := strings.Replace(without(t, "orders.scratch"), "    policies:", parked+"    policies:", 1)
	quorum.mustApply(all, withParked)
	quorumGone := without(t, "orders.scratch", "orders.billing")

	qs, err := c.Queues(ctx, 1, classic.vhost)
	if err != nil {
		t.Fatal(err)
	}
	if n := qs["orders.scratch"].Node; n != c.Node(1) {
		t.Fatalf("classic queue orders.scratch, declared through c1, lives on %q, not on c1 (%s)", n, c.Node(1))
	}
	if qs, err = c.Queues(ctx, 1, quorum.vhost); err != nil {
		t.Fatal(err)
	}
	if n := qs["orders.parked"].Node; n != c.Node(1) {
		t.Fatalf("classic queue orders.parked, declared through c1, lives on %q, not on c1 (%s)", n, c.Node(1))
	}
	if m := qs["orders.billing"].Members; len(m) != 2 || !slices.Contains(m, c.Node(1)) {
		t.Fatalf("quorum queue orders.billing, declared through c1 with 2 members, has members %v, not c1 (%s) and one more", m, c.Node(1))
	}

	// save writes r's plan for content to plan.json and checks it deletes
	// exactly the given queues (empty for now) and bindings.
	save := func(r *runner, content string, queues, bindings []string) string {
		t.Helper()
		out := filepath.Join(r.dir, "plan.json")
		if res := r.run(all, "plan", "-f", r.file(content), "--out", out); res.code != 0 {
			t.Fatalf("plan --out with the whole cluster up failed:\n%s", res)
		}
		fh, err := os.Open(out)
		if err != nil {
			t.Fatal(err)
		}
		defer fh.Close()
		p, err := plan.ReadSaved(fh, out)
		if err != nil {
			t.Fatal(err)
		}
		for _, q := range queues {
			if ch := changeOf(p, kind.Queue, q); ch == nil || ch.Action != plan.Delete || ch.Messages != 0 {
				t.Errorf("saved plan: want the delete of %s with no message at stake, got %+v", q, p.Changes)
			}
		}
		for _, b := range bindings {
			if ch := changeOf(p, kind.Binding, b); ch == nil || ch.Action != plan.Delete {
				t.Errorf("saved plan: want the delete of binding %s, got %+v", b, p.Changes)
			}
		}
		if len(p.Changes) != len(queues)+len(bindings) {
			t.Errorf("saved plan: want %d deletes, nothing else; got %+v", len(queues)+len(bindings), p.Changes)
		}
		return out
	}
	classicPlan := save(classic, classicGone, []string{"orders.scratch"}, []string{"orders -> queue orders.scratch [order.created]"})
	quorumPlan := save(quorum, quorumGone, []string{"orders.billing", "orders.parked"}, []string{"orders -> queue orders.billing [order.paid]"})

	// The messages arrive after the plan was saved.
	publishKept(t, c, 1, classic.vhost, "orders.scratch")
	publishKept(t, c, 1, quorum.vhost, "orders.billing")
	publishKept(t, c, 1, quorum.vhost, "orders.parked")
	c.StopNode(t, 1)

	t.Run("the saved plan leaves the classic queue on c1 alone", func(t *testing.T) {
		r := classic
		r.t = t
		res := r.run(all, "apply", classicPlan, "--auto-approve")
		if v310 {
			// 3.10 hides the binding: the state is not the saved plan's.
			if res.code == 0 || !strings.Contains(res.stderr, "the broker changed since this plan was made") {
				t.Errorf("RabbitMQ %s hides the binding of orders.scratch with c1 stopped; apply of the saved plan does not refuse it as stale:\n%s", version, res)
			}
		} else {
			// 4.0 lists the binding: the fingerprint is the saved plan's,
			// and the hold-back is what keeps the queue.
			if res.code != 0 {
				t.Errorf("RabbitMQ %s: apply of the saved plan with c1 stopped failed:\n%s", version, res)
			}
			for _, s := range []string{
				fmt.Sprintf("queue %q in vhost %q lives on node %s, which is down", "orders.scratch", r.vhost, c.Node(1)),
				"delete queue orders.scratch",
				"delete binding orders -> queue orders.scratch [order.created]",
			} {
				if !strings.Contains(res.stderr, s) {
					t.Errorf("RabbitMQ %s: apply of the saved plan with c1 stopped does not say %q:\n%s", version, s, res)
				}
			}
			if !listsBinding(t, c, 2, r.vhost, "orders", "orders.scratch", "order.created") {
				t.Errorf("RabbitMQ %s: the binding orders -> orders.scratch is gone after apply of the saved plan with c1 stopped", version)
			}
		}
		if strings.Contains(res.stdout, "delete queue") || strings.Contains(res.stdout, "delete binding") || strings.Contains(res.stdout, "Apply complete") {
			t.Errorf("apply of the saved plan with c1 stopped claims to delete orders.scratch or its binding:\n%s", res)
		}
		qs, err := c.Queues(ctx, 2, r.vhost)
		if err != nil {
			t.Fatal(err)
		}
		if q, ok := qs["orders.scratch"]; !ok || q.State != "down" || q.Node != c.Node(1) {
			t.Errorf("after apply of the saved plan, orders.scratch is listed %v with state %q on node %q; want \"down\" on %s", ok, q.State, q.Node, c.Node(1))
		}
	})

	t.Run("the saved plan leaves the quorum queue without a majority and the classic queue on c1 alone", func(t *testing.T) {
		r := quorum
		r.t = t
		res := r.run(all, "apply", quorumPlan, "--auto-approve")
		if res.code != 0 {
			t.Errorf("RabbitMQ %s: apply of the saved plan with c1 stopped failed:\n%s", version, res)
		}
		for _, s := range []string{
			fmt.Sprintf("quorum queue %q in vhost %q has 1 of its 2 members online (down: %s)", "orders.billing", r.vhost, c.Node(1)),
			"delete queue orders.billing",
			"delete binding orders -> queue orders.billing [order.paid]",
			fmt.Sprintf("queue %q in vhost %q lives on node %s, which is down", "orders.parked", r.vhost, c.Node(1)),
			"delete queue orders.parked",
		} {
			if !strings.Contains(res.stderr, s) {
				t.Errorf("RabbitMQ %s: apply of the saved plan with c1 stopped does not say %q:\n%s", version, s, res)
			}
		}
		if strings.Contains(res.stdout, "delete queue") || strings.Contains(res.stdout, "delete binding") || strings.Contains(res.stdout, "Apply complete") {
			t.Errorf("apply of the saved plan with c1 stopped claims to delete orders.billing, its binding or orders.parked:\n%s", res)
		}
		if !listsBinding(t, c, 2, r.vhost, "orders", "orders.billing", "order.paid") {
			t.Errorf("RabbitMQ %s: the binding orders -> orders.billing is gone after apply of the saved plan with c1 stopped", version)
		}
		qs, err := c.Queues(ctx, 2, r.vhost)
		if err != nil {
			t.Fatal(err)
		}
		if q, ok := qs["orders.billing"]; !ok || len(q.Online) != 1 {
			t.Errorf("after apply of the saved plan, orders.billing is listed %v with online %v; want 1 of 2 members online", ok, q.Online)
		}
		if q, ok := qs["orders.parked"]; !ok || q.State != "down" || q.Node != c.Node(1) {
			t.Errorf("after apply of the saved plan, orders.parked is listed %v with state %q on node %q; want \"down\" on %s", ok, q.State, q.Node, c.Node(1))
		}
	})

	c.StartNode(t, 1)

	t.Run("the queues are back with their messages", func(t *testing.T) {
		for _, x := range []struct {
			r        *runner
			file     string
			saved    string
			queues   []string
			bindings []string
		}{
			{classic, classicGone, classicPlan, []string{"orders.scratch"}, []string{"orders -> queue orders.scratch [order.created]"}},
			{quorum, quorumGone, quorumPlan, []string{"orders.billing", "orders.parked"}, []string{"orders -> queue orders.billing [order.paid]"}},
		} {
			r := x.r
			r.t = t
			p := r.planJSON(c.Server(1), x.file)
			for _, q := range x.queues {
				if ch := changeOf(p, kind.Queue, q); ch == nil || ch.Action != plan.Delete || ch.Messages != 1 {
					t.Errorf("plan with c1 back: want the delete of %s with 1 message at stake, got %+v", q, p.Changes)
				}
			}
			for _, b := range x.bindings {
				if ch := changeOf(p, kind.Binding, b); ch == nil || ch.Action != plan.Delete {
					t.Errorf("plan with c1 back: want the binding %s (visible again on 3.10) deleted with its queue; got %+v", b, p.Changes)
				}
			}
			if len(p.Changes) != len(x.queues)+len(x.bindings) {
				t.Errorf("plan with c1 back: want %d deletes, nothing else; got %+v", len(x.queues)+len(x.bindings), p.Changes)
			}
			// The saved plan matches the broker again (3.10 lists the
			// binding again), and its deletes are refused for the messages.
			res := r.run(all, "apply", x.saved, "--auto-approve")
			if res.code == 0 || !strings.Contains(res.stderr, "--allow-data-loss") || strings.Contains(res.stderr, "the broker changed since this plan was made") {
				t.Errorf("apply of the saved plan with c1 back: want it current and refused without --allow-data-loss:\n%s", res)
			}
		}
	})
}
