package plan

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/mqctl/mqctl/pkg/kind"
	pj "github.com/mqctl/mqctl/pkg/planjson"
	"github.com/mqctl/mqctl/pkg/rmqversion"
	"github.com/mqctl/mqctl/pkg/topology"
)

// textTemplates are the lines of the text view that carry no value of the
// JSON plan's own (a header, a count, a fixed piece of advice), each with
// the part of the JSON plan that tells the same: present when the line is.
var textTemplates = []struct {
	line *regexp.Regexp
	in   func(d *pj.Plan, line string) bool
}{
	{regexp.MustCompile(`^No changes\. `), func(d *pj.Plan, _ string) bool { return len(d.Changes) == 0 && len(d.Records) == 0 }},
	{regexp.MustCompile(`^Nothing for apply to change: the broker differs from the file, but mqctl holds back (the change|all (\d+) changes) `), func(d *pj.Plan, line string) bool {
		n := "the change"
		if len(d.Held) != 1 {
			n = fmt.Sprintf("all %d changes", len(d.Held))
		}
		return len(d.Changes) == 0 && len(d.Records) == 0 && strings.Contains(line, "holds back "+n+" ")
	}},
	{regexp.MustCompile(`^Only mqctl's ownership record changes: `), func(d *pj.Plan, _ string) bool { return len(d.Changes) == 0 && len(d.Records) > 0 }},
	{regexp.MustCompile(`^mqctl will perform these actions:$`), func(d *pj.Plan, _ string) bool { return len(d.Changes) > 0 }},
	{regexp.MustCompile(`^# vhost "(.*)"$`), func(d *pj.Plan, _ string) bool { return len(d.Changes) > 0 }},
	{regexp.MustCompile(`^Plan: (\d+) to create, (\d+) to update, (\d+) to replace, (\d+) to delete\.$`), func(d *pj.Plan, line string) bool {
		s := d.Summary
		return line == fmt.Sprintf("Plan: %d to create, %d to update, %d to replace, %d to delete.", s.Create, s.Update, s.Replace, s.Delete)
	}},
	{regexp.MustCompile(`^\d+ unmanaged objects? on the broker `), func(d *pj.Plan, line string) bool {
		return strings.HasPrefix(line, fmt.Sprintf("%d unmanaged", len(d.Unmanaged)))
	}},
	{regexp.MustCompile(`^Held back \(\d+ changes?\): `), func(d *pj.Plan, line string) bool {
		return strings.HasPrefix(line, fmt.Sprintf("Held back (%d change", len(d.Held)))
	}},
	{regexp.MustCompile(`^\d+ objects? of the file (was|were) on the broker before mqctl\.`), func(d *pj.Plan, line string) bool {
		return strings.HasPrefix(line, fmt.Sprintf("%d object", len(d.Preexisting)))
	}},
	{regexp.MustCompile(`^and \d+ more \(--list-unmanaged lists them all, and so does the JSON plan's preexisting\)$`), func(d *pj.Plan, _ string) bool { return len(d.Preexisting) > preexistingShown }},
	{regexp.MustCompile(`^Managed once, changed outside mqctl`), func(d *pj.Plan, _ string) bool { return len(d.ChangedOutside) > 0 }},
	{regexp.MustCompile(`^To keep managing one, name it in the file again`), func(d *pj.Plan, _ string) bool { return len(d.ChangedOutside) > 0 }},
	{regexp.MustCompile(`^\d+ objects? managed by other owners \(`), func(d *pj.Plan, _ string) bool { return len(d.OtherOwners) > 0 }},
	{regexp.MustCompile(`^\d+ objects? shared with other owners\.`), func(d *pj.Plan, _ string) bool { return len(d.OtherOwners) > 0 }},
	{regexp.MustCompile(`^Not read, so not planned: `), func(d *pj.Plan, _ string) bool { return len(d.Unread) > 0 }},
	{regexp.MustCompile(`^Preflight: `), func(d *pj.Plan, _ string) bool { return d.Preflight != nil }},
	{regexp.MustCompile(`^plan refused, nothing was changed: `), func(d *pj.Plan, _ string) bool { return len(d.Refusals) > 0 }},
}

// textView is what a person is told of plan p: the notes (on stderr as
// they come), the text view, and a refused plan's error (stderr).
func textView(t *testing.T, p *Plan, refused error) string {
	t.Helper()
	var b bytes.Buffer
	for _, n := range p.Notes {
		b.WriteString(n + "\n")
	}
	if refused != nil {
		b.WriteString(refused.Error() + "\n")
		return b.String()
	}
	if err := WriteText(&b, p, RenderOptions{}); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// values are the JSON plan's strings that tell something in words (a
// reason, a fix, a note: 12 characters or more), and the objects it names
// as the text view names them.
func values(d *pj.Plan) (words, objects []string) {
	var walk func(v any)
	walk = func(v any) {
		switch v := v.(type) {
		case map[string]any:
			if k, ok := v["kind"].(string); ok {
				if n, ok := v["name"].(string); ok {
					objects = append(objects, k+" "+shownName(Kind(k), n))
				}
			}
			for _, e := range v {
				walk(e)
			}
		case []any:
			for _, e := range v {
				walk(e)
			}
		case string:
			if len(v) >= 12 {
				words = append(words, v)
			}
		}
	}
	data, _ := json.Marshal(d)
	var doc any
	_ = json.Unmarshal(data, &doc)
	walk(doc)
	return words, objects
}

// TestTextHasJSONCounterpart: every line the text view of a plan tells a
// person (its notes, held-back changes, other owners, take-over, record
// changes, conflicts and other refusals, unread kinds) has its
// counterpart in the JSON plan, and every reason, fix and note of the
// JSON plan is in the text: a line added to one view without the other
// fails here.
func TestTextHasJSONCounterpart(t *testing.T) {
	t.Parallel()
	pos := func(line int) topology.Pos { return topology.Pos{File: "topology.yaml", Line: line, Col: 7} }
	ref := func(k Kind, name string) ObjectRef { return ObjectRef{Kind: k, Vhost: "v", Name: name} }
	queue := func(name string) Object {
		return Object(&topology.Queue{Name: name, Type: topology.QueueClassic, Durable: true})
	}
	conflicted := &Plan{Owner: "team-b", Vhosts: []string{"v"}, Conflicts: []Conflict{
		{ObjectRef: ref(kind.Queue, "a.q"), Owners: []string{"team-a"}, Owner: "team-b", Pos: pos(9),
			Fields: []FieldChange{{Field: "arguments.x-max-length", Before: nil, After: int64(10)}}},
		{ObjectRef: ref(kind.Exchange, "a.x"), Owners: []string{""}, Owner: "team-b", Deleted: true, Bindings: []string{"a.x -> queue a.q [a.#]"}},
	}}
	versionErr := &rmqversion.RefusalsError{Refusals: []rmqversion.Refusal{
		{Vhost: "v", Object: `queue "q"`, Key: "x-queue-version: 1", Pos: pos(4), Reason: "RabbitMQ 4.3 refuses it: unsupported queue version '1'", Fix: "remove it, or write x-queue-version: 2"},
		{Vhost: "v", Object: `binding from "t" to queue "q"`, Key: `routing key "#.a.#.b.#"`, Pos: pos(12), Reason: "RabbitMQ 4.3.5+ refuses a topic binding key with more than 2 '#' words", Fix: "write at most two '#' words"},
	}}
	for _, tc := range []struct {
		name string
		plan *Plan
		// refuse makes the plan's refusal, as the engine does.
		refuse func() error
		// want are what the text view must say (each of its lines is
		// then checked to have its counterpart in the JSON plan).
		want []string
	}{{
		name: "notes, held back, unread, changed outside, stale",
		plan: &Plan{Vhosts: []string{"v"},
			Changes:        []Change{{Action: Create, Kind: kind.Queue, Vhost: "v", Name: "fresh", After: queue("fresh"), Pos: pos(3)}},
			Notes:          []string{"the messages at stake shown come from the management API's statistics, which lag by a few seconds"},
			Held:           []Held{{ObjectRef: ref(kind.Queue, "down.q"), Action: Replace, Cause: HeldNodeDown, Reason: `queue "down.q" in vhost "v" lives on node rabbit@b, which is down`}},
			Unread:         []Unread{{Vhost: "v", Kind: kind.Policy, Reason: "user \"ci\" may not read policies (it needs the policymaker tag)", Declared: 2}},
			ChangedOutside: []Outside{{ObjectRef: ref(kind.Queue, "hand"), Reason: "it is no longer the queue mqctl wrote: declared again by hand since"}},
			Stale:          []ObjectRef{ref(kind.Exchange, "gone")},
			Unmanaged:      []ObjectRef{ref(kind.Queue, "theirs")},
		},
		want: []string{"the messages at stake shown come from", `lives on node rabbit@b, which is down`, `may not read policies`, "declared again by hand since", "1 object that no longer exists"},
	}, {
		name: "only held back",
		plan: &Plan{Vhosts: []string{"v"},
			Held: []Held{{ObjectRef: ObjectRef{Kind: kind.User, Name: "mqctl"}, Action: Delete, Cause: HeldOwnUser, Reason: "mqctl is connected as that user, and never changes or deletes it"}}},
		want: []string{"mqctl is connected as that user"},
	}, {
		name: "users and access that were on the broker before mqctl",
		plan: &Plan{Vhosts: []string{"v"},
			Preexisting: []ObjectRef{{Kind: kind.User, Name: "guest"}, {Kind: kind.Permission, Vhost: "v", Name: "guest"}}},
		want: []string{"2 objects of the file were on the broker before mqctl", "does not adopt them", `user "guest"`, `permission "guest" in vhost "v"`},
	}, {
		name: "users kept: listed in the record of the users, and the list emptied",
		plan: &Plan{Vhosts: []string{"v"}, Owner: "team-a",
			Preexisting: []ObjectRef{{Kind: kind.User, Name: "app"}}, Kept: []ObjectRef{{Kind: kind.User, Name: "app"}}, KeptChanged: true},
		want: []string{`as kept by "team-a"`, "are refused a change to it"},
	}, {
		name: "the list of users kept emptied",
		plan: &Plan{Vhosts: []string{"v"}, KeptChanged: true},
		want: []string{"that the file no longer names: apply drops them from the records, and leaves them on the broker"},
	}, {
		name: "vhost limits, a shovel and federation objects that were on the broker before mqctl",
		plan: &Plan{Vhosts: []string{"v"},
			Preexisting: []ObjectRef{ref(kind.VhostLimits, "v"), ref(kind.Shovel, "s"), ref(kind.FederationUpstream, "up"), ref(kind.FederationUpstreamSet, "set")}},
		want: []string{"4 objects of the file were on the broker before mqctl", "does not adopt them", "never lifts one when the file drops limits:, those it set itself included", `vhost_limits "v" in vhost "v"`, `shovel "s" in vhost "v"`},
	}, {
		name: "other owners, take-over, and a record-only apply",
		plan: &Plan{Vhosts: []string{"v"}, Owner: "team-a",
			Adopt:           []ObjectRef{ref(kind.Queue, "adopted")},
			Prints:          map[ObjectRef]Print{ref(kind.Queue, "adopted"): 1, ref(kind.Queue, "reprinted"): 2},
			Others:          []OtherOwned{{ObjectRef: ref(kind.Queue, "b.q"), Owners: []string{"team-b"}}, {ObjectRef: ref(kind.Queue, "s.q"), Owners: []string{""}, Shared: true}, {ObjectRef: ref(kind.Queue, "was.shared"), Owners: []string{"team-c"}, Recorded: true}},
			TakeOver:        &TakeOver{From: "", Objects: 5, Users: true},
			OutdatedRecords: []string{"", "v"},
		},
		want: []string{"Only mqctl's ownership record changes", `b.q`, `s.q`, `the 5 objects that the ownership records of the default owner`, "1 object of the file, as the broker holds it", "no longer names and other owners manage", `ownership records of the broker's users, vhost "v" are in an older format`},
	}, {
		name: "refused: another owner's objects",
		plan: conflicted,
		refuse: func() error {
			return Refuse(conflicted.ConflictError(), RefusedOwnership, &topology.Topology{Owner: "team-b", Vhosts: map[string]*topology.Vhost{"v": {}}}, conflicted.Conflicts)
		},
		want: []string{`queue "a.q" in vhost "v" is managed by "team-a"`, `arguments.x-max-length: (none) on the broker, 10 in this file`, `deleting it would delete binding a.x -> queue a.q [a.#], which the default owner manages`, "--take-over-from team-a", "--take-over-from default", "topology.yaml:9:7"},
	}, {
		name: "refused: what the version refuses",
		plan: &Plan{Vhosts: []string{"v"}},
		refuse: func() error {
			return Refuse(fmt.Errorf("plan refused, nothing was changed: %w", versionErr), RefusedVersion, &topology.Topology{Vhosts: map[string]*topology.Vhost{"v": {}}}, nil)
		},
		want: []string{"unsupported queue version '1'", "write x-queue-version: 2", "topology.yaml:4:7", `routing key "#.a.#.b.#"`, "at most two '#' words", "topology.yaml:12:7"},
	}, {
		name: "refused by the broker in the preflight",
		plan: &Plan{Vhosts: []string{"v"}, Changes: []Change{{Action: Create, Kind: kind.Queue, Vhost: "v", Name: "q", After: queue("q"), Pos: pos(5)}},
			Preflight: &Preflight{Vhost: "mqctl-preflight-1", Tried: 1, Objects: 1, Refusals: []Refusal{{Kind: kind.Queue, Reason: "PRECONDITION_FAILED - invalid arg 'x-overflow'", Objects: []ObjectAt{{ObjectRef: ref(kind.Queue, "q"), Pos: pos(5)}}}}}},
		want: []string{"PRECONDITION_FAILED - invalid arg 'x-overflow'", "topology.yaml:5:7"},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			p := tc.plan
			var refused error
			if tc.refuse != nil {
				refused = tc.refuse()
				var re *RefusedError
				if !errors.As(refused, &re) {
					t.Fatalf("the refusal %v is no *RefusedError: the JSON plan would not carry it", refused)
				}
				p = re.Plan
			}
			var js bytes.Buffer
			if err := WriteJSON(&js, p); err != nil {
				t.Fatal(err)
			}
			var doc pj.Plan
			if err := json.Unmarshal(js.Bytes(), &doc); err != nil {
				t.Fatal(err)
			}
			if refused != nil && (len(doc.Refusals) == 0 || len(doc.Changes) != 0) {
				t.Errorf("a refused plan's JSON has %d refusals and %d changes, want some and none", len(doc.Refusals), len(doc.Changes))
			}
			text := textView(t, p, refused)
			words, objects := values(&doc)
			for _, w := range tc.want {
				if !strings.Contains(text, w) {
					t.Errorf("the text view does not say %q:\n%s", w, text)
				}
			}
			// Every reason, fix and note of the JSON plan is in the text.
			for _, w := range words {
				if reasonLike(w) && !strings.Contains(text, w) {
					t.Errorf("the JSON plan says %q, the text view does not:\n%s", w, text)
				}
			}
			// Every line of the text has its counterpart in the JSON plan.
			for _, line := range strings.Split(text, "\n") {
				line = strings.TrimSpace(line)
				if line == "" || counterpart(line, &doc, words, objects) {
					continue
				}
				t.Errorf("the text view's line %q has no counterpart in the JSON plan:\n%s", line, js.String())
			}
		})
	}
}

// reasonLike: s is a sentence of the JSON plan a person must be told (not
// a name, an owner or a position).
func reasonLike(s string) bool { return strings.Contains(s, " ") }

// counterpart: the JSON plan tells what line says: line holds one of its
// words or objects (or is part of one of its words), or is a line of a
// template whose part of the JSON plan is there.
func counterpart(line string, d *pj.Plan, words, objects []string) bool {
	for _, w := range words {
		if strings.Contains(line, w) || strings.Contains(w, line) {
			return true
		}
	}
	for _, o := range objects {
		if strings.Contains(line, o) {
			return true
		}
	}
	for _, tpl := range textTemplates {
		if tpl.line.MatchString(line) {
			return tpl.in(d, line)
		}
	}
	return false
}
