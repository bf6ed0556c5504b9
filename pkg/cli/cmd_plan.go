package cli

import (
	"bytes"
	"fmt"
	"io"
	"os"

	"github.com/spf13/cobra"

	"github.com/mqctl/mqctl/pkg/engine"
	"github.com/mqctl/mqctl/pkg/plan"
	"github.com/mqctl/mqctl/pkg/topology"
)

// takeOverHelp is the help of plan's and apply's --take-over-from.
const takeOverHelp = "take over the ownership records of OWNER (default: the files without owner:) in the file's vhosts, and its record of the broker's users when the file has a users section: what they list becomes this file's owner's, and apply merges them into its records and deletes them; for a team that adds owner: to its file or renames its owner"

// takeOverFrom is --take-over-from's owner, nil when not given: "" for
// the default owner.
func takeOverFrom(cmd *cobra.Command, owner string) (*string, error) {
	if !cmd.Flags().Changed("take-over-from") {
		return nil, nil
	}
	owner, err := topology.ParseOwnerArg(owner)
	if err != nil {
		return nil, fmt.Errorf("--take-over-from: %w", err)
	}
	return &owner, nil
}

// ownerFlag is --take-over-from: one owner. Given twice it is refused:
// a plan takes over one owner's records, and a plain string flag keeps the
// last and drops the first without a word (a team merging two owners'
// files, --take-over-from team-a --take-over-from team-b, saw the plan
// take over team-b's records only).
type ownerFlag struct {
	v   *string
	set bool
}

// takeOverFlag registers --take-over-from on cmd, into v.
func takeOverFlag(cmd *cobra.Command, v *string) {
	*v = topology.DefaultOwner
	cmd.Flags().Var(&ownerFlag{v: v}, "take-over-from", takeOverHelp)
}

func (o *ownerFlag) String() string { return *o.v }
func (o *ownerFlag) Type() string   { return "string" }

func (o *ownerFlag) Set(s string) error {
	if o.set {
		return fmt.Errorf("given twice (%s, then %s): a plan takes over one owner's records; to merge several owners' files into this one, plan and apply once with each in turn (--take-over-from %s, then --take-over-from %s)", *o.v, s, *o.v, s)
	}
	o.set, *o.v = true, s
	return nil
}

// deleteChangedHelp is the help of plan's and apply's --delete-changed.
const deleteChangedHelp = "also delete the objects the file dropped that mqctl managed once but that were declared again or changed by hand since (the plan lists them; without this flag they are left alone and forgotten)"

// planOptions are plan's flags (Flags → Options → Validate → Run).
type planOptions struct {
	detailed      bool
	out           string
	listUnmanaged bool
	deleteChanged bool
	preflight     bool
	takeOver      string
	// from is --take-over-from's owner once validated, nil when not given.
	from *string
}

// planLong is plan's --help.
const planLong = `plan reads the live broker through the management API, diffs it against the
file and prints the changes apply would make: + create, ~ update, -/+ replace,
- delete, with before → after for every changed field.

Exit codes: 0 success; 1 error (a refused plan included); with
--detailed-exitcode, 0 the broker matches the file, 1 error, 2 it differs: there
are changes, also when apply would only update mqctl's ownership record, and
when every change is held back (listed under "Held back": an object in a vhost
the user is not shown, a queue on a node that is down, mqctl's own user), which
apply does not make. --out FILE saves the plan for "mqctl apply FILE": a file
private to mqctl (kind mqctl-saved-plan), not the JSON plan. -o json prints the
JSON plan, the versioned contract for CI (format_version, docs/plan-json.md).

plan reads only. With --preflight it also asks the broker whether it takes
what the plan would write, as apply does before its first change: it declares
each distinct shape (a queue's type and arguments, an exchange's type, a
binding's key on its source's type, a policy) in a throwaway vhost, deletes
that vhost, and exits 1 naming every object the broker refuses.`

func newPlanCmd(g *globals) *cobra.Command {
	o := &planOptions{}
	cmd := &cobra.Command{
		Use:   "plan",
		Short: "Show what apply would change on the live broker",
		Example: `  mqctl plan                                    # topology.yaml against http://localhost:15672
  mqctl plan -f topology/ --server http://rabbit:15672 --username deploy
  mqctl plan --detailed-exitcode                # in CI: exit 2 when there are changes
  mqctl plan --out release.plan                 # then: mqctl apply release.plan
  mqctl plan -o json > plan.json`,
		Long: planLong,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := o.validate(cmd, g); err != nil {
				return err
			}
			return o.run(cmd, g)
		},
	}
	f := cmd.Flags()
	f.BoolVar(&o.detailed, "detailed-exitcode", false, "exit 2 when the broker differs from the file (changes, apply changing only mqctl's ownership record, or changes held back), 0 when it matches")
	f.StringVar(&o.out, "out", "", "save the plan to FILE for a later \"mqctl apply FILE\"")
	f.BoolVar(&o.listUnmanaged, "list-unmanaged", false, "list every unmanaged object instead of counting them")
	f.BoolVar(&o.deleteChanged, "delete-changed", false, deleteChangedHelp)
	takeOverFlag(cmd, &o.takeOver)
	f.BoolVar(&o.preflight, "preflight", false, "also ask the broker, as apply does, whether it takes the plan's objects: each distinct shape is declared in a throwaway vhost, which is then deleted (exit 1 when it refuses one)")
	return cmd
}

// validate checks the output format and --take-over-from's owner.
func (o *planOptions) validate(cmd *cobra.Command, g *globals) error {
	if err := g.checkOutput("text", "json"); err != nil {
		return err
	}
	from, err := takeOverFrom(cmd, o.takeOver)
	if err != nil {
		return err
	}
	o.from = from
	return nil
}

// run reads the broker, plans the file against it and shows the plan;
// it saves the plan with --out.
func (o *planOptions) run(cmd *cobra.Command, g *globals) error {
	ctx := cmd.Context()
	// The engine's notes go to stderr as they come, and into the
	// JSON plan (a CI job reads everything from it).
	var notes []string
	view := planView{json: g.output == "json", w: cmd.OutOrStdout(), hide: g.hideEnv, render: plan.RenderOptions{Color: g.useColor(), ListUnmanaged: o.listUnmanaged}}
	desired, eng, read, stop, err := g.loadAndRead(ctx, g.textNotes(cmd.ErrOrStderr(), &notes))
	if err != nil {
		return err
	}
	// Plan lets go of desired before its flows, the plan's peak: only
	// its values from the environment are read after it.
	env := desired.Env
	res, err := eng.Plan(ctx, desired, engine.PlanOptions{Read: read, DeleteChanged: o.deleteChanged, TakeOverFrom: o.from, Preflight: o.preflight, Save: o.out != ""})
	stop()
	if err != nil {
		return view.failed(err, notes)
	}
	p := res.Plan
	p.Notes, p.Env = notes, env
	p.HideText(g.hideEnv)
	if err := view.plan(p); err != nil {
		return err
	}
	if o.out != "" {
		if err := savePlan(o.out, p); err != nil {
			return err
		}
		view.saved(o.out)
	}
	if pf := p.Preflight; pf != nil && len(pf.Refusals) > 0 {
		return &ExitCodeError{Code: ExitError, Err: view.refused(pf)}
	}
	// A plan that changes only mqctl's ownership record is a change
	// apply makes (plan.Plan.RecordChanges), and one whose changes are
	// all held back still differs from the file (plan.Plan.Differs).
	if o.detailed && p.Differs() {
		return &ExitCodeError{Code: ExitChanges}
	}
	return nil
}

// savePlan writes p to file as a saved plan, for "mqctl apply FILE".
func savePlan(file string, p *plan.Plan) error {
	// Written whole once the plan may be saved: a plan refused (a secret
	// written in the file) leaves no empty file, nor an earlier plan of
	// that name cut to nothing. It is written to a temporary file first,
	// then copied: held in memory, the saved plan of a 50,002-object
	// teardown (25 MB) took a plan to 126-145 MB.
	tmp, err := os.CreateTemp("", "mqctl-plan-*.json")
	if err != nil {
		// No temporary file to be had: in memory.
		var buf bytes.Buffer
		if err := plan.WriteSaved(&buf, p); err != nil {
			return fmt.Errorf("save the plan to %s: %w", file, err)
		}
		if err := os.WriteFile(file, buf.Bytes(), 0o644); err != nil {
			return fmt.Errorf("save the plan to %s: %w", file, err)
		}
		return nil
	}
	defer os.Remove(tmp.Name())
	defer tmp.Close()
	if err := plan.WriteSaved(tmp, p); err != nil {
		return fmt.Errorf("save the plan to %s: %w", file, err)
	}
	if _, err := tmp.Seek(0, io.SeekStart); err != nil {
		return fmt.Errorf("save the plan to %s: %w", file, err)
	}
	out, err := os.OpenFile(file, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return fmt.Errorf("save the plan to %s: %w", file, err)
	}
	if _, err := io.Copy(out, tmp); err != nil {
		out.Close()
		return fmt.Errorf("save the plan to %s: %w", file, err)
	}
	if err := out.Close(); err != nil {
		return fmt.Errorf("save the plan to %s: %w", file, err)
	}
	return nil
}
