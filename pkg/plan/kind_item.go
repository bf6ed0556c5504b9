package plan

import (
	"github.com/mqctl/mqctl/pkg/kind"
	pj "github.com/mqctl/mqctl/pkg/planjson"
	"github.com/mqctl/mqctl/pkg/topology"
)

// The kinds carried as topology.Item (kind.Spec.Item: vhost limits,
// shovels, federation, users and their access) in a plan: one Object for
// all of them, and how a vhost holds them (topology.Vhost.Items).

// ItemObject is an object of a kind carried as topology.Item (vhost
// limits, shovels, federation, users, permissions, …) in a change.
type ItemObject struct{ *topology.Item }

// itemObjects is what the plan knows of every kind carried as
// topology.Item (objectType).
var itemObjects = objectType{
	object: ItemObject{},
	in:     itemKind,
	saved:  savedAs("item", func(o ItemObject) *topology.Item { return o.Item }, func(it *topology.Item) Object { return ItemObject{it} }),
	fromJSON: func(o *pj.Object) Object {
		it := o.Item
		if it == nil {
			return nil
		}
		return ItemObject{&topology.Item{Kind: Kind(it.Kind), Name: it.Name, Settings: it.Settings, Secret: it.Secret, Refs: it.Refs}}
	},
}

func (o ItemObject) carries(k Kind) bool { return k.Item() != nil }

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

func (o ItemObject) fieldsFrom(k Kind, have Object) []FieldChange {
	if h, ok := have.(ItemObject); ok {
		spec, _ := kind.Of(k)
		return itemFields(spec, h.Item, o.Item)
	}
	return nil
}

func (o ItemObject) headline() string { return "" }

func (o ItemObject) describe() []string { return describeArgs(o.Masked()) }

// json is masked: no JSON plan holds a secret.
func (o ItemObject) json() *pj.Object {
	it := o.Item
	return &pj.Object{Item: &pj.Item{Kind: string(it.Kind), Name: it.Name, Settings: it.Masked(), Secret: it.Secret, Refs: it.Refs}}
}

func (o ItemObject) normalize() { o.Settings = o.Settings.Normalized() }

func (o ItemObject) ObjectPos() topology.Pos { return o.Pos }

// Loosened is the item update c writes first, before the apply's
// declarations, for a kind whose settings bound them
// (kind.ItemSpec.Loosen): c's item with each setting the looser of the
// broker's and the file's. Nil when c is no such update or loosens
// nothing.
func Loosened(c *Change) *topology.Item {
	spec := c.Kind.Item()
	if spec == nil || spec.Loosen == nil || c.Action != Update {
		return nil
	}
	have, hok := c.Before.(ItemObject)
	want, wok := c.After.(ItemObject)
	if !hok || !wok || have.Item == nil || want.Item == nil {
		return nil
	}
	settings := spec.Loosen(have.Settings, want.Settings)
	if settings == nil {
		return nil
	}
	it := *want.Item
	it.Settings = settings
	return &it
}
