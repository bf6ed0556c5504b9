package cli

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/mqctl/mqctl/pkg/apply"
	"github.com/mqctl/mqctl/pkg/plan"
	"github.com/mqctl/mqctl/pkg/planjson"
	"github.com/mqctl/mqctl/pkg/topology"
)

// applyView is how apply shows what it does: to a person (applyText) or
// to a program (applyJSON, "apply -o json"). The engine calls it from
// several goroutines.
type applyView interface {
	// Plan shows the plan before anything changes.
	Plan(p *plan.Plan) error
	// Confirm is asked, once the plan is shown, whether to go on: the
	// text view asks on the terminal unless --auto-approve, the JSON view
	// never asks (it takes --auto-approve or a saved plan).
	Confirm(p *plan.Plan) error
	// Note says something the user should know (the engine's notes, a
	// lock waited for, a change not yet visible).
	Note(msg string)
	// Step shows one step's outcome as it ends.
	Step(ev apply.Event)
	// Report shows the outcome of the whole apply.
	Report(p *plan.Plan, res *apply.Result) error
	// Error shows why the apply stopped before it made its changes (or
	// after a partial one: err is what the command returns).
	Error(err error)
	// Finish ends an apply that had nothing to do (no Report).
	Finish()
}

// newApplyView is apply's view as -o asks: the text for a person, or the
// JSON stream for a program, which asks no question: it needs
// --auto-approve or a saved plan.
func newApplyView(g *globals, stdout, stderr io.Writer, planFile string, f applyFlags) (applyView, error) {
	if g.output != "json" {
		return &applyText{g: g, stdout: stdout, stderr: stderr, quiet: f.quiet, autoApprove: f.autoApprove}, nil
	}
	if !f.autoApprove && planFile == "" {
		return nil, errors.New("apply -o json does not ask for confirmation: review the plan (mqctl plan) and pass --auto-approve, or apply a saved plan (mqctl plan --out FILE, then mqctl apply -o json FILE)")
	}
	jv := newApplyJSON(stdout)
	jv.env = g.envValues
	jv.hide = g.hideEnv
	return jv, nil
}

// applyText is the human view: the plan as text, a line per step (unless
// quiet), notes on stderr.
type applyText struct {
	g              *globals
	stdout, stderr io.Writer
	quiet          bool
	autoApprove    bool
	mu             sync.Mutex
}

func (v *applyText) Plan(p *plan.Plan) error {
	return plan.WriteText(v.stdout, p, plan.RenderOptions{Color: v.g.useColor()})
}

// hidden writes text to w showing none of the values the files took from
// the environment (globals.hideEnv).
func (v *applyText) hidden(w io.Writer, text string) {
	_, _ = io.WriteString(w, v.g.hideEnv(text))
}

// Confirm asks on the terminal before a plan with changes, unless
// --auto-approve; then a blank line sets the steps apart from the plan.
func (v *applyText) Confirm(p *plan.Plan) error {
	if !p.Empty() && !v.autoApprove {
		if err := v.g.confirm(v.stdout); err != nil {
			return err
		}
	}
	if !v.quiet {
		fmt.Fprintln(v.stdout)
	}
	return nil
}

func (v *applyText) Note(msg string) {
	v.mu.Lock()
	defer v.mu.Unlock()
	fmt.Fprintf(v.stderr, "mqctl: %s\n", msg)
}

func (v *applyText) Step(ev apply.Event) {
	if v.quiet {
		return
	}
	v.mu.Lock()
	defer v.mu.Unlock()
	if ev.Err != nil {
		v.hidden(v.stdout, fmt.Sprintf("  failed: %s: %s\n", ev.Step, failureText(ev.Err)))
		return
	}
	v.hidden(v.stdout, fmt.Sprintf("  done: %s (%s)\n", ev.Step, ev.Duration.Round(time.Millisecond)))
}

func (v *applyText) Report(p *plan.Plan, res *apply.Result) error {
	var buf bytes.Buffer
	err := report(&buf, p, res)
	v.hidden(v.stdout, buf.String())
	return err
}

// Error leaves the error to the command's caller, which prints it.
func (v *applyText) Error(error) {}

// Finish adds nothing: the plan said "No changes".
func (v *applyText) Finish() {}

// applyJSON is "apply -o json": one planjson.Message per line on stdout.
type applyJSON struct {
	mu  sync.Mutex
	enc *json.Encoder
	w   io.Writer
	// env are the values the files took from the environment, which no
	// message shows (globals.envValues); nil for none.
	env      func() topology.EnvValues
	planned  bool // a plan line was written
	reported bool // a summary line was written
	// hide, when set, hides the values the files took from the
	// environment in a refused plan's text (globals.hideEnv).
	hide func(string) string
}

func newApplyJSON(w io.Writer) *applyJSON {
	enc := json.NewEncoder(w) // one line each: no indent
	enc.SetEscapeHTML(false)
	return &applyJSON{enc: enc, w: w}
}

func (v *applyJSON) emit(m planjson.Message) {
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.env != nil {
		if env := v.env(); len(env) > 0 {
			// A value the files took from the environment may be a
			// secret: each message shows what the file wrote instead.
			var line bytes.Buffer
			enc := json.NewEncoder(&line)
			enc.SetEscapeHTML(false)
			if enc.Encode(m) == nil {
				if hidden, err := env.HideJSON(line.Bytes(), ""); err == nil {
					_, _ = v.w.Write(hidden)
					return
				}
			}
		}
	}
	_ = v.enc.Encode(m)
}

func (v *applyJSON) Plan(p *plan.Plan) error {
	v.planned = true
	v.emit(planjson.Message{Type: planjson.TypePlan, Plan: plan.JSONOf(p)})
	return nil
}

// Confirm never asks: runApply refuses -o json without --auto-approve or
// a saved plan.
func (v *applyJSON) Confirm(*plan.Plan) error { return nil }

func (v *applyJSON) Note(msg string) { v.emit(planjson.Message{Type: planjson.TypeNote, Message: msg}) }

func (v *applyJSON) Step(ev apply.Event) {
	s := stepJSON(ev.Step, ev.Err)
	s.DurationMS = ev.Duration.Milliseconds()
	v.emit(planjson.Message{Type: planjson.TypeStep, Step: &s})
}

func (v *applyJSON) Report(p *plan.Plan, res *apply.Result) error {
	s := p.Summary()
	sum := &planjson.ApplySummary{
		Complete: res.OK(), Create: s.Create, Update: s.Update, Replace: s.Replace, Delete: s.Delete,
		Done: len(res.Done), Failed: []planjson.Step{}, Remaining: []string{}, Interrupted: res.Interrupted,
	}
	for _, f := range res.Failed {
		sum.Failed = append(sum.Failed, stepJSON(f.Step, f.Err))
	}
	for _, st := range res.Remaining {
		sum.Remaining = append(sum.Remaining, st.String())
	}
	if res.Stopped != nil {
		sum.Stopped = res.Stopped.Error()
	}
	if res.RecordErr != nil {
		sum.RecordError = res.RecordErr.Error()
	}
	v.emit(planjson.Message{Type: planjson.TypeSummary, Summary: sum})
	v.reported = true
	if !res.OK() {
		return incomplete(res)
	}
	return nil
}

// Finish writes the summary of an apply with nothing to do: the stream
// always ends with a summary or an error.
func (v *applyJSON) Finish() {
	if !v.reported {
		v.emit(planjson.Message{Type: planjson.TypeSummary, Summary: &planjson.ApplySummary{Complete: true, Failed: []planjson.Step{}, Remaining: []string{}}})
	}
}

// Error ends the stream with an error line. A plan refused before
// anything changed (plan.RefusedError: what the version refuses, an
// ownership conflict, a binding's end deleted, a vhost's limits) is
// still a plan: its line comes first, with its refusals (file, line and
// column, key, reason, fix), as "mqctl plan -o json" writes it, so that
// a CI job reads them as it reads plan's.
func (v *applyJSON) Error(err error) {
	var refused *plan.RefusedError
	if !v.planned && errors.As(err, &refused) && refused.Plan != nil {
		if v.hide != nil {
			refused.Plan.HideText(v.hide)
		}
		_ = v.Plan(refused.Plan)
	}
	v.emit(planjson.Message{Type: planjson.TypeError, Message: err.Error()})
}

// stepJSON is step st, done or failed with err, in the stream.
func stepJSON(st apply.Step, err error) planjson.Step {
	s := planjson.Step{Step: st.String(), Vhost: st.Vhost, Name: st.Name, Outcome: "done"}
	if c := st.Change; c != nil {
		s.Action, s.Kind, s.Name = string(c.Action), string(c.Kind), c.Name
	}
	if err != nil {
		s.Outcome, s.Error = "failed", failureText(err)
	}
	return s
}
