package faultproxy

import (
	"fmt"
	"io"
	"net"
	"sync"
)

// TCP is a plain TCP proxy whose connections a test can cut or stall. Addr
// is its host:port.
type TCP struct {
	Addr   string
	target string
	ln     net.Listener

	mu       sync.Mutex
	cond     *sync.Cond
	pairs    map[*pair]struct{}
	stalled  bool
	moved    int64 // bytes forwarded, both ways
	cutAt    int64 // cut every connection once moved reaches it; 0: never
	cuts     int
	accepted int
	closed   bool
}

type pair struct{ client, server net.Conn }

// NewTCP starts a proxy to target (host:port).
func NewTCP(target string) (*TCP, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("faultproxy: listen: %w", err)
	}
	p := &TCP{Addr: ln.Addr().String(), target: target, ln: ln, pairs: map[*pair]struct{}{}}
	p.cond = sync.NewCond(&p.mu)
	go p.serve()
	return p, nil
}

func (p *TCP) serve() {
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		go p.handle(c)
	}
}

func (p *TCP) handle(c net.Conn) {
	s, err := net.Dial("tcp", p.target)
	if err != nil {
		abort(c)
		return
	}
	pr := &pair{client: c, server: s}
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		abort(c)
		abort(s)
		return
	}
	p.pairs[pr] = struct{}{}
	p.accepted++
	p.mu.Unlock()
	var wg sync.WaitGroup
	wg.Add(2)
	go func() { defer wg.Done(); p.pipe(pr, s, c) }()
	go func() { defer wg.Done(); p.pipe(pr, c, s) }()
	wg.Wait()
	p.mu.Lock()
	delete(p.pairs, pr)
	p.mu.Unlock()
}

// pipe copies from src to dst, waiting while the proxy is stalled and
// cutting everything once the byte budget of CutAfterBytes is spent.
func (p *TCP) pipe(pr *pair, dst, src net.Conn) {
	defer func() {
		abort(pr.client)
		abort(pr.server)
	}()
	buf := make([]byte, 32<<10)
	for {
		n, err := src.Read(buf)
		if n > 0 {
			p.mu.Lock()
			for p.stalled && !p.closed {
				p.cond.Wait()
			}
			p.moved += int64(n)
			cut := p.cutAt > 0 && p.moved >= p.cutAt
			p.mu.Unlock()
			if cut {
				p.Cut()
				return
			}
			if _, werr := dst.Write(buf[:n]); werr != nil {
				return
			}
		}
		if err != nil {
			if err != io.EOF {
				return
			}
			if tc, ok := dst.(*net.TCPConn); ok {
				_ = tc.CloseWrite()
			}
			return
		}
	}
}

// Cut resets every open connection, both sides (the broker sees the
// client vanish; the client sees a reset). New connections are accepted.
func (p *TCP) Cut() {
	p.mu.Lock()
	p.cutAt = 0
	p.cuts++
	pairs := make([]*pair, 0, len(p.pairs))
	for pr := range p.pairs {
		pairs = append(pairs, pr)
	}
	p.stalled = false
	p.cond.Broadcast()
	p.mu.Unlock()
	for _, pr := range pairs {
		abort(pr.client)
		abort(pr.server)
	}
}

// CutAfterBytes cuts every connection once n more bytes have gone through
// the proxy (both ways together).
func (p *TCP) CutAfterBytes(n int64) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.cutAt = p.moved + n
}

// Stall stops forwarding: connections stay open, bytes wait (a network
// that silently drops everything) until Resume or Cut.
func (p *TCP) Stall() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.stalled = true
}

// Resume forwards again after Stall.
func (p *TCP) Resume() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.stalled = false
	p.cond.Broadcast()
}

// Cuts returns how many times the proxy cut its connections.
func (p *TCP) Cuts() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.cuts
}

// Moved returns how many bytes went through so far.
func (p *TCP) Moved() int64 {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.moved
}

// Close stops the proxy and cuts every connection.
func (p *TCP) Close() {
	p.mu.Lock()
	p.closed = true
	p.mu.Unlock()
	_ = p.ln.Close()
	p.Cut()
}
