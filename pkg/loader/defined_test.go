package loader

import (
	"testing"

	"github.com/mqctl/mqctl/pkg/kind"
	"github.com/mqctl/mqctl/pkg/topology"
)

// TestDefinedDecodesAsItsKind: an object of a kind with a type of its own
// decoded from its Definition alone (decoder.defined, which a kind of
// namedKinds without a decoder of its own gets) is the object the kind's
// own decoder makes of the same body: an exchange (its type a setting of
// no form, read as a word) and both kinds of policy, every setting away
// from RabbitMQ's default; a field the Definition does not name is
// refused, as the kind's own decoder refuses it.
func TestDefinedDecodesAsItsKind(t *testing.T) {
	bodies := map[kind.Kind]string{
		kind.Exchange: "x:\n  type: topic\n  durable: false\n  auto_delete: true\n  internal: true\n  arguments: {x-a: 1}\n",
	}
	for _, k := range kind.PolicyKinds() {
		bodies[k] = "p:\n  pattern: '^q$'\n  apply_to: queues\n  priority: 3\n  definition: {max-length: 7}\n"
	}
	own := map[kind.Kind]func(d *decoder, key, body *node, k kind.Kind) topology.Named{
		kind.Exchange: func(d *decoder, key, body *node, _ kind.Kind) topology.Named { return d.exchange(key, body) },
	}
	for _, k := range kind.PolicyKinds() {
		own[k] = namedDecoder(k)
	}
	for k, src := range bodies {
		typ, _ := topology.TypedOf(k)
		decode := func(with func(d *decoder, key, body *node) topology.Named) (topology.Named, *collector) {
			errs := newCollector()
			d := &decoder{errs: errs, refs: map[*node]string{}}
			root := parseFile("t.yaml", []byte(src), nil, errs, d.refs, nil)
			if root == nil || len(root.entries) != 1 {
				t.Fatalf("%s: no mapping of one object in %q", k, src)
			}
			return with(d, root.entries[0].key, root.entries[0].value), errs
		}
		want, werrs := decode(func(d *decoder, key, body *node) topology.Named { return own[k](d, key, body, k) })
		got, gerrs := decode(func(d *decoder, key, body *node) topology.Named { return d.defined(key, body, k, typ) })
		if werrs.count() > 0 || gerrs.count() > 0 {
			t.Fatalf("%s: errors %v / %v", k, werrs.err(), gerrs.err())
		}
		def := typ.Def()
		for _, s := range def.Settings {
			if s.Value(want) != s.Value(got) {
				t.Errorf("%s: %s = %v, want %v", k, s.Key, s.Value(got), s.Value(want))
			}
		}
		if a, b := def.Args(want), def.Args(got); len(a) != len(b) || a.Canonical() != b.Canonical() {
			t.Errorf("%s: %s = %v, want %v", k, def.ArgsKey, b, a)
		}
		if got.ObjectName() != want.ObjectName() || got.ObjectPos() != want.ObjectPos() {
			t.Errorf("%s: named %q at %v, want %q at %v", k, got.ObjectName(), got.ObjectPos(), want.ObjectName(), want.ObjectPos())
		}
	}
	_, errs := func() (topology.Named, *collector) {
		errs := newCollector()
		d := &decoder{errs: errs, refs: map[*node]string{}}
		root := parseFile("t.yaml", []byte("p:\n  pattern: x\n  colour: blue\n"), nil, errs, d.refs, nil)
		typ, _ := topology.TypedOf(kind.Policy)
		return d.defined(root.entries[0].key, root.entries[0].value, kind.Policy, typ), errs
	}()
	if errs.count() == 0 {
		t.Errorf("a field the Definition does not name (colour) was taken")
	}
}
