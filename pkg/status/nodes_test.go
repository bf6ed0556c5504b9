package status

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mqctl/mqctl/pkg/broker"
	"github.com/mqctl/mqctl/pkg/loader"
)

// On RabbitMQ 3.10 a queue listing's "online" members are read against
// the nodes that run (GET /api/nodes). status takes one view of them for
// all its listings: it asked for the nodes once per listing, so once per
// vhost and again at each poll while it waited for statistics.
func TestCollectReadsTheNodesOnce(t *testing.T) {
	var mu sync.Mutex
	asked := map[string]int{}
	polls := map[string]int{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		asked[r.URL.Path]++
		w.Header().Set("Content-Type", "application/json")
		switch p := r.URL.Path; {
		case p == "/api/whoami":
			fmt.Fprint(w, `{"name":"guest","tags":["administrator"]}`)
		case p == "/api/overview":
			fmt.Fprint(w, `{"rabbitmq_version":"3.10.8"}`)
		case p == "/api/nodes":
			fmt.Fprint(w, `[{"name":"rabbit@a","running":true}]`)
		case strings.HasPrefix(p, "/api/queues/"):
			// The first listing of each vhost has no statistics yet:
			// status polls it again.
			polls[p]++
			msgs := `,"messages":0,"messages_ready":0,"messages_unacknowledged":0,"consumers":0`
			if polls[p] == 1 {
				msgs = ""
			}
			fmt.Fprintf(w, `[{"name":"q","type":"classic","state":"running","node":"rabbit@a"%s}]`, msgs)
		default:
			w.WriteHeader(http.StatusNotFound)
			fmt.Fprint(w, `{"error":"Object Not Found","reason":"Not Found"}`)
		}
	}))
	t.Cleanup(srv.Close)
	c, err := broker.Connect(context.Background(), broker.Config{Server: srv.URL, Username: "guest", Password: "guest"})
	if err != nil {
		t.Fatal(err)
	}
	top, err := loader.LoadBytes("t.yaml", []byte("version: 1\nvhosts:\n  a:\n    queues: {q: {}}\n  b:\n    queues: {q: {}}\n"), loader.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Collect(context.Background(), top, c, Options{StatsWait: 5 * time.Second, Poll: time.Millisecond, Version: c.RabbitMQVersion()}); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if asked["/api/queues/a"] != 2 || asked["/api/queues/b"] != 2 {
		t.Fatalf("listings %v, want each vhost listed twice (the test's premise)", asked)
	}
	if asked["/api/nodes"] != 1 {
		t.Errorf("status on RabbitMQ 3.10 asked GET /api/nodes %d times for 4 listings, want once", asked["/api/nodes"])
	}
}
