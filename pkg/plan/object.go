package plan

import (
	"fmt"
	"sort"

	"github.com/mqctl/mqctl/pkg/kind"
	pj "github.com/mqctl/mqctl/pkg/planjson"
	"github.com/mqctl/mqctl/pkg/topology"
)

// The plan's objects, one type per shape of kind (see Object).
type (
	// ExchangeObject is an exchange in a change.
	ExchangeObject struct{ *topology.Exchange }
	// QueueObject is a queue in a change.
	QueueObject struct{ *topology.Queue }
	// BindingObject is a binding in a change.
	BindingObject struct{ *topology.Binding }
	// PolicyObject is a policy or an operator policy in a change.
	PolicyObject struct{ *topology.Policy }
	// ItemObject is an object of a kind carried as topology.Item (vhost
	// limits, shovels, federation, users, permissions, …) in a change.
	ItemObject struct{ *topology.Item }
)

// VhostMeta is the mutable part of a vhost, and a vhost in a change.
type VhostMeta struct {
	Name             string `json:"name"`
	Description      string `json:"description,omitempty"`
	DefaultQueueType string `json:"default_queue_type,omitempty"`
}

// savedObject is an Object in the saved plan: exactly one field is set.
type savedObject struct {
	Vhost    *VhostMeta         `json:"vhost,omitempty"`
	Exchange *topology.Exchange `json:"exchange,omitempty"`
	Queue    *topology.Queue    `json:"queue,omitempty"`
	Binding  *topology.Binding  `json:"binding,omitempty"`
	Policy   *topology.Policy   `json:"policy,omitempty"`
	Item     *topology.Item     `json:"item,omitempty"`
}

// object returns the Object o holds; nil for none.
func (o *savedObject) object() Object {
	switch {
	case o == nil:
		return nil
	case o.Vhost != nil:
		return o.Vhost
	case o.Exchange != nil:
		return ExchangeObject{o.Exchange}
	case o.Queue != nil:
		return QueueObject{o.Queue}
	case o.Binding != nil:
		return BindingObject{o.Binding}
	case o.Policy != nil:
		return PolicyObject{o.Policy}
	case o.Item != nil:
		return ItemObject{o.Item}
	}
	return nil
}

// planObject returns the Object of a JSON plan's object; nil for none.
func planObject(o *pj.Object) Object {
	switch {
	case o == nil:
		return nil
	case o.Vhost != nil:
		return &VhostMeta{Name: o.Vhost.Name, Description: o.Vhost.Description, DefaultQueueType: o.Vhost.DefaultQueueType}
	case o.Exchange != nil:
		x := o.Exchange
		return ExchangeObject{&topology.Exchange{Name: x.Name, Type: x.Type, Durable: x.Durable, AutoDelete: x.AutoDelete, Internal: x.Internal, Arguments: x.Arguments}}
	case o.Queue != nil:
		q := o.Queue
		return QueueObject{&topology.Queue{Name: q.Name, Type: q.Type, Durable: q.Durable, AutoDelete: q.AutoDelete, Arguments: q.Arguments}}
	case o.Binding != nil:
		return BindingObject{planBinding(*o.Binding)}
	case o.Policy != nil:
		p := o.Policy
		return PolicyObject{&topology.Policy{Name: p.Name, Pattern: p.Pattern, ApplyTo: p.ApplyTo, Priority: p.Priority, Definition: p.Definition}}
	case o.Item != nil:
		it := o.Item
		return ItemObject{&topology.Item{Kind: Kind(it.Kind), Name: it.Name, Settings: it.Settings, Secret: it.Secret, Refs: it.Refs}}
	}
	return nil
}

// QueueType returns the type of the queue o (classic when unknown, or
// when o is not a queue).
func QueueType(o Object) string {
	if q, ok := o.(QueueObject); ok && q.Type != "" {
		return q.Type
	}
	return topology.QueueClassic
}

// ObjectFields are the fields of an object of kind k that differ between
// have (as the broker holds it) and want, compared as the diff compares
// them; none when the broker holds want. A binding has no fields (its
// identity is all of it).
func ObjectFields(k Kind, have, want Object) []FieldChange {
	if have == nil || want == nil {
		return nil
	}
	return want.fieldsFrom(k, have)
}

// jsonObject returns o in the public JSON plan; nil for none.
func jsonObject(o Object) *pj.Object {
	if o == nil {
		return nil
	}
	return o.json()
}

// describe lists the settings of an object being created.
func describe(o Object) []string {
	if o == nil {
		return nil
	}
	return o.describe()
}

// describeArgs lists an argument table's entries, sorted by key.
func describeArgs(a topology.Args) []string {
	keys := a.Keys()
	sort.Strings(keys)
	out := make([]string, 0, len(keys))
	for _, k := range keys {
		out = append(out, fmt.Sprintf("%s: %s", k, show(a[k])))
	}
	return out
}

// describeFlags lists the flags of o (an exchange or a queue) that are
// not RabbitMQ's defaults.
func describeFlags[T any](flags []topology.Flag[T], o T) []string {
	var out []string
	for _, f := range flags {
		if v := f.Get(o); v != f.Default {
			out = append(out, fmt.Sprintf("%s: %t", f.Key, v))
		}
	}
	return out
}

// The vhost.

func (m *VhostMeta) fieldsFrom(_ Kind, have Object) []FieldChange {
	h, ok := have.(*VhostMeta)
	if !ok {
		return nil
	}
	return vhostFields(&topology.Vhost{Description: m.Description, DefaultQueueType: m.DefaultQueueType},
		&topology.Vhost{Description: h.Description, DefaultQueueType: h.DefaultQueueType})
}

func (m *VhostMeta) headline() string { return "" }

func (m *VhostMeta) describe() []string {
	var out []string
	if m.Description != "" {
		out = append(out, "description: "+show(m.Description))
	}
	if m.DefaultQueueType != "" {
		out = append(out, "default_queue_type: "+m.DefaultQueueType)
	}
	return out
}

func (m *VhostMeta) json() *pj.Object {
	return &pj.Object{Vhost: &pj.Vhost{Name: m.Name, Description: m.Description, DefaultQueueType: m.DefaultQueueType}}
}

func (m *VhostMeta) normalize() {}

func (m *VhostMeta) saved() *savedObject { return &savedObject{Vhost: m} }

func (m *VhostMeta) pos() topology.Pos { return topology.Pos{} }

// The exchange.

func (o ExchangeObject) fieldsFrom(k Kind, have Object) []FieldChange {
	if h, ok := have.(ExchangeObject); ok {
		return definitionFields(topology.ExchangeDefinition, h.Exchange, o.Exchange, !k.InPlace())
	}
	return nil
}

func (o ExchangeObject) headline() string { return " (" + o.Type + ")" }

func (o ExchangeObject) describe() []string {
	return append(describeFlags(topology.ExchangeFlags, o.Exchange), describeArgs(o.Arguments)...)
}

func (o ExchangeObject) json() *pj.Object {
	x := o.Exchange
	return &pj.Object{Exchange: &pj.Exchange{Name: x.Name, Type: x.Type, Durable: x.Durable, AutoDelete: x.AutoDelete, Internal: x.Internal, Arguments: x.Arguments}}
}

func (o ExchangeObject) normalize() { o.Arguments = o.Arguments.Normalized() }

func (o ExchangeObject) saved() *savedObject { return &savedObject{Exchange: o.Exchange} }

func (o ExchangeObject) pos() topology.Pos { return o.Pos }

// The queue.

func (o QueueObject) fieldsFrom(k Kind, have Object) []FieldChange {
	if h, ok := have.(QueueObject); ok {
		return definitionFields(topology.QueueDefinition, h.Queue, o.Queue, !k.InPlace())
	}
	return nil
}

func (o QueueObject) headline() string { return " (" + topology.QueueTypeOrClassic(o.Type) + ")" }

func (o QueueObject) describe() []string {
	return append(describeFlags(topology.QueueFlags, o.Queue), describeArgs(o.Arguments)...)
}

func (o QueueObject) json() *pj.Object {
	q := o.Queue
	return &pj.Object{Queue: &pj.Queue{Name: q.Name, Type: q.Type, Durable: q.Durable, AutoDelete: q.AutoDelete, Arguments: q.Arguments}}
}

func (o QueueObject) normalize() { o.Arguments = o.Arguments.Normalized() }

func (o QueueObject) saved() *savedObject { return &savedObject{Queue: o.Queue} }

func (o QueueObject) pos() topology.Pos { return o.Pos }

// The binding: its identity is all of it, so it has no fields.

func (o BindingObject) fieldsFrom(Kind, Object) []FieldChange { return nil }

func (o BindingObject) headline() string { return "" }

func (o BindingObject) describe() []string { return nil }

func (o BindingObject) json() *pj.Object { return &pj.Object{Binding: jsonBinding(o.Binding)} }

func (o BindingObject) normalize() { o.Arguments = o.Arguments.Normalized() }

func (o BindingObject) saved() *savedObject { return &savedObject{Binding: o.Binding} }

func (o BindingObject) pos() topology.Pos { return o.Pos }

// The policy and the operator policy.

func (o PolicyObject) fieldsFrom(k Kind, have Object) []FieldChange {
	if h, ok := have.(PolicyObject); ok {
		return definitionFields(topology.PolicyDefinition, h.Policy, o.Policy, !k.InPlace())
	}
	return nil
}

func (o PolicyObject) headline() string { return "" }

func (o PolicyObject) describe() []string {
	var out []string
	for _, s := range topology.PolicySettings {
		v := s.Value(o.Policy)
		if s.Text {
			v = show(v)
		}
		out = append(out, fmt.Sprintf("%s: %v", s.Key, v))
	}
	return append(out, describeArgs(o.Definition)...)
}

func (o PolicyObject) json() *pj.Object {
	p := o.Policy
	return &pj.Object{Policy: &pj.Policy{Name: p.Name, Pattern: p.Pattern, ApplyTo: p.ApplyTo, Priority: p.Priority, Definition: p.Definition}}
}

func (o PolicyObject) normalize() { o.Definition = o.Definition.Normalized() }

func (o PolicyObject) saved() *savedObject { return &savedObject{Policy: o.Policy} }

func (o PolicyObject) pos() topology.Pos { return o.Pos }

// The generic kinds.

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

func (o ItemObject) saved() *savedObject { return &savedObject{Item: o.Item} }

func (o ItemObject) pos() topology.Pos { return o.Pos }

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
