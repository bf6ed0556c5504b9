package engine

import (
	"bytes"
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/mqctl/mqctl/pkg/broker"
	"github.com/mqctl/mqctl/pkg/kind"
	"github.com/mqctl/mqctl/pkg/plan"
	"github.com/mqctl/mqctl/pkg/topology"
)

// TestOwnedQueueFromPlacements: a state read from the definitions export
// (RabbitMQ 4.3) tells no queue's internal_owner; the placement of each
// queue the plan deletes or replaces does, and a queue a plugin owns is
// left alone with keepProtected's note, as when the lists told it. No
// plugin of the project's brokers owns queues: the answers are 4.3.6's
// shape (GET /api/queues/{vhost}/{name}, internal_owner false or an
// object naming the owner).
func TestOwnedQueueFromPlacements(t *testing.T) {
	t.Parallel()
	queues := map[string]string{
		"owned": `{"name":"owned","type":"classic","node":"rabbit@a","state":"running","internal_owner":{"name":"sh","kind":"shovel","virtual_host":"v"}}`,
		"plain": `{"name":"plain","type":"classic","node":"rabbit@a","state":"running","internal_owner":false}`,
	}
	c := fakeAPI(t, "4.3.6", "rabbit@a", func(w http.ResponseWriter, r *http.Request) bool {
		q, isQueue := strings.CutPrefix(r.URL.Path, "/api/queues/v/")
		if !isQueue || queues[q] == "" {
			return false
		}
		_, _ = w.Write([]byte(queues[q]))
		return true
	})
	state := topology.New()
	v := topology.NewVhost("v")
	for _, n := range []string{"owned", "plain"} {
		v.Queues[n] = &topology.Queue{Name: n, Type: topology.QueueClassic, Durable: true}
	}
	state.Vhosts["v"] = v
	l := &Live{current: plan.Current{Live: topology.Live{State: state, Source: broker.SourceDefinitions, Owned: map[string]map[string]string{}}}}
	p := &plan.Plan{Changes: []plan.Change{
		{Action: plan.Delete, Kind: kind.Queue, Vhost: "v", Name: "owned"},
		{Action: plan.Replace, Kind: kind.Queue, Vhost: "v", Name: "plain"},
	}}
	var stderr bytes.Buffer
	if _, err := notesTo(c, &stderr).holdBackDownQueues(context.Background(), p, l); err != nil {
		t.Fatal(err)
	}
	var kept []string
	for _, ch := range p.Changes {
		kept = append(kept, string(ch.Action)+" "+string(ch.Kind)+" "+ch.Name)
	}
	if diff := cmp.Diff([]string{"replace queue plain"}, kept); diff != "" {
		t.Errorf("changes kept (-want +got):\n%s", diff)
	}
	if want := map[string]map[string]string{"v": {"owned": `shovel "sh"`}}; !cmp.Equal(want, l.current.Owned) {
		t.Errorf("owners recorded: %v, want %v", l.current.Owned, want)
	}
	if note := stderr.String(); strings.Count(note, "\n") != 1 || !strings.Contains(note, `queue "owned" in vhost "v" is left alone: the broker reports it owned by shovel "sh" (internal_owner)`) {
		t.Errorf("notes:\n%s", note)
	}
	// The plan itself holds the decision (JSON and saved plans carry it).
	if len(p.Held) != 1 || p.Held[0].Name != "owned" || p.Held[0].Action != plan.Delete || p.Held[0].Cause != plan.HeldInternalOwner ||
		!strings.Contains(p.Held[0].Reason, `owned by shovel "sh" (internal_owner)`) {
		t.Errorf("held back: %+v, want the delete of queue owned, for its internal owner", p.Held)
	}
}
