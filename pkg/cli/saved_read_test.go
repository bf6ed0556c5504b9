package cli

import (
	"bytes"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/mqctl/mqctl/pkg/plan"
)

// TestReadSavedPlanHoldsNoCopy: apply reads a saved plan file where it
// is, beside the decoder's own copy (json.Decoder buffers the whole
// document); it also copied it whole (plan.ReadSaved's io.ReadAll), 50 MB
// more of the 240 MB that apply of a 50,002-object replace plan held. A
// plan of one note of size bytes: reading it allocates the file, the
// decoder's buffer as it grows (some 4 times the file, every step
// counted) and the note, about 6 times the file; the copy, which grows
// too, made it 8 times.
func TestReadSavedPlanHoldsNoCopy(t *testing.T) {
	g := &globals{}
	for _, size := range []int{2 << 20, 8 << 20} {
		var buf bytes.Buffer
		if err := plan.WriteSaved(&buf, &plan.Plan{Fingerprint: "f", Notes: []string{strings.Repeat("n", size)}}); err != nil {
			t.Fatal(err)
		}
		path := filepath.Join(t.TempDir(), "big.plan")
		if err := os.WriteFile(path, buf.Bytes(), 0o600); err != nil {
			t.Fatal(err)
		}
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		saved, err := g.readSavedPlan(path)
		runtime.ReadMemStats(&after)
		if err != nil {
			t.Fatal(err)
		}
		if len(saved.Notes) != 1 || len(saved.Notes[0]) != size {
			t.Fatalf("note of %d bytes: read back %d notes", size, len(saved.Notes))
		}
		if got, bound := int(after.TotalAlloc-before.TotalAlloc), 7*buf.Len(); got > bound {
			t.Errorf("note of %d bytes: reading the saved plan (%d bytes) allocated %d, want at most %d (7 times the file)", size, buf.Len(), got, bound)
		}
	}
}
