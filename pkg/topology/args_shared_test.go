package topology

import (
	"reflect"
	"testing"
	"unsafe"

	"github.com/mqctl/mqctl/internal/intern"
)

// TestArgsShared: two tables read apart, each with its own copy of the
// same names and values, come out of Shared equal to themselves, holding
// one copy of each name and of each text or whole number they share; a
// value of another kind (a list) is kept as it is, and the tables given
// are left as they were.
func TestArgsShared(t *testing.T) {
	read := func(key string) Args {
		// Texts made at run time, each its own copy, as a decoder's.
		own := func(s string) string { return string([]byte(s)) }
		return Args{own("x-dead-letter-exchange"): own("events.dlx"), own("x-dead-letter-routing-key"): own(key), own("x-max-length"): int64(20000), own("x-list"): []any{own("a")}}
	}
	tab := intern.New[any]()
	a, b := read("q1"), read("q2")
	sa, sb := a.Shared(tab), b.Shared(tab)
	if !reflect.DeepEqual(sa, a) || !reflect.DeepEqual(sb, b) {
		t.Fatalf("Shared changed the tables: %v, %v", sa, sb)
	}
	keys := func(m Args) map[string]*byte {
		out := map[string]*byte{}
		for k := range m {
			out[k] = unsafe.StringData(k)
		}
		return out
	}
	ka, kb := keys(sa), keys(sb)
	for k := range ka {
		if ka[k] != kb[k] {
			t.Errorf("name %q is held twice", k)
		}
	}
	if x, y := sa["x-dead-letter-exchange"].(string), sb["x-dead-letter-exchange"].(string); unsafe.StringData(x) != unsafe.StringData(y) {
		t.Error(`the text "events.dlx" is held twice`)
	}
	if x, y := sa["x-max-length"], sb["x-max-length"]; (*[2]unsafe.Pointer)(unsafe.Pointer(&x))[1] != (*[2]unsafe.Pointer)(unsafe.Pointer(&y))[1] {
		t.Error("the number 20000 is held twice")
	}
	if x, y := b["x-dead-letter-exchange"].(string), sb["x-dead-letter-exchange"].(string); unsafe.StringData(x) == unsafe.StringData(y) {
		t.Error("the table given was changed")
	}
	if Args(nil).Shared(tab) != nil || (Args{}).Shared(tab) != nil {
		t.Error("an empty table is not nil, as Normalized's")
	}
}
