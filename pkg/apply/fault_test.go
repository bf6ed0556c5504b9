package apply_test

import (
	"context"
	"github.com/mqctl/mqctl/pkg/engine"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/mqctl/mqctl/internal/faultproxy"
	"github.com/mqctl/mqctl/internal/testbroker"
	"github.com/mqctl/mqctl/pkg/apply"
	"github.com/mqctl/mqctl/pkg/broker"
	"github.com/mqctl/mqctl/pkg/loader"
	"github.com/mqctl/mqctl/pkg/ownership"
	"github.com/mqctl/mqctl/pkg/plan"
	"github.com/mqctl/mqctl/pkg/topology"
)

// These tests run apply against the real broker through a faulty proxy in
// front of its management API, and check that a write whose outcome is
// unknown is read back before it is sent again — never sent twice blindly
// — and that the broker ends up as the file says.

// faultEnv is a test vhost, a proxy in front of the broker, a client
// through the proxy (for apply) and one straight to the broker (to plan
// and check).
type faultEnv struct {
	t      *testing.T
	b      *testbroker.Broker
	vhost  string
	proxy  *faultproxy.HTTP
	faulty *broker.Client
	direct *broker.Client
}

func newFaultEnv(t *testing.T) *faultEnv {
	t.Helper()
	b := testbroker.New(t)
	e := &faultEnv{t: t, b: b, vhost: b.Vhost(t)}
	p, err := faultproxy.NewHTTP(b.URL)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p.Close)
	e.proxy = p
	ctx := context.Background()
	cfg := broker.Config{Server: p.URL, Username: b.Username, Password: b.Password,
		Timeout: 3 * time.Second, Retry: broker.Retry{Backoff: 20 * time.Millisecond}}
	if e.faulty, err = broker.Connect(ctx, cfg); err != nil {
		t.Fatal(err)
	}
	cfg.Server = b.URL
	if e.direct, err = broker.Connect(ctx, cfg); err != nil {
		t.Fatal(err)
	}
	return e
}

const faultFile = `
version: 1
vhosts:
  ${VHOST}:
    exchanges:
      ex: { type: topic }
    queues:
      q1:
        bindings: [{ exchange: ex, routing_key: a.b }]
      q2:
        arguments: { x-max-length: 5 }
      q3: {}
      q9: {}
    policies:
      p1: { pattern: "^q1$", apply_to: queues, definition: { max-length: 10 } }
      p2: { pattern: "^q2$", apply_to: queues, definition: { max-length: 20 } }
`

// plan diffs content against the broker, read straight.
func (e *faultEnv) plan(content string) (*plan.Plan, map[string]*ownership.Record, *broker.Live) {
	e.t.Helper()
	desired, err := loader.LoadBytes("fault.yaml", []byte(content), loader.Options{LookupEnv: func(k string) (string, bool) {
		return e.vhost, k == "VHOST"
	}})
	if err != nil {
		e.t.Fatal(err)
	}
	// Inspect: the vhost and the broker's own objects (users), as a plan
	// reads them.
	live, err := e.direct.Inspect(context.Background(), []string{e.vhost})
	if err != nil {
		e.t.Fatal(err)
	}
	recs, err := ownership.Extract(live.State)
	if err != nil {
		e.t.Fatal(err)
	}
	// mqctl's record of the broker's users, as the engine reads it.
	if recs[""], err = engine.ReadBrokerRecord(context.Background(), e.direct); err != nil {
		e.t.Fatal(err)
	}
	p := plan.Diff(desired, plan.Current{Live: *live, Managed: ownership.Merge(recs)})
	return p, recs, live
}

// apply applies content through the proxy.
func (e *faultEnv) apply(content string) *apply.Result {
	e.t.Helper()
	p, recs, live := e.plan(content)
	return apply.Execute(context.Background(), e.faulty, p, apply.Options{
		Parallelism: 4, Records: recs, PropertiesKey: live.PropertiesKey,
		Current: func(k plan.Kind, vh, name string) plan.Object { return plan.ObjectOf(live.State, k, vh, name) },
	})
}

// converged checks that a second plan has nothing to do.
func (e *faultEnv) converged(content string) {
	e.t.Helper()
	p, _, _ := e.plan(content)
	if !p.Empty() || len(p.Adopt) > 0 {
		var rows []string
		for _, c := range p.Changes {
			rows = append(rows, string(c.Action)+" "+string(c.Kind)+" "+c.Name)
		}
		e.t.Errorf("the second plan is not empty: changes %v, adopt %v", rows, p.Adopt)
	}
}

// trail is what happened to requests on one path, in order: "PUT drop",
// "GET forward", …
func (e *faultEnv) trail(path string) []string {
	var out []string
	for _, en := range e.proxy.Log() {
		if en.Path == path {
			out = append(out, en.Method+" "+en.Fault.String())
		}
	}
	return out
}

// Each object of the file meets its own fault in one apply; then a delete
// meets one in a second apply.
func TestUnknownOutcomeIsReadBack(t *testing.T) {
	t.Parallel()
	e := newFaultEnv(t)
	vh := e.vhost
	tests := []struct {
		name   string
		path   string // the object's API path below /api/
		method string
		fault  faultproxy.Rule
		// want is the trail of requests on path: every write after the
		// first has a read before it.
		want []string
	}{
		{"queue declared, answer lost: read back, done", "queues/" + vh + "/q1", http.MethodPut,
			faultproxy.Rule{Fault: faultproxy.Drop}, []string{"PUT drop", "GET forward"}},
		{"exchange declared, answer lost: read back, done", "exchanges/" + vh + "/ex", http.MethodPut,
			faultproxy.Rule{Fault: faultproxy.Drop}, []string{"PUT drop", "GET forward"}},
		{"binding declared, answer lost: read back, done", "bindings/" + vh + "/e/ex/q/q1", http.MethodPost,
			faultproxy.Rule{Fault: faultproxy.Drop}, []string{"POST drop", "GET forward"}},
		{"policy set, answer lost: read back, done", "policies/" + vh + "/p1", http.MethodPut,
			faultproxy.Rule{Fault: faultproxy.Drop}, []string{"PUT drop", "GET forward"}},
		{"500 from the proxy, never reached the broker: read back, absent, sent again", "queues/" + vh + "/q2", http.MethodPut,
			faultproxy.Rule{Fault: faultproxy.Status, Status: 500}, []string{"PUT status", "GET forward", "PUT forward"}},
		{"timeout, never reached the broker: read back, absent, sent again", "queues/" + vh + "/q3", http.MethodPut,
			faultproxy.Rule{Fault: faultproxy.Stall}, []string{"PUT stall", "GET forward", "PUT forward"}},
		{"connection reset before forwarding: read back, absent, sent again", "policies/" + vh + "/p2", http.MethodPut,
			faultproxy.Rule{Fault: faultproxy.Reset}, []string{"PUT reset", "GET forward", "PUT forward"}},
	}
	for _, tt := range tests {
		rule := tt.fault
		rule.Times = 1
		path, method := "/api/"+tt.path, tt.method
		rule.Match = func(r *http.Request) bool { return r.Method == method && r.URL.Path == path }
		e.proxy.Add(rule)
	}
	isRecord := func(method, path string) bool {
		name, ok := strings.CutPrefix(path, "exchanges/"+vh+"/")
		return ok && method == http.MethodPut && ownership.IsRecord(name)
	}
	e.proxy.Add(faultproxy.Rule{Times: 1, Fault: faultproxy.Drop, Match: func(r *http.Request) bool {
		return isRecord(r.Method, strings.TrimPrefix(r.URL.Path, "/api/"))
	}})
	res := e.apply(faultFile)
	if !res.OK() {
		t.Fatalf("apply did not finish: failed %v, remaining %d, record %v", res.Failed, len(res.Remaining), res.RecordErr)
	}
	for _, tt := range tests {
		if got := e.trail(tt.path); strings.Join(got, ", ") != strings.Join(tt.want, ", ") {
			t.Errorf("%s: requests on %s: %v, want %v", tt.name, tt.path, got, tt.want)
		}
	}
	// The ownership record's write is settled the same way.
	if n := e.proxy.Count(func(en faultproxy.Entry) bool { return isRecord(en.Method, en.Path) }); n != 1 {
		t.Errorf("the ownership record was written %d times, want once (its answer lost, then read back)", n)
	}
	e.converged(faultFile)

	// A delete whose answer is lost is read back: the queue is gone, the
	// step is done, and the queue leaves the ownership record.
	smaller := strings.Replace(faultFile, "      q9: {}\n", "", 1)
	path := "queues/" + vh + "/q9"
	e.proxy.Add(faultproxy.Rule{Times: 1, Fault: faultproxy.Drop, Match: func(r *http.Request) bool {
		return r.Method == http.MethodDelete && r.URL.Path == "/api/"+path
	}})
	if res := e.apply(smaller); !res.OK() {
		t.Fatalf("apply of the delete did not finish: failed %v", res.Failed)
	}
	var deletes, readsAfter int
	for _, s := range e.trail(path) {
		switch {
		case strings.HasPrefix(s, "DELETE"):
			deletes++
		case deletes > 0 && strings.HasPrefix(s, "GET"):
			readsAfter++
		}
	}
	if deletes != 1 || readsAfter == 0 {
		t.Errorf("requests on %s: %v, want one DELETE (its answer lost) and a read back after it", path, e.trail(path))
	}
	e.converged(smaller)
}

// When the write is still not done after one more try, the step fails
// with one line saying so; a re-run finishes the job.
func TestUnknownOutcomeTwice(t *testing.T) {
	t.Parallel()
	e := newFaultEnv(t)
	path := "queues/" + e.vhost + "/q2"
	e.proxy.Add(faultproxy.Rule{Times: 2, Fault: faultproxy.Status, Status: 503, Match: func(r *http.Request) bool {
		return r.Method == http.MethodPut && r.URL.Path == "/api/"+path
	}})
	res := e.apply(faultFile)
	if len(res.Failed) != 1 || res.Failed[0].Step.Name != "q2" {
		t.Fatalf("failed steps %v, want the declaration of q2", res.Failed)
	}
	msg := res.Failed[0].Err.Error()
	for _, want := range []string{"answered 503", "the broker may or may not have done it", "read back, it was not done (after one more try)"} {
		if !strings.Contains(msg, want) {
			t.Errorf("failure %q does not say %q", msg, want)
		}
	}
	if strings.Contains(msg, "\n") {
		t.Errorf("failure spans several lines: %q", msg)
	}
	if got := e.trail(path); strings.Join(got, ", ") != "PUT status, GET forward, PUT status, GET forward" {
		t.Errorf("requests on %s: %v", path, got)
	}
	if res2 := e.apply(faultFile); !res2.OK() {
		t.Fatalf("re-run: %v", res2.Failed)
	}
	e.converged(faultFile)
}

// A user written with a plaintext password whose answer is lost is read
// back and found done: the broker holds the password's salted hash, which
// the read back compares with the password as the plan does (the user
// kind's Compare). It is not sent again.
func TestUnknownOutcomeOfAUserIsReadBack(t *testing.T) {
	t.Parallel()
	e := newFaultEnv(t)
	e.b.UsersSection(t)
	user := e.vhost + "-u"
	const section = "version: 1\nvhosts:\n  ${VHOST}: {}\nusers:\n"
	file := section + "  " + user + ": { password: pw-" + e.vhost + ", tags: [management] }\n"
	t.Cleanup(func() {
		// The users section without it deletes the user mqctl made, and
		// takes it out of mqctl's record of the broker's users.
		if res := e.apply(section[:len(section)-1] + " {}\n"); !res.OK() {
			t.Errorf("deleting the test user: failed %v", res.Failed)
		}
	})
	path := "users/" + user
	e.proxy.Add(faultproxy.Rule{Times: 1, Fault: faultproxy.Drop, Match: func(r *http.Request) bool {
		return r.Method == http.MethodPut && r.URL.Path == "/api/"+path
	}})
	if res := e.apply(file); !res.OK() {
		t.Fatalf("apply did not finish: failed %v, remaining %d, record %v", res.Failed, len(res.Remaining), res.RecordErr)
	}
	if got := e.trail(path); strings.Join(got, ", ") != "PUT drop" {
		t.Errorf("requests on %s: %v, want one PUT (its answer lost; the read back finds the user with the password's hash)", path, got)
	}
	if n := e.proxy.Count(func(en faultproxy.Entry) bool {
		return en.Method == http.MethodGet && strings.HasPrefix(en.Path, "users")
	}); n == 0 {
		t.Errorf("the user was not read back")
	}
	e.converged(file)
}

// A write whose answer is lost is done only when the broker holds the
// object with the settings the plan wrote, compared as the diff compares
// them: an object of that name with other settings (an older definition,
// or one another client declared meanwhile) is no proof, and the write is
// sent again.
func TestReadBackComparesSettings(t *testing.T) {
	t.Parallel()
	e := newFaultEnv(t)
	vh := e.vhost
	if res := e.apply(faultFile); !res.OK() {
		t.Fatalf("first apply: failed %v", res.Failed)
	}
	// lose fails the next PUT on path with a 500 that never reached the
	// broker, after race (another client's declaration) when not nil.
	lose := func(path string, race func()) {
		e.proxy.Add(faultproxy.Rule{Times: 1, Fault: faultproxy.Status, Status: 500, Match: func(r *http.Request) bool {
			if r.Method != http.MethodPut || r.URL.Path != "/api/"+path {
				return false
			}
			if race != nil {
				race()
			}
			return true
		}})
	}
	ctx := context.Background()

	// The policy, read back with its old definition, is written again.
	updated := strings.Replace(faultFile, "definition: { max-length: 10 }", "definition: { max-length: 11 }", 1)
	lose("policies/"+vh+"/p1", nil)
	if res := e.apply(updated); !res.OK() {
		t.Fatalf("apply of the policy's update: failed %v", res.Failed)
	}
	if got := e.trail("policies/" + vh + "/p1"); strings.Join(got, ", ") != "PUT forward, PUT status, GET forward, PUT forward" {
		t.Errorf("requests on policy p1: %v, want its update read back with the old definition and sent again", got)
	}
	e.converged(updated)

	// A queue and an exchange that another client declares with other
	// settings just before mqctl's declaration are declared again, and
	// the broker refuses them.
	for _, tc := range []struct {
		name, path     string
		section, entry string
		race           func()
	}{
		{"q5", "queues/" + vh + "/q5", "    queues:\n", "      q5: { arguments: { x-max-length: 5 } }\n", func() {
			_ = e.direct.DeclareQueue(ctx, vh, &topology.Queue{Name: "q5", Type: "classic", Durable: true,
				Arguments: topology.Args{"x-max-length": int64(6)}})
		}},
		{"ex2", "exchanges/" + vh + "/ex2", "    exchanges:\n", "      ex2: { type: topic }\n", func() {
			_ = e.direct.DeclareExchange(ctx, vh, &topology.Exchange{Name: "ex2", Type: "fanout", Durable: true})
		}},
	} {
		next := strings.Replace(updated, tc.section, tc.section+tc.entry, 1)
		lose(tc.path, tc.race)
		res := e.apply(next)
		if got := e.trail(tc.path); strings.Join(got, ", ") != "PUT status, GET forward, PUT forward" {
			t.Errorf("requests on %s: %v, want its declaration read back with the other settings and sent again", tc.name, got)
		}
		if len(res.Failed) != 1 || res.Failed[0].Step.Name != tc.name || !strings.Contains(res.Failed[0].Err.Error(), "inequivalent") {
			t.Errorf("failed steps %v, want the declaration of %s, refused by the broker as inequivalent", res.Failed, tc.name)
		}
	}
}
