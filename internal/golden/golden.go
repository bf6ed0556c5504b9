// Package golden compares rendered output with golden files in tests. Run
// the tests with -update to rewrite the files after checking a change.
package golden

import (
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/")

// Updating reports whether the test run rewrites golden files (-update).
func Updating() bool { return *update }

// Check compares got with the file at path (relative to the test's
// package), or writes got there when the tests run with -update.
func Check(t testing.TB, path string, got []byte) {
	t.Helper()
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if diff := cmp.Diff(string(want), string(got)); diff != "" {
		t.Errorf("%s differs (-want +got); go test -update rewrites it after checking:\n%s", path, diff)
	}
}
