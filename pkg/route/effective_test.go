package route

import (
	"strings"
	"testing"

	"github.com/mqctl/mqctl/pkg/topology"
)

func TestQueueArgs(t *testing.T) {
	tests := []struct {
		name string
		b    *vb
		q    string
		want topology.Args
	}{
		{
			name: "policy keys become x- arguments",
			b: vhost().q("orders").policy("p", "^orders$", "queues", 0,
				"dead-letter-exchange", "dlx", "message-ttl", 60000, "max-length", 10, "overflow", "reject-publish", "expires", 1000),
			q:    "orders",
			want: a("x-dead-letter-exchange", "dlx", "x-message-ttl", 60000, "x-max-length", 10, "x-overflow", "reject-publish", "x-expires", 1000),
		},
		{
			name: "queue argument beats policy for dead-letter settings and overflow",
			b: vhost().q("orders", "x-dead-letter-exchange", "mine", "x-dead-letter-routing-key", "k", "x-overflow", "drop-head").
				policy("p", "orders", "all", 0, "dead-letter-exchange", "theirs", "dead-letter-routing-key", "other", "overflow", "reject-publish"),
			q:    "orders",
			want: a("x-dead-letter-exchange", "mine", "x-dead-letter-routing-key", "k", "x-overflow", "drop-head"),
		},
		{
			name: "numeric limits: the smaller wins",
			b: vhost().q("orders", "x-message-ttl", 5000, "x-max-length", 10, "x-max-length-bytes", 100, "x-expires", 9000).
				policy("p", "orders", "queues", 0, "message-ttl", 1000, "max-length", 99, "max-length-bytes", 50, "expires", 10000),
			q:    "orders",
			want: a("x-message-ttl", 1000, "x-max-length", 10, "x-max-length-bytes", 50, "x-expires", 9000),
		},
		{
			// rabbit_stream_queue policy_precedence/2: a policy's
			// retention and segment size beat the stream's arguments.
			name: "a stream takes its policy's retention over its own",
			b: vhost().typed("log", topology.QueueStream, "x-max-age", "7D", "x-max-length-bytes", 1000, "x-stream-max-segment-size-bytes", 500).
				policy("p", "^log$", "queues", 0, "max-age", "10s", "max-length-bytes", 5000, "stream-max-segment-size-bytes", 100),
			q:    "log",
			want: a("x-max-age", "10s", "x-max-length-bytes", 5000, "x-stream-max-segment-size-bytes", 100),
		},
		{
			// A policy's max-age written as a list: RabbitMQ takes the
			// policy, and a stream reads no age from a list
			// (rabbit_stream_queue:max_age/1), while the policy's value
			// still beats the stream's own (measured on 4.0.5 and 4.3.6:
			// a stream under max-age ["1", "s"] kept all its messages).
			name: "a policy's max-age written as a list leaves a stream no age, its own overridden",
			b: vhost().typed("log", topology.QueueStream, "x-max-age", "7D").
				policy("p", "^log$", "queues", 0, "max-age", []any{"1", "s"}, "max-length-bytes", 5000),
			q:    "log",
			want: a("x-max-length-bytes", 5000),
		},
		{
			name: "a policy's max-age written as a list gives a stream no age",
			b: vhost().typed("log", topology.QueueStream, "x-stream-max-segment-size-bytes", 500).
				policy("p", "^log$", "streams", 0, "max-age", []any{"7", "D"}),
			q:    "log",
			want: a("x-stream-max-segment-size-bytes", 500),
		},
		{
			name: "operator policy combines with policy and argument by min",
			b: vhost().q("orders", "x-max-length", 500).
				policy("p", "orders", "queues", 0, "message-ttl", 60000, "max-length", 100, "dead-letter-exchange", "dlx").
				opPolicy("cap", ".*", "queues", 0, "message-ttl", 30000, "max-length", 1000, "max-length-bytes", 4096),
			q:    "orders",
			want: a("x-message-ttl", 30000, "x-max-length", 100, "x-max-length-bytes", 4096, "x-dead-letter-exchange", "dlx"),
		},
		{
			// RabbitMQ refuses the whole operator policy (measured on
			// 4.3.6, 4.0.5 and 3.10.8: rmqversion
			// TestPolicyKeysAgainstBroker), so its max-length is not in
			// force either.
			name: "operator policy cannot set a dead-letter exchange",
			b:    vhost().q("orders").opPolicy("op", ".*", "queues", 0, "dead-letter-exchange", "dlx", "max-length", 5),
			q:    "orders",
			want: nil,
		},
		{
			name: "operator policy with consumer-timeout is refused whole",
			b: vhost().q("orders").
				policy("p", ".*", "queues", 0, "max-length", 50).
				opPolicy("op", ".*", "queues", 0, "consumer-timeout", 60000, "max-length", 5),
			q:    "orders",
			want: a("x-max-length", 50),
		},
		{
			name: "highest priority wins, only one policy applies",
			b: vhost().q("orders").
				policy("low", ".*", "queues", 1, "message-ttl", 1000, "max-length", 5).
				policy("high", "^ord", "queues", 10, "dead-letter-exchange", "dlx"),
			q:    "orders",
			want: a("x-dead-letter-exchange", "dlx"),
		},
		{
			name: "pattern is an unanchored regex",
			b:    vhost().q("app.orders.v2").policy("p", `orders\.v\d`, "queues", 0, "max-length", 5),
			q:    "app.orders.v2",
			want: a("x-max-length", 5),
		},
		{
			name: "apply-to exchanges does not touch queues",
			b:    vhost().q("orders").policy("p", ".*", "exchanges", 0, "max-length", 5),
			q:    "orders",
			want: nil,
		},
		{
			name: "apply-to quorum_queues skips classic queues",
			b: vhost().q("orders").
				policy("qq", ".*", "quorum_queues", 5, "delivery-limit", 3).
				policy("cq", ".*", "classic_queues", 1, "max-length", 5),
			q:    "orders",
			want: a("x-max-length", 5),
		},
		{
			name: "a policy with keys quorum queues lack does not apply to them",
			b: vhost().typed("orders", topology.QueueQuorum).
				policy("mirror", ".*", "queues", 10, "ha-mode", "all", "max-length", 1).
				policy("plain", ".*", "queues", 0, "max-length", 7),
			q:    "orders",
			want: a("x-max-length", 7),
		},
		{
			name: "quorum queues: policy overflow beats the argument",
			b: vhost().typed("orders", topology.QueueQuorum, "x-overflow", "drop-head", "x-delivery-limit", 10).
				policy("p", ".*", "queues", 0, "overflow", "reject-publish", "delivery-limit", 3),
			q:    "orders",
			want: a("x-overflow", "reject-publish", "x-delivery-limit", 3),
		},
		{
			name: "non-argument policy keys are not arguments",
			b:    vhost().q("orders", "x-max-priority", 10).policy("p", ".*", "queues", 0, "ha-mode", "all", "federation-upstream-set", "all"),
			q:    "orders",
			want: a("x-max-priority", 10),
		},
		{
			name: "undeclared queue",
			b:    vhost(),
			q:    "ghost",
			want: nil,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := tt.b.sim().QueueArgs(tt.q)
			if !got.Equal(tt.want) {
				t.Errorf("QueueArgs(%q) = %s, want %s", tt.q, got.Canonical(), tt.want.Canonical())
			}
		})
	}
}

func TestQueueArgsIsACopy(t *testing.T) {
	s := vhost().q("orders", "x-max-length", 5).sim()
	s.QueueArgs("orders")["x-max-length"] = int64(1)
	if n, _ := s.QueueArgs("orders").Int("x-max-length"); n != 5 {
		t.Errorf("changing the returned args changed the simulator: %d", n)
	}
}

func TestPolicyTiesAndBadPatterns(t *testing.T) {
	s := vhost().q("orders").
		policy("b", ".*", "queues", 3, "max-length", 2).
		policy("a", "orders", "queues", 3, "max-length", 1).
		policy("look", "(unclosed", "queues", 9, "max-length", 9).
		sim()
	if n, _ := s.QueueArgs("orders").Int("x-max-length"); n != 1 {
		t.Errorf("x-max-length = %d, want 1 from policy a (first name among equal priorities)", n)
	}
	if p, _ := s.QueuePolicies("orders"); p != "a" {
		t.Errorf("policy = %q, want a", p)
	}
	all := strings.Join(s.Problems(), "\n")
	for _, want := range []string{`policies "a" and "b" both match with priority 3`, `policy "look": pattern "(unclosed" cannot be evaluated`} {
		if !strings.Contains(all, want) {
			t.Errorf("problems lack %q:\n%s", want, all)
		}
	}
}

func TestReasons(t *testing.T) {
	tests := []struct {
		name string
		b    *vb
		want []Reason
	}{
		{"plain classic queue", vhost().q("q"), []Reason{Rejected}},
		{"queue TTL", vhost().q("q", "x-message-ttl", 1000), []Reason{Rejected, Expired}},
		{"policy TTL", vhost().q("q").policy("p", ".*", "queues", 0, "message-ttl", 10), []Reason{Rejected, Expired}},
		{"max-length, default overflow drop-head", vhost().q("q", "x-max-length", 10), []Reason{Rejected, MaxLen}},
		{"max-length-bytes by policy", vhost().q("q").policy("p", ".*", "queues", 0, "max-length-bytes", 10), []Reason{Rejected, MaxLen}},
		{"reject-publish does not dead-letter", vhost().q("q", "x-max-length", 10, "x-overflow", "reject-publish"), []Reason{Rejected}},
		{"reject-publish-dlx does", vhost().q("q", "x-max-length", 10, "x-overflow", "reject-publish-dlx"), []Reason{Rejected, MaxLen}},
		{"overflow without a limit", vhost().q("q", "x-overflow", "drop-head"), []Reason{Rejected}},
		{"quorum delivery limit", vhost().typed("q", topology.QueueQuorum, "x-delivery-limit", 5), []Reason{Rejected, DeliveryLimit}},
		{"quorum without delivery limit (4.0: 20 by default)", vhost().typed("q", topology.QueueQuorum), []Reason{Rejected, DeliveryLimit}},
		{"quorum with delivery limit -1 (4.0: none)", vhost().typed("q", topology.QueueQuorum, "x-delivery-limit", -1), []Reason{Rejected}},
		{"classic ignores x-delivery-limit", vhost().q("q", "x-delivery-limit", 5), []Reason{Rejected}},
		{"everything", vhost().typed("q", topology.QueueQuorum, "x-message-ttl", 1, "x-max-length", 1, "x-delivery-limit", 1), []Reason{Rejected, Expired, MaxLen, DeliveryLimit}},
		{"stream", vhost().typed("q", topology.QueueStream, "x-max-length-bytes", 10), nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := tt.b.sim().Reasons("q")
			if len(got) != len(tt.want) {
				t.Fatalf("Reasons = %v, want %v", got, tt.want)
			}
			for i := range got {
				if got[i] != tt.want[i] {
					t.Fatalf("Reasons = %v, want %v", got, tt.want)
				}
			}
		})
	}
	if r := vhost().sim().Reasons("ghost"); r != nil {
		t.Errorf("Reasons of an undeclared queue = %v", r)
	}
}

// TestPCREPatterns: RabbitMQ reads policy patterns as PCRE, and the
// pattern of its own documentation for "every queue but amq.*",
// ^(?!amq\.).*, needs a lookahead, which Go's regexp does not read.
func TestPCREPatterns(t *testing.T) {
	s := vhost().q("orders").q("amq.gen-1").q("x.orders").
		policy("all-but-amq", "^(?!amq\\.).*", "queues", 1, "max-length", 7).
		policy("ends-twice", "^(\\w+)\\.\\1$", "queues", 2, "max-length", 3).
		q("a.a").
		sim()
	for q, want := range map[string]string{"orders": "all-but-amq", "amq.gen-1": "", "x.orders": "all-but-amq", "a.a": "ends-twice"} {
		if p, _ := s.QueuePolicies(q); p != want {
			t.Errorf("queue %s: policy %q, want %q", q, p, want)
		}
	}
	if len(s.Problems()) != 0 {
		t.Errorf("problems: %q", s.Problems())
	}
}

// TestQueueArgSource: where a queue's effective argument comes from, as
// the flows' causes name it: its own argument, the policy or the operator
// policy whose value is in force.
func TestQueueArgSource(t *testing.T) {
	v := topology.NewVhost("/")
	q := func(name string, args topology.Args) {
		v.Queues[name] = &topology.Queue{Name: name, Type: topology.QueueClassic, Durable: true, Arguments: args}
	}
	q("own", topology.Args{"x-message-ttl": int64(1000)})
	q("smaller-own", topology.Args{"x-message-ttl": int64(10)})
	q("by-policy", nil)
	q("capped", nil)
	q("bare.x", nil)
	v.Policies["ttl"] = &topology.Policy{Name: "ttl", Pattern: "^(own|smaller-own|by-policy|capped)$", ApplyTo: "queues", Definition: topology.Args{"message-ttl": int64(60000), "max-length": int64(50)}}
	v.OperatorPolicies["cap"] = &topology.Policy{Name: "cap", Pattern: "^capped$", ApplyTo: "queues", Definition: topology.Args{"message-ttl": int64(5000)}}
	s := New(v)
	for _, tt := range []struct{ queue, arg, want string }{
		{"own", "x-message-ttl", "x-message-ttl"},
		{"smaller-own", "x-message-ttl", "x-message-ttl"},
		{"by-policy", "x-message-ttl", `policy "ttl"'s message-ttl`},
		{"by-policy", "x-max-length", `policy "ttl"'s max-length`},
		{"capped", "x-message-ttl", `operator policy "cap"'s message-ttl`},
		{"capped", "x-max-length", `policy "ttl"'s max-length`},
		{"bare.x", "x-message-ttl", ""},
		{"nope", "x-message-ttl", ""},
	} {
		if got := s.QueueArgSource(tt.queue, tt.arg); got != tt.want {
			t.Errorf("QueueArgSource(%q, %q) = %q, want %q", tt.queue, tt.arg, got, tt.want)
		}
	}
}
