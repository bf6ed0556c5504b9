package testcluster_test

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/mqctl/mqctl/internal/testcluster"
)

// downFile: a classic DLQ and a quorum DLQ of 2 members, declared through
// c1 (so c1 holds the classic queue and one of the 2 members), and a
// quorum queue of 3 members.
const downFile = `version: 1
vhosts:
  ${VHOST}:
    exchanges:
      jobs.dlx: { type: direct }
      orders.dlx: { type: direct }
    queues:
      jobs:
        dead_letter: { exchange: jobs.dlx, queue: jobs.dlq }
      orders:
        type: quorum
        arguments: { x-quorum-initial-group-size: 3, x-dead-letter-exchange: orders.dlx, x-dead-letter-routing-key: orders }
      orders.dlq:
        type: quorum
        arguments: { x-quorum-initial-group-size: 2 }
        bindings: [{ exchange: orders.dlx, routing_key: orders }]
`

// statusQueue is a queue of mqctl status -o json.
type statusQueue struct {
	Name     string   `json:"name"`
	Role     string   `json:"role"`
	State    string   `json:"state"`
	Node     string   `json:"node"`
	Members  []string `json:"members"`
	Online   []string `json:"online"`
	Problems []struct {
		Kind     string `json:"kind"`
		Severity string `json:"severity"`
		Message  string `json:"message"`
	} `json:"problems"`
}

// TestStatusAndDLQWhileFirstNodeIsDown stops c1, which holds the classic
// DLQ jobs.dlq and one of the 2 members of the quorum DLQ orders.dlq, each
// holding a dead letter, and one of the 3 members of the quorum queue
// orders.
//
// Over AMQP the classic queue then reads as missing (a passive declare
// answers 404) and the quorum queue without a majority as empty: dlq peek
// said `queue "jobs.dlq" does not exist in this vhost; check the name and
// --vhost` and `Queue "orders.dlq" (vhost …) is empty.`, and dlq replay
// found nothing to replay, while both messages waited on c1. Both now
// refuse, naming the node or the members down and what to do; once c1 is
// back the messages are there.
//
// status said "the broker reports the queue down; no statistics from the
// broker yet" and "the broker reports the queue minority; no statistics
// from the broker yet" (as for a queue declared a moment ago, after
// waiting 6 s for statistics that cannot come), and nothing of orders
// running on 2 of its 3 members. It now names the node down, the members
// down, and lists the members and those online in its JSON.
func TestStatusAndDLQWhileFirstNodeIsDown(t *testing.T) {
	c := testcluster.New(t)
	ctx := context.Background()
	all := c.ServerList(1, 2, 3)
	r := newRunner(t, c, c.Vhost(t))
	r.mustApply(all, downFile)
	qs, err := c.Queues(ctx, 1, r.vhost)
	if err != nil {
		t.Fatal(err)
	}
	if n := qs["jobs.dlq"].Node; n != c.Node(1) {
		t.Fatalf("classic queue jobs.dlq, declared through c1, lives on %q, not on c1 (%s)", n, c.Node(1))
	}
	if m := qs["orders.dlq"].Members; len(m) != 2 || !slices.Contains(m, c.Node(1)) {
		t.Fatalf("quorum queue orders.dlq, declared through c1 with 2 members, has members %v, not c1 (%s) and one more", m, c.Node(1))
	}
	publishKept(t, c, 1, r.vhost, "jobs.dlq")
	publishKept(t, c, 1, r.vhost, "orders.dlq")
	for _, q := range []string{"jobs.dlq", "orders.dlq"} {
		if res := r.run(all, "dlq", "peek", q, "--vhost", r.vhost); res.code != 0 || !strings.Contains(res.stdout, "1 message") {
			t.Fatalf("dlq peek %s with the whole cluster up: want its 1 message\n%s", q, res)
		}
	}

	c.StopNode(t, 1)

	t.Run("dlq refuses a queue out of reach", func(t *testing.T) {
		r.t = t
		for _, x := range []struct {
			queue string
			want  string
		}{
			{"jobs.dlq", fmt.Sprintf("queue %q in vhost %q lives on node %s, which is down", "jobs.dlq", r.vhost, c.Node(1))},
			{"orders.dlq", fmt.Sprintf("quorum queue %q in vhost %q has 1 of its 2 members online (down: %s)", "orders.dlq", r.vhost, c.Node(1))},
		} {
			for _, args := range [][]string{
				{"dlq", "peek", x.queue, "--vhost", r.vhost},
				{"dlq", "replay", x.queue, "--vhost", r.vhost, "--to-exchange", "", "--routing-key", "jobs"},
				{"dlq", "replay", x.queue, "--vhost", r.vhost, "--dry-run"},
			} {
				res := r.run(all, args...)
				if res.code == 0 || !strings.Contains(res.stderr, x.want) || !strings.Contains(res.stderr, "run this again") {
					t.Errorf("with c1 stopped, want a refusal saying %q and what to do:\n%s", x.want, res)
				}
				for _, wrong := range []string{"does not exist", "is empty", "nothing to replay"} {
					if strings.Contains(res.stdout+res.stderr, wrong) {
						t.Errorf("with c1 stopped, %s reads as a queue that %s:\n%s", x.queue, wrong, res)
					}
				}
			}
		}
	})

	t.Run("status names the node and the members down", func(t *testing.T) {
		r.t = t
		res := r.run(all, "status", "-f", r.file(downFile), "-o", "json")
		if res.code != 0 {
			t.Fatalf("status with c1 stopped:\n%s", res)
		}
		var report struct {
			Vhosts []struct {
				Queues []statusQueue `json:"queues"`
			} `json:"vhosts"`
		}
		if err := json.Unmarshal([]byte(res.stdout), &report); err != nil || len(report.Vhosts) != 1 {
			t.Fatalf("status -o json: %v\n%s", err, res)
		}
		got := map[string]statusQueue{}
		for _, q := range report.Vhosts[0].Queues {
			got[q.Name] = q
		}
		for name, want := range map[string]string{
			"jobs.dlq":   fmt.Sprintf("not-running/warning: its node %s is down: the queue and its messages (not counted) wait on that node's disk", c.Node(1)),
			"orders.dlq": fmt.Sprintf("not-running/warning: 1 of its 2 members online (down: %s), no majority", c.Node(1)),
			"orders":     fmt.Sprintf("member-down/warning: 2 of its 3 members online (down: %s): it runs, but loses its majority if one more goes down", c.Node(1)),
		} {
			q := got[name]
			var problems []string
			for _, p := range q.Problems {
				problems = append(problems, p.Kind+"/"+p.Severity+": "+p.Message)
			}
			if !slices.ContainsFunc(problems, func(p string) bool { return strings.HasPrefix(p, want) }) {
				t.Errorf("status with c1 stopped: queue %s has problems %q; want one starting %q", name, problems, want)
			}
			if strings.Contains(res.stdout, "no statistics from the broker yet") {
				t.Errorf("status with c1 stopped reads a queue on it as one declared a moment ago:\n%s", res)
			}
		}
		if q := got["orders"]; len(q.Members) != 3 || len(q.Online) != 2 || slices.Contains(q.Online, c.Node(1)) {
			t.Errorf("status with c1 stopped: orders has members %v, online %v; want 3 members, c2 and c3 online", q.Members, q.Online)
		}
		if q := got["jobs.dlq"]; q.Node != c.Node(1) {
			t.Errorf("status with c1 stopped: jobs.dlq on node %q, want %s", q.Node, c.Node(1))
		}
		text := r.run(all, "status", "-f", r.file(downFile))
		if !strings.Contains(text.stdout, fmt.Sprintf("its node %s is down", c.Node(1))) {
			t.Errorf("status with c1 stopped does not name the node down:\n%s", text)
		}
	})

	c.StartNode(t, 1)

	t.Run("the dead letters are there once c1 is back", func(t *testing.T) {
		r.t = t
		for _, q := range []string{"jobs.dlq", "orders.dlq"} {
			if res := r.run(all, "dlq", "peek", q, "--vhost", r.vhost); res.code != 0 || !strings.Contains(res.stdout, "1 message") {
				t.Errorf("dlq peek %s with c1 back: want its 1 message\n%s", q, res)
			}
		}
	})
}
