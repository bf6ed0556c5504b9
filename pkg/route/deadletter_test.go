package route

import (
	"strconv"
	"strings"
	"testing"
)

func TestDeadLetter(t *testing.T) {
	base := func() *vb {
		return vhost().ex("orders", "topic").ex("orders.dlx", "direct").
			q("shipping", "x-dead-letter-exchange", "orders.dlx", "x-dead-letter-routing-key", "shipping").
			q("billing", "x-dead-letter-exchange", "orders.dlx"). // no DLRK: the message's key
			q("nodlx").
			q("rkonly", "x-dead-letter-routing-key", "x").                                          // a routing key without an exchange does nothing
			q("missing", "x-dead-letter-exchange", "ghost").                                        // undeclared DLX
			q("direct", "x-dead-letter-exchange", "", "x-dead-letter-routing-key", "shipping.dlq"). // default exchange
			q("default-own-key", "x-dead-letter-exchange", "").
			q("bypolicy").q("shipping.dlq").q("created.dlq").q("unroutable", "x-dead-letter-exchange", "orders.dlx", "x-dead-letter-routing-key", "nobody").
			bind("orders.dlx", "shipping.dlq", "shipping").bind("orders.dlx", "created.dlq", "order.created").
			policy("dl", "^bypolicy$", "queues", 0, "dead-letter-exchange", "orders.dlx", "dead-letter-routing-key", "shipping")
	}
	s := base().sim()
	m := msg("orders", "order.created")
	tests := []struct {
		queue          string
		configured     bool
		exchange       string
		key            string
		keyFromMessage bool
		missing        bool
		want           []string
	}{
		{"shipping", true, "orders.dlx", "shipping", false, false, []string{"shipping.dlq"}},
		{"billing", true, "orders.dlx", "order.created", true, false, []string{"created.dlq"}},
		{"nodlx", false, "", "", false, false, nil},
		{"rkonly", false, "", "", false, false, nil},
		{"missing", true, "ghost", "order.created", true, true, nil},
		{"direct", true, "", "shipping.dlq", false, false, []string{"shipping.dlq"}},
		{"default-own-key", true, "", "order.created", true, false, nil},
		{"bypolicy", true, "orders.dlx", "shipping", false, false, []string{"shipping.dlq"}},
		{"unroutable", true, "orders.dlx", "nobody", false, false, nil},
	}
	for _, tt := range tests {
		t.Run(tt.queue, func(t *testing.T) {
			r := s.DeadLetter(tt.queue, Rejected, m)
			if r.Configured != tt.configured || r.Exchange != tt.exchange || r.RoutingKey != tt.key ||
				r.KeyFromMessage != tt.keyFromMessage || r.ExchangeMissing != tt.missing {
				t.Errorf("route = configured %v exchange %q key %q fromMessage %v missing %v; want %v %q %q %v %v",
					r.Configured, r.Exchange, r.RoutingKey, r.KeyFromMessage, r.ExchangeMissing,
					tt.configured, tt.exchange, tt.key, tt.keyFromMessage, tt.missing)
			}
			wantQueues(t, r.Result, tt.want...)
			if r.Queue != tt.queue || r.Reason != Rejected {
				t.Errorf("route names %q/%q", r.Queue, r.Reason)
			}
		})
	}
	if r := s.DeadLetter("missing", Rejected, m); !hasProblem(r.Result, `dead-letter exchange "ghost" is not declared`) {
		t.Errorf("problems = %q", r.Result.Problems)
	}
	// Found by the differential test: RabbitMQ 3.10.8 refuses to declare
	// such a queue, classic or quorum (routing_key_but_no_dlx_defined).
	const refused = "RabbitMQ refuses to declare the queue"
	if r := s.DeadLetter("rkonly", Rejected, m); !hasProblem(r.Result, refused) {
		t.Errorf("rkonly problems = %q", r.Result.Problems)
	}
	var found int
	for _, p := range s.Problems() {
		if strings.Contains(p, refused) {
			found++
		}
	}
	if found != 1 {
		t.Errorf("Problems() = %q, want one for rkonly (not bypolicy, whose routing key comes from a policy)", s.Problems())
	}
}

func TestDeadLetterHeaders(t *testing.T) {
	for _, ver := range []string{"3.10.8", "4.0.5"} {
		t.Run(ver, func(t *testing.T) { testDeadLetterHeaders(t, ver) })
	}
}

func testDeadLetterHeaders(t *testing.T, ver string) {
	s := vhost().ex("dlx", "headers").
		q("work", "x-dead-letter-exchange", "dlx", "x-dead-letter-routing-key", "k", "x-message-ttl", 1000).
		q("expired-only").q("rejected-only").
		bind("dlx", "expired-only", "", "x-match", "all-with-x", "x-first-death-reason", "expired").
		bind("dlx", "rejected-only", "", "x-match", "all-with-x", "x-first-death-reason", "rejected", "tenant", "acme").
		simFor(ver)
	m := msg("in", "key", "tenant", "acme", "CC", []any{"other"})
	r := s.DeadLetter("work", Expired, m)
	wantQueues(t, r.Result, "expired-only")
	r = s.DeadLetter("work", Rejected, m)
	wantQueues(t, r.Result, "rejected-only") // the message's own headers are kept
	h := r.Result.Message.Headers
	// A dead-letter routing key removes CC up to 3.12; 3.13+ keeps it.
	if _, kept := h["CC"]; kept != s.Version().KeepsCCWithDeadLetterRoutingKey() {
		t.Errorf("CC header kept = %v with a dead-letter routing key, want %v", kept, !kept)
	}
	if got := r.Result.Message.RoutingKeys(); !equalStrings(got, []string{"k"}) {
		t.Errorf("dead letter keys = %q, want [k]: CC no longer routes it", got)
	}
	deaths, _ := h["x-death"].([]any)
	if len(deaths) != 1 {
		t.Fatalf("x-death = %#v", h["x-death"])
	}
	d := deaths[0].(map[string]any)
	if d["queue"] != "work" || d["reason"] != "rejected" || d["exchange"] != "in" || d["count"] != int64(1) {
		t.Errorf("x-death entry = %#v", d)
	}
	if h["x-first-death-queue"] != "work" || h["x-first-death-exchange"] != "in" {
		t.Errorf("x-first-death headers = %v %v", h["x-first-death-queue"], h["x-first-death-exchange"])
	}
	// Dead-lettering again from the same queue for the same reason counts up
	// and keeps the first-death headers.
	again := s.DeadLetter("work", Rejected, r.Result.Message)
	deaths = again.Result.Message.Headers["x-death"].([]any)
	if len(deaths) != 1 || deaths[0].(map[string]any)["count"] != int64(2) {
		t.Errorf("x-death after a second rejection = %#v", deaths)
	}
	if m.Headers["x-death"] != nil {
		t.Errorf("DeadLetter changed the caller's headers")
	}
}

// Cycle detection, rabbit_dead_letter:is_cycle.
func TestDeadLetterCycles(t *testing.T) {
	s := vhost().ex("retry", "direct").
		// A queue whose expired messages come back to itself.
		q("self", "x-message-ttl", 10, "x-dead-letter-exchange", "", "x-dead-letter-routing-key", "self").
		// A work queue whose dead letters go to a delay queue that expires
		// them back into the work queue.
		q("work", "x-message-ttl", 60000, "x-dead-letter-exchange", "retry", "x-dead-letter-routing-key", "work.delay").
		q("work.delay", "x-message-ttl", 1000, "x-dead-letter-exchange", "", "x-dead-letter-routing-key", "work").
		bind("retry", "work.delay", "work.delay").
		sim()
	r := s.DeadLetter("self", Expired, msg("", "self"))
	wantQueues(t, r.Result)
	if len(r.Cycles) != 1 || r.Cycles[0] != "self" {
		t.Errorf("cycles = %q, want [self]", r.Cycles)
	}
	r = s.DeadLetter("self", Rejected, msg("", "self"))
	wantQueues(t, r.Result, "self") // a rejection is never a cycle

	// Rejected from work, expired from work.delay: the cycle has a rejection.
	toDelay := s.DeadLetter("work", Rejected, msg("", "work"))
	wantQueues(t, toDelay.Result, "work.delay")
	back := s.DeadLetter("work.delay", Expired, toDelay.Result.Message)
	wantQueues(t, back.Result, "work")
	// Expired from work, expired from work.delay: fully automatic, dropped.
	toDelay = s.DeadLetter("work", Expired, msg("", "work"))
	back = s.DeadLetter("work.delay", Expired, toDelay.Result.Message)
	wantQueues(t, back.Result)
	if len(back.Cycles) != 1 || back.Cycles[0] != "work" {
		t.Errorf("cycles = %q", back.Cycles)
	}
	// A rejection more recent than the previous death from work breaks the
	// cycle: expired from work, rejected from work.delay, then expired.
	toDelay = s.DeadLetter("work", Expired, msg("", "work"))
	rej := s.DeadLetter("work.delay", Rejected, toDelay.Result.Message)
	wantQueues(t, rej.Result, "work")
}

func TestIsDeathCycle(t *testing.T) {
	e := func(q, r string) any { return map[string]any{"queue": q, "reason": r} }
	tests := []struct {
		name   string
		queue  string
		deaths []any
		want   bool
	}{
		{"never dead-lettered from it", "a", []any{e("b", "expired")}, false},
		{"automatic self cycle", "a", []any{e("a", "expired")}, true},
		{"automatic two-queue cycle", "a", []any{e("b", "expired"), e("a", "maxlen")}, true},
		{"rejection in between", "a", []any{e("b", "rejected"), e("a", "expired")}, false},
		{"rejection at the queue itself", "a", []any{e("b", "expired"), e("a", "rejected")}, false},
		{"older rejection does not count", "a", []any{e("b", "expired"), e("a", "expired"), e("c", "rejected")}, true},
		{"foreign entry", "a", []any{"junk", e("a", "expired")}, false},
	}
	for _, tt := range tests {
		if got := isDeathCycle(tt.queue, tt.deaths); got != tt.want {
			t.Errorf("%s: isDeathCycle = %v, want %v", tt.name, got, tt.want)
		}
	}
}

func TestDeadLetterStreamAndUndeclared(t *testing.T) {
	s := vhost().typed("s", "stream", "x-dead-letter-exchange", "dlx").sim()
	if r := s.DeadLetter("s", Rejected, msg("", "s")); r.Configured || !hasProblem(r.Result, "streams do not dead-letter") {
		t.Errorf("stream route = %+v", r)
	}
	if r := s.DeadLetter("ghost", Rejected, msg("", "s")); r.Configured || !hasProblem(r.Result, `queue "ghost" is not declared`) {
		t.Errorf("undeclared route = %+v", r)
	}
}

// RabbitMQ 3.10 regroups the x-death list by (queue, reason) before each
// death (group_by_queue_and_reason), which reverses a list of two or more
// entries. Found by the differential test (internal/difftest, seed 58);
// each case checked against RabbitMQ 3.10.8.
func TestDeathHeadersOrder(t *testing.T) {
	e := func(q, r string, n int64) any { return map[string]any{"queue": q, "reason": r, "count": n} }
	tests := []struct {
		name   string
		before []any
		queue  string
		reason Reason
		want   []string // queue:reason:count, most recent first
	}{
		{"first death", nil, "a", Rejected, []string{"a:rejected:1"}},
		{"second death: prepended", []any{e("a", "rejected", 1)}, "b", Rejected, []string{"b:rejected:1", "a:rejected:1"}},
		{"third death: the earlier two swap", []any{e("b", "rejected", 1), e("a", "rejected", 1)}, "c", Rejected,
			[]string{"c:rejected:1", "a:rejected:1", "b:rejected:1"}},
		{"fourth death: reversed again", []any{e("c", "rejected", 1), e("a", "rejected", 1), e("b", "rejected", 1)}, "d", Expired,
			[]string{"d:expired:1", "b:rejected:1", "a:rejected:1", "c:rejected:1"}},
		{"same queue and reason: counted up, moved to the front, the rest reversed", []any{e("c", "rejected", 1), e("a", "expired", 1), e("b", "rejected", 1)}, "a", Expired,
			[]string{"a:expired:2", "b:rejected:1", "c:rejected:1"}},
		{"same queue, other reason: a new entry", []any{e("a", "rejected", 1), e("b", "expired", 1)}, "a", Expired,
			[]string{"a:expired:1", "b:expired:1", "a:rejected:1"}},
		{"duplicate entries are merged (first kept)", []any{e("a", "expired", 3), e("b", "rejected", 1), e("a", "expired", 1)}, "c", Rejected,
			[]string{"c:rejected:1", "b:rejected:1", "a:expired:3"}},
		{"an entry without a count counts its duplicates", []any{map[string]any{"queue": "a", "reason": "expired"}, map[string]any{"queue": "a", "reason": "expired"}}, "a", Expired,
			[]string{"a:expired:3"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := Message{Exchange: "x", RoutingKey: "k"}
			if tt.before != nil {
				m.Headers = map[string]any{"x-death": tt.before}
			}
			h := deathHeaders(m, nil, tt.queue, tt.reason, false, "", false)
			var got []string
			for _, d := range h["x-death"].([]any) {
				t := d.(map[string]any)
				got = append(got, t["queue"].(string)+":"+t["reason"].(string)+":"+strconv.FormatInt(t["count"].(int64), 10))
			}
			if !equalStrings(got, tt.want) {
				t.Errorf("x-death = %q, want %q", got, tt.want)
			}
		})
	}
}

// Cycle detection reads x-death as the version orders it, so whether a
// rejection "is part of the cycle" depends on the version: up to 3.12 the
// regrouping can put it behind or keep it ahead; 3.13.0-3.13.2 walk the
// entries by queue name; 3.13.3+ walk them most recent first. 3.10 and
// 4.0 checked against 3.10.8 and 4.0.5 (internal/difftest TestKnownCases
// and TestDeadLetterLoopForever).
func TestDeadLetterCyclesByVersion(t *testing.T) {
	t.Run("expired, rejected, expired back", func(t *testing.T) {
		b := vhost().
			q("q1", "x-message-ttl", 0, "x-dead-letter-exchange", "", "x-dead-letter-routing-key", "q2").
			q("q2", "x-dead-letter-exchange", "", "x-dead-letter-routing-key", "q3").
			q("q3", "x-message-ttl", 0, "x-dead-letter-exchange", "", "x-dead-letter-routing-key", "q1")
		tests := []struct {
			ver    string
			back   []string // queues the last hop reaches
			deaths []string // its x-death
		}{
			// [q3 expired, q1 expired, q2 rejected]: q1 ahead of the rejection, a cycle.
			{"3.10.8", nil, []string{"q3:expired:1", "q1:expired:1", "q2:rejected:1"}},
			{"3.12", nil, []string{"q3:expired:1", "q1:expired:1", "q2:rejected:1"}},
			// Key order q1, q2, q3: q1's expiry comes first, a cycle.
			{"3.13.0", nil, []string{"q3:expired:1", "q2:rejected:1", "q1:expired:1"}},
			// Most recent first: the rejection is since q1's death.
			{"3.13.3", []string{"q1"}, []string{"q3:expired:1", "q2:rejected:1", "q1:expired:1"}},
			{"4.0.5", []string{"q1"}, []string{"q3:expired:1", "q2:rejected:1", "q1:expired:1"}},
		}
		for _, tt := range tests {
			t.Run(tt.ver, func(t *testing.T) {
				s := b.simFor(tt.ver)
				toQ2 := s.DeadLetter("q1", Expired, msg("", "q1"))
				wantQueues(t, toQ2.Result, "q2")
				toQ3 := s.DeadLetter("q2", Rejected, toQ2.Result.Message)
				wantQueues(t, toQ3.Result, "q3")
				back := s.DeadLetter("q3", Expired, toQ3.Result.Message)
				wantQueues(t, back.Result, tt.back...)
				if got := deathList(back.Result.Message.Headers); !equalStrings(got, tt.deaths) {
					t.Errorf("x-death = %q, want %q", got, tt.deaths)
				}
				if cycles := len(back.Cycles) == 1 && back.Cycles[0] == "q1"; cycles != (tt.back == nil) {
					t.Errorf("cycles = %q", back.Cycles)
				}
			})
		}
	})
	t.Run("rejected once, then expired between two TTL queues", func(t *testing.T) {
		b := vhost().ex("to-a", "fanout").ex("to-b", "fanout").
			q("a", "x-message-ttl", 0, "x-dead-letter-exchange", "to-b").
			q("b", "x-message-ttl", 0, "x-dead-letter-exchange", "to-a").
			q("start", "x-dead-letter-exchange", "to-a").
			bind("to-a", "a", "").bind("to-b", "b", "")
		tests := []struct {
			ver  string
			hops int // hops delivered before cycle detection drops it; -1: for ever
		}{
			// The regrouped x-death keeps the rejection ahead of a and b.
			{"3.10.8", -1},
			// Key order a, b, start: a's and b's expiries come first.
			{"3.13.0", 2},
			// Most recent first: b's and a's expiries are since the rejection.
			{"3.13.3", 2},
			{"4.0.5", 2},
		}
		for _, tt := range tests {
			t.Run(tt.ver, func(t *testing.T) {
				s := b.simFor(tt.ver)
				dl := s.DeadLetter("start", Rejected, msg("", "start"))
				queue, next := "a", "b"
				hops := -1
				for hop := range 20 {
					if len(dl.Result.Deliveries) == 0 {
						hops = hop
						if !equalStrings(dl.Cycles, []string{queue}) {
							t.Errorf("hop %d: dropped with cycles %q, want [%s]", hop, dl.Cycles, queue)
						}
						break
					}
					wantQueues(t, dl.Result, queue)
					if t.Failed() {
						t.Fatalf("hop %d", hop)
					}
					dl = s.DeadLetter(queue, Expired, dl.Result.Message)
					queue, next = next, queue
				}
				if hops != tt.hops {
					t.Errorf("delivered %d hops, want %d (-1: for ever)", hops, tt.hops)
				}
			})
		}
	})
}

// A dead letter keeps the message's CC and BCC keys unless a dead-letter
// routing key replaces them (and then, up to 3.12, CC goes too); x-death
// lists the first key and the CC keys. Checked against RabbitMQ 3.10.8
// and 4.0.5 by the differential test (internal/difftest).
func TestDeadLetterCCAndBCC(t *testing.T) {
	for _, ver := range []string{"3.10.8", "4.0.5"} {
		t.Run(ver, func(t *testing.T) { testDeadLetterCCAndBCC(t, ver) })
	}
}

func testDeadLetterCCAndBCC(t *testing.T, ver string) {
	s := vhost().ex("dlx", "direct").
		q("own-keys", "x-dead-letter-exchange", "dlx").
		q("fixed-key", "x-dead-letter-exchange", "dlx", "x-dead-letter-routing-key", "k").
		q("again", "x-dead-letter-exchange", "dlx").
		q("by-key").q("by-cc").q("by-bcc").q("by-fixed").
		bind("dlx", "by-key", "key").bind("dlx", "by-cc", "cc").bind("dlx", "by-bcc", "bcc").bind("dlx", "by-fixed", "k").
		bind("dlx", "again", "again").
		simFor(ver)
	m := msg("x", "key", "CC", []any{"cc", "again"}, "BCC", []any{"bcc"})

	r := s.DeadLetter("own-keys", Rejected, m)
	wantQueues(t, r.Result, "again", "by-bcc", "by-cc", "by-key")
	h := r.Result.Message.Headers
	if _, ok := h["BCC"]; ok {
		t.Errorf("the dead letter has a BCC header: RabbitMQ removed it at publish")
	}
	if _, ok := h["CC"]; !ok {
		t.Errorf("the dead letter lost its CC header")
	}
	entry := h["x-death"].([]any)[0].(map[string]any)
	if got := entry["routing-keys"].([]any); len(got) != 3 || got[0] != "key" || got[1] != "cc" || got[2] != "again" {
		t.Errorf("x-death routing-keys = %v, want [key cc again] (no BCC keys)", got)
	}
	if got := r.Result.Message.RoutingKeys(); !equalStrings(got, []string{"key", "cc", "again", "bcc"}) {
		t.Errorf("dead letter keys = %q", got)
	}
	// A second hop still carries the BCC key, although no header names it.
	again := s.DeadLetter("again", Rejected, r.Result.Message)
	wantQueues(t, again.Result, "again", "by-bcc", "by-cc", "by-key")

	r = s.DeadLetter("fixed-key", Rejected, m)
	wantQueues(t, r.Result, "by-fixed")
	if _, kept := r.Result.Message.Headers["CC"]; kept != s.Version().KeepsCCWithDeadLetterRoutingKey() {
		t.Errorf("CC kept = %v with a dead-letter routing key on %s", kept, ver)
	}
	// The next hop routes by the dead-letter routing key alone.
	next := s.DeadLetter("again", Rejected, r.Result.Message)
	if got := next.Result.Message.RoutingKeys(); !equalStrings(got, []string{"k"}) {
		t.Errorf("keys after a dead-letter routing key = %q, want [k]", got)
	}
}

// TestDeadLetterHeld: a quorum queue that dead-letters at least once (the
// strategy, a dead-letter exchange and overflow reject-publish, each by
// argument or policy) keeps a dead letter that reaches no queue, whether
// no binding matches or the exchange is not declared; one that falls back
// to at most once, a classic queue, or a dead letter that is delivered is
// not held (measured: TestAtLeastOnceFallbackAgainstBroker in pkg/lint).
func TestDeadLetterHeld(t *testing.T) {
	alo := []any{"x-dead-letter-strategy", "at-least-once", "x-overflow", "reject-publish"}
	with := func(kv ...any) []any { return append(append([]any{}, alo...), kv...) }
	s := vhost().ex("dlx", "direct").q("dlq").bind("dlx", "dlq", "routed").
		typed("unroutable", "quorum", with("x-dead-letter-exchange", "dlx")...).
		typed("missing", "quorum", with("x-dead-letter-exchange", "ghost")...).
		typed("routed", "quorum", with("x-dead-letter-exchange", "dlx")...).
		typed("fallback", "quorum", "x-dead-letter-exchange", "dlx", "x-dead-letter-strategy", "at-least-once").
		typed("bypolicy", "quorum", "x-dead-letter-exchange", "dlx").
		q("classic", with("x-dead-letter-exchange", "dlx")...).
		policy("alo", "^bypolicy$", "queues", 0, "dead-letter-strategy", "at-least-once", "overflow", "reject-publish").
		sim()
	for q, want := range map[string]bool{"unroutable": true, "missing": true, "routed": false, "fallback": false, "bypolicy": true, "classic": false} {
		r := s.DeadLetter(q, Rejected, msg("", q))
		if r.Held != want || s.AtLeastOnce(q) != (want || q == "routed") {
			t.Errorf("queue %s: Held = %v (AtLeastOnce %v), want %v; deliveries %v", q, r.Held, s.AtLeastOnce(q), want, r.Result.Deliveries)
		}
	}
	if p := s.DeadLetter("missing", Rejected, msg("", "missing")).Result.Problems; len(p) != 1 || !strings.Contains(p[0], "keeps its dead letters in the queue") {
		t.Errorf("the undeclared exchange's problem = %q, want it to say the queue keeps them", p)
	}
}

// TestDeadLettersToAStream: RabbitMQ writes a dead letter routed to a
// stream from 3.12 on, and drops it before (rmqversion
// DeadLettersReachStreams), saying so.
func TestDeadLettersToAStream(t *testing.T) {
	b := vhost().ex("dlx", "fanout").
		q("work", "x-dead-letter-exchange", "dlx").
		typed("log", "stream").q("dlq").
		bind("dlx", "log", "").bind("dlx", "dlq", "")
	for _, tc := range []struct {
		ver  string
		want []string
	}{{"3.10.8", []string{"dlq"}}, {"3.12.0", []string{"dlq", "log"}}, {"4.3.6", []string{"dlq", "log"}}} {
		r := b.simFor(tc.ver).DeadLetter("work", Rejected, Message{RoutingKey: "k"})
		var got []string
		for _, d := range r.Result.Deliveries {
			got = append(got, d.Queue)
		}
		if strings.Join(got, ",") != strings.Join(tc.want, ",") {
			t.Errorf("%s: dead letters reach %v, want %v", tc.ver, got, tc.want)
		}
		dropped := strings.Contains(strings.Join(r.Result.Problems, "\n"), `queue "log" is a stream: RabbitMQ 3.10.8 drops the dead letters routed to a stream`)
		if dropped != (tc.ver == "3.10.8") {
			t.Errorf("%s: problems %q", tc.ver, r.Result.Problems)
		}
	}
}
