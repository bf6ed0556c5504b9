package plan

import (
	"bufio"
	"bytes"
	"encoding"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
)

// indentWriter writes a JSON document indented by two spaces as
// json.MarshalIndent would, a part at a time (object, hole): it never
// holds the text of the whole document, only of the part it writes. A
// plan's changes and flows are most of it: a 50,002-object teardown's
// JSON plan held the whole document encoded twice over (compact, then
// indented) and peaked at 128-149 MB. The bytes are the same.
type indentWriter struct {
	w *bufio.Writer
	// seen, when not nil, is given each text written, every one a whole
	// JSON value (holes written as null): the whole document's values
	// are the union of theirs.
	seen func(text []byte)
	// encoders are the elements' encoders (element), one for each
	// indentation prefix.
	encoders map[string]*json.Encoder
}

// hole is a field of an object written apart from it (indentWriter.object),
// as it streams: write writes its value, at the indentation prefix of its
// key's line.
type hole struct {
	key   string
	write func(e *indentWriter, prefix string) error
}

// object writes doc, a value that encodes as a JSON object, indented as
// json.MarshalIndent(doc, prefix, "  ") but for the fields holes name, in
// their order in the object, which doc holds as null and each hole writes.
func (e *indentWriter) object(doc any, prefix string, holes ...hole) error {
	head, err := e.encode(doc, prefix)
	if err != nil {
		return err
	}
	for _, h := range holes {
		// A key inside a string value has its quotes escaped, no string
		// holds a raw newline, and the fields of values within doc are
		// indented further: this is the field itself.
		marker := []byte("\n" + prefix + "  \"" + h.key + "\": null")
		i := bytes.Index(head, marker)
		if i < 0 {
			return fmt.Errorf("encoding the plan: no field %q", h.key)
		}
		e.w.Write(head[:i+len(marker)-len("null")])
		if err := h.write(e, prefix+"  "); err != nil {
			return err
		}
		head = head[i+len(marker):]
	}
	e.w.Write(head)
	return nil
}

// encode is v's text indented at prefix, given to seen.
func (e *indentWriter) encode(v any, prefix string) ([]byte, error) {
	b, err := json.MarshalIndent(v, prefix, "  ")
	if err != nil {
		return nil, err
	}
	if e.seen != nil {
		e.seen(b)
	}
	return b, nil
}

// element writes v indented at prefix, as encode gives it, through a
// json.Encoder kept for the prefix: the encoder's buffers are used again
// from one element to the next, where json.MarshalIndent made two of
// them for each (the text compact, then indented), 120 MB of the 180 MB
// allocated in writing a 50,002-object replace plan's saved plan, and
// the collector's work on them. Encode writes what MarshalIndent does,
// and a newline after it, left out here.
func (e *indentWriter) element(v any, prefix string) error {
	enc := e.encoders[prefix]
	if enc == nil {
		if e.encoders == nil {
			e.encoders = map[string]*json.Encoder{}
		}
		enc = json.NewEncoder(elementText{e})
		enc.SetIndent(prefix, "  ")
		e.encoders[prefix] = enc
	}
	return enc.Encode(v)
}

// elementText takes the text of one element from its json.Encoder (one
// Write for each Encode) into the document.
type elementText struct{ e *indentWriter }

func (t elementText) Write(p []byte) (int, error) {
	b := bytes.TrimSuffix(p, []byte("\n"))
	if t.e.seen != nil {
		t.e.seen(b)
	}
	t.e.w.Write(b)
	return len(p), nil
}

// sliceHole is the hole of field key whose value is elems (null when
// nil), encoded one element at a time.
func sliceHole[T any](key string, elems []T) hole {
	return arrayHole(key, len(elems), elems == nil, func(i int) T { return elems[i] })
}

// arrayHole is the hole of field key whose value is an array of n
// elements, element i at(i) (null when null), encoded one at a time: at
// may make each element as it is written, which is then let go of.
func arrayHole[T any](key string, n int, null bool, at func(i int) T) hole {
	return hole{key: key, write: func(e *indentWriter, prefix string) error {
		switch {
		case null:
			e.w.WriteString("null")
			return nil
		case n == 0:
			e.w.WriteString("[]")
			return nil
		}
		e.w.WriteString("[")
		for i := range n {
			if i > 0 {
				e.w.WriteString(",")
			}
			e.w.WriteString("\n" + prefix + "  ")
			// Addressed, as an element of a slice is: a method of *T
			// encodes it.
			v := at(i)
			if err := e.element(&v, prefix+"  "); err != nil {
				return err
			}
		}
		e.w.WriteString("\n" + prefix + "]")
		return nil
	}}
}

// errUnusual: the JSON holds what streamFields does not read as
// json.Decoder.Decode reads it (a key spelled another way than its
// field's tag or given twice, a value of another shape than its field's),
// or what the streamed read of a saved plan does not take on (a version
// it does not read, an invalid change): the caller reads it whole
// instead, which reads it, or says why not, as before.
var errUnusual = errors.New("not read as it streams")

// streamFields decodes the JSON object next in dec into *dst, a struct,
// as dec.Decode(dst) would, but one field at a time, and the elements of
// a slice field one at a time: dec's buffer holds the text of one value
// at a time, never the object's (a saved plan's changes, or its flows'
// dead letters, tens of MB at 50,000 objects). The field whose key is in
// custom is read by its function instead (at the value), which reads it
// from dec. A document streamFields does not read exactly as Decode would
// is left to the caller, with errUnusual.
func streamFields(dec *json.Decoder, dst any, custom map[string]func() error) error {
	v := reflect.ValueOf(dst).Elem()
	byKey := map[string]int{}
	for i := range v.NumField() {
		f := v.Type().Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if f.IsExported() && !f.Anonymous && name != "" && name != "-" {
			byKey[name] = i
		}
	}
	if err := expectDelim(dec, '{'); err != nil {
		return err
	}
	seen := map[string]bool{}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return err
		}
		key, _ := tok.(string)
		i, known := byKey[key]
		if !known || seen[key] {
			// A key of another case, which Decode matches to a field
			// anyway, or an unknown one it refuses; a field given
			// twice, which it decodes twice over.
			return errUnusual
		}
		seen[key] = true
		if read, ok := custom[key]; ok {
			err = read()
		} else {
			err = streamValue(dec, v.Field(i))
		}
		if err != nil {
			return err
		}
	}
	return expectDelim(dec, '}')
}

// streamValue decodes the JSON value next in dec into field, as
// Decode would: a slice (not of bytes, and not one that decodes itself)
// element by element, from an array or null; any other whole.
func streamValue(dec *json.Decoder, field reflect.Value) error {
	t := field.Type()
	self := reflect.PointerTo(t).Implements(reflect.TypeFor[json.Unmarshaler]()) ||
		reflect.PointerTo(t).Implements(reflect.TypeFor[encoding.TextUnmarshaler]())
	if t.Kind() != reflect.Slice || t.Elem().Kind() == reflect.Uint8 || self {
		return dec.Decode(field.Addr().Interface())
	}
	tok, err := dec.Token()
	switch {
	case err != nil:
		return err
	case tok == nil:
		field.SetZero()
		return nil
	case tok != json.Delim('['):
		return errUnusual
	}
	// Decode makes an empty array an empty slice, not nil.
	field.Set(reflect.MakeSlice(t, 0, 0))
	for n := 0; dec.More(); n++ {
		field.Set(reflect.Append(field, reflect.Zero(t.Elem())))
		if err := dec.Decode(field.Index(n).Addr().Interface()); err != nil {
			return err
		}
	}
	return expectDelim(dec, ']')
}

// expectDelim reads delimiter d from dec; errUnusual for another token.
func expectDelim(dec *json.Decoder, d json.Delim) error {
	tok, err := dec.Token()
	if err != nil {
		return err
	}
	if tok != d {
		return errUnusual
	}
	return nil
}
