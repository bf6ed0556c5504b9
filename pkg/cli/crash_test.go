package cli

import (
	"bytes"
	"context"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/spf13/cobra"
)

// A panic in a command (a bug in mqctl) ends it with exit 1 and two lines
// that say so, never a Go stack trace on the terminal: the trace goes to
// a file the second line names.
func TestPanicIsAnErrorWithoutStackTrace(t *testing.T) {
	t.Setenv("TMPDIR", t.TempDir())
	var stderr bytes.Buffer
	env := Env{Stdin: strings.NewReader(""), Stdout: &bytes.Buffer{}, Stderr: &stderr, LookupEnv: func(string) (string, bool) { return "", false }}
	root := NewRootCmd(env)
	root.AddCommand(&cobra.Command{Use: "boom", RunE: func(*cobra.Command, []string) error {
		var m map[string]int
		m["x"]++ // a nil map: a runtime panic, as a bug would give
		return nil
	}})
	if code := run(context.Background(), root, []string{"boom"}, env); code != ExitError {
		t.Errorf("exit code %d, want %d", code, ExitError)
	}
	out := stderr.String()
	if !strings.Contains(out, "mqctl: internal error: assignment to entry in nil map") || !strings.Contains(out, "this is a bug in mqctl") {
		t.Errorf("stderr does not say what happened:\n%s", out)
	}
	if strings.Contains(out, "goroutine ") || strings.Contains(out, ".go:") {
		t.Errorf("stderr shows a stack trace:\n%s", out)
	}
	m := regexp.MustCompile(`stack trace in (\S+mqctl-crash-\S+\.txt)`).FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("stderr names no crash file:\n%s", out)
	}
	trace, err := os.ReadFile(m[1])
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(trace), "goroutine ") || !strings.Contains(string(trace), "crash_test.go") {
		t.Errorf("the crash file holds no stack trace:\n%s", trace)
	}
}
