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
