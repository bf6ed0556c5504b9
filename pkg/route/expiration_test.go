package route

import (
	"strings"
	"testing"
)

// TestParseExpiration follows rabbit_basic:parse_expiration/1 (v3.10.8,
// v4.3.5): string:to_integer/1, then rabbit_misc:check_expiry/1.
func TestParseExpiration(t *testing.T) {
	tests := []struct {
		in   string
		want int64
		err  string
	}{
		{"0", 0, ""},
		{"5000", 5000, ""},
		{"+5", 5, ""},
		{"0005", 5, ""},
		{"-0", 0, ""},
		{"315360000000", 315360000000, ""},
		{"315360000001", 0, "value_too_large"},
		{"99999999999999999999", 0, "value_too_large"},
		{"-1", 0, "value_negative"},
		{"-99999999999999999999", 0, "value_negative"},
		{"", 0, "no_integer"},
		{"abc", 0, "no_integer"},
		{"-", 0, "no_integer"},
		{"--5", 0, "no_integer"},
		{" 5", 0, "no_integer"},
		{"5s", 0, "leftover_string"},
		{"5 ", 0, "leftover_string"},
		{"1.5", 0, "leftover_string"},
	}
	for _, tc := range tests {
		got, err := ParseExpiration(tc.in)
		switch {
		case tc.err == "" && (err != nil || got != tc.want):
			t.Errorf("ParseExpiration(%q) = %d, %v; want %d", tc.in, got, err, tc.want)
		case tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)):
			t.Errorf("ParseExpiration(%q) err = %v, want %s", tc.in, err, tc.err)
		}
	}
}

func expiring(m Message, exp string) Message {
	m.Expiration = exp
	return m
}

// TestExpiresAfter: a message expires after the smaller of its expiration
// and the queue's message TTL, whichever are set; never in a stream.
func TestExpiresAfter(t *testing.T) {
	b := vhost().q("plain").q("ttl", "x-message-ttl", 60000).q("short", "x-message-ttl", 1000).
		typed("qq", "quorum").typed("s", "stream").q("by.policy").policy("ttl", "^by\\.", "queues", 0, "message-ttl", 2000)
	s := b.sim()
	tests := []struct {
		queue, exp string
		want       int64
		expires    bool
	}{
		{"plain", "", 0, false},
		{"plain", "5000", 5000, true},
		{"ttl", "", 60000, true},
		{"ttl", "5000", 5000, true},
		{"short", "5000", 1000, true},
		{"qq", "5000", 5000, true},
		{"by.policy", "5000", 2000, true},
		{"s", "5000", 0, false},
		{"plain", "bogus", 0, false},
	}
	for _, tc := range tests {
		got, ok := s.ExpiresAfter(tc.queue, expiring(msg("", tc.queue), tc.exp))
		if ok != tc.expires || got != tc.want {
			t.Errorf("ExpiresAfter(%s, expiration %q) = %d, %v; want %d, %v", tc.queue, tc.exp, got, ok, tc.want, tc.expires)
		}
		reasons := s.ReasonsFor(tc.queue, expiring(msg("", tc.queue), tc.exp))
		if hasReason := len(reasons) > 1 && reasons[1] == Expired; hasReason != tc.expires {
			t.Errorf("ReasonsFor(%s, expiration %q) = %q", tc.queue, tc.exp, reasons)
		}
	}
	if got := s.Reasons("plain"); len(got) != 1 {
		t.Errorf("Reasons(plain) = %q: without a message, only a queue TTL makes it expire", got)
	}
}

// TestExpirationDeadLetter: a dead letter loses the expiration, and the
// new x-death entry records it as original-expiration, for every reason:
// as sent up to 3.12 (rabbit_dead_letter per_msg_ttl_header/1 at v3.10.8),
// as the number read from 3.13 (mc_amqpl death_table/7 at v4.3.5). A later
// death of the same message has none to record.
func TestExpirationDeadLetter(t *testing.T) {
	b := vhost().ex("dlx", "direct").
		q("w", "x-dead-letter-exchange", "dlx", "x-dead-letter-routing-key", "park").
		q("park", "x-message-ttl", 1000, "x-dead-letter-exchange", "dlx", "x-dead-letter-routing-key", "last").
		q("last").bind("dlx", "park", "park").bind("dlx", "last", "last")
	tests := []struct {
		ver, exp string
		reason   Reason
		want     string
	}{
		{"4.3", "0005", Expired, "5"},
		{"4.0.5", "5000", Rejected, "5000"},
		{"3.10.8", "0005", Expired, "0005"},
		{"3.10.8", "5000", Rejected, "5000"},
	}
	for _, tc := range tests {
		s := b.simFor(tc.ver)
		m := expiring(msg("", "w"), tc.exp)
		dl := s.DeadLetter("w", tc.reason, m)
		wantQueues(t, dl.Result, "park")
		out := dl.Result.Message
		if out.Expiration != "" {
			t.Errorf("%s: the dead letter keeps expiration %q", tc.ver, out.Expiration)
		}
		deaths, _ := out.Headers["x-death"].([]any)
		if len(deaths) != 1 || deaths[0].(map[string]any)["original-expiration"] != tc.want {
			t.Errorf("%s %s: x-death = %v, want original-expiration %q", tc.ver, tc.reason, deaths, tc.want)
		}
		// park's own TTL expires the dead letter: its new entry records
		// no expiration, the first keeps its own.
		dl2 := s.DeadLetter("park", Expired, out)
		wantQueues(t, dl2.Result, "last")
		for _, d := range dl2.Result.Message.Headers["x-death"].([]any) {
			e := d.(map[string]any)
			_, has := e["original-expiration"]
			if has != (e["queue"] == "w") {
				t.Errorf("%s: entry %v: original-expiration only on w's", tc.ver, e)
			}
		}
	}
}

// TestTraceExpiration: route answers where a message that expires in a
// queue without a TTL goes: its expired dead letters are traced, with how
// long it waits, and the dead letter no longer expires where the queue
// has no TTL.
func TestTraceExpiration(t *testing.T) {
	b := vhost().ex("in", "direct").ex("dlx", "direct").
		q("w", "x-dead-letter-exchange", "dlx").bind("in", "w", "job").
		q("expired.jobs").bind("dlx", "expired.jobs", "job")
	tr := b.sim().Trace(expiring(msg("in", "job"), "30000"), DefaultDepth)
	if got := render(tr.Hops); got != "w{rejected>expired.jobs{rejected>DROPPED} expired>expired.jobs{rejected>DROPPED}}" {
		t.Errorf("trace = %s", got)
	}
	exp := tr.Hops[0].Next[1]
	if exp.Route.Reason != Expired || exp.ExpiresAfterMS == nil || *exp.ExpiresAfterMS != 30000 {
		t.Errorf("expired hop = %+v, want after 30000 ms", exp)
	}
	if tr.Hops[0].Next[0].ExpiresAfterMS != nil {
		t.Errorf("a rejected hop has no expiry time")
	}
	if got := render(b.sim().Trace(msg("in", "job"), DefaultDepth).Hops); got != "w{rejected>expired.jobs{rejected>DROPPED}}" {
		t.Errorf("without an expiration: trace = %s", got)
	}
	r := b.sim().Publish(expiring(msg("in", "job"), "soon"))
	wantQueues(t, r)
	if !hasProblem(r, `expiration "soon" is not valid (no_integer`) || !hasProblem(r, "RabbitMQ refuses the publish") {
		t.Errorf("problems = %q", r.Problems)
	}
}
