package definitions

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"github.com/mqctl/mqctl/pkg/topology"
)

// The lenient mode: a live broker's answers (GET /api/definitions/{vhost},
// or the per-kind list endpoints), decoded one object at a time and mapped
// with the rules Read applies to files, without its checks. What RabbitMQ
// itself wrote is taken as it is: unknown keys and shapes are skipped, not
// reported.

// DecodeStream reads a definitions answer into d one object at a time, so
// that only the decoded objects are held, never the document's text (a
// document of 50,000 objects is some 10 MB of JSON). d starts afresh (a
// retried read); an answer cut short is io.ErrUnexpectedEOF, as a
// buffered decode reports it. dec should UseNumber, so that large integer
// arguments stay exact.
func (d *Document) DecodeStream(dec *json.Decoder) error {
	*d = Document{}
	return cutShort(d.decodeObjects(dec))
}

func (d *Document) decodeObjects(dec *json.Decoder) error {
	if err := expectDelim(dec, '{'); err != nil {
		return err
	}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return err
		}
		key, _ := tok.(string)
		if err := d.decodeSection(dec, key); err != nil {
			return err
		}
	}
	return expectDelim(dec, '}')
}

// decodeSection decodes the value of the document's key from dec.
func (d *Document) decodeSection(dec *json.Decoder, key string) error {
	if key == "parameters" {
		var err error
		d.Parameters, err = decodeArray(dec, d.Parameters, false)
		return err
	}
	if k, ok := sectionKind(key); ok {
		if t, _ := typedKindOf(k); t.decode != nil {
			return t.decode(d, dec, k)
		}
	}
	var skip json.RawMessage
	return dec.Decode(&skip)
}

// DecodeList reads a list answer (a JSON array; null is an empty list) one
// element at a time. Elements that are not JSON objects are skipped:
// RabbitMQ renders an object that vanished while it built a list (a vhost
// or queue deleted meanwhile) as an empty list, []. An answer cut short is
// io.ErrUnexpectedEOF.
func DecodeList[T any](dec *json.Decoder) ([]T, error) {
	out, err := decodeArray(dec, []T(nil), true)
	return out, cutShort(err)
}

// EachListElement is DecodeList handing each element to fn as it is
// decoded, instead of a list of them all: a caller that keeps a little of
// each element holds no more than that.
func EachListElement[T any](dec *json.Decoder, fn func(T)) error {
	return cutShort(eachElement(dec, true, fn))
}

// decodeArray appends the elements of a JSON array (nothing for null);
// lenient skips elements that are not JSON objects (see DecodeList).
func decodeArray[T any](dec *json.Decoder, out []T, lenient bool) ([]T, error) {
	err := eachElement(dec, lenient, func(v T) { out = append(out, v) })
	return out, err
}

// eachElement hands each element of a JSON array to fn as it is decoded
// (nothing for null); lenient skips elements that are not JSON objects.
func eachElement[T any](dec *json.Decoder, lenient bool, fn func(T)) error {
	tok, err := dec.Token()
	if err != nil {
		return err
	}
	if tok == nil {
		return nil
	}
	if tok != json.Delim('[') {
		return fmt.Errorf("expected a list, got %v", tok)
	}
	for dec.More() {
		var v T
		if lenient {
			var raw json.RawMessage
			if err := dec.Decode(&raw); err != nil {
				return err
			}
			if raw = bytes.TrimSpace(raw); len(raw) == 0 || raw[0] != '{' {
				continue
			}
			err = decodeNumbers(raw, &v)
		} else {
			err = dec.Decode(&v)
		}
		if err != nil {
			return err
		}
		fn(v)
	}
	_, err = dec.Token()
	return err
}

// cutShort maps the end of an answer in the middle of a document onto
// io.ErrUnexpectedEOF, as a buffered decode reports it.
func cutShort(err error) error {
	if errors.Is(err, io.EOF) {
		return io.ErrUnexpectedEOF
	}
	return err
}

func expectDelim(dec *json.Decoder, want json.Delim) error {
	tok, err := dec.Token()
	if err != nil {
		return err
	}
	if tok != want {
		return fmt.Errorf("expected %v, got %v", want, tok)
	}
	return nil
}

func decodeNumbers(raw []byte, out any) error {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	return dec.Decode(out)
}

// LiveVhost is what MapLive needs to know of a vhost besides its objects.
type LiveVhost struct {
	Name             string
	Description      string
	DefaultQueueType string // "" for none
	Tags             []string
	// Listed is the vhost's queue list (GET /api/queues/{vhost}), when
	// read: it gives the exclusive flag, which a definitions document
	// lacks, and the type of queues the document names none for.
	Listed []Queue
	// PropertiesKeys, when not nil, receives each binding's properties_key
	// by topology.Binding.Key().
	PropertiesKeys map[string]string
	// Export says doc is the vhost's definitions export (GET
	// /api/definitions/{vhost}), read without Listed. An export leaves
	// exclusive queues out, and RabbitMQ 4.3.6 keeps their bindings in it:
	// a binding to a queue doc does not hold is left out with its queue,
	// as the queue list would have it (no other queue can be missing: a
	// queue's bindings go with it).
	Export bool
}

// MapLive maps one vhost's live objects onto the model, emptying doc as it
// goes (a mapped object is garbage at once; a queue's arguments table
// becomes the model's). Built-in exchanges, exclusive
// and server-named queues and their bindings and the default exchange's
// implicit bindings are left out; operator policies come from
// doc.OperatorPolicies and from "operator_policy" runtime parameters (3.10,
// 4.3); x-queue-type is lifted into Queue.Type (see MapQueue), falling back
// to the type the queue list reports, then the vhost's default queue type.
// The error, for an operator_policy parameter whose value is not a policy,
// names it.
func MapLive(lv LiveVhost, doc *Document) (*topology.Vhost, error) {
	return NewLiveMapper(lv).Finish(doc)
}

// LiveMapper maps one vhost's live objects onto the model as MapLive
// does, taking queues and bindings one at a time as they are decoded
// (Document.DecodeReaderTo) and the rest of the document at the end
// (Finish).
type LiveMapper struct {
	lv     LiveVhost
	v      *topology.Vhost
	listed map[string]listedQueue
	// dropped are the queues left out; exported the export's queues
	// (LiveVhost.Export).
	dropped, exported map[string]bool
	// bindings are mapped as they come and kept until Finish, which
	// knows every queue left out, and so the bindings that go with them.
	bindings []*topology.Binding
}

type listedQueue struct {
	typ       string
	exclusive bool
}

// NewLiveMapper starts the mapping of vhost lv.
func NewLiveMapper(lv LiveVhost) *LiveMapper {
	m := &LiveMapper{lv: lv, v: topology.NewVhost(lv.Name), listed: make(map[string]listedQueue, len(lv.Listed)), dropped: map[string]bool{}}
	m.v.Description = lv.Description
	m.v.DefaultQueueType = lv.DefaultQueueType
	m.v.Tags = lv.Tags
	for _, q := range lv.Listed {
		m.listed[q.Name] = listedQueue{q.Type, q.Exclusive}
	}
	if lv.Export {
		m.exported = map[string]bool{}
	}
	return m
}

// Queue maps queue q, whose arguments table becomes the model's queue's
// (normalised where it is): the caller lets go of it.
func (m *LiveMapper) Queue(q Queue) {
	if m.exported != nil {
		m.exported[q.Name] = true
	}
	l := m.listed[q.Name]
	q.Exclusive = q.Exclusive || l.exclusive
	if SkipQueue(q) {
		m.dropped[q.Name] = true
		return
	}
	// Each queue comes to the mapper alone, decoded from the stream or
	// taken out of the document (Finish): its arguments are the model's.
	m.v.Queues[q.Name] = mapOwnedQueue(q, l.typ, m.lv.DefaultQueueType)
}

// Exchange maps exchange e.
func (m *LiveMapper) Exchange(e Exchange) {
	if !SkipExchange(e.Name) {
		m.v.Exchanges[e.Name] = MapExchange(e)
	}
}

// Binding maps binding b.
func (m *LiveMapper) Binding(b Binding) {
	tb, ok := MapBinding(b)
	if ok && m.lv.PropertiesKeys != nil {
		m.lv.PropertiesKeys[tb.Key()] = b.PropertiesKey
	}
	if ok {
		m.bindings = append(m.bindings, tb)
	}
}

// Finish maps what doc holds, emptying it as it goes, and returns the
// vhost with everything mapped.
func (m *LiveMapper) Finish(doc *Document) (*topology.Vhost, error) {
	lv, v := m.lv, m.v
	for _, p := range doc.Parameters {
		if p.Component != OperatorPolicyComponent {
			continue
		}
		var op Policy
		if err := decodeNumbers(p.Value, &op); err != nil {
			return nil, fmt.Errorf("read operator policy %q of vhost %q: %w", p.Name, lv.Name, err)
		}
		op.Name = p.Name
		doc.OperatorPolicies = append(doc.OperatorPolicies, op)
	}
	doc.Parameters = nil
	// Each typed kind's list (typedSpecs, in their order: exchanges,
	// queues, bindings, the kinds of policy).
	for _, s := range typedSpecs() {
		if t, _ := typedKindOf(s.Kind); t.mapLive != nil {
			t.mapLive(m, doc, s.Kind)
		}
	}
	// A binding to a queue left out goes with it; so, in an export, does
	// one to a queue it does not hold (see LiveVhost.Export).
	for _, tb := range m.bindings {
		if tb.DestinationType == topology.DestQueue && (m.dropped[tb.Destination] || (m.exported != nil && !m.exported[tb.Destination])) {
			continue
		}
		v.Bindings = append(v.Bindings, tb)
	}
	m.bindings = nil
	v.SortBindings()
	*doc = Document{}
	return v, nil
}
