package definitions

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/google/go-cmp/cmp"

	"github.com/mqctl/mqctl/internal/corpus"
)

// collected is what a decode hands on: the queues and bindings, in order.
type collected struct {
	Queues   []Queue
	Bindings []Binding
}

func (c *collected) Queue(q Queue)     { c.Queues = append(c.Queues, q) }
func (c *collected) Binding(b Binding) { c.Bindings = append(c.Bindings, b) }

// decodeBoth decodes data with encoding/json's Decoder (DecodeStream, its
// queues and bindings then taken out of the document) and with the scanner
// (DecodeReaderTo's path), the latter through r.
func decodeBoth(data []byte, r io.Reader) (old, scanned Document, oldEls, scannedEls collected, oldErr, scannedErr error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	oldErr = old.DecodeStream(dec)
	oldEls = collected{Queues: old.Queues, Bindings: old.Bindings}
	old.Queues, old.Bindings = nil, nil
	scannedErr = scanned.decodeReader(r, &scannedEls)
	return
}

// sameDecode fails t unless both decodes of data through r agree: both
// fail, or both give the same document and the same elements. cut: data is
// a well-formed document cut short, which both must say.
func sameDecode(t *testing.T, name string, data []byte, r io.Reader, cut bool) {
	t.Helper()
	old, scanned, oldEls, scannedEls, oldErr, scannedErr := decodeBoth(data, r)
	if (oldErr == nil) != (scannedErr == nil) {
		t.Fatalf("%s: encoding/json: %v; scanner: %v", name, oldErr, scannedErr)
	}
	if oldErr != nil {
		if cut && (!errors.Is(oldErr, io.ErrUnexpectedEOF) || !errors.Is(scannedErr, io.ErrUnexpectedEOF)) {
			t.Fatalf("%s: cut short to one and not the other: encoding/json: %v; scanner: %v", name, oldErr, scannedErr)
		}
		return
	}
	if d := cmp.Diff(oldEls, scannedEls); d != "" {
		t.Fatalf("%s: queues and bindings differ (-encoding/json +scanner):\n%s", name, d)
	}
	if d := cmp.Diff(old, scanned); d != "" {
		t.Fatalf("%s: documents differ (-encoding/json +scanner):\n%s", name, d)
	}
}

// TestScannerDecodesAsEncodingJSON: every corpus file and a generated
// document with every shape a field can take decode alike through the
// scanner and encoding/json, read whole, a byte at a time and in halves
// (the scanner's refills fall everywhere), and cut short at many places
// (both then fail, and say so by io.ErrUnexpectedEOF).
func TestScannerDecodesAsEncodingJSON(t *testing.T) {
	docs := map[string][]byte{"shapes": []byte(shapesDoc)}
	_, files := corpus.Files(t)
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		docs[filepath.Base(f)] = data
	}
	queues := 0
	for name, data := range docs {
		sameDecode(t, name, data, bytes.NewReader(data), false)
		sameDecode(t, name+" a byte at a time", data, iotest.OneByteReader(bytes.NewReader(data)), false)
		sameDecode(t, name+" in halves", data, iotest.HalfReader(bytes.NewReader(data)), false)
		// A document encoding/json decodes, cut short anywhere before its
		// last byte, is cut short to both.
		var whole Document
		wellFormed := whole.decodeReader(bytes.NewReader(data), &collected{}) == nil && json.Valid(data)
		step := max(1, len(data)/97)
		for cut := 0; cut < len(data)-1; cut += step {
			sameDecode(t, fmt.Sprintf("%s cut at %d", name, cut), data[:cut], bytes.NewReader(data[:cut]), wellFormed)
		}
		var els collected
		var d Document
		if err := d.decodeReader(bytes.NewReader(data), &els); err == nil {
			queues += len(els.Queues)
		}
	}
	if queues == 0 {
		t.Fatal("no queue was decoded")
	}
	// The generated document is whole and decodes.
	var els collected
	var d Document
	if err := d.decodeReader(strings.NewReader(shapesDoc), &els); err != nil || len(els.Queues) != 4 || len(els.Bindings) != 2 || len(d.Exchanges) != 1 || len(d.Policies) != 1 {
		t.Fatalf("shapes: %v, %d queues, %d bindings, %d exchanges, %d policies", err, len(els.Queues), len(els.Bindings), len(d.Exchanges), len(d.Policies))
	}
	if got := els.Queues[1].Name; got != "caf\u00e9 \"q\"\n\u2028 \U0001F600 \ufffd" {
		t.Fatalf("escaped name read as %q", got)
	}
}

// TestScannerErrors: a malformed answer fails the scanner as it fails
// encoding/json, and a reader's own error comes back as it was given.
func TestScannerErrors(t *testing.T) {
	for _, doc := range []string{
		``, `[]`, `{`, `{"queues": {}}`, `{"queues": [1]}`, `{"queues": ["q"]}`,
		`{"queues": [{"name": 5}]}`, `{"queues": [{"durable": "yes"}]}`, `{"queues": [{"arguments": []}]}`,
		`{"queues": [{"messages": true}]}`, `{"queues": [{"messages": "x"}]}`, "{\"queues\": [{\"name\": \"a\x01\"}]}",
		`{"queues": [{"name": "\x"}]}`, `{"queues": [{"name": "a"} {"name": "b"}]}`, `{"queues": [{"x": 01}]}`,
		`{"queues": [{"x": 1.}]}`, `{"queues": [{"x": -}]}`, `{"queues": [{"x": tru}]}`, `{"queues": [{"x": 1x}]}`,
		`{"bindings": [{"source": null, "x": nul}]}`, `{"exchanges": [{"name": 1}]}`, `{"a" 1}`, `{"a": 1,}`,
		`{"queues": [{"x": ` + strings.Repeat("[", maxDepth) + strings.Repeat("]", maxDepth) + `}]}`,
	} {
		sameDecode(t, doc, []byte(doc), strings.NewReader(doc), false)
		var d Document
		if err := d.decodeReader(strings.NewReader(doc), &collected{}); err == nil {
			t.Errorf("%q: decoded without an error", doc)
		}
	}
	broken := errors.New("connection reset")
	var d Document
	err := d.decodeReader(io.MultiReader(strings.NewReader(`{"queues": [{"name": "a"}, `), iotest.ErrReader(broken)), &collected{})
	if !errors.Is(err, broken) {
		t.Fatalf("a reader's error came back as %v", err)
	}
}

// FuzzScanner: whatever the answer, the scanner decodes it as encoding/json
// does, or both fail.
func FuzzScanner(f *testing.F) {
	f.Add([]byte(shapesDoc))
	f.Add([]byte(`{"queues": [{"name": "q", "arguments": {"x-max-length": 10}}], "bindings": [null]}`))
	f.Add([]byte(`{"queues": null, "bindings": [], "policies": [{"name": "p", "definition": {}}]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		sameDecode(t, "fuzzed", data, bytes.NewReader(data), false)
		sameDecode(t, "fuzzed a byte at a time", data, iotest.OneByteReader(bytes.NewReader(data)), false)
	})
}

// shapesDoc holds every shape a queue's or a binding's field can take:
// null, repeated keys, keys in other cases, escapes, bytes outside UTF-8,
// large and fractional numbers, numbers as strings, nested arguments,
// unknown keys of every type, and the sections decoded by encoding/json.
const shapesDoc = `{"rabbit_version": "4.3.6", "rabbitmq_version": "4.3.6", "product_name": "RabbitMQ",
 "parameters": [{"vhost": "v", "component": "shovel", "name": "s", "value": {"src-uri": "amqp://", "n": 12345678901234567890}}],
 "policies": [{"vhost": "v", "name": "p", "pattern": "^a", "apply-to": "queues", "definition": {"max-length": 5}, "priority": 1}],
 "queues": [
  {"name": "plain", "vhost": "v", "durable": true, "auto_delete": false, "arguments": {"x-max-length": 10000, "x-queue-type": "classic", "x-big": 123456789012345678901234567890, "x-f": -1.5e-3, "x-nested": {"a": [1, "b", null, true, {"c": {}}], "d": []}}, "type": "classic"},
  {"NAME": "ignored", "name": "caf\u00e9 \"q\"\n\u2028 \ud83d\ude00 \ud800", "Durable": true, "auto_delete": null, "exclusive": false, "arguments": null, "messages": 12, "consumers": "3", "internal_owner": {"name": "x", "kind": "exchange"}, "unknown": [{"deep": [[[]]]}], "other": -0.0},
  {"name": "caf` + "\xc3\xa9" + ` raw and ` + "\xff" + ` bad", "arguments": {"a": 1}, "arguments": {"b": 2}, "messages": null, "internal_owner": false, "type": null},
  null
 ],
 "exchanges": [{"name": "x", "vhost": "v", "type": "topic", "durable": true, "auto_delete": false, "internal": false, "arguments": {}}],
 "bindings": [
  {"source": "x", "vhost": "v", "destination": "plain", "destination_type": "queue", "routing_key": "a.#", "arguments": {"x-match": "all", "n": 0}, "properties_key": "a.%23"},
  {"Source": "x", "destination": "", "destination_type": "exchange", "routing_key": "\\", "arguments": {}, "extra": true}
 ],
 "topic_permissions": [], "vhosts": [{"name": "v"}]
}`
