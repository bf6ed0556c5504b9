package engine_test

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/mqctl/mqctl/internal/testbroker"
	"github.com/mqctl/mqctl/pkg/broker"
	"github.com/mqctl/mqctl/pkg/engine"
	"github.com/mqctl/mqctl/pkg/kind"
	"github.com/mqctl/mqctl/pkg/loader"
	"github.com/mqctl/mqctl/pkg/plan"
)

// TestOwnUserIsHeldBack: a file that drops the user mqctl is connected as
// would delete it and its permissions, locking this apply and every later
// one out. The plan holds those changes back, each with why, tells the
// user, and an apply completes without them: the user can still log in.
func TestOwnUserIsHeldBack(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.b.UsersSection(t)
	ctx := context.Background()
	// mqctl made the user (one that was there before mqctl is never
	// recorded, so never deleted: TestUsersTable), with its permissions.
	name, password := testbroker.Name(t, "mqctl-test-user"), "pw-"+testbroker.Name(t, "x")
	t.Cleanup(func() { _ = f.c.DeleteJSON(context.Background(), "delete test user", "", "users", name) })
	made, err := loader.LoadBytes("topology.yaml", []byte("version: 1\nvhosts:\n  ${VHOST}: {}\nusers:\n  ${U}:\n    password: ${PW}\n    tags: [administrator]\n    permissions:\n      ${VHOST}: { configure: \".*\", write: \".*\", read: \".*\" }\n"),
		loader.Options{LookupEnv: func(k string) (string, bool) {
			v, ok := map[string]string{"VHOST": f.vhost, "U": name, "PW": password}[k]
			return v, ok
		}})
	if err != nil {
		t.Fatal(err)
	}
	made.Vhosts[f.vhost].Description = "mqctl test " + t.Name()
	if _, err := f.eng.Apply(ctx, engine.ApplyInput{Desired: made}, engine.ApplyOptions{}); err != nil {
		t.Fatal(err)
	}
	// An apply that writes users takes the default vhost's lock.
	f.b.Permit(t, name, "/")
	c, err := broker.Connect(ctx, broker.Config{Server: f.b.URL, Username: name, Password: password})
	if err != nil {
		t.Fatal(err)
	}
	var notes []string
	eng := engine.New(c, engine.Options{Note: func(n string) { notes = append(notes, n) }})
	load := func(users string) *engine.ApplyInput {
		t.Helper()
		env := func(k string) (string, bool) {
			switch k {
			case "VHOST":
				return f.vhost, true
			case "ME_PASSWORD":
				return password, true
			case "ME_NEW_PASSWORD":
				return password + "-new", true
			}
			return "", false
		}
		top, err := loader.LoadBytes("topology.yaml", []byte("version: 1\nvhosts:\n  ${VHOST}: {}\nusers:\n"+users), loader.Options{LookupEnv: env})
		if err != nil {
			t.Fatal(err)
		}
		top.Vhosts[f.vhost].Description = "mqctl test " + t.Name()
		return &engine.ApplyInput{Desired: top}
	}
	// mqctl manages its own user, which it made, while the file names it.
	mine := "  " + name + ":\n    password: ${ME_PASSWORD}\n    tags: [administrator]\n    permissions:\n      ${VHOST}: { configure: \".*\", write: \".*\", read: \".*\" }\n"
	if _, err := eng.Apply(ctx, *load(mine), engine.ApplyOptions{}); err != nil {
		t.Fatal(err)
	}
	// The file changes it: a new password, the administrator tag and its
	// permissions taken away, a connection limit of 0 given. The first
	// write would lock the rest of the apply out (the next request's
	// password is the old one), the limit every later apply (its lock is
	// a connection); each change is held back, and the user keeps its
	// password, tags and access.
	changed := "  " + name + ":\n    password: ${ME_NEW_PASSWORD}\n    tags: [management]\n    limits: { max-connections: 0 }\n    permissions:\n      ${VHOST}: { configure: \"^$\", write: \"^$\", read: \"^$\" }\n"
	res, err := eng.Plan(ctx, load(changed).Desired, engine.PlanOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var heldChanges []string
	for _, c := range res.Plan.Changes {
		if c.Name == name {
			t.Errorf("the plan %s %s %q, the user mqctl is connected as", c.Action, c.Kind, c.Name)
		}
	}
	for _, h := range res.Plan.Held {
		if h.Name == name && h.Cause == plan.HeldOwnUser && (h.Action == plan.Update || h.Kind == kind.UserLimits) && strings.Contains(h.Reason, "mqctl is connected as that user, and never changes or deletes it") {
			heldChanges = append(heldChanges, string(h.Kind))
		}
	}
	slices.Sort(heldChanges)
	if strings.Join(heldChanges, ",") != "permission,user,user_limits" {
		t.Errorf("held back %q of the changes, want the user, its limits and its permission; held: %+v", heldChanges, res.Plan.Held)
	}
	if _, err := eng.Apply(ctx, *load(changed), engine.ApplyOptions{}); err != nil {
		t.Fatalf("apply without the changes held back: %v", err)
	}
	if c, err := broker.Connect(ctx, broker.Config{Server: f.b.URL, Username: name, Password: password}); err != nil {
		t.Errorf("after the apply the user cannot log in with its password: %v", err)
	} else if !c.IsAdmin() {
		t.Errorf("after the apply the user is no longer an administrator")
	}
	notes = nil

	// The file drops it.
	res, err = eng.Plan(ctx, load(" {}\n").Desired, engine.PlanOptions{})
	if err != nil {
		t.Fatal(err)
	}
	p := res.Plan
	for _, c := range p.Changes {
		if c.Name == name {
			t.Errorf("the plan %s %s %q, the user mqctl is connected as", c.Action, c.Kind, c.Name)
		}
	}
	// The record of users is the broker's, shared with other tests: only
	// this test's user is looked at.
	var held []string
	for _, h := range p.Held {
		if h.Name != name && h.Cause != plan.HeldOwnUser {
			continue
		}
		if h.Cause != plan.HeldOwnUser || h.Name != name || h.Action != plan.Delete || !strings.Contains(h.Reason, "mqctl is connected as that user") {
			t.Errorf("held back: %+v", h)
		}
		held = append(held, string(h.Kind))
	}
	if strings.Join(held, ",") != "user,permission" && strings.Join(held, ",") != "permission,user" {
		t.Errorf("held back %q, want the user and its permission", held)
	}
	told := 0
	for _, n := range notes {
		if strings.Contains(n, "is left alone: mqctl is connected as that user") {
			told++
		}
	}
	if told != len(held) {
		t.Errorf("notes %q: want one for each change held back (%d)", notes, len(held))
	}
	if _, err := eng.Apply(ctx, *load(" {}\n"), engine.ApplyOptions{}); err != nil {
		t.Fatalf("apply without the changes held back: %v", err)
	}
	if _, err := broker.Connect(ctx, broker.Config{Server: f.b.URL, Username: name, Password: password}); err != nil {
		t.Errorf("after the apply the user cannot log in: %v", err)
	}
}
