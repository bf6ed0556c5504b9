package plan

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"runtime"
	"strings"
	"testing"
	"unsafe"

	"github.com/google/go-cmp/cmp"

	"github.com/mqctl/mqctl/internal/gentopo"
	"github.com/mqctl/mqctl/pkg/kind"
	"github.com/mqctl/mqctl/pkg/loader"
	"github.com/mqctl/mqctl/pkg/rmqversion"
	"github.com/mqctl/mqctl/pkg/topology"
)

// richPlan is a saved plan with every part a saved plan may hold: the
// changes of samplePlan (a create, an update, a replace, a delete, a
// policy), flows with routes and dead letters (manyToAll), the prints of
// the objects and of the record, values from the environment, notes and
// the objects to adopt.
func richPlan(t testing.TB) *Plan {
	t.Helper()
	p := samplePlan()
	p.Vhosts = []string{"/"}
	p.Adopt = []ObjectRef{{kind.Exchange, "/", "orders"}}
	p.Notes = []string{"a note"}
	p.Flows = manyToAll(t, 2).Flows
	p.ObjectPrints = []ObjectPrint{{Kind: kind.Queue, Vhost: "/", ID: 1, Sum: 2}, {Kind: kind.Queue, Vhost: "/", ID: 3, Sum: 4}}
	p.Env = topology.EnvValues{{Value: "orders.shipping", Raw: "${Q}"}}
	p.Broker = &Broker{Version: "4.3.6", Cluster: "rabbit@h", Nodes: []string{"rabbit@h"}}
	return p
}

// benchReplacePlan is the plan of make bench's replace file
// (gentopo.ReplaceYAML: every working queue's max_length and both
// exchanges' types changed) against its file applied (gentopo.YAML, as a
// RabbitMQ 4.x broker reads it back), n working queues: 4n+2 objects, n
// queues and 2 exchanges replaced, every binding taken down and put back,
// with its flows, as "mqctl plan --out" saves it.
func benchReplacePlan(t testing.TB, n int) *Plan {
	t.Helper()
	_, c := noopBench(t, n)
	replace, err := loader.LoadBytes("replace.yaml", []byte(gentopo.ReplaceYAML("bench", n)), loader.Options{})
	if err != nil {
		t.Fatal(err)
	}
	p := Diff(replace, c)
	p.SetFlows(c, rmqversion.Default)
	return p
}

func savedBytes(t testing.TB, p *Plan) []byte {
	t.Helper()
	var buf bytes.Buffer
	if err := WriteSaved(&buf, p); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// TestStreamSavedReadsAsWhole: a saved plan read as it streams is the plan
// read whole (the reader before StreamSaved), to the last field: one
// written now (with flows, prints, env), the samples of the other tests,
// and versions 3 and 4 (env without keys, flows in flow.Diff's shape).
func TestStreamSavedReadsAsWhole(t *testing.T) {
	docs := map[string][]byte{
		"a plan with every part": savedBytes(t, richPlan(t)),
		"the sample plan":        savedBytes(t, samplePlan()),
		"many to all":            savedBytes(t, manyToAll(t, 5)),
		"an empty plan":          savedBytes(t, &Plan{Fingerprint: "f"}),
		"version 3": []byte(`{"kind":"mqctl-saved-plan","version":3,"fingerprint":"f","vhosts":[],"changes":[],"adopt":[],"unmanaged":[],` +
			`"env":[{"value":"tok-secret","written":"${TOK}"}]}`),
	}
	old, err := json.Marshal(manyToAll(t, 3).Flows)
	if err != nil {
		t.Fatal(err)
	}
	docs["version 4, its flows flow.Diff's"] = []byte(`{"kind":"mqctl-saved-plan","version":4,"fingerprint":"f","vhosts":[],"changes":[],"adopt":[],"unmanaged":[],"flows":` + string(old) + `}`)
	for name, doc := range docs {
		whole, err := readSavedWhole(doc, "my.plan")
		if err != nil {
			t.Fatalf("%s: read whole: %v", name, err)
		}
		streamed, err := StreamSaved(bytes.NewReader(doc))
		if err != nil {
			t.Errorf("%s: StreamSaved: %v", name, err)
			continue
		}
		if diff := cmp.Diff(whole, streamed); diff != "" {
			t.Errorf("%s: read as it streams (-whole +streamed):\n%s", name, diff)
		}
	}
}

// member is a member of a JSON object in a document: its key's quoted
// text and its value, as offsets in the document.
type member struct {
	key                          string
	keyStart, keyEnd, start, end int
}

// members are the members of the JSON object doc[from:to].
func members(t *testing.T, doc []byte, from, to int) []member {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(doc[from:to]))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		t.Fatalf("not an object at %d: %v %v", from, tok, err)
	}
	var out []member
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			t.Fatal(err)
		}
		key := tok.(string)
		keyEnd := from + int(dec.InputOffset())
		quoted, _ := json.Marshal(key)
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			t.Fatal(err)
		}
		end := from + int(dec.InputOffset())
		out = append(out, member{key: key, keyStart: keyEnd - len(quoted), keyEnd: keyEnd, start: end - len(raw), end: end})
	}
	return out
}

// find is the member named key of ms.
func find(t *testing.T, ms []member, key string) member {
	t.Helper()
	for _, m := range ms {
		if m.key == key {
			return m
		}
	}
	t.Fatalf("no member %q", key)
	return member{}
}

// firstElement is the span of the first element of the JSON array in
// doc[m.start:m.end].
func firstElement(t *testing.T, doc []byte, m member) (int, int) {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(doc[m.start:m.end]))
	if _, err := dec.Token(); err != nil {
		t.Fatal(err)
	}
	var raw json.RawMessage
	if err := dec.Decode(&raw); err != nil {
		t.Fatal(err)
	}
	end := m.start + int(dec.InputOffset())
	return end - len(raw), end
}

// TestStreamSavedTakesOnOnlyWhatWholeReads: StreamSaved never reads a
// document the whole document's read refuses, and reads one it reads
// the same; every refusal is then ReadSavedBytes' as before, word for
// word. A saved plan written now is damaged every way: each member of
// the document, of a change, of the flows, of a dead letter, of a
// binding given another value of every JSON type, left out, given twice,
// spelled in capitals or unknown; the document cut short anywhere, or
// followed by more.
func TestStreamSavedTakesOnOnlyWhatWholeReads(t *testing.T) {
	doc := savedBytes(t, richPlan(t))
	top := members(t, doc, 0, len(doc))
	var objects [][]member
	objects = append(objects, top)
	cs, ce := firstElement(t, doc, find(t, top, "changes"))
	change := members(t, doc, cs, ce)
	objects = append(objects, change)
	for _, m := range change {
		if m.key == "bindings" {
			bs, be := firstElement(t, doc, m)
			objects = append(objects, members(t, doc, bs, be))
		}
	}
	flows := find(t, top, "flows")
	fm := members(t, doc, flows.start, flows.end)
	objects = append(objects, fm)
	ds, de := firstElement(t, doc, find(t, fm, "dead_letters"))
	objects = append(objects, members(t, doc, ds, de))
	rs, re := firstElement(t, doc, find(t, fm, "routes"))
	objects = append(objects, members(t, doc, rs, re))

	cat := func(parts ...[]byte) []byte { return bytes.Join(parts, nil) }
	b := func(s string) []byte { return []byte(s) }
	mutants := map[string][]byte{}
	values := []string{`null`, `[]`, `{}`, `[null]`, `[{}]`, `""`, `"7"`, `0`, `3`, `5`, `7`, `-1`, `7.0`, `1e3`, `true`}
	for i, ms := range objects {
		for j, m := range ms {
			at := fmt.Sprintf("object %d member %s", i, m.key)
			for _, v := range values {
				mutants[at+" = "+v] = cat(doc[:m.start], b(v), doc[m.end:])
			}
			if j+1 < len(ms) {
				mutants[at+" left out"] = cat(doc[:m.keyStart], doc[ms[j+1].keyStart:])
			}
			mutants[at+" twice"] = cat(doc[:m.keyStart], doc[m.keyStart:m.end], b(",\n"), doc[m.keyStart:])
			mutants[at+" in capitals"] = cat(doc[:m.keyStart], b(strings.ToUpper(string(doc[m.keyStart:m.keyEnd]))), doc[m.keyEnd:])
			mutants[at+" unknown"] = cat(doc[:m.keyStart+1], b("x_"), doc[m.keyStart+1:])
		}
	}
	for _, tail := range []string{"x", "{}", "[]", " 1", "\n\n", "\x00"} {
		mutants[fmt.Sprintf("followed by %q", tail)] = cat(doc, b(tail))
	}
	for n := 0; n < len(doc); n += 1 + n/40 {
		mutants[fmt.Sprintf("cut at %d", n)] = doc[:n]
	}
	streamed := 0
	for name, m := range mutants {
		whole, werr := readSavedWhole(m, "my.plan")
		got, err := ReadSavedBytes(m, "my.plan")
		if fmt.Sprint(err) != fmt.Sprint(werr) {
			t.Errorf("%s: ReadSavedBytes says %v, before %v", name, err, werr)
		}
		p, serr := StreamSaved(bytes.NewReader(m))
		switch {
		case serr != nil:
			continue
		case werr != nil:
			t.Errorf("%s: StreamSaved read what the whole read refuses (%v)", name, werr)
			continue
		}
		streamed++
		if diff := cmp.Diff(whole, p); diff != "" {
			t.Errorf("%s: read as it streams (-whole +streamed):\n%s", name, diff)
		}
		if diff := cmp.Diff(whole, got); diff != "" {
			t.Errorf("%s: ReadSavedBytes (-whole +got):\n%s", name, diff)
		}
	}
	// Not every damage refuses: a member left out that has a default, a
	// value of the same type, a newline more. Those must stream.
	if streamed < 20 {
		t.Errorf("only %d of %d damaged documents read as they stream", streamed, len(mutants))
	}
	t.Logf("%d documents, %d read as they stream", len(mutants), streamed)
}

// readSizes records the most a reader was asked for at once: a
// json.Decoder asks for as much as its buffer has room for, so this is
// the size of its buffer.
type readSizes struct {
	r   io.Reader
	max int
}

func (s *readSizes) Read(p []byte) (int, error) {
	s.max = max(s.max, len(p))
	return s.r.Read(p)
}

// largestValue is the length of the longest change, or entry of the
// flows' lists, of saved plan doc: what its streamed read buffers at once.
func largestValue(t *testing.T, doc []byte) int {
	t.Helper()
	var d struct {
		Changes []json.RawMessage
		Flows   map[string]json.RawMessage
	}
	if err := json.Unmarshal(doc, &d); err != nil {
		t.Fatal(err)
	}
	values := d.Changes
	for _, f := range d.Flows {
		var list []json.RawMessage
		if json.Unmarshal(f, &list) == nil {
			values = append(values, list...)
		}
	}
	n := 0
	for _, v := range values {
		n = max(n, len(v))
	}
	return n
}

// TestStreamSavedHoldsOneChange: the saved plan's read holds the text of
// one value at a time (a change, the replace of an exchange with the
// bindings it takes down the longest, a flow's entry, a list of queues),
// not the document: its decoder's buffer is about the longest value,
// a fraction of the document. The whole document's decode (the read
// before, 190 MB for a 50,002-object replace plan of 54 MB) buffers all
// of it. Its memory is the plan's, not the plan's and its text's twice.
func TestStreamSavedHoldsOneChange(t *testing.T) {
	for _, n := range []int{40, 160} {
		doc := savedBytes(t, manyToAll(t, n))
		r := &readSizes{r: bytes.NewReader(doc)}
		if _, err := StreamSaved(r); err != nil {
			t.Fatal(err)
		}
		largest := largestValue(t, doc)
		t.Logf("%d queues: decoder buffer %d bytes for a document of %d, its longest value %d", 2*n, r.max, len(doc), largest)
		if r.max > 3*largest+4096 || r.max > len(doc)/4 {
			t.Errorf("%d queues: the decoder's buffer is %d bytes for a document of %d whose longest value is %d: it holds more than one value", 2*n, r.max, len(doc), largest)
		}
	}
	// The measure sees a decoder that holds the whole document.
	doc := savedBytes(t, manyToAll(t, 40))
	r := &readSizes{r: bytes.NewReader(doc)}
	if err := savedDecoder(r).Decode(&savedPlan{}); err != nil {
		t.Fatal(err)
	}
	if r.max < len(doc)/2 {
		t.Errorf("the whole document's decoder asked for %d bytes at most of %d", r.max, len(doc))
	}
}

// TestStreamSavedAllocates: reading make bench's replace plan as it
// streams allocates about 3 times the document's bytes (the plan, and
// each value's text and decoding once), the whole document's read about
// 8 (its head read through, then its text buffered whole, growing, beside
// the file). The bound is 5: buffering the document again would pass it.
// What the plan read holds is less than the document (the replace's
// reason, 1,000 bytes the same for every queue, held once).
func TestStreamSavedAllocates(t *testing.T) {
	doc := savedBytes(t, benchReplacePlan(t, 500))
	alloc := func(read func() (*Plan, error)) (allocated, held uint64) {
		var before, after, kept runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		p, err := read()
		if err != nil {
			t.Fatal(err)
		}
		runtime.ReadMemStats(&after)
		runtime.GC()
		runtime.ReadMemStats(&kept)
		runtime.KeepAlive(p)
		return after.TotalAlloc - before.TotalAlloc, kept.HeapAlloc - before.HeapAlloc
	}
	streamed, plan := alloc(func() (*Plan, error) { return StreamSaved(bytes.NewReader(doc)) })
	whole, _ := alloc(func() (*Plan, error) { return readSavedWhole(doc, "my.plan") })
	t.Logf("a document of %d bytes: %d allocated as it streams (%.1f times), %d whole (%.1f times); the plan holds %d (%.2f times)",
		len(doc), streamed, float64(streamed)/float64(len(doc)), whole, float64(whole)/float64(len(doc)), plan, float64(plan)/float64(len(doc)))
	if streamed > 5*uint64(len(doc)) {
		t.Errorf("reading a saved plan of %d bytes as it streams allocated %d bytes, want at most 5 times the document", len(doc), streamed)
	}
	if plan > uint64(len(doc)) {
		t.Errorf("the plan read from a saved plan of %d bytes holds %d", len(doc), plan)
	}
}

// TestSavedChangesShareTexts: the texts that repeat from one change to
// the next are held once in the plan read, by either read: the reason
// of the queues replaced for the same field, the vhost, the file.
func TestSavedChangesShareTexts(t *testing.T) {
	doc := savedBytes(t, benchReplacePlan(t, 20))
	streamed, err := StreamSaved(bytes.NewReader(doc))
	if err != nil {
		t.Fatal(err)
	}
	whole, err := readSavedWhole(doc, "my.plan")
	if err != nil {
		t.Fatal(err)
	}
	for name, p := range map[string]*Plan{"streamed": streamed, "whole": whole} {
		texts := map[string]*byte{}
		queues := 0
		for _, c := range p.Changes {
			if c.Kind != kind.Queue || c.Action != Replace {
				continue
			}
			queues++
			for _, s := range []string{c.Reason, c.Vhost, c.Pos.File} {
				if at, ok := texts[s]; ok && at != unsafe.StringData(s) {
					t.Errorf("%s: %q held twice, in the change of queue %q and before", name, s, c.Name)
				}
				texts[s] = unsafe.StringData(s)
			}
		}
		if queues != 20 {
			t.Errorf("%s: %d queues replaced, want 20", name, queues)
		}
	}
}
