package cli

import (
	"bytes"
	"encoding/json"
	"io"

	"github.com/mqctl/mqctl/pkg/kind"
	"github.com/mqctl/mqctl/pkg/plan"
	"github.com/mqctl/mqctl/pkg/topology"
)

// ValidateFormatVersion is the format_version of "mqctl validate -o json",
// documented in docs/validate-json.md. It changes only when a field changes
// meaning or disappears; new fields may be added.
const ValidateFormatVersion = "1"

// The document of "validate -o json": the expanded topology, each object
// with where it is declared when that is known ("pos" omitted otherwise).
type validateDoc struct {
	FormatVersion string                   `json:"format_version"`
	Vhosts        map[string]validateVhost `json:"vhosts"`
	// Items are the broker's own objects of the generic kinds (users,
	// their limits), by kind and name, secrets masked.
	Items map[kind.Kind]map[string]positioned[*topology.Item] `json:"items,omitempty"`
}

type validateVhost struct {
	Name             string                                    `json:"name"`
	Description      string                                    `json:"description,omitempty"`
	DefaultQueueType string                                    `json:"default_queue_type,omitempty"`
	Exchanges        map[string]positioned[*topology.Exchange] `json:"exchanges"`
	Queues           map[string]positioned[validateQueue]      `json:"queues"`
	Bindings         []positioned[*topology.Binding]           `json:"bindings"`
	Policies         map[string]positioned[*topology.Policy]   `json:"policies"`
	OperatorPolicies map[string]positioned[*topology.Policy]   `json:"operator_policies"`
	// Items are the vhost's objects of the generic kinds (limits,
	// permissions, shovels, …), by kind and name, secrets masked.
	Items map[kind.Kind]map[string]positioned[*topology.Item] `json:"items,omitempty"`
	Pos   *plan.Position                                      `json:"pos,omitempty"`
}

// validateQueue is a queue with the file's alert: section, which drives
// status --check and is no part of the broker's queue (nor of a plan's).
type validateQueue struct {
	*topology.Queue
	Alert *validateAlert `json:"alert,omitempty"`
}

type validateAlert struct {
	MaxDepth int64 `json:"max_depth"`
}

func queueDoc(q *topology.Queue) validateQueue {
	out := validateQueue{Queue: q}
	if q.Alert != nil {
		out.Alert = &validateAlert{MaxDepth: q.Alert.MaxDepth}
	}
	return out
}

// positioned is an object with its position: the object's own fields,
// then "pos".
type positioned[T any] struct {
	Object T
	Pos    *plan.Position
}

func (p positioned[T]) MarshalJSON() ([]byte, error) {
	obj, err := marshalPlain(p.Object)
	if err != nil || p.Pos == nil {
		return obj, err
	}
	pos, err := marshalPlain(p.Pos)
	if err != nil {
		return nil, err
	}
	if string(obj) == "{}" {
		return append(append([]byte(`{"pos":`), pos...), '}'), nil
	}
	out := append(obj[:len(obj)-1:len(obj)-1], `,"pos":`...)
	return append(append(out, pos...), '}'), nil
}

// marshalPlain is json.Marshal without the escaping of <, > and & (a
// file named "<stdin>" stays readable).
func marshalPlain(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}

func posMap[T any](m map[string]T, pos func(T) topology.Pos) map[string]positioned[T] {
	out := make(map[string]positioned[T], len(m))
	for k, o := range m {
		out[k] = positioned[T]{o, plan.PositionOf(pos(o))}
	}
	return out
}

// writeValidateJSON writes t as the validate -o json document.
func writeValidateJSON(w io.Writer, t *topology.Topology) error {
	doc := validateDoc{FormatVersion: ValidateFormatVersion, Vhosts: make(map[string]validateVhost, len(t.Vhosts))}
	for name, v := range t.Vhosts {
		vv := validateVhost{
			Name: v.Name, Description: v.Description, DefaultQueueType: v.DefaultQueueType,
			Exchanges:        posMap(v.Exchanges, func(e *topology.Exchange) topology.Pos { return e.Pos }),
			Queues:           queuesDoc(v.Queues),
			Bindings:         make([]positioned[*topology.Binding], len(v.Bindings)),
			Policies:         posMap(v.Policies, policyPos),
			OperatorPolicies: posMap(v.OperatorPolicies, policyPos),
			Pos:              plan.PositionOf(v.Pos),
		}
		for i, b := range v.Bindings {
			vv.Bindings[i] = positioned[*topology.Binding]{b, plan.PositionOf(b.Pos)}
		}
		vv.Items = itemsDoc(v.Items)
		doc.Vhosts[name] = vv
	}
	doc.Items = itemsDoc(t.Items)
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(doc)
}

func queuesDoc(queues map[string]*topology.Queue) map[string]positioned[validateQueue] {
	out := make(map[string]positioned[validateQueue], len(queues))
	for name, q := range queues {
		out[name] = positioned[validateQueue]{queueDoc(q), plan.PositionOf(q.Pos)}
	}
	return out
}

func policyPos(p *topology.Policy) topology.Pos { return p.Pos }

// itemsDoc is items by kind and name (nil for none); an item's JSON masks
// its secrets (topology.Item.MarshalJSON).
func itemsDoc(items topology.Items) map[kind.Kind]map[string]positioned[*topology.Item] {
	if len(items) == 0 {
		return nil
	}
	out := map[kind.Kind]map[string]positioned[*topology.Item]{}
	for k, byName := range items {
		out[k] = posMap(byName, func(it *topology.Item) topology.Pos { return it.Pos })
	}
	return out
}
