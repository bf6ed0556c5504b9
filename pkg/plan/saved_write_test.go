package plan

import (
	"bytes"
	"encoding/json"
	"runtime"
	"testing"
)

// TestWriteSavedIndentedAsWhole: a saved plan written as it streams (its
// changes and its flows an entry at a time) is, byte for byte, the
// document json.MarshalIndent writes whole, as WriteSaved wrote it: a
// plan with every part (richPlan, flows and values from the environment),
// make bench's replace plan, and one with nothing.
func TestWriteSavedIndentedAsWhole(t *testing.T) {
	for name, p := range map[string]*Plan{"rich": richPlan(t), "replace": benchReplacePlan(t, 50), "empty": {Fingerprint: "f"}} {
		doc := savedBytes(t, p)
		var compact, whole bytes.Buffer
		if err := json.Compact(&compact, doc); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if err := json.Indent(&whole, compact.Bytes(), "", "  "); err != nil {
			t.Fatal(err)
		}
		whole.WriteString("\n")
		if whole.String() != string(doc) {
			t.Errorf("%s: written as it streams:\n%s\nindented whole:\n%s", name, doc, whole.String())
		}
	}
}

// writes records the largest write its writer is given.
type writes struct{ n, largest int }

func (w *writes) Write(p []byte) (int, error) {
	w.n += len(p)
	w.largest = max(w.largest, len(p))
	return len(p), nil
}

// TestWriteSavedHoldsOneEntry: "mqctl plan --out" of make bench's
// 50,002-object replace peaked at 129 MB (plan: 87-92): WriteSaved held
// its flows' text (12 MB) and the document's head with them, compact then
// indented, and the changes made over as savedChanges. Now what it writes
// at once is one change, one entry of the flows, or the head without
// them: at 2,002 objects, 98 KB (the objects' prints) of a 2.7 MB document,
// where the head with the flows was 1.3 MB; it allocates 3.4 times the
// document, where it allocated 4.2.
func TestWriteSavedHoldsOneEntry(t *testing.T) {
	p := benchReplacePlan(t, 500)
	w := &writes{}
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	if err := WriteSaved(w, p); err != nil {
		t.Fatal(err)
	}
	runtime.ReadMemStats(&after)
	allocated := after.TotalAlloc - before.TotalAlloc
	t.Logf("a document of %d bytes: its largest write %d bytes, %d allocated (%.2f times)", w.n, w.largest, allocated, float64(allocated)/float64(w.n))
	if w.largest > w.n/10 {
		t.Errorf("WriteSaved wrote %d bytes at once of a document of %d: it holds more than an entry's text", w.largest, w.n)
	}
	if allocated > 38*uint64(w.n)/10 {
		t.Errorf("WriteSaved allocated %d bytes for a document of %d, want at most 3.8 times", allocated, w.n)
	}
}
