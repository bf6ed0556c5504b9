package ownership

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

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

func someRefs(vhost string, n int) map[plan.ObjectRef]bool {
	refs := map[plan.ObjectRef]bool{
		{Kind: plan.KindVhost, Vhost: vhost, Name: vhost}:                                       true,
		{Kind: plan.KindPolicy, Vhost: vhost, Name: "name: with colons, spaces\nand a newline"}: true,
		{Kind: plan.KindExchange, Vhost: vhost, Name: ""}:                                       true,
		{Kind: plan.KindQueue, Vhost: vhost, Name: "ünïcødé ✓"}:                                 true,
		{Kind: plan.KindOperatorPolicy, Vhost: vhost, Name: "cap"}:                              true,
		{Kind: plan.KindQueue, Vhost: "elsewhere", Name: "not in this record"}:                  true,
	}
	for i := 0; i < n; i++ {
		q := fmt.Sprintf("svc%03d.q%05d", i%100, i)
		refs[plan.ObjectRef{Kind: plan.KindQueue, Vhost: vhost, Name: q}] = true
		refs[plan.ObjectRef{Kind: plan.KindQueue, Vhost: vhost, Name: q + ".dlq"}] = true
		refs[plan.ObjectRef{Kind: plan.KindBinding, Vhost: vhost, Name: fmt.Sprintf("events -> queue %s [svc%03d.event%d.#]", q, i%100, i)}] = true
	}
	return refs
}

func only(vhost string, refs map[plan.ObjectRef]bool) map[plan.ObjectRef]bool {
	out := map[plan.ObjectRef]bool{}
	for r := range refs {
		if r.Vhost == vhost {
			out[r] = true
		}
	}
	return out
}

func TestCompressedRoundTrip(t *testing.T) {
	for _, n := range []int{0, 1, 30000} {
		refs := someRefs("v", n)
		if n == 0 {
			refs = map[plan.ObjectRef]bool{}
		}
		e := Exchange("v", 7, refs)
		if f, _ := e.Arguments.Int(ArgFormat); f != FormatCompressed || e.Arguments.Has(ArgManaged) {
			t.Fatalf("format %v, args %v: want format 2 without the plain list", e.Arguments[ArgFormat], e.Arguments)
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
		if r.Generation != 7 || r.Format != FormatCompressed || r.Outdated() {
			t.Errorf("generation %d, format %d, outdated %v", r.Generation, r.Format, r.Outdated())
		}
		if diff := cmp.Diff(only("v", refs), r.Managed); diff != "" {
			t.Errorf("n=%d managed (-want +got):\n%s", n, diff)
		}
		if !r.Equal(refs) {
			t.Errorf("n=%d: a record in the current format listing refs must not be rewritten", n)
		}
	}
}

func TestOldFormatIsReadAndRewritten(t *testing.T) {
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
	if diff := cmp.Diff(only("v", refs), r.Managed); diff != "" {
		t.Errorf("managed (-want +got):\n%s", diff)
	}
	if r.Format != FormatPlain || !r.Outdated() || r.Equal(refs) {
		t.Errorf("format %d, outdated %v, equal %v: an old record must be rewritten even when it lists the same objects", r.Format, r.Outdated(), r.Equal(refs))
	}
	// A crash between declaring the new generation and deleting the old
	// one: the newest (compressed) wins.
	tp := topology.New()
	v := tp.Vhost("v")
	newer := Exchange("v", 4, map[plan.ObjectRef]bool{{Kind: plan.KindQueue, Vhost: "v", Name: "only-this"}: true})
	old.Arguments, newer.Arguments = asBroker(t, old.Arguments), asBroker(t, newer.Arguments)
	v.Exchanges[old.Name], v.Exchanges[newer.Name] = old, newer
	recs, err := Extract(tp)
	if err != nil {
		t.Fatal(err)
	}
	if r := recs["v"]; r.Generation != 4 || r.Format != FormatCompressed || len(r.Managed) != 1 || len(r.Exchanges) != 2 || r.Equal(r.Managed) {
		t.Errorf("record %+v: want generation 4 of two, compressed, still to clean up", r)
	}
	// No record at all is not outdated.
	if (&Record{Vhost: "v", Managed: map[plan.ObjectRef]bool{}}).Outdated() {
		t.Error("no record is not an old one")
	}
}

func TestDamagedCompressedRecordNamesTheExchange(t *testing.T) {
	good := Exchange("v", 2, someRefs("v", 20))
	chunks := good.Arguments[ArgCompressed].([]any)
	text := chunks[0].(string)
	for name, args := range map[string]topology.Args{
		"count":     {ArgFormat: FormatCompressed, ArgCount: int64(999), ArgCompressed: chunks},
		"no count":  {ArgFormat: FormatCompressed, ArgCompressed: chunks},
		"cut":       {ArgFormat: FormatCompressed, ArgCount: good.Arguments[ArgCount], ArgCompressed: []any{text[:len(text)/2]}},
		"not b64":   {ArgFormat: FormatCompressed, ArgCount: int64(1), ArgCompressed: []any{"!!!"}},
		"not gzip":  {ArgFormat: FormatCompressed, ArgCount: int64(1), ArgCompressed: []any{"aGVsbG8="}},
		"not list":  {ArgFormat: FormatCompressed, ArgCount: int64(1), ArgCompressed: int64(3)},
		"empty":     {ArgFormat: FormatCompressed, ArgCount: int64(2)},
		"format 99": {ArgFormat: int64(99)},
	} {
		_, err := extractOne(t, &topology.Exchange{Name: Prefix + "2", Type: "fanout", Arguments: args})
		if err == nil || !strings.Contains(err.Error(), `"mqctl.ownership.2"`) || !strings.Contains(err.Error(), "delete that exchange") {
			t.Errorf("%s: err = %v", name, err)
		}
	}
}

func TestFrontCoding(t *testing.T) {
	in := []string{"", "a", "ab", "abc", "abd", "b", "b\x00c", "queue:x"}
	got, err := unfront(front(in))
	if err != nil || !cmp.Equal(in, got) {
		t.Errorf("unfront(front(%q)) = %q, %v", in, got, err)
	}
	for _, bad := range [][]byte{{5, 1, 'a'}, {0, 9, 'a'}, {0x80}} {
		if _, err := unfront(bad); err == nil {
			t.Errorf("unfront(%v): no error", bad)
		}
	}
}
