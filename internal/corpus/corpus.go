// Package corpus finds the shared corpus of real RabbitMQ definitions
// files for tests: $MQCTL_CORPUS, else ../shared/corpus beside the
// repository. Tests that need it skip with a clear message when it is
// absent (a plain clone); CI always has it.
package corpus

import (
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"testing"
)

// Dir returns the corpus folder, or skips the test when there is none.
func Dir(t testing.TB) string {
	t.Helper()
	dir := os.Getenv("MQCTL_CORPUS")
	if dir == "" {
		_, here, _, _ := runtime.Caller(0) // …/internal/corpus/corpus.go
		dir = filepath.Join(filepath.Dir(here), "..", "..", "..", "shared", "corpus")
	}
	if fi, err := os.Stat(filepath.Join(dir, "definitions")); err != nil || !fi.IsDir() {
		t.Skipf("corpus of definitions files not found at %s (set MQCTL_CORPUS to its path)", dir)
	}
	return dir
}

// Files returns every definitions file of the corpus (SOURCES.md and other
// Markdown left out), sorted; it fails the test when there is none.
func Files(t testing.TB) (dir string, files []string) {
	t.Helper()
	dir = Dir(t)
	err := filepath.WalkDir(filepath.Join(dir, "definitions"), func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() && !strings.HasSuffix(p, ".md") {
			files = append(files, p)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(files) == 0 {
		t.Fatalf("no definitions files under %s", dir)
	}
	sort.Strings(files)
	return dir, files
}
