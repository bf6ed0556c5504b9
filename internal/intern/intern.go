// Package intern shares the strings (or values made from them) that
// repeat in a large input, so that the same text read again is held once.
package intern

// Max is how many entries a Table shares: an input of many distinct
// texts (25,000 queue names) keeps no table of them all, while the few
// that repeat from one object to the next (argument names, "classic",
// "events.dlx") come first and stay shared.
const Max = 1024

// Table maps a text to the value shared for it, up to Max entries. A nil
// Table shares nothing: Get finds nothing and Put keeps nothing.
type Table[V any] struct{ m map[string]V }

// New returns an empty Table.
func New[V any]() *Table[V] { return &Table[V]{m: make(map[string]V, 64)} }

// Get returns the value shared for s.
func (t *Table[V]) Get(s string) (V, bool) {
	if t == nil {
		var zero V
		return zero, false
	}
	v, ok := t.m[s]
	return v, ok
}

// GetBytes is Get for a text in a buffer, without copying it.
func (t *Table[V]) GetBytes(b []byte) (V, bool) {
	if t == nil {
		var zero V
		return zero, false
	}
	v, ok := t.m[string(b)]
	return v, ok
}

// Share returns the value shared for s, or else v, which it shares for s
// while the table has room.
func (t *Table[V]) Share(s string, v V) V {
	if x, ok := t.Get(s); ok {
		return x
	}
	t.Put(s, v)
	return v
}

// Put shares v for s while the table has room.
func (t *Table[V]) Put(s string, v V) {
	if t != nil && len(t.m) < Max {
		t.m[s] = v
	}
}
