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

// TestReadSavedPlanHoldsNoCopy: apply reads a saved plan file as it
// streams from it (plan.StreamSaved), holding neither the file nor the
// decoder's buffer of the whole document: it read the file whole
// (os.ReadFile), and the decoder buffered it all again, most of the 190 MB
// that reading a 50,002-object replace plan (54 MB) held; before that it
// also copied it (plan.ReadSaved's io.ReadAll). A plan of one note of
// size bytes, the one value the decoder must hold whole: reading it
// allocates the decoder's buffer as it grows (some 4 times the file,
// every step counted) and the note, 5 times the file; the file read whole
// besides made it 6 times, the copy 8.
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
		saved, flows, err := g.readSavedPlan(path)
		runtime.ReadMemStats(&after)
		flows.close()
		if err != nil {
			t.Fatal(err)
		}
		if len(saved.Notes) != 1 || len(saved.Notes[0]) != size {
			t.Fatalf("note of %d bytes: read back %d notes", size, len(saved.Notes))
		}
		if got, bound := int(after.TotalAlloc-before.TotalAlloc), 11*buf.Len()/2; got > bound {
			t.Errorf("note of %d bytes: reading the saved plan (%d bytes) allocated %d, want at most %d (5.5 times the file)", size, buf.Len(), got, bound)
		}
	}
}
