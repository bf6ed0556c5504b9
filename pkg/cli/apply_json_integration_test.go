package cli_test

import (
	"bufio"
	"encoding/json"
	"strings"
	"testing"

	"github.com/mqctl/mqctl/pkg/planjson"
)

// messages reads apply -o json's stream: one JSON object per line, and
// nothing else on stdout.
func messages(t *testing.T, stdout string) []planjson.Message {
	t.Helper()
	var out []planjson.Message
	sc := bufio.NewScanner(strings.NewReader(stdout))
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	for sc.Scan() {
		var m planjson.Message
		dec := json.NewDecoder(strings.NewReader(sc.Text()))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&m); err != nil {
			t.Fatalf("a line of apply -o json is not a message: %v\n%s", err, sc.Text())
		}
		out = append(out, m)
	}
	return out
}

func types(ms []planjson.Message) []string {
	var out []string
	for _, m := range ms {
		out = append(out, m.Type)
	}
	return out
}

// apply -o json is a stream a CI job reads as the apply goes: the plan,
// a line per step as it ends, the summary last; it never asks for
// confirmation (it takes --auto-approve, or a saved plan), and an apply
// refused before its first change ends with an error line and exit 1.
func TestApplyJSONStream(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.mustApply(savedBefore)
	f := h.write("file.yaml", savedFile)

	r := h.run("apply", "-f", f, "-o", "json")
	if r.code != 1 || !strings.Contains(r.stderr, "pass --auto-approve") {
		t.Errorf("apply -o json without --auto-approve: want a refusal naming --auto-approve:\n%s", r)
	}

	r = h.run("apply", "-f", f, "-o", "json", "--auto-approve")
	if r.code != 0 {
		t.Fatalf("apply -o json:\n%s", r)
	}
	ms := messages(t, r.stdout)
	if len(ms) < 3 || ms[0].Type != planjson.TypePlan || ms[len(ms)-1].Type != planjson.TypeSummary {
		t.Fatalf("stream %v: want the plan first and the summary last", types(ms))
	}
	if p := ms[0].Plan; p == nil || p.FormatVersion != planjson.FormatVersion || len(p.Changes) != 1 || p.Changes[0].Name != "b" || p.Changes[0].Action != "create" {
		t.Errorf("the plan line: %+v, want the create of queue b", ms[0].Plan)
	}
	var steps []planjson.Step
	for _, m := range ms[1 : len(ms)-1] {
		switch m.Type {
		case planjson.TypeStep:
			steps = append(steps, *m.Step)
		case planjson.TypeNote:
		default:
			t.Errorf("a %s line between the plan and the summary", m.Type)
		}
	}
	if len(steps) != 1 || steps[0].Outcome != "done" || steps[0].Kind != "queue" || steps[0].Name != "b" || steps[0].Action != "create" ||
		steps[0].Vhost != h.vhost || !strings.Contains(steps[0].Step, `declare queue "b"`) {
		t.Errorf("steps: %+v, want the declaration of queue b, done", steps)
	}
	if s := ms[len(ms)-1].Summary; s == nil || !s.Complete || s.Create != 1 || s.Done != 1 || len(s.Failed) != 0 || len(s.Remaining) != 0 {
		t.Errorf("summary: %+v, want complete with one queue created", ms[len(ms)-1].Summary)
	}
	if strings.Contains(r.stdout, "Do you want to perform these actions") {
		t.Errorf("apply -o json asked for confirmation:\n%s", r.stdout)
	}

	// Nothing left to do: the plan and the summary, no step.
	r = h.run("apply", "-f", f, "-o", "json", "--auto-approve")
	if got := strings.Join(types(messages(t, r.stdout)), ","); r.code != 0 || got != "plan,summary" {
		t.Errorf("a second apply -o json: exit %d, stream %s; want plan,summary:\n%s", r.code, got, r)
	}

	// Refused before anything changes: an error line, exit 1.
	bad := h.write("bad.yaml", strings.Replace(savedFile, "b: { type: quorum }", "b: { type: classic }", 1))
	r = h.run("apply", "-f", bad, "-o", "json", "--auto-approve")
	ms = messages(t, r.stdout)
	if r.code != 1 || len(ms) == 0 || ms[len(ms)-1].Type != planjson.TypeError || !strings.Contains(ms[len(ms)-1].Message, "allow-replace") {
		t.Errorf("a replace without --allow-replace: exit %d, stream %v; want an error line naming --allow-replace:\n%s", r.code, types(ms), r)
	}
}
