package topology

import (
	"iter"
	"maps"

	"github.com/mqctl/mqctl/pkg/kind"
)

// Typed is a kind of object with a type of its own that a vhost holds by
// name — an exchange, a queue, a kind of policy — as the stages that
// carry objects of any such kind see it: by its Definition, over its
// objects held as Named. It is described once, by its Model (the
// registry's TypedKinds), so that a stage meets every such kind through
// it rather than naming each.
type Typed interface {
	// Key is the kind's word in the saved plan and in the public JSON
	// plan's objects ("exchange", "queue", "policy": its Definition's
	// Print).
	Key() string
	// Carries reports whether objects of kind k are of this type.
	Carries(k kind.Kind) bool
	// Def is its Definition over its objects held as Named.
	Def() Definition[Named]
	// Doc is its Definition without its type.
	Doc() DefinitionDoc
	// In is v's objects of kind k, a kind it carries.
	In(v *Vhost, k kind.Kind) NamedMap
	// New is an empty object of the type, to decode one into.
	New() Named
	// Renamed is a copy of o named name (its settings shared).
	Renamed(o Named, name string) Named
	// MetaOf is where o keeps where the file declares it.
	MetaOf(o Named) *Meta
	// CloneIn makes dst hold a copy of src's map of the objects of kind
	// k, sharing the objects.
	CloneIn(dst, src *Vhost, k kind.Kind)
	// Init makes v hold an empty map of the objects of kind k.
	Init(v *Vhost, k kind.Kind)
	// Normalize puts o's values back into the types the diff compares
	// (its arguments, read from JSON).
	Normalize(o Named)
}

// Named is an object of a Typed kind: an *Exchange, a *Queue, a *Policy.
type Named interface {
	// Typed is its kind's description.
	Typed() Typed
	// ObjectName is its name.
	ObjectName() string
	// ObjectPos is where the file declares it (zero when read from the
	// broker).
	ObjectPos() Pos
}

// NamedMap is a vhost's objects of one Typed kind, by name.
type NamedMap interface {
	Get(name string) (Named, bool)
	// Set makes the map hold o as name; o nil removes name.
	Set(name string, o Named)
	Has(name string) bool
	Len() int
	// Keys yields the names, in no order.
	Keys() iter.Seq[string]
}

// Model describes a Typed kind whose objects are *T: its Definition, the
// kinds it carries and where a vhost holds their objects. It is the one
// place a kind with a type of its own is described for the stages that
// carry it.
type Model[T any] struct {
	Definition Definition[*T]
	// Kinds are the kinds whose objects are T (every kind of policy is a
	// Policy).
	Kinds func(k kind.Kind) bool
	// Map is v's map of the objects of kind k; SetMap makes m that map.
	Map    func(v *Vhost, k kind.Kind) map[string]*T
	SetMap func(v *Vhost, k kind.Kind, m map[string]*T)
	// Name is where an object keeps its name, Meta where the file
	// declares it.
	Name   func(o *T) *string
	Meta   func(o *T) *Meta
	erased Definition[Named]
}

func (m *Model[T]) Key() string              { return m.Definition.Print }
func (m *Model[T]) Carries(k kind.Kind) bool { return m.Kinds(k) }
func (m *Model[T]) Def() Definition[Named]   { return m.erased }
func (m *Model[T]) Doc() DefinitionDoc       { return m.Definition.Doc() }
func (m *Model[T]) New() Named               { return any(new(T)).(Named) }

func (m *Model[T]) Renamed(o Named, name string) Named {
	c := *any(o).(*T)
	*m.Name(&c) = name
	return any(&c).(Named)
}

func (m *Model[T]) MetaOf(o Named) *Meta { return m.Meta(any(o).(*T)) }

func (m *Model[T]) Init(v *Vhost, k kind.Kind) { m.SetMap(v, k, map[string]*T{}) }

func (m *Model[T]) CloneIn(dst, src *Vhost, k kind.Kind) {
	m.SetMap(dst, k, maps.Clone(m.Map(src, k)))
}

func (m *Model[T]) In(v *Vhost, k kind.Kind) NamedMap {
	return namedMap[T]{m.Map(v, k)}
}

func (m *Model[T]) Normalize(o Named) {
	d := m.Definition
	x := any(o).(*T)
	d.SetArgs(x, d.Args(x).Normalized())
}

// model returns m with its Definition erased over Named, once: the
// registry's entries are made by it.
func model[T any](m Model[T]) *Model[T] {
	d := m.Definition
	m.erased = Definition[Named]{Print: d.Print, ArgsKey: d.ArgsKey, Skip: d.Skip, Forms: d.Forms,
		Args:    func(o Named) Args { return d.Args(any(o).(*T)) },
		SetArgs: func(o Named, a Args) { d.SetArgs(any(o).(*T), a) }}
	for _, s := range d.Settings {
		e := Setting[Named]{Key: s.Key, APIKey: s.APIKey, Default: s.Default, Text: s.Text, Values: s.Values,
			Help: s.Help, Example: s.Example, Later: s.Later,
			Value: func(o Named) any { return s.Value(any(o).(*T)) }}
		if s.Set != nil {
			e.Set = func(o Named, v any) { s.Set(any(o).(*T), v) }
		}
		m.erased.Settings = append(m.erased.Settings, e)
	}
	return &m
}

// namedMap is a map of *T as a NamedMap.
type namedMap[T any] struct{ m map[string]*T }

func (n namedMap[T]) Get(name string) (Named, bool) {
	o, ok := n.m[name]
	if !ok || o == nil {
		return nil, false
	}
	return any(o).(Named), true
}

func (n namedMap[T]) Set(name string, o Named) {
	if o == nil {
		delete(n.m, name)
		return
	}
	n.m[name] = any(o).(*T)
}

func (n namedMap[T]) Has(name string) bool   { _, ok := n.m[name]; return ok }
func (n namedMap[T]) Len() int               { return len(n.m) }
func (n namedMap[T]) Keys() iter.Seq[string] { return maps.Keys(n.m) }

// ExchangeModel, QueueModel and PolicyModel are the Typed kinds, each
// over its Definition.
var (
	ExchangeModel = model(Model[Exchange]{Definition: ExchangeDefinition,
		Kinds:  func(k kind.Kind) bool { return k == kind.Exchange },
		Map:    func(v *Vhost, _ kind.Kind) map[string]*Exchange { return v.Exchanges },
		SetMap: func(v *Vhost, _ kind.Kind, m map[string]*Exchange) { v.Exchanges = m },
		Name:   func(x *Exchange) *string { return &x.Name },
		Meta:   func(x *Exchange) *Meta { return &x.Meta }})
	QueueModel = model(Model[Queue]{Definition: QueueDefinition,
		Kinds:  func(k kind.Kind) bool { return k == kind.Queue },
		Map:    func(v *Vhost, _ kind.Kind) map[string]*Queue { return v.Queues },
		SetMap: func(v *Vhost, _ kind.Kind, m map[string]*Queue) { v.Queues = m },
		Name:   func(q *Queue) *string { return &q.Name },
		Meta:   func(q *Queue) *Meta { return &q.Meta }})
	PolicyModel = model(Model[Policy]{Definition: PolicyDefinition,
		Kinds:  kind.Kind.Policy,
		Map:    (*Vhost).PoliciesOf,
		SetMap: (*Vhost).SetPoliciesOf,
		Name:   func(p *Policy) *string { return &p.Name },
		Meta:   func(p *Policy) *Meta { return &p.Meta }})
)

// NewNamed is a new object of Typed kind t named name, each setting that
// has a default at it (what RabbitMQ takes for a setting not given).
func NewNamed(t Typed, name string) Named {
	o := t.Renamed(t.New(), name)
	for _, s := range t.Def().Settings {
		if s.Default != nil && s.Set != nil {
			s.Set(o, s.Default)
		}
	}
	return o
}

// TypedKinds are the Typed kinds, in the registry's order of their kinds.
func TypedKinds() []Typed { return []Typed{ExchangeModel, QueueModel, PolicyModel} }

// TypedOf is the Typed kind that carries kind k; false for none.
func TypedOf(k kind.Kind) (Typed, bool) {
	for _, t := range TypedKinds() {
		if t.Carries(k) {
			return t, true
		}
	}
	return nil, false
}

// ModelOf is the Model of the objects *T; nil for a type that is none.
func ModelOf[T any]() *Model[T] {
	for _, t := range TypedKinds() {
		if m, ok := t.(*Model[T]); ok {
			return m
		}
	}
	return nil
}

func (x *Exchange) Typed() Typed       { return ExchangeModel }
func (x *Exchange) ObjectName() string { return x.Name }
func (x *Exchange) ObjectPos() Pos     { return x.Pos }
func (q *Queue) Typed() Typed          { return QueueModel }
func (q *Queue) ObjectName() string    { return q.Name }
func (q *Queue) ObjectPos() Pos        { return q.Pos }
func (p *Policy) Typed() Typed         { return PolicyModel }
func (p *Policy) ObjectName() string   { return p.Name }
func (p *Policy) ObjectPos() Pos       { return p.Pos }
