package route

import (
	"strings"
	"testing"

	"github.com/mqctl/mqctl/pkg/topology"
)

// The dead-letter rules that differ between RabbitMQ versions (see the
// predicates of rmqversion). 3.10.8 and 4.0.5 answers are checked against
// those brokers by internal/difftest; 3.12, 3.13.0 and 3.13.3 answers
// follow the sources and issues cited in rmqversion.

// A message published with an x-death header of its own, then rejected
// from work: up to 3.12 and again from 3.13.3 the broker counts the
// client's entry up and sets no x-first-death-* headers; 3.13.0-3.13.2 and
// 4.0+ ignore the client's entries and start a history of their own.
func TestVersionClientXDeath(t *testing.T) {
	s := vhost().q("work", "x-dead-letter-exchange", "", "x-dead-letter-routing-key", "dlq").q("dlq")
	published := Message{RoutingKey: "work", Headers: map[string]any{
		"x-death": []any{
			map[string]any{"queue": "work", "reason": "rejected", "count": int64(2), "exchange": "", "routing-keys": []any{"work"}},
			map[string]any{"queue": "elsewhere", "reason": "expired", "count": int64(1), "exchange": "", "routing-keys": []any{"x"}},
		},
		"x-first-death-queue": "from-the-client",
	}}
	tests := []struct {
		ver        string
		deaths     []string
		firstQueue string // x-first-death-queue of the dead letter
	}{
		{"3.10.8", []string{"work:rejected:3", "elsewhere:expired:1"}, "from-the-client"},
		{"3.12", []string{"work:rejected:3", "elsewhere:expired:1"}, "from-the-client"},
		{"3.13.0", []string{"work:rejected:1"}, "work"},
		{"3.13.2", []string{"work:rejected:1"}, "work"},
		{"3.13.3", []string{"work:rejected:3", "elsewhere:expired:1"}, "from-the-client"},
		{"3.13", []string{"work:rejected:3", "elsewhere:expired:1"}, "from-the-client"}, // the latest 3.13
		{"4.0.5", []string{"work:rejected:1"}, "work"},
	}
	for _, tt := range tests {
		t.Run(tt.ver, func(t *testing.T) {
			r := s.simFor(tt.ver).DeadLetter("work", Rejected, published)
			wantQueues(t, r.Result, "dlq")
			h := r.Result.Message.Headers
			if got := deathList(h); !equalStrings(got, tt.deaths) {
				t.Errorf("x-death = %q, want %q", got, tt.deaths)
			}
			if h["x-first-death-queue"] != tt.firstQueue {
				t.Errorf("x-first-death-queue = %v, want %q", h["x-first-death-queue"], tt.firstQueue)
			}
		})
	}
}

// Three rejections in a row, q1 → q2 → q3 → q4: up to 3.12 the third death
// regroups (reverses) the earlier two; from 3.13 x-death is most recent
// first. Then q4 rejects back to q1 and q1 again to q2: a repeated
// (queue, reason) counts up and moves to the front in both; up to 3.12
// each of those deaths reversed the rest first ([q4, q2, q1, q3], then
// [q3, q1, q2, q4] less q1).
func TestVersionXDeathOrder(t *testing.T) {
	s := vhost().
		q("q1", "x-dead-letter-exchange", "", "x-dead-letter-routing-key", "q2").
		q("q2", "x-dead-letter-exchange", "", "x-dead-letter-routing-key", "q3").
		q("q3", "x-dead-letter-exchange", "", "x-dead-letter-routing-key", "q4").
		q("q4", "x-dead-letter-exchange", "", "x-dead-letter-routing-key", "q1")
	tests := []struct {
		ver         string
		afterThree  []string
		afterRepeat []string // after q4 → q1 and q1 → q2
	}{
		{"3.10.8", []string{"q3:rejected:1", "q1:rejected:1", "q2:rejected:1"},
			[]string{"q1:rejected:2", "q3:rejected:1", "q2:rejected:1", "q4:rejected:1"}},
		{"3.12", []string{"q3:rejected:1", "q1:rejected:1", "q2:rejected:1"},
			[]string{"q1:rejected:2", "q3:rejected:1", "q2:rejected:1", "q4:rejected:1"}},
		{"3.13.3", []string{"q3:rejected:1", "q2:rejected:1", "q1:rejected:1"},
			[]string{"q1:rejected:2", "q4:rejected:1", "q3:rejected:1", "q2:rejected:1"}},
		{"4.0.5", []string{"q3:rejected:1", "q2:rejected:1", "q1:rejected:1"},
			[]string{"q1:rejected:2", "q4:rejected:1", "q3:rejected:1", "q2:rejected:1"}},
	}
	for _, tt := range tests {
		t.Run(tt.ver, func(t *testing.T) {
			sim := s.simFor(tt.ver)
			m := msg("", "q1")
			for _, q := range []string{"q1", "q2", "q3"} {
				m = sim.DeadLetter(q, Rejected, m).Result.Message
			}
			if got := deathList(m.Headers); !equalStrings(got, tt.afterThree) {
				t.Errorf("x-death after three rejections = %q, want %q", got, tt.afterThree)
			}
			for _, q := range []string{"q4", "q1"} {
				m = sim.DeadLetter(q, Rejected, m).Result.Message
			}
			if got := deathList(m.Headers); !equalStrings(got, tt.afterRepeat) {
				t.Errorf("x-death after q4 and q1 again = %q, want %q", got, tt.afterRepeat)
			}
		})
	}
}

// From 3.13 every death sets x-last-death-*, while x-first-death-* keep
// the first; up to 3.12 there are no x-last-death-* headers.
func TestVersionLastDeathHeaders(t *testing.T) {
	s := vhost().ex("dlx", "fanout").
		q("work", "x-dead-letter-exchange", "dlx").
		q("retry", "x-dead-letter-exchange", "dlx").
		bind("dlx", "retry", "")
	tests := []struct {
		ver  string
		last map[string]any // after work rejects, then retry expires it
	}{
		{"3.10.8", map[string]any{"x-last-death-reason": nil, "x-last-death-queue": nil, "x-last-death-exchange": nil}},
		{"3.12", map[string]any{"x-last-death-reason": nil, "x-last-death-queue": nil, "x-last-death-exchange": nil}},
		{"3.13.0", map[string]any{"x-last-death-reason": "expired", "x-last-death-queue": "retry", "x-last-death-exchange": "dlx"}},
		{"4.0.5", map[string]any{"x-last-death-reason": "expired", "x-last-death-queue": "retry", "x-last-death-exchange": "dlx"}},
	}
	for _, tt := range tests {
		t.Run(tt.ver, func(t *testing.T) {
			sim := s.simFor(tt.ver)
			m := sim.DeadLetter("work", Rejected, msg("in", "k")).Result.Message
			m = sim.DeadLetter("retry", Expired, m).Result.Message
			for k, want := range tt.last {
				if got := m.Headers[k]; got != want {
					t.Errorf("%s = %v, want %v", k, got, want)
				}
			}
			if m.Headers["x-first-death-queue"] != "work" || m.Headers["x-first-death-reason"] != "rejected" || m.Headers["x-first-death-exchange"] != "in" {
				t.Errorf("x-first-death-* = %v %v %v, want work rejected in", m.Headers["x-first-death-queue"], m.Headers["x-first-death-reason"], m.Headers["x-first-death-exchange"])
			}
		})
	}
}

// x-death routing-keys: up to 3.12 the message's first key and its CC
// keys; from 3.13 its keys less the BCC keys, one occurrence each, which
// reorders them when a BCC key repeats the routing key, and empties them
// after a dead-letter routing key that a BCC key equals.
func TestVersionXDeathRoutingKeys(t *testing.T) {
	s := vhost().ex("dlx", "direct").
		q("work", "x-dead-letter-exchange", "dlx").
		q("fixed", "x-dead-letter-exchange", "", "x-dead-letter-routing-key", "k").
		q("k", "x-dead-letter-exchange", "", "x-dead-letter-routing-key", "end").q("end").
		bind("dlx", "k", "k")
	m := Message{Exchange: "in", RoutingKey: "k", Headers: map[string]any{"CC": []any{"c"}, "BCC": []any{"k"}}}
	keysOf := func(m Message) string {
		d := m.Headers["x-death"].([]any)[0].(map[string]any)
		var ks []string
		for _, k := range d["routing-keys"].([]any) {
			ks = append(ks, k.(string))
		}
		return strings.Join(ks, ",")
	}
	tests := []struct {
		ver         string
		work, fixed string
	}{
		{"3.10.8", "k,c", "k"},
		{"3.12", "k,c", "k"},
		{"3.13.3", "c,k", ""},
		{"4.0.5", "c,k", ""},
	}
	for _, tt := range tests {
		t.Run(tt.ver, func(t *testing.T) {
			sim := s.simFor(tt.ver)
			r := sim.DeadLetter("work", Rejected, m)
			wantQueues(t, r.Result, "k")
			if got := keysOf(r.Result.Message); got != tt.work {
				t.Errorf("routing-keys of work's death = %q, want %q", got, tt.work)
			}
			// fixed's dead letter carries k only; k's death lists k less BCC.
			viaFixed := sim.DeadLetter("fixed", Rejected, m)
			wantQueues(t, viaFixed.Result, "k")
			r = sim.DeadLetter("k", Rejected, viaFixed.Result.Message)
			wantQueues(t, r.Result, "end")
			if got := keysOf(r.Result.Message); got != tt.fixed {
				t.Errorf("routing-keys of k's death after fixed = %q, want %q", got, tt.fixed)
			}
		})
	}
}

// The headers exchange sees a 3.13+ dead letter's x-death as the client
// published it, not the broker's records: a binding on the presence of
// x-death (any-with-x) catches every dead letter up to 3.12, and from 3.13
// only those whose publisher sent an x-death.
func TestVersionHeadersRouteDeadLetterXDeath(t *testing.T) {
	s := vhost().ex("dlx", "headers").
		q("work", "x-dead-letter-exchange", "dlx").
		q("has-x-death").q("first-rejected").
		bind("dlx", "has-x-death", "", "x-match", "any-with-x", "x-death", nil).
		bind("dlx", "first-rejected", "", "x-match", "all-with-x", "x-first-death-reason", "rejected")
	plain := msg("in", "k")
	withOwn := Message{Exchange: "in", RoutingKey: "k", Headers: map[string]any{"x-death": "junk"}}
	tests := []struct {
		ver            string
		plain, withOwn []string
	}{
		// A junk x-death is reset up to 3.12 and sets no x-first-death-*.
		{"3.10.8", []string{"first-rejected", "has-x-death"}, []string{"has-x-death"}},
		{"4.0.5", []string{"first-rejected"}, []string{"first-rejected", "has-x-death"}},
	}
	for _, tt := range tests {
		t.Run(tt.ver, func(t *testing.T) {
			sim := s.simFor(tt.ver)
			wantQueues(t, sim.DeadLetter("work", Rejected, plain).Result, tt.plain...)
			wantQueues(t, sim.DeadLetter("work", Rejected, withOwn).Result, tt.withOwn...)
		})
	}
}

// Quorum queues: 4.0 gives every quorum queue a delivery limit of 20
// unless one is set, and a negative one means none, the larger winning
// where argument and policy disagree and one is negative; before 4.0 only
// a set limit counts, the smaller winning.
func TestVersionDeliveryLimit(t *testing.T) {
	tests := []struct {
		name string
		b    *vb
		want map[string]int64 // version → limit; absent: none
	}{
		{"no limit set", vhost().typed("q", topology.QueueQuorum),
			map[string]int64{"4.0.5": 20}},
		{"limit 5", vhost().typed("q", topology.QueueQuorum, "x-delivery-limit", 5),
			map[string]int64{"3.10.8": 5, "4.0.5": 5}},
		{"limit -1", vhost().typed("q", topology.QueueQuorum, "x-delivery-limit", -1),
			map[string]int64{"3.10.8": -1}},
		{"argument 5, policy 3", vhost().typed("q", topology.QueueQuorum, "x-delivery-limit", 5).policy("p", ".*", "queues", 0, "delivery-limit", 3),
			map[string]int64{"3.10.8": 3, "4.0.5": 3}},
		{"argument -1, policy 3", vhost().typed("q", topology.QueueQuorum, "x-delivery-limit", -1).policy("p", ".*", "queues", 0, "delivery-limit", 3),
			map[string]int64{"3.10.8": -1, "4.0.5": 3}},
		// 3.10.8 refuses an operator policy with delivery-limit -1 (it
		// takes 0 or more: rabbit_policies:validate_policy0/2), so the
		// policy's 3 applies alone.
		{"policy 3, operator policy -1", vhost().typed("q", topology.QueueQuorum).policy("p", ".*", "queues", 0, "delivery-limit", 3).opPolicy("op", ".*", "queues", 0, "delivery-limit", -1),
			map[string]int64{"3.10.8": 3, "4.0.5": 3}},
		{"classic queue", vhost().q("q", "x-delivery-limit", 5), map[string]int64{}},
	}
	for _, tt := range tests {
		for _, ver := range []string{"3.10.8", "4.0.5"} {
			t.Run(tt.name+"/"+ver, func(t *testing.T) {
				s := tt.b.simFor(ver)
				want, has := tt.want[ver]
				got, ok := s.DeliveryLimit("q")
				if ok != has || got != want {
					t.Errorf("DeliveryLimit = %d, %v; want %d, %v", got, ok, want, has)
				}
				reasons := s.Reasons("q")
				if hasReason := len(reasons) > 0 && reasons[len(reasons)-1] == DeliveryLimit; hasReason != has {
					t.Errorf("Reasons = %v, delivery_limit wanted: %v", reasons, has)
				}
			})
		}
	}
}

// From 3.12.7 an operator policy may set overflow (and queue-version), and
// its value beats a policy's; before, the broker refuses such an operator
// policy and mqctl ignores the key.
func TestVersionOperatorPolicyOverflow(t *testing.T) {
	b := vhost().q("q").
		policy("p", ".*", "queues", 0, "max-length", 10, "overflow", "drop-head").
		opPolicy("op", ".*", "queues", 0, "overflow", "reject-publish")
	tests := []struct {
		ver      string
		overflow string
		reasons  []Reason
		refused  bool // Problems says the operator policy cannot set overflow
	}{
		{"3.10.8", "drop-head", []Reason{Rejected, MaxLen}, true},
		{"3.12.6", "drop-head", []Reason{Rejected, MaxLen}, true},
		{"3.12.7", "reject-publish", []Reason{Rejected}, false},
		{"3.12", "reject-publish", []Reason{Rejected}, false}, // the latest 3.12
		{"4.0.5", "reject-publish", []Reason{Rejected}, false},
	}
	for _, tt := range tests {
		t.Run(tt.ver, func(t *testing.T) {
			s := b.simFor(tt.ver)
			if got, _ := s.QueueArgs("q").String("x-overflow"); got != tt.overflow {
				t.Errorf("x-overflow = %q, want %q", got, tt.overflow)
			}
			got := s.Reasons("q")
			if len(got) != len(tt.reasons) || got[len(got)-1] != tt.reasons[len(tt.reasons)-1] {
				t.Errorf("Reasons = %v, want %v", got, tt.reasons)
			}
			refused := strings.Contains(strings.Join(s.Problems(), "\n"), "sets overflow, which operator policies cannot set")
			if refused != tt.refused {
				t.Errorf("Problems = %q, refusal wanted: %v", s.Problems(), tt.refused)
			}
		})
	}
}

// The zero Options follow rmqversion.Default (4.3), as New does.
func TestVersionDefault(t *testing.T) {
	b := vhost().typed("q", topology.QueueQuorum)
	for name, s := range map[string]*Simulator{"New": b.sim(), "NewWith zero": NewWith(b.v, Options{})} {
		if got := s.Version().String(); got != "4.3" {
			t.Errorf("%s: Version = %s, want 4.3", name, got)
		}
		if _, ok := s.DeliveryLimit("q"); !ok {
			t.Errorf("%s: a quorum queue has no delivery limit, want 4.3's 20", name)
		}
	}
}

// A policy holding a key a queue type does not support does not apply to
// queues of that type at all, and a lower-priority policy may apply
// instead: delivery-limit keeps a policy off classic queues and streams,
// queue-mode off quorum queues; from 4.0 max-in-memory-length keeps it off
// classic queues too.
func TestVersionPolicyKeysByQueueType(t *testing.T) {
	b := vhost().q("cq").typed("qq", topology.QueueQuorum).q("cq-mem").typed("qq-mode", topology.QueueQuorum).
		policy("low", ".*", "queues", 1, "dead-letter-exchange", "", "dead-letter-routing-key", "low").
		policy("limit", "^(cq|qq)$", "queues", 2, "dead-letter-exchange", "", "dead-letter-routing-key", "limit", "delivery-limit", 1000).
		policy("mem", "^cq-mem$", "queues", 2, "dead-letter-exchange", "", "dead-letter-routing-key", "mem", "max-in-memory-length", 100000).
		policy("mode", "^qq-mode$", "queues", 2, "dead-letter-exchange", "", "dead-letter-routing-key", "mode", "queue-mode", "default")
	tests := []struct {
		ver  string
		want map[string]string // queue → the policy that applies
	}{
		{"3.10.8", map[string]string{"cq": "low", "qq": "limit", "cq-mem": "mem", "qq-mode": "low"}},
		{"4.0.5", map[string]string{"cq": "low", "qq": "limit", "cq-mem": "low", "qq-mode": "low"}},
	}
	for _, tt := range tests {
		t.Run(tt.ver, func(t *testing.T) {
			s := b.simFor(tt.ver)
			for q, want := range tt.want {
				if got, _ := s.QueuePolicies(q); got != want {
					t.Errorf("%s: policy %q, want %q", q, got, want)
				}
				if got, _ := s.QueueArgs(q).String("x-dead-letter-routing-key"); got != want {
					t.Errorf("%s: dead-letter routing key %q, want %q", q, got, want)
				}
			}
		})
	}
}

// TestRefusedPolicyAppliesNowhere: RabbitMQ refuses a policy with a value
// its validation refuses (rabbit_policies:validate_policy0/2), so none of
// the policy's settings are in force: the queue has no dead-letter
// exchange from it.
func TestRefusedPolicyAppliesNowhere(t *testing.T) {
	for _, tt := range []struct {
		name   string
		def    []any
		hasDLX bool
	}{
		{"valid", []any{"dead-letter-exchange", "dlx", "max-length", 10}, true},
		{"max-length that is no number", []any{"dead-letter-exchange", "dlx", "max-length", "ten"}, false},
		{"expires 0", []any{"dead-letter-exchange", "dlx", "expires", 0}, false},
	} {
		s := vhost().ex("dlx", "fanout").q("q").policy("p", "^q$", "queues", 0, tt.def...).simFor("4.3")
		if _, ok := s.QueueArg("q", "x-dead-letter-exchange"); ok != tt.hasDLX {
			t.Errorf("%s: queue has a dead-letter exchange: %v, want %v", tt.name, ok, tt.hasDLX)
		}
	}
}
