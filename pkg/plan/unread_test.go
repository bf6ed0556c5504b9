package plan

import (
	"bytes"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/mqctl/mqctl/pkg/kind"
	"github.com/mqctl/mqctl/pkg/topology"
)

func pol(name string) *topology.Policy {
	return &topology.Policy{Name: name, Pattern: "^" + name, ApplyTo: "queues", Definition: topology.Args{"max-length": int64(10)}}
}

// A kind the broker would not let mqctl read is unknown, not empty: the
// plan neither creates the file's objects of that kind nor deletes the
// recorded ones, keeps a vhost that left the file, and says so.
func TestDiffPlansNothingForUnreadKinds(t *testing.T) {
	reason := `user "dev" may not list them (needs the policymaker or administrator tag)`
	unread := map[string][]Unread{"app": {{Vhost: "app", Kind: kind.Policy, Reason: reason}}}
	managed := map[ObjectRef]bool{
		{Kind: kind.Vhost, Vhost: "app", Name: "app"}:          true,
		{Kind: kind.Policy, Vhost: "app", Name: "old"}:         true,
		{Kind: kind.Queue, Vhost: "app", Name: "gone"}:         true,
		{Kind: kind.OperatorPolicy, Vhost: "app", Name: "cap"}: true,
	}
	desired := vh("app", func(v *topology.Vhost) {
		v.Queues["work"] = q("work", nil)
		v.Policies["new"] = pol("new")
		v.Policies["other"] = pol("other")
	})
	current := vh("app", func(v *topology.Vhost) {
		v.Queues["gone"] = q("gone", nil)
		v.OperatorPolicies["cap"] = pol("cap")
	})

	t.Run("read", func(t *testing.T) {
		p := Diff(desired, Current{Live: topology.Live{State: current}, Managed: ManagedOf(RecordedOf(current, managed))})
		want := []row{{Delete, kind.Queue, "gone"}, {Create, kind.Queue, "work"}, {Create, kind.Policy, "new"}, {Create, kind.Policy, "other"}, {Delete, kind.OperatorPolicy, "cap"}}
		if diff := cmp.Diff(want, rows(p)); diff != "" {
			t.Errorf("every kind read (-want +got):\n%s", diff)
		}
		if len(p.Unread) != 0 {
			t.Errorf("Unread = %v, want none", p.Unread)
		}
	})
	t.Run("policies unread", func(t *testing.T) {
		p := Diff(desired, Current{Live: topology.Live{State: current, Unread: unread}, Managed: ManagedOf(RecordedOf(current, managed))})
		// The recorded policy "old" is absent from the state read: read, it
		// would be deleted; unread, it is left alone.
		want := []row{{Delete, kind.Queue, "gone"}, {Create, kind.Queue, "work"}, {Delete, kind.OperatorPolicy, "cap"}}
		if diff := cmp.Diff(want, rows(p)); diff != "" {
			t.Errorf("policies unread (-want +got):\n%s", diff)
		}
		wantUnread := []Unread{{Vhost: "app", Kind: kind.Policy, Reason: reason, Declared: 2}}
		if diff := cmp.Diff(wantUnread, p.Unread); diff != "" {
			t.Errorf("Unread (-want +got):\n%s", diff)
		}
		var text bytes.Buffer
		if err := WriteText(&text, p, RenderOptions{}); err != nil {
			t.Fatal(err)
		}
		wantLine := `  policies in vhost "app" (2 in the file left out): ` + reason + "\n"
		if !strings.Contains(text.String(), "Not read, so not planned:") || !strings.Contains(text.String(), wantLine) {
			t.Errorf("text plan does not say what was not read; want a line %q in:\n%s", wantLine, text.String())
		}
		var js bytes.Buffer
		if err := WriteJSON(&js, p); err != nil {
			t.Fatal(err)
		}
		back, err := ReadJSON(&js)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(wantUnread, back.Unread); diff != "" {
			t.Errorf("JSON plan round trip of unread (-want +got):\n%s", diff)
		}
		var saved bytes.Buffer
		if err := WriteSaved(&saved, p); err != nil {
			t.Fatal(err)
		}
		back, err = ReadSaved(&saved, "plan.out")
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(wantUnread, back.Unread); diff != "" {
			t.Errorf("saved plan round trip of unread (-want +got):\n%s", diff)
		}
	})
	t.Run("nothing else to do", func(t *testing.T) {
		d := vh("app", func(v *topology.Vhost) { v.Policies["new"] = pol("new") })
		p := Diff(d, Current{Live: topology.Live{State: vh("app", nil), Unread: unread}})
		if !p.Empty() {
			t.Fatalf("plan = %v, want no changes", rows(p))
		}
		var text bytes.Buffer
		if err := WriteText(&text, p, RenderOptions{}); err != nil {
			t.Fatal(err)
		}
		if strings.Contains(text.String(), "The broker matches the file") {
			t.Errorf("an empty plan with unread kinds claims the broker matches the file:\n%s", text.String())
		}
	})
	t.Run("vhost left the file", func(t *testing.T) {
		cur := vh("app", nil)
		read := Diff(topology.New(), Current{Live: topology.Live{State: cur}, Managed: ManagedOf(RecordedOf(cur, map[ObjectRef]bool{{Kind: kind.Vhost, Vhost: "app", Name: "app"}: true}))})
		if diff := cmp.Diff([]row{{Delete, kind.Vhost, "app"}}, rows(read)); diff != "" {
			t.Errorf("every kind read: the vhost mqctl made is deleted (-want +got):\n%s", diff)
		}
		p := Diff(topology.New(), Current{Live: topology.Live{State: cur, Unread: unread}, Managed: ManagedOf(RecordedOf(cur, map[ObjectRef]bool{{Kind: kind.Vhost, Vhost: "app", Name: "app"}: true}))})
		if !p.Empty() {
			t.Errorf("policies unread: plan = %v, want the vhost kept (its policies may be someone else's)", rows(p))
		}
	})
}

// An unread kind is listed only when it matters: the file declares some,
// or mqctl's record says it made some there.
func TestUnreadListedOnlyWhenItMatters(t *testing.T) {
	unread := map[string][]Unread{"app": {{Vhost: "app", Kind: kind.OperatorPolicy, Reason: "refused"}}}
	d := vh("app", func(v *topology.Vhost) { v.Queues["q"] = q("q", nil) })
	cur := vh("app", func(v *topology.Vhost) { v.Queues["q"] = q("q", nil) })
	if p := Diff(d, Current{Live: topology.Live{State: cur, Unread: unread}}); !p.Empty() || len(p.Unread) != 0 {
		t.Errorf("nothing declared, nothing recorded: changes %v, unread %v; want neither", rows(p), p.Unread)
	}
	managed := map[ObjectRef]bool{{Kind: kind.OperatorPolicy, Vhost: "app", Name: "cap"}: true}
	if p := Diff(d, Current{Live: topology.Live{State: cur, Unread: unread}, Managed: ManagedOf(RecordedOf(cur, managed))}); !p.Empty() || len(p.Unread) != 1 {
		t.Errorf("recorded by mqctl: changes %v, unread %v; want the kind listed, nothing changed", rows(p), p.Unread)
	}
}
