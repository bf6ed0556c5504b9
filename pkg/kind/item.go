package kind

import "slices"

// ItemSpec is what a kind carried as topology.Item has of its own beyond
// Spec: how topology.yaml declares an item, what the file reader checks
// besides each setting's type, and what the diff compares. Settings are
// map[string]any, which a topology.Args is (this package is below
// pkg/topology), normalised as topology.Normalize makes them (an integer
// is an int64). The broker's reading and writing of items is pkg/broker's
// (one driver per item kind).
type ItemSpec struct {
	// Shape is how a section of the file holds the items.
	Shape Shape
	// Doc says what the file's section of the kind holds, for the JSON
	// Schema of topology files (schema/mqctl.schema.json, whose parts for
	// these kinds are generated from their specs: go test ./schema
	// -update).
	Doc string
	// Fields are the settings the file may give an item, stored under
	// their names.
	Fields []Field
	// List is set for a Named kind whose items the file writes as lists of
	// mappings (federation_upstream_sets: {name: [{upstream: a}, …]}).
	List *ListSpec
	// Validate, when set, checks what the broker's validation checks
	// beyond each field's type (required settings, settings that exclude
	// each other, the values a string may take), so that a file it would
	// refuse fails at validate, not halfway through an apply. The file
	// reader reports each problem at the setting's position.
	Validate func(settings map[string]any) []Problem
	// Compare, when set, gives the settings the diff compares instead of
	// the settings themselves (a password against the hash the broker
	// stores); they hold no secret value.
	Compare func(have, want map[string]any) (map[string]any, map[string]any)
	// Loosen, when set, is for a kind whose settings bound what an apply
	// declares (a vhost's max-queues): the settings to write before the
	// apply's declarations (in LoosenPhase) when want is looser than have
	// somewhere, each setting the looser of the two, so that raising a
	// limit in the file makes room for the objects the file adds; nil when
	// want is nowhere looser. The item is written as wanted in its own
	// phase, after the declarations (a limit lowered last binds only what
	// comes after the apply).
	Loosen func(have, want map[string]any) map[string]any
	// Nested are the kinds declared inside each item of this kind, each
	// under its Spec.Section (a user's limits, permissions and topic
	// permissions): their items are named after it. A nested item
	// without settings is none.
	Nested []Kind
}

// ListSpec is a list-shaped kind's list: Key names the one setting of the
// item that holds it, Fields are the fields of each mapping in it, and
// Validate checks one mapping as ItemSpec.Validate checks an item.
//
// With By set instead of Key, the item holds the mappings by the value of
// that field (a string, each once): each of its settings maps that value
// to the mapping's other fields (a user's topic permissions on a vhost:
// {amq.topic: {write: …, read: …}}).
type ListSpec struct {
	Key    string
	By     string
	Fields []Field
	// Required are the fields without which Validate refuses a mapping,
	// and Doc says what one mapping is (for the schema, as ItemSpec.Doc).
	Required []string
	Doc      string
	Validate func(settings map[string]any) []Problem
}

// FieldNames are the names of ls's fields, in order.
func (ls *ListSpec) FieldNames() []string { return Names(ls.Fields) }

// Names are the names of fields, in order.
func Names(fields []Field) []string {
	out := make([]string, len(fields))
	for i, f := range fields {
		out[i] = f.Name
	}
	return out
}

// Entry splits member m of a list held By a field (ListSpec.By) into the
// setting it is held as: its By field's value, and its other fields.
func (ls *ListSpec) Entry(m map[string]any) (string, map[string]any) {
	by, _ := m[ls.By].(string)
	rest := make(map[string]any, len(m))
	for k, v := range m {
		if k != ls.By {
			rest[k] = v
		}
	}
	return by, rest
}

// Member is the member held as setting by with value rest (Entry's
// inverse).
func (ls *ListSpec) Member(by string, rest map[string]any) map[string]any {
	m := make(map[string]any, len(rest)+1)
	for k, v := range rest {
		m[k] = v
	}
	m[ls.By] = by
	return m
}

// Shape is how a kind's section in topology.yaml holds its items.
type Shape int

const (
	// Single: the section is one item, named after its vhost (or user)
	// (limits: {max-queues: 10}).
	Single Shape = iota
	// Named: the section maps names to items (shovels: {name: {…}}).
	Named
	// ByVhost: the section, nested in an item (ItemSpec.Nested), maps
	// vhosts the file declares to one item each, named after the item it
	// is nested in and held by that vhost (a user's permissions:
	// {orders: {read: …}}).
	ByVhost
)

// FieldType is the type of a setting in the file.
type FieldType int

const (
	FieldInt FieldType = iota
	FieldString
	FieldBool
	// FieldNumber is an integer or a number with a fraction (seconds: 0.5).
	FieldNumber
	// FieldStrings is a string or a list of strings (a shovel's src-uri:
	// the broker tries each URI in turn); the setting keeps the file's
	// form.
	FieldStrings
	// FieldStringOrInt is a string or an integer (a shovel's
	// src-delete-after: never, queue-length or a count of messages).
	FieldStringOrInt
	// FieldTable is a mapping of names to values of any type (queue
	// arguments, message properties).
	FieldTable
	// FieldNames is a name or a list of names, none empty, none holding
	// a comma or starting or ending with a space (the broker takes them
	// joined by commas), held sorted and each once (a user's tags:
	// TagList).
	FieldNames
)

func (t FieldType) String() string {
	switch t {
	case FieldInt:
		return "an integer"
	case FieldString:
		return "a string"
	case FieldBool:
		return "true or false"
	case FieldNumber:
		return "a number"
	case FieldStrings:
		return "a string or a list of strings"
	case FieldStringOrInt:
		return "a string or an integer"
	case FieldTable:
		return "a mapping"
	case FieldNames:
		return "a list of names"
	}
	return "a value"
}

// Field is a setting the file may give an item, stored under its name.
type Field struct {
	Name string
	Type FieldType
	// Min is the least value allowed (FieldInt, FieldNumber, and the
	// integer of a FieldStringOrInt).
	Min int64
	// Enum, when set, are the values a FieldString (or the string of a
	// FieldStringOrInt) may take.
	Enum []string
	// Default, when not nil, is the value of the setting when the file
	// leaves it out (a permission's operation: ^$, none).
	Default any
	// Help says what the setting does, for errors and the schema.
	Help string
	// Example is a value to show in a hint (FieldNames: management).
	Example string
}

// DefaultOf returns the default of fl (a list's a fresh one) and whether
// it has one.
func (fl Field) DefaultOf() (any, bool) {
	switch d := fl.Default.(type) {
	case nil:
		return nil, false
	case []any:
		return slices.Clone(d), true
	default:
		return d, true
	}
}

// Problem is what a Validate finds wrong with an item's settings: Field
// names the setting it concerns ("" for the item), Item the entry of that
// setting's list it concerns (its index + 1; 0 for the setting as a
// whole), Msg says what is wrong and Hint how to fix it.
type Problem struct {
	Field, Msg, Hint string
	Item             int
}

// The settings as the checks read them (normalised: see ItemSpec).

func has(s map[string]any, key string) bool {
	_, ok := s[key]
	return ok
}

func str(s map[string]any, key string) (string, bool) {
	v, ok := s[key].(string)
	return v, ok
}

func integer(s map[string]any, key string) (int64, bool) {
	i, ok := s[key].(int64)
	return i, ok
}
