// Package dlq reads and replays dead-lettered messages over AMQP: it peeks
// at a dead-letter queue without taking messages off it, decodes each
// message's x-death history (why, from where, how often), and replays
// messages to where they came from, or where the topology routes them,
// without losing one.
package dlq

import (
	"context"
	"errors"
	"fmt"
	"strings"

	amqp "github.com/rabbitmq/amqp091-go"
)

// DefaultPeekLimit is how many messages Peek shows unless told otherwise.
const DefaultPeekLimit = 10

// PeekResult is what Peek read.
type PeekResult struct {
	Queue string
	// InQueue is the number of ready messages when the peek started.
	InQueue  int
	Messages []Message
	// Delayed are the messages the queue holds back for a delayed retry
	// (RabbitMQ 4.3 quorum queues), which no read reaches until their wait
	// is over; DelayedRetry describes that wait. Set by the caller, from
	// the broker's statistics.
	Delayed      int
	DelayedRetry string
	// Uncounted: the queue's count (its passive declare) was 0, yet it
	// held messages: InQueue is how many were read, a lower bound.
	Uncounted bool
}

// uncountedError is the error of a read (basic.get) of queue, whose count
// came back 0, that failed: a quorum queue's leader that does not answer
// its count in time does not answer the read either, and RabbitMQ's 0 is
// then no count, so the queue is not said to be empty.
func uncountedError(queue string, err error) error {
	var ae *amqp.Error
	if errors.As(err, &ae) && ae.Code == amqp.InternalError && strings.Contains(ae.Reason, "timeout") {
		// RabbitMQ's own words hold the leader's state, many lines of it.
		err = errors.New("the queue did not answer the read within RabbitMQ's time (INTERNAL_ERROR, timeout)")
	}
	return fmt.Errorf("queue %q: its count came back 0, but reading it failed, so whether it holds messages is %w: %v. RabbitMQ answers a count of 0 for a quorum queue whose leader does not answer within 250 ms, whatever it holds, so nothing was read; check its leader (rabbitmq-queues quorum_status) and run again once it answers", queue, ErrUncounted, err)
}

// uncountedReplayError refuses the replay, without --limit, of queue,
// whose count came back 0 while a read found a message in it.
func uncountedReplayError(queue string) error {
	return fmt.Errorf("queue %q: its count came back 0, yet a read found a message in it, so how many it holds is %w (RabbitMQ answers a count of 0 for a quorum queue whose leader does not answer within 250 ms): a replay takes at most the messages a queue holds when it starts, so that one that dies again is not replayed twice; nothing was replayed and the message read is back in the queue. Run the replay again with --limit N to take N messages at most, or once its leader answers (rabbitmq-queues quorum_status)", queue, ErrUncounted)
}

// ErrUncounted is the error of a peek or replay of a queue whose count
// came back 0 and that did not answer a read: not known to be empty.
var ErrUncounted = errors.New("not known")

// Peek reads the first limit messages of queue without removing them: it
// takes them with basic.get, unacknowledged, and returns them all to the
// queue with one basic.nack (requeue), which puts them back in their
// places, in order. The broker marks them redelivered; before RabbitMQ 4.3
// a quorum queue also counts the return as a delivery attempt (see
// DeliveryLimit), 4.3 counts a nack with requeue as none. A stream, which
// refuses basic.get, is a StreamError.
func Peek(ctx context.Context, conn *amqp.Connection, queue string, limit int) (*PeekResult, error) {
	if limit <= 0 {
		limit = DefaultPeekLimit
	}
	ch, err := conn.Channel()
	if err != nil {
		return nil, fmt.Errorf("open an AMQP channel: %w", err)
	}
	defer ch.Close()
	q, err := ch.QueueDeclarePassive(queue, false, false, false, false, nil)
	if err != nil {
		return nil, queueError(queue, err)
	}
	res := &PeekResult{Queue: queue, InQueue: q.Messages}
	// A count of 0 is checked: a quorum queue's passive declare answers
	// 0 whatever the queue holds when its leader does not answer within
	// 250 ms (Uncounted). A basic.get is the queue's own answer: empty,
	// a message, or, from a leader that does not answer, an error.
	counted := q.Messages > 0
	var last uint64
	for i := 1; i <= limit && (i <= q.Messages || !counted); i++ {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		d, ok, err := ch.Get(queue, false)
		if err != nil {
			if se := streamGetError(queue, err); se != nil {
				return nil, se
			}
			if !counted && i == 1 {
				return nil, uncountedError(queue, err)
			}
			return nil, fmt.Errorf("read message %d of %q: %w", i, queue, err)
		}
		if !ok {
			break
		}
		last = d.DeliveryTag
		res.Messages = append(res.Messages, fromDelivery(i, d))
	}
	if !counted && len(res.Messages) > 0 {
		res.Uncounted, res.InQueue = true, len(res.Messages)
	}
	if last > 0 {
		if err := ch.Nack(last, true, true); err != nil {
			return nil, fmt.Errorf("return the peeked messages to %q: %w (the broker returns them when the connection closes)", queue, err)
		}
	}
	return res, nil
}
