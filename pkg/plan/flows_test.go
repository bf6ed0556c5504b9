package plan

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/mqctl/mqctl/pkg/kind"
	"github.com/mqctl/mqctl/pkg/rmqversion"
	"github.com/mqctl/mqctl/pkg/topology"
)

// TestFlowsOfAVhostNotReadAreUnknown: where mqctl could not read what
// routes messages (the bindings, or the vhost itself), the plan says its
// flows are unknown instead of reporting none.
func TestFlowsOfAVhostNotReadAreUnknown(t *testing.T) {
	live := vh("seen", func(v *topology.Vhost) { v.Queues["q"] = q("q", nil) })
	desired := vh("seen", func(v *topology.Vhost) {
		v.Exchanges["x"] = x("x", "direct")
		v.Queues["q"] = q("q", nil)
		v.Bindings = []*topology.Binding{bind("x", "q", "k")}
	})
	desired.Vhost("hidden").Queues["h"] = q("h", nil)
	desired.Vhost("nobindings").Queues["n"] = q("n", nil)
	cur := Current{Live: topology.Live{State: live, Unread: map[string][]Unread{
		"nobindings": {{Vhost: "nobindings", Kind: kind.Binding, Reason: "no permission"}},
		"seen":       {{Vhost: "seen", Kind: kind.VhostLimits, Reason: "not a kind that routes messages"}},
	}}, Managed: Recorded(live)}
	p := Diff(desired, cur)
	p.Unread = append(p.Unread, Unread{Vhost: "hidden", Kind: kind.Vhost, Reason: "not shown"}) // as the engine adds it
	p.Vhosts = []string{"hidden", "nobindings", "seen"}
	p.SetFlows(cur, rmqversion.Default)
	want := []FlowUnknown{
		{Vhost: "hidden", Reason: "mqctl could not read the vhost: not shown"},
		{Vhost: "nobindings", Reason: "mqctl could not read bindings there: no permission"},
	}
	if d := cmp.Diff(want, p.FlowsUnknown); d != "" {
		t.Errorf("unknown flows (-want +got):\n%s", d)
	}
	if p.Flows == nil || len(p.Flows.Routes) == 0 || p.Flows.Routes[0].Vhost != "seen" {
		t.Fatalf("the vhost read has its flows: %+v", p.Flows)
	}
	for _, r := range p.Flows.Routes {
		if r.Vhost != "seen" {
			t.Errorf("a route in a vhost whose flows are unknown: %+v", r)
		}
	}
}

// TestFlowsSurviveTheJSONPlanAndTheSavedPlan: what a plan does to messages
// reads back the same from the JSON plan and from the saved plan.
func TestFlowsSurviveTheJSONPlanAndTheSavedPlan(t *testing.T) {
	live := vh("v", func(v *topology.Vhost) {
		v.Exchanges["orders"] = x("orders", "topic")
		v.Exchanges["dlx"] = x("dlx", "direct")
		v.Queues["audit"] = q("audit", nil)
		v.Queues["work"] = q("work", topology.Args{"x-dead-letter-exchange": "dlx", "x-dead-letter-routing-key": "work"})
		v.Queues["work.dlq"] = q("work.dlq", nil)
		v.Bindings = []*topology.Binding{bind("orders", "audit", "order.*"), bind("orders", "work", "order.paid"), bind("dlx", "work.dlq", "work")}
	})
	desired := vh("v", func(v *topology.Vhost) {
		v.Exchanges["orders"] = x("orders", "topic")
		v.Exchanges["dlx"] = x("dlx", "direct")
		v.Queues["audit"] = q("audit", nil)
		v.Queues["work"] = q("work", topology.Args{"x-dead-letter-exchange": "dlx", "x-dead-letter-routing-key": "wrok"})
		v.Queues["work.dlq"] = q("work.dlq", nil)
		v.Bindings = []*topology.Binding{bind("orders", "audit", "order.created"), bind("orders", "work", "order.paid"), bind("dlx", "work.dlq", "work")}
	})
	cur := Current{Live: topology.Live{State: live}, Managed: Recorded(live)}
	p := Diff(desired, cur)
	p.SetFlows(cur, rmqversion.Default)
	if !p.Flows.LosesMessages() || len(p.Flows.Routes) == 0 || len(p.Flows.DeadLetters) == 0 {
		t.Fatalf("the change loses messages through a route and a dead letter: %+v", p.Flows)
	}
	var js strings.Builder
	if err := WriteJSON(&js, p); err != nil {
		t.Fatal(err)
	}
	fromJSON, err := ReadJSON(strings.NewReader(js.String()))
	if err != nil {
		t.Fatal(err)
	}
	var saved strings.Builder
	if err := WriteSaved(&saved, p); err != nil {
		t.Fatal(err)
	}
	fromSaved, err := ReadSaved(strings.NewReader(saved.String()), "plan.json")
	if err != nil {
		t.Fatal(err)
	}
	for name, got := range map[string]*Plan{"the JSON plan": fromJSON, "the saved plan": fromSaved} {
		if d := cmp.Diff(p.Flows, got.Flows, cmpopts.EquateEmpty()); d != "" {
			t.Errorf("flows read back from %s (-made +read):\n%s", name, d)
		}
	}
}
