package intern

import (
	"fmt"
	"testing"
)

// A Table shares what it was given for a text, up to Max texts; a nil one
// shares nothing; a lookup by bytes allocates nothing.
func TestTable(t *testing.T) {
	tab := New[string]()
	for i := range Max + 10 {
		s := fmt.Sprint(i)
		tab.Put(s, s)
	}
	if v, ok := tab.Get("7"); !ok || v != "7" {
		t.Errorf("Get(7) = %q, %v", v, ok)
	}
	if _, ok := tab.Get(fmt.Sprint(Max + 5)); ok {
		t.Errorf("a text past Max was kept")
	}
	b := []byte("12")
	if n := testing.AllocsPerRun(100, func() { _, _ = tab.GetBytes(b) }); n != 0 {
		t.Errorf("GetBytes allocates %v times", n)
	}
	var none *Table[any]
	none.Put("x", 1)
	if _, ok := none.Get("x"); ok {
		t.Errorf("a nil Table kept a value")
	}
	// Share: the value shared first, from then on; a nil or full Table
	// gives back what it is given.
	shares := New[any]()
	if a, b := shares.Share("n", 1), shares.Share("n", 2); a != 1 || b != 1 {
		t.Errorf("Share(n, 1), Share(n, 2) = %v, %v; want 1, 1", a, b)
	}
	if v := none.Share("n", 2); v != 2 {
		t.Errorf("a nil Table's Share(n, 2) = %v", v)
	}
	if v := tab.Share("new", "x"); v != "x" {
		t.Errorf("a full Table's Share(new, x) = %v", v)
	} else if _, ok := tab.Get("new"); ok {
		t.Errorf("a full Table kept a value")
	}
}
