package ownership

import (
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/mqctl/mqctl/pkg/kind"
	"github.com/mqctl/mqctl/pkg/plan"
	"github.com/mqctl/mqctl/pkg/topology"
)

func TestRoundTripThroughExchange(t *testing.T) {
	t.Parallel()
	refs := map[plan.ObjectRef]plan.Print{
		{Kind: kind.Queue, Vhost: "/", Name: "orders.shipping"}:               11,
		{Kind: kind.Binding, Vhost: "/", Name: "orders -> queue q [a:b]"}:     11,
		{Kind: kind.Exchange, Vhost: "/", Name: "orders"}:                     11,
		{Kind: kind.Queue, Vhost: "other", Name: "not-in-this-vhost-record"}:  11,
		{Kind: kind.Policy, Vhost: "/", Name: "name: with colons and spaces"}: 11,
		{Kind: kind.OperatorPolicy, Vhost: "/", Name: "cap"}:                  11,
		{Kind: kind.Vhost, Vhost: "/", Name: "/"}:                             11,
	}
	tp := topology.New()
	v := tp.Vhost("/")
	old := Exchange("/", 3, map[plan.ObjectRef]plan.Print{{Kind: kind.Queue, Vhost: "/", Name: "stale"}: 12})
	cur := Exchange("/", 4, refs)
	// As the broker gives it back: JSON numbers, []any.
	cur.Arguments = asBroker(t, cur.Arguments)
	v.Exchanges[old.Name], v.Exchanges[cur.Name] = old, cur
	v.Exchanges["orders"] = &topology.Exchange{Name: "orders", Type: "topic", Durable: true}
	v.Bindings = []*topology.Binding{{Source: cur.Name, Destination: "x", DestinationType: topology.DestExchange}}

	recs, err := Extract(tp)
	if err != nil {
		t.Fatal(err)
	}
	r := recs["/"]
	if r.Generation != 4 || len(r.Exchanges) != 2 {
		t.Errorf("generation %d, exchanges %v: want the newest (4) of two", r.Generation, r.Exchanges)
	}
	want := map[plan.ObjectRef]plan.Print{}
	for ref, p := range refs {
		if ref.Vhost == "/" {
			want[ref] = p
		}
	}
	if diff := cmp.Diff(want, r.Managed); diff != "" {
		t.Errorf("managed (-want +got):\n%s", diff)
	}
	if _, ok := v.Exchanges[cur.Name]; ok || len(v.Exchanges) != 1 || len(v.Bindings) != 0 {
		t.Errorf("record exchanges and their bindings must leave the topology: %v %v", v.ExchangeNames(), v.Bindings)
	}
	if r.Equal(want) {
		t.Error("two record generations on the broker: the record must be rewritten to clean up")
	}
}

func TestUnreadableRecordNamesTheExchange(t *testing.T) {
	t.Parallel()
	tp := topology.New()
	tp.Vhost("v").Exchanges[Prefix+"1"] = &topology.Exchange{Name: Prefix + "1", Type: "fanout", Arguments: topology.Args{ArgFormat: int64(7)}}
	_, err := Extract(tp)
	if err == nil || !strings.Contains(err.Error(), `"mqctl.ownership.1"`) || !strings.Contains(err.Error(), "delete that exchange") {
		t.Errorf("err = %v", err)
	}
}

// TestUnreadableRecordNamesItsOwner: an unreadable record names whose it
// is, and that owner's file as the one whose apply rebuilds it. Before,
// team-y's plan on a vhost where team-z's record was damaged told team-y
// to "delete that exchange and run apply again to rebuild it from the
// file": team-y's file cannot rebuild team-z's record. The same for an
// owner's record of the broker's users, which named "mqctl-managed" (not
// "mqctl-managed.team-u"), "in vhost \"\"", and an exchange.
func TestUnreadableRecordNamesItsOwner(t *testing.T) {
	t.Parallel()
	damaged := topology.Args{ArgFormat: FormatPrinted, ArgCompressed: []any{"garbage"}}
	for _, tc := range []struct {
		name string
		err  func() error
		want string
	}{
		{
			name: "team-z's record in a vhost",
			err: func() error {
				tp := topology.New()
				tp.Vhost("v").Exchanges["mqctl.ownership.team-z.5"] = &topology.Exchange{Name: "mqctl.ownership.team-z.5", Type: "fanout", Arguments: damaged}
				_, err := ExtractAll(tp)
				return err
			},
			want: `ownership record "mqctl.ownership.team-z.5" in vhost "v", "team-z"'s, is unreadable (x-mqctl-count is <nil>, not a count): delete that exchange, then apply "team-z"'s file again: that apply rebuilds the record from the file`,
		},
		{
			name: "the default owner's record in a vhost",
			err: func() error {
				tp := topology.New()
				tp.Vhost("v").Exchanges[Prefix+"3"] = &topology.Exchange{Name: Prefix + "3", Type: "fanout", Arguments: damaged}
				_, err := ExtractAll(tp)
				return err
			},
			want: `ownership record "mqctl.ownership.3" in vhost "v", the default owner's, is unreadable (x-mqctl-count is <nil>, not a count): delete that exchange, then apply the default owner's file again`,
		},
		{
			name: "team-u's record of the users",
			err: func() error {
				_, err := DecodeGlobal(damaged, "team-u")
				return err
			},
			want: `mqctl's ownership record "mqctl-managed.team-u" of the broker's users, "team-u"'s, is unreadable (x-mqctl-count is <nil>, not a count): delete that global parameter (rabbitmqctl clear_global_parameter mqctl-managed.team-u), then apply "team-u"'s file, with its users section, again`,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if err := tc.err(); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("err = %v, want one saying %s", err, tc.want)
			}
		})
	}
}

func TestIsRecord(t *testing.T) {
	t.Parallel()
	for name, want := range map[string]bool{"mqctl.ownership.1": true, "mqctl.ownership.": false, "mqctl.ownership.x": false, "orders": false} {
		if IsRecord(name) != want {
			t.Errorf("IsRecord(%q) = %v", name, !want)
		}
	}
}

// Merge is the union of the records; a single record holding entries is
// its own union (shared: the plan only reads it), whatever empty records
// come with it.
func TestMerge(t *testing.T) {
	t.Parallel()
	a := &Record{Vhost: "a", Managed: map[plan.ObjectRef]plan.Print{{Kind: kind.Queue, Vhost: "a", Name: "q"}: 1}}
	b := &Record{Vhost: "b", Managed: map[plan.ObjectRef]plan.Print{{Kind: kind.Queue, Vhost: "b", Name: "q"}: 2, {Kind: kind.Exchange, Vhost: "b", Name: "x"}: 3}}
	empty := &Record{Vhost: "", Managed: map[plan.ObjectRef]plan.Print{}}
	want := map[plan.ObjectRef]plan.Print{
		{Kind: kind.Queue, Vhost: "a", Name: "q"}:    1,
		{Kind: kind.Queue, Vhost: "b", Name: "q"}:    2,
		{Kind: kind.Exchange, Vhost: "b", Name: "x"}: 3,
	}
	merged := Merge(map[string]*Record{"a": a, "b": b, "": empty})
	if d := cmp.Diff(want, maps.Collect(merged.All())); d != "" {
		t.Errorf("two records and an empty one (-want +got):\n%s", d)
	}
	for ref, p := range want {
		if got, ok := merged.Get(ref); !ok || got != p {
			t.Errorf("Get(%v) = %v, %v; want %v", ref, got, ok, p)
		}
	}
	if _, ok := merged.Get(plan.ObjectRef{Kind: kind.Queue, Vhost: "a", Name: "x"}); ok {
		t.Error("Get finds an object no record lists")
	}
	// Each record's set is used as it is, not copied.
	b.Managed[plan.ObjectRef{Kind: kind.Queue, Vhost: "b", Name: "later"}] = 4
	if p, ok := merged.Get(plan.ObjectRef{Kind: kind.Queue, Vhost: "b", Name: "later"}); !ok || p != 4 {
		t.Error("Merge copied a record's set")
	}
	if got := Merge(nil); len(got) != 0 {
		t.Errorf("no record: %v, want an empty set", got)
	}
}

// TestOwnerRecordNames: each owner's record has its own exchange name,
// which reads back to the owner and generation; the owner "" keeps the
// name every mqctl before owners wrote, and names that are no record's
// (a dot in the owner, no generation) are not taken for one.
func TestOwnerRecordNames(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name  string
		owner string
		gen   int64
		ok    bool
	}{
		{"mqctl.ownership.7", "", 7, true},
		{"mqctl.ownership.team-a.7", "team-a", 7, true},
		{"mqctl.ownership.team_b.12", "team_b", 12, true},
		{"mqctl.ownership.team.a.7", "", 0, false},
		{"mqctl.ownership.Team.7", "", 0, false},
		{"mqctl.ownership.team-a", "", 0, false},
		{"mqctl.ownership.", "", 0, false},
		{"mqctl.ownership.team-a.-1", "", 0, false},
		{"orders", "", 0, false},
	} {
		owner, gen, ok := ParseRecordName(tc.name)
		if owner != tc.owner || gen != tc.gen || ok != tc.ok {
			t.Errorf("%q: %q %d %v, want %q %d %v", tc.name, owner, gen, ok, tc.owner, tc.gen, tc.ok)
		}
		if tc.ok && RecordName(tc.owner, tc.gen) != tc.name {
			t.Errorf("RecordName(%q, %d) = %q, want %q", tc.owner, tc.gen, RecordName(tc.owner, tc.gen), tc.name)
		}
	}
	// Two owners' records in one vhost: each read apart, both out of the
	// topology.
	tp := topology.New()
	v := tp.Vhost("/")
	a := map[plan.ObjectRef]plan.Print{{Kind: kind.Queue, Vhost: "/", Name: "a.q"}: 1}
	b := map[plan.ObjectRef]plan.Print{{Kind: kind.Queue, Vhost: "/", Name: "b.q"}: 2}
	for _, e := range []*topology.Exchange{Exchange("/", 3, a), OwnerExchange("team-b", "/", 1, b)} {
		v.Exchanges[e.Name] = e
	}
	all, err := ExtractAll(tp)
	if err != nil {
		t.Fatal(err)
	}
	if len(v.Exchanges) != 0 {
		t.Errorf("record exchanges left in the topology: %v", v.ExchangeNames())
	}
	if diff := cmp.Diff(a, all["/"][""].Managed); diff != "" {
		t.Errorf("the default owner's record (-want +got):\n%s", diff)
	}
	if r := all["/"]["team-b"]; r == nil || r.Owner != "team-b" || r.Generation != 1 || !maps.Equal(r.Managed, b) {
		t.Errorf("team-b's record: %+v", r)
	}
	if g, ok := GlobalOwner(GlobalParameterOf("team-b")); !ok || g != "team-b" {
		t.Errorf("global record of team-b reads back as %q %v", g, ok)
	}
	if _, ok := GlobalOwner("cluster_name"); ok {
		t.Error("cluster_name is no owner's record")
	}
}

// TestTakeOver: a record that takes over another owner's lists what
// either lists (its own print where both do) and absorbs the other's
// storage, which apply deletes once it is written: the exchanges of a
// vhost's record, the global parameter of the broker's users' record
// (none when that record lists nothing).
func TestTakeOver(t *testing.T) {
	t.Parallel()
	q := func(vh, n string) plan.ObjectRef { return plan.ObjectRef{Kind: kind.Queue, Vhost: vh, Name: n} }
	mine := &Record{Vhost: "v", Owner: "team-a", Generation: 2, Exchanges: []string{"mqctl.ownership.team-a.2"},
		Managed: map[plan.ObjectRef]plan.Print{q("v", "both"): 1, q("v", "mine"): 2}}
	theirs := &Record{Vhost: "v", Generation: 7, Exchanges: []string{"mqctl.ownership.7"},
		Managed: map[plan.ObjectRef]plan.Print{q("v", "both"): 9, q("v", "theirs"): 3}}
	got := mine.TakeOver(theirs)
	want := map[plan.ObjectRef]plan.Print{q("v", "both"): 1, q("v", "mine"): 2, q("v", "theirs"): 3}
	if !maps.Equal(got.Managed, want) || !slices.Equal(got.Absorbed, []string{"mqctl.ownership.7"}) || got.Owner != "team-a" || got.Generation != 2 {
		t.Errorf("taken over: %+v", got)
	}
	if len(mine.Managed) != 2 || mine.Absorbed != nil {
		t.Errorf("TakeOver changed its receiver: %+v", mine)
	}
	if got.Equal(want) {
		t.Error("a record that absorbed another is never equal to what it lists: apply must write it and delete the other")
	}
	users := (&Record{Owner: "team-a", Managed: map[plan.ObjectRef]plan.Print{}}).TakeOver(&Record{Managed: map[plan.ObjectRef]plan.Print{{Kind: kind.User, Name: "u"}: 4}})
	if !slices.Equal(users.Absorbed, []string{GlobalParameter}) {
		t.Errorf("the users' record taken over absorbs %v, want the default owner's global parameter", users.Absorbed)
	}
	if none := (&Record{Owner: "team-a"}).TakeOver(&Record{Owner: "team-b"}); len(none.Absorbed) != 0 {
		t.Errorf("an empty users' record taken over absorbs %v, want nothing", none.Absorbed)
	}
}

// TestGlobalRecordCreated: the record of users says which of them mqctl
// created; one without the list (an older mqctl's) shows none created, and
// a take-over keeps what each record shows.
func TestGlobalRecordCreated(t *testing.T) {
	guest, svc := plan.ObjectRef{Kind: "user", Name: "guest"}, plan.ObjectRef{Kind: "user", Name: "svc"}
	refs := map[plan.ObjectRef]plan.Print{guest: 1, svc: 2}
	v := GlobalValue(refs, map[plan.ObjectRef]bool{svc: true, {Kind: "user", Name: "gone"}: true}, nil)
	rec, err := DecodeGlobal(v, "")
	if err != nil {
		t.Fatal(err)
	}
	if len(rec.Managed) != 2 || !rec.Created[svc] || rec.Created[guest] || len(rec.Created) != 1 {
		t.Errorf("decoded managed %v, created %v; want both managed, svc alone created", rec.Managed, rec.Created)
	}
	delete(v, ArgCreated)
	older, err := DecodeGlobal(v, "")
	if err != nil {
		t.Fatal(err)
	}
	if len(older.Managed) != 2 || len(older.Created) != 0 {
		t.Errorf("an older record: managed %v, created %v; want both managed, none created", older.Managed, older.Created)
	}
	taken := older.TakeOver(rec)
	if !taken.Created[svc] || taken.Created[guest] {
		t.Errorf("taken over: created %v, want svc alone", taken.Created)
	}
}
