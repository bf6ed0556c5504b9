package engine_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/mqctl/mqctl/internal/testbroker"
	"github.com/mqctl/mqctl/pkg/engine"
	"github.com/mqctl/mqctl/pkg/kind"
	"github.com/mqctl/mqctl/pkg/ownership"
	"github.com/mqctl/mqctl/pkg/plan"
)

// TestTwoOwnersKeepAUser: two teams' files (each with its own owner:)
// declare the same user, made by hand before mqctl. Neither adopts it (it
// is never deleted), but each owner's record of the users lists it as
// kept, so the other team's plan sees it: declared alike it is shared, and
// a file that would change it is refused before anything changes, naming
// the owner that keeps it. Before, neither record listed it, and each
// team's apply changed it to its own file's settings without a word (tags
// management, then monitoring, then management again: 4.3.6).
func TestTwoOwnersKeepAUser(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.b.UsersSection(t)
	ctx := context.Background()
	u := testbroker.Name(t, "mqctl-kept")
	suffix := strings.ToLower(strings.TrimPrefix(u[strings.LastIndexByte(u, '-'):], "-"))
	teamA, teamB := "kept-a-"+suffix, "kept-b-"+suffix
	t.Cleanup(func() {
		_ = f.c.DeleteJSON(context.Background(), "delete test user", "", "users", u)
		for _, o := range []string{teamA, teamB} {
			_ = f.c.DeleteJSON(context.Background(), "delete a test record", "", "global-parameters", ownership.GlobalParameterOf(o))
		}
	})
	hash := sha512Hash("pw-kept")
	putUserHash(t, f.b, u, hash, "management")
	file := func(owner, user string) string {
		return fmt.Sprintf("version: 1\nowner: %s\nvhosts:\n  ${VHOST}: {}\nusers:%s\n", owner, user)
	}
	declared := func(tags string) string {
		return fmt.Sprintf("\n  %s: { password_hash: %q, hashing_algorithm: rabbit_password_hashing_sha512, tags: [%s] }", u, hash, tags)
	}
	ref := plan.ObjectRef{Kind: kind.User, Name: u}
	apply := func(src string) {
		t.Helper()
		if _, err := f.eng.Apply(ctx, engine.ApplyInput{Desired: f.desired(src)}, engine.ApplyOptions{}); err != nil {
			t.Fatalf("apply: %v", err)
		}
	}

	// team-a keeps it: not adopted, listed as kept.
	p := f.plan(f.desired(file(teamA, declared("management"))))
	if !p.Empty() || len(p.Adopt) != 0 || !p.KeptChanged || len(p.Kept) != 1 || p.Kept[0] != ref {
		t.Fatalf("team-a's plan: changes %v, adopt %v, kept %v (changed %v): want %v kept", changes(p), p.Adopt, p.Kept, p.KeptChanged, ref)
	}
	apply(file(teamA, declared("management")))
	if p := f.plan(f.desired(file(teamA, declared("management")))); !p.Empty() || p.Records() {
		t.Errorf("team-a's second plan: %v, record changes %v", changes(p), p.RecordChanges())
	}

	// team-b's file would change it: refused, naming team-a.
	_, err := f.eng.Plan(ctx, f.desired(file(teamB, declared("monitoring"))), engine.PlanOptions{})
	if err == nil || !strings.Contains(err.Error(), fmt.Sprintf("user %q is kept by %q", u, teamA)) || !strings.Contains(err.Error(), "nothing was changed") {
		t.Errorf("team-b's plan changing team-a's kept user: %v", err)
	}
	if _, err := f.eng.Apply(ctx, engine.ApplyInput{Desired: f.desired(file(teamB, declared("monitoring")))}, engine.ApplyOptions{}); err == nil {
		t.Error("team-b's apply changing team-a's kept user was not refused")
	}

	// team-b declares it alike: shared, kept by both, adopted by neither.
	p = f.plan(f.desired(file(teamB, declared("management"))))
	i := slices.IndexFunc(p.Others, func(o plan.OtherOwned) bool { return o.ObjectRef == ref })
	if !p.Empty() || len(p.Adopt) != 0 || i < 0 || !p.Others[i].Shared || !slices.Equal(p.Others[i].Owners, []string{teamA}) || !p.KeptChanged {
		t.Errorf("team-b's plan declaring it alike: changes %v, adopt %v, others %+v, kept %v", changes(p), p.Adopt, p.Others, p.Kept)
	}
	apply(file(teamB, declared("management")))
	if p := f.plan(f.desired(file(teamB, declared("management")))); !p.Empty() || p.Records() {
		t.Errorf("team-b's second plan: %v, record changes %v", changes(p), p.RecordChanges())
	}

	// team-a drops it: no delete (it was never mqctl's), and it stays
	// kept by team-b, whose plan is still empty.
	p = f.plan(f.desired(file(teamA, " {}")))
	if !p.Empty() {
		t.Errorf("team-a dropping the user: %v", changes(p))
	}
	apply(file(teamA, " {}"))
	if _, err := f.b.RH.GetUser(u); err != nil {
		t.Errorf("the kept user is gone: %v", err)
	}
	if p := f.plan(f.desired(file(teamB, declared("management")))); !p.Empty() || p.Records() {
		t.Errorf("team-b's plan after team-a dropped the user: %v, record changes %v", changes(p), p.RecordChanges())
	}
	// team-b may change it now: no other owner keeps it.
	p = f.plan(f.desired(file(teamB, declared("monitoring"))))
	if got := changes(p); len(got) != 1 || !strings.HasPrefix(got[0], "update user") {
		t.Errorf("team-b changing the user once team-a dropped it: %v", got)
	}
}

// TestTwoOwnersKeepAShovel: as TestTwoOwnersKeepAUser, for an object of a
// vhost's record: a shovel made by hand that two teams' files name. Before,
// team-b's plan changed team-a's kept shovel's destination without a word
// (4.3.6).
func TestTwoOwnersKeepAShovel(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ctx := context.Background()
	putShovel(t, f, f.vhost, "t.s", "t.dst")
	file := func(owner, dest string) string {
		src := fmt.Sprintf("version: 1\nowner: %s\nvhosts:\n  ${VHOST}:\n    queues: { t.src: {}, t.dst: {}, t.other: {} }\n", owner)
		if dest != "" {
			src += fmt.Sprintf("    shovels:\n      t.s: { src-uri: \"amqp:///${VHOST}\", src-queue: t.src, dest-uri: \"amqp:///${VHOST}\", dest-queue: %s }\n", dest)
		}
		return src
	}
	ref := plan.ObjectRef{Kind: kind.Shovel, Vhost: f.vhost, Name: "t.s"}
	apply := func(src string) {
		t.Helper()
		if _, err := f.eng.Apply(ctx, engine.ApplyInput{Desired: f.desired(src)}, engine.ApplyOptions{}); err != nil {
			t.Fatalf("apply: %v", err)
		}
	}
	p := f.plan(f.desired(file("team-a", "t.dst")))
	if len(p.Adopt) != 2 || !p.KeptChanged || !slices.Equal(p.Kept, []plan.ObjectRef{ref}) {
		t.Fatalf("team-a's plan: adopt %v, kept %v (changed %v): want the queues adopted, the shovel kept", p.Adopt, p.Kept, p.KeptChanged)
	}
	apply(file("team-a", "t.dst"))
	if p := f.plan(f.desired(file("team-a", "t.dst"))); !p.Empty() || p.Records() {
		t.Errorf("team-a's second plan: %v, record changes %v", changes(p), p.RecordChanges())
	}
	_, err := f.eng.Plan(ctx, f.desired(file("team-b", "t.other")), engine.PlanOptions{})
	if err == nil || !strings.Contains(err.Error(), fmt.Sprintf("shovel %q in vhost %q is kept by %q", "t.s", f.vhost, "team-a")) {
		t.Errorf("team-b's plan changing team-a's kept shovel: %v", err)
	}
	apply(file("team-b", "t.dst"))
	if p := f.plan(f.desired(file("team-b", "t.dst"))); !p.Empty() || p.Records() {
		t.Errorf("team-b's second plan: %v, record changes %v", changes(p), p.RecordChanges())
	}
	// team-a drops it: left on the broker, still kept by team-b.
	if p := f.plan(f.desired(file("team-a", ""))); !p.Empty() {
		t.Errorf("team-a dropping the shovel: %v", changes(p))
	}
	apply(file("team-a", ""))
	l, err := f.eng.ReadLive(ctx, []string{f.vhost})
	if err != nil {
		t.Fatal(err)
	}
	if l.State().Vhosts[f.vhost].Items.Get(kind.Shovel, "t.s") == nil {
		t.Error("the kept shovel is gone")
	}
	if p := f.plan(f.desired(file("team-b", "t.dst"))); !p.Empty() || p.Records() {
		t.Errorf("team-b's plan after team-a dropped the shovel: %v, record changes %v", changes(p), p.RecordChanges())
	}
}

// TestShovelAnOlderMqctlAdopted: a shovel made by hand that an mqctl
// before 9403eb4 adopted (its record lists it, as it listed those it
// created, with no word of which) is not deleted by a file that drops it,
// unless asked (--delete-changed): mqctl cannot tell whether it created
// it. Before, it was deleted.
func TestShovelAnOlderMqctlAdopted(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ctx := context.Background()
	putShovel(t, f, f.vhost, "t.s", "t.dst")
	l, err := f.eng.ReadLive(ctx, []string{f.vhost})
	if err != nil {
		t.Fatal(err)
	}
	it := l.State().Vhosts[f.vhost].Items.Get(kind.Shovel, "t.s")
	if it == nil {
		t.Fatal("the shovel made by hand is not read")
	}
	ref := plan.ObjectRef{Kind: kind.Shovel, Vhost: f.vhost, Name: "t.s"}
	if err := f.c.DeclareExchange(ctx, f.vhost, ownership.Exchange(f.vhost, 1, map[plan.ObjectRef]plan.Print{ref: plan.ItemPrint(it)})); err != nil {
		t.Fatal(err)
	}
	dropped := f.desired("version: 1\nvhosts:\n  ${VHOST}:\n    queues: { t.src: {}, t.dst: {} }\n")
	p := f.plan(dropped)
	if got := changes(p); len(got) != 0 || len(p.ChangedOutside) != 1 || p.ChangedOutside[0].ObjectRef != ref {
		t.Errorf("the file dropping the shovel: %v, changed outside %v: want no delete, the shovel changed outside", got, p.ChangedOutside)
	}
	res, err := f.eng.Plan(ctx, dropped, engine.PlanOptions{DeleteChanged: true})
	if err != nil {
		t.Fatal(err)
	}
	if got := changes(res.Plan); !slices.Equal(got, []string{"delete shovel t.s"}) {
		t.Errorf("with --delete-changed: %v, want the shovel deleted", got)
	}
}
