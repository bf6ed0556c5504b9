package ownership

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/mqctl/mqctl/pkg/kind"
	"github.com/mqctl/mqctl/pkg/plan"
	"github.com/mqctl/mqctl/pkg/topology"
)

// asBroker is args as the management API gives them back (JSON numbers,
// []any).
func asBroker(t testing.TB, args topology.Args) topology.Args {
	t.Helper()
	data, err := json.Marshal(args)
	if err != nil {
		t.Fatal(err)
	}
	var out topology.Args
	if err := json.Unmarshal(data, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

// extractOne reads the record of vhost "v" holding exchange e.
func extractOne(t *testing.T, e *topology.Exchange) (*Record, error) {
	t.Helper()
	tp := topology.New()
	e.Arguments = asBroker(t, e.Arguments)
	tp.Vhost("v").Exchanges[e.Name] = e
	recs, err := Extract(tp)
	if err != nil {
		return nil, err
	}
	return recs["v"], nil
}

// someRefs are entries of every shape, with prints of every size
// (NoPrint included: an entry the broker has not told yet).
func someRefs(vhost string, n int) map[plan.ObjectRef]plan.Print {
	refs := map[plan.ObjectRef]plan.Print{
		{Kind: kind.Vhost, Vhost: vhost, Name: vhost}:                                       1,
		{Kind: kind.Policy, Vhost: vhost, Name: "name: with colons, spaces\nand a newline"}: 0xffffffff,
		{Kind: kind.Exchange, Vhost: vhost, Name: ""}:                                       plan.NoPrint,
		{Kind: kind.Queue, Vhost: vhost, Name: "ünïcødé ✓"}:                                 0x80000000,
		{Kind: kind.OperatorPolicy, Vhost: vhost, Name: "cap"}:                              42,
		{Kind: kind.Queue, Vhost: "elsewhere", Name: "not in this record"}:                  7,
	}
	for i := 0; i < n; i++ {
		q := fmt.Sprintf("svc%03d.q%05d", i%100, i)
		refs[plan.ObjectRef{Kind: kind.Queue, Vhost: vhost, Name: q}] = plan.Print(i*2654435761 + 1)
		refs[plan.ObjectRef{Kind: kind.Queue, Vhost: vhost, Name: q + ".dlq"}] = plan.Print(i*40503 + 3)
		refs[plan.ObjectRef{Kind: kind.Binding, Vhost: vhost, Name: fmt.Sprintf("events -> queue %s [svc%03d.event%d.#]", q, i%100, i)}] = plan.Print(i + 5)
	}
	return refs
}

// only is refs of vhost, with the given prints (nil: as they are).
func only(vhost string, refs map[plan.ObjectRef]plan.Print, print *plan.Print) map[plan.ObjectRef]plan.Print {
	out := map[plan.ObjectRef]plan.Print{}
	for r, p := range refs {
		if r.Vhost == vhost {
			if print != nil {
				p = *print
			}
			out[r] = p
		}
	}
	return out
}

var noPrint = plan.NoPrint

// A record of format 3 reads back every entry with its print.
func TestCompressedRoundTrip(t *testing.T) {
	t.Parallel()
	for _, n := range []int{0, 1, 30000} {
		refs := someRefs("v", n)
		if n == 0 {
			refs = map[plan.ObjectRef]plan.Print{}
		}
		e := Exchange("v", 7, refs)
		if f, _ := e.Arguments.Int(ArgFormat); f != FormatPrinted || e.Arguments.Has(ArgManaged) {
			t.Fatalf("format %v, args %v: want format 3 without the plain list", e.Arguments[ArgFormat], e.Arguments)
		}
		for _, c := range e.Arguments[ArgCompressed].([]any) {
			if len(c.(string)) > ChunkSize {
				t.Errorf("a chunk of %d characters", len(c.(string)))
			}
		}
		if n == 30000 && len(e.Arguments[ArgCompressed].([]any)) < 2 {
			t.Errorf("%d chunks: want the list split", len(e.Arguments[ArgCompressed].([]any)))
		}
		r, err := extractOne(t, e)
		if err != nil {
			t.Fatal(err)
		}
		if r.Generation != 7 || r.Format != FormatPrinted || r.Outdated() {
			t.Errorf("generation %d, format %d, outdated %v", r.Generation, r.Format, r.Outdated())
		}
		if diff := cmp.Diff(only("v", refs, nil), r.Managed); diff != "" {
			t.Errorf("n=%d managed (-want +got):\n%s", n, diff)
		}
		if !r.Equal(refs) {
			t.Errorf("n=%d: a record in the current format listing refs must not be rewritten", n)
		}
		if n > 0 {
			other := only("v", refs, nil)
			for ref, p := range other {
				other[ref] = p + 1
				break
			}
			if r.Equal(other) {
				t.Errorf("n=%d: a record whose prints differ must be rewritten", n)
			}
		}
	}
}

// A record of format 2 (no prints) is read, every entry with NoPrint, and
// rewritten by the next apply.
func TestFormat2IsReadWithoutPrints(t *testing.T) {
	t.Parallel()
	refs := someRefs("v", 100)
	old := CompressedExchange("v", 5, refs)
	if f, _ := old.Arguments.Int(ArgFormat); f != FormatCompressed {
		t.Fatalf("CompressedExchange writes format %v", old.Arguments[ArgFormat])
	}
	r, err := extractOne(t, old)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(only("v", refs, &noPrint), r.Managed); diff != "" {
		t.Errorf("managed (-want +got):\n%s", diff)
	}
	if r.Format != FormatCompressed || !r.Outdated() || r.Equal(r.Managed) {
		t.Errorf("format %d, outdated %v, equal %v: a format 2 record must be rewritten even when it lists the same objects", r.Format, r.Outdated(), r.Equal(r.Managed))
	}
}

func TestOldFormatIsReadAndRewritten(t *testing.T) {
	t.Parallel()
	refs := someRefs("v", 50)
	old := PlainExchange("v", 3, refs)
	if f, _ := old.Arguments.Int(ArgFormat); f != FormatPlain {
		t.Fatalf("PlainExchange writes format %v", old.Arguments[ArgFormat])
	}
	if _, ok := old.Arguments[ArgManaged].([]any); !ok {
		t.Fatalf("format 1 is a plain list: %v", old.Arguments)
	}
	r, err := extractOne(t, old)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(only("v", refs, &noPrint), r.Managed); diff != "" {
		t.Errorf("managed (-want +got):\n%s", diff)
	}
	if r.Format != FormatPlain || !r.Outdated() || r.Equal(refs) {
		t.Errorf("format %d, outdated %v, equal %v: an old record must be rewritten even when it lists the same objects", r.Format, r.Outdated(), r.Equal(refs))
	}
	// A crash between declaring the new generation and deleting the old
	// one: the newest (compressed) wins.
	tp := topology.New()
	v := tp.Vhost("v")
	newer := Exchange("v", 4, map[plan.ObjectRef]plan.Print{{Kind: kind.Queue, Vhost: "v", Name: "only-this"}: 9})
	old.Arguments, newer.Arguments = asBroker(t, old.Arguments), asBroker(t, newer.Arguments)
	v.Exchanges[old.Name], v.Exchanges[newer.Name] = old, newer
	recs, err := Extract(tp)
	if err != nil {
		t.Fatal(err)
	}
	if r := recs["v"]; r.Generation != 4 || r.Format != FormatPrinted || len(r.Managed) != 1 || len(r.Exchanges) != 2 || r.Equal(r.Managed) {
		t.Errorf("record %+v: want generation 4 of two, compressed, still to clean up", r)
	}
	// No record at all is not outdated.
	if (&Record{Vhost: "v", Managed: map[plan.ObjectRef]plan.Print{}}).Outdated() {
		t.Error("no record is not an old one")
	}
}

func TestDamagedCompressedRecordNamesTheExchange(t *testing.T) {
	t.Parallel()
	good := Exchange("v", 2, someRefs("v", 20))
	chunks := good.Arguments[ArgCompressed].([]any)
	text := chunks[0].(string)
	for name, args := range map[string]topology.Args{
		"count":       {ArgFormat: FormatPrinted, ArgCount: int64(999), ArgCompressed: chunks},
		"no count":    {ArgFormat: FormatPrinted, ArgCompressed: chunks},
		"cut":         {ArgFormat: FormatPrinted, ArgCount: good.Arguments[ArgCount], ArgCompressed: []any{text[:len(text)/2]}},
		"not b64":     {ArgFormat: FormatPrinted, ArgCount: int64(1), ArgCompressed: []any{"!!!"}},
		"not gzip":    {ArgFormat: FormatPrinted, ArgCount: int64(1), ArgCompressed: []any{"aGVsbG8="}},
		"not list":    {ArgFormat: FormatPrinted, ArgCount: int64(1), ArgCompressed: int64(3)},
		"empty":       {ArgFormat: FormatPrinted, ArgCount: int64(2)},
		"format 99":   {ArgFormat: int64(99)},
		"as format 2": {ArgFormat: FormatCompressed, ArgCount: good.Arguments[ArgCount], ArgCompressed: chunks},
	} {
		_, err := extractOne(t, &topology.Exchange{Name: Prefix + "2", Type: "fanout", Arguments: args})
		if err == nil || !strings.Contains(err.Error(), `"mqctl.ownership.2"`) || !strings.Contains(err.Error(), "delete that exchange") {
			t.Errorf("%s: err = %v", name, err)
		}
	}
}

func TestFrontCoding(t *testing.T) {
	t.Parallel()
	var in []entry
	for i, s := range []string{"", "a", "ab", "abc", "abd", "b", "b\x00c", "queue:x"} {
		in = append(in, entry{name: s, print: plan.Print(i * 0x01010101)})
	}
	for _, printed := range []bool{false, true} {
		want := in
		if !printed {
			want = nil
			for _, e := range in {
				want = append(want, entry{name: e.name})
			}
		}
		got, err := unfront(front(in, printed), printed)
		if err != nil || !cmp.Equal(want, got, cmp.AllowUnexported(entry{})) {
			t.Errorf("printed %v: unfront(front(%v)) = %v, %v", printed, in, got, err)
		}
	}
	for _, bad := range [][]byte{{5, 1, 'a'}, {0, 9, 'a'}, {0x80}} {
		if _, err := unfront(bad, false); err == nil {
			t.Errorf("unfront(%v): no error", bad)
		}
	}
	// A printed entry cut short of its print.
	if _, err := unfront([]byte{0, 1, 'a', 0, 0}, true); err == nil {
		t.Error("an entry without its 4-byte print: no error")
	}
}

// TestGlobalKept: the record of the users lists the users kept (on the
// broker before mqctl, named by the owner's file) apart from those it
// manages, and reads them back; one it manages is not listed as kept.
func TestGlobalKept(t *testing.T) {
	t.Parallel()
	made := plan.ObjectRef{Kind: "user", Name: "made"}
	kept := plan.ObjectRef{Kind: "user", Name: "kept"}
	v := GlobalValue(map[plan.ObjectRef]plan.Print{made: 5}, map[plan.ObjectRef]bool{made: true}, map[plan.ObjectRef]bool{kept: true, made: true})
	rec, err := DecodeGlobal(v, "team-a")
	if err != nil {
		t.Fatal(err)
	}
	if len(rec.Managed) != 1 || rec.Managed[made] != 5 || !rec.Created[made] {
		t.Errorf("managed %v, created %v", rec.Managed, rec.Created)
	}
	if len(rec.Kept) != 1 || !rec.Kept[kept] {
		t.Errorf("kept %v, want only %v", rec.Kept, kept)
	}
	// An older record (no list of kept users) reads as keeping none.
	delete(v, ArgKept)
	if rec, err := DecodeGlobal(v, ""); err != nil || len(rec.Kept) != 0 {
		t.Errorf("older record: kept %v, %v", rec.Kept, err)
	}
}
