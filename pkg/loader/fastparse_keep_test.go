package loader

import (
	"strings"
	"testing"
	"unsafe"

	"github.com/mqctl/mqctl/internal/gentopo"
	"github.com/mqctl/mqctl/internal/intern"
)

// TestFastParseKeepsNoText: the fast path reads the file in place, and
// every scalar it hands on is a copy, not a part of the file's bytes, so
// that the names a plan holds on to do not hold the whole file (2.9 MB at
// 50,002 objects). A scalar seen again is the same copy.
func TestFastParseKeepsNoText(t *testing.T) {
	long := strings.Repeat("x", textBlock) // past a block: a copy of its own
	for _, tc := range []struct{ name, yaml string }{
		{"plain", "version: 1\nvhosts:\n  v:\n    queues:\n      q1: {}\n      q2: { durable: true }\n"},
		{"quoted", "version: 1\nvhosts:\n  \"v\":\n    queues:\n      'q''1': {}\n      \"q\\\"2\": {}\n      \"q3\": {}\n"},
		{"flow", "version: 1\nvhosts:\n  v:\n    queues:\n      q: { bindings: [{ exchange: e, routing_key: \"a.#\" }], arguments: { x-k: [a, b] } }\n"},
		{"long", "version: 1\nvhosts:\n  v:\n    queues:\n      q:\n        arguments:\n          x-k: " + long + "\n"},
		{"generated", gentopo.YAML("bench", 300)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			data := []byte(tc.yaml)
			p := &parser{file: "f.yaml", lookup: envOf(), errs: newCollector()}
			root, ok := fastParse(p, data)
			if !ok {
				t.Fatal("the fast path gave up")
			}
			lo := uintptr(unsafe.Pointer(unsafe.SliceData(data)))
			hi := lo + uintptr(len(data))
			byValue := map[string]*byte{}
			scalars := 0
			var walk func(n *node)
			walk = func(n *node) {
				if n == nil {
					return
				}
				if n.kind == scalarNode && n.value != "" {
					scalars++
					at := unsafe.StringData(n.value)
					if a := uintptr(unsafe.Pointer(at)); a >= lo && a < hi {
						t.Fatalf("scalar %.20q at %s is a part of the file's bytes, not a copy", n.value, n.pos)
					}
					if len(byValue) < intern.Max || byValue[n.value] != nil {
						if first, seen := byValue[n.value]; seen && first != at {
							t.Errorf("scalar %.20q at %s is another copy of one read before", n.value, n.pos)
						}
						byValue[n.value] = at
					}
				}
				for _, e := range n.entries {
					walk(e.key)
					walk(e.value)
				}
				for _, it := range n.items {
					walk(it)
				}
			}
			walk(root)
			if scalars == 0 {
				t.Fatal("no scalar read")
			}
		})
	}
}
