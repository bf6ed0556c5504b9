package schema_test

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/mqctl/mqctl/pkg/kind"
	"github.com/mqctl/mqctl/pkg/topology"
	"github.com/mqctl/mqctl/schema"
)

var update = flag.Bool("update", false, "write the parts of mqctl.schema.json generated from pkg/kind")

// TestGeneratedFromKinds: the schema's parts for the kinds carried as
// topology.Item (a vhost's limits, shovels and federation objects, and a
// user with its limits, permissions and topic permissions) are generated
// from their specs in pkg/kind — their fields with their types, values,
// least values and help, their required fields and their Doc — so that
// the schema cannot drift from what the file reader takes, and a kind is
// added to it by its spec alone: after changing one, run
// go test ./schema -update. So are the kinds with types of their own
// (exchanges, queues, kinds of policy: typed) from their Spec and
// topology.Definition: their sections in a vhost and their settings and
// arguments. The rest of the schema (the settings a Definition does not
// describe, sugar, lint, tests) is written by hand, and pkg/loader's
// TestSchemaFieldsMatchLoader keeps its field names in step with the
// loader.
func TestGeneratedFromKinds(t *testing.T) {
	doc, err := parse(schema.JSON())
	if err != nil {
		t.Fatal(err)
	}
	if err := generate(doc); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	write(&out, doc, 0)
	out.WriteByte('\n')
	if *update {
		if err := os.WriteFile("mqctl.schema.json", out.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	if got := schema.JSON(); !bytes.Equal(got, out.Bytes()) {
		t.Errorf("mqctl.schema.json is not what pkg/kind's specs generate: run go test ./schema -update\n%s", firstDifference(got, out.Bytes()))
	}
}

// generate puts into doc the sections and definitions of the item kinds.
func generate(doc *object) error {
	defs, err := doc.object("$defs")
	if err != nil {
		return err
	}
	vhost, err := defs.object("vhost", "properties")
	if err != nil {
		return err
	}
	for _, spec := range kind.All() {
		def, ok := topology.DefinitionOf(spec.Kind)
		if !ok {
			continue
		}
		if err := typed(spec, def, vhost, defs); err != nil {
			return err
		}
	}
	for _, spec := range kind.VhostItems() {
		vhost.set(spec.Section, section(spec, defs, "#/$defs/"))
	}
	user, err := defs.object("user")
	if err != nil {
		return err
	}
	item := kind.User.Item()
	user.setFirst("description", item.Doc)
	user.set("type", []any{"object", "null"})
	user.set("additionalProperties", false)
	props, err := user.object("properties")
	if err != nil {
		return err
	}
	for _, f := range item.Fields {
		props.set(f.Name, field(f))
	}
	for _, k := range item.Nested {
		spec, _ := kind.Of(k)
		props.set(spec.Section, section(spec, defs, "#/$defs/"))
	}
	return nil
}

// typed puts into the schema a kind with a type of its own, from its
// Spec and its topology.Definition (def): its section in a vhost (vhost,
// the vhost's properties), a mapping of objects by name, each the kind's
// definition in defs (named after def.Print; kinds of policy share
// "policy"); and in that definition a property for each setting and for
// its arguments. A kind of policy's names are any non-empty string; the
// other kinds' are the broker's object names, whose amq. prefix RabbitMQ
// reserves (the loader refuses them, topology.IsReservedName). Where the
// definition holds the mapping of a sugar shared by other mappings (a
// queue's settings are "queueBody", which queues, defaults.queue and
// dead_letter.queue take), its settings go there; the sugar's fields (a
// queue's dead_letter, an exchange's alternate_exchange: the loader's) are
// written by hand, and so is a setting of values the Definition does not
// list (the type of an exchange, which takes plugin types, or of a queue,
// whose types are the version table's).
func typed(spec kind.Spec, def topology.DefinitionDoc, vhost, defs *object) error {
	name := camel(def.Print)
	names := newObject("minLength", json.Number("1"))
	if !spec.Policy {
		names = newObject("type", "string", "minLength", json.Number("1"), "not", newObject("pattern", "^amq\\."),
			"description", "an object name; the amq. prefix is reserved by RabbitMQ")
	}
	vhost.set(spec.Section, newObject("type", []any{"object", "null"}, "propertyNames", names,
		"additionalProperties", newObject("$ref", "#/$defs/"+name)))
	d, ok := defs.vals[name+"Body"].(*object)
	if !ok {
		if d, ok = defs.vals[name].(*object); !ok {
			d = newObject("description", "a "+spec.Label, "type", []any{"object", "null"}, "additionalProperties", false)
			defs.set(name, d)
		}
	}
	props, ok := d.vals["properties"].(*object)
	if !ok {
		props = newObject()
		d.set("properties", props)
	}
	for _, st := range def.Settings {
		p, ok := setting(st)
		if !ok {
			if _, hand := props.vals[st.Key]; !hand {
				return fmt.Errorf("%s: setting %s: give it Values, Text or a Default in its topology.Definition, or write its property by hand in the schema", spec.Kind, st.Key)
			}
			continue
		}
		props.set(st.Key, p)
	}
	args := newObject("$ref", "#/$defs/arguments")
	if spec.Policy {
		// A policy's definition is required, and RabbitMQ refuses an
		// empty one.
		args = newObject("type", "object", "minProperties", json.Number("1"))
	}
	props.set(def.ArgsKey, args)
	return nil
}

// setting is the schema of a typed kind's setting by its form
// (topology.SettingForm, which the loader reads it by): free text, one of
// its Values, or a value of its Default's type (a flag, a number); null or a
// ${VAR} placeholder too where RabbitMQ has a default. Its description is
// its help, then its default. False for a setting of none of these.
func setting(st topology.SettingDoc) (*object, bool) {
	var help []string
	if st.Help != "" {
		help = append(help, st.Help)
	}
	if st.Default != nil {
		help = append(help, fmt.Sprint("default ", st.Default))
	}
	description := strings.Join(help, "; ")
	placeholder := newObject("$ref", "#/$defs/placeholder")
	switch st.Form() {
	case topology.FormText:
		return newObject("type", "string", "description", description), true
	case topology.FormFlag:
		return newObject("$ref", "#/$defs/bool", "description", description), true
	case topology.FormEnum:
		return newObject("description", description, "anyOf", []any{newObject("enum", strings2(st.Values)), newObject("type", "null"), placeholder}), true
	case topology.FormInt:
		return newObject("description", description, "anyOf", []any{newObject("type", "integer"), newObject("type", "null"), placeholder}), true
	}
	return nil, false
}

// section is the schema of spec's section in a vhost (or a user): one
// item (Single), items by name (Named; each in defs, under the kind's
// name, or for a list-shaped kind each member), or items by vhost
// (ByVhost).
func section(spec kind.Spec, defs *object, ref string) *object {
	item := spec.Item
	s := newObject("description", item.Doc, "type", []any{"object", "null"})
	switch {
	case item.Shape == kind.Single:
		s.set("additionalProperties", false)
		s.set("properties", properties(item.Fields))
	case item.Shape == kind.Named && item.List != nil:
		name := camel(string(spec.Kind)) + "Member"
		defs.set(name, member(item.List))
		s.set("additionalProperties", newObject("type", []any{"array", "null"}, "items", newObject("$ref", ref+name)))
	case item.Shape == kind.Named:
		name := camel(string(spec.Kind))
		d := newObject("description", item.Doc, "type", "object", "additionalProperties", false)
		if len(spec.Required) > 0 {
			d.set("required", strings2(spec.Required))
		}
		d.set("properties", properties(item.Fields))
		defs.set(name, d)
		s.set("additionalProperties", newObject("$ref", ref+name))
	case item.List != nil: // ByVhost, a list of mappings on each
		s.set("additionalProperties", newObject("type", "array", "items", member(item.List)))
	default: // ByVhost, one mapping on each
		s.set("additionalProperties", newObject("type", "object", "additionalProperties", false, "properties", properties(item.Fields)))
	}
	return s
}

// member is the schema of one mapping of a list-shaped kind.
func member(ls *kind.ListSpec) *object {
	m := newObject()
	if ls.Doc != "" {
		m.set("description", ls.Doc)
	}
	m.set("type", "object")
	m.set("additionalProperties", false)
	if len(ls.Required) > 0 {
		m.set("required", strings2(ls.Required))
	}
	m.set("properties", properties(ls.Fields))
	return m
}

// properties are fields' schemas by name, sorted.
func properties(fields []kind.Field) *object {
	sorted := slices.SortedFunc(slices.Values(fields), func(a, b kind.Field) int { return strings.Compare(a.Name, b.Name) })
	p := newObject()
	for _, f := range sorted {
		p.set(f.Name, field(f))
	}
	return p
}

// field is the schema of one field: its type as the file reader takes it,
// where a number or a boolean may also be a ${VAR} placeholder (replaced
// before types are checked).
func field(f kind.Field) *object {
	help := f.Help
	if d, ok := f.Default.(string); ok {
		help += "; when left out: " + d
	}
	s := newObject("description", help)
	placeholder := newObject("$ref", "#/$defs/placeholder")
	switch f.Type {
	case kind.FieldString:
		s.set("type", "string")
		if f.Enum != nil {
			s.set("enum", strings2(f.Enum))
		}
	case kind.FieldInt:
		s.set("anyOf", []any{newObject("type", "integer", "minimum", json.Number(fmt.Sprint(f.Min))), placeholder})
	case kind.FieldNumber:
		s.set("anyOf", []any{newObject("type", "number", "minimum", json.Number(fmt.Sprint(f.Min))), placeholder})
	case kind.FieldBool:
		s.set("anyOf", []any{newObject("type", "boolean"), placeholder})
	case kind.FieldStrings:
		s.set("anyOf", []any{newObject("type", "string"), newObject("type", "array", "items", newObject("type", "string"), "minItems", json.Number("1"))})
	case kind.FieldStringOrInt:
		var alts []any
		if f.Enum != nil {
			alts = append(alts, newObject("enum", strings2(f.Enum)))
		} else {
			alts = append(alts, newObject("type", "string"))
		}
		s.set("anyOf", append(alts, newObject("type", "integer", "minimum", json.Number(fmt.Sprint(f.Min))), placeholder))
	case kind.FieldTable:
		s.set("type", "object")
	case kind.FieldNames:
		name := newObject("type", "string", "minLength", json.Number("1"))
		s.set("oneOf", []any{newObject("type", "array", "items", name), name})
	default:
		panic(fmt.Sprintf("field %s: no schema for its type %v", f.Name, f.Type))
	}
	s.sortKeys()
	return s
}

func strings2(s []string) []any {
	out := make([]any, len(s))
	for i, v := range s {
		out[i] = v
	}
	return out
}

// camel is a kind's name as the schema's definitions are named:
// federation_upstream → federationUpstream.
func camel(s string) string {
	parts := strings.Split(s, "_")
	for i := 1; i < len(parts); i++ {
		parts[i] = strings.ToUpper(parts[i][:1]) + parts[i][1:]
	}
	return strings.Join(parts, "")
}

// object is a JSON object that keeps its keys in order, so that the
// hand-written parts of the schema keep theirs.
type object struct {
	keys []string
	vals map[string]any
}

func newObject(kv ...any) *object {
	o := &object{vals: map[string]any{}}
	for i := 0; i < len(kv); i += 2 {
		o.set(kv[i].(string), kv[i+1])
	}
	return o
}

// set sets key to v, where key is if o has it, else last.
func (o *object) set(key string, v any) {
	if _, ok := o.vals[key]; !ok {
		o.keys = append(o.keys, key)
	}
	o.vals[key] = v
}

// setFirst sets key to v, where key is if o has it, else first.
func (o *object) setFirst(key string, v any) {
	if _, ok := o.vals[key]; !ok {
		o.keys = append([]string{key}, o.keys...)
	}
	o.vals[key] = v
}

// sortKeys puts o's keys in order, description first, and those of
// the objects in it, as the schema's fields are written.
func (o *object) sortKeys() {
	slices.SortFunc(o.keys, func(a, b string) int {
		switch {
		case a == b:
			return 0
		case a == "description":
			return -1
		case b == "description":
			return 1
		}
		return strings.Compare(a, b)
	})
	for _, v := range o.vals {
		switch x := v.(type) {
		case *object:
			x.sortKeys()
		case []any:
			for _, e := range x {
				if eo, ok := e.(*object); ok {
					eo.sortKeys()
				}
			}
		}
	}
}

// object returns the object at path under o.
func (o *object) object(path ...string) (*object, error) {
	cur := o
	for i, p := range path {
		next, ok := cur.vals[p].(*object)
		if !ok {
			return nil, fmt.Errorf("the schema has no object at %s", strings.Join(path[:i+1], "."))
		}
		cur = next
	}
	return cur, nil
}

// parse reads a JSON document into objects, lists, strings, json.Numbers,
// booleans and nil.
func parse(data []byte) (*object, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	v, err := value(dec)
	if err != nil {
		return nil, err
	}
	o, ok := v.(*object)
	if !ok {
		return nil, fmt.Errorf("the schema is not a JSON object")
	}
	return o, nil
}

func value(dec *json.Decoder) (any, error) {
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	switch tok {
	case json.Delim('{'):
		o := newObject()
		for dec.More() {
			k, err := dec.Token()
			if err != nil {
				return nil, err
			}
			v, err := value(dec)
			if err != nil {
				return nil, err
			}
			o.set(k.(string), v)
		}
		_, err := dec.Token()
		return o, err
	case json.Delim('['):
		l := []any{}
		for dec.More() {
			v, err := value(dec)
			if err != nil {
				return nil, err
			}
			l = append(l, v)
		}
		_, err := dec.Token()
		return l, err
	}
	return tok, nil
}

// write writes v as the schema file is written: two spaces of indent,
// UTF-8 as it is.
func write(w *bytes.Buffer, v any, depth int) {
	indent := func(d int) { w.WriteString(strings.Repeat("  ", d)) }
	switch x := v.(type) {
	case *object:
		if len(x.keys) == 0 {
			w.WriteString("{}")
			return
		}
		w.WriteString("{\n")
		for i, k := range x.keys {
			indent(depth + 1)
			writeString(w, k)
			w.WriteString(": ")
			write(w, x.vals[k], depth+1)
			if i < len(x.keys)-1 {
				w.WriteByte(',')
			}
			w.WriteByte('\n')
		}
		indent(depth)
		w.WriteByte('}')
	case []any:
		if len(x) == 0 {
			w.WriteString("[]")
			return
		}
		w.WriteString("[\n")
		for i, e := range x {
			indent(depth + 1)
			write(w, e, depth+1)
			if i < len(x)-1 {
				w.WriteByte(',')
			}
			w.WriteByte('\n')
		}
		indent(depth)
		w.WriteByte(']')
	case string:
		writeString(w, x)
	case json.Number:
		w.WriteString(string(x))
	case bool:
		fmt.Fprint(w, x)
	case nil:
		w.WriteString("null")
	default:
		panic(fmt.Sprintf("unexpected %T in the schema", v))
	}
}

func writeString(w io.Writer, s string) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s) // a string always encodes
	w.Write(bytes.TrimSuffix(b.Bytes(), []byte("\n")))
}

// firstDifference shows the first line where got and want differ.
func firstDifference(got, want []byte) string {
	g, w := strings.Split(string(got), "\n"), strings.Split(string(want), "\n")
	for i := 0; i < len(g) || i < len(w); i++ {
		var gl, wl string
		if i < len(g) {
			gl = g[i]
		}
		if i < len(w) {
			wl = w[i]
		}
		if gl != wl {
			return fmt.Sprintf("line %d:\n  file:      %s\n  generated: %s", i+1, gl, wl)
		}
	}
	return ""
}
