package cli

import (
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"github.com/mqctl/mqctl/pkg/engine"
	"github.com/mqctl/mqctl/pkg/plan"
	preflightpkg "github.com/mqctl/mqctl/pkg/preflight"
)

// deleteChangedHelp is the help of plan's and apply's --delete-changed.
const deleteChangedHelp = "also delete the objects the file dropped that mqctl managed once but that were declared again or changed by hand since (the plan lists them; without this flag they are left alone and forgotten)"

func newPlanCmd(g *globals) *cobra.Command {
	var (
		detailed      bool
		out           string
		listUnmanaged bool
		deleteChanged bool
		preflight     bool
	)
	cmd := &cobra.Command{
		Use:   "plan",
		Short: "Show what apply would change on the live broker",
		Long: `plan reads the live broker through the management API, diffs it against the
file and prints the changes apply would make: + create, ~ update, -/+ replace,
- delete, with before → after for every changed field.

Exit codes: 0 success; 1 error; with --detailed-exitcode, 0 no changes,
1 error, 2 changes. --out FILE saves the plan for "mqctl apply FILE": a file
private to mqctl (kind mqctl-saved-plan), not the JSON plan. -o json prints the
JSON plan, the versioned contract for CI (format_version, docs/plan-json.md).

plan reads only. With --preflight it also asks the broker whether it takes
what the plan would write, as apply does before its first change: it declares
each distinct shape (a queue's type and arguments, an exchange's type, a
binding's key on its source's type, a policy) in a throwaway vhost, deletes
that vhost, and exits 1 naming every object the broker refuses.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := g.checkOutput("text", "json"); err != nil {
				return err
			}
			ctx := cmd.Context()
			// The engine's notes go to stderr as they come, and into the
			// JSON plan (a CI job reads everything from it).
			var notes []string
			desired, eng, l, err := g.loadAndRead(ctx, textNotes(cmd.ErrOrStderr(), &notes))
			if err != nil {
				return err
			}
			res, err := eng.Plan(ctx, desired, engine.PlanOptions{Live: l, DeleteChanged: deleteChanged, Preflight: preflight})
			if err != nil {
				return err
			}
			p := res.Plan
			w := cmd.OutOrStdout()
			if g.output == "json" {
				p.Notes = notes
				err = plan.WriteJSON(w, p)
			} else {
				err = plan.WriteText(w, p, plan.RenderOptions{Color: g.useColor(), ListUnmanaged: listUnmanaged})
			}
			if err != nil {
				return err
			}
			if out != "" {
				f, err := os.Create(out)
				if err != nil {
					return fmt.Errorf("save the plan: %w", err)
				}
				if err := plan.WriteSaved(f, p); err != nil {
					f.Close()
					return fmt.Errorf("save the plan to %s: %w", out, err)
				}
				if err := f.Close(); err != nil {
					return fmt.Errorf("save the plan to %s: %w", out, err)
				}
				if g.output != "json" {
					fmt.Fprintf(w, "\nSaved the plan to %s: run \"mqctl apply %s\" to apply exactly these changes.\n", out, out)
				}
			}
			if pf := p.Preflight; pf != nil && len(pf.Refusals) > 0 {
				var err error = &preflightpkg.RefusedError{Report: pf}
				if g.output != "json" {
					// The plan above lists them.
					err = fmt.Errorf("the broker refuses %d of the plan's objects (listed above): fix them in the file before apply: %w", pf.Refused(), preflightpkg.ErrRefused)
				}
				return &ExitCodeError{Code: ExitError, Err: err}
			}
			if detailed && !p.Empty() {
				return &ExitCodeError{Code: ExitChanges}
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&detailed, "detailed-exitcode", false, "exit 2 when there are changes, 0 when there are none")
	cmd.Flags().StringVar(&out, "out", "", "save the plan to FILE for a later \"mqctl apply FILE\"")
	cmd.Flags().BoolVar(&listUnmanaged, "list-unmanaged", false, "list every unmanaged object instead of counting them")
	cmd.Flags().BoolVar(&deleteChanged, "delete-changed", false, deleteChangedHelp)
	cmd.Flags().BoolVar(&preflight, "preflight", false, "also ask the broker, as apply does, whether it takes the plan's objects: each distinct shape is declared in a throwaway vhost, which is then deleted (exit 1 when it refuses one)")
	return cmd
}
