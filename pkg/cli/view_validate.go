package cli

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/mqctl/mqctl/pkg/export"
	"github.com/mqctl/mqctl/pkg/kind"
	"github.com/mqctl/mqctl/pkg/loader"
	"github.com/mqctl/mqctl/pkg/plan"
	"github.com/mqctl/mqctl/pkg/topology"
)

// ValidateFormatVersion is the format_version of "mqctl validate -o json",
// documented in docs/validate-json.md. It changes only when a field changes
// meaning or disappears; new fields may be added.
const ValidateFormatVersion = "1"

// validateView shows the file validate loaded: as the JSON document
// (json), as the expanded YAML (expanded), or as a summary for a person
// naming the files.
type validateView struct {
	json, expanded bool
	w              io.Writer
	files          []string
}

func (v validateView) write(t *topology.Topology) error {
	switch {
	case v.json:
		if err := writeValidateJSON(v.w, t); err != nil {
			return fmt.Errorf("writing JSON: %w", err)
		}
		return nil
	case v.expanded:
		return export.WriteYAML(v.w, t, export.Options{Sugar: false, MaskSecrets: true})
	default:
		return writeValidateSummary(v.w, v.files, t)
	}
}

// The document of "validate -o json": the expanded topology, each object
// with where it is declared when that is known ("pos" omitted otherwise).
// Its objects are this file's own types, not pkg/topology's: a field
// renamed in the model (whose tags are also the saved plan's) does not
// change this document; TestValidateJSONEveryField pins them.
type validateDoc struct {
	FormatVersion string                   `json:"format_version"`
	Vhosts        map[string]validateVhost `json:"vhosts"`
	// Items are the broker's own objects of the generic kinds (users,
	// their limits), by kind and name, secrets masked.
	Items map[kind.Kind]map[string]positioned[validateItem] `json:"items,omitempty"`
}

type validateVhost struct {
	Name             string                                  `json:"name"`
	Description      string                                  `json:"description,omitempty"`
	DefaultQueueType string                                  `json:"default_queue_type,omitempty"`
	Tags             []string                                `json:"tags,omitzero"`
	Exchanges        map[string]positioned[validateExchange] `json:"exchanges"`
	Queues           map[string]positioned[validateQueue]    `json:"queues"`
	Bindings         []positioned[validateBinding]           `json:"bindings"`
	Policies         map[string]positioned[validatePolicy]   `json:"policies"`
	OperatorPolicies map[string]positioned[validatePolicy]   `json:"operator_policies"`
	// Items are the vhost's objects of the generic kinds (limits,
	// permissions, shovels, …), by kind and name, secrets masked.
	Items map[kind.Kind]map[string]positioned[validateItem] `json:"items,omitempty"`
	Pos   *plan.Position                                    `json:"pos,omitempty"`
}

type validateExchange struct {
	Name       string         `json:"name"`
	Type       string         `json:"type"`
	Durable    bool           `json:"durable"`
	AutoDelete bool           `json:"auto_delete"`
	Internal   bool           `json:"internal"`
	Arguments  map[string]any `json:"arguments,omitempty"`
}

// validateQueue is a queue with the file's alert: section, which drives
// status --check and is no part of the broker's queue (nor of a plan's).
type validateQueue struct {
	Name       string         `json:"name"`
	Type       string         `json:"type"`
	Durable    bool           `json:"durable"`
	AutoDelete bool           `json:"auto_delete"`
	Arguments  map[string]any `json:"arguments,omitempty"`
	Alert      *validateAlert `json:"alert,omitempty"`
}

type validateAlert struct {
	MaxDepth int64 `json:"max_depth"`
}

type validateBinding struct {
	Source          string         `json:"source"`
	Destination     string         `json:"destination"`
	DestinationType string         `json:"destination_type"`
	RoutingKey      string         `json:"routing_key"`
	Arguments       map[string]any `json:"arguments,omitempty"`
}

type validatePolicy struct {
	Name       string         `json:"name"`
	Pattern    string         `json:"pattern"`
	ApplyTo    string         `json:"apply-to"`
	Priority   int            `json:"priority"`
	Definition map[string]any `json:"definition"`
}

// validateItem is an object of a generic kind, its secrets masked (as
// topology.Item's own JSON masks them).
type validateItem struct {
	Kind     kind.Kind         `json:"kind"`
	Name     string            `json:"name"`
	Settings map[string]any    `json:"settings,omitempty"`
	Secret   []string          `json:"secret,omitempty"`
	Refs     map[string]string `json:"refs,omitempty"`
}

func exchangeDoc(x *topology.Exchange) validateExchange {
	return validateExchange{Name: x.Name, Type: x.Type, Durable: x.Durable, AutoDelete: x.AutoDelete, Internal: x.Internal, Arguments: x.Arguments}
}

func queueDoc(q *topology.Queue) validateQueue {
	out := validateQueue{Name: q.Name, Type: q.Type, Durable: q.Durable, AutoDelete: q.AutoDelete, Arguments: q.Arguments}
	if q.Alert != nil {
		out.Alert = &validateAlert{MaxDepth: q.Alert.MaxDepth}
	}
	return out
}

func bindingDoc(b *topology.Binding) validateBinding {
	return validateBinding{Source: b.Source, Destination: b.Destination, DestinationType: b.DestinationType, RoutingKey: b.RoutingKey, Arguments: b.Arguments}
}

func policyDoc(p *topology.Policy) validatePolicy {
	return validatePolicy{Name: p.Name, Pattern: p.Pattern, ApplyTo: p.ApplyTo, Priority: p.Priority, Definition: p.Definition}
}

func itemDoc(it *topology.Item) validateItem {
	return validateItem{Kind: it.Kind, Name: it.Name, Settings: it.Masked(), Secret: it.Secret, Refs: it.Refs}
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

func posMap[T any, D any](m map[string]T, doc func(T) D, pos func(T) topology.Pos) map[string]positioned[D] {
	out := make(map[string]positioned[D], len(m))
	for k, o := range m {
		out[k] = positioned[D]{doc(o), plan.PositionOf(pos(o))}
	}
	return out
}

// writeValidateJSON writes t as the validate -o json document.
func writeValidateJSON(w io.Writer, t *topology.Topology) error {
	doc := validateDoc{FormatVersion: ValidateFormatVersion, Vhosts: make(map[string]validateVhost, len(t.Vhosts))}
	for name, v := range t.Vhosts {
		vv := validateVhost{
			Name: v.Name, Description: v.Description, DefaultQueueType: v.DefaultQueueType, Tags: v.Tags,
			Exchanges:        posMap(v.Exchanges, exchangeDoc, func(e *topology.Exchange) topology.Pos { return e.Pos }),
			Queues:           posMap(v.Queues, queueDoc, func(q *topology.Queue) topology.Pos { return q.Pos }),
			Bindings:         make([]positioned[validateBinding], len(v.Bindings)),
			Policies:         posMap(v.Policies, policyDoc, policyPos),
			OperatorPolicies: posMap(v.OperatorPolicies, policyDoc, policyPos),
			Pos:              plan.PositionOf(v.Pos),
		}
		for i, b := range v.Bindings {
			vv.Bindings[i] = positioned[validateBinding]{bindingDoc(b), plan.PositionOf(b.Pos)}
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

func policyPos(p *topology.Policy) topology.Pos { return p.Pos }

// itemsDoc is items by kind and name (nil for none), secrets masked.
func itemsDoc(items topology.Items) map[kind.Kind]map[string]positioned[validateItem] {
	if len(items) == 0 {
		return nil
	}
	out := map[kind.Kind]map[string]positioned[validateItem]{}
	for k, byName := range items {
		out[k] = posMap(byName, itemDoc, func(it *topology.Item) topology.Pos { return it.Pos })
	}
	return out
}

// writeValidateSummary prints "<files>: OK — 1 vhost, 2 exchanges, …".
func writeValidateSummary(w io.Writer, files []string, t *topology.Topology) error {
	var exchanges, queues, bindings, policies int
	for _, v := range t.Vhosts {
		exchanges += len(v.Exchanges)
		queues += len(v.Queues)
		bindings += len(v.Bindings)
		for _, k := range kind.PolicyKinds() {
			policies += len(v.PoliciesOf(k))
		}
	}
	names := make([]string, len(files))
	for i, f := range files {
		names[i] = f
		if f == "-" {
			names[i] = loader.StdinName
		}
	}
	_, err := fmt.Fprintf(w, "%s: OK — %s, %s, %s, %s, %s\n", strings.Join(names, ", "),
		pluralCount(len(t.Vhosts), "vhost"), pluralCount(exchanges, "exchange"), pluralCount(queues, "queue"),
		pluralCount(bindings, "binding"), pluralCount(policies, "policy"))
	return err
}

func pluralCount(n int, noun string) string {
	switch {
	case n == 1:
		return "1 " + noun
	case strings.HasSuffix(noun, "y"):
		return fmt.Sprintf("%d %sies", n, strings.TrimSuffix(noun, "y"))
	default:
		return fmt.Sprintf("%d %ss", n, noun)
	}
}
