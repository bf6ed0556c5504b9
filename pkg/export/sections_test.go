package export

import (
	"strings"
	"testing"

	"github.com/mqctl/mqctl/pkg/kind"
	"github.com/mqctl/mqctl/pkg/topology"
)

// TestEveryVhostKindIsExported: every kind a vhost's section of
// topology.yaml declares (kind.VhostKinds) has a writer of its section,
// and a vhost's sections are written in the kinds' order. A kind added
// without one would be left out of every export silently; WriteYAML
// refuses instead (everyKindWritten), and this fails.
func TestEveryVhostKindIsExported(t *testing.T) {
	if err := everyKindWritten(); err != nil {
		t.Fatal(err)
	}
	for _, s := range kind.VhostKinds() {
		if _, ok := sectionOf(s); !ok {
			t.Errorf("kind %s: no writer of its section", s.Kind)
		}
	}
	v := topology.NewVhost("v")
	v.Exchanges["x"] = &topology.Exchange{Name: "x", Type: "topic", Durable: true}
	v.Queues["q"] = &topology.Queue{Name: "q", Type: topology.QueueClassic, Durable: true}
	v.Bindings = append(v.Bindings, &topology.Binding{Source: "x", Destination: "x2", DestinationType: topology.DestExchange, RoutingKey: "k"})
	for _, k := range kind.PolicyKinds() {
		v.PoliciesOf(k)["p"] = &topology.Policy{Name: "p", Pattern: "^q$", ApplyTo: "queues", Definition: topology.Args{"max-length": int64(1)}}
	}
	top := topology.New()
	top.Vhosts["v"] = v
	var sb strings.Builder
	if err := WriteYAML(&sb, top, Options{}); err != nil {
		t.Fatal(err)
	}
	out, at := sb.String(), 0
	for _, s := range kind.VhostKinds() {
		if s.Item != nil {
			continue
		}
		i := strings.Index(out, "\n    "+s.Section+":")
		if i < 0 {
			t.Errorf("no %s section in\n%s", s.Section, out)
			continue
		}
		if i < at {
			t.Errorf("the %s section comes before the kinds before it in\n%s", s.Section, out)
		}
		at = i
	}
}
