package broker

import (
	"net"
	"sync"
)

// batchWriter is a connection whose writes return once queued: one
// goroutine writes what is queued, all of it in one write. amqp091-go
// writes and flushes every frame under the connection's send lock, so the
// passive declares of a plan's exact reads (StakeReaders goroutines on
// channels of one connection) each cost a write system call of their own
// on the client and a packet of their own for the broker's reader; queued,
// the frames of the goroutines that wait behind one write go in the next
// one. A failed write fails every write after it and closes the connection,
// so that its reader ends as well and the client's calls end with the
// error.
type batchWriter struct {
	net.Conn
	mu      sync.Mutex
	queued  []byte
	spare   []byte
	err     error
	closed  bool
	wake    chan struct{} // one token: something is queued
	stopped chan struct{} // the writing goroutine is done
}

// newBatchWriter wraps c and starts its writing goroutine, which ends when
// the connection is closed or a write fails.
func newBatchWriter(c net.Conn) *batchWriter {
	w := &batchWriter{Conn: c, wake: make(chan struct{}, 1), stopped: make(chan struct{})}
	go w.run()
	return w
}

// Write queues p for the writing goroutine. Its error is that of an earlier
// write that failed.
func (w *batchWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	if w.err != nil {
		err := w.err
		w.mu.Unlock()
		return 0, err
	}
	if w.closed {
		w.mu.Unlock()
		return 0, net.ErrClosed
	}
	w.queued = append(w.queued, p...)
	select {
	case w.wake <- struct{}{}:
	default: // already woken: it takes what is queued when it gets there
	}
	w.mu.Unlock()
	return len(p), nil
}

func (w *batchWriter) run() {
	defer close(w.stopped)
	for range w.wake {
		for {
			w.mu.Lock()
			if w.err != nil || len(w.queued) == 0 {
				w.mu.Unlock()
				break
			}
			out := w.queued
			w.queued = w.spare[:0]
			w.mu.Unlock()
			_, err := w.Conn.Write(out)
			w.mu.Lock()
			w.spare = out
			if err != nil && w.err == nil {
				w.err = err
			}
			w.mu.Unlock()
			if err != nil {
				_ = w.Conn.Close()
				return
			}
		}
	}
}

// Close closes the connection and ends the writing goroutine. What is
// still queued is not written: amqp091-go closes the connection once the
// broker has answered its connection.close (nothing is left to write
// then), or after a failure.
func (w *batchWriter) Close() error {
	w.mu.Lock()
	if !w.closed {
		w.closed = true
		close(w.wake)
	}
	w.mu.Unlock()
	err := w.Conn.Close() // ends a write under way
	<-w.stopped
	return err
}
