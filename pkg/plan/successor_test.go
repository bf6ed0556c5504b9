package plan

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/mqctl/mqctl/pkg/kind"
	pj "github.com/mqctl/mqctl/pkg/planjson"
	"github.com/mqctl/mqctl/pkg/topology"
)

// TestSuccessors: the queue that takes every binding of a deleted queue
// (the same source, key and arguments), and only when one does; the text
// and JSON plans say how to keep the messages of such a queue at stake.
func TestSuccessors(t *testing.T) {
	t.Parallel()
	bind := func(dest, key string, args topology.Args) *topology.Binding {
		return &topology.Binding{Source: "x", DestinationType: topology.DestQueue, Destination: dest, RoutingKey: key, Arguments: args}
	}
	del := func(b *topology.Binding) Change {
		return Change{Action: Delete, Kind: kind.Binding, Vhost: "v", Name: BindingName(b), Before: BindingObject{b}}
	}
	add := func(b *topology.Binding) Change {
		return Change{Action: Create, Kind: kind.Binding, Vhost: "v", Name: BindingName(b), After: BindingObject{b}}
	}
	queue := func(a Action, name string, msgs int64) Change {
		q := Object(&topology.Queue{Name: name, Type: topology.QueueClassic, Durable: true})
		c := Change{Action: a, Kind: kind.Queue, Vhost: "v", Name: name, Messages: msgs}
		if a == Create {
			c.After = q
		} else {
			c.Before = q
		}
		return c
	}
	args := topology.Args{"x-match": "all"}
	for _, tc := range []struct {
		name    string
		changes []Change
		want    string
		created bool
	}{
		{"renamed: created, both bindings", []Change{queue(Delete, "old", 3), queue(Create, "new", 0),
			del(bind("old", "a", nil)), del(bind("old", "b", args)), add(bind("new", "a", nil)), add(bind("new", "b", args))}, "new", true},
		{"onto a queue that exists", []Change{queue(Delete, "old", 3),
			del(bind("old", "a", nil)), add(bind("new", "a", nil))}, "new", false},
		{"one key missing", []Change{queue(Delete, "old", 3), queue(Create, "new", 0),
			del(bind("old", "a", nil)), del(bind("old", "b", nil)), add(bind("new", "a", nil))}, "", false},
		{"other arguments", []Change{queue(Delete, "old", 3), queue(Create, "new", 0),
			del(bind("old", "a", args)), add(bind("new", "a", nil))}, "", false},
		{"two queues take them all", []Change{queue(Delete, "old", 3),
			del(bind("old", "a", nil)), add(bind("n1", "a", nil)), add(bind("n2", "a", nil))}, "", false},
		{"no bindings", []Change{queue(Delete, "old", 3), queue(Create, "new", 0)}, "", false},
		{"bindings going with it (not mqctl's)", []Change{func() Change {
			c := queue(Delete, "old", 3)
			c.Bindings = []*topology.Binding{bind("old", "a", nil)}
			return c
		}(), add(bind("new", "a", nil))}, "new", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			p := &Plan{Changes: tc.changes}
			got, created := p.Successors()(&p.Changes[0])
			if got != tc.want || created != tc.created {
				t.Errorf("successor %q (created %t), want %q (%t)", got, created, tc.want, tc.created)
			}
			var buf bytes.Buffer
			if err := WriteText(&buf, p, RenderOptions{}); err != nil {
				t.Fatal(err)
			}
			said := strings.Contains(buf.String(), "to keep its messages, ")
			if said != (tc.want != "") {
				t.Errorf("the text plan gives the way to keep the messages: %t, want %t:\n%s", said, tc.want != "", buf.String())
			}
			if tc.want != "" && !strings.Contains(buf.String(), "mqctl dlq replay old --vhost v --to-exchange '' --routing-key "+tc.want) {
				t.Errorf("the text plan gives no replay into %s:\n%s", tc.want, buf.String())
			}
			// The JSON plan tells a program the same.
			buf.Reset()
			if err := WriteJSON(&buf, p); err != nil {
				t.Fatal(err)
			}
			var doc pj.Plan
			if err := json.Unmarshal(buf.Bytes(), &doc); err != nil {
				t.Fatal(err)
			}
			s := doc.Changes[0].Successor
			switch {
			case tc.want == "" && s != nil:
				t.Errorf("JSON successor %+v, want none", *s)
			case tc.want != "" && (s == nil || s.Queue != tc.want || s.Created != tc.created || !strings.Contains(s.Advice, "mqctl dlq replay old")):
				t.Errorf("JSON successor %+v, want queue %q (created %t) with the replay", s, tc.want, tc.created)
			}
		})
	}
}
