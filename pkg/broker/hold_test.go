package broker

import (
	"bytes"
	"context"
	"errors"
	"io"
	"sync/atomic"
	"testing"
)

// source is an answer's body: it closes drained once it has given its
// last byte and been read again (io.EOF), then fails with err (io.EOF
// when nil).
type source struct {
	r       io.Reader
	err     error
	drained chan struct{}
}

func (s *source) Read(p []byte) (int, error) {
	n, err := s.r.Read(p)
	if err == io.EOF {
		if s.drained != nil {
			close(s.drained)
			s.drained = nil
		}
		if s.err != nil {
			err = s.err
		}
	}
	return n, err
}

// counting counts the bytes read through it.
type counting struct {
	r io.Reader
	n atomic.Int64
}

func (c *counting) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n.Add(int64(n))
	return n, err
}

func TestHeldDefinitions(t *testing.T) {
	data := make([]byte, 3*heldChunk+1234)
	for i := range data {
		data[i] = byte(i * 7)
	}
	for _, tc := range []struct {
		name   string
		buf    int // the decoder's reads
		source func() io.Reader
	}{
		{"one read", len(data) + 1, func() io.Reader { return bytes.NewReader(data) }},
		{"small reads", 100, func() io.Reader { return bytes.NewReader(data) }},
		{"a byte at a time from the connection", 4096, func() io.Reader { return &oneByte{bytes.NewReader(data)} }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ready := make(chan struct{})
			src := &source{r: tc.source(), drained: make(chan struct{})}
			drained := src.drained
			c := &counting{r: held(HoldDefinitions(context.Background(), ready), src)}
			got := make(chan []byte)
			go func() {
				var out []byte
				buf := make([]byte, tc.buf)
				for {
					n, err := c.Read(buf)
					out = append(out, buf[:n]...)
					if err != nil {
						got <- out
						return
					}
				}
			}()
			<-drained // the whole answer is read from the connection
			if n := c.n.Load(); n != 0 {
				t.Fatalf("%d bytes given to the decoder before ready, want 0", n)
			}
			close(ready)
			if out := <-got; !bytes.Equal(out, data) {
				t.Errorf("gave %d bytes, want the answer's %d as they came", len(out), len(data))
			}
		})
	}
}

// oneByte gives a byte per read.
type oneByte struct{ r io.Reader }

func (o *oneByte) Read(p []byte) (int, error) { return o.r.Read(p[:min(len(p), 1)]) }

func TestHeldDefinitionsFailures(t *testing.T) {
	broken := errors.New("connection reset by peer")
	t.Run("a failure is given at once", func(t *testing.T) {
		ready := make(chan struct{}) // never closed
		r := held(HoldDefinitions(context.Background(), ready), &source{r: bytes.NewReader([]byte(`{"queues":[`)), err: broken})
		out, err := io.ReadAll(r)
		if !errors.Is(err, broken) || string(out) != `{"queues":[` {
			t.Errorf("got %q, %v; want what came and the failure", out, err)
		}
	})
	t.Run("cancelled while held", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		src := &source{r: bytes.NewReader([]byte(`{}`)), drained: make(chan struct{})}
		drained := src.drained
		r := held(HoldDefinitions(ctx, make(chan struct{})), src)
		done := make(chan error)
		go func() {
			_, err := io.ReadAll(r)
			done <- err
		}()
		<-drained
		cancel()
		if err := <-done; !errors.Is(err, context.Canceled) {
			t.Errorf("got %v, want the cancellation", err)
		}
	})
	t.Run("nothing held without HoldDefinitions", func(t *testing.T) {
		src := &source{r: bytes.NewReader(nil)}
		if r := held(context.Background(), src); r != io.Reader(src) {
			t.Errorf("held wrapped the body")
		}
	})
}
