package plan

import (
	"slices"

	"github.com/mqctl/mqctl/pkg/kind"
	pj "github.com/mqctl/mqctl/pkg/planjson"
	"github.com/mqctl/mqctl/pkg/topology"
)

// A binding in a plan: its Object and how a vhost holds bindings, in a
// list, looked up by their print of BindingName.

// BindingObject is a binding in a change.
type BindingObject struct{ *topology.Binding }

// bindingObjects is what the plan knows of bindings (objectType).
var bindingObjects = objectType{
	object: BindingObject{},
	in: func(Kind) vhostKind {
		return vhostKind{get: bindingIn, index: bindingIndex, set: setBinding, removeAll: removeBindings}
	},
	saved: savedAs("binding", func(o BindingObject) *topology.Binding { return o.Binding }, func(b *topology.Binding) Object { return BindingObject{b} }),
	fromJSON: func(o *pj.Object) Object {
		if o.Binding == nil {
			return nil
		}
		return BindingObject{planBinding(*o.Binding)}
	},
}

func (o BindingObject) carries(k Kind) bool { return k == kind.Binding }

// Its identity is all of it, so it has no fields.
func (o BindingObject) fieldsFrom(Kind, Object) []FieldChange { return nil }

func (o BindingObject) headline() string { return "" }

func (o BindingObject) describe() []string { return nil }

func (o BindingObject) json() *pj.Object { return &pj.Object{Binding: jsonBinding(o.Binding)} }

func (o BindingObject) normalize() { o.Arguments = o.Arguments.Normalized() }

func (o BindingObject) ObjectPos() topology.Pos { return o.Pos }

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
