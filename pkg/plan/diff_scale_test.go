package plan

import (
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/mqctl/mqctl/pkg/kind"
	"github.com/mqctl/mqctl/pkg/topology"
)

// pairs is the benchmark topology (internal/gentopo) of n working queues in
// vhost: each with a DLQ, a binding on the topic exchange events and one
// behind events.dlx — 2n queues, 2n bindings and 2 exchanges.
func pairs(vhost string, n int, maxLength int64, dlxType string) *topology.Topology {
	return vh(vhost, func(v *topology.Vhost) {
		v.Exchanges["events"] = x("events", "topic")
		v.Exchanges["events.dlx"] = x("events.dlx", dlxType)
		for i := range n {
			name := fmt.Sprintf("svc%03d.q%05d", i%100, i)
			v.Queues[name] = q(name, topology.Args{"x-max-length": maxLength, "x-overflow": "reject-publish",
				"x-dead-letter-exchange": "events.dlx", "x-dead-letter-routing-key": name})
			v.Queues[name+".dlq"] = q(name+".dlq", topology.Args{"x-max-length": maxLength})
			v.Bindings = append(v.Bindings, bind("events", name, fmt.Sprintf("svc%03d.event%d.#", i%100, i)), bind("events.dlx", name+".dlq", name))
		}
	})
}

// managedAll is the ownership record of everything in cur.
func managedAll(cur *topology.Topology) map[ObjectRef]bool {
	m := map[ObjectRef]bool{}
	for _, v := range cur.Vhosts {
		m[ObjectRef{kind.Vhost, v.Name, v.Name}] = true
		for n := range v.Exchanges {
			m[ObjectRef{kind.Exchange, v.Name, n}] = true
		}
		for n := range v.Queues {
			m[ObjectRef{kind.Queue, v.Name, n}] = true
		}
		for _, b := range v.Bindings {
			m[BindingRef(v.Name, b)] = true
		}
		for n := range v.Policies {
			m[ObjectRef{kind.Policy, v.Name, n}] = true
		}
	}
	return m
}

// visits diffs desired against cur and returns the plan and the steps the
// bindings taken down by replaces and deletes cost.
func visits(desired *topology.Topology, cur Current) (*Plan, int) {
	d := diffWith(desired, cur, Options{})
	return d.p, d.visits
}

// The diff of a teardown (every object of the file dropped, the vhost kept)
// and of a replace of everything is linear: 4× the objects, at most 4× the
// work (the former comparison of every deleted object with every binding
// made it 16×). Counted in steps, never timed.
func TestDiffScalesLinearly(t *testing.T) {
	const n = 250
	for _, tc := range []struct {
		name    string
		desired func(n int) *topology.Topology
		action  Action
	}{
		{"teardown", func(int) *topology.Topology { return vh("bench", nil) }, Delete},
		{"replace everything", func(n int) *topology.Topology { return pairs("bench", n, 20000, "fanout") }, Replace},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var steps [2]int
			for i, size := range []int{n, 4 * n} {
				cur := pairs("bench", size, 10000, "direct")
				p, v := visits(tc.desired(size), Current{Live: topology.Live{State: cur}, Managed: ManagedOf(RecordedOf(cur, managedAll(cur)))})
				want := 4*size + 2 // every exchange, queue and binding deleted
				if tc.action == Replace {
					want = 2*size + 1 // every queue and events.dlx; the bindings are restored
				}
				if got := p.Summary(); got.Delete+got.Replace != want {
					t.Fatalf("%d pairs: %+v, want %d changes", size, got, want)
				}
				steps[i] = v
			}
			if steps[0] == 0 || steps[1] > 4*steps[0]+8 {
				t.Errorf("work grows from %d steps (%d pairs) to %d (%d pairs): more than 4×, not linear", steps[0], n, steps[1], 4*n)
			}
		})
	}
}

// oldTakenDown is the diff's former way of listing the bindings a replace
// or delete takes down (every change against every binding): the plans of
// the indexed diff must be identical to it.
func oldTakenDown(p *Plan, cur *topology.Topology) {
	for i := range p.Changes {
		p.Changes[i].Bindings = nil
	}
	for name, have := range cur.Vhosts {
		deleted := map[string]bool{}
		gone := map[ObjectRef]bool{}
		for _, c := range p.Changes {
			if c.Vhost != name || c.Action != Delete {
				continue
			}
			switch c.Kind {
			case kind.Binding:
				deleted[c.Before.(BindingObject).Key()] = true
			case kind.Exchange, kind.Queue:
				gone[ObjectRef{Kind: c.Kind, Vhost: name, Name: c.Name}] = true
			}
		}
		endGone := func(b *topology.Binding) bool {
			destKind := kind.Queue
			if b.DestinationType == topology.DestExchange {
				destKind = kind.Exchange
			}
			return gone[ObjectRef{Kind: kind.Exchange, Vhost: name, Name: b.Source}] || gone[ObjectRef{Kind: destKind, Vhost: name, Name: b.Destination}]
		}
		for i := range p.Changes {
			c := &p.Changes[i]
			if c.Vhost != name || (c.Action != Replace && c.Action != Delete) || (c.Kind != kind.Queue && c.Kind != kind.Exchange) {
				continue
			}
			for _, b := range have.Bindings {
				if deleted[b.Key()] || !touches(b, c.Kind, c.Name) || (c.Action == Replace && endGone(b)) {
					continue
				}
				c.Bindings = append(c.Bindings, b)
			}
		}
	}
}

func TestTakenDownUnchanged(t *testing.T) {
	xb := func(src, dst, key string) *topology.Binding {
		return &topology.Binding{Source: src, Destination: dst, DestinationType: topology.DestExchange, RoutingKey: key}
	}
	withArgs := func(b *topology.Binding, a topology.Args) *topology.Binding { b.Arguments = a; return b }
	// mesh: exchanges and queues bound every which way, an exchange bound
	// to itself, exchange-to-exchange bindings, bindings that differ only
	// by arguments, and bindings from an exchange not declared.
	mesh := func(vhost string, qArgs topology.Args, eType string) *topology.Topology {
		return vh(vhost, func(v *topology.Vhost) {
			for _, e := range []string{"a", "b", "c"} {
				v.Exchanges[e] = x(e, "direct")
			}
			v.Exchanges["t"] = x("t", eType)
			for _, n := range []string{"q1", "q2", "q3"} {
				v.Queues[n] = q(n, qArgs)
			}
			v.Bindings = []*topology.Binding{
				bind("a", "q1", "k"), bind("b", "q1", "k"), xb("a", "b", "x"), xb("b", "a", "y"), xb("t", "t", "self"),
				bind("t", "q2", "k"), withArgs(bind("t", "q2", "k"), topology.Args{"x-match": "all"}), xb("a", "t", "z"),
				bind("c", "q3", "k"), bind("other", "q3", "theirs"), xb("other", "c", "in"), bind("t", "q1", "z"),
			}
		})
	}
	partly := func(cur *topology.Topology, keep func(ObjectRef) bool) map[ObjectRef]bool {
		m := managedAll(cur)
		for ref := range m {
			if !keep(ref) {
				delete(m, ref)
			}
		}
		return m
	}
	two := func(a, b *topology.Topology) *topology.Topology {
		for n, v := range b.Vhosts {
			a.Vhosts[n] = v
		}
		return a
	}
	tests := []struct {
		name    string
		desired *topology.Topology
		current *topology.Topology
		managed func(cur *topology.Topology) map[ObjectRef]bool
	}{
		{"teardown, all managed", vh("/", nil), mesh("/", nil, "topic"), managedAll},
		{"teardown, bindings unmanaged", vh("/", nil), mesh("/", nil, "topic"),
			func(cur *topology.Topology) map[ObjectRef]bool {
				return partly(cur, func(r ObjectRef) bool { return r.Kind != kind.Binding })
			}},
		{"teardown, some queues unmanaged", vh("/", nil), mesh("/", nil, "topic"),
			func(cur *topology.Topology) map[ObjectRef]bool {
				return partly(cur, func(r ObjectRef) bool { return r.Name != "q2" && r.Name != "c" })
			}},
		{"replace everything", mesh("/", topology.Args{"x-max-length": int64(5)}, "fanout"), mesh("/", nil, "topic"), managedAll},
		{"replace some, delete others", vh("/", func(v *topology.Vhost) {
			v.Exchanges["t"] = x("t", "fanout")
			v.Exchanges["a"] = x("a", "direct")
			v.Queues["q1"] = q("q1", topology.Args{"x-max-length": int64(5)})
			v.Queues["q2"] = q("q2", nil)
			v.Bindings = []*topology.Binding{bind("t", "q1", "z"), bind("a", "q1", "k")}
		}), mesh("/", nil, "topic"), managedAll},
		{"replace, bindings unmanaged", mesh("/", topology.Args{"x-max-length": int64(5)}, "fanout"), mesh("/", nil, "topic"),
			func(cur *topology.Topology) map[ObjectRef]bool {
				return partly(cur, func(r ObjectRef) bool { return r.Kind != kind.Binding })
			}},
		{"two vhosts: one dropped from the file, one replaced", mesh("v2", topology.Args{"x-max-length": int64(5)}, "topic"),
			two(mesh("v1", nil, "topic"), mesh("v2", nil, "fanout")), managedAll},
		{"benchmark pairs, teardown", vh("bench", nil), pairs("bench", 20, 10000, "direct"), managedAll},
		{"benchmark pairs, replace everything", pairs("bench", 20, 20000, "fanout"), pairs("bench", 20, 10000, "direct"), managedAll},
		{"benchmark pairs, nothing managed", vh("bench", nil), pairs("bench", 20, 10000, "direct"),
			func(*topology.Topology) map[ObjectRef]bool { return nil }},
	}
	listed := 0
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cur := Current{Live: topology.Live{State: tc.current, Queues: map[string]map[string]QueueStats{"/": {"q1": {Messages: 3, Consumers: 1}}}}, Managed: ManagedOf(RecordedOf(tc.current, tc.managed(tc.current)))}
			got := Diff(tc.desired, cur)
			want := Diff(tc.desired, cur)
			oldTakenDown(want, tc.current)
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("plan differs from the former diff's (-old +new):\n%s", diff)
			}
			for _, c := range got.Changes {
				listed += len(c.Bindings)
			}
		})
	}
	if listed == 0 {
		t.Errorf("no change lists a binding: the cases test nothing")
	}
}

// BenchmarkDiffNoop10k diffs the 10,002-object benchmark vhost against the
// same objects as RabbitMQ 4.x reads them back (x-queue-type on every
// queue), all of them mqctl's: the diff of a no-op plan.
func BenchmarkDiffNoop10k(b *testing.B) {
	desired := pairs("bench", 2500, 10000, "direct")
	cur := pairs("bench", 2500, 10000, "direct")
	for _, q := range cur.Vhosts["bench"].Queues {
		q.Arguments[topology.QueueTypeArgument] = "classic"
	}
	c := Current{Live: topology.Live{State: cur}, Managed: ManagedOf(RecordedOf(cur, managedAll(cur)))}
	if p := Diff(desired, c); !p.Empty() {
		b.Fatalf("the no-op diff plans %+v", p.Summary())
	}
	b.ReportAllocs()
	for b.Loop() {
		Diff(desired, c)
	}
}

// The diff works out the prints and comparisons of a kind with many
// objects on every core beforehand (prefetch): its plan is the one the
// diff makes name by name, for every kind of change and of ownership.
func TestPrefetchPlansAsNameByName(t *testing.T) {
	const n = 2 * prefetchFrom
	current := pairs("bench", n, 10000, "direct")
	desired := pairs("bench", n, 10000, "direct")
	dv, cv := desired.Vhosts["bench"], current.Vhosts["bench"]
	i := 0
	for _, name := range dv.QueueNames() {
		switch i++; i % 7 {
		case 0: // changed: replaced
			dv.Queues[name].Arguments["x-max-length"] = int64(5)
		case 1: // only in the file: created
			delete(cv.Queues, name)
		case 2: // only on the broker: deleted, or left alone unmanaged
			delete(dv.Queues, name)
		}
	}
	dv.Exchanges["events.dlx"].Type = "fanout"
	managed := func(cur *topology.Topology) map[ObjectRef]bool {
		m := managedAll(cur)
		for ref := range m {
			if strings.HasSuffix(ref.Name, "3.dlq") {
				delete(m, ref)
			}
		}
		return m
	}
	for _, tc := range []struct {
		name string
		cur  Current
	}{
		{"some unmanaged", Current{Live: topology.Live{State: current}, Managed: ManagedOf(RecordedOf(current, managed(current)))}},
		{"all managed", Current{Live: topology.Live{State: current}, Managed: ManagedOf(RecordedOf(current, managedAll(current)))}},
		{"all mine", Current{Live: topology.Live{State: current}, AllMine: true}},
	} {
		want := DiffWith(desired, tc.cur, Options{sequential: true})
		got := DiffWith(desired, tc.cur, Options{})
		if s := want.Summary(); s.Create < prefetchFrom/4 || s.Replace < prefetchFrom/4 || s.Delete < prefetchFrom/4 ||
			(tc.name == "some unmanaged" && len(want.Unmanaged) == 0) {
			t.Fatalf("%s: the case plans too little to test: %+v, %d unmanaged", tc.name, s, len(want.Unmanaged))
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("%s: prefetched plan differs from the name-by-name one (-name by name +prefetched):\n%s", tc.name, diff)
		}
	}
}

// Only the replace or delete of an exchange or a queue takes bindings
// down: a plan without one (a no-op plan, one that only creates) indexes
// no binding for it (takenDown visits nothing).
func TestTakenDownOnlyForReplacesAndDeletes(t *testing.T) {
	replaced := pairs("bench", 50, 10000, "direct")
	replaced.Vhosts["bench"].Queues["svc007.q00007"].Arguments["x-max-length"] = int64(5)
	for _, tc := range []struct {
		name    string
		desired *topology.Topology
		down    bool
	}{
		{"no-op", pairs("bench", 50, 10000, "direct"), false},
		{"creates only", pairs("bench", 60, 10000, "direct"), false},
		{"one queue replaced", replaced, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cur := pairs("bench", 50, 10000, "direct")
			p, v := visits(tc.desired, Current{Live: topology.Live{State: cur}, Managed: ManagedOf(RecordedOf(cur, managedAll(cur)))})
			if !tc.down {
				if v != 0 {
					t.Errorf("%+v: takenDown took %d steps, want none", p.Summary(), v)
				}
				return
			}
			if v == 0 {
				t.Errorf("%+v: takenDown took no step", p.Summary())
			}
			for _, c := range p.Changes {
				if c.Action == Replace && len(c.Bindings) != 1 {
					t.Errorf("the replace of %s takes down %d bindings, want its one", c.Name, len(c.Bindings))
				}
			}
		})
	}
}

// The diff pairs the two sides' bindings in key order without keying
// them: in whatever order each side lists them, with a key listed twice,
// bindings that differ by their arguments alone, and exchange-to-exchange
// bindings, it creates and deletes what a diff by Binding.Key does, in key
// order.
func TestBindingsPairedInKeyOrder(t *testing.T) {
	xb := func(src, dst, key string) *topology.Binding {
		return &topology.Binding{Source: src, Destination: dst, DestinationType: topology.DestExchange, RoutingKey: key}
	}
	withArgs := func(b *topology.Binding, a topology.Args) *topology.Binding { b.Arguments = a; return b }
	both := []*topology.Binding{bind("a", "q1", "k"), xb("a", "b", "k"), withArgs(bind("h", "q2", ""), topology.Args{"x-match": "all", "c": "1"}), bind("b", "q1", "")}
	fileOnly := []*topology.Binding{bind("a", "q1", "j"), withArgs(bind("h", "q2", ""), topology.Args{"x-match": "any"}), bind("c", "q3", "k"), bind("a", "q10", "k")}
	brokerOnly := []*topology.Binding{bind("a", "q1", "l"), withArgs(bind("h", "q2", ""), topology.Args{"x-match": "all"}), xb("a", "a", "self"), bind("", "q1", "q1x")}
	clone := func(bs []*topology.Binding) []*topology.Binding {
		out := make([]*topology.Binding, len(bs))
		for i, b := range bs {
			c := *b
			out[i] = &c
		}
		return out
	}
	side := func(bs []*topology.Binding, order string) []*topology.Binding {
		bs = clone(bs)
		switch order {
		case "sorted":
			slices.SortStableFunc(bs, topology.CompareBindings)
		case "reversed":
			slices.SortStableFunc(bs, topology.CompareBindings)
			slices.Reverse(bs)
		case "shuffled":
			rand.New(rand.NewPCG(1, 2)).Shuffle(len(bs), func(i, j int) { bs[i], bs[j] = bs[j], bs[i] })
		}
		return bs
	}
	// What a diff by key plans: each key once, in key order.
	var want []row
	keys := map[string]row{}
	for _, b := range fileOnly {
		keys[b.Key()] = row{Create, kind.Binding, BindingName(b)}
	}
	for _, b := range brokerOnly {
		keys[b.Key()] = row{Delete, kind.Binding, BindingName(b)}
	}
	for _, k := range slices.Sorted(maps.Keys(keys)) {
		want = append(want, keys[k])
	}
	fill := func(bs []*topology.Binding) func(v *topology.Vhost) {
		return func(v *topology.Vhost) {
			for _, e := range []string{"a", "b", "c", "h"} {
				v.Exchanges[e] = x(e, "direct")
			}
			for _, n := range []string{"q1", "q2", "q3", "q10"} {
				v.Queues[n] = q(n, nil)
			}
			v.Bindings = bs
		}
	}
	for _, order := range []string{"sorted", "reversed", "shuffled"} {
		t.Run(order, func(t *testing.T) {
			// The file lists one binding twice, the broker (as a test may
			// make it) one it alone has.
			desired := vh("/", fill(side(append(append(slices.Clone(both), fileOnly...), both[1]), order)))
			cur := vh("/", fill(side(append(append(slices.Clone(both), brokerOnly...), brokerOnly[0]), order)))
			p := Diff(desired, Current{Live: topology.Live{State: cur}, Managed: ManagedOf(RecordedOf(cur, managedAll(cur)))})
			var got []row
			for _, c := range p.Changes {
				if c.Kind == kind.Binding {
					got = append(got, row{c.Action, c.Kind, c.Name})
				}
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("binding changes (-by key +got):\n%s", diff)
			}
			if s := p.Summary(); s.Create+s.Delete != len(got) || s.Update+s.Replace != 0 {
				t.Errorf("summary %+v, want only the %d binding changes", s, len(got))
			}
		})
	}
}
