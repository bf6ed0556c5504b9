package preflight

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	"github.com/mqctl/mqctl/pkg/broker"
	"github.com/mqctl/mqctl/pkg/kind"
	"github.com/mqctl/mqctl/pkg/topology"
)

// TestDefinedTrialsWrittenAsApplyWrites: a kind with a Definition
// (definedTryer: exchanges, queues, the kinds of policy) is tried by a
// copy of its trial's object under a throwaway name, written in the
// throwaway vhost through its kind's broker driver, the request apply
// makes: the trial's object keeps its name, and an exchange tried is the
// one of its shape that bindings are tried from (trier.sources).
func TestDefinedTrialsWrittenAsApplyWrites(t *testing.T) {
	var mu sync.Mutex
	var asked []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		switch r.URL.Path {
		case "/api/whoami":
			fmt.Fprint(w, `{"name":"bob","tags":["administrator"]}`)
			return
		case "/api/overview":
			fmt.Fprint(w, `{"rabbitmq_version":"4.1.0"}`)
			return
		}
		mu.Lock()
		asked = append(asked, r.Method+" "+r.URL.EscapedPath())
		mu.Unlock()
		w.WriteHeader(http.StatusCreated)
	}))
	t.Cleanup(srv.Close)
	c, err := broker.Connect(context.Background(), broker.Config{Server: srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	x := &topology.Exchange{Name: "x", Type: "topic", Durable: true}
	q := &topology.Queue{Name: "q", Type: topology.QueueQuorum, Durable: true}
	p := &topology.Policy{Name: "p", Pattern: "^q$", ApplyTo: "queues"}
	op := &topology.Policy{Name: "op", Pattern: "^q$", ApplyTo: "queues"}
	for _, tc := range []struct {
		tr         *Trial
		want       string
		name, orig *string
	}{
		{&Trial{Kind: kind.Exchange, Exchange: x}, "PUT /api/exchanges/tw/mqctl.preflight.1", &x.Name, new(string)},
		{&Trial{Kind: kind.Queue, Queue: q}, "PUT /api/queues/tw/mqctl.preflight.1", &q.Name, new(string)},
		{&Trial{Kind: kind.Policy, Policy: p}, "PUT /api/policies/tw/mqctl.preflight.1", &p.Name, new(string)},
		{&Trial{Kind: kind.OperatorPolicy, Policy: op}, "PUT /api/operator-policies/tw/mqctl.preflight.1", &op.Name, new(string)},
	} {
		*tc.orig = *tc.name
		mu.Lock()
		asked = nil
		mu.Unlock()
		tw := &trier{c: c, vhost: "tw", sources: map[string]string{}}
		ty, ok := tryerOf(tc.tr.Kind)
		if !ok {
			t.Fatalf("%s: no tryer", tc.tr.Kind)
		}
		if err := ty.try(tw, context.Background(), tc.tr); err != nil {
			t.Fatalf("%s: %v", tc.tr.Kind, err)
		}
		mu.Lock()
		if len(asked) != 1 || asked[0] != tc.want {
			t.Errorf("%s tried with %q, want %q", tc.tr.Kind, asked, tc.want)
		}
		mu.Unlock()
		if *tc.name != *tc.orig {
			t.Errorf("%s: the trial's object was renamed %q (was %q): a copy is tried", tc.tr.Kind, *tc.name, *tc.orig)
		}
		if tc.tr.Exchange != nil && tw.sources[exchangeKey(x)] != "mqctl.preflight.1" {
			t.Errorf("exchange tried: sources %v, want its shape from mqctl.preflight.1", tw.sources)
		}
	}
}
