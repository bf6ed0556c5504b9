package route

import (
	"github.com/mqctl/mqctl/pkg/rmqversion"
	"github.com/mqctl/mqctl/pkg/topology"
)

// Delayed retry types (x-delayed-retry-type, policy key delayed-retry-type),
// as rmqversion names them.
const (
	RetryDisabled = rmqversion.RetryDisabled // returned messages are available again at once
	RetryAll      = rmqversion.RetryAll      // every return waits
	RetryFailed   = rmqversion.RetryFailed   // only failed deliveries wait (basic.reject with requeue, a consumer gone)
	RetryReturned = rmqversion.RetryReturned // only the other returns wait (basic.nack with requeue, a consumer timeout, …)
)

// DelayedRetry is a quorum queue's delayed retry as RabbitMQ 4.3 resolves
// it (rabbit_quorum_queue get_delayed_retry_config/1 at v4.3.5): a message
// returned to the queue waits before it can be delivered again.
type DelayedRetry struct {
	Type  string `json:"type"` // all, failed or returned
	MinMS int64  `json:"min_ms"`
	MaxMS int64  `json:"max_ms"`
	// MaxIsMin is true when no usable x-delayed-retry-max is set (missing,
	// or not a positive integer): the broker takes min as max.
	MaxIsMin bool `json:"max_is_min,omitempty"`
}

// Delay is how long a returned message waits when its delivery count
// (failed deliveries so far, x-delivery-count) is n: min(min × n, max),
// n taken as at least 1 (rabbit_fifo calculate_ready_at/4 at v4.3.5). A
// return that is not a failed delivery does not raise n, so under type
// returned the delay does not grow.
func (d DelayedRetry) Delay(n int64) int64 {
	return min(d.MinMS*max(n, 1), d.MaxMS)
}

// Delays reports whether a return waits: failed tells a failed delivery
// (basic.reject with requeue, a consumer's channel gone with the message
// unacknowledged) from another return (basic.nack with requeue,
// basic.recover, a consumer timeout; rabbit_fifo should_delay0/4 at
// v4.3.5).
func (d DelayedRetry) Delays(failed bool) bool {
	switch d.Type {
	case RetryAll:
		return true
	case RetryFailed:
		return failed
	case RetryReturned:
		return !failed
	}
	return false
}

// DelayedRetry returns the delayed retry of queue name, when it has one:
// a quorum queue on a version that reads it (rmqversion DelayedRetry,
// 4.3+), whose effective x-delayed-retry-type (argument or policy, the
// policy winning) is all, failed or returned and whose effective
// x-delayed-retry-min (the smaller of argument and policy) is a positive
// integer. Anything else leaves it disabled, silently on the broker's
// side: a type it does not know, a missing or bad min. A missing or bad
// max is min; a max below min stays as it is, so every retry waits max.
func (s *Simulator) DelayedRetry(name string) (DelayedRetry, bool) {
	q, ok := s.v.Queues[name]
	if !ok || q == nil || queueType(q) != topology.QueueQuorum || !s.ver.DelayedRetry() {
		return DelayedRetry{}, false
	}
	return ResolveDelayedRetry(s.queues[name].args)
}

// ResolveDelayedRetry is the delayed retry that quorum queue arguments
// args (a queue's own, or its effective ones) make, as RabbitMQ 4.3 reads
// them (see Simulator.DelayedRetry); false when they leave it disabled.
func ResolveDelayedRetry(args topology.Args) (DelayedRetry, bool) {
	typ, _ := args["x-delayed-retry-type"].(string)
	switch typ {
	case RetryAll, RetryFailed, RetryReturned:
	default:
		return DelayedRetry{}, false
	}
	minMS, ok := topology.PositiveInt(args["x-delayed-retry-min"])
	if !ok {
		return DelayedRetry{}, false
	}
	d := DelayedRetry{Type: typ, MinMS: minMS, MaxMS: minMS, MaxIsMin: true}
	if maxMS, ok := topology.PositiveInt(args["x-delayed-retry-max"]); ok {
		d.MaxMS, d.MaxIsMin = maxMS, false
	}
	return d, true
}
