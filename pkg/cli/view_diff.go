package cli

import (
	"fmt"
	"io"
	"strings"

	"github.com/mqctl/mqctl/pkg/flow"
	"github.com/mqctl/mqctl/pkg/plan"
)

// diffView shows what diff found: to a person (text), to a program (the
// JSON plan, with its flows) or to a pull request's reviewers (markdown).
type diffView struct {
	format           string
	w                io.Writer
	color            bool
	oldName, newName string
}

func (v diffView) diff(p *plan.Plan) error {
	switch v.format {
	case "json":
		return plan.WriteJSON(v.w, p)
	case "markdown":
		return v.markdown(p)
	}
	return plan.WriteText(v.w, p, plan.RenderOptions{Color: v.color, Files: true})
}

// refused shows a refused change where the view is for a program or a
// pull request: the JSON plan with its refusals, or a comment listing
// them. The text view has the error alone (stderr).
func (v diffView) refused(p *plan.Plan) error {
	switch v.format {
	case "json":
		return plan.WriteJSON(v.w, p)
	case "markdown":
		var sb strings.Builder
		fmt.Fprintf(&sb, "### mqctl diff: %s → %s\n\n", v.oldName, v.newName)
		fmt.Fprintf(&sb, ":no_entry: **This change would be refused**: mqctl plan and apply refuse it before anything changes.\n\n")
		for _, r := range p.Refusals {
			where := ""
			if !r.Pos.IsZero() {
				where = fmt.Sprintf(" (`%s`)", r.Pos)
			}
			what := r.Object
			if r.Key != "" {
				what += ", " + r.Key
			}
			fmt.Fprintf(&sb, "- %s%s: %s", what, where, strings.TrimSuffix(r.Reason, "."))
			if r.Fix != "" {
				fmt.Fprintf(&sb, ". Fix: %s", r.Fix)
			}
			sb.WriteString("\n")
		}
		_, err := io.WriteString(v.w, sb.String())
		return err
	}
	return nil
}

// markdown writes a pull-request comment: the summary first (what the
// change does to messages, flagged when it loses some; then the objects),
// the flows' table, and the object changes folded.
func (v diffView) markdown(p *plan.Plan) error {
	var sb strings.Builder
	fmt.Fprintf(&sb, "### mqctl diff: %s → %s\n\n", v.oldName, v.newName)
	if p.Empty() {
		sb.WriteString("No changes: both declare the same objects in the vhosts the new files name.\n")
		_, err := io.WriteString(v.w, sb.String())
		return err
	}
	if loses, _ := p.Flows.Counts(); p.Flows.LosesMessages() && loses == 0 {
		fmt.Fprintf(&sb, ":warning: **This change may lose messages.** %s\n", p.Flows.Summary())
	} else if p.Flows.LosesMessages() {
		fmt.Fprintf(&sb, ":warning: **This change loses messages.** %s\n", p.Flows.Summary())
	} else {
		fmt.Fprintf(&sb, "%s\n", p.Flows.Summary())
	}
	s := p.Summary()
	fmt.Fprintf(&sb, "**Objects:** %d to create, %d to update, %d to replace, %d to delete.\n\n", s.Create, s.Update, s.Replace, s.Delete)
	if err := flow.WriteMarkdown(&sb, p.Flows, flow.MarkdownOptions{Marks: p.Env.HasLiterals()}); err != nil {
		return err
	}
	objects := *p
	objects.Flows, objects.FlowsUnknown = nil, nil
	fmt.Fprintf(&sb, "\n<details><summary>Object changes (%d)</summary>\n\n```text\n", len(p.Changes))
	// The object changes hide the values from the environment themselves,
	// each change's as it was written for its object (plan.WriteText):
	// hidden again here, a value an object wrote itself would be hidden
	// for being another's.
	if _, err := io.WriteString(v.w, p.Env.Hide(sb.String())); err != nil {
		return err
	}
	sb.Reset()
	if err := plan.WriteText(&sb, &objects, plan.RenderOptions{Files: true}); err != nil {
		return err
	}
	sb.WriteString("```\n\n</details>\n")
	_, err := io.WriteString(v.w, sb.String())
	return err
}
