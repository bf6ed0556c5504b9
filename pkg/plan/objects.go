package plan

import (
	"slices"

	"github.com/mqctl/mqctl/pkg/kind"
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
	// print is o's print, which the ownership record keeps (print.go).
	print func(o Object) Print
	// printOver, when set, is the print of want written over have by an
	// update, where it is not want's own (a user's plaintext password,
	// whose stored hash the write keeps: afterPrint).
	printOver func(have, want Object) Print
}

// vhostKinds are the kinds with types of their own (kind.Spec.Item nil)
// that live in a vhost; bindings, which have no name of their own in a
// vhost, are looked up by their print of BindingName.
// Every kind of policy (kind.PolicyKinds) is one of them, carried as a
// PolicyObject.
var vhostKinds = func() map[Kind]vhostKind {
	m := map[Kind]vhostKind{
		KindExchange: inMap(func(v *topology.Vhost) map[string]*topology.Exchange { return v.Exchanges },
			func(o ExchangeObject) *topology.Exchange { return o.Exchange }, func(e *topology.Exchange) Object { return ExchangeObject{e} }, ExchangePrint),
		KindQueue: inMap(func(v *topology.Vhost) map[string]*topology.Queue { return v.Queues },
			func(o QueueObject) *topology.Queue { return o.Queue }, func(q *topology.Queue) Object { return QueueObject{q} }, QueuePrint),
		KindBinding: {get: bindingIn, index: bindingIndex, set: setBinding, removeAll: removeBindings},
	}
	for _, k := range kind.PolicyKinds() {
		m[k] = inMap(func(v *topology.Vhost) map[string]*topology.Policy { return v.PoliciesOf(k) },
			func(o PolicyObject) *topology.Policy { return o.Policy }, func(p *topology.Policy) Object { return PolicyObject{p} }, PolicyPrint)
	}
	return m
}()

// inMap is the vhostKind of a kind kept in a map of v by name, carried
// in a plan as O, whose print is printOf.
func inMap[T any, O Object](m func(*topology.Vhost) map[string]*T, from func(O) *T, to func(*T) Object, printOf func(*T) Print) vhostKind {
	return vhostKind{
		names: func(v *topology.Vhost) []string { return sortedKeys(m(v)) },
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

// itemKind is the vhostKind of a kind carried as topology.Item.
func itemKind(k Kind) vhostKind {
	return vhostKind{
		names:     func(v *topology.Vhost) []string { return v.Items.Names(k) },
		print:     func(o Object) Print { return ItemPrint(o.(ItemObject).Item) },
		printOver: func(have, want Object) Print { return afterPrint(have.(ItemObject).Item, want.(ItemObject).Item) },
		get:       func(v *topology.Vhost, name string) Object { return itemIn(v.Items, k, name) },
		set: func(v *topology.Vhost, name string, o Object) {
			if it, ok := o.(ItemObject); ok && it.Item != nil {
				v.Items.Put(it.Item)
				return
			}
			v.Items.Delete(k, name)
		},
	}
}

// itemIn returns the item of kind k named name that s holds, nil when
// it holds none.
func itemIn(s topology.Items, k Kind, name string) Object {
	if it := s.Get(k, name); it != nil {
		return ItemObject{it}
	}
	return nil
}

// vhostKindOf returns the vhostKind of k; false for a kind that does not
// live in a vhost (vhosts themselves, the broker's own kinds) or that
// mqctl does not know.
func vhostKindOf(k Kind) (vhostKind, bool) {
	if a, ok := vhostKinds[k]; ok {
		return a, true
	}
	if s, ok := kind.Of(k); ok && s.Item != nil && !s.Broker {
		return itemKind(k), true
	}
	return vhostKind{}, false
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

// bindingIndex looks up the bindings of v by BindingName.
func bindingIndex(v *topology.Vhost) func(string) Object {
	byName := make(map[string]*topology.Binding, len(v.Bindings))
	for _, b := range v.Bindings {
		byName[BindingName(b)] = b
	}
	return func(name string) Object {
		if b := byName[name]; b != nil {
			return BindingObject{b}
		}
		return nil
	}
}

// bindingIn returns the binding of v whose BindingName is name.
func bindingIn(v *topology.Vhost, name string) Object {
	for _, b := range v.Bindings {
		if BindingName(b) == name {
			return BindingObject{b}
		}
	}
	return nil
}

// setBinding adds o's binding to v, or removes the binding named name.
func setBinding(v *topology.Vhost, name string, o Object) {
	if b, ok := o.(BindingObject); ok && b.Binding != nil {
		v.Bindings = append(v.Bindings, b.Binding)
		return
	}
	for i, b := range v.Bindings {
		if BindingName(b) == name {
			v.Bindings = append(v.Bindings[:i], v.Bindings[i+1:]...)
			return
		}
	}
}

// removeBindings removes the bindings of v whose BindingName is in names.
func removeBindings(v *topology.Vhost, names map[string]bool) {
	v.Bindings = slices.DeleteFunc(v.Bindings, func(b *topology.Binding) bool { return names[BindingName(b)] })
}
