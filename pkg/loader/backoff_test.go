package loader

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/mqctl/mqctl/pkg/topology"
)

// retry.backoff expands into the queue's own arguments: no queue is added.
func TestRetryBackoff(t *testing.T) {
	top := mustLoad(t, vhostFile(`exchanges:
  jobs.dlx: {type: direct}
queues:
  jobs:
    type: quorum
    dead_letter: {exchange: jobs.dlx, queue: jobs.dlq}
    retry:
      backoff: {min: 1s, max: 1m}
      attempts: 5
  fixed:
    type: quorum
    retry: {backoff: {min: 250}, when: all}
  returned:
    type: quorum
    delivery_limit: 2
    arguments: {x-delayed-retry-type: returned, x-delivery-limit: 2}
    retry: {backoff: {min: "${MIN}", max: 2h}, when: returned, attempts: 3}
`), "MIN", "30s")
	v := top.Vhosts["/"]
	if diff := cmp.Diff([]string{"fixed", "jobs", "jobs.dlq", "returned"}, v.QueueNames()); diff != "" {
		t.Errorf("queues (-want +got):\n%s", diff)
	}
	tests := []struct {
		queue   string
		args    topology.Args
		backoff topology.Backoff
		pos     string
	}{
		{"jobs", topology.Args{
			"x-dead-letter-exchange": "jobs.dlx", "x-dead-letter-routing-key": "jobs",
			"x-delayed-retry-type": "failed", "x-delayed-retry-min": int64(1000), "x-delayed-retry-max": int64(60000),
			"x-delivery-limit": int64(4),
		}, topology.Backoff{MinMS: 1000, MaxMS: 60000, On: "failed", Attempts: 5}, "t.yaml:11:11"},
		// No max: the broker takes min as max; no attempts: no limit set.
		{"fixed", topology.Args{"x-delayed-retry-type": "all", "x-delayed-retry-min": int64(250)},
			topology.Backoff{MinMS: 250, On: "all"}, "t.yaml:15:17"},
		// The same values set twice agree.
		{"returned", topology.Args{"x-delayed-retry-type": "returned", "x-delayed-retry-min": int64(30000), "x-delayed-retry-max": int64(7200000), "x-delivery-limit": int64(2)},
			topology.Backoff{MinMS: 30000, MaxMS: 7200000, On: "returned", Attempts: 3}, "t.yaml:20:17"},
	}
	for _, tt := range tests {
		q := queueOf(t, top, tt.queue)
		if diff := cmp.Diff(tt.args, q.Arguments); diff != "" {
			t.Errorf("%s arguments (-want +got):\n%s", tt.queue, diff)
		}
		if q.Backoff == nil {
			t.Errorf("%s: Backoff not set", tt.queue)
			continue
		}
		if got := q.Backoff.Pos.String(); got != tt.pos {
			t.Errorf("%s: Backoff.Pos = %s, want %s (the backoff key)", tt.queue, got, tt.pos)
		}
		got := *q.Backoff
		got.Pos = topology.Pos{}
		if diff := cmp.Diff(tt.backoff, got); diff != "" {
			t.Errorf("%s backoff (-want +got):\n%s", tt.queue, diff)
		}
		if q.Role != topology.RoleWorking {
			t.Errorf("%s: role %s", tt.queue, q.Role)
		}
	}
	if q := queueOf(t, top, "jobs.dlq"); q.Backoff != nil || len(q.Arguments) != 0 {
		t.Errorf("the DLQ inherits no retry: %+v", q)
	}
}

// retry.delays expands as it always did, and says nothing of backoff.
func TestRetryDelaysHaveNoBackoff(t *testing.T) {
	top := mustLoad(t, vhostFile(`queues:
  q:
    type: quorum
    retry: {delays: [10s]}
`))
	v := top.Vhosts["/"]
	if q := v.Queues["q"]; q.Backoff != nil || len(q.Arguments) != 0 {
		t.Errorf("q = %+v", q)
	}
	if _, ok := v.Queues["q.retry.10s"]; !ok {
		t.Errorf("queues: %v", v.QueueNames())
	}
}

// A default's retry.backoff applies to each queue; the queue type is
// checked on each queue, not on the default (whose type is the vhost's).
func TestRetryBackoffInDefaults(t *testing.T) {
	top := mustLoad(t, vhostFile(`defaults:
  queue:
    type: quorum
    retry: {backoff: {min: 5s, max: 1m}, attempts: 3}
queues:
  a:
  b: {retry: {delays: [10s]}}
  c: {retry: ~}
`))
	v := top.Vhosts["/"]
	if diff := cmp.Diff([]string{"a", "b", "b.retry.10s", "c"}, v.QueueNames()); diff != "" {
		t.Errorf("queues (-want +got):\n%s", diff)
	}
	if q := v.Queues["a"]; q.Backoff == nil || q.Arguments["x-delivery-limit"] != int64(2) {
		t.Errorf("a = %+v", q)
	}
	for _, n := range []string{"b", "c"} {
		if q := v.Queues[n]; q.Backoff != nil || len(q.Arguments) != 0 {
			t.Errorf("%s replaces the default's retry: %+v", n, q)
		}
	}

	// The default on classic queues: an error per queue that takes it.
	_, err := LoadBytes("t.yaml", []byte(vhostFile(`defaults:
  queue:
    retry: {backoff: {min: 5s}}
queues:
  a: {type: quorum}
  b:
`)), Options{})
	got := errorLines(err)
	if strings.Count(got, "\n") != 0 || !strings.Contains(got, `queue "b": retry.backoff: the broker's delayed retry is quorum queues' own, and this is a classic queue`) {
		t.Errorf("errors:\n%s", got)
	}
}

// An ignore comment on retry silences the queue's findings: with backoff
// the queue itself waits.
func TestRetryBackoffIgnore(t *testing.T) {
	top := mustLoad(t, vhostFile(`queues:
  q:
    type: quorum
    retry: # mqctl:ignore MQ203
      backoff: {min: 1s}
  t:
    type: quorum
    retry: # mqctl:ignore MQ201
      delays: [1s]
`))
	v := top.Vhosts["/"]
	if q := v.Queues["q"]; !q.Ignores("MQ203") {
		t.Errorf("q ignores %v", q.Ignore)
	}
	if q := v.Queues["t"]; q.Ignores("MQ201") || !v.Queues["t.retry.1s"].Ignores("MQ201") {
		t.Errorf("with delays the comment is the tiers': t ignores %v, t.retry.1s %v", q.Ignore, v.Queues["t.retry.1s"].Ignore)
	}
}

func TestRetryBackoffErrors(t *testing.T) {
	tests := []struct {
		name, body string
		want       []string // one line each, in order
	}{
		{"delays and backoff", `queues:
  q:
    type: quorum
    retry:
      delays: [10s]
      backoff: {min: 1s}`, []string{
			`t.yaml:9:11: queue "q": retry: sets both delays and backoff (delays at t.yaml:8:11): they are two ways to make a retry wait, and a queue uses one (keep one: delays: [10s, 1m, …] declares a delay queue per tier that the consumer republishes to, for any queue type on any RabbitMQ version; backoff: {min: …, max: …} makes a quorum queue delay its own returned messages, with no extra queues, from RabbitMQ 4.3)`}},
		{"backoff first", `queues:
  q: {type: quorum, retry: {backoff: {min: 1s}, delays: [10s]}}`, []string{
			`t.yaml:5:53: queue "q": retry: sets both delays and backoff (backoff at t.yaml:5:33)`}},
		{"classic queue", `queues:
  q:
    retry: {backoff: {min: 1s}}`, []string{
			`t.yaml:6:17: queue "q": retry.backoff: the broker's delayed retry is quorum queues' own, and this is a classic queue: RabbitMQ 4.3 refuses x-delayed-retry-* on it, earlier versions store them and never delay a retry (declare the queue with type: quorum, or use retry.delays: [10s, 1m, …], delay queues, which work for every queue type and RabbitMQ version)`}},
		{"stream", `queues:
  q: {type: stream, retry: {backoff: {min: 1s}}}`, []string{
			`t.yaml:5:33: queue "q": retry.backoff: the broker's delayed retry is quorum queues' own, and this is a stream queue`}},
		{"vhost default queue type", `default_queue_type: quorum
queues:
  q: {retry: {backoff: {min: 1s}}}
  c: {type: classic, retry: {backoff: {min: 1s}}}`, []string{
			`t.yaml:7:34: queue "c": retry.backoff: the broker's delayed retry is quorum queues' own, and this is a classic queue`}},
		{"min missing", `queues:
  q: {type: quorum, retry: {backoff: {max: 1m}}}`, []string{
			`t.yaml:5:42: queue "q": retry.backoff: missing required field "min" (add min: <the first wait, e.g. 1s>)`}},
		{"max below min", `queues:
  q: {type: quorum, retry: {backoff: {min: 10s, max: 5s}}}`, []string{
			`t.yaml:5:58: queue "q": retry.backoff.max 5s is below min 10s: every retry would wait 5s and never grow (make max at least min, or leave it out for a fixed wait of min)`}},
		{"bad durations", `queues:
  q: {type: quorum, retry: {backoff: {min: 0, max: soon}}}`, []string{
			`t.yaml:5:48: queue "q": retry.backoff.min: 0 is too small (the minimum is 1ms)`,
			`t.yaml:5:56: queue "q": retry.backoff.max: invalid duration "soon"`}},
		{"unknown backoff field", `queues:
  q: {type: quorum, retry: {backoff: {min: 1s, factor: 2}}}`, []string{
			`t.yaml:5:52: queue "q": retry.backoff: unknown field "factor"`}},
		{"retry's fields inside backoff", `queues:
  q: {type: quorum, retry: {backoff: {min: 1s, attempts: 5, when: all}}}`, []string{
			`t.yaml:5:52: queue "q": retry.backoff: unknown field "attempts" (attempts is a field of retry, beside backoff: retry: {backoff: {min: 10s, max: 10m}, attempts: 5})`,
			`t.yaml:5:65: queue "q": retry.backoff: unknown field "when" (when is a field of retry, beside backoff: retry: {backoff: {min: 10s, max: 10m}, when: failed})`}},
		{"a kind of growth", `queues:
  q: {type: quorum, retry: {backoff: {type: exponential, min: 1s}}}`, []string{
			`t.yaml:5:43: queue "q": retry.backoff: unknown field "type" (RabbitMQ's delayed retry has no kinds of growth: a message waits min × its failed deliveries, at most max; which returns wait (x-delayed-retry-type) is retry's when: failed (the default), returned or all, beside backoff)`}},
		{"backoff not a mapping", `queues:
  q: {type: quorum, retry: {backoff: 10s}}`, []string{
			`t.yaml:5:42: queue "q": retry.backoff: expected a mapping, got string "10s" (fields: min, max)`}},
		{"bad when", `queues:
  q: {type: quorum, retry: {backoff: {min: 1s}, when: nacked}}`, []string{
			`t.yaml:5:59: queue "q": retry.when: invalid value "nacked" (expected one of: failed, returned, all)`}},
		{"zero attempts", `queues:
  q: {type: quorum, retry: {backoff: {min: 1s}, attempts: 0}}`, []string{
			`t.yaml:5:63: queue "q": retry.attempts: 0 is out of range`}},
		{"when and attempts without backoff", `queues:
  q: {type: quorum, retry: {when: all, attempts: 3}}`, []string{
			`t.yaml:5:33: queue "q": retry.when belongs to retry.backoff, which is not set (add backoff: {min: 1s, max: 1m} to have the broker delay returned messages, on a quorum queue from RabbitMQ 4.3, or remove when)`,
			`t.yaml:5:44: queue "q": retry.attempts belongs to retry.backoff, which is not set`}},
		{"attempts with delays", `queues:
  q: {type: quorum, retry: {delays: [10s], attempts: 3}}`, []string{
			`t.yaml:5:48: queue "q": retry.attempts belongs to retry.backoff, which is not set (with delays, the consumer republishes each retry and decides when to give up, from the x-death count of the tier; to bound redeliveries of a quorum queue itself, set delivery_limit)`}},
		{"attempts against delivery_limit", `queues:
  q:
    type: quorum
    delivery_limit: 5
    retry: {backoff: {min: 1s}, attempts: 5}`, []string{
			`t.yaml:8:47: queue "q": retry.attempts 5 dead-letters a message at its 5th failed delivery, which is x-delivery-limit 4, but delivery_limit is 5 at t.yaml:7:25 (set it once: remove delivery_limit, which retry.attempts sets, or make it attempts - 1 = 4)`}},
		{"attempts against the raw argument", `queues:
  q:
    type: quorum
    arguments: {x-delivery-limit: 10}
    retry: {backoff: {min: 1s}, attempts: 1}`, []string{
			`t.yaml:8:47: queue "q": retry.attempts 1 dead-letters a message at its 1st failed delivery, which is x-delivery-limit 0, but arguments.x-delivery-limit is 10 at t.yaml:7:39 (set it once: remove arguments.x-delivery-limit, which retry.attempts sets, or make it attempts - 1 = 0)`}},
		{"when against the raw argument", `queues:
  q:
    type: quorum
    arguments: {x-delayed-retry-type: all}
    retry: {backoff: {min: 1s}}`, []string{
			`t.yaml:8:17: queue "q": retry.backoff delays failed deliveries (when: failed, the default), but arguments.x-delayed-retry-type is "all" at t.yaml:7:43 (write the type you mean as retry.when (failed, returned or all) and remove arguments.x-delayed-retry-type)`}},
		{"min against the raw argument", `queues:
  q:
    type: quorum
    arguments: {x-delayed-retry-min: 500}
    retry: {backoff: {min: 1s}}`, []string{
			`t.yaml:8:32: queue "q": retry.backoff.min 1000 conflicts with arguments.x-delayed-retry-min 500 at t.yaml:7:42 (set it once: remove retry.backoff.min or arguments.x-delayed-retry-min)`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := LoadBytes("t.yaml", []byte(vhostFile(tt.body)), Options{})
			if err == nil {
				t.Fatalf("loaded without error:\n%s", vhostFile(tt.body))
			}
			lines := strings.Split(errorLines(err), "\n")
			if len(lines) != len(tt.want) {
				t.Fatalf("%d errors, want %d:\n%s", len(lines), len(tt.want), errorLines(err))
			}
			for i, w := range tt.want {
				if !strings.HasPrefix(lines[i], w) {
					t.Errorf("error %d:\n got %s\nwant %s…", i, lines[i], w)
				}
			}
		})
	}
}
