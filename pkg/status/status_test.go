package status

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/mqctl/mqctl/pkg/broker"
)

const sampleFile = `exchanges:
  orders: { type: topic }
  orders.dlx: { type: topic }
queues:
  orders.shipping:
    type: quorum
    bindings: [{ exchange: orders, routing_key: order.created }]
    dead_letter: { exchange: orders.dlx, queue: orders.shipping.dlq }
    retry: { delays: [10s] }
    alert: { max_depth: 100 }
  events: { type: stream }
  idle: {}
`

// running returns an activity row with statistics.
func running(name string, messages, consumers int64) broker.QueueActivity {
	return broker.QueueActivity{Name: name, Type: "classic", State: "running", Known: true,
		Messages: messages, Ready: messages, Consumers: consumers}
}

func ptr(n int64) *int64 { return &n }

// problemKinds lists "queue: kind/severity" for every problem.
func problemKinds(r *Report) []string {
	out := []string{}
	for _, v := range r.Vhosts {
		for _, q := range v.Queues {
			for _, p := range q.Problems {
				out = append(out, fmt.Sprintf("%s: %s/%s", q.Name, p.Kind, p.Severity))
			}
		}
	}
	return out
}

func TestBuildProblems(t *testing.T) {
	all := func(rows ...broker.QueueActivity) []broker.QueueActivity {
		base := map[string]broker.QueueActivity{}
		for _, n := range []string{"orders.shipping", "orders.shipping.dlq", "orders.shipping.retry.10s", "idle"} {
			base[n] = running(n, 0, 0)
		}
		base["events"] = broker.QueueActivity{Name: "events", Type: "stream", State: "running", Known: true}
		for _, r := range rows {
			base[r.Name] = r
		}
		var out []broker.QueueActivity
		for _, r := range base {
			out = append(out, r)
		}
		return out
	}
	drop := func(list []broker.QueueActivity, name string) []broker.QueueActivity {
		var out []broker.QueueActivity
		for _, a := range list {
			if a.Name != name {
				out = append(out, a)
			}
		}
		return out
	}
	tests := []struct {
		name     string
		live     map[string][]broker.QueueActivity
		strict   bool
		want     []string
		wantOK   bool
		failWith string
	}{
		{name: "all quiet", live: map[string][]broker.QueueActivity{"/": all()}, want: []string{}, wantOK: true},
		{
			name:     "a DLQ holding dead letters is an alert",
			live:     map[string][]broker.QueueActivity{"/": all(running("orders.shipping.dlq", 3, 0))},
			want:     []string{"orders.shipping.dlq: dead-letters/alert"},
			failWith: `queue "orders.shipping.dlq" in vhost "/": DLQ holds 3 dead letters (from orders.shipping)`,
		},
		{
			name:     "deeper than alert.max_depth is an alert",
			live:     map[string][]broker.QueueActivity{"/": all(running("orders.shipping", 101, 4))},
			want:     []string{"orders.shipping: over-max-depth/alert"},
			failWith: "depth 101 > alert.max_depth 100",
		},
		{
			name:   "exactly max_depth is fine",
			live:   map[string][]broker.QueueActivity{"/": all(running("orders.shipping", 100, 4))},
			want:   []string{},
			wantOK: true,
		},
		{
			name:   "messages with no consumer is a warning that passes the check",
			live:   map[string][]broker.QueueActivity{"/": all(running("idle", 12, 0))},
			want:   []string{"idle: no-consumers/warning"},
			wantOK: true,
		},
		{
			name:     "with strict a warning fails the check",
			live:     map[string][]broker.QueueActivity{"/": all(running("idle", 12, 0))},
			strict:   true,
			want:     []string{"idle: no-consumers/warning"},
			failWith: "12 messages, no consumers",
		},
		{
			name: "delay tiers, streams and DLQs hold messages without consumers by design",
			live: map[string][]broker.QueueActivity{"/": all(
				running("orders.shipping.retry.10s", 5, 0),
				broker.QueueActivity{Name: "events", Type: "stream", State: "running", Known: true, Messages: 1000})},
			strict: true,
			want:   []string{},
			wantOK: true,
		},
		{
			name: "dead letters waiting for the dead-letter exchange are no consumer's",
			live: map[string][]broker.QueueActivity{"/": all(
				broker.QueueActivity{Name: "orders.shipping", Type: "quorum", State: "running", Known: true, Messages: 3, DeadLettering: ptr(3)})},
			strict:   true,
			want:     []string{"orders.shipping: dead-lettering/warning"},
			failWith: "3 dead letters waiting for its dead-letter exchange",
		},
		{
			name: "beside dead letters waiting for the dead-letter exchange, only the others want a consumer",
			live: map[string][]broker.QueueActivity{"/": all(
				broker.QueueActivity{Name: "orders.shipping", Type: "quorum", State: "running", Known: true, Messages: 5, Ready: 2, DeadLettering: ptr(3)})},
			strict:   true,
			want:     []string{"orders.shipping: dead-lettering/warning", "orders.shipping: no-consumers/warning"},
			failWith: `queue "orders.shipping" in vhost "/": 2 messages, no consumers`,
		},
		{
			name: "messages held back for a delayed retry want a consumer when their wait ends",
			live: map[string][]broker.QueueActivity{"/": all(
				broker.QueueActivity{Name: "orders.shipping", Type: "quorum", State: "running", Known: true, Messages: 4, Ready: 1, Delayed: ptr(3), DeadLettering: ptr(0)})},
			strict:   true,
			want:     []string{"orders.shipping: no-consumers/warning"},
			failWith: `queue "orders.shipping" in vhost "/": 4 messages, no consumers`,
		},
		{
			name:     "a declared queue missing on the broker is an alert",
			live:     map[string][]broker.QueueActivity{"/": drop(all(), "idle")},
			want:     []string{"idle: missing/alert"},
			failWith: `queue "idle" in vhost "/": missing on the broker (run mqctl apply)`,
		},
		{
			name:     "a missing vhost fails once, naming it",
			live:     map[string][]broker.QueueActivity{},
			want:     []string{"events: missing/alert", "idle: missing/alert", "orders.shipping: missing/alert", "orders.shipping.dlq: missing/alert", "orders.shipping.retry.10s: missing/alert"},
			failWith: `vhost "/" is missing on the broker, and with it 5 queues the file declares (run mqctl apply)`,
		},
		{
			name: "statistics not reported yet are no problem",
			live: map[string][]broker.QueueActivity{"/": all(broker.QueueActivity{Name: "orders.shipping.dlq", Type: "classic", State: "running"})},
			want: []string{}, wantOK: true,
		},
		{
			name:   "a queue the broker reports down is a warning",
			live:   map[string][]broker.QueueActivity{"/": all(broker.QueueActivity{Name: "orders.shipping", Type: "quorum", State: "minority", Known: true})},
			want:   []string{"orders.shipping: not-running/warning"},
			wantOK: true,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := Build(load(t, sampleFile), tc.live, Options{Strict: tc.strict})
			if diff := cmp.Diff(tc.want, problemKinds(r)); diff != "" {
				t.Errorf("problems (-want +got):\n%s", diff)
			}
			if tc.failWith == "" {
				tc.wantOK = true
			}
			if r.OK() != tc.wantOK {
				t.Errorf("OK() = %v, want %v (failing: %q)", r.OK(), tc.wantOK, r.Failing())
			}
			if tc.failWith != "" && !strings.Contains(strings.Join(r.Failing(), "\n"), tc.failWith) {
				t.Errorf("failing = %q, want one containing %q", r.Failing(), tc.failWith)
			}
		})
	}
}

// fakeLister answers from a script of listings per vhost; the last one
// repeats.
type fakeLister struct {
	lists map[string][][]broker.QueueActivity
	errs  map[string]error
	calls map[string]int
}

func (f *fakeLister) ListQueueActivity(_ context.Context, vhost string) ([]broker.QueueActivity, error) {
	if f.calls == nil {
		f.calls = map[string]int{}
	}
	f.calls[vhost]++
	if err := f.errs[vhost]; err != nil {
		return nil, err
	}
	l := f.lists[vhost]
	i := min(f.calls[vhost], len(l)) - 1
	return l[i], nil
}

func TestCollectWaitsForStatistics(t *testing.T) {
	top := load(t, "queues:\n  q: {}\n")
	f := &fakeLister{lists: map[string][][]broker.QueueActivity{"/": {
		{{Name: "q", State: "running"}},
		{{Name: "q", State: "running"}},
		{running("q", 7, 0)},
	}}}
	r, err := Collect(context.Background(), top, f, Options{StatsWait: time.Minute, Poll: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if q := r.Vhosts[0].Queues[0]; !q.Known || q.Messages != 7 {
		t.Errorf("queue = %+v, want the statistics of the third listing", q)
	}
	if f.calls["/"] != 3 {
		t.Errorf("listed %d times, want 3", f.calls["/"])
	}
}

func TestCollectGivesUpOnStatistics(t *testing.T) {
	top := load(t, "queues:\n  q: {}\n")
	f := &fakeLister{lists: map[string][][]broker.QueueActivity{"/": {{{Name: "q", State: "running"}}}}}
	r, err := Collect(context.Background(), top, f, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if q := r.Vhosts[0].Queues[0]; !q.Present || q.Known {
		t.Errorf("queue = %+v, want present without statistics", q)
	}
	if f.calls["/"] != 1 {
		t.Errorf("listed %d times, want 1 (no waiting without StatsWait)", f.calls["/"])
	}
}

func TestCollectErrors(t *testing.T) {
	top := load(t, "queues:\n  q: {}\n")
	missing := &fakeLister{errs: map[string]error{"/": fmt.Errorf("list queues: %w", broker.ErrVhostNotFound)}}
	r, err := Collect(context.Background(), top, missing, Options{})
	if err != nil {
		t.Fatalf("a missing vhost is a finding, not an error: %v", err)
	}
	if !r.Vhosts[0].Missing || r.OK() {
		t.Errorf("report = %+v, want the vhost missing and the check failing", r.Vhosts[0])
	}

	boom := errors.New("connection refused")
	_, err = Collect(context.Background(), top, &fakeLister{errs: map[string]error{"/": boom}}, Options{})
	if !errors.Is(err, boom) {
		t.Errorf("err = %v, want the lister's error", err)
	}
}

// heldFile has quorum queues that dead-letter at least once: work-alo to
// an exchange with no binding for its dead-letter routing key (a
// tester's), lost-dlx to an exchange the file does not declare, and
// routed to a DLQ.
const heldFile = `exchanges:
  alo.dlx: { type: direct }
  jobs.dlx: { type: direct }
queues:
  work-alo:
    type: quorum
    arguments:
      x-dead-letter-exchange: alo.dlx
      x-dead-letter-routing-key: nowhere
      x-dead-letter-strategy: at-least-once
      x-overflow: reject-publish
      x-delivery-limit: 2
  lost-dlx:
    type: quorum
    arguments:
      x-dead-letter-exchange: no.such.dlx
      x-dead-letter-strategy: at-least-once
      x-overflow: reject-publish
  routed:
    type: quorum
    dead_letter: { exchange: jobs.dlx, queue: routed.dlq }
    arguments:
      x-dead-letter-strategy: at-least-once
      x-overflow: reject-publish
`

// held is a quorum queue holding only dead letters for its dead-letter
// exchange.
func held(name string, n int64) broker.QueueActivity {
	return broker.QueueActivity{Name: name, Type: "quorum", State: "running", Known: true, Messages: n, DeadLettering: ptr(n), Delayed: ptr(0)}
}

// TestDeadLettersRoutedNowhere: dead letters a queue keeps because the
// file's dead-letter wiring routes them to no queue are dead letters
// outside any DLQ, there until the wiring changes: an alert (whatever the
// file's lint settings say of the rules), whose message names the fix for
// the queue's case. Dead letters the wiring routes to a DLQ are on their
// way (or the DLQ refuses them): a warning.
func TestDeadLettersRoutedNowhere(t *testing.T) {
	top := load(t, heldFile)
	top.Lint.Rules = map[string]string{"MQ102": "off", "MQ103": "off"} // lint's business, not status's
	live := map[string][]broker.QueueActivity{"/": {held("work-alo", 3), held("lost-dlx", 2), held("routed", 1), running("routed.dlq", 0, 0)}}
	r := Build(top, live, Options{})
	want := []string{"lost-dlx: dead-lettering/alert", "routed: dead-lettering/warning", "work-alo: dead-lettering/alert"}
	if diff := cmp.Diff(want, problemKinds(r)); diff != "" {
		t.Errorf("problems (-want +got):\n%s", diff)
	}
	if r.OK() {
		t.Error("OK() = true, want the check failing on dead letters outside any DLQ")
	}
	failing := strings.Join(r.Failing(), "\n")
	for _, want := range []string{
		`queue "work-alo" in vhost "/": 3 dead letters outside any DLQ (MQ103): `,
		`Bind a DLQ to exchange "alo.dlx" for "nowhere" (dead_letter.queue does this), or set x-dead-letter-routing-key to a key that is bound`,
		`queue "lost-dlx" in vhost "/": 2 dead letters outside any DLQ (MQ102): `,
		`Declare exchange "no.such.dlx" and bind a DLQ to it, or correct the exchange name`,
	} {
		if !strings.Contains(failing, want) {
			t.Errorf("failing lacks %q:\n%s", want, failing)
		}
	}
	if strings.Contains(failing, `"routed"`) {
		t.Errorf("dead letters on their way to a DLQ fail the check:\n%s", failing)
	}

	// Once a DLQ is bound for the key, they are on their way.
	fixed := load(t, strings.Replace(heldFile, "queues:\n", "queues:\n  alo.dlq: { bindings: [{ exchange: alo.dlx, routing_key: nowhere }] }\n", 1))
	r = Build(fixed, map[string][]broker.QueueActivity{"/": {held("work-alo", 3)}}, Options{})
	if got := problemKinds(r); !slices.Contains(got, "work-alo: dead-lettering/warning") {
		t.Errorf("problems with a DLQ bound for the key: %q, want work-alo's a warning", got)
	}
}

// TestNodeDown: what status says of a queue on a node that is down, as
// RabbitMQ reports it while one of three nodes is stopped (4.3.6, seen
// on the cluster of scripts/cluster; internal/testcluster checks the same
// end to end): a classic queue on it is listed with its node and state
// "down", no statistics; a quorum queue or stream without a majority
// "minority" (3.10: no state at all), its members and those online; one
// that keeps its majority "running" with the member down left out of
// online. Each row names the node or the members down, never "no
// statistics yet", and Collect does not wait for statistics that cannot
// come while the node is down.
func TestNodeDown(t *testing.T) {
	c1, c2, c3 := "rabbit@c1", "rabbit@c2", "rabbit@c3"
	file := `queues:
  q: {}
`
	for _, tc := range []struct {
		name        string
		row         broker.QueueActivity
		want        string // the problem, "" for none
		kind        Kind
		unreachable bool
	}{
		{
			name:        "classic queue on the node down",
			row:         broker.QueueActivity{Name: "q", Type: "classic", State: "down", Node: c1},
			want:        "its node rabbit@c1 is down: the queue and its messages (not counted) wait on that node's disk until it is back, and no client can publish to it or consume from it meanwhile",
			kind:        KindNotRunning,
			unreachable: true,
		},
		{
			name:        "quorum queue without a majority (4.x)",
			row:         broker.QueueActivity{Name: "q", Type: "quorum", State: "minority", Node: c1, Members: []string{c1, c2}, Online: []string{c2}},
			want:        "1 of its 2 members online (down: rabbit@c1), no majority: it takes and delivers no message, and its messages (not counted) wait, until a majority of its members is back",
			kind:        KindNotRunning,
			unreachable: true,
		},
		{
			name:        "quorum queue without a majority (3.10: no state)",
			row:         broker.QueueActivity{Name: "q", Type: "quorum", Members: []string{c1, c2}, Online: []string{c2}},
			want:        "1 of its 2 members online (down: rabbit@c1), no majority: it takes and delivers no message, and its messages (not counted) wait, until a majority of its members is back",
			kind:        KindNotRunning,
			unreachable: true,
		},
		{
			name:        "stream said minority before its members online catch up",
			row:         broker.QueueActivity{Name: "q", Type: "stream", State: "minority", Known: true, Messages: 1, Members: []string{c1, c2}, Online: []string{c1, c2}},
			want:        "without a majority of its 2 members online: it takes no message, and its messages wait, until a majority of its members is back",
			kind:        KindNotRunning,
			unreachable: true,
		},
		{
			name: "quorum queue with a member down keeps its majority",
			row:  broker.QueueActivity{Name: "q", Type: "quorum", State: "running", Known: true, Members: []string{c1, c2, c3}, Online: []string{c2, c3}},
			want: "2 of its 3 members online (down: rabbit@c1): it runs, but loses its majority if one more goes down",
			kind: KindMemberDown,
		},
		{
			name: "quorum queue of 5 with a member down",
			row:  broker.QueueActivity{Name: "q", Type: "quorum", State: "running", Known: true, Members: []string{c1, c2, c3, "rabbit@c4", "rabbit@c5"}, Online: []string{c2, c3, "rabbit@c4", "rabbit@c5"}},
			want: "4 of its 5 members online (down: rabbit@c1): it runs, but loses its majority if 2 more go down",
			kind: KindMemberDown,
		},
		{
			name: "quorum queue with a member's Raft server stopped on a node that runs (3.10)",
			row:  broker.QueueActivity{Name: "q", Type: "quorum", Known: true, Members: []string{c1, c2, c3}, Online: []string{c1, c2, c3}, NoServer: []string{c1}},
			want: `2 of its 3 members run its Raft server (none on rabbit@c1, whose node runs): it runs, but loses its majority if one more goes down; mqctl apply does not repair it: start its Raft servers again, which keeps what their logs hold (rabbitmqctl eval '{ok,Q}=rabbit_amqqueue:lookup(rabbit_misc:r(<<"/"/utf8>>,queue,<<"q"/utf8>>)), [rabbit_quorum_queue:restart_server({element(1,amqqueue:get_pid(Q)),Node}) || Node <- rabbit_amqqueue:get_quorum_nodes(Q)].': ok for each member it starts, {error,{already_started,…}} for one that runs)`,
			kind: KindMemberDown,
		},
		{
			name: "quorum queue with two Raft servers stopped, a node down (3.10)",
			row:  broker.QueueActivity{Name: "q", Type: "quorum", Known: true, Members: []string{c1, c2, c3}, Online: []string{c1, c2}, NoServer: []string{c1}},
			want: `1 of its 3 members run its Raft server (none on rabbit@c1, whose node runs; down: rabbit@c3), no majority: it takes and delivers no message until a majority runs again; mqctl apply does not repair it: start its Raft servers again, which keeps what their logs hold (rabbitmqctl eval '{ok,Q}=rabbit_amqqueue:lookup(rabbit_misc:r(<<"/"/utf8>>,queue,<<"q"/utf8>>)), [rabbit_quorum_queue:restart_server({element(1,amqqueue:get_pid(Q)),Node}) || Node <- rabbit_amqqueue:get_quorum_nodes(Q)].': ok for each member it starts, {error,{already_started,…}} for one that runs)`,
			kind: KindNotRunning,
		},
		{
			name: "every member online",
			row:  broker.QueueActivity{Name: "q", Type: "quorum", State: "running", Known: true, Members: []string{c1, c2, c3}, Online: []string{c1, c2, c3}},
		},
		{
			name: "classic queue on a running node",
			row:  broker.QueueActivity{Name: "q", Type: "classic", State: "running", Known: true, Node: c2},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := &fakeLister{lists: map[string][][]broker.QueueActivity{"/": {{tc.row}}}}
			r, err := Collect(context.Background(), load(t, file), f, Options{StatsWait: time.Hour, Poll: time.Millisecond})
			if err != nil {
				t.Fatal(err)
			}
			if f.calls["/"] != 1 {
				t.Errorf("listed %d times, want once: no statistics come while the node is down", f.calls["/"])
			}
			q := r.Vhosts[0].Queues[0]
			var got []string
			for _, p := range q.Problems {
				got = append(got, fmt.Sprintf("%s/%s: %s", p.Kind, p.Severity, p.Message))
			}
			var want []string
			if tc.want != "" {
				want = []string{fmt.Sprintf("%s/%s: %s", tc.kind, Warning, tc.want)}
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("problems (-want +got):\n%s", diff)
			}
			if q.Unreachable != tc.unreachable {
				t.Errorf("Unreachable = %v, want %v", q.Unreachable, tc.unreachable)
			}
			var text strings.Builder
			if err := WriteText(&text, r, TextOptions{}); err != nil {
				t.Fatal(err)
			}
			if tc.unreachable && strings.Contains(text.String(), "no statistics from the broker yet") {
				t.Errorf("a queue on a node that is down reads as one declared a moment ago:\n%s", text.String())
			}
			var js strings.Builder
			if err := WriteJSON(&js, r); err != nil {
				t.Fatal(err)
			}
			if len(tc.row.Members) > 0 && !strings.Contains(js.String(), `"online": [`) {
				t.Errorf("the JSON status does not list the members online:\n%s", js.String())
			}
		})
	}
}

// TestStoppedQuorumQueue: a quorum queue no Raft server runs for is an
// alert, whatever the listing says (running, with statistics or none), in
// place of the listing's state; its advice follows what its log holds:
// delete and apply again only where it holds nothing.
func TestStoppedQuorumQueue(t *testing.T) {
	top := load(t, "queues:\n  q: { type: quorum }\n")
	for _, c := range []struct {
		name    string
		row     broker.QueueActivity
		stopped broker.Stopped
		want    []string // in the problem's message
		not     []string
	}{
		{"no log, no statistics", broker.QueueActivity{Name: "q", Type: "quorum", State: "running"},
			broker.Stopped{Log: broker.LogNone, How: "x"},
			[]string{"no Raft server runs for it", "holds nothing", "rabbitmqctl delete_queue --vhost / q", "run mqctl apply"}, []string{"Do not delete"}},
		{"log kept", broker.QueueActivity{Name: "q", Type: "quorum", State: "running", Known: true, Messages: 3, Ready: 3},
			broker.Stopped{Log: broker.LogKept, How: "x"},
			[]string{"3 messages when it last counted", "Do not delete it", "restart_server"}, []string{"delete_queue"}},
		{"never elected", broker.QueueActivity{Name: "q", Type: "quorum", State: "running"},
			broker.Stopped{Log: broker.LogNone, Unelected: true, How: "x"},
			[]string{"no leader was ever elected", "trigger_election", "holds nothing"}, []string{"delete_queue", "restart_server"}},
		{"log unknown, listed down (3.10)", broker.QueueActivity{Name: "q", Type: "quorum", State: "down", Known: true},
			broker.Stopped{Log: broker.LogUnknown, How: "x"},
			[]string{"restart_server", "name_not_registered", "delete_queue"}, []string{"reports the queue down"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := Build(top, map[string][]broker.QueueActivity{"/": {c.row}}, Options{Stopped: map[string]map[string]broker.Stopped{"/": {"q": c.stopped}}})
			want := "q: no-raft-server/alert"
			if c.stopped.Unelected {
				want = "q: no-leader/alert"
			}
			if got := problemKinds(r); !slices.Equal(got, []string{want}) {
				t.Fatalf("problems %v, want only %s", got, want)
			}
			if r.OK() {
				t.Error("the check passes; want it to fail")
			}
			msg := r.Vhosts[0].Queues[0].Problems[0].Message
			for _, w := range c.want {
				if !strings.Contains(msg, w) {
					t.Errorf("message lacks %q: %s", w, msg)
				}
			}
			for _, w := range c.not {
				if strings.Contains(msg, w) {
					t.Errorf("message has %q: %s", w, msg)
				}
			}
			var b strings.Builder
			if err := WriteText(&b, r, TextOptions{}); err != nil {
				t.Fatal(err)
			}
			if strings.Contains(b.String(), "no statistics from the broker yet") {
				t.Errorf("text waits for statistics that never come:\n%s", b.String())
			}
		})
	}
}
