package plan

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/mqctl/mqctl/pkg/rmqversion"
	"github.com/mqctl/mqctl/pkg/topology"
)

// manyToAll is the plan of benchrun's replace file in small: n queues,
// each bound by its own key to a topic exchange and dead-lettering through
// a direct exchange to its own DLQ, where the topic exchange becomes
// headers and the DLX fanout: every class of messages (n of them) and
// every queue's dead letters then reach all n queues, or all n DLQs.
func manyToAll(t testing.TB, n int) *Plan {
	t.Helper()
	side := func(events, dlx string) *topology.Topology {
		return vh("v", func(v *topology.Vhost) {
			v.Exchanges["events"] = x("events", events)
			v.Exchanges["events.dlx"] = x("events.dlx", dlx)
			for i := range n {
				name := fmt.Sprintf("q%05d", i)
				v.Queues[name] = q(name, topology.Args{"x-dead-letter-exchange": "events.dlx", "x-dead-letter-routing-key": name})
				v.Queues[name+".dlq"] = q(name+".dlq", nil)
				v.Bindings = append(v.Bindings, bind("events", name, fmt.Sprintf("svc.event%d.#", i)), bind("events.dlx", name+".dlq", name))
			}
		})
	}
	live := side("topic", "direct")
	cur := Current{Live: topology.Live{State: live}, Managed: ManagedOf(Recorded(live))}
	p := Diff(side("headers", "fanout"), cur)
	p.SetFlows(cur, rmqversion.Default)
	if len(p.Flows.Routes) < n || len(p.Flows.DeadLetters) < n {
		t.Fatalf("%d queues: %d routes and %d dead-letter changes, want %d of each at least", n, len(p.Flows.Routes), len(p.Flows.DeadLetters), n)
	}
	return p
}

// TestFlowsGrowLinearly: the JSON plan (and so "mqctl diff -o json") and
// the saved plan grow with the queues, not their square, where n classes
// of messages reach the same n queues. Each list of queues was written in
// full where an entry named it, with the gained queues of each route
// besides (n lists of n-1): benchrun's replace file made a JSON plan of
// 714 MB at 10,002 objects (4.8 MB of text), and at 50,002 mqctl ran out
// of memory. Four times the queues made 12 times the bytes; now about 4.
func TestFlowsGrowLinearly(t *testing.T) {
	const n = 60
	small, large := manyToAll(t, n), manyToAll(t, 4*n)
	for _, w := range []struct {
		name  string
		write func(*bytes.Buffer, *Plan) error
	}{
		{"the JSON plan", func(b *bytes.Buffer, p *Plan) error { return WriteJSON(b, p) }},
		{"the saved plan", func(b *bytes.Buffer, p *Plan) error { return WriteSaved(b, p) }},
	} {
		var a, b bytes.Buffer
		if err := w.write(&a, small); err != nil {
			t.Fatal(err)
		}
		if err := w.write(&b, large); err != nil {
			t.Fatal(err)
		}
		if ratio := float64(b.Len()) / float64(a.Len()); ratio > 6 {
			t.Errorf("%s: %d bytes for %d queues, %d for %d: %.1f times, want about 4", w.name, a.Len(), 2*n, b.Len(), 8*n, ratio)
		} else {
			t.Logf("%s: %d bytes for %d queues, %d for %d: %.1f times", w.name, a.Len(), 2*n, b.Len(), 8*n, ratio)
		}
	}
	// Nothing is left out: every list reads back whole.
	var js, saved bytes.Buffer
	if err := WriteJSON(&js, small); err != nil {
		t.Fatal(err)
	}
	if err := WriteSaved(&saved, small); err != nil {
		t.Fatal(err)
	}
	fromJSON, err := ReadJSON(&js)
	if err != nil {
		t.Fatal(err)
	}
	fromSaved, err := ReadSaved(&saved, "plan.json")
	if err != nil {
		t.Fatal(err)
	}
	for name, got := range map[string]*Plan{"the JSON plan": fromJSON, "the saved plan": fromSaved} {
		if d := cmp.Diff(small.Flows, got.Flows, cmpopts.EquateEmpty()); d != "" {
			t.Errorf("flows read back from %s (-made +read):\n%s", name, d)
		}
	}
}

// TestQueueListsOnce: each distinct list of queues is in queue_lists once,
// equal lists in different slices included, and an entry's field is its
// index; a route's gained and lost queues are not written (after less
// before, and the other way round).
func TestQueueListsOnce(t *testing.T) {
	p := manyToAll(t, 5)
	var buf bytes.Buffer
	if err := WriteJSON(&buf, p); err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Flows struct {
			QueueLists [][]string                   `json:"queue_lists"`
			Routes     []map[string]json.RawMessage `json:"routes"`
		} `json:"flows"`
	}
	if err := json.Unmarshal(buf.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, l := range doc.Flows.QueueLists {
		k := strings.Join(l, ",")
		if seen[k] {
			t.Errorf("queue_lists holds [%s] twice", k)
		}
		seen[k] = true
	}
	for i, r := range doc.Flows.Routes {
		for _, f := range []string{"gained", "lost"} {
			if _, ok := r[f]; ok {
				t.Errorf("route %d has %q", i, f)
			}
		}
		var after int
		if err := json.Unmarshal(r["after"], &after); err != nil {
			t.Fatalf("route %d's after is not an index: %s", i, r["after"])
		}
		if got, want := doc.Flows.QueueLists[after], p.Flows.Routes[i].After; !cmp.Equal(got, want) {
			t.Errorf("route %d's after is %v, want %v", i, got, want)
		}
	}
	// Equal lists in other slices are one list too.
	q := newQueueLists()
	if a, b := q.index([]string{"a", "b"}), q.index([]string{"a", "b"}); a != b || len(q.lists) != 1 {
		t.Errorf("two equal lists: indexes %d and %d, %d lists", a, b, len(q.lists))
	}
	if a, b := q.index([]string{"a\x00", "b"}), q.index([]string{"a", "\x00b"}); a == b {
		t.Errorf("two lists of other names are one: %d", a)
	}
}

// TestFlowsNamingNoListAreRefused: a JSON plan or a saved plan whose
// flows name a list of queues that queue_lists lacks (edited by hand, or
// damaged) is refused with an error saying which, not a panic.
func TestFlowsNamingNoListAreRefused(t *testing.T) {
	p := manyToAll(t, 2)
	var js, saved bytes.Buffer
	if err := WriteJSON(&js, p); err != nil {
		t.Fatal(err)
	}
	if err := WriteSaved(&saved, p); err != nil {
		t.Fatal(err)
	}
	damage := func(s string) string { return strings.Replace(s, `"after": 1,`, `"after": 99,`, 1) }
	if !strings.Contains(js.String(), `"after": 1,`) {
		t.Fatalf("no route's after is list 1:\n%s", js.String())
	}
	if _, err := ReadJSON(strings.NewReader(damage(js.String()))); err == nil || !strings.Contains(err.Error(), "route 1's after is list 99 of queue_lists") {
		t.Errorf("ReadJSON = %v, want an error naming route 1's after", err)
	}
	if _, err := ReadSaved(strings.NewReader(damage(saved.String())), "my.plan"); err == nil ||
		!strings.Contains(err.Error(), "my.plan is not a valid saved plan (flows: route 1's after is list 99 of queue_lists") {
		t.Errorf("ReadSaved = %v, want an error naming route 1's after", err)
	}
}

// TestSavedPlanOfVersion4Reads: a saved plan of version 4 (or 3), its flows
// written as flow.Diff's, lists in place, reads as it did.
func TestSavedPlanOfVersion4Reads(t *testing.T) {
	p := manyToAll(t, 3)
	var buf bytes.Buffer
	if err := WriteSaved(&buf, p); err != nil {
		t.Fatal(err)
	}
	var doc map[string]json.RawMessage
	if err := json.Unmarshal(buf.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	old, err := json.Marshal(p.Flows)
	if err != nil {
		t.Fatal(err)
	}
	for _, version := range []string{"3", "4"} {
		doc["version"], doc["flows"] = json.RawMessage(version), old
		v4, err := json.Marshal(doc)
		if err != nil {
			t.Fatal(err)
		}
		back, err := ReadSaved(bytes.NewReader(v4), "old.plan")
		if err != nil {
			t.Fatalf("version %s: %v", version, err)
		}
		if d := cmp.Diff(p.Flows, back.Flows, cmpopts.EquateEmpty()); d != "" {
			t.Errorf("version %s: flows read back (-made +read):\n%s", version, d)
		}
	}
}

// TestSharedListsReadApart: entries that name one list read back sharing
// it, and an append to one entry's list leaves the others' as they were.
func TestSharedListsReadApart(t *testing.T) {
	r := &listsRead{lists: [][]string{append(make([]string, 0, 8), "a", "b")}}
	one, other := r.list(0, "one"), r.list(0, "other")
	one = append(one, "c")
	other = append(other, "d")
	if r.err != nil || !cmp.Equal(one, []string{"a", "b", "c"}) || !cmp.Equal(other, []string{"a", "b", "d"}) {
		t.Errorf("after an append to each: one %v, other %v (%v)", one, other, r.err)
	}
}
