package lock

import "testing"

func TestOutOfReach(t *testing.T) {
	cases := []struct {
		reason string
		want   bool
	}{
		// RabbitMQ 3.10, a classic queue whose node is down.
		{"NOT_FOUND - home node 'mqctl-c1@localhost' of durable queue 'orders.scratch' in vhost 'v' is down or inaccessible", true},
		// RabbitMQ 4.0, the same.
		{"NOT_FOUND - queue 'orders.scratch' in vhost 'v' process is stopped by supervisor", true},
		// Both, a queue that does not exist.
		{"NOT_FOUND - no queue 'orders.scratch' in vhost 'v'", false},
	}
	for _, c := range cases {
		if got := outOfReach(c.reason); got != c.want {
			t.Errorf("outOfReach(%q) = %v, want %v", c.reason, got, c.want)
		}
	}
}
