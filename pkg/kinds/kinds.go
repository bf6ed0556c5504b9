// Package kinds holds the code of each kind of object that the broker
// changes in place and that mqctl handles through one generic path
// (topology.Item): how the kind is declared in a file, read from the
// broker, written and deleted. Everything else (diff, order, render, JSON
// and saved plans, visibility, export, ownership) is generic over
// topology.Item and the kind's kind.Spec. Adding such a kind is its Spec
// line in pkg/kind, one file here, and its case in pkg/engine's
// TestEveryKindThroughEveryStage (README, "Adding a kind").
package kinds

import (
	"context"
	"fmt"
	"slices"

	"github.com/mqctl/mqctl/pkg/kind"
	"github.com/mqctl/mqctl/pkg/topology"
)

// API is the broker's management API as the handlers use it
// (broker.Client implements it). path is the segments below /api/; op
// says what is attempted, for errors; vhost is the vhost addressed.
type API interface {
	GetJSON(ctx context.Context, out any, op, vhost string, path ...string) error
	PutJSON(ctx context.Context, body any, op, vhost string, path ...string) error
	DeleteJSON(ctx context.Context, op, vhost string, path ...string) error
}

// Shape is how a kind's section of a vhost in topology.yaml holds its
// items.
type Shape int

const (
	// Single: the section is one item, named after its vhost
	// (limits: {max-queues: 10}).
	Single Shape = iota
	// Named: the section maps names to items (shovels: {name: {…}}).
	Named
)

// FieldType is the type of a setting in the file.
type FieldType int

const (
	Int FieldType = iota
	String
	Bool
	// Number is an integer or a number with a fraction (seconds: 0.5).
	Number
	// Strings is a string or a list of strings (a shovel's src-uri: the
	// broker tries each URI in turn); the setting keeps the file's form.
	Strings
	// StringOrInt is a string or an integer (a shovel's src-delete-after:
	// never, queue-length or a count of messages).
	StringOrInt
	// Table is a mapping of names to values of any type (queue arguments,
	// message properties).
	Table
)

func (t FieldType) String() string {
	switch t {
	case Int:
		return "an integer"
	case String:
		return "a string"
	case Bool:
		return "true or false"
	case Number:
		return "a number"
	case Strings:
		return "a string or a list of strings"
	case StringOrInt:
		return "a string or an integer"
	case Table:
		return "a mapping"
	}
	return "a value"
}

// Field is a setting the file may give an item, stored under its name.
type Field struct {
	Name string
	Type FieldType
	// Min is the least integer allowed (Int only).
	Min int64
	// Help says what the setting does, for errors and the schema.
	Help string
}

// SecretFields names the secret settings of h's kind (kind.Spec.Secret).
func SecretFields(h Handler) []string { return slices.Clone(h.Spec().Secret) }

// Handler is one generic kind's own code.
type Handler interface {
	Spec() kind.Spec
	// Shape and Fields say how the file declares an item.
	Shape() Shape
	Fields() []Field
	// Read lists the kind's items in vhost.
	Read(ctx context.Context, api API, vhost string) ([]*topology.Item, error)
	// Write makes the broker hold want in vhost, where it held have (nil
	// when it held none).
	Write(ctx context.Context, api API, vhost string, have, want *topology.Item) error
	// Delete removes have from vhost.
	Delete(ctx context.Context, api API, vhost string, have *topology.Item) error
}

// Comparable is implemented by a kind whose settings the diff does not
// compare as they are (a password against the hash the broker stores):
// it returns the settings to compare, which hold no secret value.
type Comparable interface {
	Comparable(have, want *topology.Item) (topology.Args, topology.Args)
}

var handlers = []Handler{vhostLimits{}, shovel{}, federationUpstream{}, federationUpstreamSet{}}

// All returns the handlers of the generic kinds declared in a vhost's
// section of the file (Access has the others).
func All() []Handler { return append([]Handler(nil), handlers...) }

// For returns k's handler (of All or Access); false when k is not a
// generic kind.
func For(k kind.Kind) (Handler, bool) {
	for _, h := range append(All(), accessHandlers...) {
		if h.Spec().Kind == k {
			return h, true
		}
	}
	return nil, false
}

// spec is the kind.Spec of k, which every handler's kind has.
func spec(k kind.Kind) kind.Spec {
	s, ok := kind.Of(k)
	if !ok {
		panic(fmt.Sprintf("kinds: kind %q has no kind.Spec", k))
	}
	return s
}
