package plan

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"sort"
	"strings"

	pj "github.com/mqctl/mqctl/pkg/planjson"
	"github.com/mqctl/mqctl/pkg/topology"
)

// savedObject is an Object in the saved plan: one field, named after its
// type of Object (objectType.saved's key: "exchange", "item", …), that
// holds its value. It is read as the saved plan is (numbers as
// json.Number, an unknown field an error).
type savedObject struct{ obj Object }

// savedForm is how the saved plan holds the objects of one type of
// Object: under key, value's value, read back by read.
type savedForm struct {
	key   string
	value func(Object) (v any, ok bool)
	read  func(dec *json.Decoder) (Object, error)
}

// savedAs is the savedForm of the Objects of type O: under key, value(o)
// of type *T, which to makes an Object again.
func savedAs[O Object, T any](key string, value func(O) *T, to func(*T) Object) savedForm {
	return savedForm{
		key: key,
		value: func(o Object) (any, bool) {
			x, ok := o.(O)
			if !ok {
				return nil, false
			}
			return value(x), true
		},
		read: func(dec *json.Decoder) (Object, error) {
			var v *T
			if err := dec.Decode(&v); err != nil {
				return nil, fmt.Errorf("%s: %w", key, err)
			}
			return wrap(v, to), nil
		},
	}
}

func (o savedObject) MarshalJSON() ([]byte, error) {
	if o.obj == nil {
		return []byte("{}"), nil
	}
	for _, t := range objectTypes {
		v, ok := t.saved.value(o.obj)
		if !ok {
			continue
		}
		if reflect.ValueOf(v).IsNil() {
			return []byte("{}"), nil
		}
		b, err := json.Marshal(v)
		if err != nil {
			return nil, err
		}
		return append(append([]byte(`{"`+t.saved.key+`":`), b...), '}'), nil
	}
	return nil, fmt.Errorf("the saved plan has no form for an object of type %T", o.obj)
}

func (o *savedObject) UnmarshalJSON(b []byte) error {
	// Read field by field, each value straight into its type: no map of
	// the fields, no second pass over the value.
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	dec.DisallowUnknownFields()
	if _, err := dec.Token(); err != nil { // {
		return err
	}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return err
		}
		key, _ := tok.(string)
		i := slices.IndexFunc(objectTypes, func(t objectType) bool { return t.saved.key == key })
		if i < 0 {
			// As the saved plan's decoder says of any field it does not
			// know (json.Decoder.DisallowUnknownFields).
			return fmt.Errorf("json: unknown field %q", key)
		}
		x, err := objectTypes[i].saved.read(dec)
		if err != nil {
			return err
		}
		if o.obj == nil {
			o.obj = x
		}
	}
	return nil
}

// object returns the Object o holds; nil for none.
func (o *savedObject) object() Object {
	if o == nil {
		return nil
	}
	return o.obj
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
	return objFields(k, have, want)
}

// jsonObject returns o in the public JSON plan; nil for none.
func jsonObject(o Object) *pj.Object {
	if o == nil {
		return nil
	}
	if n, ok := Named(o); ok {
		return definedJSON(n)
	}
	return o.(objectMethods).json()
}

// describe lists the settings of an object being created.
func describe(o Object) []string {
	if o == nil {
		return nil
	}
	if n, ok := Named(o); ok {
		return describeDefined(n.Typed().Def(), n)
	}
	return o.(objectMethods).describe()
}

// The objectMethods of an Object (plan.go), whichever kind it is of:
// its own, or its typed kind's (kind_defined.go).

// objFields: want's fieldsFrom have.
func objFields(k Kind, have, want Object) []FieldChange {
	if n, ok := Named(want); ok {
		return definedFieldsFrom(n, k, have)
	}
	return want.(objectMethods).fieldsFrom(k, have)
}

// objHeadline: o's headline.
func objHeadline(o Object) string {
	if n, ok := Named(o); ok {
		return definedHeadline(n.Typed().Def(), n)
	}
	return o.(objectMethods).headline()
}

// objNormalize: o's normalize.
func objNormalize(o Object) {
	if n, ok := Named(o); ok {
		n.Typed().Normalize(n)
		return
	}
	o.(objectMethods).normalize()
}

// objCarries: o's carries.
func objCarries(o Object, k Kind) bool {
	if n, ok := Named(o); ok {
		return n.Typed().Carries(k)
	}
	return o.(objectMethods).carries(k)
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

// describeDefined lists the settings of o, an object of a kind with a
// topology.Definition, as the plan describes an object it creates: each
// setting of def but those its headline shows (of no form: a type,
// definedHeadline) and the quiet ones (a flag or a Later setting at
// its default, topology.Setting.Quiet), free text quoted, then its
// arguments.
func describeDefined[T any](def topology.Definition[T], o T) []string {
	var out []string
	for _, s := range def.Settings {
		v := s.Value(o)
		if s.Form() == topology.FormNone || s.Quiet(v) {
			continue
		}
		if s.Text {
			v = show(v)
		}
		out = append(out, fmt.Sprintf("%s: %v", s.Key, v))
	}
	return append(out, describeArgs(def.Args(o))...)
}

// definedHeadline is what the plan's line of o, an object of a kind with
// a topology.Definition, says after its name: the values of def's
// settings of no form (an exchange's or a queue's type) in parentheses,
// "" when it has none (a policy).
func definedHeadline[T any](def topology.Definition[T], o T) string {
	var vs []string
	for _, s := range def.Settings {
		if s.Form() == topology.FormNone {
			vs = append(vs, fmt.Sprint(s.Value(o)))
		}
	}
	if len(vs) == 0 {
		return ""
	}
	return " (" + strings.Join(vs, ", ") + ")"
}
