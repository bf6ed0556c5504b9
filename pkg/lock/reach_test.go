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
		// Every version (rabbit_amqqueue:priv_absent), a queue whose
		// process died and did not come back: it holds what it held.
		{"NOT_FOUND - queue 'orders.scratch' in vhost 'v' has crashed and failed to restart", true},
		{"NOT_FOUND - failed to perform operation on queue 'orders.scratch' in vhost 'v' due to timeout", true},
		{"NOT_FOUND - failed to perform operation on queue 'orders.scratch' in vhost 'v': its leader <0.734.0> may be stopping or being demoted", true},
		{"NOT_FOUND - failed to perform operation on queue 'orders.scratch' in vhost 'v': its master replica <0.734.0> may be stopping or being demoted", true},
		// All three, a queue that does not exist.
		{"NOT_FOUND - no queue 'orders.scratch' in vhost 'v'", false},
	}
	for _, c := range cases {
		if got := outOfReach(c.reason); got != c.want {
			t.Errorf("outOfReach(%q) = %v, want %v", c.reason, got, c.want)
		}
	}
}
