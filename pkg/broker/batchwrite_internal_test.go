package broker

import (
	"bytes"
	"errors"
	"fmt"
	"net"
	"sync"
	"testing"
)

// gateConn is a connection whose writes wait for the test to let them
// through (release), and are recorded one by one.
type gateConn struct {
	net.Conn // nil: only Write and Close are called
	mu       sync.Mutex
	writes   [][]byte
	gate     chan struct{}
	entered  chan struct{} // a write has begun
	wrote    chan struct{} // a write has been recorded
	fail     error         // what every write returns, when set
	closed   chan struct{}
	once     sync.Once
}

func newGateConn() *gateConn {
	return &gateConn{gate: make(chan struct{}), entered: make(chan struct{}, 100), wrote: make(chan struct{}, 100), closed: make(chan struct{})}
}

func (g *gateConn) Write(p []byte) (int, error) {
	g.entered <- struct{}{}
	select {
	case <-g.gate:
	case <-g.closed:
		return 0, net.ErrClosed
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.fail != nil {
		return 0, g.fail
	}
	g.writes = append(g.writes, bytes.Clone(p))
	g.wrote <- struct{}{}
	return len(p), nil
}

func (g *gateConn) Close() error {
	g.once.Do(func() { close(g.closed) })
	return nil
}

func (g *gateConn) recorded() [][]byte {
	g.mu.Lock()
	defer g.mu.Unlock()
	return slicesClone(g.writes)
}

func slicesClone(w [][]byte) [][]byte { return append([][]byte(nil), w...) }

// TestBatchWriterBatches: the writes made while one is under way go out
// together in the next write, in the order they were made; without the
// batching each is a write of its own (what amqp091-go does with every
// frame of the exact reads' passive declares).
func TestBatchWriterBatches(t *testing.T) {
	g := newGateConn()
	w := newBatchWriter(g)
	defer w.Close()
	if _, err := w.Write([]byte("first;")); err != nil {
		t.Fatal(err)
	}
	<-g.entered // the writing goroutine is in the first write
	for i := range 10 {
		if n, err := w.Write(fmt.Appendf(nil, "f%d;", i)); err != nil || n != len(fmt.Sprintf("f%d;", i)) {
			t.Fatalf("queued write %d: %d, %v", i, n, err)
		}
	}
	g.gate <- struct{}{} // the first write ends
	<-g.entered
	g.gate <- struct{}{} // the second
	<-g.wrote
	<-g.wrote
	got := g.recorded()
	want := []string{"first;", "f0;f1;f2;f3;f4;f5;f6;f7;f8;f9;"}
	if len(got) != len(want) {
		t.Fatalf("%d writes %q, want %d: %q", len(got), got, len(want), want)
	}
	for i := range want {
		if string(got[i]) != want[i] {
			t.Errorf("write %d = %q, want %q", i, got[i], want[i])
		}
	}
}

// TestBatchWriterConcurrentWritesIntact: writes from many goroutines at
// once arrive whole (a frame is never split by another) and, for each
// goroutine, in its order.
func TestBatchWriterConcurrentWritesIntact(t *testing.T) {
	client, server := net.Pipe()
	w := newBatchWriter(client)
	const writers, each = 16, 200
	var wg sync.WaitGroup
	for g := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range each {
				if _, err := w.Write(fmt.Appendf(nil, "<%02d:%04d>", g, i)); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	total := writers * each * len("<00:0000>")
	read := make([]byte, 0, total)
	buf := make([]byte, 4096)
	for len(read) < total {
		n, err := server.Read(buf)
		if err != nil {
			t.Fatal(err)
		}
		read = append(read, buf[:n]...)
	}
	wg.Wait()
	w.Close()
	next := make([]int, writers)
	for len(read) > 0 {
		var g, i int
		if _, err := fmt.Sscanf(string(read[:9]), "<%02d:%04d>", &g, &i); err != nil {
			t.Fatalf("a frame was split: %q (%v)", read[:9], err)
		}
		if i != next[g] {
			t.Fatalf("writer %d: frame %d came where %d was due", g, i, next[g])
		}
		next[g]++
		read = read[9:]
	}
}

// TestBatchWriterFailure: once a write fails, every later write returns
// its error and the connection is closed (its reader then ends too, and
// amqp091-go with it).
func TestBatchWriterFailure(t *testing.T) {
	g := newGateConn()
	g.fail = errors.New("broken pipe")
	w := newBatchWriter(g)
	if _, err := w.Write([]byte("a")); err != nil {
		t.Fatal(err)
	}
	<-g.entered
	g.gate <- struct{}{}
	<-w.stopped // the writing goroutine ended on the failure
	select {
	case <-g.closed:
	default:
		t.Error("the connection was not closed after the failed write")
	}
	if _, err := w.Write([]byte("b")); err == nil || err.Error() != "broken pipe" {
		t.Errorf("write after the failure: %v, want broken pipe", err)
	}
	if err := w.Close(); err != nil {
		t.Errorf("close: %v", err)
	}
}

// TestBatchWriterClose: Close ends a write under way (the connection is
// closed under it) and the writing goroutine; a write after it fails.
func TestBatchWriterClose(t *testing.T) {
	g := newGateConn()
	w := newBatchWriter(g)
	if _, err := w.Write([]byte("a")); err != nil {
		t.Fatal(err)
	}
	<-g.entered // blocked in the write, until the connection closes
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := w.Write([]byte("b")); !errors.Is(err, net.ErrClosed) {
		t.Errorf("write after close: %v, want %v", err, net.ErrClosed)
	}
	if err := w.Close(); err != nil {
		t.Errorf("second close: %v", err)
	}
}

// TestDialBatch: DialAMQP's connections batch their writes where asked
// (AMQPDial.Batch, the plan's exact reads), and only there, keeping what
// the peer sent first either way (for dialFailure).
func TestDialBatch(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			_, _ = c.Write([]byte("AMQP"))
			_ = c.Close()
		}
	}()
	for _, batch := range []bool{false, true} {
		d := &amqpDialer{ctx: t.Context(), net: &net.Dialer{}, stop: func() bool { return true }, batch: batch}
		c, err := d.dial("tcp", ln.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		_, isBatch := c.(*batchWriter)
		if isBatch != batch {
			t.Errorf("batch %v: the connection is a %T", batch, c)
		}
		buf := make([]byte, 4)
		if _, err := c.Read(buf); err != nil {
			t.Fatal(err)
		}
		if d.first.bytes() != "AMQP" {
			t.Errorf("batch %v: first bytes %q, want AMQP", batch, d.first.bytes())
		}
		d.stop()
		_ = c.Close()
	}
}
