package cli

import (
	"errors"
	"fmt"
	"io"

	"github.com/mqctl/mqctl/pkg/plan"
	preflightpkg "github.com/mqctl/mqctl/pkg/preflight"
)

// planView shows what plan found: to a person (the text view) or to a
// program (the JSON plan, json).
type planView struct {
	json   bool
	w      io.Writer
	render plan.RenderOptions
	// hide hides the values the files took from the environment in the
	// texts of a refused plan.
	hide func(string) string
}

func (v planView) plan(p *plan.Plan) error {
	if v.json {
		return plan.WriteJSON(v.w, p)
	}
	return plan.WriteText(v.w, p, v.render)
}

// saved tells a person where the saved plan is and what to do with it
// (the JSON plan is all a program gets on stdout).
func (v planView) saved(file string) {
	if !v.json {
		fmt.Fprintf(v.w, "\nSaved the plan to %s: run \"mqctl apply %s\" to apply exactly these changes.\n", file, file)
	}
}

// refused is the error of a plan the broker refuses objects of: the text
// above lists them; the JSON plan has them in its preflight, and the error
// names them.
func (v planView) refused(pf *plan.Preflight) error {
	if v.json {
		return &preflightpkg.RefusedError{Report: pf}
	}
	if advice := preflightpkg.InternalAdvice(pf); advice != "" {
		return fmt.Errorf("the broker refuses %d of the plan's objects, or failed on them (listed above). %s: %w", pf.Refused(), advice, preflightpkg.ErrRefused)
	}
	return fmt.Errorf("the broker refuses %d of the plan's objects (listed above): fix them in the file before apply: %w", pf.Refused(), preflightpkg.ErrRefused)
}

// failed returns err, the plan's failure. A refused plan: the error says
// it (stderr), and the JSON plan carries its refusals (no changes) for a
// program, its texts without the values the files took from the
// environment; no saved plan.
func (v planView) failed(err error, notes []string) error {
	var refused *plan.RefusedError
	if v.json && errors.As(err, &refused) {
		refused.Plan.Notes = notes
		refused.Plan.HideText(v.hide)
		if werr := plan.WriteJSON(v.w, refused.Plan); werr != nil {
			return werr
		}
	}
	return err
}
