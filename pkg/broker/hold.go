package broker

import (
	"context"
	"io"
)

// holdKey is the context key of HoldDefinitions.
type holdKey struct{}

// HoldDefinitions returns ctx for reads whose definitions exports (GET
// /api/definitions/{vhost}, a read's one large answer) are fetched at once
// but decoded only once ready is closed: until then the answer's bytes are
// read from the connection as they come and kept as they are. A plan of a
// large file reads the broker while the file loads: the export's JSON
// (7.8 MB for 50,002 objects on RabbitMQ 4.3.6) takes less memory than
// what it decodes into (some 19 MB), and the file's node tree (some 30 MB)
// is freed by the time ready is closed, so that the two are not held at
// once. An answer that fails is given back at once, as read so far.
func HoldDefinitions(ctx context.Context, ready <-chan struct{}) context.Context {
	return context.WithValue(ctx, holdKey{}, ready)
}

// heldChunk is the size of the buffers a held answer is kept in: never
// one buffer grown by doubling (up to twice the answer's size at once).
const heldChunk = 64 << 10

// held is r (an answer's body) as HoldDefinitions reads it under ctx;
// r itself when ctx holds nothing.
func held(ctx context.Context, r io.Reader) io.Reader {
	ready, _ := ctx.Value(holdKey{}).(<-chan struct{})
	if ready == nil {
		return r
	}
	return &heldReader{ctx: ctx, r: r, ready: ready}
}

// heldReader reads r ahead into chunks until ready is closed (hold), then
// gives the chunks and what is left of r.
type heldReader struct {
	ctx    context.Context
	r      io.Reader
	ready  <-chan struct{} // nil once held
	chunks [][]byte
	err    error // what ended r while it was held (io.EOF at its end)
}

func (h *heldReader) Read(p []byte) (int, error) {
	if h.ready != nil {
		h.hold()
	}
	for len(h.chunks) > 0 {
		c := h.chunks[0]
		if len(c) == 0 {
			h.chunks[0] = nil // freed as the answer is decoded
			h.chunks = h.chunks[1:]
			continue
		}
		n := copy(p, c)
		h.chunks[0] = c[n:]
		return n, nil
	}
	if h.err != nil {
		return 0, h.err
	}
	return h.r.Read(p)
}

// hold reads r into chunks until ready is closed, r fails, or ctx ends.
// It checks ready between reads of the connection, which come as the
// broker sends: an answer read to its end waits for ready.
func (h *heldReader) hold() {
	defer func() { h.ready = nil }()
	var chunk []byte // the last chunk, filled up to its capacity
	for {
		select {
		case <-h.ready:
			return
		default:
		}
		if h.err != nil {
			if h.err == io.EOF {
				select {
				case <-h.ready:
				case <-h.ctx.Done():
					h.chunks, h.err = nil, h.ctx.Err()
				}
			}
			return // a failure is given back at once
		}
		if len(chunk) == cap(chunk) {
			chunk = make([]byte, 0, heldChunk)
			h.chunks = append(h.chunks, nil)
		}
		n, err := h.r.Read(chunk[len(chunk):cap(chunk)])
		chunk = chunk[:len(chunk)+n]
		h.chunks[len(h.chunks)-1] = chunk
		h.err = err
	}
}
