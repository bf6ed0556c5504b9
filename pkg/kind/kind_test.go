package kind_test

import (
	"fmt"
	"slices"
	"testing"

	"github.com/mqctl/mqctl/pkg/kind"
)

// Items (what the file reader, the diff, export and the live read walk)
// holds every kind carried as topology.Item once: a vhost's in VhostItems,
// the users section's in Access.
func TestItemsCoverEveryItemKind(t *testing.T) {
	seen := map[kind.Kind]int{}
	for _, s := range kind.VhostItems() {
		seen[s.Kind]++
		if s.Declared {
			t.Errorf("%s is in VhostItems but declared under the users section (Spec.Declared)", s.Kind)
		}
	}
	for _, s := range kind.Access() {
		seen[s.Kind]++
		if !s.Declared {
			t.Errorf("%s is in Access but not Spec.Declared", s.Kind)
		}
	}
	for _, s := range kind.All() {
		switch n := seen[s.Kind]; {
		case s.Item != nil && n != 1:
			t.Errorf("%s is carried as topology.Item and in VhostItems or Access %d times, not once (vhostItems in kind.go)", s.Kind, n)
		case s.Item == nil && n != 0:
			t.Errorf("%s has no ItemSpec but is in VhostItems or Access", s.Kind)
		}
		if got := s.Kind.Item(); got != s.Item {
			t.Errorf("%s.Item() = %p, want its spec's %p", s.Kind, got, s.Item)
		}
	}
	if kind.Kind("frobnicator").Item() != nil {
		t.Error("an unknown kind has an ItemSpec")
	}
}

// A list-shaped kind keeps its list under its one field (Key), or its
// members by one of their fields (By), and checks each member.
func TestListShapedKinds(t *testing.T) {
	for _, s := range kind.Items() {
		l := s.Item.List
		if l == nil {
			continue
		}
		if l.Validate == nil {
			t.Errorf("%s: a list-shaped kind checks each member", s.Kind)
		}
		if l.By != "" {
			if l.Key != "" || len(s.Item.Fields) != 0 || !slices.Contains(l.FieldNames(), l.By) {
				t.Errorf("%s: a kind whose members are held by %q has no list field and no fields but its members', %q among them", s.Kind, l.By, l.By)
			}
			continue
		}
		if s.Item.Shape != kind.Named || len(s.Item.Fields) != 1 || s.Item.Fields[0].Name != l.Key {
			t.Errorf("%s: a list-shaped kind is Named, with one field, its list %q", s.Kind, l.Key)
		}
	}
}

// A kind nested in another's items is declared there only: Single (named
// after the item) or ByVhost, and a ByVhost kind is nested.
func TestNestedKinds(t *testing.T) {
	nested := map[kind.Kind]bool{}
	for _, s := range kind.Items() {
		for _, k := range s.Item.Nested {
			n, ok := kind.Of(k)
			if !ok || n.Item == nil || (n.Item.Shape != kind.Single && n.Item.Shape != kind.ByVhost) || n.Section == "" {
				t.Errorf("%s nests %s: want an item kind of shape Single or ByVhost, with a section", s.Kind, k)
			}
			nested[k] = true
		}
	}
	for _, s := range kind.Items() {
		if s.Item.Shape == kind.ByVhost && !nested[s.Kind] {
			t.Errorf("%s is ByVhost but no kind nests it", s.Kind)
		}
	}
	if !nested[kind.Permission] || !nested[kind.TopicPermission] || !nested[kind.UserLimits] {
		t.Errorf("a user's limits, permissions and topic permissions are nested in it: %v", nested)
	}
}

// TestFieldNames: the settings of an item kind, in the order of its
// fields, are the list every stage reads and writes them by (a
// permission's three regexps); a kind without item fields has none.
func TestFieldNames(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		k    kind.Kind
		want []string
	}{
		{kind.Permission, []string{"configure", "write", "read"}},
		{kind.User, []string{kind.UserPassword, kind.UserPasswordHash, kind.UserHashingAlgorithm, kind.UserTags}},
		{kind.TopicPermission, []string{}},
		{kind.Exchange, nil},
		{kind.Kind("nonsense"), nil},
	} {
		if got := tc.k.FieldNames(); !slices.Equal(got, tc.want) || (got == nil) != (tc.want == nil) {
			t.Errorf("%s.FieldNames() = %#v, want %#v", tc.k, got, tc.want)
		}
	}
}

// A list held by one of its members' fields (a user's topic permissions
// on a vhost, by exchange): each member is one setting, and back.
func TestListEntry(t *testing.T) {
	ls := kind.TopicPermission.Item().List
	m := map[string]any{"exchange": "amq.topic", "write": "^a$", "read": "^$"}
	by, rest := ls.Entry(m)
	if by != "amq.topic" || len(rest) != 2 || rest["write"] != "^a$" || rest["read"] != "^$" {
		t.Errorf("Entry = %q, %v; want amq.topic, {write: ^a$, read: ^$}", by, rest)
	}
	if back := ls.Member(by, rest); len(back) != 3 || back["exchange"] != "amq.topic" || back["write"] != "^a$" {
		t.Errorf("Member = %v, want %v", back, m)
	}
	if len(m) != 3 {
		t.Errorf("Entry changed its argument: %v", m)
	}
	if got := ls.FieldNames(); !slices.Equal(got, []string{"exchange", "write", "read"}) {
		t.Errorf("FieldNames = %v", got)
	}
}

// A user owns its limits, permissions and topic permissions; a user, a
// vhost's kinds and an unknown kind have no owner.
func TestOwner(t *testing.T) {
	for _, k := range []kind.Kind{kind.UserLimits, kind.Permission, kind.TopicPermission} {
		if o, ok := k.Owner(); !ok || o != kind.User {
			t.Errorf("%s.Owner() = %q, %v; want user", k, o, ok)
		}
	}
	for _, k := range []kind.Kind{kind.User, kind.Queue, kind.VhostLimits, kind.Shovel, "frobnicator"} {
		if o, ok := k.Owner(); ok {
			t.Errorf("%s.Owner() = %q; want none", k, o)
		}
	}
}

// TestLooserLimits: vhost limits' Loosen keeps a limit have sets unless
// want's is looser (higher, none, or negative: no limit), and is nil when
// want loosens nothing.
func TestLooserLimits(t *testing.T) {
	loosen := kind.VhostLimits.Item().Loosen
	for _, c := range []struct {
		have, want map[string]any
		out        map[string]any
	}{
		{map[string]any{"max-queues": int64(2)}, map[string]any{"max-queues": int64(10)}, map[string]any{"max-queues": int64(10)}},
		{map[string]any{"max-queues": int64(2)}, map[string]any{}, map[string]any{}},
		{map[string]any{"max-queues": int64(2)}, map[string]any{"max-queues": int64(-1)}, map[string]any{"max-queues": int64(-1)}},
		{map[string]any{"max-queues": int64(10)}, map[string]any{"max-queues": int64(2)}, nil},
		{map[string]any{"max-queues": int64(-1)}, map[string]any{"max-queues": int64(2)}, nil},
		{map[string]any{}, map[string]any{"max-queues": int64(2)}, nil},
		{map[string]any{"max-queues": int64(2), "max-connections": int64(50)}, map[string]any{"max-queues": int64(20), "max-connections": int64(5)},
			map[string]any{"max-queues": int64(20), "max-connections": int64(50)}},
	} {
		got := loosen(c.have, c.want)
		if (got == nil) != (c.out == nil) || fmt.Sprint(got) != fmt.Sprint(c.out) {
			t.Errorf("Loosen(%v, %v) = %v, want %v", c.have, c.want, got, c.out)
		}
	}
}

// TestPhases: every phase is below Phases; a late delete runs after every
// write, and late deletes keep the order of the deletes before the
// writes (a binding before the queue it binds).
func TestPhases(t *testing.T) {
	lastWrite := 0
	for _, s := range kind.All() {
		lastWrite = max(lastWrite, s.WritePhase, kind.LoosenPhase)
	}
	for _, s := range kind.All() {
		if s.DeletePhase >= kind.Phases || s.WritePhase >= kind.Phases {
			t.Errorf("%s: delete phase %d, write phase %d, not below Phases (%d)", s.Kind, s.DeletePhase, s.WritePhase, kind.Phases)
		}
		if !s.DeleteLate {
			continue
		}
		if p := s.LateDeletePhase(); p <= lastWrite || p >= kind.Phases {
			t.Errorf("%s: late delete phase %d, want after every write (%d) and below Phases (%d)", s.Kind, p, lastWrite, kind.Phases)
		}
		for _, o := range kind.All() {
			if o.DeleteLate && o.DeletePhase < s.DeletePhase && o.LateDeletePhase() >= s.LateDeletePhase() {
				t.Errorf("%s is deleted before %s, but late after it", o.Kind, s.Kind)
			}
		}
	}
}

// TestEveryKindSaysItsWriteTag: every kind says which user tag the
// management API asks for before it writes one (Spec.WriteTag), which the
// engine checks before an apply (the API answers 401 half way through
// otherwise): a kind added without it would be taken for one any user
// with permissions on the vhost may write. The tags are those of RabbitMQ's
// rabbit_mgmt_wm_* modules (is_authorized_vhost, is_authorized_policies,
// is_authorized_admin) at v4.3.5, the same since 3.10.
func TestEveryKindSaysItsWriteTag(t *testing.T) {
	t.Parallel()
	want := map[kind.Kind]kind.Tag{
		kind.Vhost: kind.Administrator, kind.Exchange: kind.AnyUser, kind.Queue: kind.AnyUser, kind.Binding: kind.AnyUser,
		kind.Policy: kind.Policymaker, kind.OperatorPolicy: kind.Administrator, kind.VhostLimits: kind.Administrator,
		kind.Shovel: kind.Policymaker, kind.FederationUpstream: kind.Policymaker, kind.FederationUpstreamSet: kind.Policymaker,
		kind.User: kind.Administrator, kind.UserLimits: kind.Administrator, kind.Permission: kind.Administrator, kind.TopicPermission: kind.Administrator,
	}
	for _, s := range kind.All() {
		switch s.WriteTag {
		case kind.AnyUser, kind.Policymaker, kind.Administrator:
		default:
			t.Errorf("kind %q has no WriteTag: say which tag the management API asks for before it writes one (README, \"Adding a kind\")", s.Kind)
			continue
		}
		if w, ok := want[s.Kind]; ok && s.WriteTag != w {
			t.Errorf("kind %q: WriteTag %q, want %q", s.Kind, s.WriteTag, w)
		}
		if s.Kind.WriteTag() != s.WriteTag {
			t.Errorf("kind %q: Kind.WriteTag() is %q, its Spec says %q", s.Kind, s.Kind.WriteTag(), s.WriteTag)
		}
	}
}

// Words about an object name its vhost only where the vhost holds many of
// its kind by name: not for a vhost, its limits (named after it, as
// `vhost_limits "v" in vhost "v"` would say twice), users or their limits.
func TestInVhostByName(t *testing.T) {
	for k, want := range map[kind.Kind]bool{
		kind.Vhost: false, kind.VhostLimits: false, kind.User: false, kind.UserLimits: false, kind.Kind("no such kind"): false,
		kind.Exchange: true, kind.Queue: true, kind.Binding: true, kind.Policy: true, kind.OperatorPolicy: true,
		kind.Permission: true, kind.TopicPermission: true, kind.Shovel: true, kind.FederationUpstream: true, kind.FederationUpstreamSet: true,
	} {
		if got := k.InVhostByName(); got != want {
			t.Errorf("%s.InVhostByName() = %v, want %v", k, got, want)
		}
	}
	for _, s := range kind.All() {
		if s.Item != nil && s.Item.Shape == kind.Single && s.Kind.InVhostByName() {
			t.Errorf("%s is one per owner (Single) but named with its vhost", s.Kind)
		}
	}
}

// TestContainer: the vhost is the one kind that holds the others
// (Spec.Container), which the stages ask instead of naming it: it is
// never adopted and not named with a vhost beside it.
func TestContainer(t *testing.T) {
	for _, s := range kind.All() {
		if got, want := s.Kind.Container(), s.Kind == kind.Vhost; got != want {
			t.Errorf("%s.Container() = %v, want %v", s.Kind, got, want)
		}
		if s.Kind.Container() && (s.Kind.Adoptable() || s.Kind.InVhostByName()) {
			t.Errorf("%s holds the others, yet is adoptable (%v) or named with its vhost (%v)", s.Kind, s.Kind.Adoptable(), s.Kind.InVhostByName())
		}
	}
	if kind.Kind("no such kind").Container() {
		t.Error("an unknown kind is a container")
	}
}

// TestVhostKinds: a vhost's kinds are its typed kinds in the registry's
// order, then its item kinds in VhostItems' order, each with its section.
func TestVhostKinds(t *testing.T) {
	var got []string
	for _, s := range kind.VhostKinds() {
		got = append(got, s.Section)
	}
	want := []string{"exchanges", "queues", "bindings", "policies", "operator_policies", "limits", "shovels", "federation_upstreams", "federation_upstream_sets"}
	if !slices.Equal(got, want) {
		t.Errorf("VhostKinds' sections = %q, want %q", got, want)
	}
}
