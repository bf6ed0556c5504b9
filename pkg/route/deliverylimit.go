package route

import "fmt"

// What counts towards a quorum queue's delivery limit, per version. Before
// 4.3 every return of a message counts: rabbit_fifo return_one/8 at
// v4.0.5 drops it once acquired_count > limit, and acquired_count grows at
// each return (the same with delivery_count at v3.10.8). 4.3 counts failed
// deliveries only: return_one at v4.3.5 drops it once delivery_count >
// limit, and delivery_count grows only on a return flagged failed:
// basic.reject with requeue (rabbit_channel at v4.3.5: settle(true,
// false)), and the messages a consumer holds when its process goes down
// (handle_down/3 → cancel_consumer(…, down) → return_all(…, Reason ==
// down)), i.e. its channel or connection closing, a crash included. Not
// failed: basic.nack with requeue and basic.recover (requeue), a consumer
// timeout, and the return after consumer-disconnected-timeout of a
// consumer whose node is cut off (return_all(…, false)).

// DeliveryLimitRule says what a quorum queue with delivery limit limit
// does on the simulator's version: when, as a verb phrase ("it …"), it
// dead-letters a message, or drops it when drop is set (no dead-letter
// exchange); and what counts towards the limit, as a sentence.
func (s *Simulator) DeliveryLimitRule(limit int64, drop bool) (when, counts string) {
	verb := "dead-letters"
	if drop {
		verb = "drops"
	}
	if !s.ver.CountsRequeueAsDelivery() {
		when = fmt.Sprintf("%s a message once more than %d of its deliveries have failed", verb, limit)
		if limit <= 0 {
			when = verb + " a message at its first failed delivery"
		}
		return when, "a basic.reject with requeue is a failed delivery, and so is its consumer's channel or connection closing with it unacknowledged (a crash included); a basic.nack with requeue, basic.recover and a consumer timeout are not"
	}
	when = fmt.Sprintf("delivers a message at most %d times after the first and %s it when it comes back again", limit, verb)
	if limit <= 0 {
		when = verb + " a message the first time it comes back"
	}
	return when, "every return counts: a basic.reject or basic.nack with requeue, basic.recover, its consumer's channel or connection closing with it unacknowledged (a crash, or a consumer timeout closing it, included)"
}

// DeliveryCountHeaders says what the headers a quorum queue adds to a
// delivered message count on the simulator's version (rabbit_fifo_client
// add_delivery_count_header/2 at v4.0.5 and v4.3.0, rmqversion
// AcquiredCountHeader).
func (s *Simulator) DeliveryCountHeaders() string {
	if s.ver.AcquiredCountHeader() {
		return "x-delivery-count counts its failed deliveries (absent until the first), x-acquired-count every delivery"
	}
	return "x-delivery-count counts its returns"
}
