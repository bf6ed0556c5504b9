package engine_test

import (
	"context"
	"errors"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mqctl/mqctl/internal/testbroker"
	"github.com/mqctl/mqctl/pkg/broker"
	"github.com/mqctl/mqctl/pkg/engine"
	"github.com/mqctl/mqctl/pkg/kind"
	"github.com/mqctl/mqctl/pkg/ownership"
	"github.com/mqctl/mqctl/pkg/plan"
	"github.com/mqctl/mqctl/pkg/topology"
)

// reusedCase is a re-used name: the file of kindCases with the object,
// what is done by hand after mqctl applied it, and the file without it.
type reusedCase struct {
	kind kind.Kind
	// what names the case when it is not the kind's plain one.
	what string
	// byHand deletes the object and declares it again under its name, by
	// hand (mqctl's record is not told); nil: with kindCases' changed
	// object.
	byHand func(k *kindRun)
	// without is the file without the object (body, top); "": kindCases'.
	without, topWithout string
	// outside are the objects the plan must name as changed outside mqctl
	// ("kind name"); nil: the object itself.
	outside []string
}

// TestReusedNameIsNotOwnership runs, for every kind of kind.All, the
// sequence that made mqctl delete what it did not create: mqctl applies a
// file with the object; by hand, the object is deleted and declared again
// under the same name with other settings; a plan of the file without it
// must not delete it, and must name it as changed outside mqctl; apply
// leaves it on the broker and drops it from mqctl's record; the next plan
// lists it as unmanaged.
func TestReusedNameIsNotOwnership(t *testing.T) {
	t.Parallel()
	cases := []reusedCase{
		{kind: kind.Exchange}, {kind: kind.Queue}, {kind: kind.Policy}, {kind: kind.OperatorPolicy},
		{kind: kind.VhostLimits}, {kind: kind.Shovel}, {kind: kind.FederationUpstream}, {kind: kind.FederationUpstreamSet},
		{kind: kind.User}, {kind: kind.UserLimits}, {kind: kind.Permission}, {kind: kind.TopicPermission},
		{
			// A binding is its identity: what makes one someone else's is an
			// end declared again by hand, and the binding made again on it.
			kind: kind.Binding,
			byHand: func(k *kindRun) {
				ctx := context.Background()
				if err := k.f.c.DeleteQueue(ctx, k.f.vhost, "k.q", broker.DeleteQueueOptions{}); err != nil {
					k.f.t.Fatal(err)
				}
				testbroker.Declare(k.f.t, k.f.c, k.f.vhost, &topology.Vhost{
					Queues:   map[string]*topology.Queue{"k.q": {Name: "k.q", Durable: true, Arguments: topology.Args{"x-max-priority": int64(5)}}},
					Bindings: []*topology.Binding{{Source: "k.x", Destination: "k.q", DestinationType: topology.DestQueue, RoutingKey: "a"}},
				})
			},
			// The exchange stays: deleting it would take every binding on
			// it down, as RabbitMQ does (the plan says so).
			without: "exchanges:\n  k.x: { type: direct }\n",
			outside: []string{"binding k.x -> queue k.q [a]", "queue k.q"},
		},
		{
			// The permission as mqctl wrote it, but its user was deleted by
			// hand (the permission with it) and made again, and given the
			// same permission by hand: the user's, not mqctl's.
			kind: kind.Permission, what: "of a user declared again by hand",
			byHand: func(k *kindRun) {
				ctx := context.Background()
				state := k.read()
				perm := state.Vhosts[k.f.vhost].Items.Get(kind.Permission, k.name)
				if perm == nil {
					k.f.t.Fatal("no permission to give again")
				}
				if err := k.f.c.DeleteItem(ctx, kind.User, "", state.Items.Get(kind.User, k.name)); err != nil {
					k.f.t.Fatal(err)
				}
				again := &topology.Item{Kind: kind.User, Name: k.name, Settings: topology.Args{kind.UserPassword: k.password, kind.UserTags: []any{}}}
				if err := k.f.c.WriteItem(ctx, kind.User, "", nil, again); err != nil {
					k.f.t.Fatal(err)
				}
				if err := k.f.c.WriteItem(ctx, kind.Permission, k.f.vhost, nil, perm); err != nil {
					k.f.t.Fatal(err)
				}
			},
		},
	}
	for _, rc := range cases {
		name := string(rc.kind)
		if rc.what != "" {
			name += " " + rc.what
		}
		// One after the other: fourteen fixtures at once (each a login and
		// an overview) slowed 4.0.5's management API past testbroker's 5 s
		// probe in a CI run, beside TestEveryKindThroughEveryStage's.
		t.Run(name, func(t *testing.T) {
			kc := kindCases[rc.kind]
			spec, _ := kind.Of(rc.kind)
			f := newFixture(t)
			objName := strings.ReplaceAll(kc.name, "${VHOST}", f.vhost)
			k := &kindRun{f: f, spec: spec, name: objName, password: "pw-" + testbroker.Name(t, "k")}
			if kc.topWith != "" {
				f.b.UsersSection(t)
				t.Cleanup(func() { _ = f.c.DeleteJSON(context.Background(), "delete test user", "", "users", objName) })
			}
			without, topWithout := kc.without, kc.topWithout
			if rc.without != "" {
				without, topWithout = rc.without, ""
			}
			outside := rc.outside
			if outside == nil {
				outside = []string{string(rc.kind) + " " + objName}
			}

			k.apply(kc.with, kc.topWith)
			if rc.byHand != nil {
				rc.byHand(k)
			} else {
				k.redeclare(kc)
			}
			if !k.present(k.read()) {
				t.Fatalf("%s %q is not on the broker after it was declared again by hand", rc.kind, objName)
			}

			p := k.plan(without, topWithout)
			for _, c := range p.Changes {
				if c.Action == plan.Delete && slices.Contains(outside, string(c.Kind)+" "+c.Name) {
					t.Errorf("the plan deletes %s %q, declared again by hand: %v", c.Kind, c.Name, changes(p))
				}
			}
			var got []string
			for _, o := range p.ChangedOutside {
				got = append(got, string(o.Kind)+" "+o.Name)
				if o.Deleted || o.Reason == "" {
					t.Errorf("changed outside: %+v", o)
				}
			}
			slices.Sort(got)
			if !slices.Equal(got, outside) {
				t.Errorf("changed outside mqctl: %q, want %q", got, outside)
			}

			k.apply(without, topWithout)
			if !k.present(k.read()) {
				t.Errorf("apply deleted %s %q, declared again by hand", rc.kind, objName)
			}
			// Forgotten: the record no longer lists it, and the next plan
			// counts it as unmanaged.
			recs := k.records()
			for _, o := range outside {
				kd, n, _ := strings.Cut(o, " ")
				vh := f.vhost
				if s, _ := kind.Of(kind.Kind(kd)); s.Broker {
					vh = ""
				}
				if _, ok := recs[plan.ObjectRef{Kind: kind.Kind(kd), Vhost: vh, Name: n}]; ok {
					t.Errorf("mqctl's record still lists %s after the apply", o)
				}
			}
			p = k.plan(without, topWithout)
			var unmanaged []string
			for _, u := range p.Unmanaged {
				unmanaged = append(unmanaged, string(u.Kind)+" "+u.Name)
			}
			for _, o := range outside {
				if !slices.Contains(unmanaged, o) {
					t.Errorf("the plan after the apply does not count %s as unmanaged: %v", o, unmanaged)
				}
			}
			if !p.Empty() || len(p.ChangedOutside) > 0 || len(p.Stale) > 0 {
				t.Errorf("the plan after the apply: %v, changed outside %v, stale %v", changes(p), p.ChangedOutside, p.Stale)
			}
		})
	}
}

// redeclare deletes the object by hand and declares it again under its
// name as kindCases' changed file has it, through the management API.
func (k *kindRun) redeclare(kc kindCase) {
	k.f.t.Helper()
	ctx := context.Background()
	c, vh, name := k.f.c, k.f.vhost, k.name
	state := k.read()
	changed := k.file(kc.changed, kc.topChanged)
	v, want := state.Vhosts[vh], changed.Vhosts[vh]
	var err error
	switch k.spec.Kind {
	case kind.Exchange:
		if err = c.DeleteExchange(ctx, vh, name, broker.DeleteExchangeOptions{}); err == nil {
			err = c.DeclareExchange(ctx, vh, want.Exchanges[name])
		}
	case kind.Queue:
		if err = c.DeleteQueue(ctx, vh, name, broker.DeleteQueueOptions{}); err == nil {
			err = c.DeclareQueue(ctx, vh, want.Queues[name])
		}
	case kind.Policy:
		if err = c.DeletePolicy(ctx, kind.Policy, vh, name); err == nil {
			err = c.PutPolicy(ctx, kind.Policy, vh, want.Policies[name])
		}
	case kind.OperatorPolicy:
		if err = c.DeletePolicy(ctx, kind.OperatorPolicy, vh, name); err == nil {
			err = c.PutPolicy(ctx, kind.OperatorPolicy, vh, want.OperatorPolicies[name])
		}
	default:
		if k.spec.Kind.Item() == nil {
			k.f.t.Fatalf("the test cannot declare objects of kind %q by hand: add it to kindRun.redeclare", k.spec.Kind)
		}
		items, wantItems, where := v.Items, want.Items, vh
		if k.spec.Broker {
			items, wantItems, where = state.Items, changed.Items, ""
		}
		if err = c.DeleteItem(ctx, k.spec.Kind, where, items.Get(k.spec.Kind, name)); err == nil {
			// A parameter's PUT is idempotent, and 4.3.6 now and then
			// answers 500 to the write of a federation upstream set just
			// deleted (seen once in CI): a person would write it again.
			for try := 0; ; try++ {
				err = c.WriteItem(ctx, k.spec.Kind, where, nil, wantItems.Get(k.spec.Kind, name))
				if err == nil || try == 4 || !errors.Is(err, broker.ErrOutcomeUnknown) {
					break
				}
				time.Sleep(200 * time.Millisecond)
			}
		}
	}
	if err != nil {
		k.f.t.Fatalf("declare %s %q again by hand: %v", k.spec.Kind, name, err)
	}
}

// records is mqctl's record of the test vhost and of the broker's users,
// as the broker holds them.
func (k *kindRun) records() map[plan.ObjectRef]plan.Print {
	k.f.t.Helper()
	ctx := context.Background()
	state, _, err := k.f.c.ReadTopology(ctx, []string{k.f.vhost})
	if err != nil {
		k.f.t.Fatal(err)
	}
	recs, err := ownership.Extract(state)
	if err != nil {
		k.f.t.Fatal(err)
	}
	if recs[""], err = engine.ReadBrokerRecord(ctx, k.f.c); err != nil {
		k.f.t.Fatal(err)
	}
	return maps.Collect(ownership.Merge(recs).All())
}

// TestStaleRecordIsCleaned: objects mqctl made that were deleted by hand
// are listed by the plan as stale, and the next apply, a no-op one
// included, drops them from mqctl's record, which then lists only what
// exists. The users' record is cleaned by an apply whose file has a users
// section (the one that may write it).
func TestStaleRecordIsCleaned(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.b.UsersSection(t)
	ctx := context.Background()
	k := &kindRun{f: f, spec: kind.Spec{Kind: kind.Queue}, password: "pw-" + testbroker.Name(t, "k")}
	user := func(i int) string { return f.vhost + "-u" + string(rune('0'+i)) }
	for i := 1; i <= 3; i++ {
		t.Cleanup(func() { _ = f.c.DeleteJSON(context.Background(), "delete test user", "", "users", user(i)) })
	}
	users := func(n int) string {
		s := "users:\n"
		for i := 1; i <= n; i++ {
			s += "  ${VHOST}-u" + string(rune('0'+i)) + ": { password: \"${KIND_PASSWORD}\" }\n"
		}
		return s
	}
	k.apply("queues:\n  a: {}\n  b: {}\n  c: {}\n", users(3))
	before := k.records()

	// By hand: two users and a queue deleted.
	for _, u := range []string{user(2), user(3)} {
		if err := f.c.DeleteJSON(ctx, "delete user", "", "users", u); err != nil {
			t.Fatal(err)
		}
	}
	if err := f.c.DeleteQueue(ctx, f.vhost, "b", broker.DeleteQueueOptions{}); err != nil {
		t.Fatal(err)
	}
	stale := []plan.ObjectRef{{Kind: kind.Queue, Vhost: f.vhost, Name: "b"}, {Kind: kind.User, Name: user(2)}, {Kind: kind.User, Name: user(3)}}

	// A file without a users section: its plan cleans the vhost's record
	// only.
	p := k.plan("queues:\n  a: {}\n  c: {}\n", "")
	if !p.Empty() || !slices.Equal(p.Stale, stale[:1]) {
		t.Errorf("plan without users: %v, stale %v, want none and %v", changes(p), p.Stale, stale[:1])
	}
	p = k.plan("queues:\n  a: {}\n  c: {}\n", users(1))
	// In the plan's order: the broker's objects, then the vhost's.
	if want := []plan.ObjectRef{stale[1], stale[2], stale[0]}; !p.Empty() || !slices.Equal(p.Stale, want) {
		t.Errorf("plan: %v, stale %v, want none and %v", changes(p), p.Stale, want)
	}

	// A no-op apply cleans both records.
	k.apply("queues:\n  a: {}\n  c: {}\n", users(1))
	after := k.records()
	t.Logf("record before: %d entries, after: %d", len(before), len(after))
	for _, r := range stale {
		if _, ok := before[r]; !ok {
			t.Errorf("the first apply did not record %v", r)
		}
		if _, ok := after[r]; ok {
			t.Errorf("the no-op apply left %v in the record", r)
		}
	}
	if len(after) != len(before)-len(stale) {
		t.Errorf("record after the no-op apply: %v (before: %v)", after, before)
	}
	if p := k.plan("queues:\n  a: {}\n  c: {}\n", users(1)); !p.Empty() || p.Records() {
		t.Errorf("the plan after the cleaning apply: %v, record %v %v %v", changes(p), p.Prints, p.Stale, p.ChangedOutside)
	}
}

// A saved plan depends on the broker's users only when its file has a
// users section: a user someone else makes meanwhile leaves a plan of a
// file without one applicable, and makes one with one stale.
func TestSavedPlanAndOtherUsers(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.b.UsersSection(t)
	ctx := context.Background()
	k := &kindRun{f: f, spec: kind.Spec{Kind: kind.Queue}, password: "pw-" + testbroker.Name(t, "k")}
	other := f.vhost + "-other"
	t.Cleanup(func() { _ = f.c.DeleteJSON(context.Background(), "delete test user", "", "users", other) })
	for _, tc := range []struct {
		name  string
		top   string
		stale bool
	}{
		{"no users section", "", false},
		{"a users section", "users: {}\n", true},
	} {
		res, err := f.eng.Plan(ctx, k.file("queues:\n  "+strings.ReplaceAll(tc.name, " ", "-")+": {}\n", tc.top), engine.PlanOptions{Save: true})
		if err != nil {
			t.Fatal(err)
		}
		_ = f.c.DeleteJSON(ctx, "delete test user", "", "users", other)
		if err := f.c.WriteItem(ctx, kind.User, "", nil, &topology.Item{Kind: kind.User, Name: other, Settings: topology.Args{kind.UserPassword: "x", kind.UserTags: []any{}}}); err != nil {
			t.Fatal(err)
		}
		_, err = f.eng.Apply(ctx, engine.ApplyInput{Saved: res.Plan}, engine.ApplyOptions{})
		if stale := errors.Is(err, engine.ErrStalePlan); stale != tc.stale {
			t.Errorf("%s: a user made meanwhile: apply of the saved plan = %v, want stale %v", tc.name, err, tc.stale)
		}
	}
}

// A user tagged protected: 4.2+ refuses to change or delete it through
// the management API, so a plan leaves out the change and says why (apply
// completes instead of stopping half way); 3.10 and 4.0 know no such tag
// and apply the change.
func TestProtectedUser(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.b.UsersSection(t)
	ctx := context.Background()
	k := &kindRun{f: f, spec: kind.Spec{Kind: kind.User}, password: "pw-" + testbroker.Name(t, "k")}
	name := f.vhost + "-p"
	t.Cleanup(func() {
		// A protected user is deleted with the tag taken off first.
		if err := f.b.DeleteUser(name); err != nil {
			t.Errorf("cleanup: %v", err)
		}
	})
	top := "users:\n  ${VHOST}-p: { password: \"${KIND_PASSWORD}\", tags: [management] }\n"
	k.apply("{}\n", top)
	// By hand: the user gets the protected tag (besides its own).
	if err := f.c.WriteItem(ctx, kind.User, "", nil, &topology.Item{Kind: kind.User, Name: name,
		Settings: topology.Args{kind.UserPassword: k.password, kind.UserTags: []any{"management", "protected"}}}); err != nil {
		t.Fatal(err)
	}
	f.notes = nil
	p := k.plan("{}\n", top)
	protects := f.b.Version().AtLeast(4, 2)
	held := false
	for _, n := range f.notes {
		held = held || strings.Contains(n, `user "`+name+`" is left alone: it is tagged protected`)
	}
	if held != protects || (len(p.Changes) == 0) != protects {
		t.Fatalf("RabbitMQ %s: plan %v, notes %q: want the update of the tags held back = %v", f.b.Version(), changes(p), f.notes, protects)
	}
	// The plan itself says so (its JSON and saved forms carry Held).
	inPlan := false // the record of users is shared with other tests: this test's user only
	for _, h := range p.Held {
		inPlan = inPlan || h.Name == name && h.Cause == plan.HeldProtectedUser
	}
	if inPlan != protects {
		t.Errorf("RabbitMQ %s: held back %+v: want the user's update held back for its protected tag = %v", f.b.Version(), p.Held, protects)
	}
	k.apply("{}\n", top) // completes either way
}
