package plan

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/mqctl/mqctl/pkg/kind"
	"github.com/mqctl/mqctl/pkg/topology"
)

// A print follows the diff: two objects the diff finds equal have the same
// print, however each side spells them (the file's int, the broker's JSON
// number; a type left out or "classic"; x-queue-type in the arguments),
// and two it finds different have different prints.
func TestPrintsFollowTheDiff(t *testing.T) {
	pol := func(pattern, applyTo string, prio int, def topology.Args) *topology.Policy {
		return &topology.Policy{Name: "p", Pattern: pattern, ApplyTo: applyTo, Priority: prio, Definition: def}
	}
	item := func(k Kind, s topology.Args) *topology.Item { return &topology.Item{Kind: k, Name: "i", Settings: s} }
	for _, tc := range []struct {
		name       string
		have, want Object
		equal      bool
	}{
		{"queue: int and JSON number", Object(q("a", topology.Args{"x-max-length": float64(10)})), Object(q("a", topology.Args{"x-max-length": int64(10)})), true},
		{"queue: type left out and classic", Object(&topology.Queue{Name: "a", Durable: true}), Object(q("a", nil)), true},
		{"queue: x-queue-type stored (4.x)", Object(&topology.Queue{Name: "a", Type: "quorum", Durable: true, Arguments: topology.Args{"x-queue-type": "quorum"}}),
			Object(&topology.Queue{Name: "a", Type: "quorum", Durable: true}), true},
		{"queue: other argument", Object(q("a", topology.Args{"x-max-length": int64(5)})), Object(q("a", nil)), false},
		{"queue: other type", Object(&topology.Queue{Name: "a", Type: "quorum", Durable: true}), Object(q("a", nil)), false},
		{"queue: not durable", Object(&topology.Queue{Name: "a", Durable: false}), Object(q("a", nil)), false},
		{"exchange: same", Object(x("e", "topic")), Object(x("e", "topic")), true},
		{"exchange: other type", Object(x("e", "fanout")), Object(x("e", "topic")), false},
		{"exchange: internal", Object(&topology.Exchange{Name: "e", Type: "topic", Durable: true, Internal: true}), Object(x("e", "topic")), false},
		{"policy: apply_to left out and all", Object(pol("^a", "", 0, topology.Args{"max-length": float64(1)})), Object(pol("^a", "all", 0, topology.Args{"max-length": int64(1)})), true},
		{"policy: other pattern", Object(pol("^other$", "queues", 0, nil)), Object(pol("^temp$", "queues", 0, nil)), false},
		{"policy: other priority", Object(pol("^a", "queues", 1, nil)), Object(pol("^a", "queues", 0, nil)), false},
		{"policy: other definition", Object(pol("^a", "queues", 0, topology.Args{"max-length": int64(2)})), Object(pol("^a", "queues", 0, topology.Args{"max-length": int64(1)})), false},
		{"limits: same", ItemObject{item(kind.VhostLimits, topology.Args{"max-queues": float64(100)})}, ItemObject{item(kind.VhostLimits, topology.Args{"max-queues": int64(100)})}, true},
		{"limits: other", ItemObject{item(kind.VhostLimits, topology.Args{"max-queues": int64(200)})}, ItemObject{item(kind.VhostLimits, topology.Args{"max-queues": int64(100)})}, false},
		{"upstream: other uri", ItemObject{item(kind.FederationUpstream, topology.Args{"uri": "amqp://h2"})}, ItemObject{item(kind.FederationUpstream, topology.Args{"uri": "amqp://h1"})}, false},
		{"user: same hash and tags", ItemObject{item(kind.User, topology.Args{kind.UserPasswordHash: "abc", kind.UserHashingAlgorithm: "rabbit_password_hashing_sha256", kind.UserTags: []any{"management"}})},
			ItemObject{item(kind.User, topology.Args{kind.UserPasswordHash: "abc", kind.UserTags: []any{"management"}})}, true},
		{"user: another salt", ItemObject{item(kind.User, topology.Args{kind.UserPasswordHash: "abd", kind.UserTags: []any{}})},
			ItemObject{item(kind.User, topology.Args{kind.UserPasswordHash: "abc", kind.UserTags: []any{}})}, false},
		{"user: other tags", ItemObject{item(kind.User, topology.Args{kind.UserPasswordHash: "abc", kind.UserTags: []any{"administrator"}})},
			ItemObject{item(kind.User, topology.Args{kind.UserPasswordHash: "abc", kind.UserTags: []any{}})}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ph, pw := objectPrint(tc.have), objectPrint(tc.want)
			if ph == NoPrint || pw == NoPrint {
				t.Fatalf("NoPrint for an object whose definition is known: %d, %d", ph, pw)
			}
			if (ph == pw) != tc.equal {
				t.Errorf("prints %d and %d: equal %v, want %v", ph, pw, ph == pw, tc.equal)
			}
			// The diff agrees.
			var k Kind
			if it, ok := tc.want.(ItemObject); ok {
				k = it.Kind
			}
			if same := len(ObjectFields(k, tc.have, tc.want)) == 0; same != tc.equal {
				t.Errorf("ObjectFields equal %v: %+v", same, ObjectFields(k, tc.have, tc.want))
			}
		})
	}
	// A secret is masked before it is printed: the record, readable by
	// whoever may read the vhost, is no test of a guessed password.
	a := ItemPrint(&topology.Item{Kind: kind.Shovel, Name: "s", Settings: topology.Args{"src-uri": "amqp://u:secret1@h/v"}})
	b := ItemPrint(&topology.Item{Kind: kind.Shovel, Name: "s", Settings: topology.Args{"src-uri": "amqp://u:secret2@h/v"}})
	if a != b {
		t.Error("a shovel's print depends on the password in its URI")
	}
	// A user given a plaintext password: only the broker knows its hash.
	if p := ItemPrint(&topology.Item{Kind: kind.User, Name: "u", Settings: topology.Args{kind.UserPassword: "pw"}}); p != NoPrint {
		t.Errorf("a user with a plaintext password has print %d, want NoPrint (read back after the write)", p)
	}
}

func objectPrint(o Object) Print {
	if d, ok := Named(o); ok {
		return PrintOf(d)
	}
	return ItemPrint(o.(ItemObject).Item)
}

// leaveCase is an object the file dropped, as the broker holds it, and
// as mqctl recorded it.
func TestChangedOutside(t *testing.T) {
	current := vh("v", func(v *topology.Vhost) {
		v.Exchanges["events"] = x("events", "fanout")                         // made by hand after mqctl's topic one
		v.Exchanges["mine"] = x("mine", "topic")                              // mqctl's
		v.Queues["temp"] = q("temp", topology.Args{"x-max-length": int64(5)}) // by hand after mqctl's
		v.Queues["old"] = q("old", nil)                                       // recorded by an older mqctl
		v.Queues["keep"] = q("keep", nil)
		v.Bindings = []*topology.Binding{bind("mine", "temp", "a"), bind("mine", "keep", "b")}
		v.Policies["cap"] = &topology.Policy{Name: "cap", Pattern: "^other$", ApplyTo: "queues"}
	})
	desired := vh("v", func(v *topology.Vhost) { v.Queues["keep"] = q("keep", nil) })
	wrote := vh("v", func(v *topology.Vhost) { // what mqctl wrote
		v.Exchanges["events"] = x("events", "topic")
		v.Exchanges["mine"] = x("mine", "topic")
		v.Queues["temp"] = q("temp", nil)
		v.Queues["keep"] = q("keep", nil)
		v.Bindings = []*topology.Binding{bind("mine", "temp", "a"), bind("mine", "keep", "b")}
		v.Policies["cap"] = &topology.Policy{Name: "cap", Pattern: "^temp$", ApplyTo: "queues"}
	})
	record := Recorded(wrote)
	record[ObjectRef{kind.Queue, "v", "old"}] = NoPrint
	record[ObjectRef{kind.Queue, "v", "gone"}] = 12345

	p := Diff(desired, Current{Live: topology.Live{State: current}, Managed: ManagedOf(record)})
	var got []string
	for _, o := range p.ChangedOutside {
		got = append(got, string(o.Kind)+" "+o.Name)
	}
	want := []string{"binding mine -> queue temp [a]", "exchange events", "policy cap", "queue old", "queue temp"}
	if !cmp.Equal(got, want) {
		t.Errorf("changed outside %v, want %v", got, want)
	}
	for _, o := range p.ChangedOutside {
		switch {
		case o.Deleted:
			t.Errorf("%v deleted without --delete-changed", o)
		case o.Name == "old" && !strings.Contains(o.Reason, "older mqctl"):
			t.Errorf("old: %q", o.Reason)
		case o.Kind == kind.Binding && !strings.Contains(o.Reason, "source or destination"):
			t.Errorf("binding: %q", o.Reason)
		}
	}
	// mqctl's own exchange goes, with the binding on it that the plan does
	// not delete on its own (RabbitMQ drops it with the exchange).
	if got, want := rows(p), []row{{Delete, kind.Exchange, "mine"}, {Delete, kind.Binding, "mine -> queue keep [b]"}}; !cmp.Equal(got, want) {
		t.Errorf("changes %v, want %v", got, want)
	}
	if !cmp.Equal(p.Stale, []ObjectRef{{kind.Queue, "v", "gone"}}) {
		t.Errorf("stale %v", p.Stale)
	}

	// --delete-changed: deleted, as asked, and said so.
	p = DiffWith(desired, Current{Live: topology.Live{State: current}, Managed: ManagedOf(record)}, Options{DeleteChanged: true})
	deletes := 0
	for _, c := range p.Changes {
		if c.Action == Delete {
			deletes++
		}
	}
	if deletes != 7 || len(p.ChangedOutside) != 5 || !p.ChangedOutside[0].Deleted {
		t.Errorf("with DeleteChanged: %v, changed outside %v", rows(p), p.ChangedOutside)
	}

	// A vhost mqctl made, left by the file, is kept while an object in it
	// is someone else's.
	record[ObjectRef{kind.Vhost, "v", "v"}] = vhostPrint
	p = Diff(topology.New(), Current{Live: topology.Live{State: current}, Managed: ManagedOf(record)})
	for _, c := range p.Changes {
		if c.Kind == kind.Vhost {
			t.Errorf("the vhost is deleted with objects changed outside mqctl in it: %v", rows(p))
		}
	}
}

// A permission whose user mqctl made but which was made again by hand is
// the user's, even when its own settings are as mqctl wrote them; one on a
// user mqctl does not manage is judged by its own settings.
func TestPermissionOfAUserMadeAgain(t *testing.T) {
	perm := &topology.Item{Kind: kind.Permission, Name: "u", Settings: topology.Args{"configure": ".*", "write": ".*", "read": ".*"}}
	user := func(hash string) *topology.Item {
		return &topology.Item{Kind: kind.User, Name: "u", Settings: topology.Args{kind.UserPasswordHash: hash, kind.UserTags: []any{}}}
	}
	current := vh("v", func(v *topology.Vhost) { v.Items.Put(perm) })
	current.Items.Put(user("new-salt"))
	current.Declare(kind.User)
	current.Declare(kind.Permission)
	desired := vh("v", nil)
	desired.Declare(kind.User)
	desired.Declare(kind.Permission)
	desired.Items.Put(&topology.Item{Kind: kind.User, Name: "u", Settings: topology.Args{kind.UserPasswordHash: "new-salt", kind.UserTags: []any{}}})
	pref := ObjectRef{kind.Permission, "v", "u"}
	for _, tc := range []struct {
		name    string
		record  map[ObjectRef]Print
		outside bool
	}{
		{"user made again by hand", map[ObjectRef]Print{pref: ItemPrint(perm), {kind.User, "", "u"}: ItemPrint(user("old-salt"))}, true},
		{"user as mqctl made it", map[ObjectRef]Print{pref: ItemPrint(perm), {kind.User, "", "u"}: ItemPrint(user("new-salt"))}, false},
		{"user not mqctl's", map[ObjectRef]Print{pref: ItemPrint(perm)}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := Diff(desired, Current{Live: topology.Live{State: current}, Managed: ManagedOf(tc.record), Created: createdOf(tc.record)})
			if outside := len(p.ChangedOutside) == 1; outside != tc.outside || (outside == (len(p.Changes) > 0)) {
				t.Errorf("changes %v, changed outside %v", rows(p), p.ChangedOutside)
			}
		})
	}
}

// createdOf is every object of the broker's own (users, user limits) that
// record lists, as the record of an mqctl that created them all lists
// them (Current.Created).
func createdOf(record map[ObjectRef]Print) map[ObjectRef]bool {
	out := map[ObjectRef]bool{}
	for ref := range record {
		if ref.Vhost == "" {
			out[ref] = true
		}
	}
	return out
}

// TestAllMineIsTheOldSideRecorded: a state that is all mqctl's
// (Current.AllMine, the old side of mqctl diff) plans exactly what the same
// state with a record of every object as the diff of it from nothing
// writes (Recorded) plans: the same changes, adoptions, objects left alone
// and prints, text for text.
func TestAllMineIsTheOldSideRecorded(t *testing.T) {
	user := func(name string, settings topology.Args) *topology.Item {
		return &topology.Item{Kind: kind.User, Name: name, Settings: settings}
	}
	perm := func(name string) *topology.Item {
		return &topology.Item{Kind: kind.Permission, Name: name, Settings: topology.Args{"configure": ".*", "write": ".*", "read": ".*"}}
	}
	withUsers := func(t *topology.Topology, users ...*topology.Item) *topology.Topology {
		t.Declare(kind.User)
		t.Declare(kind.Permission)
		for _, u := range users {
			t.Items.Put(u)
			if v := t.Vhosts["bench"]; v != nil {
				v.Items.Put(perm(u.Name))
			}
		}
		return t
	}
	changedKey := func() *topology.Topology {
		t := pairs("bench", 20, 10000, "direct")
		t.Vhosts["bench"].Bindings[0].RoutingKey = "svc000.event0.created"
		return t
	}
	twoVhosts := func() *topology.Topology {
		t := pairs("bench", 3, 10000, "direct")
		t.Vhosts["other"] = vh("other", func(v *topology.Vhost) { v.Queues["q"] = q("q", nil) }).Vhosts["other"]
		t.Vhosts["/"] = vh("/", func(v *topology.Vhost) { v.Exchanges["e"] = x("e", "fanout") }).Vhosts["/"]
		return t
	}
	policy := func(t *topology.Topology, max int) *topology.Topology {
		t.Vhosts["bench"].Policies["limit"] = &topology.Policy{Name: "limit", Pattern: "^svc", ApplyTo: "queues", Definition: topology.Args{"max-length": max}}
		return t
	}
	for _, tc := range []struct {
		name     string
		old, new *topology.Topology
	}{
		{"one binding's key changed", pairs("bench", 20, 10000, "direct"), changedKey()},
		{"every object dropped, the vhost kept", pairs("bench", 20, 10000, "direct"), vh("bench", nil)},
		{"queues and an exchange replaced", pairs("bench", 20, 10000, "direct"), pairs("bench", 20, 20000, "fanout")},
		{"vhosts dropped, / among them", twoVhosts(), pairs("bench", 3, 10000, "direct")},
		{"vhosts added", pairs("bench", 3, 10000, "direct"), twoVhosts()},
		{"a policy changed", policy(pairs("bench", 3, 10000, "direct"), 10), policy(pairs("bench", 3, 10000, "direct"), 20)},
		{"users dropped, one with a plaintext password", withUsers(pairs("bench", 3, 10000, "direct"),
			user("hashed", topology.Args{kind.UserPasswordHash: "h", kind.UserTags: []any{}}),
			user("plain", topology.Args{kind.UserPassword: "secret", kind.UserTags: []any{}})),
			withUsers(pairs("bench", 3, 10000, "direct"))},
		{"a user's tags changed", withUsers(pairs("bench", 3, 10000, "direct"), user("u", topology.Args{kind.UserPasswordHash: "h", kind.UserTags: []any{}})),
			withUsers(pairs("bench", 3, 10000, "direct"), user("u", topology.Args{kind.UserPasswordHash: "h", kind.UserTags: []any{"management"}}))},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rec := Recorded(tc.old)
			recorded := Diff(tc.new, Current{Live: topology.Live{State: tc.old}, Managed: ManagedOf(rec), Created: createdOf(rec)})
			mine := Diff(tc.new, Current{Live: topology.Live{State: tc.old}, AllMine: true})
			if mine.Empty() && recorded.Empty() {
				t.Fatal("the case plans nothing: it shows nothing")
			}
			text := func(p *Plan) string {
				var b strings.Builder
				if err := WriteText(&b, p, RenderOptions{ListUnmanaged: true}); err != nil {
					t.Fatal(err)
				}
				return b.String()
			}
			if diff := cmp.Diff(text(recorded), text(mine)); diff != "" {
				t.Errorf("the plan's text differs (-recorded +all mine):\n%s", diff)
			}
			if diff := cmp.Diff(recorded.Prints, mine.Prints); diff != "" {
				t.Errorf("the prints apply records differ (-recorded +all mine):\n%s", diff)
			}
			if diff := cmp.Diff(recorded.Stale, mine.Stale); diff != "" {
				t.Errorf("the stale entries differ (-recorded +all mine):\n%s", diff)
			}
		})
	}
}

// TestPrintsStay: a print is what the ownership records on brokers hold,
// written by earlier mqctl releases. A change in how an object's fields
// are hashed (their order, the flags of topology.ExchangeFlags and
// QueueFlags) would make every object mqctl manages look changed outside
// it, so the prints of these objects are pinned. A setting added to a
// topology.Definition fails here unless it is Later (at its default, out
// of the print: TestLaterSettingsKeepThePrints).
func TestPrintsStay(t *testing.T) {
	for _, tc := range []struct {
		name string
		got  Print
		want Print
	}{
		{"internal topic exchange with an alternate", PrintOf(&topology.Exchange{Name: "e", Type: "topic", Durable: true, Internal: true, Arguments: topology.Args{"alternate-exchange": "ae"}}), 2641264384},
		{"auto-delete transient fanout", PrintOf(&topology.Exchange{Name: "e", Type: "fanout", AutoDelete: true}), 3397957340},
		{"quorum queue with a length limit", PrintOf(&topology.Queue{Name: "q", Type: "quorum", Durable: true, Arguments: topology.Args{"x-max-length": int64(10)}}), 1737638039},
		{"auto-delete transient classic queue", PrintOf(&topology.Queue{Name: "q", Type: "classic", AutoDelete: true}), 354510609},
		{"policy on queues with a priority", PrintOf(&topology.Policy{Name: "p", Pattern: `^orders\.`, ApplyTo: "queues", Priority: 5, Definition: topology.Args{"max-length": int64(1000), "overflow": "reject-publish"}}), 3406164506},
		{"policy on all, negative priority", PrintOf(&topology.Policy{Name: "p", Pattern: ".*", ApplyTo: "all", Priority: -3, Definition: topology.Args{"message-ttl": int64(60000)}}), 1919986888},
		{"policy with apply-to left out (all)", PrintOf(&topology.Policy{Name: "p", Pattern: ".*", Priority: -3, Definition: topology.Args{"message-ttl": int64(60000)}}), 1919986888},
	} {
		if tc.got != tc.want {
			t.Errorf("%s: print %d, want %d (as mqctl has always printed it)", tc.name, tc.got, tc.want)
		}
	}
}

// TestUsersAnOlderMqctlRecorded: the record of users an mqctl before
// Current.Created wrote lists alike the users it created and those a file
// named that were on the broker before it (an applied export: guest, the
// user mqctl logs in as). A file that drops such a user deletes neither it
// nor its access unless asked (DeleteChanged), and says why; one the
// record shows mqctl created goes.
func TestUsersAnOlderMqctlRecorded(t *testing.T) {
	perm := &topology.Item{Kind: kind.Permission, Name: "guest", Settings: topology.Args{"configure": ".*", "write": ".*", "read": ".*"}}
	user := &topology.Item{Kind: kind.User, Name: "guest", Settings: topology.Args{kind.UserPasswordHash: "h", kind.UserTags: []any{"administrator"}}}
	current := vh("v", func(v *topology.Vhost) { v.Items.Put(perm) })
	current.Items.Put(user)
	current.Declare(kind.User)
	current.Declare(kind.Permission)
	desired := vh("v", nil)
	desired.Declare(kind.User)
	desired.Declare(kind.Permission)
	uref, pref := ObjectRef{kind.User, "", "guest"}, ObjectRef{kind.Permission, "v", "guest"}
	record := map[ObjectRef]Print{uref: ItemPrint(user), pref: ItemPrint(perm)}
	for _, tc := range []struct {
		name          string
		created       map[ObjectRef]bool
		deleteChanged bool
		deletes       int
		outside       int
	}{
		{"recorded by an older mqctl", nil, false, 0, 2},
		{"recorded by an older mqctl, --delete-changed", nil, true, 2, 2},
		{"created by mqctl", map[ObjectRef]bool{uref: true}, false, 2, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := DiffWith(desired, Current{Live: topology.Live{State: current}, Managed: ManagedOf(record), Created: tc.created}, Options{DeleteChanged: tc.deleteChanged})
			deletes := 0
			for _, c := range p.Changes {
				if c.Action == Delete {
					deletes++
				}
			}
			if deletes != tc.deletes || len(p.ChangedOutside) != tc.outside {
				t.Fatalf("changes %v, changed outside %v: want %d deletes, %d changed outside", rows(p), p.ChangedOutside, tc.deletes, tc.outside)
			}
			for _, o := range p.ChangedOutside {
				if !strings.Contains(o.Reason, "an older mqctl recorded") || !strings.Contains(o.Reason, "cannot tell whether it created") {
					t.Errorf("%s %s changed outside: %s", o.Kind, o.Name, o.Reason)
				}
			}
		})
	}
}
