package testcluster_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

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

// replayFile: dead letters of a classic queue (cq, on c1, which declares
// it) and of a quorum queue of 2 members (qq, c1 among them), in a quorum
// DLQ of 3 members; the route of each also reaches keep (3 members).
const replayFile = `version: 1
vhosts:
  ${VHOST}:
    exchanges:
      work: { type: direct }
      dlx: { type: fanout }
    queues:
      cq:
        arguments: { x-dead-letter-exchange: dlx }
        bindings: [{ exchange: work, routing_key: c }]
      qq:
        type: quorum
        arguments: { x-quorum-initial-group-size: 2, x-dead-letter-exchange: dlx }
        bindings: [{ exchange: work, routing_key: q }]
      keep:
        type: quorum
        arguments: { x-quorum-initial-group-size: 3 }
        bindings: [{ exchange: work, routing_key: c }, { exchange: work, routing_key: q }]
      dlq:
        type: quorum
        arguments: { x-quorum-initial-group-size: 3 }
        bindings: [{ exchange: dlx }]
`

// TestReplayToQueuesOutOfReach stops c1, home of the classic queue cq
// and one of the 2 members of the quorum queue qq, whose dead letters
// wait in dlq. A replay published them: to cq the broker nacked the
// publish (4.3.6) while keep, which the route reaches too, took a copy
// (another at each run); to qq it left the publish unconfirmed, and the
// replay stopped at the confirm timeout (30 s), keep holding a copy
// again. 3.10.8 routes nothing to cq, whose bindings it leaves out of its
// listings too: the replay said its binding was removed, and to bind it
// again. It now refuses each before publishing, naming the node or the
// members down and what to do, and publishes nothing; once c1 is back the
// replay moves both.
func TestReplayToQueuesOutOfReach(t *testing.T) {
	c := testcluster.New(t)
	ctx := context.Background()
	all := c.ServerList(1, 2, 3)
	r := newRunner(t, c, c.Vhost(t))
	r.mustApply(all, replayFile)
	qs, err := c.Queues(ctx, 1, r.vhost)
	if err != nil {
		t.Fatal(err)
	}
	if n := qs["cq"].Node; n != c.Node(1) {
		t.Fatalf("classic queue cq, declared through c1, lives on %q, not on c1 (%s)", n, c.Node(1))
	}
	if m := qs["qq"].Members; len(m) != 2 || !slices.Contains(m, c.Node(1)) {
		t.Fatalf("quorum queue qq, declared through c1 with 2 members, has members %v, not c1 (%s) and one more", m, c.Node(1))
	}
	for _, key := range []string{"c", "q"} {
		var routed struct {
			Routed bool `json:"routed"`
		}
		msg := map[string]any{"properties": map[string]any{"delivery_mode": 2, "expiration": "1", "message_id": "m-" + key}, "routing_key": key, "payload": key, "payload_encoding": "string"}
		if err := c.Do(ctx, 1, "POST", "exchanges/"+url.PathEscape(r.vhost)+"/work/publish", msg, &routed); err != nil || !routed.Routed {
			t.Fatalf("publish %s: routed %v, %v", key, routed.Routed, err)
		}
	}
	depth := func(servers string, queue string) string {
		res := r.run(servers, "dlq", "peek", queue, "--vhost", r.vhost, "-o", "json")
		var peek struct {
			InQueue int `json:"messages_in_queue"`
		}
		if err := json.Unmarshal([]byte(res.stdout), &peek); err != nil {
			return res.String()
		}
		return strconv.Itoa(peek.InQueue)
	}
	for range 100 { // both expire into dlq within milliseconds
		if depth(all, "dlq") == "2" {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	if d := depth(all, "dlq"); d != "2" {
		t.Fatalf("dlq holds %s, want the 2 dead letters of cq and qq", d)
	}

	version, err := c.Version(ctx, 2)
	if err != nil {
		t.Fatal(err)
	}
	// What the broker does with a publish to cq.
	answer := "the broker would nack the publish"
	if strings.HasPrefix(version, "3.") {
		answer = "the publish would miss it"
	}

	c.StopNode(t, 1)
	up := c.ServerList(2, 3)
	res := r.run(up, "dlq", "replay", "dlq", "--vhost", r.vhost, "--drop-expiration")
	for _, want := range []string{
		fmt.Sprintf(`failed #1 (message id "m-c"): queue "cq" lives on node %s, which is down, so it cannot take messages now: %s, and "keep", which the route reaches too, would take a copy regardless; nothing was published; left in the DLQ: start %s again (or wait for it), and run the replay again, with --from-queue cq --to-exchange "" --routing-key cq to send it to "cq" alone, where it died`, c.Node(1), answer, c.Node(1)),
		fmt.Sprintf(`failed #2 (message id "m-q"): queue "qq" is a quorum queue with 1 of its 2 members online (down: %s), no majority, so it cannot take messages now`, c.Node(1)),
		"replayed 0, skipped 0, failed 2 (destination unavailable)",
	} {
		if res.code != 1 || !strings.Contains(res.stdout, want) {
			t.Errorf("RabbitMQ %s: replay with c1 stopped: want exit 1 and %q\n%s", version, want, res)
		}
	}
	if d := depth(up, "keep"); d != "0" {
		t.Errorf("with c1 stopped, the refused replay left %s messages in keep; want none", d)
	}
	// The replay's reads come back to dlq as its connection closes, which
	// the broker handles a moment after the replay has exited.
	d := depth(up, "dlq")
	for i := 0; i < 100 && d != "2"; i++ {
		time.Sleep(100 * time.Millisecond)
		d = depth(up, "dlq")
	}
	if d != "2" {
		t.Errorf("with c1 stopped, the refused replay left %s messages in dlq; want both", d)
	}

	c.StartNode(t, 1)
	if res := r.run(all, "dlq", "replay", "dlq", "--vhost", r.vhost, "--drop-expiration"); res.code != 0 || !strings.Contains(res.stdout, "replayed 2, skipped 0, failed 0") {
		t.Errorf("replay with c1 back: want both replayed\n%s", res)
	}
	for q, want := range map[string]string{"dlq": "0", "cq": "1", "qq": "1", "keep": "2"} {
		if d := depth(all, q); d != want {
			t.Errorf("after the replay with c1 back, %s holds %s; want %s", q, d, want)
		}
	}
}
