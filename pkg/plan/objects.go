package plan

import (
	"iter"
	"maps"

	"github.com/mqctl/mqctl/pkg/kind"
	pj "github.com/mqctl/mqctl/pkg/planjson"
	"github.com/mqctl/mqctl/pkg/topology"
)

// vhostKind is where a vhost's objects of one kind live in a
// topology.Vhost, how a plan's Object carries one and how the diff meets
// them. The stages that look an object up by kind and name or put one
// into a vhost (the diff, the projection of a plan, the check for stale
// ownership entries, apply's visibility wait) go through it rather than a
// switch of their own.
type vhostKind struct {
	// get returns the object name of v, nil when v holds none.
	get func(v *topology.Vhost, name string) Object
	// set makes v hold o as name, or hold none when o is nil.
	set func(v *topology.Vhost, name string, o Object)
	// index, when set, is a lookup by name over v's objects built once:
	// for a kind kept in a list (bindings), where get is a pass over the
	// list per name (Lookup).
	index func(v *topology.Vhost) func(name string) Object
	// removeAll, when set, removes the objects of names from v at once:
	// for a kind kept in a list (bindings), where removing each on its
	// own would cost a pass over the list (a teardown's 25,000 bindings).
	removeAll func(v *topology.Vhost, names map[string]bool)
	// names lists the names of v's objects of the kind, sorted: those the
	// diff meets one by one (differ.named). Nil for bindings, which the
	// diff meets by key.
	names func(v *topology.Vhost) []string
	// keys, when set, yields the same names as names in no order (as a
	// map yields them), and how many; has reports whether v holds one:
	// the diff sorts only the changes they make (differ.named).
	keys func(v *topology.Vhost) (iter.Seq[string], int)
	has  func(v *topology.Vhost, name string) bool
	// print is o's print, which the ownership record keeps (print.go).
	print func(o Object) Print
	// printOver, when set, is the print of want written over have by an
	// update, where it is not want's own (a user's plaintext password,
	// whose stored hash the write keeps: afterPrint).
	printOver func(have, want Object) Print
}

// objectType is what the plan knows of one type of Object, in the file
// of its kinds (kind_vhost.go, kind_exchange.go, kind_queue.go,
// kind_binding.go, kind_policy.go, kind_item.go): which kinds it carries,
// how a vhost holds the objects of each, and how the object is read back
// from a saved plan and from the public JSON plan. Its methods as an
// Object are the rest: its fields, text, JSON and saved form.
type objectType struct {
	// object is an empty Object of the type: it says which kinds the
	// type carries (Object.carries).
	object Object
	// in is how a vhost holds the objects of kind k, a kind the type
	// carries; nil for a type whose kinds no vhost holds (vhosts).
	in func(k Kind) vhostKind
	// saved is how the saved plan holds an object of the type: under its
	// key, its value (savedObject).
	saved savedForm
	// fromJSON is likewise the object of the type a JSON plan's object
	// holds.
	fromJSON func(o *pj.Object) Object
}

// objectTypes are the plan's types of Object. A kind of the registry
// (kind.All) that none carries fails TestEveryKindHasAnObjectType.
var objectTypes = func() []objectType {
	out := []objectType{vhostObjects, bindingObjects, itemObjects}
	for _, t := range topology.TypedKinds() {
		out = append(out, definedObjects(t))
	}
	return out
}()

// objectTypeOf returns the type of Object that carries kind k; false for
// a kind mqctl does not know.
func objectTypeOf(k Kind) (objectType, bool) {
	for _, t := range objectTypes {
		if objCarries(t.object, k) {
			return t, true
		}
	}
	return objectType{}, false
}

// wrap is the Object to makes of x; nil (not a typed nil) when x is.
func wrap[T any](x *T, to func(*T) Object) Object {
	if x == nil {
		return nil
	}
	return to(x)
}

// vhostKinds are the kinds whose objects live in a vhost (all but vhosts
// themselves and the broker's own kinds, kind.Spec.Broker), each with the
// vhostKind of its type of Object.
var vhostKinds = func() map[Kind]vhostKind {
	m := map[Kind]vhostKind{}
	for _, s := range kind.All() {
		if t, ok := objectTypeOf(s.Kind); ok && t.in != nil && !s.Broker {
			m[s.Kind] = t.in(s.Kind)
		}
	}
	return m
}()

// inMap is the vhostKind of a kind kept in a map of v by name, carried
// in a plan as O, whose print is printOf.
func inMap[T any, O Object](m func(*topology.Vhost) map[string]*T, from func(O) *T, to func(*T) Object, printOf func(*T) Print) vhostKind {
	return vhostKind{
		names: func(v *topology.Vhost) []string { return sortedKeys(m(v)) },
		keys:  func(v *topology.Vhost) (iter.Seq[string], int) { return maps.Keys(m(v)), len(m(v)) },
		has:   func(v *topology.Vhost, name string) bool { _, ok := m(v)[name]; return ok },
		print: func(o Object) Print { return printOf(from(o.(O))) },
		get: func(v *topology.Vhost, name string) Object {
			if o := m(v)[name]; o != nil {
				return to(o)
			}
			return nil
		},
		set: func(v *topology.Vhost, name string, o Object) {
			if x, ok := o.(O); ok && from(x) != nil {
				m(v)[name] = from(x)
				return
			}
			delete(m(v), name)
		},
	}
}

// vhostKindOf returns the vhostKind of k; false for a kind that does not
// live in a vhost (vhosts themselves, the broker's own kinds) or that
// mqctl does not know.
func vhostKindOf(k Kind) (vhostKind, bool) {
	a, ok := vhostKinds[k]
	return a, ok
}

// ObjectIn returns the object of kind k named name (for a binding, its
// BindingName) that vhost v holds, nil when it holds none or k is not a
// kind of a vhost's objects.
func ObjectIn(v *topology.Vhost, k Kind, name string) Object {
	a, ok := vhostKindOf(k)
	if !ok || v == nil {
		return nil
	}
	return a.get(v, name)
}

// ObjectOf returns the object of kind k named name (for a binding, its
// BindingName) that t holds: a vhost itself (a kind.Spec.Container), an
// object of the broker's own (vhost ""), or one of vhost's; nil when t
// holds none.
func ObjectOf(t *topology.Topology, k Kind, vhost, name string) Object {
	switch {
	case t == nil:
		return nil
	case k.Container():
		if v := t.Vhosts[name]; v != nil {
			return vhostMeta(v)
		}
		return nil
	case vhost == "":
		if it := t.Items.Get(k, name); it != nil {
			return ItemObject{Item: it}
		}
		return nil
	}
	return ObjectIn(t.Vhosts[vhost], k, name)
}

// Lookup returns a function that looks up v's objects of kind k by name
// (a binding by its BindingName), as ObjectIn does, for many names: for
// bindings it indexes them once. It finds nothing for a kind that is not
// a kind of a vhost's objects, or when v is nil.
func Lookup(v *topology.Vhost, k Kind) func(name string) Object {
	a, ok := vhostKindOf(k)
	switch {
	case !ok || v == nil:
		return func(string) Object { return nil }
	case a.index != nil:
		return a.index(v)
	}
	return func(name string) Object { return a.get(v, name) }
}
