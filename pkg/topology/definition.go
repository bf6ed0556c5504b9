package topology

import "github.com/mqctl/mqctl/pkg/kind"

// Definition is what the objects of one type (T: an exchange, a queue, a
// policy) are compared, printed and tried by, described once for the
// stages that do (the diff, the prints an ownership record keeps, the
// preflight's shapes): Print is the word an object's print starts with,
// Settings its settings in the order they are compared and printed, and
// Args its arguments (a policy's definition), named ArgsKey in plans,
// without Skip, an argument that is compared as a setting of its own (a
// queue's x-queue-type, its type), Forms the arguments compared by a
// form of their value (ArgForms). Whether a change of them forces a
// replace is the kind's (kind.Spec.InPlace).
type Definition[T any] struct {
	Print    string
	Settings []Setting[T]
	ArgsKey  string
	Args     func(T) Args
	// SetArgs makes a the object's arguments (for the readers that read
	// a kind from its Definition alone).
	SetArgs func(T, Args)
	Skip    string
	Forms   ArgForms
}

// ArgForm is the form in which RabbitMQ compares a value of one argument
// of a declaration with the object it holds, where that is not the value
// as written (an age in its length, whatever its unit); ok is false for a
// value that has none, which compares as written.
type ArgForm func(v any) (form any, ok bool)

// ArgForms are the arguments of a kind of object that compare by their
// form (ArgForm), by name: the diff compares them so, and the prints print
// the form, while the file's spelling is what is declared and shown.
type ArgForms map[string]ArgForm

// QueueArgForms: a stream's x-max-age is its length (RabbitMQ 4.3.6
// compares it so on a declare; 3.10 and 4.0 compare the spelling, but
// keep the stream the same age either way, so that no re-spelling is
// worth a replace).
var QueueArgForms = ArgForms{MaxAgeArgument: maxAgeForm}

// Equal reports whether x and y, values of argument key, are equal as
// RabbitMQ compares them: by their forms when both have one.
func (f ArgForms) Equal(key string, x, y any) bool {
	if form, ok := f[key]; ok {
		fx, okX := form(x)
		fy, okY := form(y)
		if okX && okY {
			return ValueEqual(fx, fy)
		}
	}
	return ValueEqual(x, y)
}

// Of returns a with each argument of f that has a form in that form: a
// itself when there is none (most tables: nothing is copied).
func (f ArgForms) Of(a Args) Args {
	out, copied := a, false
	for k, form := range f {
		v, ok := a[k]
		if !ok {
			continue
		}
		fv, ok := form(v)
		if !ok {
			continue
		}
		if !copied {
			out, copied = a.Clone(), true
		}
		out[k] = fv
	}
	return out
}

// Setting is one setting of an object of type T: Key is its name in
// topology.yaml and in plans, APIKey in a definitions file and the
// management API, Default what RabbitMQ takes when it is not given (nil:
// none, the setting is required or always given), Value its value in an
// object as RabbitMQ holds it (a queue type left out is classic), and
// Text is true for free text (a policy's pattern), which views quote.
// Values are the values the file takes, where they are few (nil: any of
// its type), and Help says what the setting is where its key does not;
// the file reader takes Values, and the schema's property for the setting
// is generated from Default, Text, Values and Help (schema's
// TestGeneratedFromKinds). The file reader decodes each setting of a
// Form (SettingForm) from the Definition, into its object with Set, and
// a required one (no Default) it finds missing is refused with Example,
// a value the file may write; a setting of no Form (an exchange's or a
// queue's type) the file reader and the schema take by hand. A
// definitions file's reader reads a setting of no Form that has a Set as
// a word (an exchange's type; a queue's is in its arguments).
// Later is true for a setting added to the Definition after mqctl's
// ownership records held prints of the kind's objects (every setting
// added now): at its Default it is left out of an object's print, so
// that the prints of the objects that do not set it stay what the
// records on brokers hold (plan's TestPrintsStay), and out of the plan's
// description of an object, as a flag at its default is (Quiet). It
// needs a Default.
type Setting[T any] struct {
	Key, APIKey string
	Default     any
	Value       func(T) any
	Set         func(T, any)
	Text        bool
	Values      []string
	Help        string
	Example     string
	Later       bool
}

// SettingForm is the form of a setting's value in the file, which both
// its schema and its reading follow: free text, one of its Values, a flag
// or an integer (a Default of that type), or none of these.
type SettingForm int

const (
	FormNone SettingForm = iota
	FormText
	FormFlag
	FormEnum
	FormInt
)

// settingForm is the form of a setting that is free text (text), takes
// values, or has def as its default, in this order of precedence.
func settingForm(text bool, values []string, def any) SettingForm {
	_, isFlag := def.(bool)
	_, isInt := def.(int)
	switch {
	case text:
		return FormText
	case isFlag:
		return FormFlag
	case values != nil:
		return FormEnum
	case isInt:
		return FormInt
	}
	return FormNone
}

// Form is the form of s's value in the file.
func (s Setting[T]) Form() SettingForm { return settingForm(s.Text, s.Values, s.Default) }

// IsDefault reports whether v, a value of s, is the one RabbitMQ takes
// when s is not given.
func (s Setting[T]) IsDefault(v any) bool { return s.Default != nil && v == s.Default }

// Quiet reports whether v, a value of s, goes unsaid where an object's
// settings are listed (the plan's description of an object it creates):
// a flag or a Later setting at its Default.
func (s Setting[T]) Quiet(v any) bool {
	return (s.Form() == FormFlag || s.Later) && s.IsDefault(v)
}

// Printed reports whether v, a value of s, is part of an object's print:
// but a Later setting at its Default, always.
func (s Setting[T]) Printed(v any) bool { return !s.Later || !s.IsDefault(v) }

// ExchangeDefinition: an exchange's type, its flags (ExchangeFlags) and
// its arguments.
var ExchangeDefinition = Definition[*Exchange]{
	Print: "exchange",
	Settings: append([]Setting[*Exchange]{
		{Key: "type", APIKey: "type", Value: func(x *Exchange) any { return x.Type }, Set: func(x *Exchange, v any) { x.Type = v.(string) }},
	}, flagSettings(ExchangeFlags)...),
	ArgsKey: "arguments",
	Args:    func(x *Exchange) Args { return x.Arguments },
	SetArgs: func(x *Exchange, a Args) { x.Arguments = a },
}

// QueueDefinition: a queue's type (classic when left out), its flags
// (QueueFlags) and its arguments but x-queue-type (RabbitMQ 4.x stores it
// on every queue, 3.10 only when it was given).
var QueueDefinition = Definition[*Queue]{
	Print: "queue",
	Settings: append([]Setting[*Queue]{
		{Key: "type", APIKey: "type", Value: func(q *Queue) any { return q.TypeOrClassic() }},
	}, flagSettings(QueueFlags)...),
	ArgsKey: "arguments",
	Args:    func(q *Queue) Args { return q.Arguments },
	SetArgs: func(q *Queue, a Args) { q.Arguments = a },
	Skip:    QueueTypeArgument,
	Forms:   QueueArgForms,
}

// PolicyDefinition: a policy's settings (PolicySettings) and its
// definition, for every kind of policy.
var PolicyDefinition = Definition[*Policy]{
	Print:    "policy",
	Settings: PolicySettings,
	ArgsKey:  PolicyDefinitionKey,
	Args:     func(p *Policy) Args { return p.Definition },
	SetArgs:  func(p *Policy, a Args) { p.Definition = a },
}

// flagSettings are flags as settings, in their order.
func flagSettings[T any](flags []Flag[T]) []Setting[T] {
	out := make([]Setting[T], len(flags))
	for i, f := range flags {
		out[i] = Setting[T]{Key: f.Key, APIKey: f.Key, Default: f.Default, Value: func(o T) any { return f.Get(o) },
			Set: func(o T, v any) { *f.Of(o) = v.(bool) }, Later: f.Later}
	}
	return out
}

// TypeOrClassic is q's type as RabbitMQ holds it: Type, or classic when it
// is left out.
func (q *Queue) TypeOrClassic() string { return QueueTypeOrClassic(q.Type) }

// ImpliedQueueType is the type RabbitMQ gives a queue declared without
// x-queue-type in a vhost whose default queue type is dqt ("": none): dqt,
// when the queue suits it; a transient or auto-delete queue cannot be a
// quorum queue or a stream, and is classic (rabbit_amqqueue:
// augment_declare_args on 3.10.8, 4.0.5 and 4.3.5).
func ImpliedQueueType(dqt string, durable, autoDelete bool) string {
	if dqt == "" || ((dqt == QueueQuorum || dqt == QueueStream) && (!durable || autoDelete)) {
		return QueueClassic
	}
	return dqt
}

// QueueTypeOrClassic is queue type t, or classic when t is "".
func QueueTypeOrClassic(t string) string {
	if t == "" {
		return QueueClassic
	}
	return t
}

// SettingDoc is what a Setting says of itself without an object: its key
// in the file, RabbitMQ's default, whether it is free text, the values
// it takes and its help (the schema's property for it is made of these).
type SettingDoc struct {
	Key     string
	Default any
	Text    bool
	Values  []string
	Help    string
}

// Form is the form of the setting's value in the file.
func (s SettingDoc) Form() SettingForm { return settingForm(s.Text, s.Values, s.Default) }

// DefinitionDoc is a Definition without its type: the word its prints
// start with, its settings' docs in order and the key of its arguments.
type DefinitionDoc struct {
	Print    string
	Settings []SettingDoc
	ArgsKey  string
}

// Doc is d without its type.
func (d Definition[T]) Doc() DefinitionDoc {
	out := DefinitionDoc{Print: d.Print, ArgsKey: d.ArgsKey, Settings: make([]SettingDoc, len(d.Settings))}
	for i, s := range d.Settings {
		out.Settings[i] = SettingDoc{Key: s.Key, Default: s.Default, Text: s.Text, Values: s.Values, Help: s.Help}
	}
	return out
}

// DefinitionOf is the Definition of the objects of kind k, for the stages
// that ask it of a kind rather than of a type (the schema's generator);
// false for a kind without one: a vhost, a binding, and the kinds carried
// as Items (their kind.ItemSpec describes them).
func DefinitionOf(k kind.Kind) (DefinitionDoc, bool) {
	if t, ok := TypedOf(k); ok {
		return t.Doc(), true
	}
	return DefinitionDoc{}, false
}
