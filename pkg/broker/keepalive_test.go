package broker

import (
	"context"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
)

// After a request body larger than closeAfterBody the client does not
// send another request on that connection (RabbitMQ 4.0.5 may leave it
// unanswered for 5 s); after a small one it does.
func TestConnectionClosedAfterLargeBody(t *testing.T) {
	t.Parallel()
	// What each PUT asked of its connection, as the server read it: a
	// request with Connection: close is the last on its connection (the
	// server closes it after the answer, and the client never sends
	// another on it). Counting the connections the next request opened
	// instead was timing: the client's transport puts a connection back
	// in its idle pool from another goroutine once the answer is read,
	// and a request sent at once may dial a new one (seen under load).
	var (
		mu     sync.Mutex
		closes []bool // each PUT's, in order
	)
	script := newScript(nil)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPut {
			mu.Lock()
			closes = append(closes, r.Close)
			mu.Unlock()
		}
		script.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	ctx := context.Background()
	c, err := Connect(ctx, Config{Server: srv.URL, Retry: fastRetry})
	if err != nil {
		t.Fatal(err)
	}
	put := func(size int) {
		t.Helper()
		body := map[string]any{"arguments": map[string]any{"x": strings.Repeat("a", size)}}
		if err := c.PutJSON(ctx, body, "put", "v", "exchanges", "v", "x"); err != nil {
			t.Fatal(err)
		}
	}
	put(closeAfterBody / 2)
	put(closeAfterBody + 1)
	mu.Lock()
	defer mu.Unlock()
	if want := []bool{false, true}; !slices.Equal(closes, want) {
		t.Errorf("Connection: close on a body of %d bytes, then of over %d: %v, want %v (the connection that carried the large one is not used again; the small one's is)", closeAfterBody/2, closeAfterBody, closes, want)
	}
}
