package plan

import "testing"

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
