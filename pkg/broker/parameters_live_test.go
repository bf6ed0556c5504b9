package broker_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/mqctl/mqctl/internal/testbroker"
	"github.com/mqctl/mqctl/pkg/broker"
	"github.com/mqctl/mqctl/pkg/engine"
	"github.com/mqctl/mqctl/pkg/export"
	"github.com/mqctl/mqctl/pkg/kind"
	"github.com/mqctl/mqctl/pkg/loader"
	"github.com/mqctl/mqctl/pkg/plan"
	"github.com/mqctl/mqctl/pkg/topology"
)

type fixture struct {
	t     *testing.T
	b     *testbroker.Broker
	c     *broker.Client
	eng   *engine.Engine
	vhost string
	env   map[string]string
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	b := testbroker.New(t)
	c, err := broker.Connect(t.Context(), broker.Config{Server: b.URL, Username: b.Username, Password: b.Password})
	if err != nil {
		t.Fatalf("connect to the test broker: %v", err)
	}
	f := &fixture{t: t, b: b, c: c, vhost: b.Vhost(t), env: map[string]string{}}
	f.eng = engine.New(c, engine.Options{LookupEnv: f.lookup})
	return f
}

func (f *fixture) lookup(k string) (string, bool) {
	if k == "VHOST" {
		return f.vhost, true
	}
	v, ok := f.env[k]
	return v, ok
}

func (f *fixture) load(src string) *topology.Topology {
	f.t.Helper()
	t, err := loader.LoadBytes("topology.yaml", []byte(src), loader.Options{LookupEnv: f.lookup})
	if err != nil {
		f.t.Fatal(err)
	}
	t.Vhosts[f.vhost].Description = "mqctl test " + f.t.Name()
	return t
}

func (f *fixture) apply(src string) *engine.ApplyResult {
	f.t.Helper()
	out, err := f.eng.Apply(context.Background(), engine.ApplyInput{Desired: f.load(src)}, engine.ApplyOptions{})
	if err != nil {
		f.t.Fatalf("apply: %v", err)
	}
	if out.Result != nil && !out.Result.OK() {
		f.t.Fatalf("apply failed: %+v", out.Result.Failed)
	}
	return out
}

func (f *fixture) plan(src string) *plan.Plan {
	f.t.Helper()
	res, err := f.eng.Plan(context.Background(), f.load(src), engine.PlanOptions{})
	if err != nil {
		f.t.Fatal(err)
	}
	return res.Plan
}

// eventually polls cond until it holds, failing with what the last try
// saw after a minute (a bound on a broken broker, not a timing assertion).
func eventually(t *testing.T, what string, cond func() (bool, string)) {
	t.Helper()
	var last string
	for end := time.Now().Add(time.Minute); time.Now().Before(end); time.Sleep(100 * time.Millisecond) {
		var ok bool
		if ok, last = cond(); ok {
			return
		}
	}
	t.Fatalf("%s: still not so after a minute; last seen: %s", what, last)
}

// TestShovelMovesAMessage: a shovel declared in the file moves a message
// published to its source queue into its destination queue, on the
// broker under test (3.10 and 4.0 alike).
func TestShovelMovesAMessage(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, shovel string
	}{
		{"queue to queue, this broker", `{ src-uri: "amqp:///${VHOST}", src-queue: s.src, dest-uri: "amqp:///${VHOST}", dest-queue: s.dst }`},
		{"queue to exchange with a key, a list of URIs, on-publish", `{ src-uri: ["amqp:///${VHOST}"], src-queue: s.src, dest-uri: "amqp:///${VHOST}", dest-exchange: s.x, dest-exchange-key: k, ack-mode: on-publish, src-delete-after: never, reconnect-delay: 1 }`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t)
			src := "version: 1\nvhosts:\n  ${VHOST}:\n    exchanges:\n      s.x: { type: direct }\n    queues:\n      s.src: {}\n      s.dst: { bindings: [{ exchange: s.x, routing_key: k }] }\n" +
				"    shovels:\n      s.move: " + tt.shovel + "\n"
			f.apply(src)
			if p := f.plan(src); !p.Empty() {
				t.Errorf("plan after apply is not empty: %v", p.Changes)
			}
			ch := f.b.Channel(t, f.vhost)
			body := "moved by " + t.Name()
			if err := ch.PublishWithContext(context.Background(), "", "s.src", false, false, amqp.Publishing{Body: []byte(body)}); err != nil {
				t.Fatal(err)
			}
			eventually(t, "the message is in s.dst", func() (bool, string) {
				m, ok, err := ch.Get("s.dst", true)
				if err != nil {
					return false, err.Error()
				}
				if !ok {
					return false, "s.dst is empty"
				}
				return string(m.Body) == body, fmt.Sprintf("s.dst held %q", m.Body)
			})
		})
	}
}

// TestFederationUpstreamIsAccepted: an upstream the file declares (its
// URI with the test user's credentials, from ${VAR}) and a policy that
// names it make a running federation link, which carries a message from
// the upstream's exchange to the federated one.
func TestFederationUpstreamIsAccepted(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	up := f.b.Vhost(t) // the upstream: another vhost of the same broker
	if err := f.c.PutJSON(context.Background(), map[string]any{"type": "fanout", "durable": true}, "declare the upstream exchange", up, "exchanges", up, "f.x"); err != nil {
		t.Fatal(err)
	}
	f.env["UP_URI"] = f.b.AMQPURL(up)
	src := `version: 1
vhosts:
  ${VHOST}:
    exchanges:
      f.x: { type: fanout }
    queues:
      f.in: { bindings: [{ exchange: f.x }] }
    policies:
      f.fed: { pattern: "^f\\.x$", apply_to: exchanges, definition: { federation-upstream: f.up } }
    federation_upstreams:
      f.up: { uri: "${UP_URI}", expires: 3600000, ack-mode: on-confirm }
    federation_upstream_sets:
      f.set: [{ upstream: f.up }]
`
	f.apply(src)
	if p := f.plan(src); !p.Empty() {
		t.Errorf("plan after apply is not empty: %v", p.Changes)
	}
	type link struct {
		Upstream string `json:"upstream"`
		Exchange string `json:"exchange"`
		Status   string `json:"status"`
		URI      string `json:"uri"`
		Error    string `json:"error"`
	}
	eventually(t, "a running federation link from f.up", func() (bool, string) {
		var links []link
		if err := f.c.GetJSON(context.Background(), &links, "list federation links", f.vhost, "federation-links", f.vhost); err != nil {
			return false, err.Error()
		}
		for _, l := range links {
			if l.Upstream == "f.up" && l.Exchange == "f.x" && l.Status == "running" {
				return true, ""
			}
		}
		return false, fmt.Sprintf("%+v", links)
	})
	ch := f.b.Channel(t, up)
	lch := f.b.Channel(t, f.vhost)
	eventually(t, "a message published upstream reaches f.in", func() (bool, string) {
		if err := ch.PublishWithContext(context.Background(), "f.x", "", false, false, amqp.Publishing{Body: []byte("federated")}); err != nil {
			return false, err.Error()
		}
		m, ok, err := lch.Get("f.in", true)
		if err != nil || !ok {
			return false, fmt.Sprintf("f.in empty (%v)", err)
		}
		return string(m.Body) == "federated", string(m.Body)
	})
}

// TestNoSecretInAnyOutput: a shovel and an upstream whose URIs hold a
// password: no plan form, apply result, read-back, export, the loader's
// refusal of a bad URI, nor the broker's refusal of one shows it.
func TestNoSecretInAnyOutput(t *testing.T) {
	t.Parallel()
	const secret = "S3CRETpw"
	f := newFixture(t)
	f.env["SRC_URI"] = "amqp://user:" + secret + "@localhost:1/x"
	// A port that is no number the loader refuses; a heartbeat that is
	// no number only the broker (amqp_uri's query parameters).
	f.env["NOPORT_URI"] = "amqp://user:" + secret + "@localhost:notaport/x"
	f.env["BAD_URI"] = "amqp://user:" + secret + "@localhost:1/x?heartbeat=abc"
	src := `version: 1
vhosts:
  ${VHOST}:
    queues:
      n.q: {}
    shovels:
      n.s: { src-uri: "${SRC_URI}", src-queue: n.q, dest-uri: ["amqp:///${VHOST}", "amqp://u2:` + secret + `@localhost:2/y"], dest-queue: n.d }
    federation_upstreams:
      n.up: { uri: "${SRC_URI}" }
`
	var outputs []string
	seen := func(what string, s string) { outputs = append(outputs, what+": "+s) }

	p := f.plan(src)
	var text, js bytes.Buffer
	if err := plan.WriteText(&text, p, plan.RenderOptions{}); err != nil {
		t.Fatal(err)
	}
	seen("text plan", text.String())
	if err := plan.WriteJSON(&js, p); err != nil {
		t.Fatal(err)
	}
	seen("JSON plan", js.String())
	var saved bytes.Buffer
	// A literal secret (dest-uri's second URI) cannot be saved: the error
	// says so without it.
	if err := plan.WriteSaved(&saved, p); err == nil {
		t.Errorf("WriteSaved saved a plan with a literal secret")
	} else {
		seen("saved plan error", err.Error())
	}
	seen("saved plan", saved.String())

	res := f.apply(src)
	b, _ := json.Marshal(res.Plan)
	seen("apply's plan", string(b))
	for _, st := range res.Result.Done {
		seen("apply's step", st.String())
	}

	l, err := f.eng.ReadLive(context.Background(), []string{f.vhost})
	if err != nil {
		t.Fatal(err)
	}
	state := l.State()
	if it := state.Vhosts[f.vhost].Items.Get(kind.Shovel, "n.s"); it == nil || it.Settings["src-uri"] != f.env["SRC_URI"] {
		t.Fatalf("the shovel read back is %+v, want its src-uri as written", it)
	}
	var y bytes.Buffer
	if err := export.WriteYAML(&y, state, export.Options{}); err != nil {
		t.Fatal(err)
	}
	seen("export", y.String())
	for _, v := range export.Variables(state) {
		seen("export variable", v.Name+" "+v.What)
	}
	if !strings.Contains(y.String(), `"${`) {
		t.Errorf("export has no ${VAR} placeholder:\n%s", y.String())
	}
	if p := f.plan(src); !p.Empty() {
		t.Errorf("plan after apply is not empty: %v", p.Changes)
	}

	// The loader refuses a URI whose port is no number, naming it.
	noPort := strings.Replace(src, `src-uri: "${SRC_URI}"`, `src-uri: "${NOPORT_URI}"`, 1)
	if _, err := loader.LoadBytes("topology.yaml", []byte(noPort), loader.Options{LookupEnv: f.lookup}); err == nil || !strings.Contains(err.Error(), `its port "notaport" is not a number`) {
		t.Errorf("the loader took a URI with port notaport: %v", err)
	} else {
		seen("load error", err.Error())
	}

	// The loader refuses a heartbeat that is no number (amqp_uri's query
	// parameters), naming it without the password.
	bad := strings.Replace(src, `src-uri: "${SRC_URI}"`, `src-uri: "${BAD_URI}"`, 1)
	if _, err := loader.LoadBytes("topology.yaml", []byte(bad), loader.Options{LookupEnv: f.lookup}); err == nil || !strings.Contains(err.Error(), `heartbeat="abc" is not an integer`) {
		t.Errorf("the loader took a URI with heartbeat abc: %v", err)
	} else {
		seen("load error", err.Error())
	}
	// Written past the loader, the broker refuses it and quotes it
	// whole; the write's error does not.
	it := &topology.Item{Kind: kind.Shovel, Name: "n.bad", Settings: topology.Args{"src-uri": f.env["BAD_URI"], "src-queue": "n.q", "dest-uri": "amqp://", "dest-queue": "n.d"}}
	if err := f.c.WriteItem(context.Background(), kind.Shovel, f.vhost, nil, it); err == nil {
		t.Errorf("the broker took a URI with heartbeat abc")
	} else {
		seen("refused write", err.Error())
		if !errors.Is(err, broker.ErrRejected) {
			t.Errorf("the refusal does not wrap broker.ErrRejected: %v", err)
		}
	}
	for _, o := range outputs {
		if strings.Contains(o, secret) {
			t.Errorf("an output shows the secret:\n%s", o)
		}
	}
	if len(outputs) < 10 {
		t.Errorf("only %d outputs checked", len(outputs))
	}
}

// TestReadGivesBackWhatWasWritten: what each version stores and gives
// back for these parameters, measured: both 3.10.8 and 4.0.5 keep every
// key and value as written (a URI's credentials, a one-URI list as a
// list, 1.5 as 1.5) and add no default.
func TestReadGivesBackWhatWasWritten(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	want := &topology.Item{Kind: kind.Shovel, Name: "r.s", Settings: topology.Args{
		"src-uri": "amqp://u:pw@localhost:1/x", "src-queue": "a", "dest-uri": []any{"amqp://"}, "dest-queue": "b",
		"reconnect-delay": 1.5, "src-delete-after": int64(3), "src-queue-args": map[string]any{"x-queue-type": "quorum"},
	}}
	if err := f.c.WriteItem(context.Background(), kind.Shovel, f.vhost, nil, want); err != nil {
		t.Fatal(err)
	}
	items, err := f.c.ReadItems(context.Background(), kind.Shovel, f.vhost)
	if err != nil {
		t.Fatal(err)
	}
	if len(items) != 1 || !topology.ValueEqual(map[string]any(items[0].Settings), map[string]any(want.Settings)) {
		t.Errorf("read back %v, want %v", items[0].Settings, want.Settings)
	}
	if err := f.c.DeleteItem(context.Background(), kind.Shovel, f.vhost, want); err != nil {
		t.Fatal(err)
	}
	if items, err := f.c.ReadItems(context.Background(), kind.Shovel, f.vhost); err != nil || len(items) != 0 {
		t.Errorf("after the delete: %v, %v", items, err)
	}
	// A delete of what is gone already is done.
	if err := f.c.DeleteItem(context.Background(), kind.Shovel, f.vhost, want); err != nil {
		t.Errorf("delete again: %v", err)
	}
}
