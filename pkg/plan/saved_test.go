package plan

import (
	"bytes"
	"encoding/json"
	"fmt"
	"testing"

	"github.com/mqctl/mqctl/pkg/kind"
	"github.com/mqctl/mqctl/pkg/topology"
)

// A saved plan is refused on a broker of another version, or of another
// cluster; a cluster whose name was never set reports one made from the
// node that answers, so clusters are told by their nodes (a plan saved
// through one node, applied through another), and refused as others only
// when both lists of nodes are known and share none.
func TestSavedFor(t *testing.T) {
	saved := &Plan{Broker: &Broker{Version: "4.3.6", Cluster: "rabbit-c1@vm", Nodes: []string{"rabbit-c1@h", "rabbit-c2@h"}}}
	for _, c := range []struct {
		name   string
		b      Broker
		refuse bool
	}{
		{"the same broker", Broker{"4.3.6", "rabbit-c1@vm", nil}, false},
		{"another version", Broker{"4.0.5", "rabbit-c1@vm", nil}, true},
		{"another node of the same cluster", Broker{"4.3.6", "rabbit-c2@vm", []string{"rabbit-c1@h", "rabbit-c2@h"}}, false},
		{"another cluster", Broker{"4.3.6", "rabbit@other", []string{"rabbit@other"}}, true},
		{"another name, nodes not read", Broker{"4.3.6", "prod", nil}, false},
	} {
		why := SavedFor(saved, "plan.json", c.b, "http://h:15672")
		if (why != "") != c.refuse {
			t.Errorf("%s: refused %q, want refused=%v", c.name, why, c.refuse)
		}
	}
	if why := SavedFor(&Plan{}, "plan.json", Broker{Version: "4.3.6", Cluster: "x"}, "http://h:15672"); why != "" {
		t.Errorf("a plan that names no broker is refused: %s", why)
	}
	if why := SavedFor(&Plan{Broker: &Broker{Version: "4.3.6", Cluster: "a"}}, "plan.json", Broker{Version: "4.3.6", Cluster: "b", Nodes: []string{"rabbit@b"}}, "http://h:15672"); why != "" {
		t.Errorf("a plan saved without its nodes is refused for its cluster name alone: %s", why)
	}
}

// TestSavedObjectShape: an object in the saved plan is one field named
// after its type of Object, as the saved plan has always written it
// ({"exchange": {…}}, {"item": {…}}, …, {} for none): the bytes of each
// type of Object are those of the struct of one field per type that
// held them before (its fields here, as written), and read back they are
// the object again. A saved plan written before is read, and one written
// now is read by the mqctl that wrote the plans before.
func TestSavedObjectShape(t *testing.T) {
	type before struct {
		Vhost    *VhostMeta         `json:"vhost,omitempty"`
		Exchange *topology.Exchange `json:"exchange,omitempty"`
		Queue    *topology.Queue    `json:"queue,omitempty"`
		Binding  *topology.Binding  `json:"binding,omitempty"`
		Policy   *topology.Policy   `json:"policy,omitempty"`
		Item     *topology.Item     `json:"item,omitempty"`
	}
	x := &topology.Exchange{Name: "x<&>", Type: "topic", Durable: true, Arguments: topology.Args{"alternate-exchange": "ae"}}
	q := &topology.Queue{Name: "q", Type: "quorum", Durable: true, Arguments: topology.Args{"x-max-length": 10}}
	b := &topology.Binding{Source: "x", Destination: "q", DestinationType: "queue", RoutingKey: "a.#"}
	p := &topology.Policy{Name: "p", Pattern: "^q$", Definition: topology.Args{"max-length": 5}}
	it := &topology.Item{Kind: kind.Shovel, Name: "s", Settings: map[string]any{"src-queue": "a"}}
	vm := &VhostMeta{Name: "v", Description: "d"}
	for _, c := range []struct {
		obj  Object
		was  before
		name string
	}{
		{Object(x), before{Exchange: x}, "exchange"},
		{Object(q), before{Queue: q}, "queue"},
		{BindingObject{b}, before{Binding: b}, "binding"},
		{Object(p), before{Policy: p}, "policy"},
		{ItemObject{it}, before{Item: it}, "item"},
		{vm, before{Vhost: vm}, "vhost"},
		{nil, before{}, "none"},
	} {
		got, err := json.MarshalIndent(&savedObject{c.obj}, "  ", "  ")
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		want, _ := json.MarshalIndent(&c.was, "  ", "  ")
		if !bytes.Equal(got, want) {
			t.Errorf("%s: saved as\n%s\nwant\n%s", c.name, got, want)
		}
		var back savedObject
		if err := json.Unmarshal(want, &back); err != nil {
			t.Fatalf("%s: read back: %v", c.name, err)
		}
		if c.name == "none" {
			if back.object() != nil {
				t.Errorf("none: read back %#v", back.object())
			}
			continue
		}
		if g, w := fmt.Sprintf("%T", back.object()), fmt.Sprintf("%T", c.obj); g != w {
			t.Errorf("%s: read back a %s, want a %s", c.name, g, w)
			continue
		}
		if again, _ := json.MarshalIndent(&savedObject{back.object()}, "  ", "  "); !bytes.Equal(again, want) {
			t.Errorf("%s: read back as\n%s\nwant\n%s", c.name, again, want)
		}
	}
	for _, bad := range []string{`{"queue": "q"}`, `{"stream": {"name": "s"}}`, `{"queue": {"name": "q", "colour": "red"}}`} {
		var o savedObject
		if err := json.Unmarshal([]byte(bad), &o); err == nil {
			t.Errorf("%s read as %#v, want an error", bad, o.object())
		}
	}
}
