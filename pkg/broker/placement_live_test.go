package broker_test

import (
	"encoding/json"
	"net/url"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/mqctl/mqctl/internal/testbroker"
	"github.com/mqctl/mqctl/pkg/broker"
	"github.com/mqctl/mqctl/pkg/topology"
)

// TestQueuePlacementsAgainstBroker: QueuePlacements reads where each
// queue lives as the listing with statistics reports it, on both versions,
// and leaves the statistics out where the broker still reports placements
// without them. The two versions answer a listing with disable_stats=true
// differently: 4.0.5 gives the same placement columns as with statistics;
// 3.10.8 leaves out a quorum queue's node and a stream's members and
// online members, and says "live" for every queue where the listing with
// statistics says "running".
func TestQueuePlacementsAgainstBroker(t *testing.T) {
	t.Parallel()
	b := testbroker.New(t)
	vh := b.Vhost(t)
	c := connect(t, b)
	for _, q := range []*topology.Queue{
		{Name: "classic", Type: topology.QueueClassic, Durable: true},
		{Name: "quorum", Type: topology.QueueQuorum, Durable: true},
		{Name: "stream", Type: topology.QueueStream, Durable: true},
	} {
		if err := c.DeclareQueue(t.Context(), vh, q); err != nil {
			t.Fatal(err)
		}
	}
	type placement struct {
		Name    string   `json:"name"`
		Type    string   `json:"type"`
		Node    string   `json:"node"`
		State   string   `json:"state"`
		Leader  string   `json:"leader"`
		Members []string `json:"members"`
		Online  []string `json:"online"`
	}
	get := func(path string, q url.Values, out any) {
		t.Helper()
		if err := json.Unmarshal(b.GetAPI(t, path+"?"+q.Encode()), out); err != nil {
			t.Fatal(err)
		}
	}
	list := func(withStats bool) map[string]placement {
		t.Helper()
		q := url.Values{"columns": {"name,type,node,state,leader,members,online"}}
		if !withStats {
			q.Set("disable_stats", "true")
		}
		var l []placement
		get("queues/"+url.PathEscape(vh), q, &l)
		out := map[string]placement{}
		for _, p := range l {
			out[p.Name] = p
		}
		return out
	}
	var overview struct {
		Node string `json:"node"`
	}
	get("overview", url.Values{"columns": {"node"}}, &overview)
	node := overview.Node
	one := []string{node}
	withStats := map[string]placement{
		"classic": {Name: "classic", Type: "classic", Node: node, State: "running"},
		"quorum":  {Name: "quorum", Type: "quorum", Node: node, State: "running", Leader: node, Members: one, Online: one},
		"stream":  {Name: "stream", Type: "stream", Node: node, State: "running", Members: one, Online: one},
	}
	// The statistics come a few seconds after the declarations.
	deadline := time.Now().Add(20 * time.Second)
	for {
		got := list(true)
		if s := got["stream"]; s.Leader != "" {
			// 4.0 names the stream's writer as its leader; 3.10 does not.
			w := withStats["stream"]
			w.Leader = s.Leader
			withStats["stream"] = w
		}
		diff := cmp.Diff(withStats, got)
		if diff == "" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("RabbitMQ %s, listing with statistics (-want +got):\n%s", b.Version(), diff)
		}
		time.Sleep(300 * time.Millisecond)
	}
	without := withStats
	if !b.Version().PlacementsWithoutStats() {
		without = map[string]placement{
			"classic": {Name: "classic", Type: "classic", Node: node, State: "live"},
			"quorum":  {Name: "quorum", Type: "quorum", State: "live", Leader: node, Members: one, Online: one},
			"stream":  {Name: "stream", Type: "stream", Node: node, State: "live"},
		}
	}
	if diff := cmp.Diff(without, list(false)); diff != "" {
		t.Errorf("RabbitMQ %s, listing with disable_stats=true (-want +got):\n%s", b.Version(), diff)
	}
	got, err := c.QueuePlacements(t.Context(), vh, nil)
	if err != nil {
		t.Fatal(err)
	}
	for name, w := range withStats {
		p := got[name]
		want := broker.Placement{Name: name, Type: w.Type, State: w.State, Node: w.Node, Leader: w.Leader, Members: w.Members, Online: w.Online}
		// Listed with statistics (before 4.0), the placement carries the
		// queue's depth and consumers too (none here; they may not be
		// reported yet); without them, none.
		if st := p.Stats; b.Version().PlacementsWithoutStats() != (st == nil) || (st != nil && (st.Messages != 0 || st.Consumers != 0)) {
			t.Errorf("RabbitMQ %s, QueuePlacements[%s].Stats = %+v", b.Version(), name, st)
		}
		if p.Depth != nil {
			t.Errorf("RabbitMQ %s, QueuePlacements[%s].Depth = %+v without asking for it", b.Version(), name, p.Depth)
		}
		p.Stats = nil
		if diff := cmp.Diff(want, p); diff != "" {
			t.Errorf("RabbitMQ %s, QueuePlacements[%s] (-want +got):\n%s", b.Version(), name, diff)
		}
		if p.Down || p.NoMajority() {
			t.Errorf("RabbitMQ %s: queue %s, on a running single node, is down (%v) or without a majority (%v)", b.Version(), name, p.Down, p.NoMajority())
		}
	}
	// Asked for the depths: 4.0 and later list them from the queue totals
	// (Depth, no consumers counted) with the same placements; 3.10, which
	// lists with statistics anyway, gives Stats as before. Three messages
	// in the classic queue show as a depth of 3 once the broker has
	// counted them.
	ch := b.Channel(t, vh)
	for range 3 {
		if err := ch.Publish("", "classic", false, false, amqp.Publishing{Body: []byte("m")}); err != nil {
			t.Fatal(err)
		}
	}
	for deadline := time.Now().Add(20 * time.Second); ; {
		got, err = c.QueuePlacements(t.Context(), vh, []string{"classic", "quorum", "stream"})
		if err != nil {
			t.Fatal(err)
		}
		p := got["classic"]
		st := p.Depth
		if !b.Version().PlacementsWithoutStats() {
			st = p.Stats
		}
		if st != nil && st.Known && st.Messages == 3 {
			if b.Version().PlacementsWithoutStats() && (p.Stats != nil || st.Consumers != 0) {
				t.Errorf("RabbitMQ %s: the totals listing gave %+v, statistics %+v", b.Version(), st, p.Stats)
			}
			p.Stats, p.Depth = nil, nil
			if w := withStats["classic"]; !cmp.Equal(p, broker.Placement{Name: "classic", Type: w.Type, State: w.State, Node: w.Node}) {
				t.Errorf("RabbitMQ %s: the placement with the depth is %+v", b.Version(), p)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("RabbitMQ %s: the depth of classic (3 messages) is listed as %+v (Stats %+v)", b.Version(), p.Depth, p.Stats)
		}
		time.Sleep(300 * time.Millisecond)
	}
}
