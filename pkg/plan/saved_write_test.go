package plan

import (
	"bytes"
	"encoding/json"
	"runtime"
	"testing"

	"github.com/mqctl/mqctl/pkg/topology"
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
// where the head with the flows was 1.3 MB. It allocated 4.2 times the
// document, then 3.4; 1.04 times now that each element is encoded by a
// json.Encoder used again (indentWriter.element), where MarshalIndent made
// two buffers of each, and a change's objects are encoded as they are
// (savedForms), not apart by their MarshalJSON and then compacted: what
// it allocates is the collector's work in plan --out, whose heap is
// near mqctl's memory limit then (a cycle every 6 MB allocated).
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
	if allocated > 16*uint64(w.n)/10 {
		t.Errorf("WriteSaved allocated %d bytes for a document of %d, want at most 1.6 times", allocated, w.n)
	}
}

// TestSavedFormsAsSavedObject: the saved plan writes its changes' objects
// as their savedForms, the bytes savedObject's MarshalJSON gives, which
// it reads back: an object of each kind (sampleObjects) and HTML
// characters in a name, at an indentation.
func TestSavedFormsAsSavedObject(t *testing.T) {
	objects := []Object{Object(&topology.Exchange{Name: "x<&>", Type: "topic", Arguments: topology.Args{"alternate-exchange": "a&e"}})}
	for _, o := range sampleObjects {
		objects = append(objects, o)
	}
	forms := savedForms{}
	for _, o := range objects {
		want, err := json.MarshalIndent(&savedObject{o}, "    ", "  ")
		if err != nil {
			t.Fatal(err)
		}
		for range 2 { // the form made, then the form again
			got, err := json.MarshalIndent(forms.of(o), "    ", "  ")
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, want) {
				t.Errorf("%T: written as\n%s\nwant\n%s", o, got, want)
			}
		}
	}
	if forms.of(nil) != nil {
		t.Errorf("no object: %v, want nil (the field left out)", forms.of(nil))
	}
}
