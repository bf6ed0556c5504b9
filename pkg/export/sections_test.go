package export

import (
	"strings"
	"testing"

	"github.com/mqctl/mqctl/pkg/kind"
	"github.com/mqctl/mqctl/pkg/loader"
	"github.com/mqctl/mqctl/pkg/plan"
	"github.com/mqctl/mqctl/pkg/topology"
	"go.yaml.in/yaml/v3"
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
	for _, s := range kind.VhostKinds() {
		// Any other kind with a type of its own: an object of it, every
		// setting at its default.
		if typ, ok := topology.TypedOf(s.Kind); ok && typ.In(v, s.Kind).Len() == 0 {
			typ.In(v, s.Kind).Set("o", topology.NewNamed(typ, "o"))
		}
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

// TestDefinedSectionReadsBack: the section of a kind with a type of its
// own written from its Definition alone (definedSection, which a kind
// without a writer of its own in sections gets) is read back by the
// loader as the object it was, every setting away from RabbitMQ's
// default: exchanges, queues and both kinds of policy, written so.
func TestDefinedSectionReadsBack(t *testing.T) {
	objects := map[kind.Kind]topology.Named{
		kind.Exchange:       &topology.Exchange{Name: "x", Type: "topic", Durable: false, AutoDelete: true, Internal: true, Arguments: topology.Args{"x-a": int64(1)}},
		kind.Queue:          &topology.Queue{Name: "q", Type: topology.QueueQuorum, Durable: true, Arguments: topology.Args{"x-max-length": int64(5)}},
		kind.Policy:         &topology.Policy{Name: "p", Pattern: "^q$", ApplyTo: "queues", Priority: 3, Definition: topology.Args{"max-length": int64(1)}},
		kind.OperatorPolicy: &topology.Policy{Name: "o", Pattern: "^q", ApplyTo: "quorum_queues", Priority: -2, Definition: topology.Args{"max-length": int64(2)}},
	}
	for k, o := range objects {
		typ, ok := topology.TypedOf(k)
		if !ok {
			t.Fatalf("%s: no Typed", k)
		}
		s, _ := kind.Of(k)
		v := topology.NewVhost("v")
		typ.In(v, k).Set(o.ObjectName(), o)
		sec := definedSection(typ)(&vhostWriter{v: v, plan: newSugarPlan()}, s)
		vh := mapping()
		add(vh, s.Section, sec)
		vhosts := mapping()
		add(vhosts, "v", vh)
		root := mapping()
		add(root, "version", intNode(1))
		add(root, "vhosts", vhosts)
		b, err := yaml.Marshal(&yaml.Node{Kind: yaml.DocumentNode, Content: []*yaml.Node{root}})
		if err != nil {
			t.Fatal(err)
		}
		top, err := loader.LoadBytes("t.yaml", b, loader.Options{})
		if err != nil {
			t.Fatalf("%s: %v\n%s", k, err, b)
		}
		back, ok := typ.In(top.Vhosts["v"], k).Get(o.ObjectName())
		if !ok {
			t.Fatalf("%s: not read back from\n%s", k, b)
		}
		if f := plan.ObjectFields(k, plan.Object(o), plan.Object(back)); len(f) != 0 {
			t.Errorf("%s: read back differing in %+v from\n%s", k, f, b)
		}
	}
}
