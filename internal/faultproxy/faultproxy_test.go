package faultproxy

import (
	"bufio"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// backend counts the requests that reach it and echoes the method and path.
func backend(t *testing.T) (*httptest.Server, *atomic.Int64) {
	t.Helper()
	var n atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n.Add(1)
		_, _ = io.Copy(io.Discard, r.Body)
		w.WriteHeader(http.StatusCreated)
		_, _ = io.WriteString(w, r.Method+" "+r.URL.Path)
	}))
	t.Cleanup(srv.Close)
	return srv, &n
}

func newHTTP(t *testing.T, target string) *HTTP {
	t.Helper()
	p, err := NewHTTP(target)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p.Close)
	return p
}

func TestHTTPFaults(t *testing.T) {
	srv, reached := backend(t)
	p := newHTTP(t, srv.URL)
	client := &http.Client{Timeout: 300 * time.Millisecond}
	put := func(path string) (*http.Response, error) {
		req, _ := http.NewRequest(http.MethodPut, p.URL+"/api/"+path, strings.NewReader("{}"))
		resp, err := client.Do(req)
		if err == nil {
			_, _ = io.ReadAll(resp.Body)
			resp.Body.Close()
		}
		return resp, err
	}

	p.Add(Rule{Match: Method("queues/", http.MethodPut), Times: 1, Fault: Status, Status: 503})
	p.Add(Rule{Match: Method("queues/", http.MethodPut), Times: 1, Fault: Drop})
	p.Add(Rule{Match: Method("queues/", http.MethodPut), Times: 1, Fault: Stall})
	p.Add(Rule{Match: Method("queues/", http.MethodPut), Times: 1, Fault: Reset})

	tests := []struct {
		name       string
		status     int // 0: a transport error
		reachedNow int64
	}{
		{"status: answered by the proxy", 503, 0},
		{"drop: reached the backend, no answer", 0, 1},
		{"stall: no answer", 0, 1},
		{"reset: no answer", 0, 1},
		{"rules used up: forwarded", http.StatusCreated, 2},
	}
	for _, tt := range tests {
		resp, err := put("queues/v/q")
		switch {
		case tt.status == 0 && err == nil:
			t.Errorf("%s: got %d, want a transport error", tt.name, resp.StatusCode)
		case tt.status != 0 && (err != nil || resp.StatusCode != tt.status):
			t.Errorf("%s: got %v %v, want %d", tt.name, resp, err, tt.status)
		}
		if got := reached.Load(); got != tt.reachedNow {
			t.Errorf("%s: the backend saw %d requests, want %d", tt.name, got, tt.reachedNow)
		}
	}
	// Other paths are not matched.
	if resp, err := put("exchanges/v/x"); err != nil || resp.StatusCode != http.StatusCreated {
		t.Errorf("unmatched request: %v %v", resp, err)
	}
	if n := p.Count(func(e Entry) bool { return e.Fault == Drop && e.Status == http.StatusCreated }); n != 1 {
		t.Errorf("log: %d dropped answers, want 1: %v", n, p.Log())
	}
}

func TestHTTPCutAfterAndHeal(t *testing.T) {
	srv, reached := backend(t)
	p := newHTTP(t, srv.URL)
	p.CutAfter(3)
	client := &http.Client{Timeout: time.Second}
	ok, failed := 0, 0
	for range 6 {
		resp, err := client.Get(p.URL + "/api/overview")
		if err != nil {
			failed++
			continue
		}
		resp.Body.Close()
		ok++
	}
	// The third answer may be lost in the cut.
	if reached.Load() != 3 || failed < 3 || ok < 2 {
		t.Errorf("after CutAfter(3): %d answered, %d failed, %d reached the backend", ok, failed, reached.Load())
	}
	p.Heal()
	// A kept-alive connection the cut reset may still sit in the client's
	// pool (its reset can arrive after the answer): the heal is for new
	// connections, as a client's next dial after a fault.
	client.CloseIdleConnections()
	resp, err := client.Get(p.URL + "/api/overview")
	if err != nil {
		t.Fatalf("after Heal: %v", err)
	}
	resp.Body.Close()
}

// echo is a TCP server that echoes lines.
func echo(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() { defer c.Close(); _, _ = io.Copy(c, c) }()
		}
	}()
	return ln.Addr().String()
}

func TestTCPCutAndStall(t *testing.T) {
	p, err := NewTCP(echo(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p.Close)
	c, err := net.Dial("tcp", p.Addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	r := bufio.NewReader(c)
	roundTrip := func(line string) (string, error) {
		_ = c.SetDeadline(time.Now().Add(300 * time.Millisecond))
		if _, err := io.WriteString(c, line+"\n"); err != nil {
			return "", err
		}
		return r.ReadString('\n')
	}
	if got, err := roundTrip("one"); err != nil || got != "one\n" {
		t.Fatalf("through the proxy: %q %v", got, err)
	}
	p.Stall()
	if _, err := roundTrip("two"); err == nil {
		t.Error("a stalled proxy forwarded")
	} else if ne := (net.Error)(nil); !errors.As(err, &ne) || !ne.Timeout() {
		t.Errorf("stalled: %v, want a timeout", err)
	}
	p.Resume()
	_ = c.SetDeadline(time.Now().Add(time.Second))
	if got, err := r.ReadString('\n'); err != nil || got != "two\n" {
		t.Errorf("after Resume: %q %v", got, err)
	}
	p.CutAfterBytes(4)
	if _, err := roundTrip("three"); err == nil {
		t.Error("the connection survived CutAfterBytes")
	}
	if p.Cuts() != 1 {
		t.Errorf("%d cuts, want 1", p.Cuts())
	}
	c2, err := net.Dial("tcp", p.Addr)
	if err != nil {
		t.Fatalf("a new connection after a cut: %v", err)
	}
	defer c2.Close()
}
