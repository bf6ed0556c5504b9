package apply_test

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mqctl/mqctl/internal/faultproxy"
	"github.com/mqctl/mqctl/internal/testbroker"
	"github.com/mqctl/mqctl/pkg/apply"
	"github.com/mqctl/mqctl/pkg/broker"
)

// bulkFile declares n queues in ${VHOST}, each bound to a headers exchange
// with arguments of every JSON type: 2n+1 declarations.
func bulkFile(n int, extra string) string {
	var b strings.Builder
	b.WriteString("version: 1\nvhosts:\n  ${VHOST}:\n    exchanges:\n      hx: { type: headers, arguments: { alternate-exchange: amq.fanout } }\n    queues:\n")
	for i := range n {
		fmt.Fprintf(&b, "      q%03d:\n        arguments: { x-max-length: %d, x-message-ttl: 60000, x-dead-letter-exchange: amq.direct }\n", i, 100+i)
		fmt.Fprintf(&b, "        bindings: [{ exchange: hx, arguments: { x-match: all, n: %d, f: 1.5, b: true, s: \"v%d\" } }]\n", i, i)
	}
	b.WriteString(extra)
	return b.String()
}

// bulk applies content through the proxy as apply does from bulk
// declarations on (64 here: the default, 1,000, would make slow tests).
func (e *faultEnv) bulk(content string) *apply.Result {
	e.t.Helper()
	p, recs, live := e.plan(content)
	return apply.Execute(context.Background(), e.faulty, p, apply.Options{
		Parallelism: 4, Records: recs, PropertiesKey: live.PropertiesKey, BulkDeclares: 64,
	})
}

// declaredThroughAPI lists the declarations the proxy saw (the ownership
// record's exchange aside).
func declaredThroughAPI(e *faultEnv) []string {
	var out []string
	for _, en := range e.proxy.Log() {
		switch {
		case en.Method == http.MethodPut && strings.HasPrefix(en.Path, "queues/"),
			en.Method == http.MethodPut && strings.HasPrefix(en.Path, "exchanges/") && !strings.Contains(en.Path, "mqctl.ownership"),
			en.Method == http.MethodPost && strings.HasPrefix(en.Path, "bindings/"):
			out = append(out, en.Method+" "+en.Path)
		}
	}
	return out
}

// A plan with many declarations in a vhost makes them over AMQP, and the
// broker ends up exactly as the file says: the arguments, typed on the
// way as the management API types them, compare equal on the next plan.
func TestBulkDeclaresGoOverAMQP(t *testing.T) {
	t.Parallel()
	e := newFaultEnv(t)
	content := bulkFile(40, "")
	res := e.bulk(content)
	if !res.OK() {
		t.Fatalf("apply: %+v", res.Failed)
	}
	if len(res.Done) != 81 {
		t.Errorf("apply did %d steps, want 81 declarations", len(res.Done))
	}
	if got := declaredThroughAPI(e); len(got) > 0 {
		t.Errorf("%d declarations went through the management API, want none: %v", len(got), got[:min(len(got), 5)])
	}
	e.converged(content)
	// A smaller plan (a file with one more queue) goes through the API.
	more := bulkFile(40, "      extra: {}\n")
	if res := e.bulk(more); !res.OK() {
		t.Fatalf("apply: %+v", res.Failed)
	}
	if got := declaredThroughAPI(e); len(got) != 1 || !strings.HasSuffix(got[0], "/extra") {
		t.Errorf("the one new queue's declaration: %v, want one PUT of queue extra through the API", got)
	}
}

// A binding whose arguments hold a table of several fields is declared
// through the management API even among bulk declarations: amqp091-go
// would send the table's fields in Go's map order, which RabbitMQ keeps
// and compares by, so whether a message with an equal header matched
// would change from apply to apply. Through the API the fields are sorted
// by name, and a message whose client sends them so (the management
// API's publish does) matches every time.
func TestBulkDeclaresLeaveTablesOfFieldsToTheAPI(t *testing.T) {
	t.Parallel()
	e := newFaultEnv(t)
	content := bulkFile(40, "      nested:\n        bindings: [{ exchange: hx, arguments: { x-match: all, t: { a: 1, b: 2, c: 3, d: 4 } } }]\n")
	if res := e.bulk(content); !res.OK() {
		t.Fatalf("apply: %+v", res.Failed)
	}
	want := "POST bindings/" + e.vhost + "/e/hx/q/nested"
	if got := declaredThroughAPI(e); len(got) != 1 || got[0] != want {
		t.Errorf("declarations through the management API: %v, want only %s", got, want)
	}
	e.converged(content)
	for i := range 5 {
		routed, err := e.direct.Publish(t.Context(), e.vhost, broker.Publishing{Exchange: "hx",
			Headers: map[string]any{"t": map[string]any{"d": int64(4), "c": int64(3), "b": int64(2), "a": int64(1)}}})
		if err != nil {
			t.Fatal(err)
		}
		if !routed {
			t.Fatalf("publish %d: a message whose header t equals the binding's table, fields sorted by name, reached no queue", i)
		}
	}
}

// A declaration the broker refuses over AMQP is made again through the
// management API, which reports it as apply always does; the others are
// done.
func TestBulkDeclareRefusedIsReportedAsThroughTheAPI(t *testing.T) {
	t.Parallel()
	e := newFaultEnv(t)
	content := bulkFile(40, "      orphan:\n        bindings: [{ exchange: absent, routing_key: k }]\n")
	res := e.bulk(content)
	if len(res.Failed) != 1 {
		t.Fatalf("failed steps: %v, want the binding from exchange absent", res.Failed)
	}
	err := res.Failed[0].Err.Error()
	for _, want := range []string{`exchange "absent" or queue "orphan" does not exist`, "MQ401"} {
		if !strings.Contains(err, want) {
			t.Errorf("error %q does not say %q", err, want)
		}
	}
	// (The API's 404 for a binding in a vhost that exists is tried again
	// a few times: a node shutting down answers so too.)
	got := declaredThroughAPI(e)
	if len(got) == 0 {
		t.Error("no declaration went through the API, want the refused binding's")
	}
	for _, d := range got {
		if d != "POST bindings/"+e.vhost+"/e/absent/q/orphan" {
			t.Errorf("declaration %s went through the API, want only the refused binding's", d)
		}
	}
	e.converged(bulkFile(40, "      orphan: {}\n"))
}

// When the AMQP connection breaks in the middle of the declarations,
// the declarations it left unanswered are made through the management
// API, the next ones over a new connection, and nothing is missing.
func TestBulkDeclaresSurviveACutConnection(t *testing.T) {
	t.Parallel()
	b := testbroker.New(t)
	e := newFaultEnv(t)
	p, err := faultproxy.NewTCP(net.JoinHostPort(b.AMQPHost, strconv.Itoa(b.AMQPPort)))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p.Close)
	cfg := broker.Config{Server: e.proxy.URL, Username: b.Username, Password: b.Password,
		AMQPURL: (&url.URL{Scheme: "amqp", Host: p.Addr}).String(),
		Timeout: 5 * time.Second, Retry: broker.Retry{Backoff: 20 * time.Millisecond}}
	c, err := broker.Connect(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	e.faulty = c
	content := bulkFile(60, "")
	p.CutAfterBytes(6 << 10) // the handshake and a few dozen declarations
	res := e.bulk(content)
	if !res.OK() {
		t.Fatalf("apply: %+v", res.Failed)
	}
	if p.Cuts() != 1 {
		t.Fatalf("the proxy cut %d times, want once (moved %d bytes)", p.Cuts(), p.Moved())
	}
	through := declaredThroughAPI(e)
	if len(through) == 0 || len(through) > 4 {
		t.Errorf("%d declarations went through the API, want those in flight at the cut (1 to 4, the parallelism): %v", len(through), through)
	}
	e.converged(content)
}
