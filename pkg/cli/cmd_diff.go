package cli

import (
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/mqctl/mqctl/pkg/gitref"
	"github.com/mqctl/mqctl/pkg/loader"
	"github.com/mqctl/mqctl/pkg/plan"
	"github.com/mqctl/mqctl/pkg/rmqversion"
	"github.com/mqctl/mqctl/pkg/topology"
)

// ExitLosesMessages: diff --detailed-exitcode, the change loses messages.
const ExitLosesMessages = 3

// diffOptions are diff's flags.
type diffOptions struct {
	base     string
	detailed bool
}

func newDiffCmd(g *globals) *cobra.Command {
	o := &diffOptions{}
	cmd := &cobra.Command{
		Use:   "diff [OLD NEW]",
		Short: "Compare two topologies offline: object changes and what they do to messages",
		Long: `diff compares two topology files (or directories of them), or with --base the -f
files (default topology.yaml) with the same paths at a git ref, and shows the
object changes that turn the old into the new and what they do to messages:
each class of routing keys that now reaches other queues, or none; dead letters
and delay tiers that now go elsewhere, or are dropped; queues nothing reaches
any more. It needs no broker: run it on a pull request. It shows what plan
would show if the broker held the old side as mqctl applied it: like plan, it
works on the vhosts the new files name, and a vhost they drop altogether is
left alone, not deleted. As plan does, it refuses what the target RabbitMQ
version (--rabbitmq-version, default 4.3) refuses of the new files, as validate
does (exit 1), and compares both sides as that version stores them.

  mqctl diff old.yaml topology.yaml
  mqctl diff --base origin/main -f topology/ -o markdown > comment.md
  mqctl diff --base origin/main --detailed-exitcode

Output: -o text, json (a JSON plan with its "flows", docs/plan-json.md) or
markdown (for a pull-request comment). Exit codes: 0 success; 1 error; with
--detailed-exitcode, 0 no change, 2 changes, 3 changes that lose messages.`,
		Args: func(cmd *cobra.Command, args []string) error { return o.validate(args) },
		RunE: func(cmd *cobra.Command, args []string) error { return o.run(cmd, g, args) },
	}
	cmd.Flags().StringVar(&o.base, "base", "", "compare the -f files with the same paths at this git ref (a branch, tag or commit)")
	cmd.Flags().BoolVar(&o.detailed, "detailed-exitcode", false, "exit 0 when nothing changes, 2 when something does, 3 when the change loses messages")
	g.addTargetVersionFlag(cmd)
	return cmd
}

// validate checks that the arguments name one pair of sides.
func (o *diffOptions) validate(args []string) error {
	switch {
	case o.base != "" && len(args) > 0:
		return fmt.Errorf("give either OLD and NEW or --base REF (with -f for the files), not both")
	case o.base == "" && len(args) != 2:
		return fmt.Errorf("give OLD and NEW (two files or directories), or --base REF to compare the -f files with a git ref")
	}
	return nil
}

// run loads both sides, diffs them as plan would and shows the result.
func (o *diffOptions) run(cmd *cobra.Command, g *globals, args []string) error {
	if err := g.checkOutput("text", "json", "markdown"); err != nil {
		return err
	}
	version, err := g.targetVersion()
	if err != nil {
		return err
	}
	old, new, names, err := g.diffSides(cmd, o.base, args)
	if err != nil {
		return err
	}
	// Like plan, diff compares the vhosts the new files name: a
	// --vhost they do not name would compare nothing.
	if err := g.vhostsDeclared(new, strings.Trim(names[1], "`")); err != nil {
		return fmt.Errorf("%w: diff compares the vhosts the new files declare", err)
	}
	g.keepVhosts(old)
	g.keepVhosts(new)
	view := diffView{format: g.output, w: cmd.OutOrStdout(), color: g.useColor(), oldName: names[0], newName: names[1]}
	p, err := diffPlan(version, old, new)
	if err != nil {
		// A refused change: the error says it (stderr); the JSON plan
		// and the pull-request comment carry its refusals.
		var refused *plan.RefusedError
		if errors.As(err, &refused) {
			refused.Plan.HideText(g.hideEnv)
			if werr := view.refused(refused.Plan); werr != nil {
				return werr
			}
		}
		return err
	}
	p.HideText(g.hideEnv)
	p.Env = g.envValues()
	if err := view.diff(p); err != nil {
		return err
	}
	switch {
	case !o.detailed || p.Empty():
		return nil
	case p.Flows.LosesMessages():
		return &ExitCodeError{Code: ExitLosesMessages}
	default:
		return &ExitCodeError{Code: ExitChanges}
	}
}

// diffPlan is the plan that turns old into new, with its flows, as plan
// would make it against a broker holding old as mqctl applied it; an
// error for what plan would refuse.
func diffPlan(version rmqversion.Version, old, new *topology.Topology) (*plan.Plan, error) {
	// As plan does: what the target version refuses of the new
	// side is refused, as validate refuses it; both sides are
	// compared as a broker of that version stores them. The old
	// side is not judged: it may be what this change fixes.
	desired := new
	var oldEnv topology.EnvValues
	if old != nil {
		oldEnv = old.Env
	}
	new, err := version.Prepare(new)
	if err != nil {
		return nil, plan.Refuse(judgedFor(err, version), plan.RefusedVersion, desired, nil)
	}
	old = version.Normalize(old)
	// Everything of the old side is mqctl's, as a broker where mqctl
	// applied it records it; like plan, diff works on the vhosts the
	// new files name, and leaves a vhost they drop alone.
	cur := plan.OldSide(old, new)
	p := plan.DiffWith(new, cur, plan.Options{Version: version})
	// The new files' owner differs from the old's: what they would
	// change of the old owner's, plan refuses.
	if err := p.ConflictError(); err != nil {
		return nil, plan.Refuse(fmt.Errorf("the change would be refused: the new files' owner is %s, the old ones' %s, whose record keeps what the old files declare; %s",
			plan.OwnerName(new.Owner), plan.OwnerName(old.Owner), strings.TrimPrefix(err.Error(), "plan refused, nothing was changed: ")), plan.RefusedOwnership, new, p.Conflicts)
	}
	// What plan refuses given what the broker holds, the old side
	// standing for the broker: a write naming an exchange or queue
	// the change deletes.
	if err := p.CheckDeletedEnds(version, new); err != nil {
		return nil, plan.Refuse(judgedFor(fmt.Errorf("the change would be refused: %w", err), version), plan.RefusedDeletedEnd, new, nil)
	}
	p.Vhosts = new.VhostNames()
	// The flows' words show what the files wrote for their values from
	// the environment, the old files' too ("was ${N} messages").
	cur.Env = topology.MergeEnv(oldEnv, desired.Env)
	p.SetFlows(cur, version)
	return p, nil
}

// diffSides loads the old and the new topology, and names them for the
// views.
func (g *globals) diffSides(cmd *cobra.Command, base string, args []string) (old, new *topology.Topology, names [2]string, err error) {
	if base == "" {
		if old, err = g.loadPaths([]string{args[0]}, nil); err != nil {
			return nil, nil, names, err
		}
		if new, err = g.loadPaths([]string{args[1]}, nil); err != nil {
			return nil, nil, names, err
		}
		return old, new, [2]string{"`" + args[0] + "`", "`" + args[1] + "`"}, nil
	}
	files := g.topologyFiles()
	if slices.Contains(files, "-") {
		return nil, nil, names, errors.New("diff --base reads the -f files from the working tree and from git: pass files or directories, not -")
	}
	dir, err := os.Getwd()
	if err != nil {
		return nil, nil, names, err
	}
	tree, err := gitref.Open(cmd.Context(), dir, base, files)
	if err != nil {
		return nil, nil, names, err
	}
	// A path the change deleted (the working tree holds no topology file
	// there, the ref does) is in the old side alone.
	deleted := slices.DeleteFunc(slices.Clone(files), func(f string) bool { return loader.Holds(nil, f) || !loader.Holds(tree, f) })
	present := slices.DeleteFunc(slices.Clone(files), func(f string) bool { return slices.Contains(deleted, f) })
	if len(deleted) > 0 {
		fmt.Fprintf(cmd.ErrOrStderr(), "mqctl: the working tree no longer holds %v, which %s does: what only they declare is deleted, in the vhosts the remaining files name (a vhost they do not name is left alone, as plan leaves it)\n", deleted, base)
	}
	new = topology.New()
	if len(present) > 0 {
		if new, err = g.loadPaths(present, nil); err != nil {
			return nil, nil, names, err
		}
	}
	held := slices.DeleteFunc(slices.Clone(files), func(f string) bool { return !tree.Exists(f) })
	if len(held) == 0 {
		fmt.Fprintf(cmd.ErrOrStderr(), "mqctl: %s holds none of %v: every object is new\n", base, files)
		return topology.New(), new, [2]string{"`" + base + "`", "the working tree"}, nil
	}
	if old, err = g.loadPaths(held, tree); err != nil {
		return nil, nil, names, fmt.Errorf("the files at %s: %w", base, err)
	}
	return old, new, [2]string{"`" + base + "`", "the working tree"}, nil
}

// loadPaths loads paths offline (from files, when set; the file system
// otherwise).
func (g *globals) loadPaths(paths []string, files loader.Files) (*topology.Topology, error) {
	opts := g.offlineOptions()
	opts.Files = files
	t, err := loader.Load(paths, opts)
	g.loaded(t)
	return t, err
}
