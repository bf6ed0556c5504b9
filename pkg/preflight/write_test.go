package preflight

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/mqctl/mqctl/pkg/broker"
	"github.com/mqctl/mqctl/pkg/kind"
	"github.com/mqctl/mqctl/pkg/plan"
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
		{&Trial{Kind: kind.Exchange, Object: x}, "PUT /api/exchanges/tw/mqctl.preflight.1", &x.Name, new(string)},
		{&Trial{Kind: kind.Queue, Object: q}, "PUT /api/queues/tw/mqctl.preflight.1", &q.Name, new(string)},
		{&Trial{Kind: kind.Policy, Object: p}, "PUT /api/policies/tw/mqctl.preflight.1", &p.Name, new(string)},
		{&Trial{Kind: kind.OperatorPolicy, Object: op}, "PUT /api/operator-policies/tw/mqctl.preflight.1", &op.Name, new(string)},
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
		if tc.tr.Kind == kind.Exchange && tw.sources[exchangeKey(x)] != "mqctl.preflight.1" {
			t.Errorf("exchange tried: sources %v, want its shape from mqctl.preflight.1", tw.sources)
		}
	}
}

// TestRefusedErrorInternal: a trial the broker answered with a 5xx is
// said to be its internal error, with what to do (InternalAdvice), in
// place of "fix them in the file"; beside a refusal with a reason, the
// others are still to be fixed in the file.
func TestRefusedErrorInternal(t *testing.T) {
	internal := internalReason(&broker.APIError{Status: http.StatusInternalServerError, Reason: "Internal Server Error"}, "Internal Server Error")
	crashWords := internalReason(&broker.APIError{Status: http.StatusServiceUnavailable, Reason: "node down"}, "node down")
	if want := `HTTP 503 (Service Unavailable): "node down", ` + internalMark; crashWords != want {
		t.Errorf("a 503 with words: %q, want %q", crashWords, want)
	}
	if got := internalReason(&broker.APIError{Status: http.StatusBadRequest, Reason: "bad"}, "bad"); got != "bad" {
		t.Errorf("a 400 is the broker's words alone: %q", got)
	}
	obj := func(name string) []Object {
		return []Object{{ObjectRef: plan.ObjectRef{Kind: kind.Policy, Vhost: "v", Name: name}, Pos: topology.Pos{File: "f.yaml", Line: 3, Col: 5}}}
	}
	only := &RefusedError{Report: &Report{Refusals: []Refusal{{Kind: kind.Policy, Reason: internal, Objects: obj("p")}}}}
	msg := only.Error()
	for _, want := range []string{"nothing was changed: the broker failed on 1 object of the plan", "HTTP 500 (Internal Server Error), an internal error", "RabbitMQ's log has the reason", "--no-preflight"} {
		if !strings.Contains(msg, want) {
			t.Errorf("lacks %q:\n%s", want, msg)
		}
	}
	if strings.Contains(msg, "Fix them in the file") || strings.Contains(msg, "Fix the others") {
		t.Errorf("an internal error alone is no fault found in the file:\n%s", msg)
	}
	mixed := &RefusedError{Report: &Report{Refusals: []Refusal{{Kind: kind.Policy, Reason: internal, Objects: obj("p")}, {Kind: kind.Policy, Reason: "Validation failed", Objects: obj("q")}}}}
	msg = mixed.Error()
	for _, want := range []string{"the broker refuses 2 objects", "RabbitMQ's log has the reason", "Fix the others in the file and plan again"} {
		if !strings.Contains(msg, want) {
			t.Errorf("lacks %q:\n%s", want, msg)
		}
	}
	plain := &RefusedError{Report: &Report{Refusals: []Refusal{{Kind: kind.Policy, Reason: "Validation failed", Objects: obj("q")}}}}
	if msg := plain.Error(); !strings.Contains(msg, "Fix them in the file and plan again") || strings.Contains(msg, "log") {
		t.Errorf("a refusal with a reason:\n%s", msg)
	}
	if InternalAdvice(plain.Report) != "" {
		t.Error("advice for an internal error where there is none")
	}
}
