//go:build unix

package cli

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mqctl/mqctl/pkg/plan"
)

// TestReadSavedPlanFromPipe: apply PLANFILE reads a regular file as it
// streams, and a pipe (a FIFO, or <(…)) whole, once, as before: a pipe
// read as it streams could not be read again for the refusal, nor for a
// plan written in a way only the whole document's read takes on (a key
// in capitals, which encoding/json matches to its field). Each case reads
// the same from a file and from a pipe.
func TestReadSavedPlanFromPipe(t *testing.T) {
	var buf bytes.Buffer
	if err := plan.WriteSaved(&buf, &plan.Plan{Fingerprint: "f", Notes: []string{"kept"}}); err != nil {
		t.Fatal(err)
	}
	capitals := strings.Replace(buf.String(), `"notes":`, `"NOTES":`, 1)
	if capitals == buf.String() {
		t.Fatalf("no notes in the saved plan:\n%s", buf.String())
	}
	for _, tc := range []struct{ name, doc, want string }{
		{"a saved plan", buf.String(), ""},
		{"a saved plan with a key in capitals", capitals, ""},
		{"a topology file", "version: 1\nvhosts:\n  /: {}\n", "is a topology file, not a saved plan"},
		{"a damaged saved plan", buf.String()[:buf.Len()/2], "is not a saved plan (unexpected end of JSON input)"},
	} {
		dir := t.TempDir()
		file := filepath.Join(dir, "file.plan")
		if err := os.WriteFile(file, []byte(tc.doc), 0o600); err != nil {
			t.Fatal(err)
		}
		fifo := filepath.Join(dir, "fifo.plan")
		if err := syscall.Mkfifo(fifo, 0o600); err != nil {
			t.Skipf("no FIFO here: %v", err)
		}
		wrote := make(chan error, 1)
		go func() {
			w, err := os.OpenFile(fifo, os.O_WRONLY, 0)
			if err == nil {
				_, err = w.WriteString(tc.doc)
				w.Close()
			}
			wrote <- err
		}()
		for _, path := range []string{file, fifo} {
			saved, err := readWithin(t, path)
			switch {
			case tc.want == "" && err != nil:
				t.Errorf("%s from %s: %v", tc.name, filepath.Base(path), err)
			case tc.want == "" && (len(saved.Notes) != 1 || saved.Notes[0] != "kept"):
				t.Errorf("%s from %s: notes %q, want the one written", tc.name, filepath.Base(path), saved.Notes)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
				t.Errorf("%s from %s: %v, want an error saying %q", tc.name, filepath.Base(path), err, tc.want)
			}
		}
		if err := <-wrote; err != nil {
			t.Errorf("%s: writing the FIFO: %v", tc.name, err)
		}
	}
}

// readWithin is readSavedPlan of path, failing the test when it does not
// return within 20 s: a second open of a FIFO its writer has left waits
// for another writer, which it is then given, so that the test ends.
func readWithin(t *testing.T, path string) (*plan.Plan, error) {
	type result struct {
		p   *plan.Plan
		err error
	}
	done := make(chan result, 1)
	go func() {
		p, flows, err := (&globals{}).readSavedPlan(path)
		flows.close()
		done <- result{p, err}
	}()
	select {
	case r := <-done:
		return r.p, r.err
	case <-time.After(20 * time.Second):
		t.Errorf("reading %s did not end: it opened the pipe again, after its writer was gone", filepath.Base(path))
		if w, err := os.OpenFile(path, os.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
			w.Close()
		}
		r := <-done
		return r.p, r.err
	}
}
