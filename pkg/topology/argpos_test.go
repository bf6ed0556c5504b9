package topology

import (
	"math"
	"runtime"
	"testing"
)

func TestArgPositions(t *testing.T) {
	var none *ArgPositions
	if p, ok := none.Get("x-max-length"); ok || !p.IsZero() || none.Len() != 0 {
		t.Errorf("a nil table placed x-max-length at %v (%v), len %d", p, ok, none.Len())
	}
	if got := (Meta{Pos: Pos{File: "f.yaml", Line: 3}}).PosOf("x-max-length"); got != (Pos{File: "f.yaml", Line: 3}) {
		t.Errorf("PosOf without argument positions = %v, want the object's", got)
	}
	a := NewArgPositions(2)
	a.Set("x-max-length", Pos{File: "f.yaml", Line: 5, Col: 7})
	a.Set("x-overflow", Pos{File: "f.yaml", Line: 6, Col: 7})
	a.Set("x-max-length", Pos{File: "f.yaml", Line: 9, Col: 3}) // a later position of the same argument wins
	a.Set("durable", Pos{})
	tests := []struct {
		key  string
		want Pos
		ok   bool
	}{
		{"x-max-length", Pos{File: "f.yaml", Line: 9, Col: 3}, true},
		{"x-overflow", Pos{File: "f.yaml", Line: 6, Col: 7}, true},
		{"durable", Pos{}, true},
		{"x-message-ttl", Pos{}, false},
	}
	for _, tt := range tests {
		if got, ok := a.Get(tt.key); got != tt.want || ok != tt.ok {
			t.Errorf("Get(%q) = %v, %v; want %v, %v", tt.key, got, ok, tt.want, tt.ok)
		}
	}
	if a.Len() != 3 {
		t.Errorf("Len = %d, want 3", a.Len())
	}
	// Positions the compact table does not hold as a line and column of
	// its file are kept whole, each as set, and a later one of the same
	// argument wins either way.
	b := NewArgPositions(1)
	b.Set("a", Pos{File: "f.yaml", Line: 2, Col: 4})
	b.Set("other-file", Pos{File: "g.yaml", Line: 3, Col: 5})
	b.Set("file-only", Pos{File: "f.yaml"})
	b.Set("no-file", Pos{Line: 4, Col: 1})
	b.Set("far", Pos{File: "f.yaml", Line: math.MaxInt, Col: 2})
	b.Set("col-only", Pos{File: "f.yaml", Col: 9})
	b.Set("wide", Pos{File: "f.yaml", Line: 3, Col: 1<<32 - 1})
	b.Set("back", Pos{File: "g.yaml", Line: 1, Col: 1})
	b.Set("back", Pos{File: "f.yaml", Line: 7, Col: 8})
	b.Set("away", Pos{File: "f.yaml", Line: 7, Col: 8})
	b.Set("away", Pos{File: "h.yaml", Line: 1, Col: 2})
	b.Set("gone", Pos{File: "f.yaml", Line: 5, Col: 5})
	b.Set("gone", Pos{})
	for _, tt := range []struct {
		key  string
		want Pos
	}{
		{"a", Pos{File: "f.yaml", Line: 2, Col: 4}},
		{"other-file", Pos{File: "g.yaml", Line: 3, Col: 5}},
		{"file-only", Pos{File: "f.yaml"}},
		{"no-file", Pos{Line: 4, Col: 1}},
		{"far", Pos{File: "f.yaml", Line: math.MaxInt, Col: 2}},
		{"col-only", Pos{File: "f.yaml", Col: 9}},
		{"wide", Pos{File: "f.yaml", Line: 3, Col: 1<<32 - 1}},
		{"back", Pos{File: "f.yaml", Line: 7, Col: 8}},
		{"away", Pos{File: "h.yaml", Line: 1, Col: 2}},
		{"gone", Pos{}},
	} {
		if got, ok := b.Get(tt.key); got != tt.want || !ok {
			t.Errorf("Get(%q) = %v, %v; want %v, true", tt.key, got, ok, tt.want)
		}
	}
	if b.Len() != 10 {
		t.Errorf("Len = %d, want 10", b.Len())
	}
	m := Meta{Pos: Pos{File: "f.yaml", Line: 1}, ArgPos: a}
	if got := m.PosOf("durable"); got != m.Pos {
		t.Errorf("PosOf(durable), placed nowhere, = %v, want the object's %v", got, m.Pos)
	}
	if got := m.PosOf("x-overflow"); got.Line != 6 {
		t.Errorf("PosOf(x-overflow) = %v, want line 6", got)
	}
}

// TestArgPositionsHoldLittle: the positions of a queue's four arguments
// (dead-letter exchange and key, length limit, overflow: 12,500 such
// queues in the bench's 50,002-object file) take under 160 bytes. As a
// map they took some 460, 5.8 MB of the replace plan's live heap; as a
// list of a Pos each, 216.
func TestArgPositionsHoldLittle(t *testing.T) {
	const n = 10000
	keys := []string{"x-dead-letter-exchange", "x-dead-letter-routing-key", "x-max-length", "x-overflow"}
	tables := make([]*ArgPositions, n)
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	for i := range tables {
		a := NewArgPositions(len(keys))
		for j, k := range keys {
			a.Set(k, Pos{File: "topology.yaml", Line: i*5 + j, Col: 7})
		}
		tables[i] = a
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	each := (int64(after.HeapAlloc) - int64(before.HeapAlloc)) / n
	runtime.KeepAlive(tables)
	t.Logf("%d bytes a queue", each)
	if each >= 160 {
		t.Errorf("four argument positions hold %d bytes, want under 160", each)
	}
}

// TestArgPositionsWritten: the typed field an argument is written through
// is kept with its position, in the compact table and whole, and a later
// position of the argument replaces it; the positions stay as set.
func TestArgPositionsWritten(t *testing.T) {
	if len(WrittenFields) > 1<<fieldBits {
		t.Fatalf("%d written fields; the table holds %d", len(WrittenFields), 1<<fieldBits)
	}
	a := NewArgPositions(4)
	a.SetWritten("x-max-length", Pos{File: "f.yaml", Line: 5, Col: 7}, "limits.max_length")
	a.Set("x-overflow", Pos{File: "f.yaml", Line: 6, Col: 7})
	a.SetWritten("x-delivery-limit", Pos{File: "g.yaml", Line: 8, Col: 9}, "retry.attempts")
	a.SetWritten("x-message-ttl", Pos{File: "f.yaml", Line: lineMask + 1, Col: 2}, "limits.message_ttl")
	a.SetWritten("x-expires", Pos{File: "f.yaml", Line: 3, Col: 3}, "no such field")
	a.SetWritten("x-max-priority", Pos{File: "f.yaml", Line: 4, Col: 4}, "max_priority")
	a.Set("x-max-priority", Pos{File: "f.yaml", Line: 4, Col: 9})
	for _, tt := range []struct {
		key, field string
		pos        Pos
	}{
		{"x-max-length", "limits.max_length", Pos{File: "f.yaml", Line: 5, Col: 7}},
		{"x-overflow", "", Pos{File: "f.yaml", Line: 6, Col: 7}},
		{"x-delivery-limit", "retry.attempts", Pos{File: "g.yaml", Line: 8, Col: 9}},
		{"x-message-ttl", "limits.message_ttl", Pos{File: "f.yaml", Line: lineMask + 1, Col: 2}},
		{"x-expires", "", Pos{File: "f.yaml", Line: 3, Col: 3}},
		{"x-max-priority", "", Pos{File: "f.yaml", Line: 4, Col: 9}},
	} {
		field, ok := a.Written(tt.key)
		if field != tt.field || ok != (tt.field != "") {
			t.Errorf("Written(%q) = %q, %v; want %q", tt.key, field, ok, tt.field)
		}
		if got, _ := a.Get(tt.key); got != tt.pos {
			t.Errorf("Get(%q) = %v; want %v", tt.key, got, tt.pos)
		}
	}
	var none *ArgPositions
	if f, ok := none.Written("x-max-length"); ok || f != "" {
		t.Errorf("a nil table says x-max-length is written as %q", f)
	}
}
