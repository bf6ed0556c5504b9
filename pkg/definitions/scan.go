package definitions

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"strings"
	"unicode/utf8"

	"github.com/mqctl/mqctl/internal/intern"
)

// DecodeReaderTo reads a definitions answer from r into d as DecodeStream
// does, handing each queue and binding (the kinds whose entry scans their
// section: typedKind.scan) to m as it is decoded instead of keeping it in
// d: they are mapped while the rest of the answer is still on
// its way, and never held twice (m.Finish maps the rest of d afterwards).
//
// It reads with a scanner of its own, not encoding/json's Decoder, which
// scans every element twice (once to find its end, once to decode it) and
// decodes by reflection: the queues and bindings, thousands in a large
// vhost, were most of a plan's decoding time (19 ms of 28 in a 10,002-
// object vhost). Their elements are decoded field by field as encoding/json
// decodes them (unknown keys skipped, null leaving a field as it is,
// numbers as json.Number, strings with escapes or bytes outside UTF-8
// handed to encoding/json itself); every other section is cut out of the
// stream as it is and decoded by DecodeStream's own code. An answer cut
// short is io.ErrUnexpectedEOF; an error of r is returned as r gave it.
func (d *Document) DecodeReaderTo(r io.Reader, m *LiveMapper) error {
	return d.decodeReader(r, m)
}

// elements receives the queues and bindings of a document as they are
// decoded (LiveMapper; the tests collect them).
type elements interface {
	Queue(Queue)
	Binding(Binding)
}

func (d *Document) decodeReader(r io.Reader, m elements) error {
	*d = Document{}
	s := &scanner{rd: r, buf: make([]byte, 0, scanBuffer), mark: -1,
		keys: intern.New[string](), fields: intern.New[string](), values: intern.New[string](), boxed: intern.New[any]()}
	err := s.object(func(key string) error {
		if k, ok := sectionKind(key); ok {
			if t, _ := typedKindOf(k); t.scan != nil {
				return t.scan(s, m)
			}
		}
		raw, err := s.raw()
		if err != nil {
			return err
		}
		dec := json.NewDecoder(bytes.NewReader(raw))
		dec.UseNumber()
		return d.decodeSection(dec, key)
	})
	return cutShort(err)
}

// scanBuffer is the scanner's buffer: a token longer than it grows it.
const scanBuffer = 64 << 10

// scanner reads JSON from a stream through a buffer of its own. Its token
// reads leave s.pos at the token's first byte until the token is whole,
// so that a refill (more) keeps it.
type scanner struct {
	rd  io.Reader
	buf []byte
	pos int   // the next byte to read, in buf
	off int64 // the stream offset of buf[0]
	// mark is where a value cut out whole (raw) starts in buf, -1 for
	// none: a refill keeps everything from there.
	mark  int
	depth int   // of the objects and arrays being read
	err   error // the reader's error, once it gave one
	// keys are the objects' keys read so far (fields' and arguments'
	// names), fields the values of the fields that repeat from one object
	// to the next (a queue's type, a binding's source and destination
	// type), values and boxed (as any) the arguments' string values:
	// each is allocated once per read instead of once per object (at
	// 25,000 queues and bindings, some 6 MB of a plan's live heap were
	// copies of "x-queue-type", "classic", "queue" and their like), up to
	// intern.Max of each, so that a read of many distinct values (the
	// queues' dead-letter routing keys) keeps no table of them all. nil
	// tables share nothing.
	keys, fields, values *intern.Table[string]
	boxed                *intern.Table[any]
}

// maxDepth is encoding/json's limit on nesting.
const maxDepth = 10000

// enter counts one more level of nesting, refused past maxDepth.
func (s *scanner) enter() error {
	if s.depth++; s.depth > maxDepth {
		return s.syntax("exceeded max depth")
	}
	return nil
}

// more reads more of the stream into buf, keeping what is not yet read
// (and from mark on); shift is how far what is kept moved towards the
// start of buf, which the caller takes off its own indices. false at the
// end of the stream.
func (s *scanner) more() (shift int, ok bool) {
	if s.err != nil {
		return 0, false
	}
	keep := s.pos
	if s.mark >= 0 && s.mark < keep {
		keep = s.mark
	}
	n := copy(s.buf[:cap(s.buf)], s.buf[keep:])
	s.buf = s.buf[:n]
	s.off += int64(keep)
	s.pos -= keep
	if s.mark >= 0 {
		s.mark -= keep
	}
	if n == cap(s.buf) {
		grown := make([]byte, n, 2*cap(s.buf))
		copy(grown, s.buf)
		s.buf = grown
	}
	for {
		m, err := s.rd.Read(s.buf[n:cap(s.buf)])
		s.buf = s.buf[:n+m]
		if err != nil {
			s.err = err
		}
		if m > 0 {
			return keep, true
		}
		if err != nil {
			return keep, false
		}
	}
}

// ended is the error for a stream that ended inside a value.
func (s *scanner) ended() error {
	if s.err == nil || errors.Is(s.err, io.EOF) {
		return io.ErrUnexpectedEOF
	}
	return s.err
}

func (s *scanner) syntax(what string) error {
	return fmt.Errorf("invalid JSON at offset %d: %s", s.off+int64(s.pos), what)
}

// next is the next byte that is not white space, not consumed.
func (s *scanner) next() (byte, error) {
	for {
		for s.pos < len(s.buf) {
			switch c := s.buf[s.pos]; c {
			case ' ', '\n', '\r', '\t':
				s.pos++
			default:
				return c, nil
			}
		}
		if _, ok := s.more(); !ok {
			return 0, s.ended()
		}
	}
}

// expect consumes byte c, the next that is not white space.
func (s *scanner) expect(c byte) error {
	got, err := s.next()
	if err != nil {
		return err
	}
	if got != c {
		return s.syntax(fmt.Sprintf("expected %q, found %q", c, got))
	}
	s.pos++
	return nil
}

// object reads an object, handing each key to field, which reads its
// value.
func (s *scanner) object(field func(key string) error) error {
	if err := s.expect('{'); err != nil {
		return err
	}
	return s.items('}', "an object's value", func() error {
		key, err := s.strIn(s.keys)
		if err != nil {
			return err
		}
		if err := s.expect(':'); err != nil {
			return err
		}
		return field(key)
	})
}

// array reads an array (null: none), calling elem to read each element.
func (s *scanner) array(elem func() error) error {
	c, err := s.next()
	if err != nil {
		return err
	}
	if c == 'n' {
		return s.literal("null")
	}
	if c != '[' {
		return s.syntax(fmt.Sprintf("expected a list, found %q", c))
	}
	s.pos++
	return s.items(']', "a list's element", elem)
}

// items reads the items of an object or array whose opening byte is read,
// up to its end ('}' or ']'), calling item to read each (what one is, for
// errors).
func (s *scanner) items(end byte, what string, item func() error) error {
	if err := s.enter(); err != nil {
		return err
	}
	c, err := s.next()
	if err != nil {
		return err
	}
	if c == end {
		s.pos++
		s.depth--
		return nil
	}
	for {
		if err := item(); err != nil {
			return err
		}
		if c, err = s.next(); err != nil {
			return err
		}
		switch c {
		case ',':
			s.pos++
		case end:
			s.pos++
			s.depth--
			return nil
		default:
			return s.syntax(fmt.Sprintf("expected ',' or '%c' after %s, found %q", end, what, c))
		}
	}
}

// literal consumes word (true, false or null), whose first byte is next.
func (s *scanner) literal(word string) error {
	for len(s.buf)-s.pos < len(word) {
		if _, ok := s.more(); !ok {
			return s.ended()
		}
	}
	if string(s.buf[s.pos:s.pos+len(word)]) != word {
		return s.syntax("expected " + word)
	}
	s.pos += len(word)
	return nil
}

// isNull consumes a null, when the next value is one.
func (s *scanner) isNull() (bool, error) {
	c, err := s.next()
	if err != nil || c != 'n' {
		return false, err
	}
	return true, s.literal("null")
}

// str reads a string. One with an escape or a byte outside UTF-8 is
// decoded by encoding/json, so that it reads exactly as before.
func (s *scanner) str() (string, error) { return s.strIn(nil) }

// strIn is str sharing the string with table t (see scanner.keys): the
// same bytes read again give the string t holds, and a string not there
// goes in while t has room.
func (s *scanner) strIn(t *intern.Table[string]) (string, error) {
	c, err := s.next()
	if err != nil {
		return "", err
	}
	if c != '"' {
		return "", s.syntax(fmt.Sprintf("expected a string, found %q", c))
	}
	plain := true
	i := s.pos + 1
	for {
		if i >= len(s.buf) {
			shift, ok := s.more()
			i -= shift
			if !ok {
				return "", s.ended()
			}
			continue
		}
		c := s.buf[i]
		switch {
		case c == '"':
			quoted := s.buf[s.pos : i+1]
			s.pos = i + 1
			if plain || utf8.Valid(quoted) && bytes.IndexByte(quoted, '\\') < 0 {
				return share(t, quoted[1:len(quoted)-1]), nil
			}
			var out string
			if err := json.Unmarshal(quoted, &out); err != nil {
				return "", fmt.Errorf("invalid JSON string at offset %d: %w", s.off+int64(s.pos)-int64(len(quoted)), err)
			}
			return out, nil
		case c == '\\':
			plain = false
			i += 2
		case c < 0x20:
			s.pos = i
			return "", s.syntax("control character in a string")
		default:
			if c >= utf8.RuneSelf {
				plain = false
			}
			i++
		}
	}
}

// share is the string of b, from table t where it is there, put there
// while t has room (nil: a string of its own).
func share(t *intern.Table[string], b []byte) string {
	if v, ok := t.GetBytes(b); ok {
		return v
	}
	v := string(b)
	t.Put(v, v)
	return v
}

// number reads a number as its literal.
func (s *scanner) number() (json.Number, error) {
	i := s.pos
	for {
		if i >= len(s.buf) {
			shift, ok := s.more()
			i -= shift
			if !ok {
				// The number ends with the stream: what follows it is
				// missing, and so may be the rest of it.
				if !validNumber(s.buf[s.pos:i]) {
					return "", s.ended()
				}
				break
			}
			continue
		}
		c := s.buf[i]
		if c >= '0' && c <= '9' || c == '-' || c == '+' || c == '.' || c == 'e' || c == 'E' {
			i++
			continue
		}
		break
	}
	lit := s.buf[s.pos:i]
	if !validNumber(lit) {
		return "", s.syntax(fmt.Sprintf("invalid number %q", lit))
	}
	s.pos = i
	return json.Number(lit), nil
}

// validNumber reports whether b is a JSON number, as encoding/json's
// scanner accepts them.
func validNumber(b []byte) bool {
	if len(b) > 0 && b[0] == '-' {
		b = b[1:]
	}
	digits := func() int {
		n := 0
		for n < len(b) && b[n] >= '0' && b[n] <= '9' {
			n++
		}
		b = b[n:]
		return n
	}
	switch {
	case len(b) == 0:
		return false
	case b[0] == '0':
		b = b[1:]
	case digits() == 0:
		return false
	}
	if len(b) > 0 && b[0] == '.' {
		b = b[1:]
		if digits() == 0 {
			return false
		}
	}
	if len(b) > 0 && (b[0] == 'e' || b[0] == 'E') {
		b = b[1:]
		if len(b) > 0 && (b[0] == '+' || b[0] == '-') {
			b = b[1:]
		}
		if digits() == 0 {
			return false
		}
	}
	return len(b) == 0
}

// value reads any value as encoding/json decodes it into an interface
// with UseNumber: map[string]any, []any, string, json.Number, bool or nil.
func (s *scanner) value() (any, error) {
	c, err := s.next()
	if err != nil {
		return nil, err
	}
	switch {
	case c == '{':
		m := map[string]any{}
		err := s.object(func(key string) error {
			v, err := s.value()
			m[key] = v
			return err
		})
		return m, err
	case c == '[':
		list := []any{}
		err := s.array(func() error {
			v, err := s.value()
			list = append(list, v)
			return err
		})
		return list, err
	case c == '"':
		return s.boxedStr()
	case c == 't':
		return true, s.literal("true")
	case c == 'f':
		return false, s.literal("false")
	case c == 'n':
		return nil, s.literal("null")
	case c == '-' || c >= '0' && c <= '9':
		return s.number()
	}
	return nil, s.syntax(fmt.Sprintf("unexpected %q", c))
}

// boxedStr reads a string value as any, the same any for the same
// string while s.boxed has room (see scanner.keys).
func (s *scanner) boxedStr() (any, error) {
	if s.boxed == nil {
		return s.str()
	}
	v, err := s.strIn(s.values)
	if err != nil {
		return nil, err
	}
	if b, ok := s.boxed.Get(v); ok {
		return b, nil
	}
	var b any = v
	s.boxed.Put(v, b)
	return b, nil
}

// raw cuts the next value out of the stream as it is.
func (s *scanner) raw() ([]byte, error) {
	if _, err := s.next(); err != nil {
		return nil, err
	}
	s.mark = s.pos
	defer func() { s.mark = -1 }()
	if err := s.skip(); err != nil {
		return nil, err
	}
	return bytes.Clone(s.buf[s.mark:s.pos]), nil
}

// skip reads a value and drops it.
func (s *scanner) skip() error {
	c, err := s.next()
	if err != nil {
		return err
	}
	switch {
	case c == '{':
		return s.object(func(string) error { return s.skip() })
	case c == '[':
		return s.array(s.skip)
	case c == '"':
		_, err := s.str()
		return err
	case c == 't':
		return s.literal("true")
	case c == 'f':
		return s.literal("false")
	case c == 'n':
		return s.literal("null")
	case c == '-' || c >= '0' && c <= '9':
		_, err := s.number()
		return err
	}
	return s.syntax(fmt.Sprintf("unexpected %q", c))
}

// The typed reads below decode a value into a field as encoding/json
// does: null leaves the field as it was (a map or pointer becomes nil),
// and a value of another type is an error.

func (s *scanner) stringField(dst *string, field string) error {
	return s.stringFieldIn(dst, field, nil)
}

// sharedField is stringField for a field whose values repeat from one
// object to the next, shared through s.fields (see scanner.keys).
func (s *scanner) sharedField(dst *string, field string) error {
	return s.stringFieldIn(dst, field, s.fields)
}

func (s *scanner) stringFieldIn(dst *string, field string, t *intern.Table[string]) error {
	if null, err := s.isNull(); null || err != nil {
		return err
	}
	c, _ := s.next()
	if c != '"' {
		return s.mismatch(field, "a string")
	}
	v, err := s.strIn(t)
	*dst = v
	return err
}

func (s *scanner) boolField(dst *bool, field string) error {
	c, err := s.next()
	if err != nil {
		return err
	}
	switch c {
	case 'n':
		return s.literal("null")
	case 't':
		*dst = true
		return s.literal("true")
	case 'f':
		*dst = false
		return s.literal("false")
	}
	return s.mismatch(field, "true or false")
}

func (s *scanner) mapField(dst *map[string]any, field string) error {
	if null, err := s.isNull(); null || err != nil {
		*dst = nil
		return err
	}
	c, _ := s.next()
	if c != '{' {
		return s.mismatch(field, "an object")
	}
	v, err := s.value()
	m, _ := v.(map[string]any)
	if *dst == nil {
		*dst = m
	} else {
		// encoding/json decodes a repeated key's object into the same map.
		maps.Copy(*dst, m)
	}
	return err
}

func (s *scanner) numberField(dst **json.Number, field string) error {
	if null, err := s.isNull(); null || err != nil {
		*dst = nil
		return err
	}
	c, _ := s.next()
	if c == '"' {
		// encoding/json takes a string holding a number for a Number.
		v, err := s.str()
		if err != nil {
			return err
		}
		if !validNumber([]byte(v)) {
			return s.mismatch(field, "a number")
		}
		n := json.Number(v)
		*dst = &n
		return nil
	}
	if c != '-' && (c < '0' || c > '9') {
		return s.mismatch(field, "a number")
	}
	n, err := s.number()
	*dst = &n
	return err
}

func (s *scanner) mismatch(field, want string) error {
	return s.syntax(fmt.Sprintf("field %q is not %s", field, want))
}

// fieldKey is key as a struct field's name matches it in encoding/json:
// exactly, else one of names without regard to case.
func fieldKey(key string, names ...string) string {
	for _, n := range names {
		if key == n {
			return n
		}
	}
	for _, n := range names {
		if strings.EqualFold(key, n) {
			return n
		}
	}
	return ""
}

// queue reads a queue element (null leaves q as it is).
func (s *scanner) queue(q *Queue) error {
	if null, err := s.isNull(); null || err != nil {
		return err
	}
	return s.object(func(key string) error {
		switch k := fieldKey(key, "name", "type", "durable", "auto_delete", "exclusive", "arguments", "messages", "consumers", "internal_owner"); k {
		case "name":
			return s.stringField(&q.Name, k)
		case "type":
			return s.sharedField(&q.Type, k)
		case "durable":
			return s.boolField(&q.Durable, k)
		case "auto_delete":
			return s.boolField(&q.AutoDelete, k)
		case "exclusive":
			return s.boolField(&q.Exclusive, k)
		case "arguments":
			return s.mapField(&q.Arguments, k)
		case "messages":
			return s.numberField(&q.Messages, k)
		case "consumers":
			return s.numberField(&q.Consumers, k)
		case "internal_owner":
			v, err := s.value()
			q.InternalOwner = v
			return err
		}
		return s.skip()
	})
}

// binding reads a binding element (null leaves b as it is).
func (s *scanner) binding(b *Binding) error {
	if null, err := s.isNull(); null || err != nil {
		return err
	}
	return s.object(func(key string) error {
		switch k := fieldKey(key, "source", "destination", "destination_type", "routing_key", "arguments", "properties_key"); k {
		case "source":
			return s.sharedField(&b.Source, k)
		case "destination":
			return s.stringField(&b.Destination, k)
		case "destination_type":
			return s.sharedField(&b.DestinationType, k)
		case "routing_key":
			return s.stringField(&b.RoutingKey, k)
		case "arguments":
			return s.mapField(&b.Arguments, k)
		case "properties_key":
			return s.stringField(&b.PropertiesKey, k)
		}
		return s.skip()
	})
}
