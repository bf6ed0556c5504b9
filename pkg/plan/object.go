package plan

import (
	"fmt"
	"sort"

	pj "github.com/mqctl/mqctl/pkg/planjson"
	"github.com/mqctl/mqctl/pkg/topology"
)

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
	if o == nil {
		return nil
	}
	for _, t := range objectTypes {
		if x := t.fromSaved(o); x != nil {
			return x
		}
	}
	return nil
}

// planObject returns the Object of a JSON plan's object; nil for none.
func planObject(o *pj.Object) Object {
	if o == nil {
		return nil
	}
	for _, t := range objectTypes {
		if x := t.fromJSON(o); x != nil {
			return x
		}
	}
	return nil
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
