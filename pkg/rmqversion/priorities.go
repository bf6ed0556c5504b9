package rmqversion

// QuorumPriority is how a quorum queue orders the messages it holds by
// their priority property. A quorum queue takes no x-max-priority argument
// on any version (it refuses one): it reads each message's priority.
type QuorumPriority int

const (
	// QuorumFIFO: priorities are ignored, messages leave in the order they
	// came (before 4.0: rabbit_fifo at v3.13.7 reads consumer priorities
	// only).
	QuorumFIFO QuorumPriority = iota
	// QuorumTwoClasses: a message with priority above 4 is high, any other
	// normal; while both classes hold messages the queue delivers two high
	// ones for each normal one, each class in arrival order (4.0 to 4.2,
	// "Quorum queues now support priorities" in the 4.0.0 release notes;
	// rabbit_fifo_q ?WEIGHT 2 at v4.0.5).
	QuorumTwoClasses
	// QuorumStrict: 32 levels, highest first, each level in arrival order;
	// a priority above 31 counts as 31 and a message without one as 4, so
	// priorities 0 to 3 come after unprioritised messages (4.3+: quorum
	// queue machine version 8, rabbit_fifo:msg_priority/1 at v4.3.5; active
	// only once every member of the queue runs 4.3).
	QuorumStrict
)

// QuorumPriorities is how a quorum queue orders messages by priority on v
// (measured on 3.10.8, 4.0.5 and 4.3.6 by TestQuorumPriorityOrderAgainstBroker).
func (v Version) QuorumPriorities() QuorumPriority {
	switch {
	case v.AtLeast(4, 3):
		return QuorumStrict
	case v.AtLeast(4, 0):
		return QuorumTwoClasses
	}
	return QuorumFIFO
}

// QuorumPriorityAdvice says, for a quorum queue that sets x-max-priority
// (which the broker refuses), what v's quorum queues do with priorities
// instead, and the fix.
func (v Version) QuorumPriorityAdvice() string {
	switch v.QuorumPriorities() {
	case QuorumStrict:
		return "quorum queues need no argument for priorities: on RabbitMQ 4.3 they deliver strictly by the message's priority, 0 to 31, highest first (a message without one counts as 4, so priorities 0 to 3 come after it). Remove it"
	case QuorumTwoClasses:
		return "quorum queues need no argument for priorities, but before RabbitMQ 4.3 they know only two: a message with priority above 4 is high, and they deliver two high messages for each normal one, not strictly. Remove it; if the order must be strict, use a classic queue with x-max-priority (or one queue per priority), or target RabbitMQ 4.3"
	}
	return "quorum queues ignore message priorities before RabbitMQ 4.0: use a classic queue with x-max-priority, or one queue per priority"
}
