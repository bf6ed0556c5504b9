package cli_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// The test vhost holds a working queue with a DLQ and a delay tier, a
// queue with an alert threshold, and a queue nobody consumes. Each check
// below reads a file that declares a part of it.
const (
	statusHead = `version: 1
vhosts:
  ${VHOST}:
    exchanges:
      jobs: { type: direct }
      jobs.dlx: { type: direct }
    queues:
`
	statusWork = `      work:
        bindings: [{ exchange: jobs, routing_key: work }]
        dead_letter: { exchange: jobs.dlx, queue: work.dlq }
        retry: { delays: [5s] }
`
	statusDeep = `      deep: { alert: { max_depth: 3 } }
`
	statusIdle = `      idle: {}
`
	statusFile = statusHead + statusWork + statusDeep + statusIdle
)

// statusJSON is the part of `status -o json` the tests read.
type statusJSON struct {
	FormatVersion string `json:"format_version"`
	OK            bool   `json:"ok"`
	Vhosts        []struct {
		Name   string `json:"name"`
		Queues []struct {
			Name       string `json:"name"`
			Role       string `json:"role"`
			Present    bool   `json:"present"`
			StatsKnown bool   `json:"stats_known"`
			Messages   int64  `json:"messages"`
			Ready      int64  `json:"messages_ready"`
			Consumers  int64  `json:"consumers"`
			Problems   []struct {
				Kind     string `json:"kind"`
				Severity string `json:"severity"`
			} `json:"problems"`
		} `json:"queues"`
	} `json:"vhosts"`
}

// depths returns queue -> messages (-1: missing or no statistics).
func (s *statusJSON) depths() map[string]int64 {
	out := map[string]int64{}
	for _, v := range s.Vhosts {
		for _, q := range v.Queues {
			out[q.Name] = -1
			if q.Present && q.StatsKnown {
				out[q.Name] = q.Messages
			}
		}
	}
	return out
}

// statusUntil runs `status -o json` until the queues show the wanted
// depths (the management statistics lag by the broker's statistics
// interval), for at most 15 s.
func statusUntil(t *testing.T, h *harness, file string, want map[string]int64) *statusJSON {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for {
		r := h.run("status", "-f", file, "-o", "json")
		if r.code != 0 {
			t.Fatalf("status -o json without --check must exit 0:\n%s", r)
		}
		var s statusJSON
		if err := json.Unmarshal([]byte(r.stdout), &s); err != nil {
			t.Fatalf("status -o json is not JSON: %v\n%s", err, r)
		}
		got := s.depths()
		match := true
		for q, n := range want {
			if got[q] != n {
				match = false
			}
		}
		if match {
			return &s
		}
		if time.Now().After(deadline) {
			t.Fatalf("queues never showed depths %v; last status: %v", want, got)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// TestStatusLive applies a working queue with a DLQ and a delay tier, a
// queue with an alert threshold and a plain queue to a fresh vhost, then
// checks status and status --check before and after messages arrive.
func TestStatusLive(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.mustApply(statusFile)
	full := h.write("status.yaml", statusFile)

	// Empty queues: the check passes and the roles are named.
	s := statusUntil(t, h, full, map[string]int64{"work": 0, "work.dlq": 0, "work.retry.5s": 0, "deep": 0, "idle": 0})
	if !s.OK || s.FormatVersion != "1" {
		t.Errorf("empty queues: ok=%v format_version=%q, want true and \"1\"", s.OK, s.FormatVersion)
	}
	roles := map[string]string{}
	for _, q := range s.Vhosts[0].Queues {
		roles[q.Name] = q.Role
	}
	want := map[string]string{"work": "working", "work.dlq": "dead-letter", "work.retry.5s": "delay", "deep": "working", "idle": "working"}
	if diff := cmp.Diff(want, roles); diff != "" {
		t.Errorf("roles (-want +got):\n%s", diff)
	}
	if r := h.run("status", "-f", full, "--check"); r.code != 0 {
		t.Fatalf("status --check on empty queues must pass:\n%s", r)
	}

	// A consumer rejects one of two messages without requeue: it is
	// dead-lettered into work.dlq. deep gets 4 messages, idle 1.
	ch := h.b.Channel(t, h.vhost)
	publish(t, ch, "work", 2)
	d, ok, err := ch.Get("work", false)
	if err != nil || !ok {
		t.Fatalf("get from work: ok=%v err=%v", ok, err)
	}
	if err := d.Reject(false); err != nil {
		t.Fatal(err)
	}
	publish(t, ch, "deep", 4)
	publish(t, ch, "idle", 1)
	s = statusUntil(t, h, full, map[string]int64{"work": 1, "work.dlq": 1, "deep": 4, "idle": 1})
	if s.OK {
		t.Error("JSON ok is true while the DLQ holds a dead letter")
	}
	problems := map[string][]string{}
	for _, q := range s.Vhosts[0].Queues {
		for _, p := range q.Problems {
			problems[q.Name] = append(problems[q.Name], p.Kind+"/"+p.Severity)
		}
	}
	wantProblems := map[string][]string{
		"work":     {"no-consumers/warning"},
		"work.dlq": {"dead-letters/alert"},
		"deep":     {"over-max-depth/alert", "no-consumers/warning"},
		"idle":     {"no-consumers/warning"},
	}
	if diff := cmp.Diff(wantProblems, problems); diff != "" {
		t.Errorf("problems (-want +got):\n%s", diff)
	}

	r := h.run("status", "-f", full)
	if r.code != 0 {
		t.Errorf("status without --check must exit 0 whatever the queues hold:\n%s", r)
	}
	for _, want := range []string{"! work.dlq", "DLQ holds 1 dead letter (from work)", "! deep", "depth 4 > alert.max_depth 3", "! idle", "1 message, no consumers"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("status lacks %q:\n%s", want, r)
		}
	}

	// The DLQ holding a message fails the check, naming it.
	r = h.run("status", "-f", h.write("work.yaml", statusHead+statusWork), "--check")
	if r.code != 1 || !strings.Contains(r.stderr, `queue "work.dlq"`) || !strings.Contains(r.stderr, "DLQ holds 1 dead letter") {
		t.Errorf("status --check with a dead letter must exit 1 naming the DLQ:\n%s", r)
	}
	// So does a queue deeper than its alert.max_depth.
	r = h.run("status", "-f", h.write("deep.yaml", statusHead+statusDeep), "--check")
	if r.code != 1 || !strings.Contains(r.stderr, `queue "deep"`) || !strings.Contains(r.stderr, "depth 4 > alert.max_depth 3") {
		t.Errorf("status --check over max_depth must exit 1 naming the depth:\n%s", r)
	}
	// Messages without consumers are a warning: they fail only --strict.
	idle := h.write("idle.yaml", statusHead+statusIdle)
	if r := h.run("status", "-f", idle, "--check"); r.code != 0 || !strings.Contains(r.stdout, "1 message, no consumers") {
		t.Errorf("messages without consumers: --check must pass and warn:\n%s", r)
	}
	if r := h.run("status", "-f", idle, "--check", "--strict"); r.code != 1 || !strings.Contains(r.stderr, "no consumers") {
		t.Errorf("messages without consumers: --check --strict must exit 1:\n%s", r)
	}
	// A declared queue the broker lacks fails the check, and only it.
	r = h.run("status", "-f", h.write("added.yaml", statusHead+statusIdle+"      added: {}\n"), "--check")
	if r.code != 1 || !strings.Contains(r.stderr, `queue "added"`) || !strings.Contains(r.stderr, "missing on the broker (run mqctl apply)") ||
		strings.Contains(r.stderr, `queue "idle"`) {
		t.Errorf("a declared queue missing on the broker must fail --check:\n%s", r)
	}
}
