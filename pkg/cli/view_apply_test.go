package cli

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mqctl/mqctl/pkg/apply"
	"github.com/mqctl/mqctl/pkg/kind"
	"github.com/mqctl/mqctl/pkg/lock"
	"github.com/mqctl/mqctl/pkg/plan"
	"github.com/mqctl/mqctl/pkg/planjson"
)

// A partial apply in the stream: the failed step with the broker's
// reason, the steps not started, and the same error as the text view
// (which the command returns, exit 1), then the error line.
func TestApplyJSONPartial(t *testing.T) {
	p := &plan.Plan{Changes: []plan.Change{
		{Action: plan.Create, Kind: kind.Queue, Vhost: "v", Name: "a"},
		{Action: plan.Create, Kind: kind.Queue, Vhost: "v", Name: "b"},
		{Action: plan.Create, Kind: kind.Queue, Vhost: "v", Name: "c"},
	}}
	step := func(i int) apply.Step {
		c := &p.Changes[i]
		return apply.Step{Vhost: c.Vhost, Name: c.Name, Change: c}
	}
	refused := errors.New(`PRECONDITION_FAILED - invalid arg 'x-max-length' for queue 'b'`)
	res := &apply.Result{Done: []apply.Step{step(0)}, Failed: []apply.Failure{{Step: step(1), Err: refused}}, Remaining: []apply.Step{step(2)}}

	var out bytes.Buffer
	v := newApplyJSON(&out)
	v.Step(apply.Event{Step: step(0), Duration: 12 * time.Millisecond})
	v.Step(apply.Event{Step: step(1), Err: refused, Duration: 3 * time.Millisecond})
	err := v.Report(p, res)
	var text bytes.Buffer
	want := report(&text, p, res)
	if err == nil || want == nil || err.Error() != want.Error() {
		t.Fatalf("Report: %v, want the text view's error %v", err, want)
	}
	v.Error(err)

	var ms []planjson.Message
	for _, line := range strings.Split(strings.TrimSpace(out.String()), "\n") {
		var m planjson.Message
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatalf("%v: %s", err, line)
		}
		ms = append(ms, m)
	}
	if len(ms) != 4 || ms[0].Type != "step" || ms[1].Type != "step" || ms[2].Type != "summary" || ms[3].Type != "error" {
		t.Fatalf("stream:\n%s", out.String())
	}
	if s := ms[1].Step; s.Outcome != "failed" || s.Name != "b" || s.Kind != "queue" || s.Action != "create" || !strings.Contains(s.Error, "invalid arg 'x-max-length'") || s.DurationMS != 3 {
		t.Errorf("the failed step: %+v", s)
	}
	if s := ms[0].Step; s.Outcome != "done" || s.Error != "" || s.DurationMS != 12 {
		t.Errorf("the done step: %+v", s)
	}
	sum := ms[2].Summary
	if sum.Complete || sum.Create != 3 || sum.Done != 1 || len(sum.Failed) != 1 || sum.Failed[0].Name != "b" || len(sum.Remaining) != 1 || !strings.Contains(sum.Remaining[0], `"c"`) {
		t.Errorf("summary: %+v", sum)
	}
	if ms[3].Message != want.Error() {
		t.Errorf("error line %q, want %q", ms[3].Message, want.Error())
	}
}

// Before a plan with changes the text view asks on the terminal and goes
// on only on "yes"; --auto-approve and an empty plan ask nothing; off a
// terminal it refuses with the flag to pass. The JSON view never asks
// (runApply refuses -o json without --auto-approve or a saved plan).
func TestApplyConfirm(t *testing.T) {
	changes := &plan.Plan{Changes: []plan.Change{{Action: plan.Create, Kind: kind.Queue, Vhost: "v", Name: "a"}}}
	empty := &plan.Plan{}
	const prompt = "Do you want to perform these actions? Only 'yes' will be accepted: "
	for _, tc := range []struct {
		name        string
		p           *plan.Plan
		terminal    bool
		stdin       string
		autoApprove bool
		quiet       bool
		wantErr     string // "" for none
		wantOut     string
	}{
		{name: "yes", p: changes, terminal: true, stdin: "yes\n", wantOut: "\n" + prompt + "\n"},
		{name: "yes quiet", p: changes, terminal: true, stdin: "yes\n", quiet: true, wantOut: "\n" + prompt},
		{name: "no", p: changes, terminal: true, stdin: "no\n", wantErr: "apply cancelled: nothing was changed", wantOut: "\n" + prompt},
		{name: "nothing typed", p: changes, terminal: true, stdin: "", wantErr: "apply cancelled: nothing was changed", wantOut: "\n" + prompt},
		{name: "not a terminal", p: changes, stdin: "yes\n", wantErr: "run it in one, or pass --auto-approve"},
		{name: "auto-approve", p: changes, stdin: "no\n", autoApprove: true, wantOut: "\n"},
		{name: "no changes", p: empty, terminal: true, stdin: "no\n", wantOut: "\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var out bytes.Buffer
			g := &globals{env: Env{Stdin: strings.NewReader(tc.stdin), StdinIsTerminal: tc.terminal}}
			v := &applyText{g: g, stdout: &out, stderr: &out, quiet: tc.quiet, autoApprove: tc.autoApprove}
			err := v.Confirm(tc.p)
			switch {
			case tc.wantErr == "" && err != nil:
				t.Errorf("Confirm: %v, want none", err)
			case tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)):
				t.Errorf("Confirm: %v, want %q", err, tc.wantErr)
			}
			if out.String() != tc.wantOut {
				t.Errorf("printed %q, want %q", out.String(), tc.wantOut)
			}
			var js bytes.Buffer
			if err := newApplyJSON(&js).Confirm(tc.p); err != nil || js.Len() != 0 {
				t.Errorf("the JSON view: %v, printed %q; want no question and no error", err, js.String())
			}
		})
	}
}

// An apply stopped because it lost its lock says so in text and JSON
// alike, with what to do: another apply may have run, so plan again
// (not "run apply again to finish, it continues from where the broker
// is now", the advice after an interruption); an apply stopped by its
// guard for another reason keeps that advice.
func TestApplyStoppedByALostLock(t *testing.T) {
	p := &plan.Plan{Changes: []plan.Change{
		{Action: plan.Create, Kind: kind.Queue, Vhost: "v", Name: "a"},
		{Action: plan.Create, Kind: kind.Queue, Vhost: "v", Name: "b"},
	}}
	step := func(i int) apply.Step {
		c := &p.Changes[i]
		return apply.Step{Vhost: c.Vhost, Name: c.Name, Change: c}
	}
	for _, tc := range []struct {
		name    string
		stopped error
		want    []string
		not     []string
	}{
		{"the lock lost", fmt.Errorf("%w: its AMQP connection to h:5672 closed", lock.ErrLost),
			[]string{"apply stopped after 1 of 2 steps", "its AMQP connection to h:5672 closed", "sent no request after", "another apply may have changed the broker since", "run mqctl plan"},
			[]string{"continues from where"}},
		{"another stop", errors.New("something else"),
			[]string{"stopped: something else", "run mqctl apply again to finish"}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res := &apply.Result{Done: []apply.Step{step(0)}, Remaining: []apply.Step{step(1)}, Stopped: tc.stopped}
			var text, out bytes.Buffer
			err := report(&text, p, res)
			jerr := newApplyJSON(&out).Report(p, res)
			if err == nil || jerr == nil || err.Error() != jerr.Error() {
				t.Fatalf("text %v, JSON %v: want one error", err, jerr)
			}
			for _, s := range tc.want {
				if !strings.Contains(err.Error(), s) {
					t.Errorf("error %q does not say %q", err, s)
				}
			}
			for _, s := range tc.not {
				if strings.Contains(err.Error(), s) {
					t.Errorf("error %q says %q", err, s)
				}
			}
			if !strings.Contains(text.String(), "Not done (1 step") || !strings.Contains(out.String(), `"stopped":`) {
				t.Errorf("the report does not list what was not done, or the JSON summary lacks why it stopped:\n%s\n%s", text.String(), out.String())
			}
		})
	}
}

// TestNullDeviceIsNoTerminal: stdin from /dev/null (CI) is no terminal,
// though a character device: apply says to pass --auto-approve there
// rather than ask, read nothing and cancel.
func TestNullDeviceIsNoTerminal(t *testing.T) {
	null, err := os.Open(os.DevNull)
	if err != nil {
		t.Skipf("no %s: %v", os.DevNull, err)
	}
	defer null.Close()
	if isTerminal(null) {
		t.Errorf("isTerminal(%s) = true, want false", os.DevNull)
	}
	file, err := os.Create(filepath.Join(t.TempDir(), "stdin"))
	if err != nil {
		t.Fatal(err)
	}
	defer file.Close()
	if isTerminal(file) {
		t.Errorf("isTerminal(a regular file) = true, want false")
	}
}
