package definitions

import (
	"cmp"
	"encoding/json"
	"fmt"
	"sync"

	"github.com/mqctl/mqctl/pkg/kind"
	"github.com/mqctl/mqctl/pkg/topology"
)

// typedKind is how pkg/definitions reads the objects of a kind with a type
// of its own (kind.Spec.Item is nil: vhosts, exchanges, queues, bindings
// and the kinds of policy), in both its modes. Read and MapLive go over
// the registry's kinds (typedSpecs) and take each one's section, its
// place in the order and its words from its kind.Spec; what is the kind's
// own is here, one entry a kind (typedKindOf), so that a typed kind is
// read by no other code than its entry names. The kinds carried as
// topology.Item are read from their runtime parameters (access.go) and
// have no entry.
type typedKind struct {
	// read reads one element of the kind's section of a definitions file
	// (kind.Spec.Section), o, into r's topology: the checks RabbitMQ's
	// import makes, and the kind's mapping (Map*).
	read func(r *reader, o *object, k kind.Kind)
	// decode decodes the kind's section of a broker's answer into d
	// (DecodeStream); nil for a kind a Document does not hold (a vhost,
	// whose answer is read apart).
	decode func(d *Document, dec *json.Decoder, k kind.Kind) error
	// mapLive maps d's list of the kind onto m's vhost, emptying it
	// (LiveMapper.Finish); nil with decode.
	mapLive func(m *LiveMapper, d *Document, k kind.Kind)
	// scan, when set, reads the kind's section of a broker's answer one
	// element at a time, handing each to m as it is decoded
	// (DecodeReaderTo: the queues and bindings, thousands in a large
	// vhost, never held in the Document); nil: the section is cut out of
	// the stream whole and decoded (decode).
	scan func(s *scanner, m elements) error
}

// typedKinds are the typed kinds' entries but the kinds of policy, which
// share one (policyKind).
var typedKinds = map[kind.Kind]typedKind{
	kind.Vhost:    {read: (*reader).readVhost},
	kind.Exchange: listed((*reader).readExchange, func(d *Document) *[]Exchange { return &d.Exchanges }, (*LiveMapper).Exchange),
	kind.Queue: streamed(listed((*reader).readQueue, func(d *Document) *[]Queue { return &d.Queues }, (*LiveMapper).Queue),
		(*scanner).queue, elements.Queue),
	kind.Binding: streamed(listed((*reader).readBinding, func(d *Document) *[]Binding { return &d.Bindings }, (*LiveMapper).Binding),
		(*scanner).binding, elements.Binding),
}

// streamed is t with a scan of its section that reads each element with
// read and hands it to the mapper's each.
func streamed[T any](t typedKind, read func(*scanner, *T) error, each func(elements, T)) typedKind {
	t.scan = func(s *scanner, m elements) error {
		return s.array(func() error {
			var e T
			if err := read(s, &e); err != nil {
				return err
			}
			each(m, e)
			return nil
		})
	}
	return t
}

// listed is the entry of a typed kind whose elements read reads from a
// file, whose list in a Document is list's, and whose live objects m maps
// one at a time (each), emptying the list as it goes (a mapped object is
// garbage at once).
func listed[T any](read func(*reader, *object, kind.Kind), list func(*Document) *[]T, each func(*LiveMapper, T)) typedKind {
	return typedKind{
		read: read,
		decode: func(d *Document, dec *json.Decoder, _ kind.Kind) (err error) {
			l := list(d)
			*l, err = decodeArray(dec, *l, false)
			return err
		},
		mapLive: func(m *LiveMapper, d *Document, _ kind.Kind) {
			var zero T
			l := *list(d)
			for i, e := range l {
				l[i] = zero
				each(m, e)
			}
		},
	}
}

// policyKind is the entry of every kind of policy (kind.Spec.Policy): its
// list in a Document is Document.PoliciesOf's.
var policyKind = typedKind{
	read: func(r *reader, o *object, k kind.Kind) { r.readPolicy(o, o, k) },
	decode: func(d *Document, dec *json.Decoder, k kind.Kind) (err error) {
		ps := d.PoliciesOf(k)
		*ps, err = decodeArray(dec, *ps, false)
		return err
	},
	mapLive: func(m *LiveMapper, d *Document, k kind.Kind) {
		for _, p := range *d.PoliciesOf(k) {
			m.v.PoliciesOf(k)[p.Name] = MapPolicy(p)
		}
	},
}

// typedKindOf is k's entry; false for a kind carried as topology.Item (and
// one mqctl does not know).
func typedKindOf(k kind.Kind) (typedKind, bool) {
	if k.Policy() {
		return policyKind, true
	}
	if t, ok := typedKinds[k]; ok {
		return t, true
	}
	if t, ok := topology.TypedOf(k); ok {
		return definedKind(t), true
	}
	return typedKind{}, false
}

// definedKind is the entry of a kind with a type of its own (t) that has
// none in typedKinds: its elements are read from its Definition alone —
// the name, each setting under its APIKey (readSettings) and the
// arguments under the Definition's key — and decoded from the broker's
// answer into the model's type, whose JSON names are RabbitMQ's.
func definedKind(t topology.Typed) typedKind {
	return typedKind{
		read: func(r *reader, o *object, k kind.Kind) { r.readDefined(o, k, t) },
		decode: func(d *Document, dec *json.Decoder, k kind.Kind) error {
			var bad error
			err := eachElement(dec, false, func(raw json.RawMessage) {
				x := t.New()
				if err := decodeNumbers(raw, x); err != nil {
					bad = cmp.Or(bad, fmt.Errorf("read a %s: %w", k.Label(), err))
					return
				}
				if d.Objects == nil {
					d.Objects = map[kind.Kind][]topology.Named{}
				}
				d.Objects[k] = append(d.Objects[k], x)
			})
			return cmp.Or(err, bad)
		},
		mapLive: func(m *LiveMapper, d *Document, k kind.Kind) {
			for _, o := range d.Objects[k] {
				t.Normalize(o)
				t.In(m.v, k).Set(o.ObjectName(), o)
			}
			delete(d.Objects, k)
		},
	}
}

// readDefined reads o, an element of the section of kind k, a kind with
// a type of its own (t) read from its Definition alone (definedKind).
func (r *reader) readDefined(o *object, k kind.Kind, t topology.Typed) {
	name, vh, ok := o.nameIn(k.Label())
	if !ok {
		return
	}
	def := t.Def()
	x := t.Renamed(t.New(), name)
	if !readSettings(o, def, x) {
		return
	}
	def.SetArgs(x, o.args(def.ArgsKey))
	if r.duplicate(k, fmt.Sprintf("%s %q in vhost %q", k.Label(), name, vh), vh, name, o) {
		return
	}
	t.MetaOf(x).Pos = o.pos
	t.In(r.t.Vhost(vh), k).Set(name, x)
}

// typedSpecs are the specs of the typed kinds of a vhost: the vhost
// itself (kind.Spec.Container), then those of kind.VhostKinds, in their
// order (exchanges, queues, bindings, the kinds of policy). The broker's
// own kinds (users) are read with their access (access.go). Made once:
// each read and each vhost's live mapping goes over them.
var typedSpecs = sync.OnceValue(func() []kind.Spec {
	var out []kind.Spec
	for _, s := range kind.All() {
		if s.Container {
			out = append(out, s)
		}
	}
	for _, s := range kind.VhostKinds() {
		if s.Item == nil {
			out = append(out, s)
		}
	}
	return out
})

// sectionKind is the typed kind whose definitions section is named key;
// false for none.
func sectionKind(key string) (kind.Kind, bool) {
	for _, s := range typedSpecs() {
		if s.Section == key {
			return s.Kind, true
		}
	}
	return "", false
}

// readSection reads the section of s's kind from a definitions file.
func (r *reader) readSection(top map[string]any, s kind.Spec) {
	t, ok := typedKindOf(s.Kind)
	if !ok {
		r.errorAt(topology.Pos{File: r.name}, "%v", kind.Unknown("definitions reader", s.Kind))
		return
	}
	for _, o := range r.list(top, s.Section, s.Label) {
		t.read(r, o, s.Kind)
	}
}
