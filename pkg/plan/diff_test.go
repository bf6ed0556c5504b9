package plan

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/mqctl/mqctl/pkg/kind"
	"github.com/mqctl/mqctl/pkg/topology"
)

func vh(name string, fill func(v *topology.Vhost)) *topology.Topology {
	t := topology.New()
	v := t.Vhost(name)
	if fill != nil {
		fill(v)
	}
	return t
}

func q(name string, args topology.Args) *topology.Queue {
	return &topology.Queue{Name: name, Type: topology.QueueClassic, Durable: true, Arguments: args}
}

func x(name, typ string) *topology.Exchange {
	return &topology.Exchange{Name: name, Type: typ, Durable: true}
}

func bind(src, dst, key string) *topology.Binding {
	return &topology.Binding{Source: src, Destination: dst, DestinationType: topology.DestQueue, RoutingKey: key}
}

type row struct {
	Action Action
	Kind   Kind
	Name   string
}

func rows(p *Plan) []row {
	out := []row{}
	for _, c := range p.Changes {
		out = append(out, row{c.Action, c.Kind, c.Name})
	}
	return out
}

func TestDiff(t *testing.T) {
	tests := []struct {
		name      string
		desired   *topology.Topology
		current   *topology.Topology
		managed   bool
		want      []row
		unmanaged int
	}{
		{
			name: "empty broker: everything is created, vhost first",
			desired: vh("/", func(v *topology.Vhost) {
				v.Exchanges["e"] = x("e", "direct")
				v.Queues["a"] = q("a", nil)
				v.Bindings = []*topology.Binding{bind("e", "a", "k")}
			}),
			current: topology.New(),
			want:    []row{{Create, kind.Vhost, "/"}, {Create, kind.Exchange, "e"}, {Create, kind.Queue, "a"}, {Create, kind.Binding, "e -> queue a [k]"}},
		},
		{
			name:    "JSON float64 read back equals YAML int: no change",
			desired: vh("/", func(v *topology.Vhost) { v.Queues["a"] = q("a", topology.Args{"x-message-ttl": int64(60000)}) }),
			current: vh("/", func(v *topology.Vhost) { v.Queues["a"] = q("a", topology.Args{"x-message-ttl": float64(60000)}) }),
			want:    []row{},
		},
		{
			name:    "x-queue-type absent equals classic",
			desired: vh("/", func(v *topology.Vhost) { v.Queues["a"] = q("a", nil) }),
			current: vh("/", func(v *topology.Vhost) {
				qq := q("a", topology.Args{"x-queue-type": "classic"})
				qq.Type = ""
				v.Queues["a"] = qq
			}),
			want: []row{},
		},
		{
			name:    "changed queue argument forces replace",
			desired: vh("/", func(v *topology.Vhost) { v.Queues["a"] = q("a", topology.Args{"x-max-priority": int64(10)}) }),
			current: vh("/", func(v *topology.Vhost) { v.Queues["a"] = q("a", topology.Args{"x-max-priority": int64(5)}) }),
			want:    []row{{Replace, kind.Queue, "a"}},
		},
		{
			name: "policy definition changes in place",
			desired: vh("/", func(v *topology.Vhost) {
				v.Policies["p"] = &topology.Policy{Name: "p", Pattern: "^a", ApplyTo: "queues", Definition: topology.Args{"max-length": int64(10)}}
			}),
			current: vh("/", func(v *topology.Vhost) {
				v.Policies["p"] = &topology.Policy{Name: "p", Pattern: "^a", ApplyTo: "queues", Definition: topology.Args{"max-length": int64(20)}}
			}),
			want: []row{{Update, kind.Policy, "p"}},
		},
		{
			name:      "objects the file does not name and mqctl does not manage are left alone",
			desired:   vh("/", nil),
			current:   vh("/", func(v *topology.Vhost) { v.Queues["theirs"] = q("theirs", nil); v.Exchanges["ex"] = x("ex", "topic") }),
			want:      []row{},
			unmanaged: 2,
		},
		{
			name:    "managed objects dropped from the file are deleted",
			desired: vh("/", nil),
			current: vh("/", func(v *topology.Vhost) {
				v.Queues["a"] = q("a", nil)
				v.Exchanges["e"] = x("e", "direct")
				v.Bindings = []*topology.Binding{bind("e", "a", "k")}
			}),
			managed: true,
			want:    []row{{Delete, kind.Exchange, "e"}, {Delete, kind.Queue, "a"}, {Delete, kind.Binding, "e -> queue a [k]"}},
		},
		{
			name:    "a managed vhost dropped from the file is deleted with its objects",
			desired: topology.New(),
			current: vh("gone", func(v *topology.Vhost) { v.Queues["a"] = q("a", nil) }),
			managed: true,
			want:    []row{{Delete, kind.Queue, "a"}, {Delete, kind.Vhost, "gone"}},
		},
		{
			name: "binding arguments are part of the identity",
			desired: vh("/", func(v *topology.Vhost) {
				b := bind("h", "a", "")
				b.Arguments = topology.Args{"x-match": "all", "k": "v2"}
				v.Bindings = []*topology.Binding{b}
			}),
			current: vh("/", func(v *topology.Vhost) {
				b := bind("h", "a", "")
				b.Arguments = topology.Args{"x-match": "all", "k": "v1"}
				v.Bindings = []*topology.Binding{b}
			}),
			managed: true,
			want:    []row{{Delete, kind.Binding, `h -> queue a [] {"k":"v1","x-match":"all"}`}, {Create, kind.Binding, `h -> queue a [] {"k":"v2","x-match":"all"}`}},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cur := Current{Live: topology.Live{State: tc.current}}
			if tc.managed {
				cur.Managed = ManagedOf(Recorded(tc.current))
			}
			p := Diff(tc.desired, cur)
			if diff := cmp.Diff(tc.want, rows(p)); diff != "" {
				t.Errorf("changes (-want +got):\n%s", diff)
			}
			if len(p.Unmanaged) != tc.unmanaged {
				t.Errorf("unmanaged = %v, want %d", p.Unmanaged, tc.unmanaged)
			}
			// The plan against the desired state itself is always empty.
			again := Diff(tc.desired, Current{Live: topology.Live{State: tc.desired}, Managed: ManagedOf(Recorded(tc.desired))})
			if !again.Empty() || again.Records() {
				t.Errorf("second plan not empty: %v, record: prints %v, stale %v, changed outside %v", rows(again), again.Prints, again.Stale, again.ChangedOutside)
			}
		})
	}
}

func TestReplaceCarriesBindingsAndStakes(t *testing.T) {
	desired := vh("/", func(v *topology.Vhost) {
		v.Exchanges["e"] = x("e", "direct")
		v.Queues["a"] = q("a", topology.Args{"x-max-priority": int64(10)})
		v.Bindings = []*topology.Binding{bind("e", "a", "k")}
	})
	current := vh("/", func(v *topology.Vhost) {
		v.Exchanges["e"] = x("e", "direct")
		v.Queues["a"] = q("a", nil)
		v.Bindings = []*topology.Binding{bind("e", "a", "k"), bind("other", "a", "theirs")}
	})
	p := Diff(desired, Current{Live: topology.Live{State: current, Queues: map[string]map[string]QueueStats{"/": {"a": {Messages: 7, Consumers: 1}}}}})
	if len(p.Changes) != 1 || p.Changes[0].Action != Replace {
		t.Fatalf("want one replace, got %v", rows(p))
	}
	c := p.Changes[0]
	if c.Messages != 7 || c.Consumers != 1 {
		t.Errorf("at stake = %d messages %d consumers, want 7 and 1", c.Messages, c.Consumers)
	}
	if len(c.Bindings) != 2 {
		t.Errorf("replace must restore both bindings (ours and the unmanaged one), got %v", c.Bindings)
	}
	if !strings.Contains(c.Reason, "arguments.x-max-priority") || !strings.Contains(c.Reason, "new queue name") {
		t.Errorf("reason should name the field and the way out: %q", c.Reason)
	}
	if c.Fields[0].Before != nil || c.Fields[0].After != int64(10) || !c.Fields[0].Forces {
		t.Errorf("field change = %+v", c.Fields[0])
	}
}

// A delete lists the unmanaged bindings the broker drops with the object;
// the managed ones are deletes of their own.
func TestDeleteListsBindingsItTakesDown(t *testing.T) {
	current := vh("/", func(v *topology.Vhost) {
		v.Exchanges["e"] = x("e", "direct")
		v.Queues["a"] = q("a", nil)
		v.Bindings = []*topology.Binding{bind("e", "a", "ours"), bind("e", "a", "theirs")}
	})
	managed := map[ObjectRef]bool{
		{kind.Exchange, "/", "e"}: true, {kind.Queue, "/", "a"}: true,
		BindingRef("/", bind("e", "a", "ours")): true,
	}
	p := Diff(vh("/", func(v *topology.Vhost) { v.Exchanges["e"] = x("e", "direct") }), Current{Live: topology.Live{State: current}, Managed: ManagedOf(RecordedOf(current, managed))})
	want := []row{{Delete, kind.Queue, "a"}, {Delete, kind.Binding, "e -> queue a [ours]"}}
	if diff := cmp.Diff(want, rows(p)); diff != "" {
		t.Fatalf("changes (-want +got):\n%s", diff)
	}
	if got := p.Changes[0].Bindings; len(got) != 1 || got[0].RoutingKey != "theirs" {
		t.Errorf("the delete of a lists bindings %v, want just the unmanaged e -> a [theirs]", got)
	}
	var sb strings.Builder
	if err := WriteText(&sb, p, RenderOptions{}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(sb.String(), "also deletes 1 binding:\n        e -> queue a [theirs]") {
		t.Errorf("the plan does not show the binding going with the queue:\n%s", sb.String())
	}
}

// TestOldSideLeavesDroppedVhosts: the old side of mqctl diff is read as
// plan reads a broker, for the new side's vhosts only: a vhost the new
// side drops altogether is left alone (no delete, no flow, nothing
// unmanaged), as plan leaves it, while the vhosts both name are diffed
// as before; the old topology itself is not changed.
func TestOldSideLeavesDroppedVhosts(t *testing.T) {
	old := vh("a", func(v *topology.Vhost) {
		v.Exchanges["ex"] = x("ex", "fanout")
		v.Queues["qa"] = q("qa", nil)
		v.Bindings = append(v.Bindings, bind("ex", "qa", ""))
	})
	old.Vhosts["b"] = vh("b", func(v *topology.Vhost) { v.Queues["qb"] = q("qb", nil) }).Vhosts["b"]
	old.Vhosts["/"] = vh("/", func(v *topology.Vhost) { v.Exchanges["e"] = x("e", "direct") }).Vhosts["/"]
	desired := vh("b", func(v *topology.Vhost) {
		v.Queues["qb"] = q("qb", nil)
		v.Queues["qc"] = q("qc", nil)
	})

	cur := OldSide(old, desired)
	p := DiffWith(desired, cur, Options{})
	p.SetFlows(cur, Options{}.Version)
	if diff := cmp.Diff([]row{{Create, kind.Queue, "qc"}}, rows(p)); diff != "" {
		t.Errorf("changes (-want +got):\n%s", diff)
	}
	if len(p.Unmanaged) > 0 || len(p.Stale) > 0 || len(p.ChangedOutside) > 0 {
		t.Errorf("the dropped vhosts are named: unmanaged %v, stale %v, changed outside %v", p.Unmanaged, p.Stale, p.ChangedOutside)
	}
	if p.Flows.LosesMessages() {
		t.Errorf("the flows lose messages in a vhost left alone: %s", p.Flows.Summary())
	}
	if len(old.Vhosts) != 3 {
		t.Errorf("the old topology was changed: %d vhosts, want 3", len(old.Vhosts))
	}
}
