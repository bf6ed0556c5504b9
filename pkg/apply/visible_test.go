package apply

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/mqctl/mqctl/pkg/kind"
	"github.com/mqctl/mqctl/pkg/plan"
	"github.com/mqctl/mqctl/pkg/topology"
)

// visibleState is the state a broker shows once every step of
// visibleSteps is visible.
func visibleState() *topology.Topology {
	t := topology.New()
	v := topology.NewVhost("v")
	v.Exchanges["orders"] = &topology.Exchange{Name: "orders", Type: "topic", Durable: true}
	v.Queues["q3"] = &topology.Queue{Name: "q3", Type: "quorum", Durable: true,
		Arguments: topology.Args{"x-quorum-initial-group-size": int64(3)}}
	v.Queues["kept"] = &topology.Queue{Name: "kept", Type: "classic", Durable: true}
	v.Bindings = []*topology.Binding{{Source: "orders", Destination: "q3", DestinationType: "queue", RoutingKey: "a"}}
	v.Policies["cap"] = &topology.Policy{Name: "cap", Pattern: "^q", ApplyTo: "queues",
		Definition: topology.Args{"max-length": int64(10)}}
	t.Vhosts["v"] = v
	return t
}

// visibleSteps: declare orders and q3 (group size 3), bind, put cap,
// delete queue old and vhost gone; replace queue r (delete then declare).
func visibleSteps() []Step {
	st := visibleState().Vhosts["v"]
	ch := func(a plan.Action, k plan.Kind, name string, after plan.Object) *plan.Change {
		return &plan.Change{Action: a, Kind: k, Vhost: "v", Name: name, After: after}
	}
	b := st.Bindings[0]
	rq := &topology.Queue{Name: "r", Type: "classic", Durable: true, Arguments: topology.Args{"x-max-length": int64(5)}}
	replace := ch(plan.Replace, kind.Queue, "r", plan.Of(rq))
	return []Step{
		{Delete: true, Vhost: "v", Name: "old", Change: ch(plan.Delete, kind.Queue, "old", nil)},
		{Delete: true, Vhost: "v", Name: "r", Change: replace},
		{Delete: true, Vhost: "gone", Name: "gone", Change: &plan.Change{Action: plan.Delete, Kind: kind.Vhost, Vhost: "gone", Name: "gone"}},
		{Vhost: "v", Name: "orders", Change: ch(plan.Create, kind.Exchange, "orders", plan.Of(st.Exchanges["orders"]))},
		{Vhost: "v", Name: "q3", Change: ch(plan.Create, kind.Queue, "q3", plan.Of(st.Queues["q3"]))},
		{Vhost: "v", Name: "r", Change: replace},
		{Vhost: "v", Name: plan.BindingName(b), Binding: b, Change: ch(plan.Create, kind.Binding, plan.BindingName(b), plan.BindingObject{Binding: b})},
		{Vhost: "v", Name: "cap", Change: ch(plan.Create, kind.Policy, "cap", plan.Of(st.Policies["cap"]))},
	}
}

func withR(t *topology.Topology) *topology.Topology {
	t.Vhosts["v"].Queues["r"] = &topology.Queue{Name: "r", Type: "classic", Durable: true, Arguments: topology.Args{"x-max-length": int64(5)}}
	return t
}

func TestPending(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name  string
		state func() *topology.Topology
		want  []string
	}{
		{"everything visible", func() *topology.Topology { return withR(visibleState()) }, nil},
		{"the replaced queue is not back yet", visibleState, []string{`queue "r" in vhost "v"`}},
		{"a deleted queue still listed", func() *topology.Topology {
			s := withR(visibleState())
			s.Vhosts["v"].Queues["old"] = &topology.Queue{Name: "old", Type: "classic", Durable: true}
			return s
		}, []string{`queue "old" in vhost "v" (deleted, still listed)`}},
		{"the replaced queue still has its old arguments", func() *topology.Topology {
			s := withR(visibleState())
			s.Vhosts["v"].Queues["r"].Arguments = nil
			return s
		}, []string{`queue "r" in vhost "v" (arguments.x-max-length not as declared)`}},
		{"the quorum group size read back differs", func() *topology.Topology {
			s := withR(visibleState())
			s.Vhosts["v"].Queues["q3"].Arguments = topology.Args{"x-quorum-initial-group-size": int64(2)}
			return s
		}, []string{`queue "q3" in vhost "v" (arguments.x-quorum-initial-group-size not as declared)`}},
		{"binding and policy missing", func() *topology.Topology {
			s := withR(visibleState())
			s.Vhosts["v"].Bindings = nil
			delete(s.Vhosts["v"].Policies, "cap")
			return s
		}, []string{`binding "orders -> queue q3 [a]" in vhost "v"`, `policy "cap" in vhost "v"`}},
		{"the policy shows its old definition", func() *topology.Topology {
			s := withR(visibleState())
			s.Vhosts["v"].Policies["cap"].Definition = topology.Args{"max-length": int64(9)}
			return s
		}, []string{`policy "cap" in vhost "v" (definition.max-length not as declared)`}},
		{"a deleted vhost still listed", func() *topology.Topology {
			s := withR(visibleState())
			s.Vhosts["gone"] = topology.NewVhost("gone")
			return s
		}, []string{`vhost "gone" (deleted, still listed)`}},
		{"the vhost is not there at all", topology.New, []string{`vhost "v"`}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := Pending(visibleSteps(), tc.state())
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("Pending (-want +got):\n%s", diff)
			}
		})
	}
}

func TestPendingUnbindThenRestore(t *testing.T) {
	t.Parallel()
	b := &topology.Binding{Source: "orders", Destination: "q3", DestinationType: "queue", RoutingKey: "a"}
	c := &plan.Change{Action: plan.Replace, Kind: kind.Queue, Vhost: "v", Name: "q3"}
	steps := []Step{
		{Delete: true, Vhost: "v", Name: plan.BindingName(b), Binding: b, Change: &plan.Change{Action: plan.Delete, Kind: kind.Binding, Vhost: "v", Name: plan.BindingName(b)}},
		{Vhost: "v", Name: plan.BindingName(b), Binding: b, Change: c, Restore: true},
	}
	s := visibleState()
	if got := Pending(steps, s); len(got) != 0 {
		t.Errorf("a binding taken down and restored is visible, got pending %v", got)
	}
	s.Vhosts["v"].Bindings = nil
	if got := Pending(steps, s); !slices.Equal(got, []string{`binding "orders -> queue q3 [a]" in vhost "v"`}) {
		t.Errorf("a restored binding that is missing: got pending %v", got)
	}
}

func TestWaitVisible(t *testing.T) {
	t.Parallel()
	states := []*topology.Topology{visibleState(), visibleState(), withR(visibleState())}
	reads := 0
	var told []string
	err := WaitVisible(context.Background(), func(context.Context) (*topology.Topology, error) {
		s := states[min(reads, len(states)-1)]
		reads++
		return s, nil
	}, visibleSteps(), WaitOptions{Interval: time.Millisecond, Waiting: func(p []string) { told = p }})
	if err != nil {
		t.Fatalf("WaitVisible: %v", err)
	}
	if reads != 3 {
		t.Errorf("read %d times, want 3 (until the replaced queue shows)", reads)
	}
	if !slices.Equal(told, []string{`queue "r" in vhost "v"`}) {
		t.Errorf("Waiting told %v", told)
	}

	err = WaitVisible(context.Background(), func(context.Context) (*topology.Topology, error) { return visibleState(), nil },
		visibleSteps(), WaitOptions{Timeout: 20 * time.Millisecond, Interval: time.Millisecond})
	if !errors.Is(err, ErrNotVisible) {
		t.Fatalf("WaitVisible on a state that never shows the queue: %v, want ErrNotVisible", err)
	}
	if want := `still does not show queue "r" in vhost "v"`; !strings.Contains(err.Error(), want) {
		t.Errorf("error %q does not say %q", err, want)
	}

	boom := errors.New("boom")
	err = WaitVisible(context.Background(), func(context.Context) (*topology.Topology, error) { return nil, boom }, visibleSteps(), WaitOptions{})
	if !errors.Is(err, boom) {
		t.Errorf("a failed read: %v, want it wrapped", err)
	}
}
