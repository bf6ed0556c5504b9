package route

import "testing"

// TestConsumerTimeoutArgs: the consumer-timeout and
// consumer-disconnected-timeout policy keys merge into a queue's effective
// arguments, the smaller value winning (rabbit_queue_type
// get_consumer_timeout/2 and rabbit_quorum_queue at v4.3.5; rabbit_channel
// at v4.2.9 for every type). A classic queue takes the policy too: 4.3
// does not make it skip the policy, only ignores the timeout.
func TestConsumerTimeoutArgs(t *testing.T) {
	b := vhost().typed("q", "quorum", "x-consumer-timeout", 60000).typed("q2", "quorum").q("c").
		policy("t", ".*", "queues", 0, "consumer-timeout", 30000, "consumer-disconnected-timeout", 5000)
	s := b.simFor("4.3")
	for _, tc := range []struct {
		queue, arg string
		want       int64
	}{
		{"q", "x-consumer-timeout", 30000},
		{"q2", "x-consumer-timeout", 30000},
		{"q2", "x-consumer-disconnected-timeout", 5000},
		{"c", "x-consumer-timeout", 30000},
	} {
		if got, ok := s.QueueArgs(tc.queue).Int(tc.arg); !ok || got != tc.want {
			t.Errorf("%s %s = %d, %v; want %d", tc.queue, tc.arg, got, ok, tc.want)
		}
	}
	if p, _ := s.QueuePolicies("c"); p != "t" {
		t.Errorf("policy of c = %q, want t", p)
	}
	b.typed("q3", "quorum", "x-consumer-timeout", 1000)
	if got, _ := b.simFor("4.3").QueueArgs("q3").Int("x-consumer-timeout"); got != 1000 {
		t.Errorf("q3 x-consumer-timeout = %d, want its own 1000 (the smaller)", got)
	}
}
