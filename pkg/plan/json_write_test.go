package plan

import (
	"bytes"
	"encoding/json"
	"runtime"
	"testing"

	"github.com/mqctl/mqctl/pkg/topology"
)

// heldWrites records, besides its writes (writes), the heap its writer's
// writer holds at a few points of the document (every 1/probes of size
// bytes written), above the heap at the start (base): what the writer
// holds at once beside what it is given.
type heldWrites struct {
	writes
	size, probes, next int
	base, held         uint64
}

func newHeldWrites(size, probes int) *heldWrites {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return &heldWrites{size: size, probes: probes, next: size / probes, base: m.HeapAlloc}
}

func (w *heldWrites) Write(p []byte) (int, error) {
	w.writes.Write(p)
	if w.n >= w.next {
		w.next += w.size / w.probes
		runtime.GC()
		var m runtime.MemStats
		runtime.ReadMemStats(&m)
		if m.HeapAlloc > w.base {
			w.held = max(w.held, m.HeapAlloc-w.base)
		}
	}
	return len(p), nil
}

// TestWriteJSONHoldsOneEntry: "mqctl plan -o json" of make bench's
// 50,002-object replace peaked at 133 MB (plan: 94): WriteJSON made the
// whole document (its changes and flows as planjson's) and wrote its
// flows' text at once, and with values from the environment the whole
// document's text, compact and then hidden and indented. Now it makes
// and writes one change or one entry of the flows at a time, with or
// without values from the environment (hidden as it streams): at 2,002
// objects, what it holds at any point of a 2.7 MB document (the heap
// above the plan's, the plan itself aside) is 0.3 MB, 0.13 MB with
// values from the environment (it was 3.0 and 3.5 MB), and its largest
// write 88 KB, 9 KB (1.3 and 2.7 MB). The document is the one JSONOf
// makes, written whole.
func TestWriteJSONHoldsOneEntry(t *testing.T) {
	p := benchReplacePlan(t, 500)
	for _, env := range []bool{false, true} {
		p.Env = nil
		if env {
			// A value every working queue's change holds (its
			// max_length), as a file with max_length: "${N}" gives it.
			p.Env = topology.EnvValues{{Value: "20000", Raw: "${N}", Key: "max_length"}}
		}
		var whole bytes.Buffer
		want, err := json.MarshalIndent(JSONOf(p), "", "  ")
		if err != nil {
			t.Fatal(err)
		}
		if env {
			if want, err = p.Env.HideJSON(want, "  "); err != nil {
				t.Fatal(err)
			}
		} else {
			want = append(want, '\n')
		}
		if err := WriteJSON(&whole, p); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(whole.Bytes(), want) {
			t.Fatalf("env %v: WriteJSON wrote %d bytes, not the %d of JSONOf's document", env, whole.Len(), len(want))
		}
		if env && !bytes.Contains(want, []byte(`"x-max-length": "${N}"`)) {
			t.Fatalf("the document does not hide the value from the environment:\n%.2000s", want)
		}
		w := newHeldWrites(len(want), 8)
		if err := WriteJSON(w, p); err != nil {
			t.Fatal(err)
		}
		t.Logf("env %v: a document of %d bytes: its largest write %d bytes, at most %d bytes held", env, w.n, w.largest, w.held)
		if w.largest > w.n/10 {
			t.Errorf("env %v: WriteJSON wrote %d bytes at once of a document of %d: it holds more than an entry's text", env, w.largest, w.n)
		}
		if w.held > uint64(w.n)/4 {
			t.Errorf("env %v: WriteJSON held %d bytes while writing a document of %d: it holds more than an entry", env, w.held, w.n)
		}
	}
}
