package plan

import (
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/mqctl/mqctl/pkg/flow"
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
	}}, Managed: ManagedOf(Recorded(live))}
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
		v.Exchanges["events"] = x("events", "topic")
		v.Bindings = append(v.Bindings, bind("events", "audit", "event.*"))
		front(v)
		docs(v, "pdf")
		splitters(v)
	})
	desired := vh("v", func(v *topology.Vhost) {
		v.Exchanges["orders"] = x("orders", "topic")
		v.Exchanges["dlx"] = x("dlx", "direct")
		v.Queues["audit"] = q("audit", nil)
		v.Queues["work"] = q("work", topology.Args{"x-dead-letter-exchange": "dlx", "x-dead-letter-routing-key": "wrok"})
		v.Queues["work.dlq"] = q("work.dlq", nil)
		v.Bindings = []*topology.Binding{bind("orders", "audit", "order.created"), bind("orders", "work", "order.paid"), bind("dlx", "work.dlq", "work")}
		// A type change gives the classes of events what tells them
		// apart on each side (flow.Class.Before and After).
		v.Exchanges["events"] = x("events", "fanout")
		v.Bindings = append(v.Bindings, bind("events", "audit", "event.*"))
		// A policy that makes audit expire (flow.Expiring).
		v.Policies["exp"] = &topology.Policy{Name: "exp", Pattern: "^audit$", ApplyTo: "queues", Definition: topology.Args{"expires": int64(60000)}}
		// And one that ties with it (flow.Tie).
		v.Policies["exq"] = &topology.Policy{Name: "exq", Pattern: "^audit$", ApplyTo: "queues", Definition: topology.Args{"max-length": int64(10)}}
		// A fanout exchange bound to orders: classes of keys
		// (flow.Class.Keyed).
		front(v)
		// A headers exchange whose criterion changes: classes of
		// headers (flow.Class.ByHeaders).
		docs(v, "csv")
		// Splits, random (x-local-random) and unsimulated
		// (x-consistent-hash), which read back as they were.
		splitters(v)
		v.Bindings = append(v.Bindings,
			&topology.Binding{Source: "orders", Destination: "rpc", DestinationType: topology.DestExchange, RoutingKey: "order.shipped"},
			&topology.Binding{Source: "orders", Destination: "hash", DestinationType: topology.DestExchange, RoutingKey: "order.refunded"})
	})
	cur := Current{Live: topology.Live{State: live}, Managed: ManagedOf(Recorded(live))}
	p := Diff(desired, cur)
	p.SetFlows(cur, rmqversion.Default)
	if !p.Flows.LosesMessages() || len(p.Flows.Routes) == 0 || len(p.Flows.DeadLetters) == 0 {
		t.Fatalf("the change loses messages through a route and a dead letter: %+v", p.Flows)
	}
	if !slices.ContainsFunc(p.Flows.Routes, func(r flow.Route) bool { return r.Class.Before != nil && r.Class.After != nil }) {
		t.Fatalf("no class of exchange events says what tells it apart on each side: %+v", p.Flows.Routes)
	}
	if !slices.ContainsFunc(p.Flows.Routes, func(r flow.Route) bool { return r.Exchange == "front" && r.Class.Keyed }) {
		t.Fatalf("no class of exchange front is of keys: %+v", p.Flows.Routes)
	}
	if !slices.ContainsFunc(p.Flows.Routes, func(r flow.Route) bool { return r.Exchange == "docs" && r.Class.ByHeaders }) {
		t.Fatalf("no class of exchange docs is of headers: %+v", p.Flows.Routes)
	}
	if len(p.Flows.Ties) != 1 {
		t.Fatalf("policies exp and exq tie over audit: %+v", p.Flows.Ties)
	}
	if len(p.Flows.Expiring) != 1 {
		t.Fatalf("audit expires: %+v", p.Flows.Expiring)
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
	for _, want := range []func(flow.Split) bool{
		func(s flow.Split) bool { return s.Random },
		func(s flow.Split) bool { return s.Unsimulated == "x-consistent-hash" && len(s.Through) == 1 },
	} {
		if !slices.ContainsFunc(p.Flows.Routes, func(r flow.Route) bool { return slices.ContainsFunc(r.AfterSplits, want) }) {
			t.Errorf("the routes lack a split: %+v", p.Flows.Routes)
		}
	}
}

// front declares a fanout exchange bound to exchange orders.
func front(v *topology.Vhost) {
	v.Exchanges["front"] = x("front", "fanout")
	v.Bindings = append(v.Bindings, &topology.Binding{Source: "front", Destination: "orders", DestinationType: topology.DestExchange})
}

// docs declares a headers exchange bound to queue audit for messages
// whose header fmt is format.
func docs(v *topology.Vhost, format string) {
	v.Exchanges["docs"] = x("docs", "headers")
	v.Bindings = append(v.Bindings, &topology.Binding{Source: "docs", Destination: "audit", DestinationType: topology.DestQueue,
		Arguments: topology.Args{"x-match": "any", "fmt": format}})
}

// splitters declares an x-local-random and an x-consistent-hash exchange,
// each with two queues bound.
func splitters(v *topology.Vhost) {
	v.Exchanges["rpc"] = x("rpc", "x-local-random")
	v.Exchanges["hash"] = x("hash", "x-consistent-hash")
	for _, n := range []string{"r1", "r2", "h1", "h2"} {
		v.Queues[n] = q(n, nil)
	}
	v.Bindings = append(v.Bindings, bind("rpc", "r1", ""), bind("rpc", "r2", ""), bind("hash", "h1", "1"), bind("hash", "h2", "1"))
	// And an exchange among hash's destinations (flow.Split.Through).
	v.Exchanges["hashed"] = x("hashed", "fanout")
	v.Queues["h3"] = q("h3", nil)
	v.Bindings = append(v.Bindings, &topology.Binding{Source: "hash", Destination: "hashed", DestinationType: topology.DestExchange, RoutingKey: "1"}, bind("hashed", "h3", ""))
}

// TestFlowsCompareOnlyVhostsWithRoutingChanges: SetFlows compares only the
// vhosts where a kind that routes changes; what it finds is what comparing
// every vhost finds, so skipping the others loses nothing.
func TestFlowsCompareOnlyVhostsWithRoutingChanges(t *testing.T) {
	orders := func(key string) func(v *topology.Vhost) {
		return func(v *topology.Vhost) {
			v.Exchanges["orders"] = x("orders", "topic")
			v.Queues["audit"] = q("audit", nil)
			v.Bindings = []*topology.Binding{bind("orders", "audit", key)}
		}
	}
	live := vh("changed", orders("order.*"))
	live.Vhosts["same"] = vh("same", orders("order.*")).Vhosts["same"]
	live.Vhosts["gone"] = vh("gone", orders("order.*")).Vhosts["gone"]
	desired := vh("changed", orders("order.created"))
	desired.Vhosts["same"] = vh("same", orders("order.*")).Vhosts["same"]
	desired.Vhosts["new"] = vh("new", orders("order.*")).Vhosts["new"]
	cur := Current{Live: topology.Live{State: live}, Managed: ManagedOf(Recorded(live))}
	for _, vhosts := range [][]string{nil, {"changed", "gone", "new", "same"}, {"same"}} {
		p := Diff(desired, cur)
		p.Vhosts = vhosts
		p.SetFlows(cur, rmqversion.Default)
		all := vhosts
		if all == nil {
			all = []string{"changed", "gone", "new", "same"}
		}
		want := flow.Compare(live, p.Project(live), flow.Options{Version: rmqversion.Default, Vhosts: all})
		if d := cmp.Diff(want, p.Flows, cmpopts.EquateEmpty()); d != "" {
			t.Errorf("vhosts %v: flows (-every vhost compared +SetFlows):\n%s", vhosts, d)
		}
		if vhosts != nil {
			continue
		}
		moved := map[string]bool{}
		for _, r := range p.Flows.Routes {
			moved[r.Vhost] = true
		}
		if want := map[string]bool{"changed": true, "gone": true, "new": true}; !cmp.Equal(want, moved) {
			t.Errorf("vhosts whose routes change: %v, want %v", moved, want)
		}
	}
}
