package dlq

import (
	"errors"
	"fmt"
	"strings"

	amqp "github.com/rabbitmq/amqp091-go"
)

// StreamError refuses to read a stream: peek and replay take messages
// with basic.get, which RabbitMQ refuses on a stream (540 NOT_IMPLEMENTED,
// closing the channel), and replay removes what it republishes, which a
// stream never does (its messages go only by its retention).
type StreamError struct {
	Queue string
}

func (e *StreamError) Error() string {
	return fmt.Sprintf("queue %q is a stream: mqctl dlq reads a queue with basic.get, which streams do not support, "+
		"and replay removes each message it republishes; a stream keeps its messages (consumers read it from an offset; only its retention removes them), so there is nothing to take off it. "+
		"Read it with a stream consumer from offset first: a RabbitMQ stream client (the stream protocol, plugin rabbitmq_stream), "+
		"or an AMQP 0-9-1 consumer with a prefetch (basic.qos, e.g. 100), manual acks and the consumer argument x-stream-offset=first. "+
		"To keep dead letters for replay, make the DLQ a classic or quorum queue: declare one under a new name, bound to the dead-letter exchange in place of %q "+
		"(a queue's type cannot change, and replacing the stream deletes its messages), and mqctl dlq peek and replay work on it",
		e.Queue, e.Queue)
}

// streamGetError turns RabbitMQ's refusal of basic.get on a stream into a
// StreamError, for when the queue's type was not known before reading;
// nil for any other error.
func streamGetError(queue string, err error) error {
	var ae *amqp.Error
	if errors.As(err, &ae) && ae.Code == amqp.NotImplemented && strings.Contains(ae.Reason, "stream") {
		return &StreamError{Queue: queue}
	}
	return nil
}
