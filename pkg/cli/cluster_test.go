package cli

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/mqctl/mqctl/pkg/broker"
	"github.com/mqctl/mqctl/pkg/plan"
	"github.com/mqctl/mqctl/pkg/topology"
)

// downBroker answers like a RabbitMQ 3.10 node of a cluster whose node
// rabbit@c1 is stopped: classic queues "down" and "gone" live there (404 to
// GET, listed with state "down"); "up" lives on a running node.
func downBroker(t *testing.T) (*broker.Client, func() []string) {
	t.Helper()
	var mu sync.Mutex
	var asked []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		asked = append(asked, r.URL.Path)
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		switch r.URL.Path {
		case "/api/whoami":
			_, _ = w.Write([]byte(`{"name":"guest","tags":["administrator"]}`))
		case "/api/overview":
			_, _ = w.Write([]byte(`{"rabbitmq_version":"3.10.8","cluster_name":"c","node":"rabbit@c2","listeners":[]}`))
		case "/api/vhosts":
			_, _ = w.Write([]byte(`[{"name":"v"}]`))
		case "/api/queues/v/up":
			_, _ = w.Write([]byte(`{"name":"up","messages":0,"consumers":0}`))
		case "/api/queues/v":
			_, _ = w.Write([]byte(`[{"name":"down","type":"classic","node":"rabbit@c1","state":"down"},
				{"name":"gone","type":"classic","node":"rabbit@c1","state":"down"},
				{"name":"up","type":"classic","node":"rabbit@c2","state":"running"},
				{"name":"qq","type":"quorum","node":"rabbit@c2","leader":"rabbit@c2","members":["rabbit@c1","rabbit@c2","rabbit@c3"],"online":["rabbit@c2","rabbit@c3"],"state":"running"}]`))
		default:
			w.WriteHeader(http.StatusNotFound)
			_, _ = w.Write([]byte(`{"error":"Object Not Found","reason":"Not Found"}`))
		}
	}))
	t.Cleanup(srv.Close)
	c, err := broker.Connect(context.Background(), broker.Config{Server: srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	return c, func() []string {
		mu.Lock()
		defer mu.Unlock()
		return slices.Clone(asked)
	}
}

func TestHoldBackDownQueues(t *testing.T) {
	c, asked := downBroker(t)
	state := topology.New()
	v := topology.NewVhost("v")
	for name, typ := range map[string]string{"down": "classic", "gone": "", "up": "classic", "qq": "quorum"} {
		v.Queues[name] = &topology.Queue{Name: name, Type: typ, Durable: true}
	}
	state.Vhosts["v"] = v
	l := &live{current: plan.Current{State: state}}
	bind := func(q string) plan.Change {
		b := &topology.Binding{Source: "x", Destination: q, DestinationType: topology.DestQueue, RoutingKey: "k"}
		return plan.Change{Action: plan.Create, Kind: plan.KindBinding, Vhost: "v", Name: plan.BindingName(b), After: &plan.Object{Binding: b}}
	}
	p := &plan.Plan{Changes: []plan.Change{
		bind("down"),
		bind("up"),
		bind("new"),
		bind("qq"),
		{Action: plan.Create, Kind: plan.KindQueue, Vhost: "v", Name: "new"},
		{Action: plan.Delete, Kind: plan.KindQueue, Vhost: "v", Name: "gone"},
		{Action: plan.Replace, Kind: plan.KindQueue, Vhost: "v", Name: "qq"},
	}}
	var stderr bytes.Buffer
	if err := holdBackDownQueues(context.Background(), c, p, l, &stderr); err != nil {
		t.Fatal(err)
	}
	var kept []string
	for _, ch := range p.Changes {
		kept = append(kept, string(ch.Action)+" "+string(ch.Kind)+" "+ch.Name)
	}
	want := []string{
		"create binding x -> queue up [k]",
		"create binding x -> queue new [k]",
		"create binding x -> queue qq [k]",
		"create queue new",
		"replace queue qq",
	}
	if diff := cmp.Diff(want, kept); diff != "" {
		t.Errorf("changes kept (-want +got):\n%s", diff)
	}
	notes := stderr.String()
	for _, s := range []string{
		`queue "down" in vhost "v" lives on node rabbit@c1, which is down`,
		`(create binding x -> queue down [k]); run again once rabbit@c1 is back`,
		`queue "gone" in vhost "v" lives on node rabbit@c1, which is down`,
		`(delete queue gone)`,
	} {
		if !strings.Contains(notes, s) {
			t.Errorf("notes do not say %q:\n%s", s, notes)
		}
	}
	if n := strings.Count(notes, "\n"); n != 2 {
		t.Errorf("want one note per queue held back, got %d:\n%s", n, notes)
	}
	// Only the classic queues that exist and that the plan touches are
	// looked up; quorum queues and queues the plan creates are not.
	for _, p := range asked() {
		if strings.HasSuffix(p, "/new") || strings.HasSuffix(p, "/qq") {
			t.Errorf("asked the broker about %s", p)
		}
	}
}

func TestHoldBackNothingWithoutCandidates(t *testing.T) {
	c, asked := downBroker(t)
	before := len(asked())
	l := &live{current: plan.Current{State: topology.New()}}
	p := &plan.Plan{Changes: []plan.Change{{Action: plan.Create, Kind: plan.KindQueue, Vhost: "v", Name: "new"}}}
	var stderr bytes.Buffer
	if err := holdBackDownQueues(context.Background(), c, p, l, &stderr); err != nil {
		t.Fatal(err)
	}
	if len(p.Changes) != 1 || stderr.Len() != 0 || len(asked()) != before {
		t.Errorf("a plan that touches no existing classic queue: changes %v, notes %q, %d requests", p.Changes, stderr.String(), len(asked())-before)
	}
}
