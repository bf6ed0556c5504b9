package plan

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"reflect"
	"slices"
	"sort"
	"strings"

	"github.com/mqctl/mqctl/internal/intern"
	"github.com/mqctl/mqctl/pkg/flow"
	"github.com/mqctl/mqctl/pkg/kind"
	pj "github.com/mqctl/mqctl/pkg/planjson"
	"github.com/mqctl/mqctl/pkg/topology"
)

// The saved plan is the file "mqctl plan --out FILE" writes and
// "mqctl apply FILE" reads. It is private to mqctl: it carries what apply
// needs to make exactly the planned changes (the changes with their
// before/after objects, the bindings a replace takes down, the messages at
// stake, the fingerprint of the broker state, the vhosts, the objects to
// adopt) and may change shape with any mqctl release. Its kind and version
// say so; a reader refuses any other. The public, documented shape is the
// JSON plan (WriteJSON, docs/plan-json.md).
const (
	// SavedKind is the "kind" of a saved plan file.
	SavedKind = "mqctl-saved-plan"
	// SavedVersion is the version of the saved plan's shape this mqctl
	// writes and the only one it reads. Version 2 added the prints the
	// ownership record keeps, and the record entries a plan drops;
	// version 3 a fingerprint of the broker's state made another way
	// (broker.topologyPrint), which a version 2 plan's would not match:
	// refused as another version, not as a broker changed since;
	// version 4 the values the file took from the environment (env, with
	// their fields' keys), which a reader of version 3 refuses as an
	// unknown field, saying the plan is not valid: it says instead that it
	// reads another version. A version 3 plan (with or without env) reads
	// as before (oldestSavedVersion). Version 5 writes the flows as the
	// JSON plan's (format_version 3: each list of queues once, in
	// queue_lists), where versions 3 and 4 wrote flow.Diff's lists in
	// place, n lists of n queues where n classes reach the same queues;
	// both read as before (savedFlows). Version 6 writes a flow's
	// milliseconds from the environment as the file wrote them
	// (planjson.Millis: "${TTL}") and keeps the literals equal to such a
	// value (topology.EnvValue.Literal), which a reader of version 5
	// would refuse as not valid (a string for a number, an unknown
	// field); versions 3 to 5 read as before (numbers read as Millis).
	// Version 7 keeps a print of each object of the broker as read
	// (objects, Plan.ObjectPrints), so that apply names what changed when
	// the fingerprint differs; versions 3 to 6 read as before, apply then
	// saying it cannot tell which object changed.
	SavedVersion = 7
	// oldestSavedVersion is the oldest version this mqctl reads: a
	// version 3 plan has the same fingerprint, and env or none.
	oldestSavedVersion = 3
)

const savedNote = `private to mqctl: give this file to "mqctl apply FILE". It is not the JSON plan ("mqctl plan -o json", docs/plan-json.md): its shape may change with any mqctl release.`

type savedPlan struct {
	Kind        string        `json:"kind"`
	Version     int           `json:"version"`
	Note        string        `json:"note"`
	Fingerprint string        `json:"fingerprint"`
	Broker      *Broker       `json:"broker,omitempty"`
	Vhosts      []string      `json:"vhosts"`
	Owner       string        `json:"owner,omitempty"`
	TakeOver    *TakeOver     `json:"take_over,omitempty"`
	Changes     []savedChange `json:"changes"`
	Adopt       []ObjectRef   `json:"adopt"`
	Unmanaged   []ObjectRef   `json:"unmanaged"`
	Preexisting []ObjectRef   `json:"preexisting,omitempty"`
	// Kept: Plan.Kept when KeptChanged (kept_changed).
	Kept        []ObjectRef `json:"kept,omitempty"`
	KeptChanged bool        `json:"kept_changed,omitempty"`
	Unread      []Unread    `json:"unread,omitempty"`
	// The ownership record's side of the plan (Plan.Prints, Stale,
	// ChangedOutside).
	Prints         []savedPrint `json:"prints,omitempty"`
	Stale          []ObjectRef  `json:"stale,omitempty"`
	ChangedOutside []Outside    `json:"changed_outside,omitempty"`
	Others         []savedOther `json:"other_owners,omitempty"`
	// OutdatedRecords: shown again when the saved plan is applied (apply
	// finds the records to rewrite itself).
	OutdatedRecords []string `json:"outdated_records,omitempty"`
	// UnfinishedRecords and Restores: likewise.
	UnfinishedRecords []string  `json:"unfinished_records,omitempty"`
	Restores          []Restore `json:"restores,omitempty"`
	// Held: the changes the plan holds back (Plan.Held), shown again when
	// the saved plan is applied.
	Held []Held `json:"held,omitempty"`
	// Notes: what mqctl told the user when it made the plan.
	Notes []string `json:"notes,omitempty"`
	// Flows and FlowsUnknown: what the plan does to messages, shown again
	// when the saved plan is applied. Flows is the JSON plan's shape
	// (pj.Flows, without its unknown vhosts) from version 5, a flow.Diff
	// before (savedFlows).
	Flows        json.RawMessage `json:"flows,omitempty"`
	FlowsUnknown []FlowUnknown   `json:"flows_unknown,omitempty"`
	// Env: the values the file took from the environment that the saved
	// plan holds anyway (in its changes), and what the file wrote for
	// them: applying the saved plan shows none of them (Plan.Env).
	Env topology.EnvValues `json:"env,omitempty"`
	// ObjectPrints: Plan.ObjectPrints, 16 bytes an object in base64.
	ObjectPrints []savedPrints `json:"objects,omitempty"`
}

// savedOther is one entry of Plan.Others, with what only apply needs.
type savedOther struct {
	OtherOwned
	Recorded bool `json:"recorded"`
}

// savedPrint is one entry of Plan.Prints.
type savedPrint struct {
	ObjectRef
	Print Print `json:"print"`
}

// savedChange is a change of the saved plan as it is read, its objects
// savedObjects.
type savedChange savedChangeAs[*savedObject]

// savedChangeAs is a change of the saved plan, its objects of type O:
// *savedObject as read, their savedForms as written.
type savedChangeAs[O any] struct {
	Action          Action              `json:"action"`
	Kind            Kind                `json:"kind"`
	Vhost           string              `json:"vhost"`
	Name            string              `json:"name"`
	Before          O                   `json:"before,omitempty"`
	After           O                   `json:"after,omitempty"`
	Fields          []savedField        `json:"fields,omitempty"`
	Reason          string              `json:"reason,omitempty"`
	Bindings        []*topology.Binding `json:"bindings,omitempty"`
	Messages        int64               `json:"messages"`
	Consumers       int64               `json:"consumers"`
	MessagesAtLeast bool                `json:"messages_at_least"`
	Delayed         int64               `json:"messages_delayed,omitempty"`
	DeadLettering   int64               `json:"messages_dlx,omitempty"`
	Pos             *savedPos           `json:"pos,omitempty"`
	Print           Print               `json:"print,omitempty"`
	BindingPrints   []Print             `json:"binding_prints,omitempty"`
}

// savedField is one changed field; a null side is the field absent there.
type savedField struct {
	Field  string `json:"field"`
	Before any    `json:"before"`
	After  any    `json:"after"`
	Forces bool   `json:"forces_replace"`
	Masked bool   `json:"masked,omitempty"`
}

type savedPos struct {
	File string `json:"file"`
	Line int    `json:"line"`
	Col  int    `json:"column"`
}

// WriteSaved writes p as a saved plan for "mqctl apply FILE". It holds no
// secret: an item's secrets are masked and named by the variables the file
// took them from (topology.Item.Refs), read again by apply; a plan with a
// secret written literally in the file is refused.
func WriteSaved(w io.Writer, p *Plan) error {
	for _, c := range p.Changes {
		it, ok := c.After.(ItemObject)
		if !ok {
			continue
		}
		for _, sp := range it.SecretParts() {
			if sp.Ref != "" {
				continue
			}
			at := ""
			if pos, ok := it.ArgPos.Get(topology.RefKey(sp.Key, sp.Index)); ok {
				at = pos.String() + ": "
			} else if !it.Pos.IsZero() {
				at = it.Pos.String() + ": "
			}
			// Not taken whole from one variable: written in the file,
			// or built around one (amqp://u:${PW}@host), which a saved
			// plan cannot name.
			const why = "holds a secret that is not taken whole from one environment variable (it is written in the file, or in the file around a variable), and a saved plan holds no secret, only the variables secrets come from"
			if sp.Index >= 0 {
				return fmt.Errorf("%sitem %d of %s of %s %q in vhost %q %s: take the whole item from the environment (%s: [..., ${VARIABLE}, ...]), or apply the file with -f", at, sp.Index+1, sp.Key, c.Kind, c.Name, c.Vhost, why, sp.Key)
			}
			return fmt.Errorf("%s%s of %s %q in vhost %q %s: take the whole value from the environment (%s: ${VARIABLE}), or apply the file with -f", at, sp.Key, c.Kind, c.Name, c.Vhost, why, sp.Key)
		}
	}
	doc := savedPlan{
		Kind: SavedKind, Version: SavedVersion, Note: savedNote,
		Fingerprint: p.Fingerprint, ObjectPrints: encodePrints(p.ObjectPrints), Broker: p.Broker, Vhosts: nonNil(p.Vhosts), Owner: p.Owner, TakeOver: p.TakeOver,
		Adopt: nonNil(p.Adopt), Unmanaged: nonNil(p.Unmanaged), Preexisting: p.Preexisting, Kept: p.Kept, KeptChanged: p.KeptChanged, Unread: p.Unread,
		Stale: p.Stale, ChangedOutside: p.ChangedOutside, Held: p.Held, Notes: p.Notes,
		FlowsUnknown: p.FlowsUnknown, OutdatedRecords: p.OutdatedRecords,
		UnfinishedRecords: p.UnfinishedRecords, Restores: p.Restores,
	}
	for ref, pr := range p.Prints {
		doc.Prints = append(doc.Prints, savedPrint{ObjectRef: ref, Print: pr})
	}
	for _, o := range p.Others {
		doc.Others = append(doc.Others, savedOther{OtherOwned: o, Recorded: o.Recorded})
	}
	sort.Slice(doc.Prints, func(i, j int) bool { return refLess(doc.Prints[i].ObjectRef, doc.Prints[j].ObjectRef) })
	// The changes and the flows, most of the document, are written as they
	// stream (savedWriter.write), a change and an entry of the flows at a
	// time: held whole, encoded, then indented, the flows of a 50,002-object
	// replace took "plan --out" to 129 MB, where plan peaks at 87-92.
	sw := savedWriter{doc: &doc, changes: p.Changes, flows: p.Flows}
	// Of the values from the environment, only those the plan holds
	// anyway, as a whole JSON string or number (an argument's x-max-length:
	// ${N}): never a secret's (a password, a URI, which the plan masks),
	// nor a value only part of another. The document without them is
	// written once, as it streams, to find the values it holds.
	if len(p.Env) > 0 {
		held := map[string]bool{}
		bw := bufio.NewWriter(io.Discard)
		if err := sw.write(&indentWriter{w: bw, seen: func(text []byte) { wholeValues(text, held) }}); err != nil {
			return err
		}
		for _, h := range p.Env {
			if !h.Secret && held[h.Value] {
				doc.Env = append(doc.Env, h)
			}
		}
	}
	bw := bufio.NewWriter(w)
	if err := sw.write(&indentWriter{w: bw}); err != nil {
		return err
	}
	bw.WriteString("\n")
	return bw.Flush()
}

// savedWriter writes a saved plan: doc, but for its changes (changes, the
// plan's, each made a savedChange as it is written) and its flows (flows,
// nil for none, written as the JSON plan's: flowsHole), written as they
// stream.
type savedWriter struct {
	doc     *savedPlan
	changes []Change
	flows   *flow.Diff
}

func (sw savedWriter) write(e *indentWriter) error {
	forms := savedForms{}
	// Decode makes a saved plan's changes an empty list, never nil.
	holes := []hole{arrayHole("changes", len(sw.changes), false, func(i int) savedChangeAs[any] { return forms.change(&sw.changes[i]) })}
	doc := *sw.doc
	doc.Changes, doc.Flows = nil, nil
	if sw.flows != nil {
		doc.Flows = json.RawMessage("null")
		holes = append(holes, flowsHole("flows", sw.flows, nil))
	}
	return e.object(&doc, "", holes...)
}

// savedForms are the types the saved plan's objects are written as, by
// their savedForm's key: a struct of one field, the key's (its
// savedForm.value, omitted when nil), the bytes savedObject's MarshalJSON
// writes. Encoded as they are, the objects of a change are not encoded
// apart and then compacted into it, as a MarshalJSON's text is: writing
// the saved plan of make bench's 50,002-object replace allocated 15 MB
// more, and took the collector as much more work.
type savedForms map[string]reflect.Type

// change is c as the saved plan writes it.
func (f savedForms) change(c *Change) savedChangeAs[any] {
	sc := savedChangeAs[any]{
		Action: c.Action, Kind: c.Kind, Vhost: c.Vhost, Name: c.Name, Before: f.of(c.Before), After: f.of(c.After),
		Reason: c.Reason, Bindings: c.Bindings, Messages: c.Messages, Consumers: c.Consumers, MessagesAtLeast: c.MessagesAtLeast,
		Delayed: c.Delayed, DeadLettering: c.DeadLettering, Print: c.Print, BindingPrints: c.BindingPrints,
	}
	if !c.Pos.IsZero() {
		sc.Pos = &savedPos{File: c.Pos.File, Line: c.Pos.Line, Col: c.Pos.Col}
	}
	for _, f := range c.Fields {
		sc.Fields = append(sc.Fields, savedField{Field: f.Field, Before: f.Before, After: f.After, Forces: f.Forces, Masked: f.Masked})
	}
	return sc
}

// of is o as the saved plan writes it: nil for none; a type of Object
// without a savedForm is left to savedObject, which says so.
func (f savedForms) of(o Object) any {
	if o == nil {
		return nil
	}
	for _, t := range objectTypes {
		v, ok := t.saved.value(o)
		if !ok {
			continue
		}
		form := f[t.saved.key]
		if form == nil {
			form = reflect.StructOf([]reflect.StructField{{Name: "V", Type: reflect.TypeOf(v), Tag: reflect.StructTag(`json:"` + t.saved.key + `,omitempty"`)}})
			f[t.saved.key] = form
		}
		x := reflect.New(form)
		x.Elem().Field(0).Set(reflect.ValueOf(v))
		return x.Interface()
	}
	return &savedObject{o}
}

// savedVersionsRead are the versions of saved plans ReadSaved reads.
func savedVersionsRead() []int {
	var vs []int
	for v := oldestSavedVersion; v <= SavedVersion; v++ {
		vs = append(vs, v)
	}
	return vs
}

// wholeValues adds to out the strings and numbers JSON document doc holds
// as whole values (not the keys), as their text.
func wholeValues(doc []byte, out map[string]bool) {
	dec := json.NewDecoder(bytes.NewReader(doc))
	dec.UseNumber()
	var key bool // the next string is an object's key
	var stack []bool
	for {
		tok, err := dec.Token()
		if err != nil {
			return
		}
		switch t := tok.(type) {
		case json.Delim:
			switch t {
			case '{':
				stack = append(stack, true)
				key = true
			case '[':
				stack = append(stack, false)
				key = false
			default:
				stack = stack[:len(stack)-1]
				key = len(stack) > 0 && stack[len(stack)-1]
			}
			continue
		case string:
			if !key {
				out[t] = true
			}
		case json.Number:
			out[t.String()] = true
		}
		if len(stack) > 0 && stack[len(stack)-1] {
			key = !key
		}
	}
}

// ReadSaved reads a saved plan written by WriteSaved. name is the file's
// name, for the errors: a file that is not a saved plan, or one of another
// version, is refused with what to do.
func ReadSaved(r io.Reader, name string) (*Plan, error) {
	data, err := io.ReadAll(r)
	if err != nil {
		return nil, fmt.Errorf("read the saved plan %s: %w", name, err)
	}
	return ReadSavedBytes(data, name)
}

// ReadSavedBytes is ReadSaved of a saved plan already in memory, read
// where it is, as it streams (StreamSaved): no copy of it is held beside
// it, nor the decoder's own (a 50,002-object replace plan's is 54 MB). One
// StreamSaved does not read is read whole, for the error that says why
// it is refused, or read the same when it reads that way.
func ReadSavedBytes(data []byte, name string) (*Plan, error) {
	if p, err := StreamSaved(bytes.NewReader(data)); err == nil {
		return p, nil
	}
	return readSavedWhole(data, name)
}

// readSavedWhole is ReadSavedBytes with the document decoded whole, as
// it was before StreamSaved: what says why a saved plan is refused, and
// reads one written in a way StreamSaved does not take on.
func readSavedWhole(data []byte, name string) (*Plan, error) {
	again := fmt.Sprintf("make it again with \"mqctl plan --out %s\"", name)
	var head struct {
		Kind          string          `json:"kind"`
		Version       json.RawMessage `json:"version"`
		FormatVersion *string         `json:"format_version"`
	}
	if err := json.Unmarshal(data, &head); err != nil {
		return nil, fmt.Errorf("%s is not a saved plan (%v): %s", name, err, again)
	}
	switch {
	case head.Kind == "" && head.FormatVersion != nil:
		return nil, fmt.Errorf("%s is a JSON plan (format_version %q, the output of \"mqctl plan -o json\" or of an mqctl older than saved plans), not a saved plan: %s", name, *head.FormatVersion, again)
	case head.Kind != SavedKind:
		return nil, fmt.Errorf("%s is not a saved plan (kind %q, want %q): %s", name, head.Kind, SavedKind, again)
	case !slices.ContainsFunc(savedVersionsRead(), func(v int) bool { return string(head.Version) == fmt.Sprint(v) }):
		return nil, fmt.Errorf("%s is a saved plan of version %s, and this mqctl reads versions %d to %d only: %s with this mqctl", name, head.Version, oldestSavedVersion, SavedVersion, again)
	}
	var doc savedPlan
	if err := savedDecoder(bytes.NewReader(data)).Decode(&doc); err != nil {
		return nil, fmt.Errorf("%s is not a valid saved plan (%v): %s", name, err, again)
	}
	p, err := doc.plan(nil)
	if err != nil {
		return nil, fmt.Errorf("%s is not a valid saved plan (%v): %s", name, err, again)
	}
	p.Changes = make([]Change, len(doc.Changes))
	texts, args := intern.New[string](), intern.New[any]()
	for i := range doc.Changes {
		c, err := doc.Changes[i].change(texts, args)
		if err != nil {
			return nil, fmt.Errorf("%s is not a valid saved plan (change %d, %s %q in vhost %q: %v): %s", name, i+1, c.Kind, c.Name, c.Vhost, err, again)
		}
		p.Changes[i] = c
	}
	return p, nil
}

// StreamSaved reads the saved plan in r as it streams: a change at a
// time, its flows' entries one at a time, each made the plan's as it is
// read, so that it holds the plan and the text of one change, never the
// whole document's, nor its changes as read beside the plan's. It reads
// what ReadSavedBytes reads, the same; an error says only that it did
// not read r (a file that is no saved plan, or one this mqctl does not
// read, or written in a way only the whole document's read takes on):
// ReadSavedBytes of the whole document says why, or reads it.
//
// apply PLANFILE of make bench's 50,002-object replace plan (54 MB), up to
// the broker's first answer: 86-88 MB peak RSS and 0.9-1.3 s CPU from the
// file, where the whole read (the file, then decoded) took 197-211 MB and
// 2.6-2.8 s (MB as make bench counts them, MiB; RabbitMQ 4.3.6 perf node,
// 5 runs each, load 12-17). The plan read holds 40.2 MiB (62.3 before its
// repeated texts, arguments and dead letters' ends were shared), 29.6
// without its flows, which apply reads apart (StreamSavedFlowsApart); apply
// then reads the broker beside it: the whole apply peaked at 123 MB, 97
// since (its flows read apart, and made text a queue at a time; the
// broker's objects held for the plan's copies).
func StreamSaved(r io.Reader) (*Plan, error) {
	p, _, err := streamSaved(r, false)
	return p, err
}

// StreamSavedFlowsApart is StreamSaved, but leaves out of the plan the
// flows of a plan of version 5 or later, which are there only to be shown
// (11 to 15 MB of the 50,002-object replace plan, held through the
// broker's read): they are read and refused as StreamSaved reads them,
// and p.Flows is nil. at is where they are in r (the offset of the end of
// their key), for ReadSavedFlows to read them again from there; -1 where
// p holds its flows itself (none, or an older version's).
func StreamSavedFlowsApart(r io.Reader) (p *Plan, at int64, err error) {
	return streamSaved(r, true)
}

// ReadSavedFlows reads the flows of a saved plan from r, at the offset
// StreamSavedFlowsApart gave.
func ReadSavedFlows(r io.Reader) (*flow.Diff, error) {
	// At the end of their key: what follows is the rest of the key's
	// entry, read as the document's (the colon, the value).
	dec := savedDecoder(io.MultiReader(strings.NewReader(`{"flows"`), r))
	if err := expectDelim(dec, '{'); err != nil {
		return nil, err
	}
	if tok, err := dec.Token(); err != nil || tok != "flows" {
		return nil, errUnusual
	}
	return streamFlows(dec, true)
}

// streamFlows reads the flows next in dec (the JSON plan's shape, as
// WriteSaved writes them): the routes and dead letters, most of them, are
// made the plan's an entry at a time once the lists of queues they name
// are read (before them, as WriteSaved writes them), so that the
// document's entries are not held beside the plan's (at 50,002 objects,
// 9 MB more). Unless keep, they are only read (refused as they would be
// kept), and the flows returned are nil.
func streamFlows(dec *json.Decoder, keep bool) (*flow.Diff, error) {
	var doc pj.Flows
	var routes []flow.Route
	var dead []flow.DeadLetter
	lists := false
	// one makes the plan's the flows of one entry, e.
	one := func(e *pj.Flows) error {
		d, _, err := planFlows(e)
		if err != nil || !keep {
			return err
		}
		routes = append(routes, d.Routes...)
		for _, dl := range d.DeadLetters {
			if n := len(dead); n > 0 {
				shareEnds(&dl, &dead[n-1])
			}
			dead = append(dead, dl)
		}
		return nil
	}
	err := streamFields(dec, &doc, map[string]func() error{
		"queue_lists": func() error {
			lists = true
			return streamValue(dec, reflect.ValueOf(&doc.QueueLists).Elem())
		},
		"routes": func() error {
			return eachOrWhole(dec, lists, &doc.Routes, func(e pj.FlowRoute) error {
				return one(&pj.Flows{QueueLists: doc.QueueLists, Routes: []pj.FlowRoute{e}})
			})
		},
		"dead_letters": func() error {
			return eachOrWhole(dec, lists, &doc.DeadLetters, func(e pj.FlowDead) error {
				return one(&pj.Flows{QueueLists: doc.QueueLists, DeadLetters: []pj.FlowDead{e}})
			})
		},
	})
	if err != nil {
		return nil, err
	}
	d, _, err := planFlows(&doc)
	if err != nil || !keep {
		return nil, err
	}
	if routes != nil {
		d.Routes = routes
	}
	if dead != nil {
		d.DeadLetters = dead
	}
	return d, nil
}

// shareEnds makes dead letter dl's ends, and its texts, those of the one
// before it, prev, where they are the same: a queue's dead letters of
// each reason mostly go alike, and the vhost, the exchange and the reason
// repeat (at 50,002 objects, 3 MB of the flows' 15).
func shareEnds(dl, prev *flow.DeadLetter) {
	for _, end := range []**flow.DeadLetterEnd{&dl.Before, &dl.After} {
		for _, same := range []*flow.DeadLetterEnd{prev.Before, prev.After} {
			if *end != nil && same != nil && reflect.DeepEqual(*end, same) {
				*end = same
				break
			}
		}
	}
	for _, s := range []struct{ s, same *string }{{&dl.Vhost, &prev.Vhost}, {&dl.Queue, &prev.Queue}, {&dl.Cause, &prev.Cause}} {
		if *s.s == *s.same {
			*s.s = *s.same
		}
	}
}

// eachOrWhole reads the array next in dec an entry at a time into f once
// the lists of queues its entries name are read (lists), else whole into
// whole, for the entries to be made the plan's with the rest.
func eachOrWhole[T any](dec *json.Decoder, lists bool, whole *[]T, f func(T) error) error {
	if !lists {
		return streamValue(dec, reflect.ValueOf(whole).Elem())
	}
	return eachEntry(dec, f)
}

// eachEntry decodes the array (or null) next in dec an entry at a time,
// giving each to f.
func eachEntry[T any](dec *json.Decoder, f func(T) error) error {
	tok, err := dec.Token()
	switch {
	case err != nil:
		return err
	case tok == nil:
		return nil
	case tok != json.Delim('['):
		return errUnusual
	}
	for dec.More() {
		var e T
		if err := dec.Decode(&e); err != nil {
			return err
		}
		if err := f(e); err != nil {
			return err
		}
	}
	return expectDelim(dec, ']')
}

// streamSaved is StreamSaved, the flows left apart where apart is true
// (StreamSavedFlowsApart).
func streamSaved(r io.Reader, apart bool) (*Plan, int64, error) {
	dec := savedDecoder(r)
	var doc savedPlan
	var flows *flow.Diff
	at := int64(-1)
	changes := []Change{}
	texts, args := intern.New[string](), intern.New[any]()
	err := streamFields(dec, &doc, map[string]func() error{
		"changes": func() error {
			if err := expectDelim(dec, '['); err != nil {
				return err
			}
			for dec.More() {
				var sc savedChange
				if err := dec.Decode(&sc); err != nil {
					return err
				}
				c, err := sc.change(texts, args)
				if err != nil {
					return errUnusual
				}
				changes = append(changes, c)
			}
			return expectDelim(dec, ']')
		},
		"flows": func() error {
			if doc.Version < 5 { // flow.Diff's shape, or not said yet
				return streamValue(dec, reflect.ValueOf(&doc.Flows).Elem())
			}
			if apart {
				at = dec.InputOffset()
			}
			var err error
			flows, err = streamFlows(dec, !apart)
			return err
		},
	})
	if err != nil {
		return nil, -1, err
	}
	// One document and nothing after it, of this kind and a version read.
	if _, err := dec.Token(); err != io.EOF || doc.Kind != SavedKind || !slices.Contains(savedVersionsRead(), doc.Version) {
		return nil, -1, errUnusual
	}
	p, err := doc.plan(flows)
	if err != nil {
		return nil, -1, err
	}
	p.Changes = changes
	return p, at, nil
}

// savedDecoder is the decoder of a saved plan: numbers as json.Number,
// an unknown field an error.
func savedDecoder(r io.Reader) *json.Decoder {
	dec := json.NewDecoder(r)
	dec.UseNumber()
	dec.DisallowUnknownFields()
	return dec
}

// plan is the Plan doc holds, but for its changes. Its flows are flows,
// read apart, if not nil, else doc's own (savedFlows).
func (doc *savedPlan) plan(flows *flow.Diff) (*Plan, error) {
	p := &Plan{
		FormatVersion: FormatVersion, Fingerprint: doc.Fingerprint, Broker: doc.Broker,
		Vhosts: emptyToNil(doc.Vhosts), Owner: doc.Owner, TakeOver: doc.TakeOver, Adopt: emptyToNil(doc.Adopt), Unmanaged: emptyToNil(doc.Unmanaged), Preexisting: emptyToNil(doc.Preexisting), Kept: emptyToNil(doc.Kept), KeptChanged: doc.KeptChanged, Unread: emptyToNil(doc.Unread),
		Stale: emptyToNil(doc.Stale), ChangedOutside: emptyToNil(doc.ChangedOutside), Held: emptyToNil(doc.Held), Notes: emptyToNil(doc.Notes),
		FlowsUnknown: doc.FlowsUnknown, OutdatedRecords: doc.OutdatedRecords,
		UnfinishedRecords: doc.UnfinishedRecords, Restores: doc.Restores, Env: doc.Env,
	}
	var err error
	if p.ObjectPrints, err = decodePrints(doc.ObjectPrints); err != nil {
		return nil, err
	}
	doc.ObjectPrints = nil
	p.Flows = flows
	if flows == nil {
		if p.Flows, err = savedFlows(doc.Flows, doc.Version); err != nil {
			return nil, err
		}
	}
	for _, o := range doc.Others {
		o.OtherOwned.Recorded = o.Recorded
		p.Others = append(p.Others, o.OtherOwned)
	}
	for _, sp := range doc.Prints {
		if p.Prints == nil {
			p.Prints = map[ObjectRef]Print{}
		}
		p.Prints[sp.ObjectRef] = sp.Print
	}
	return p, nil
}

// change is the Change sc holds, as the diff makes it (normalizeChange);
// an error when apply could not carry it out (wellFormed), with the
// change as read. The texts that repeat from one change to the next are
// the ones shared in t (a nil t shares none): a replace's reason, some
// 1,000 bytes the same for every queue whose same field changed (12 MB
// of a 50,002-object replace plan's 62), the vhost, the file, the fields'
// and bindings' names; and the arguments' names and values in args
// (shareArgs: 3.8 MB more of that plan's).
func (sc *savedChange) change(t *intern.Table[string], args *intern.Table[any]) (Change, error) {
	c := Change{
		Action: sc.Action, Kind: sc.Kind, Vhost: shared(t, sc.Vhost), Name: sc.Name, Before: sc.Before.object(), After: sc.After.object(),
		Reason: shared(t, sc.Reason), Bindings: sc.Bindings, Messages: sc.Messages, Consumers: sc.Consumers, MessagesAtLeast: sc.MessagesAtLeast,
		Delayed: sc.Delayed, DeadLettering: sc.DeadLettering, Print: sc.Print, BindingPrints: sc.BindingPrints,
	}
	if sc.Pos != nil {
		c.Pos = topology.Pos{File: shared(t, sc.Pos.File), Line: sc.Pos.Line, Col: sc.Pos.Col}
	}
	for _, sf := range sc.Fields {
		c.Fields = append(c.Fields, FieldChange{Field: shared(t, sf.Field), Before: sf.Before, After: sf.After, Forces: sf.Forces, Masked: sf.Masked})
	}
	for _, b := range c.Bindings {
		if b != nil {
			b.Source, b.DestinationType = shared(t, b.Source), shared(t, b.DestinationType)
		}
	}
	if err := c.wellFormed(); err != nil {
		return c, err
	}
	normalizeChange(&c)
	shareArgs(&c, args)
	return c, nil
}

// shareArgs makes the argument names, and the values of text or whole
// numbers, of c's objects, of the bindings it takes down and of its
// fields, those t holds (topology.Args.Shared): each queue's arguments
// repeat the names and most of the values of the others' (a nil t
// shares none).
func shareArgs(c *Change, t *intern.Table[any]) {
	if t == nil {
		return
	}
	for _, o := range []Object{c.Before, c.After} {
		switch o := o.(type) {
		case topology.Named:
			if o != nil {
				def := o.Typed().Def()
				def.SetArgs(o, def.Args(o).Shared(t))
			}
		case BindingObject:
			o.Arguments = o.Arguments.Shared(t)
		}
	}
	for _, b := range c.Bindings {
		b.Arguments = b.Arguments.Shared(t)
	}
	for i := range c.Fields {
		f := &c.Fields[i]
		f.Before, f.After = topology.SharedValue(t, f.Before), topology.SharedValue(t, f.After)
	}
}

// shared is s, or the string equal to it that t holds; s is put there
// while t has room.
func shared(t *intern.Table[string], s string) string { return t.Share(s, s) }

// savedFlows are a saved plan's flows, of its version: the JSON plan's
// shape from version 5 (each list of queues once), flow.Diff's before.
func savedFlows(data json.RawMessage, version int) (*flow.Diff, error) {
	if len(data) == 0 {
		return nil, nil
	}
	dec := savedDecoder(bytes.NewReader(data))
	if version < 5 {
		var d flow.Diff
		if err := dec.Decode(&d); err != nil {
			return nil, err
		}
		return &d, nil
	}
	var doc pj.Flows
	if err := dec.Decode(&doc); err != nil {
		return nil, err
	}
	d, _, err := planFlows(&doc)
	return d, err
}

// wellFormed reports what makes c, read from a saved plan, one apply
// cannot carry out: an action it does not know, an empty binding among
// those it takes down, or an object missing or of another kind than c's (a file edited by hand, or damaged). A kind
// this mqctl does not know is for apply to refuse (apply.Check).
func (c *Change) wellFormed() error {
	var needBefore, needAfter bool
	switch c.Action {
	case Create:
		needAfter = true
	case Update, Replace:
		needBefore, needAfter = true, true
	case Delete:
		needBefore = true
	default:
		return fmt.Errorf("unknown action %q", c.Action)
	}
	if slices.Contains(c.Bindings, nil) {
		return fmt.Errorf("an empty binding among those it takes down")
	}
	if _, known := kind.Of(c.Kind); !known {
		return nil
	}
	for _, side := range []struct {
		name string
		need bool
		o    Object
	}{{"before", needBefore, c.Before}, {"after", needAfter, c.After}} {
		switch {
		case side.o == nil && side.need:
			return fmt.Errorf("a %s without its %q object", c.Action, side.name)
		case side.o != nil && !objCarries(side.o, c.Kind):
			return fmt.Errorf("its %q object is no %s", side.name, c.Kind.Label())
		}
	}
	return nil
}

// normalizeChange puts the values read from JSON back into the types the
// diff makes (int64 and float64 numbers, Args maps).
func normalizeChange(c *Change) {
	normalizeObject(c.Before)
	normalizeObject(c.After)
	for j := range c.Fields {
		f := &c.Fields[j]
		f.Before, f.After = topology.Normalize(f.Before), topology.Normalize(f.After)
	}
	for _, b := range c.Bindings {
		b.Arguments = b.Arguments.Normalized()
	}
}

func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

func emptyToNil[T any](s []T) []T {
	if len(s) == 0 {
		return nil
	}
	return s
}

func normalizeObject(o Object) {
	if o != nil {
		objNormalize(o)
	}
}

// savedOf returns o as the saved plan holds it; nil for none.
func savedOf(o Object) *savedObject {
	if o == nil {
		return nil
	}
	return &savedObject{o}
}

// Broker names the broker a plan was read from: its RabbitMQ version and
// cluster name, as GET /api/overview reports them, and its cluster's
// nodes, running or not (GET /api/nodes; none where the user may not
// read them).
type Broker struct {
	Version string   `json:"rabbitmq_version"`
	Cluster string   `json:"cluster_name"`
	Nodes   []string `json:"nodes,omitempty"`
}

// SavedFor says why saved plan p, whose file is name, must not be applied
// to broker b: it was made against another (another version, or another
// cluster), whose state its fingerprint matched by chance or as a copy
// (two brokers without the plan's vhosts match alike), and what it judged
// was for that one. "" when p was made against b, or does not say.
//
// A cluster whose name was never set reports one made from the name of
// the node that answers (rabbit_nodes:cluster_name_default: the node's
// name before its @, then the machine's host name), so a plan saved
// through one node and applied through another of the same cluster (a
// load balancer in front of it, or a node down) names another cluster.
// A cluster is then told by its nodes: the same when the two lists share
// one; refused as another only when both lists are known and share none.
func SavedFor(p *Plan, name string, b Broker, server string) string {
	s := p.Broker
	if s == nil {
		return ""
	}
	switch {
	case s.Version != b.Version:
	case s.Cluster == b.Cluster:
		return ""
	case len(s.Nodes) == 0 || len(b.Nodes) == 0 || slices.ContainsFunc(s.Nodes, func(n string) bool { return slices.Contains(b.Nodes, n) }):
		return ""
	}
	return fmt.Sprintf("%s was planned against RabbitMQ %s (cluster %q), and %s is RabbitMQ %s (cluster %q): a saved plan applies only to the broker it was made against; plan again against this one (mqctl plan --out %s --server %s), or apply %s with --server pointing at the broker it was made for",
		name, s.Version, s.Cluster, server, b.Version, b.Cluster, name, server, name)
}
