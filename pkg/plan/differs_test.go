package plan

import (
	"bytes"
	"strings"
	"testing"

	"github.com/mqctl/mqctl/pkg/kind"
)

// TestPlanDiffers: a plan differs from the file (plan --detailed-exitcode
// exits 2) when apply changes an object or only mqctl's record, and when
// every change it found is held back, for each cause: the broker does not
// match the file then, though apply makes none of them. Before, a plan of
// held changes only exited 0, as a broker that matches the file does. The
// text's first line and the JSON plan agree with it.
func TestPlanDiffers(t *testing.T) {
	queue := ObjectRef{Kind: kind.Queue, Vhost: "v", Name: "q"}
	held := func(cause string, a Action) []Held {
		return []Held{{ObjectRef: queue, Action: a, Cause: cause, Reason: "why"}}
	}
	tests := []struct {
		name  string
		plan  Plan
		want  bool
		first string // the text's first line
	}{
		{"matches", Plan{}, false, "No changes. The broker matches the file."},
		{"a change", Plan{Changes: []Change{{Action: Create, Kind: kind.Queue, Vhost: "v", Name: "q"}}}, true, "mqctl will perform these actions:"},
		{"only the record", Plan{Adopt: []ObjectRef{queue}}, true, "Only mqctl's ownership record changes: apply updates it, and changes no object on the broker (below)."},
		{"unseen vhost", Plan{Held: held(HeldUnseenVhost, Create)}, true, "Nothing for apply to change: the broker differs from the file, but mqctl holds back the change (below)."},
		{"node down", Plan{Held: held(HeldNodeDown, Replace)}, true, "Nothing for apply to change: the broker differs from the file, but mqctl holds back the change (below)."},
		{"own user", Plan{Held: []Held{{ObjectRef: ObjectRef{Kind: kind.User, Name: "deploy"}, Action: Update, Cause: HeldOwnUser, Reason: "why"}}}, true, "Nothing for apply to change: the broker differs from the file, but mqctl holds back the change (below)."},
		{"internal owner", Plan{Held: held(HeldInternalOwner, Delete)}, true, "Nothing for apply to change: the broker differs from the file, but mqctl holds back the change (below)."},
		{"protected user", Plan{Held: []Held{{ObjectRef: ObjectRef{Kind: kind.User, Name: "ops"}, Action: Delete, Cause: HeldProtectedUser, Reason: "why"}}}, true, "Nothing for apply to change: the broker differs from the file, but mqctl holds back the change (below)."},
		{"finished shovel", Plan{Held: []Held{{ObjectRef: ObjectRef{Kind: kind.Shovel, Vhost: "v", Name: "s"}, Action: Create, Cause: HeldFinished, Reason: "why"}}}, true, "Nothing for apply to change: the broker differs from the file, but mqctl holds back the change (below)."},
		{"two held", Plan{Held: append(held(HeldNodeDown, Delete), held(HeldNodeDown, Update)...)}, true, "Nothing for apply to change: the broker differs from the file, but mqctl holds back all 2 changes (below)."},
		{"unread, nothing held", Plan{Unread: []Unread{{Vhost: "v", Kind: kind.Policy, Reason: "forbidden"}}}, false, "No changes. What mqctl could read matches the file (see below for what it could not)."},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := tt.plan
			if got := p.Differs(); got != tt.want {
				t.Errorf("Differs() = %v, want %v", got, tt.want)
			}
			var buf bytes.Buffer
			if err := WriteText(&buf, &p, RenderOptions{}); err != nil {
				t.Fatal(err)
			}
			if first, _, _ := strings.Cut(buf.String(), "\n"); first != tt.first {
				t.Errorf("first line %q, want %q", first, tt.first)
			}
			// The JSON plan carries what the text does: read back, it
			// differs as the plan does.
			buf.Reset()
			if err := WriteJSON(&buf, &p); err != nil {
				t.Fatal(err)
			}
			back, err := ReadJSON(&buf)
			if err != nil {
				t.Fatal(err)
			}
			if got := back.Differs(); got != tt.want {
				t.Errorf("read back from the JSON plan, Differs() = %v, want %v", got, tt.want)
			}
		})
	}
}
