package plan

import (
	"encoding/json"
	"fmt"
	"iter"
	"reflect"
	"slices"
	"strings"
	"sync"

	pj "github.com/mqctl/mqctl/pkg/planjson"
	"github.com/mqctl/mqctl/pkg/topology"
)

// An object of a kind with a type of its own that a vhost holds by name
// (topology.TypedKinds: exchanges, queues, the kinds of policy) in a
// plan: the object itself, a topology.Named (an *topology.Exchange,
// *Queue or *Policy), whose kind's topology.Typed answers what the plan
// asks of it, so that the plan names none of them.

// Of is x as an Object of a plan; nil when x is nil.
func Of[T any, P interface {
	*T
	topology.Named
}](x P) Object {
	if x == nil {
		return nil
	}
	return x
}

// As returns the object o carries when it is a *T (an exchange:
// As[topology.Exchange](o)); false when it is not, or is nil.
func As[T any](o Object) (*T, bool) {
	x, ok := any(o).(*T)
	return x, ok && x != nil
}

// Named returns the object of a typed kind that o is; false when o is of
// another kind, or nil. (No Object holds a nil pointer: Of, and every
// reader of objects, give nil for none.)
func Named(o Object) (topology.Named, bool) {
	n, ok := o.(topology.Named)
	return n, ok
}

// definedObjects is what the plan knows of the objects of typed kind t
// (objectType): every stage meets them through t.
func definedObjects(t topology.Typed) objectType {
	return objectType{
		object: t.New(),
		in:     func(k Kind) vhostKind { return inNamed(t, k) },
		saved: savedForm{
			key: t.Key(),
			value: func(o Object) (any, bool) {
				x, ok := Named(o)
				if !ok || x.Typed() != t {
					return nil, false
				}
				return x, true
			},
			read: func(dec *json.Decoder) (Object, error) {
				x := t.New()
				if err := dec.Decode(x); err != nil {
					return nil, fmt.Errorf("%s: %w", t.Key(), err)
				}
				return x, nil
			},
		},
		fromJSON: func(o *pj.Object) Object {
			f := publicForms()[t.Key()]
			v := reflect.ValueOf(o).Elem().Field(f.field)
			if v.IsNil() {
				return nil
			}
			x := t.New()
			f.read(v.Elem(), reflect.ValueOf(x).Elem())
			return x
		},
	}
}

// inNamed is the vhostKind of typed kind t's objects of kind k.
func inNamed(t topology.Typed, k Kind) vhostKind {
	def := t.Def()
	return vhostKind{
		names: func(v *topology.Vhost) []string { return slices.Sorted(t.In(v, k).Keys()) },
		keys: func(v *topology.Vhost) (iter.Seq[string], int) {
			m := t.In(v, k)
			return m.Keys(), m.Len()
		},
		has:   func(v *topology.Vhost, name string) bool { return t.In(v, k).Has(name) },
		print: func(o Object) Print { return definitionPrint(def, o.(topology.Named)) },
		get: func(v *topology.Vhost, name string) Object {
			if o, ok := t.In(v, k).Get(name); ok {
				return o
			}
			return nil
		},
		set: func(v *topology.Vhost, name string, o Object) {
			if x, ok := Named(o); ok {
				t.In(v, k).Set(name, x)
				return
			}
			t.In(v, k).Set(name, nil)
		},
	}
}

// The answers of objectMethods for an object of a typed kind, from its
// kind's topology.Typed (object.go's objFields, objHeadline, … ask them).

func definedFieldsFrom(o topology.Named, k Kind, have Object) []FieldChange {
	if h, ok := Named(have); ok && h.Typed() == o.Typed() {
		return definitionFields(o.Typed().Def(), h, o, !k.InPlace())
	}
	return nil
}

func definedJSON(o topology.Named) *pj.Object {
	f := publicForms()[o.Typed().Key()]
	out := &pj.Object{}
	v := reflect.New(f.typ)
	f.write(reflect.ValueOf(o).Elem(), v.Elem())
	reflect.ValueOf(out).Elem().Field(f.field).Set(v)
	return out
}

// QueueType returns the type of the queue o (classic when unknown, or
// when o is not a queue).
func QueueType(o Object) string {
	if q, ok := As[topology.Queue](o); ok && q.Type != "" {
		return q.Type
	}
	return topology.QueueClassic
}

// publicForm is how the objects of a typed kind are written in the public
// JSON plan and read back from it: under the field of planjson.Object
// named as the kind's Key, of type typ, whose fields are the model type's
// of the same JSON names (pairs: the public field's index, the model's).
// The public types are a contract of their own (pkg/planjson, named by
// hand, docs/plan-json.md); TestPublicFormsMatchTheModel fails for a
// public field the model does not have.
type publicForm struct {
	field int
	typ   reflect.Type
	pairs [][2]int
}

// write copies the model object m's fields into the public object p.
func (f publicForm) write(m, p reflect.Value) {
	for _, pr := range f.pairs {
		dst := p.Field(pr[0])
		dst.Set(m.Field(pr[1]).Convert(dst.Type()))
	}
}

// read copies the public object p's fields into the model object m.
func (f publicForm) read(p, m reflect.Value) {
	for _, pr := range f.pairs {
		dst := m.Field(pr[1])
		dst.Set(p.Field(pr[0]).Convert(dst.Type()))
	}
}

// publicForms are the typed kinds' public forms by Key, with the public
// fields no model field matches (unmatched: what
// TestPublicFormsMatchTheModel reports).
var publicForms = sync.OnceValue(func() map[string]publicForm {
	forms, _ := matchPublicForms()
	return forms
})

// matchPublicForms matches each typed kind's public type to its model
// type by JSON names; unmatched names the public fields left over.
func matchPublicForms() (map[string]publicForm, []string) {
	forms := map[string]publicForm{}
	var unmatched []string
	obj := reflect.TypeFor[pj.Object]()
	for _, t := range topology.TypedKinds() {
		model := reflect.TypeOf(t.New()).Elem()
		for i := range obj.NumField() {
			if fieldJSONName(obj.Field(i)) != t.Key() {
				continue
			}
			pub := obj.Field(i).Type.Elem()
			f := publicForm{field: i, typ: pub}
			for j := range pub.NumField() {
				name := fieldJSONName(pub.Field(j))
				k := slices.IndexFunc(reflect.VisibleFields(model), func(sf reflect.StructField) bool {
					return len(sf.Index) == 1 && fieldJSONName(sf) == name && sf.Type.ConvertibleTo(pub.Field(j).Type)
				})
				if k < 0 {
					unmatched = append(unmatched, fmt.Sprintf("%s.%s", pub.Name(), pub.Field(j).Name))
					continue
				}
				f.pairs = append(f.pairs, [2]int{j, reflect.VisibleFields(model)[k].Index[0]})
			}
			forms[t.Key()] = f
		}
		if _, ok := forms[t.Key()]; !ok {
			unmatched = append(unmatched, fmt.Sprintf("planjson.Object has no field %q for %s", t.Key(), model))
		}
	}
	return forms, unmatched
}

// fieldJSONName is a struct field's name in JSON: its tag's, else its own.
func fieldJSONName(f reflect.StructField) string {
	tag := f.Tag.Get("json")
	if i := strings.IndexByte(tag, ','); i >= 0 {
		tag = tag[:i]
	}
	if tag == "" {
		return f.Name
	}
	return tag
}
