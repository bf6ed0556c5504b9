package engine

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/mqctl/mqctl/pkg/broker"
)

// fakeAPI is a client of a fake management API of a node named node of
// RabbitMQ version ("4.3.6"): it answers /api/whoami (an administrator)
// and /api/overview itself, and every other request through answer, which
// returns false for 404 Not Found.
func fakeAPI(t *testing.T, version, node string, answer func(w http.ResponseWriter, r *http.Request) bool) *broker.Client {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		switch r.URL.Path {
		case "/api/whoami":
			_, _ = w.Write([]byte(`{"name":"guest","tags":["administrator"]}`))
			return
		case "/api/overview":
			_, _ = fmt.Fprintf(w, `{"rabbitmq_version":%q,"cluster_name":"c","node":%q,"listeners":[]}`, version, node)
			return
		}
		if !answer(w, r) {
			w.WriteHeader(http.StatusNotFound)
			_, _ = w.Write([]byte(`{"error":"Object Not Found","reason":"Not Found"}`))
		}
	}))
	t.Cleanup(srv.Close)
	c, err := broker.Connect(context.Background(), broker.Config{Server: srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	return c
}
