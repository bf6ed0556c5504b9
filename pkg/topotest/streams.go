package topotest

import (
	"context"
	"fmt"
	"sync"

	amqp "github.com/rabbitmq/amqp091-go"
)

// streamWatch reads streams, which basic.get cannot read: a consumer per
// stream from its first offset records every message that arrives.
type streamWatch struct {
	names []string
	mu    sync.Mutex
	seen  []copyOf
}

func watchStreams(ctx context.Context, conn *amqp.Connection, streams []string) (*streamWatch, error) {
	w := &streamWatch{names: streams}
	if len(streams) == 0 {
		return w, nil
	}
	ch, err := conn.Channel()
	if err != nil {
		return nil, fmt.Errorf("open an AMQP channel to read streams: %w", err)
	}
	if err := ch.Qos(100, 0, false); err != nil { // streams need a prefetch
		return nil, fmt.Errorf("set the prefetch to read streams: %w", err)
	}
	for _, q := range streams {
		ds, err := ch.ConsumeWithContext(ctx, q, "", false, false, false, false, amqp.Table{"x-stream-offset": "first"})
		if err != nil {
			return nil, fmt.Errorf("read stream %q: %w", q, err)
		}
		go func() {
			// Ends when the connection closes.
			for d := range ds {
				c := copyOf{id: d.MessageId, queue: q}
				c.diedIn, c.reason = latestDeath(d.Headers)
				w.mu.Lock()
				w.seen = append(w.seen, c)
				w.mu.Unlock()
				_ = d.Ack(false)
			}
		}()
	}
	return w, nil
}

// copies returns what the streams received so far.
func (w *streamWatch) copies() []copyOf {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]copyOf(nil), w.seen...)
}
