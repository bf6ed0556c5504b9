package engine

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/mqctl/mqctl/pkg/broker"
	"github.com/mqctl/mqctl/pkg/kind"
	"github.com/mqctl/mqctl/pkg/plan"
	"github.com/mqctl/mqctl/pkg/topology"
)

// downBroker answers like a node (of RabbitMQ version, "3.10" or "4.0")
// of a cluster whose node rabbit@c1 is stopped, as those versions were seen
// to answer: classic queues "down" and "gone" live on c1 (3.10: 404 to GET,
// listed with state "down"; 4.0: GET says "stopped", listed "down"); "up"
// lives on a running node; quorum queues "qq" and "qb" keep 2 of their 3
// members, "qq2" has 1 of 2 (3.10: no state and no leader; 4.0:
// "minority"). vhost is the answer to GET /api/vhosts/v ("": 404); asked
// lists the paths asked for, a queue listing with the queue totals as
// "/api/queues/v (totals)".
func downBroker(t *testing.T, version, vhost string) (*broker.Client, func() []string) {
	t.Helper()
	var mu sync.Mutex
	var asked []string
	v310 := version == "3.10"
	queues := map[string]string{
		"up": `{"name":"up","type":"classic","node":"rabbit@c2","state":"running"}`,
		"qq": `{"name":"qq","type":"quorum","node":"rabbit@c2","leader":"rabbit@c2","members":["rabbit@c1","rabbit@c2","rabbit@c3"],"online":["rabbit@c2","rabbit@c3"],"state":"running"}`,
		"qb": `{"name":"qb","type":"quorum","node":"rabbit@c2","leader":"rabbit@c2","members":["rabbit@c1","rabbit@c2","rabbit@c3"],"online":["rabbit@c2","rabbit@c3"],"state":"running"}`,
	}
	list := []string{queues["up"], queues["qq"], queues["qb"],
		`{"name":"down","type":"classic","node":"rabbit@c1","state":"down"}`,
		`{"name":"gone","type":"classic","node":"rabbit@c1","state":"down"}`}
	if v310 {
		queues["qq2"] = `{"name":"qq2","type":"quorum","leader":null,"members":["rabbit@c1","rabbit@c2"],"online":["rabbit@c2"]}`
	} else {
		queues["qq2"] = `{"name":"qq2","type":"quorum","node":"rabbit@c1","leader":"rabbit@c1","members":["rabbit@c1","rabbit@c2"],"online":["rabbit@c2"],"state":"minority"}`
		queues["down"] = `{"name":"down","type":"classic","node":"rabbit@c1","state":"stopped"}`
		queues["gone"] = `{"name":"gone","type":"classic","node":"rabbit@c1","state":"stopped"}`
	}
	list = append(list, queues["qq2"])
	if v310 {
		// 3.10 lists placements with statistics, depths included.
		list[1] = strings.Replace(list[1], `"state":"running"`, `"state":"running","messages":4,"consumers":1`, 1)
	}
	// 4.0 lists them without, with the queue totals (the depth) where
	// asked for them.
	totals := strings.Replace(list[1], `"state":"running"`, `"state":"running","messages":4`, 1)
	c := fakeAPI(t, version+".5", "rabbit@c2", func(w http.ResponseWriter, r *http.Request) bool {
		mu.Lock()
		if r.URL.Query().Get("enable_queue_totals") == "true" {
			asked = append(asked, r.URL.Path+" (totals)")
		} else {
			asked = append(asked, r.URL.Path)
		}
		mu.Unlock()
		q, isQueue := strings.CutPrefix(r.URL.Path, "/api/queues/v/")
		switch {
		case r.URL.Path == "/api/vhosts":
			_, _ = w.Write([]byte(`[{"name":"v"}]`))
		case r.URL.Path == "/api/vhosts/v" && vhost != "":
			_, _ = w.Write([]byte(vhost))
		case r.URL.Path == "/api/queues/v" && !v310 && r.URL.Query().Get("enable_queue_totals") == "true":
			_, _ = w.Write([]byte("[" + strings.Join(append([]string{list[0], totals}, list[2:]...), ",") + "]"))
		case r.URL.Path == "/api/queues/v":
			_, _ = w.Write([]byte("[" + strings.Join(list, ",") + "]"))
		case isQueue && queues[q] != "":
			_, _ = w.Write([]byte(queues[q]))
		default:
			return false
		}
		return true
	})
	return c, func() []string {
		mu.Lock()
		defer mu.Unlock()
		return slices.Clone(asked)
	}
}

// notesTo is an engine for c that writes its notes to w as mqctl prints
// them.
func notesTo(c *broker.Client, w io.Writer) *Engine {
	return New(c, Options{Note: func(n string) { fmt.Fprintf(w, "mqctl: note: %s\n", n) }})
}

// TestHoldBackDownQueues, on 4.0 for each answer of the vhost's
// unacknowledged messages: the depths of the queues at stake come from
// the listing's queue totals unless the vhost holds no unacknowledged
// message, when the exact reads alone give them (ready messages) and the
// listing leaves the totals out.
func TestHoldBackDownQueues(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ name, version, vhost string }{
		{"3.10", "3.10", `{"name":"v","messages_unacknowledged":0}`},
		{"4.0", "4.0", ""},
		{"4.0 unacknowledged messages", "4.0", `{"name":"v","messages_unacknowledged":3}`},
		{"4.0 no statistics yet", "4.0", `{"name":"v"}`},
		{"4.0 none unacknowledged", "4.0", `{"name":"v","messages_unacknowledged":0}`},
	} {
		t.Run(tc.name, func(t *testing.T) { testHoldBackDownQueues(t, tc.version, tc.vhost) })
	}
}

func testHoldBackDownQueues(t *testing.T, version, vhost string) {
	readyOnly := version != "3.10" && strings.Contains(vhost, `"messages_unacknowledged":0`)
	c, asked := downBroker(t, version, vhost)
	state := topology.New()
	v := topology.NewVhost("v")
	for name, typ := range map[string]string{"down": "classic", "gone": "", "up": "classic", "qq": "quorum", "qb": "quorum", "qq2": "quorum"} {
		v.Queues[name] = &topology.Queue{Name: name, Type: typ, Durable: true}
	}
	state.Vhosts["v"] = v
	l := &Live{current: plan.Current{Live: topology.Live{State: state}}}
	binding := func(q, key string) *topology.Binding {
		return &topology.Binding{Source: "x", Destination: q, DestinationType: topology.DestQueue, RoutingKey: key}
	}
	bind := func(q string) plan.Change {
		b := binding(q, "k")
		return plan.Change{Action: plan.Create, Kind: kind.Binding, Vhost: "v", Name: plan.BindingName(b), After: plan.BindingObject{Binding: b}}
	}
	unbind := func(q string) plan.Change {
		b := binding(q, "old")
		return plan.Change{Action: plan.Delete, Kind: kind.Binding, Vhost: "v", Name: plan.BindingName(b), Before: plan.BindingObject{Binding: b}}
	}
	p := &plan.Plan{Changes: []plan.Change{
		bind("down"),
		unbind("down"),
		bind("up"),
		unbind("up"),
		bind("new"),
		bind("qq"),
		bind("qb"),
		unbind("qq2"),
		{Action: plan.Create, Kind: kind.Queue, Vhost: "v", Name: "new"},
		{Action: plan.Delete, Kind: kind.Queue, Vhost: "v", Name: "gone"},
		{Action: plan.Replace, Kind: kind.Queue, Vhost: "v", Name: "qq"},
		{Action: plan.Delete, Kind: kind.Queue, Vhost: "v", Name: "qq2"},
	}}
	var stderr bytes.Buffer
	known, err := notesTo(c, &stderr).holdBackDownQueues(context.Background(), p, l)
	if err != nil {
		t.Fatal(err)
	}
	// The listing with statistics (3.10) gave the depth and consumers of
	// qq, replaced: readStakes is handed them and does not list them
	// again. 4.0 lists without statistics, but with the queue totals: the
	// depth alone, whose consumers the exact reads count.
	qq := plan.ObjectRef{Kind: kind.Queue, Vhost: "v", Name: "qq"}
	wantStats := map[plan.ObjectRef]plan.QueueStats{qq: {Messages: 4, Consumers: 1}}
	wantDepthOnly := map[plan.ObjectRef]bool{}
	switch {
	case readyOnly:
		// No unacknowledged message: the depth is the ready messages,
		// which the exact reads count (none of its own here).
		wantStats[qq] = plan.QueueStats{}
		wantDepthOnly[qq] = true
	case version != "3.10":
		wantStats[qq] = plan.QueueStats{Messages: 4}
		wantDepthOnly[qq] = true
	}
	gotStats := map[plan.ObjectRef]plan.QueueStats{}
	for ref, st := range known.read {
		gotStats[ref] = plan.QueueStats{Messages: st.Messages, Consumers: st.Consumers}
	}
	if diff := cmp.Diff(wantDepthOnly, known.depthOnly, cmpopts.EquateEmpty()); diff != "" {
		t.Errorf("RabbitMQ %s: depths without consumers (-want +got):\n%s", version, diff)
	}
	if diff := cmp.Diff(wantStats, gotStats, cmpopts.EquateEmpty()); diff != "" {
		t.Errorf("RabbitMQ %s: statistics from the placements listing (-want +got):\n%s", version, diff)
	}
	var kept []string
	for _, ch := range p.Changes {
		kept = append(kept, string(ch.Action)+" "+string(ch.Kind)+" "+ch.Name)
	}
	want := []string{
		"create binding x -> queue up [k]",
		"delete binding x -> queue up [old]",
		"create binding x -> queue new [k]",
		"create binding x -> queue qq [k]",
		"create binding x -> queue qb [k]",
		"create queue new",
		"replace queue qq",
	}
	if diff := cmp.Diff(want, kept); diff != "" {
		t.Errorf("changes kept (-want +got):\n%s", diff)
	}
	notes := stderr.String()
	for _, s := range []string{
		`queue "down" in vhost "v" lives on node rabbit@c1, which is down`,
		`(create binding x -> queue down [k]; delete binding x -> queue down [old]); run again once rabbit@c1 is back`,
		`queue "gone" in vhost "v" lives on node rabbit@c1, which is down`,
		`(delete queue gone)`,
		`quorum queue "qq2" in vhost "v" has 1 of its 2 members online (down: rabbit@c1)`,
		`(delete binding x -> queue qq2 [old]; delete queue qq2); run again once a majority is back`,
	} {
		if !strings.Contains(notes, s) {
			t.Errorf("notes do not say %q:\n%s", s, notes)
		}
	}
	if n := strings.Count(notes, "\n"); n != 3 {
		t.Errorf("want one note per queue held back, got %d:\n%s", n, notes)
	}
	// Only the existing queues that the plan touches are looked up, and
	// quorum queues only when it deletes or replaces them; with five of
	// them in the vhost (listStakesFrom), one listing of the vhost's
	// queues answers for all, on both versions, and no queue is read on
	// its own.
	listed, totals := false, false
	for _, p := range asked() {
		if strings.HasPrefix(p, "/api/queues/v/") {
			t.Errorf("asked the broker about %s alone", p)
		}
		listed = listed || strings.HasPrefix(p, "/api/queues/v")
		totals = totals || p == "/api/queues/v (totals)"
	}
	if !listed {
		t.Errorf("did not list the queues of the vhost")
	}
	if wantTotals := version != "3.10" && !readyOnly; totals != wantTotals {
		t.Errorf("listed the queues with their totals: %t, want %t (asked %v)", totals, wantTotals, asked())
	}
}

func TestHoldBackNothingWithoutCandidates(t *testing.T) {
	t.Parallel()
	c, asked := downBroker(t, "4.0", "")
	before := len(asked())
	l := &Live{current: plan.Current{Live: topology.Live{State: topology.New()}}}
	p := &plan.Plan{Changes: []plan.Change{{Action: plan.Create, Kind: kind.Queue, Vhost: "v", Name: "new"}}}
	var stderr bytes.Buffer
	if _, err := notesTo(c, &stderr).holdBackDownQueues(context.Background(), p, l); err != nil {
		t.Fatal(err)
	}
	if len(p.Changes) != 1 || stderr.Len() != 0 || len(asked()) != before {
		t.Errorf("a plan that touches no existing classic queue: changes %v, notes %q, %d requests", p.Changes, stderr.String(), len(asked())-before)
	}
}
