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
	"github.com/mqctl/mqctl/pkg/cli"
	"github.com/mqctl/mqctl/pkg/plan"
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
	if res := r.run(servers, "plan", "-f", r.file(content), "--detailed-exitcode"); res.code != 0 {
		r.t.Errorf("%s: plan through %s is not empty:\n%s", when, servers, res)
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
		ch := changeOf(p, plan.KindQueue, name)
		if ch == nil || ch.Action != plan.Create || ch.After.Queue == nil {
			t.Fatalf("plan has no create of queue %s: %+v", name, p.Changes)
		}
		if got := fmt.Sprint(ch.After.Queue.Arguments["x-quorum-initial-group-size"]); got != want {
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
	ch := changeOf(p, plan.KindQueue, "orders.billing")
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

// withoutScratch is base without the classic queue orders.scratch.
func withoutScratch(t *testing.T) string {
	out := strings.Replace(base, `      orders.scratch:
        bindings: [{ exchange: orders, routing_key: order.created }]
        limits: { max_length: 1000 }
`, "", 1)
	if out == base {
		t.Fatal("the test file still declares orders.scratch")
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
// is there. While c1 is down RabbitMQ hides its bindings and answers 404 to
// deleting it, though the queue and its messages wait on c1's disk. plan
// and apply leave it alone and say so (never "create binding" again, never
// a delete taken for done); once c1 is back, the delete shows with the
// message at stake and is refused without --allow-data-loss.
func TestWhileFirstNodeIsDown(t *testing.T) {
	c := testcluster.New(t)
	all := c.ServerList(1, 2, 3)
	failover := newRunner(t, c, c.Vhost(t))
	failover.mustApply(all, base)
	keep := newRunner(t, c, c.Vhost(t))
	keep.mustApply(all, base)
	var routed struct {
		Routed bool `json:"routed"`
	}
	msg := map[string]any{"properties": map[string]any{"delivery_mode": 2}, "routing_key": "orders.scratch", "payload": "kept", "payload_encoding": "string"}
	if err := c.Do(context.Background(), 1, "POST", "exchanges/"+url.PathEscape(keep.vhost)+"/amq.default/publish", msg, &routed); err != nil || !routed.Routed {
		t.Fatalf("publish into orders.scratch: routed %v, %v", routed.Routed, err)
	}
	for _, r := range []*runner{failover, keep} {
		qs, err := c.Queues(context.Background(), 1, r.vhost)
		if err != nil {
			t.Fatal(err)
		}
		if n := qs["orders.scratch"].Node; n != c.Node(1) {
			t.Fatalf("classic queue orders.scratch, declared through c1, lives on %q, not on c1 (%s)", n, c.Node(1))
		}
	}

	c.StopNode(t, 1)

	t.Run("plan and apply fail over", func(t *testing.T) {
		r := failover
		r.t = t
		res := r.run(all, "plan", "-f", r.file(base), "--detailed-exitcode")
		if res.code != 0 {
			t.Errorf("plan through c1,c2,c3 with c1 stopped is not empty:\n%s", res)
		}
		// orders.scratch is on c1: its binding is hidden meanwhile.
		note := fmt.Sprintf("queue %q in vhost %q lives on node %s, which is down", "orders.scratch", r.vhost, c.Node(1))
		if !strings.Contains(res.stderr, note) || !strings.Contains(res.stderr, "create binding orders -> queue orders.scratch [order.created]") {
			t.Errorf("plan with c1 stopped does not say that the binding of orders.scratch waits for c1 (%q):\n%s", note, res)
		}
		// The same over HTTPS, with the CA the three nodes share.
		res = r.run(c.HTTPSServerList(1, 2, 3), "plan", "-f", r.file(base), "--detailed-exitcode", "--ca-cert", c.CACert())
		if res.code != 0 {
			t.Errorf("plan over HTTPS with c1 stopped:\n%s", res)
		}

		res = r.mustApply(all, withChange())
		if !strings.Contains(res.stdout, "Apply complete: 5 created") {
			t.Errorf("apply with c1 stopped did not create the 2 queues, 2 bindings and the policy:\n%s", res)
		}
		r.assertNoChanges(all, withChange(), "c1 stopped, after the change")
		r.assertNoChanges(c.Server(3), withChange(), "c1 stopped, after the change")

		qs, err := c.Queues(context.Background(), 2, r.vhost)
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

	t.Run("a classic queue on c1 is not deleted", func(t *testing.T) {
		r := keep
		r.t = t
		res := r.mustApply(all, withoutScratch(t))
		if !strings.Contains(res.stderr, "delete queue orders.scratch") || !strings.Contains(res.stderr, c.Node(1)) {
			t.Errorf("apply with c1 stopped does not say that deleting orders.scratch waits for c1:\n%s", res)
		}
		if strings.Contains(res.stdout, "delete queue") {
			t.Errorf("apply with c1 stopped claims to delete orders.scratch:\n%s", res)
		}
	})

	c.StartNode(t, 1)

	t.Run("the change made meanwhile is on c1", func(t *testing.T) {
		r := failover
		r.t = t
		r.assertNoChanges(c.Server(1), withChange(), "c1 back")
		r.assertNoChanges(all, withChange(), "c1 back")
	})

	t.Run("the classic queue is back with its message", func(t *testing.T) {
		r := keep
		r.t = t
		p := r.planJSON(c.Server(1), withoutScratch(t))
		ch := changeOf(p, plan.KindQueue, "orders.scratch")
		if ch == nil || ch.Action != plan.Delete || ch.Messages != 1 {
			t.Fatalf("plan with c1 back: want the delete of orders.scratch with 1 message at stake, got %+v", p.Changes)
		}
		if b := changeOf(p, plan.KindBinding, "orders -> queue orders.scratch [order.created]"); b == nil || b.Action != plan.Delete || len(p.Changes) != 2 {
			t.Errorf("plan with c1 back: want the queue's binding (visible again) deleted with it, and nothing else; got %+v", p.Changes)
		}
		res := r.run(all, "apply", "-f", r.file(withoutScratch(t)), "--auto-approve")
		if res.code == 0 || !strings.Contains(res.stderr, "--allow-data-loss") {
			t.Errorf("apply deleted a queue holding a message without --allow-data-loss:\n%s", res)
		}
	})
}
