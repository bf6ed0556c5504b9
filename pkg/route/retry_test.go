package route

import (
	"strconv"
	"testing"
)

// TestDelayedRetry: a quorum queue's delayed retry as 4.3 resolves it from
// its arguments and policies (rabbit_quorum_queue
// get_delayed_retry_config/1, merge_policy_value/3 at v4.3.5), with the
// values the broker accepts silently and then treats as disabled or as
// max = min.
func TestDelayedRetry(t *testing.T) {
	tests := []struct {
		name string
		b    *vb
		ver  string
		want string // type/min/max, "" when disabled
	}{
		{"arguments", vhost().typed("q", "quorum", "x-delayed-retry-type", "all", "x-delayed-retry-min", 1000, "x-delayed-retry-max", 60000), "4.3", "all/1000/60000"},
		{"max missing: max is min", vhost().typed("q", "quorum", "x-delayed-retry-type", "failed", "x-delayed-retry-min", 500), "4.3", "failed/500/500"},
		{"max not an integer: max is min", vhost().typed("q", "quorum", "x-delayed-retry-type", "failed", "x-delayed-retry-min", 500, "x-delayed-retry-max", "1m"), "4.3", "failed/500/500"},
		{"max below min stays", vhost().typed("q", "quorum", "x-delayed-retry-type", "returned", "x-delayed-retry-min", 1000, "x-delayed-retry-max", 500), "4.3", "returned/1000/500"},
		{"min missing: disabled", vhost().typed("q", "quorum", "x-delayed-retry-type", "all"), "4.3", ""},
		{"min 0: disabled", vhost().typed("q", "quorum", "x-delayed-retry-type", "all", "x-delayed-retry-min", 0), "4.3", ""},
		{"min negative: disabled", vhost().typed("q", "quorum", "x-delayed-retry-type", "all", "x-delayed-retry-min", -5), "4.3", ""},
		{"min a string: disabled", vhost().typed("q", "quorum", "x-delayed-retry-type", "all", "x-delayed-retry-min", "1000"), "4.3", ""},
		{"unknown type: disabled", vhost().typed("q", "quorum", "x-delayed-retry-type", "bogus", "x-delayed-retry-min", 1000), "4.3", ""},
		{"type disabled", vhost().typed("q", "quorum", "x-delayed-retry-type", "disabled", "x-delayed-retry-min", 1000), "4.3", ""},
		{"no type: disabled", vhost().typed("q", "quorum", "x-delayed-retry-min", 1000), "4.3", ""},
		{"classic queue: never", vhost().q("q", "x-delayed-retry-type", "all", "x-delayed-retry-min", 1000), "4.3", ""},
		{"before 4.3: never", vhost().typed("q", "quorum", "x-delayed-retry-type", "all", "x-delayed-retry-min", 1000), "4.0", ""},
		{"policy", vhost().typed("q", "quorum").policy("p", "^q$", "quorum_queues", 0, "delayed-retry-type", "all", "delayed-retry-min", 200, "delayed-retry-max", 2000), "4.3", "all/200/2000"},
		{"the policy's type wins over the argument's",
			vhost().typed("q", "quorum", "x-delayed-retry-type", "all", "x-delayed-retry-min", 1000).policy("p", "^q$", "queues", 0, "delayed-retry-type", "failed", "delayed-retry-min", 100), "4.3", "failed/100/100"},
		{"the smaller min and max of argument and policy",
			vhost().typed("q", "quorum", "x-delayed-retry-type", "all", "x-delayed-retry-min", 100, "x-delayed-retry-max", 9000).policy("p", "^q$", "queues", 0, "delayed-retry-type", "all", "delayed-retry-min", 300, "delayed-retry-max", 5000), "4.3", "all/100/5000"},
		{"operator policy: its type, the larger min, the smaller max (4.3.1+)",
			vhost().typed("q", "quorum").policy("p", "^q$", "queues", 0, "delayed-retry-type", "all", "delayed-retry-min", 300, "delayed-retry-max", 5000).
				opPolicy("op", "^q$", "queues", 0, "delayed-retry-type", "failed", "delayed-retry-min", 700, "delayed-retry-max", 4000), "4.3.1", "failed/700/4000"},
		{"policies on 4.3.0: refused (a bug 4.3.1 fixed), none in force",
			vhost().typed("q", "quorum").policy("p", "^q$", "queues", 0, "delayed-retry-type", "all", "delayed-retry-min", 300, "delayed-retry-max", 5000).
				opPolicy("op", "^q$", "queues", 0, "delayed-retry-type", "failed", "delayed-retry-min", 700), "4.3.0", ""},
		{"a policy the broker refuses (max below min) is not in force: the queue keeps its own arguments",
			vhost().typed("q", "quorum", "x-delayed-retry-type", "all", "x-delayed-retry-min", 1000).
				policy("p", "^q$", "queues", 0, "delayed-retry-type", "failed", "delayed-retry-min", 5000, "delayed-retry-max", 1000), "4.3", "all/1000/1000"},
		{"nor one with an unknown type",
			vhost().typed("q", "quorum").policy("p", "^q$", "queues", 0, "delayed-retry-type", "sometimes", "delayed-retry-min", 100, "max-length", 10), "4.3", ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			d, ok := tc.b.simFor(tc.ver).DelayedRetry("q")
			got := ""
			if ok {
				got = d.Type + "/" + strconv.FormatInt(d.MinMS, 10) + "/" + strconv.FormatInt(d.MaxMS, 10)
			}
			if got != tc.want {
				t.Errorf("DelayedRetry = %q, want %q", got, tc.want)
			}
		})
	}
}

// TestDelayedRetryDelay: a returned message waits min(min × n, max) ms, n
// its failed deliveries (at least 1), and only the returns its type names
// wait (rabbit_fifo should_delay0/4, calculate_ready_at/4 at v4.3.5).
func TestDelayedRetryDelay(t *testing.T) {
	d := DelayedRetry{Type: RetryAll, MinMS: 1000, MaxMS: 2500}
	for n, want := range map[int64]int64{0: 1000, 1: 1000, 2: 2000, 3: 2500, 10: 2500} {
		if got := d.Delay(n); got != want {
			t.Errorf("Delay(%d) = %d, want %d", n, got, want)
		}
	}
	if got := (DelayedRetry{Type: RetryAll, MinMS: 1000, MaxMS: 500}).Delay(3); got != 500 {
		t.Errorf("max below min: Delay = %d, want 500 (max)", got)
	}
	for _, tc := range []struct {
		typ                 string
		failed, otherReturn bool
	}{{RetryAll, true, true}, {RetryFailed, true, false}, {RetryReturned, false, true}, {RetryDisabled, false, false}} {
		d := DelayedRetry{Type: tc.typ}
		if d.Delays(true) != tc.failed || d.Delays(false) != tc.otherReturn {
			t.Errorf("%s: delays a failed delivery %v, another return %v", tc.typ, d.Delays(true), d.Delays(false))
		}
	}
}
