// Package faultproxy breaks connections on purpose, for tests: HTTP is a
// reverse proxy in front of the management API that answers 5xx, stalls,
// forwards a request and drops its answer, or cuts every connection; TCP
// is a plain TCP proxy (for AMQP) that cuts or stalls its connections.
//
// Both listen on 127.0.0.1 on a free port and log what they did, so that a
// test can assert which requests reached the broker.
package faultproxy

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"
)

// Fault is what the proxy does to a request.
type Fault int

const (
	// Forward passes the request on and its answer back.
	Forward Fault = iota
	// Status answers Rule.Status without forwarding.
	Status
	// Delay waits Rule.Delay, then forwards (unless the client gave up).
	Delay
	// Stall never forwards and never answers: the client times out.
	Stall
	// Drop forwards the request, reads the broker's whole answer, and
	// closes the client's connection without sending it: the request
	// took effect and the client cannot know.
	Drop
	// Reset closes the client's connection without forwarding.
	Reset
)

func (f Fault) String() string {
	switch f {
	case Forward:
		return "forward"
	case Status:
		return "status"
	case Delay:
		return "delay"
	case Stall:
		return "stall"
	case Drop:
		return "drop"
	case Reset:
		return "reset"
	}
	return fmt.Sprintf("fault(%d)", int(f))
}

// Rule applies Fault to the requests Match selects.
type Rule struct {
	// Match selects requests; nil matches every request.
	Match func(*http.Request) bool
	// Times is how many matching requests get the fault; 0 means all.
	Times int
	Fault Fault
	// Status is the answer of a Status fault (500 when 0).
	Status int
	// Delay is the wait of a Delay fault.
	Delay time.Duration
}

// Method matches requests with one of the methods and, when prefix is
// not empty, a path (below /api/, unescaped) starting with prefix.
func Method(prefix string, methods ...string) func(*http.Request) bool {
	return func(r *http.Request) bool {
		ok := false
		for _, m := range methods {
			ok = ok || r.Method == m
		}
		return ok && strings.HasPrefix(strings.TrimPrefix(r.URL.Path, "/api/"), prefix)
	}
}

// Entry is one request the proxy saw.
type Entry struct {
	Method string
	Path   string // unescaped, below /api/
	Fault  Fault
	// Status is the status the broker answered (0 when not forwarded, or
	// the proxy's own for a Status fault).
	Status int
}

func (e Entry) String() string {
	return fmt.Sprintf("%s %s: %s %d", e.Method, e.Path, e.Fault, e.Status)
}

type rule struct {
	Rule
	left int // -1: unlimited
}

// HTTP is a faulty reverse proxy. URL is its address.
type HTTP struct {
	URL    string
	target *url.URL
	ln     *listener
	srv    *http.Server
	client *http.Client

	mu       sync.Mutex
	rules    []*rule
	log      []Entry
	cutAfter int // cut once this many more requests are forwarded; -1: never
	cut      bool
	// cutting counts the cuts CutAfter has begun (pick) and not yet made
	// (the last request's handler cuts once its answer is out): Heal waits
	// for them, so that a cut made late, on a loaded machine, never
	// undoes a heal.
	cutting sync.WaitGroup
}

// NewHTTP starts a proxy in front of target (an http:// URL).
func NewHTTP(target string) (*HTTP, error) {
	u, err := url.Parse(target)
	if err != nil || u.Host == "" {
		return nil, fmt.Errorf("faultproxy: bad target %q", target)
	}
	ln, err := listen()
	if err != nil {
		return nil, err
	}
	tr := http.DefaultTransport.(*http.Transport).Clone()
	p := &HTTP{URL: "http://" + ln.Addr().String(), target: u, ln: ln, cutAfter: -1,
		client: &http.Client{Transport: tr, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}}
	p.srv = &http.Server{Handler: p, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = p.srv.Serve(ln) }()
	return p, nil
}

// Close stops the proxy and closes every connection.
func (p *HTTP) Close() {
	_ = p.srv.Close()
	p.ln.cutAll()
	p.client.CloseIdleConnections()
}

// Add installs a rule; rules are tried in the order they were added.
func (p *HTTP) Add(r Rule) {
	p.mu.Lock()
	defer p.mu.Unlock()
	left := r.Times
	if left <= 0 {
		left = -1
	}
	p.rules = append(p.rules, &rule{Rule: r, left: left})
}

// Clear removes every rule.
func (p *HTTP) Clear() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.rules = nil
}

// CutAfter cuts every connection once n more requests have been
// forwarded: the n-th gets its answer, any later one is reset; see Cut.
func (p *HTTP) CutAfter(n int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.cutAfter = n
}

// Cut closes every client connection at once (a reset, mid-request for
// those in flight, whose requests may or may not have been forwarded) and
// resets every new one until Heal.
func (p *HTTP) Cut() {
	p.mu.Lock()
	p.cut = true
	p.cutAfter = -1
	p.mu.Unlock()
	p.ln.setRefuse(true)
	p.ln.cutAll()
}

// Heal undoes Cut and removes every rule, once the cut CutAfter began is
// made.
func (p *HTTP) Heal() {
	p.cutting.Wait()
	p.mu.Lock()
	p.cut = false
	p.cutAfter = -1
	p.rules = nil
	p.mu.Unlock()
	p.ln.setRefuse(false)
}

// Log returns the requests seen so far.
func (p *HTTP) Log() []Entry {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]Entry(nil), p.log...)
}

// Count returns how many logged requests f selects.
func (p *HTTP) Count(f func(Entry) bool) int {
	n := 0
	for _, e := range p.Log() {
		if f(e) {
			n++
		}
	}
	return n
}

// pick returns the fault for r and counts it down; last is set for the
// request after whose answer CutAfter cuts (later ones are reset, even
// those that arrive while it is answered).
func (p *HTTP) pick(r *http.Request) (ru Rule, last bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.cut {
		return Rule{Fault: Reset}, false
	}
	ru = Rule{Fault: Forward}
	for _, x := range p.rules {
		if x.left == 0 || (x.Match != nil && !x.Match(r)) {
			continue
		}
		if x.left > 0 {
			x.left--
		}
		ru = x.Rule
		break
	}
	switch ru.Fault {
	case Forward, Delay, Drop:
		if p.cutAfter > 0 {
			p.cutAfter--
			if p.cutAfter == 0 {
				p.cut, last = true, true
				p.cutting.Add(1)
			}
		}
	}
	return ru, last
}

func (p *HTTP) record(r *http.Request, f Fault, status int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.log = append(p.log, Entry{Method: r.Method, Path: strings.TrimPrefix(r.URL.Path, "/api/"), Fault: f, Status: status})
}

func (p *HTTP) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	// The body is read first: the server notices a client that gives up
	// (r.Context) only once it is.
	in, err := io.ReadAll(r.Body)
	if err != nil {
		return
	}
	ru, last := p.pick(r)
	if last {
		// Every connection is cut once this answer is out (or this
		// request failed).
		defer func() {
			p.Cut()
			p.cutting.Done()
		}()
	}
	switch ru.Fault {
	case Status:
		code := ru.Status
		if code == 0 {
			code = http.StatusInternalServerError
		}
		p.record(r, Status, code)
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(code)
		fmt.Fprintf(w, `{"error":"faultproxy","reason":"injected %d"}`, code)
		return
	case Stall:
		p.record(r, Stall, 0)
		<-r.Context().Done()
		return
	case Reset:
		p.record(r, Reset, 0)
		reset(w)
		return
	case Delay:
		select {
		case <-time.After(ru.Delay):
		case <-r.Context().Done():
			p.record(r, Delay, 0)
			return
		}
	}
	resp, body, err := p.roundTrip(r, in)
	if err != nil {
		p.record(r, ru.Fault, 0)
		http.Error(w, "faultproxy: "+err.Error(), http.StatusBadGateway)
		return
	}
	p.record(r, ru.Fault, resp.StatusCode)
	if ru.Fault == Drop {
		reset(w)
	} else {
		for k, vs := range resp.Header {
			for _, v := range vs {
				w.Header().Add(k, v)
			}
		}
		w.WriteHeader(resp.StatusCode)
		_, _ = w.Write(body)
		if f, ok := w.(http.Flusher); ok {
			f.Flush()
		}
	}
}

// roundTrip forwards r to the target and reads the whole answer.
func (p *HTTP) roundTrip(r *http.Request, in []byte) (*http.Response, []byte, error) {
	u := *p.target
	u.Path = r.URL.Path
	u.RawPath = r.URL.RawPath
	u.RawQuery = r.URL.RawQuery
	// Not r.Context(): a forwarded request completes even when the client
	// gives up, as it would behind a real proxy.
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	out, err := http.NewRequestWithContext(ctx, r.Method, u.String(), bytes.NewReader(in))
	if err != nil {
		return nil, nil, err
	}
	out.Header = r.Header.Clone()
	resp, err := p.client.Do(out)
	if err != nil {
		return nil, nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	return resp, body, err
}

// reset closes the connection under w with a TCP reset.
func reset(w http.ResponseWriter) {
	hj, ok := w.(http.Hijacker)
	if !ok {
		http.Error(w, "faultproxy: cannot reset this connection", http.StatusBadGateway)
		return
	}
	conn, _, err := hj.Hijack()
	if err != nil {
		return
	}
	abort(conn)
}

// abort closes c with a reset (SO_LINGER 0) rather than a clean FIN.
func abort(c net.Conn) {
	raw := c
	if t, ok := c.(*trackedConn); ok {
		raw = t.Conn
	}
	if tc, ok := raw.(*net.TCPConn); ok {
		_ = tc.SetLinger(0)
	}
	_ = c.Close()
}

// listener tracks its connections so that they can all be cut, and resets
// new ones while refusing.
type listener struct {
	net.Listener
	mu     sync.Mutex
	conns  map[net.Conn]struct{}
	refuse bool
}

func listen() (*listener, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("faultproxy: listen: %w", err)
	}
	return &listener{Listener: ln, conns: map[net.Conn]struct{}{}}, nil
}

func (l *listener) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		l.mu.Lock()
		if l.refuse {
			l.mu.Unlock()
			abort(c)
			continue
		}
		tc := &trackedConn{Conn: c, l: l}
		l.conns[tc] = struct{}{}
		l.mu.Unlock()
		return tc, nil
	}
}

func (l *listener) setRefuse(v bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.refuse = v
}

func (l *listener) cutAll() {
	l.mu.Lock()
	conns := make([]net.Conn, 0, len(l.conns))
	for c := range l.conns {
		conns = append(conns, c)
	}
	l.mu.Unlock()
	for _, c := range conns {
		abort(c)
	}
}

type trackedConn struct {
	net.Conn
	l    *listener
	once sync.Once
}

func (c *trackedConn) Close() error {
	c.once.Do(func() {
		c.l.mu.Lock()
		delete(c.l.conns, c)
		c.l.mu.Unlock()
	})
	err := c.Conn.Close()
	if errors.Is(err, net.ErrClosed) {
		return nil
	}
	return err
}
