package cli

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"unsafe"
)

func TestVhostKeys(t *testing.T) {
	for _, tc := range []struct {
		name, text string
		want       []string // nil: no guess
	}{
		{"block style", "# yaml-language-server: $schema=x\nversion: 1\nvhosts:\n  /:\n    queues:\n      q: {}\n  orders: # the team's\n    exchanges:\n      x: { type: topic }\n  \"quoted one\": {}\n  'single': {}\nusers:\n  bob: {}\n",
			[]string{"/", "orders", "quoted one", "single"}},
		{"document marker and comments", "---\n# c\nvhosts:\n\n    # deeper comment\n    a:\n        queues: {}\n    b: {}\n", []string{"a", "b"}},
		{"colon in a name", "vhosts:\n  a:b: {}\n  c:\n", []string{"a:b", "c"}},
		{"no vhosts", "version: 1\nusers:\n  bob: {}\n", []string{}},
		{"flow style", "vhosts: { a: {} }\n", nil},
		{"anchor", "vhosts: &all\n  a: {}\n", nil},
		{"merge key", "vhosts:\n  <<: *base\n  a: {}\n", nil},
		{"variable in a name", "vhosts:\n  ${TEAM}: {}\n", nil},
		{"escape in a quoted name", "vhosts:\n  \"a\\tb\": {}\n", nil},
		{"tab indent", "vhosts:\n\ta: {}\n", nil},
		{"odd indent", "vhosts:\n    a: {}\n  b: {}\n", nil},
		{"second document", "vhosts:\n  a: {}\n---\nvhosts:\n  b: {}\n", nil},
		{"sequence", "vhosts:\n  - a\n", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := vhostKeys(tc.text)
			if ok != (tc.want != nil) || (ok && !slices.Equal(got, tc.want) && !(len(got) == 0 && len(tc.want) == 0)) {
				t.Errorf("vhostKeys = %q, %v; want %q", got, ok, tc.want)
			}
		})
	}
}

func TestGuessVhosts(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	a := write("a.yaml", "version: 1\nvhosts:\n  b: {}\n  a: {}\n")
	write("b.yml", "version: 1\nvhosts:\n  c: {}\n  a: {}\n")
	write("notes.txt", "vhosts:\n  z: {}\n")
	if got, large, ok := guessVhosts([]string{dir}); !ok || large || !slices.Equal(got, []string{"a", "b", "c"}) {
		t.Errorf("a directory: %q, %v, %v", got, large, ok)
	}
	if got, large, ok := guessVhosts([]string{a}); !ok || large || !slices.Equal(got, []string{"a", "b"}) {
		t.Errorf("one file: %q, %v, %v", got, large, ok)
	}
	// Past earlyReadUpTo the read starts as early, held (loadAndRead).
	big := write("big.yaml", "version: 1\nvhosts:\n  a: {}\n"+strings.Repeat("# padding\n", earlyReadUpTo/10))
	if got, large, ok := guessVhosts([]string{big}); !ok || !large || !slices.Equal(got, []string{"a"}) {
		t.Errorf("a large file: %q, %v, %v", got, large, ok)
	}
	bigFlow := write("bigflow.yaml", "vhosts: {x: {}}\n"+strings.Repeat("# padding\n", earlyReadUpTo/10))
	if got, large, ok := guessVhosts([]string{a, bigFlow}); ok || !large {
		t.Errorf("a large file in flow style: %q, %v, %v", got, large, ok)
	}
	for _, paths := range [][]string{{"-"}, {filepath.Join(dir, "missing.yaml")}, {a, write("flow.yaml", "vhosts: {x: {}}\n")}} {
		if got, large, ok := guessVhosts(paths); ok || large {
			t.Errorf("%v: guessed %q, %v", paths, got, large)
		}
	}
}

// TestVhostKeysCopied: the names guessed from a file's text are copies,
// not slices of it, which would keep all of it for as long as the plan
// keeps the read's scope.
func TestVhostKeysCopied(t *testing.T) {
	text := "version: 1\nvhosts:\n  orders:\n    queues: {}\n  \"billing\": {}\n" + strings.Repeat("# padding\n", 1000)
	names, ok := vhostKeys(text)
	if !ok || len(names) != 2 {
		t.Fatalf("vhostKeys = %q, %v", names, ok)
	}
	start := uintptr(unsafe.Pointer(unsafe.StringData(text)))
	for _, n := range names {
		if p := uintptr(unsafe.Pointer(unsafe.StringData(n))); p >= start && p < start+uintptr(len(text)) {
			t.Errorf("%q is a slice of the file's text", n)
		}
	}
}
