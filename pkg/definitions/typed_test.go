package definitions

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/mqctl/mqctl/pkg/kind"
	"github.com/mqctl/mqctl/pkg/topology"
)

// TestEveryTypedKindIsRead: every kind with a type of its own that a vhost
// holds (kind.Spec.Item nil, not the broker's) has its entry in
// pkg/definitions (typedKindOf), and its section is read by both modes:
// a definitions file (Read) and a broker's answer (DecodeStream, MapLive).
// A typed kind added to the registry without one would be dropped from
// every definitions file and every live read silently: this fails instead.
func TestEveryTypedKindIsRead(t *testing.T) {
	// One element of each kind's section, as RabbitMQ writes it.
	elements := map[kind.Kind]string{
		kind.Vhost:    `{"name": "v"}`,
		kind.Exchange: `{"name": "x", "vhost": "v", "type": "topic", "durable": true}`,
		kind.Queue:    `{"name": "q", "vhost": "v", "durable": true, "arguments": {"x-queue-type": "quorum"}}`,
		kind.Binding:  `{"source": "x", "vhost": "v", "destination": "q", "destination_type": "queue", "routing_key": "k", "arguments": {}}`,
	}
	for _, k := range kind.PolicyKinds() {
		elements[k] = `{"name": "p", "vhost": "v", "pattern": "^q$", "apply-to": "queues", "priority": 1, "definition": {"max-length": 7}}`
	}
	specs := typedSpecs()
	if len(specs) < 6 {
		t.Fatalf("typedSpecs = %d kinds, want vhosts, exchanges, queues, bindings and the kinds of policy", len(specs))
	}
	var sections []string
	for _, s := range specs {
		tk, ok := typedKindOf(s.Kind)
		if !ok || tk.read == nil {
			t.Errorf("kind %s: no entry in typedKinds: pkg/definitions cannot read it", s.Kind)
			continue
		}
		if !s.Container && (tk.decode == nil || tk.mapLive == nil) {
			t.Errorf("kind %s: its entry neither decodes nor maps a broker's answer", s.Kind)
		}
		e, ok := elements[s.Kind]
		if typ, typed := topology.TypedOf(s.Kind); !ok && typed {
			// Any other kind with a type of its own: an object of it,
			// every setting at its default, as its JSON names write it.
			b, err := json.Marshal(topology.NewNamed(typ, "o"))
			if err != nil {
				t.Fatal(err)
			}
			e, ok = `{"vhost": "v", `+string(b[1:]), true
		}
		if !ok {
			t.Errorf("kind %s: no element in this test", s.Kind)
			continue
		}
		sections = append(sections, `"`+s.Section+`": [`+e+`]`)
	}
	doc := "{" + strings.Join(sections, ", ") + "}"
	top, rep, err := Read("defs.json", []byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Warnings) > 0 {
		t.Errorf("Read warned: %q", rep.Warnings)
	}
	d := decodeDoc(t, doc)
	live, err := MapLive(LiveVhost{Name: "v"}, d)
	if err != nil {
		t.Fatal(err)
	}
	for from, v := range map[string]*topology.Vhost{"Read": top.Vhosts["v"], "MapLive": live} {
		if v == nil {
			t.Errorf("%s: no vhost v", from)
			continue
		}
		for _, s := range specs {
			if n := objectsOf(v, s.Kind); n != 1 {
				t.Errorf("%s: %d objects read from the %s section, want 1", from, n, s.Section)
			}
		}
	}
}

// objectsOf is the number of v's objects of typed kind k (v itself for
// the vhost).
func objectsOf(v *topology.Vhost, k kind.Kind) int {
	if t, ok := topology.TypedOf(k); ok {
		return t.In(v, k).Len()
	}
	switch {
	case k.Container():
		return 1
	case k == kind.Binding:
		return len(v.Bindings)
	}
	return -1
}

// TestDefinedKindReadsBothModes: a kind with a type of its own read from
// its Definition alone (definedKind, the entry of such a kind without one
// in typedKinds) reads an element of a definitions file and of a broker's
// answer as the kind's own entry does: exchanges and both kinds of
// policy, each setting away from RabbitMQ's default. (A queue's type is
// not a setting of the file alone: RabbitMQ keeps it in its arguments,
// x-queue-type, and the queue's own entry reads it from there.)
func TestDefinedKindReadsBothModes(t *testing.T) {
	elements := map[kind.Kind]string{
		kind.Exchange: `{"name": "x", "vhost": "v", "type": "topic", "durable": false, "auto_delete": true, "internal": true, "arguments": {"x-a": 1}}`,
	}
	for _, k := range kind.PolicyKinds() {
		elements[k] = `{"name": "p", "vhost": "v", "pattern": "^q$", "apply-to": "queues", "priority": 3, "definition": {"max-length": 7}}`
	}
	for k, e := range elements {
		typ, _ := topology.TypedOf(k)
		s, _ := kind.Of(k)
		entry := definedKind(typ)
		doc := `{"vhosts": [{"name": "v"}], "` + s.Section + `": [` + e + `]}`
		want, _, err := Read("d.json", []byte(doc))
		if err != nil {
			t.Fatal(err)
		}
		var raw struct{ Name string }
		if err := json.Unmarshal([]byte(e), &raw); err != nil {
			t.Fatal(err)
		}
		name := raw.Name
		w, ok := typ.In(want.Vhosts["v"], k).Get(name)
		if !ok {
			t.Fatalf("%s: the kind's own entry read nothing", k)
		}

		// A definitions file.
		r := &reader{name: "d.json", data: []byte(doc), rep: newReport(), t: topology.New(), declared: map[string]*object{}}
		top, err := r.decode()
		if err != nil {
			t.Fatal(err)
		}
		r.offsets = elementOffsets(r.data)
		for _, o := range r.list(top, s.Section, s.Label) {
			entry.read(r, o, k)
		}
		if len(r.errs) > 0 {
			t.Fatalf("%s: %v", k, r.errs)
		}
		got, ok := typ.In(r.t.Vhost("v"), k).Get(name)
		if !ok || !sameDefined(typ, w, got) || got.ObjectPos().IsZero() {
			t.Errorf("%s from a file: %+v, want %+v", k, got, w)
		}

		// A broker's answer.
		d := new(Document)
		dec := json.NewDecoder(strings.NewReader("[" + e + "]"))
		dec.UseNumber()
		if err := entry.decode(d, dec, k); err != nil {
			t.Fatal(err)
		}
		m := NewLiveMapper(LiveVhost{Name: "v"})
		entry.mapLive(m, d, k)
		live, ok := typ.In(m.v, k).Get(name)
		if !ok || !sameDefined(typ, w, live) {
			t.Errorf("%s from a broker's answer: %+v, want %+v", k, live, w)
		}
	}
}

// sameDefined reports whether a and b have the same settings and
// arguments, as their kind's Definition reads them.
func sameDefined(typ topology.Typed, a, b topology.Named) bool {
	def := typ.Def()
	for _, s := range def.Settings {
		if s.Value(a) != s.Value(b) {
			return false
		}
	}
	x, y := def.Args(a), def.Args(b)
	if len(x) != len(y) {
		return false
	}
	for k, v := range x {
		if !topology.ValueEqual(v, y[k]) {
			return false
		}
	}
	return a.ObjectName() == b.ObjectName()
}
