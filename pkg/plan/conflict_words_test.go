package plan

import (
	"strings"
	"testing"

	"github.com/mqctl/mqctl/pkg/kind"
)

// A refusal's first line says what the other owners' records list of
// the objects in conflict: what they manage, what they only keep (on the
// broker before mqctl, named by their file), or both.
func TestConflictErrorSaysManagedOrKept(t *testing.T) {
	managed := Conflict{ObjectRef: ObjectRef{Kind: kind.Queue, Vhost: "v", Name: "q"}, Owner: "a", Owners: []string{"b"}}
	kept := Conflict{ObjectRef: ObjectRef{Kind: kind.User, Name: "app"}, Owner: "a", Owners: []string{"b"}, Kept: true}
	for _, tc := range []struct {
		name      string
		conflicts []Conflict
		want      string
	}{
		{"managed", []Conflict{managed}, "1 change of the file would change or delete what another owner manages:"},
		{"kept", []Conflict{kept}, "1 change of the file would change or delete what another owner keeps:"},
		{"both", []Conflict{managed, kept}, "2 changes of the file would change or delete what another owner manages or keeps:"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := (&Plan{Conflicts: tc.conflicts}).ConflictError()
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("ConflictError() = %v, want %q", err, tc.want)
			}
		})
	}
}

// A shared object (both owners' records list it) that the other owner
// only keeps is not said to be managed by both.
func TestSharedKeptConflictSaysKept(t *testing.T) {
	c := Conflict{ObjectRef: ObjectRef{Kind: kind.User, Name: "app"}, Owner: "a", Owners: []string{"b"}, Shared: true, Kept: true,
		Fields: []FieldChange{{Field: "tags", Before: "[]", After: "[management]"}}}
	reason, _ := c.text()
	for _, want := range []string{`is shared: "b" keeps it (it was on the broker before mqctl, and their file names it), and this file's owner ("a") lists it too`, "another owner's file keeps"} {
		if !strings.Contains(reason, want) {
			t.Errorf("text() = %q, want %q", reason, want)
		}
	}
	if strings.Contains(reason, "manage it") || strings.Contains(reason, "manages") {
		t.Errorf("text() = %q says managed", reason)
	}
}

// A held-back change names its object as plans do: a vhost's limits are
// named after the vhost, said once (it read `vhost_limits "v" in vhost
// "v"`); a queue names its vhost.
func TestHeldNamesTheVhostOnce(t *testing.T) {
	p := &Plan{Held: []Held{
		{ObjectRef: ObjectRef{Kind: kind.VhostLimits, Vhost: "v", Name: "v"}, Action: Update, Cause: "unread", Reason: "not read"},
		{ObjectRef: ObjectRef{Kind: kind.Queue, Vhost: "v", Name: "q"}, Action: Create, Cause: "unread", Reason: "not read"},
	}}
	var b strings.Builder
	if err := WriteText(&b, p, RenderOptions{}); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	if strings.Contains(out, `"v" in vhost "v"`) || !strings.Contains(out, `queue "q" in vhost "v"`) {
		t.Errorf("held changes:\n%s", out)
	}
}

// The take-over line says what becomes of each object the other owner's
// records list: the managed ones now belong to the file's owner, the kept
// ones (on the broker before mqctl) are now kept by it, never mqctl's. It
// said "now belong to" of kept objects too.
func TestTakeOverLineSaysManagedOrKept(t *testing.T) {
	for _, tc := range []struct {
		name          string
		take          TakeOver
		want, notWant string
	}{
		{"managed only", TakeOver{From: "", Objects: 5}, `the 5 objects that the ownership records of the default owner list in these vhosts now belong to owner "team-a": apply merges`, "kept"},
		{"kept only", TakeOver{From: "", Objects: 1, Kept: 1}, `the 1 object that the ownership records of the default owner list in these vhosts, kept (on the broker before mqctl: never mqctl's, and never deleted by it), is now kept by owner "team-a": apply merges`, "belong"},
		{"kept only, several", TakeOver{From: "old", Objects: 2, Kept: 2, Users: true}, `the 2 objects that the ownership records of "old" list in these vhosts, and its record of the broker's users, kept (on the broker before mqctl: never mqctl's, and never deleted by it), are now kept by owner "team-a"`, "belong"},
		{"both", TakeOver{From: "", Objects: 3, Kept: 1}, `the 3 objects that the ownership records of the default owner list in these vhosts: the 2 managed ones now belong to owner "team-a", and the 1 kept (on the broker before mqctl: never mqctl's, and never deleted by it) is now kept by owner "team-a"; apply merges`, ""},
		{"both, one managed", TakeOver{From: "", Objects: 3, Kept: 2}, `the 1 managed one now belongs to owner "team-a", and the 2 kept (on the broker before mqctl: never mqctl's, and never deleted by it) are now kept by`, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			take := tc.take
			got := takeOverLine(&Plan{Owner: "team-a", TakeOver: &take}, func(_, s string) string { return s })
			if !strings.Contains(got, tc.want) || tc.notWant != "" && strings.Contains(got, tc.notWant) {
				t.Errorf("got\n  %s\nwant it to say\n  %s\nand not %q", got, tc.want, tc.notWant)
			}
		})
	}
}
