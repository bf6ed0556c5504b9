package broker

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
)

// After a request body larger than closeAfterBody the client does not
// send another request on that connection (RabbitMQ 4.0.5 may leave it
// unanswered for 5 s); after a small one it does.
func TestConnectionClosedAfterLargeBody(t *testing.T) {
	t.Parallel()
	var conns atomic.Int32
	srv := httptest.NewUnstartedServer(newScript(nil))
	srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			conns.Add(1)
		}
	}
	srv.Start()
	t.Cleanup(srv.Close)
	ctx := context.Background()
	c, err := Connect(ctx, Config{Server: srv.URL, Retry: fastRetry})
	if err != nil {
		t.Fatal(err)
	}
	// Connect asks for the login and the overview at once, on two
	// connections: the counts below start from one.
	c.http.CloseIdleConnections()
	put := func(size int) {
		t.Helper()
		body := map[string]any{"arguments": map[string]any{"x": strings.Repeat("a", size)}}
		if err := c.PutJSON(ctx, body, "put", "v", "exchanges", "v", "x"); err != nil {
			t.Fatal(err)
		}
	}
	get := func() {
		t.Helper()
		var out []map[string]any
		if err := c.GetJSON(ctx, &out, "list", "", "vhosts"); err != nil {
			t.Fatal(err)
		}
	}
	get()
	before := conns.Load()
	put(closeAfterBody / 2)
	get()
	if n := conns.Load() - before; n != 0 {
		t.Errorf("after a %d-byte body the next request opened %d connections, want none (the idle one is used again)", closeAfterBody/2, n)
	}
	put(closeAfterBody + 1)
	get()
	if n := conns.Load() - before; n != 1 {
		t.Errorf("after a body over %d bytes the next request opened %d connections, want 1 (the one that carried it is closed)", closeAfterBody, n)
	}
}
