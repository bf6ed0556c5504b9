package cli

import (
	"bufio"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/mqctl/mqctl/pkg/apply"
	"github.com/mqctl/mqctl/pkg/broker"
	"github.com/mqctl/mqctl/pkg/definitions"
	"github.com/mqctl/mqctl/pkg/engine"
	"github.com/mqctl/mqctl/pkg/loader"
	"github.com/mqctl/mqctl/pkg/lock"
	"github.com/mqctl/mqctl/pkg/plan"
)

// ErrStalePlan is wrapped by apply's error when a saved plan no longer
// matches the broker.
var ErrStalePlan = engine.ErrStalePlan

type applyFlags struct {
	autoApprove   bool
	allowDataLoss bool
	allowReplace  bool
	deleteChanged bool
	// takeOver is --take-over-from as given; takeOverFrom the owner it
	// names, nil when not given.
	takeOver     string
	takeOverFrom *string
	noPreflight  bool
	lockTimeout  time.Duration
	parallelism  int
	quiet        bool
}

func newApplyCmd(g *globals) *cobra.Command {
	var f applyFlags
	cmd := &cobra.Command{
		Use:   "apply [PLANFILE]",
		Short: "Make the broker match the file (or a saved plan), safely and idempotently",
		Example: `  mqctl apply                                   # topology.yaml: shows the plan, asks before changing
  mqctl apply -f topology/ --auto-approve
  mqctl plan --out release.plan && mqctl apply release.plan   # exactly the reviewed plan
  mqctl apply --allow-replace                   # also replace empty queues whose arguments changed`,
		Long: `apply makes the broker match the file: it plans, shows the plan, asks for
confirmation on a terminal (or --auto-approve), then creates, updates, replaces
and deletes in order (vhosts, exchanges, queues, bindings, policies; deletes in
reverse; a policy, binding, queue or exchange deleted for good goes after the
writes, so that what replaces it is in place first), printing progress.

Nothing is lost: a queue holding messages or with consumers is never deleted or
replaced without --allow-data-loss (checked again at the moment of deletion),
and an empty queue is replaced only with --allow-replace. Two applies on one
vhost never interleave. Given PLANFILE (from "mqctl plan --out"), apply makes
exactly those changes, and refuses when the broker changed since.

Before its first change apply asks the broker whether it takes the plan's
objects: it declares each distinct shape in a throwaway vhost (tagged
mqctl-preflight, deleted at once) and changes nothing when the broker refuses
one. --no-preflight skips that; users, permissions, shovels and federation are
judged from the version table alone either way.

mqctl deletes an object the file dropped only while it is still the one mqctl
wrote: one declared again, or changed, by hand under the same name is left
alone and named in the plan, unless --delete-changed.`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			planFile := ""
			if len(args) == 1 {
				planFile = args[0]
			}
			var err error
			if f.takeOverFrom, err = takeOverFrom(cmd, f.takeOver); err != nil {
				return err
			}
			if f.takeOverFrom != nil && planFile != "" {
				return errors.New("--take-over-from goes to the plan that made the saved plan (mqctl plan --take-over-from OWNER --out FILE): a saved plan carries its take-over")
			}
			return g.runApply(cmd.Context(), cmd.OutOrStdout(), cmd.ErrOrStderr(), planFile, f)
		},
	}
	fs := cmd.Flags()
	fs.BoolVar(&f.autoApprove, "auto-approve", false, "apply without asking for confirmation")
	fs.BoolVar(&f.allowDataLoss, "allow-data-loss", false, "allow deleting or replacing queues that hold messages or have consumers")
	fs.BoolVar(&f.allowReplace, "allow-replace", false, "allow replacing (delete and re-declare) queues and exchanges whose settings cannot change in place")
	fs.BoolVar(&f.deleteChanged, "delete-changed", false, deleteChangedHelp)
	takeOverFlag(cmd, &f.takeOver)
	fs.BoolVar(&f.noPreflight, "no-preflight", false, "do not ask the broker first, in a throwaway vhost, whether it takes the plan's objects (for brokers where creating a vhost is unwelcome): the plan is judged from the version table alone")
	fs.DurationVar(&f.lockTimeout, "lock-timeout", 0, "how long to wait while another apply holds a vhost's lock")
	fs.IntVar(&f.parallelism, "parallelism", 8, "concurrent requests within a phase")
	fs.BoolVar(&f.quiet, "quiet", false, "do not print a line per step")
	return cmd
}

func (g *globals) runApply(ctx context.Context, stdout, stderr io.Writer, planFile string, f applyFlags) error {
	if err := g.checkOutput("text", "json"); err != nil {
		return err
	}
	view, err := newApplyView(g, stdout, stderr, planFile, f)
	if err != nil {
		return err
	}
	if err := g.hideEnvError(g.applyWith(ctx, view, planFile, f)); err != nil {
		view.Error(err)
		return err
	}
	view.Finish()
	return nil
}

// applyWith runs apply, showing what it does through view.
func (g *globals) applyWith(ctx context.Context, view applyView, planFile string, f applyFlags) error {
	var in engine.ApplyInput
	var flows *savedFlows
	if planFile != "" {
		var err error
		if in.Saved, flows, err = g.readSavedPlan(planFile); err != nil {
			return err
		}
		defer flows.close()
	} else {
		var err error
		if in.Desired, err = g.loadTopology(); err != nil {
			return err
		}
	}
	c, err := g.connectAPI(ctx)
	if errors.Is(err, context.Canceled) {
		return fmt.Errorf("%w; nothing was changed", err)
	}
	if err != nil {
		return err
	}
	if in.Saved != nil {
		if err := savedForBroker(ctx, c, in.Saved, planFile); err != nil {
			return err
		}
	}
	opts := g.applyOptions(view, f)
	if flows != nil {
		show := opts.Show
		opts.Show = func(p *plan.Plan) error {
			var err error
			if p.Flows, err = flows.read(); err != nil {
				return err
			}
			return show(p)
		}
	}
	out, err := g.newEngine(c, func(n string) { view.Note("note: " + n) }).Apply(ctx, in, opts)
	if errors.Is(err, context.Canceled) && (out == nil || out.Result == nil) && !strings.Contains(err.Error(), "nothing was changed") {
		// Interrupted before apply began to change anything (taking the
		// locks, reading the broker, counting messages): say so, as a
		// report of an apply interrupted part way says what was done.
		return fmt.Errorf("%w; nothing was changed", err)
	}
	if errors.Is(err, engine.ErrStalePlan) {
		return fmt.Errorf("%s: %w: run \"mqctl plan --out %s\" again and review it", planFile, err, planFile)
	}
	return err
}

// readSavedPlan reads the plan saved in planFile, and keeps the values
// from the environment it holds from every text apply prints about it.
// Its flows are read again from the file to be shown (flows, nil when
// the plan holds them).
func (g *globals) readSavedPlan(planFile string) (_ *plan.Plan, flows *savedFlows, err error) {
	saved, flows := streamSavedPlan(planFile)
	defer func() {
		if err != nil {
			flows.close()
		}
	}()
	if saved == nil {
		if saved, err = readSavedWhole(planFile); err != nil {
			return nil, nil, err
		}
	}
	g.hideValues(saved.Env)
	if saved.Fingerprint == "" {
		// plan --out always writes one: this file was made or edited
		// by hand.
		return nil, nil, fmt.Errorf("%s is not a valid saved plan (it holds no fingerprint of the broker's state, which apply checks the broker against before it changes anything): make it again with \"mqctl plan --out %s\"", planFile, planFile)
	}
	return saved, flows, nil
}

// streamSavedPlan is the plan saved in planFile, read as it streams from
// the file (plan.StreamSaved), which holds no copy of the file; nil when
// it does not read so, or is no regular file (a pipe, <(…), is read
// once: whole, as before). Its flows, there only to be shown, are left
// in the file (plan.StreamSavedFlowsApart), to be read again from there
// (flows) when they are shown, which the file stays open for; flows is
// nil where the plan holds them.
func streamSavedPlan(planFile string) (_ *plan.Plan, flows *savedFlows) {
	if st, err := os.Stat(planFile); err != nil || !st.Mode().IsRegular() {
		return nil, nil
	}
	f, err := os.Open(planFile)
	if err != nil {
		return nil, nil
	}
	sum := sha256.New()
	saved, at, err := plan.StreamSavedFlowsApart(io.TeeReader(f, sum))
	if err != nil || at < 0 {
		f.Close()
		if err != nil {
			return nil, nil
		}
		return saved, nil
	}
	return saved, &savedFlows{name: planFile, f: f, at: at, sum: sum.Sum(nil)}
}

// readSavedWhole reads the plan saved in planFile whole: a file that does
// not read as it streams, to say why it is refused.
func readSavedWhole(planFile string) (*plan.Plan, error) {
	data, err := os.ReadFile(planFile)
	if err != nil {
		return nil, fmt.Errorf("read the saved plan: %w", err)
	}
	saved, err := plan.ReadSavedBytes(data, planFile)
	// A topology or definitions file given as FILE is no saved plan
	// to make again: "mqctl plan --out FILE", ReadSaved's advice,
	// would overwrite it.
	switch {
	case err == nil:
		return saved, nil
	case loader.IsTopology(data):
		return nil, fmt.Errorf("%s is a topology file, not a saved plan: apply it with \"mqctl apply -f %s\" (the FILE argument is a plan saved by \"mqctl plan -f %s --out PLANFILE\")", planFile, planFile, planFile)
	case definitions.Is(data):
		return nil, fmt.Errorf("%s is a RabbitMQ definitions file, not a saved plan: turn it into a topology file with \"mqctl export --from %s > topology.yaml\", then \"mqctl apply -f topology.yaml\"", planFile, planFile)
	default:
		return nil, err
	}
}

// savedForBroker refuses a plan saved against another broker than c's
// (plan.SavedFor) before anything changes.
func savedForBroker(ctx context.Context, c *broker.Client, saved *plan.Plan, planFile string) error {
	b := plan.Broker{Version: c.Version(), Cluster: c.ClusterName()}
	if s := saved.Broker; s != nil && s.Version == b.Version && s.Cluster != b.Cluster {
		b.Nodes = c.ClusterNodes(ctx) // asked only when the names differ
	}
	if why := plan.SavedFor(saved, planFile, b, c.Server()); why != "" {
		return fmt.Errorf("%s; nothing was changed", why)
	}
	return nil
}

// applyOptions are the engine's options for apply with flags f, its hooks
// showing what it does through view, without the values the files took
// from the environment.
func (g *globals) applyOptions(view applyView, f applyFlags) engine.ApplyOptions {
	return engine.ApplyOptions{
		AllowDataLoss: f.allowDataLoss,
		AllowReplace:  f.allowReplace,
		DeleteChanged: f.deleteChanged,
		TakeOverFrom:  f.takeOverFrom,
		NoPreflight:   f.noPreflight,
		Parallelism:   f.parallelism,
		LockTimeout:   f.lockTimeout,
		LockWaiting: func(vhost, holder string) {
			view.Note(fmt.Sprintf("vhost %q is locked by %s; waiting up to %s (--lock-timeout)", vhost, holder, f.lockTimeout))
		},
		Counting: func(queues int) {
			view.Note(fmt.Sprintf("counting the messages of %d quorum %s before deleting or replacing %s: a quorum queue's dead letters waiting for its dead-letter exchange, and on RabbitMQ 4.3 its messages waiting for a delayed retry, are counted only in its statistics, so apply waits until they are refreshed twice (about 10 s with RabbitMQ's default intervals)",
				queues, pluralize("queue", queues), them(queues)))
		},
		Show: func(p *plan.Plan) error {
			p.HideText(g.hideEnv)
			p.Env = g.envValues() // the text and JSON views show what the files wrote
			return view.Plan(p)
		},
		Confirm: view.Confirm,
		Report: func(p *plan.Plan, res *apply.Result) error {
			for i := range res.Failed {
				if err := res.Failed[i].Err; err != nil {
					res.Failed[i].Err = g.hideEnvError(err)
				}
			}
			return view.Report(p, res)
		},
		Progress: func(ev apply.Event) {
			ev.Err = g.hideEnvError(ev.Err)
			view.Step(ev)
		},
		Waiting: func(server string, pending []string) {
			view.Note(fmt.Sprintf("waiting until %s shows %d %s of this apply (it does not show %s yet)",
				server, len(pending), pluralize("change", len(pending)), them(len(pending))))
		},
	}
}

// confirm asks on the terminal whether to apply; anything but "yes"
// cancels.
func (g *globals) confirm(stdout io.Writer) error {
	if !g.env.StdinIsTerminal {
		return errors.New("apply asks for confirmation on a terminal: run it in one, or pass --auto-approve")
	}
	fmt.Fprint(stdout, "\nDo you want to perform these actions? Only 'yes' will be accepted: ")
	answer, _ := bufio.NewReader(g.env.Stdin).ReadString('\n')
	if strings.TrimSpace(answer) != "yes" {
		return &ExitCodeError{Code: ExitError, Err: errors.New("apply cancelled: nothing was changed")}
	}
	return nil
}

// report prints the outcome; a partial apply says what was done, what
// failed (with the broker's reason) and what remains.
func report(w io.Writer, p *plan.Plan, res *apply.Result) error {
	s := p.Summary()
	if res.OK() {
		if p.Empty() {
			fmt.Fprintf(w, "\nRecorded %d existing %s as managed by mqctl.\n", len(p.Adopt), pluralize("object", len(p.Adopt)))
			return nil
		}
		fmt.Fprintf(w, "\nApply complete: %d created, %d updated, %d replaced, %d deleted.\n", s.Create, s.Update, s.Replace, s.Delete)
		return nil
	}
	fmt.Fprintf(w, "\nApply did not finish.\n")
	fmt.Fprintf(w, "Done (%d steps):\n", len(res.Done))
	listSteps(w, res.Done)
	if len(res.Failed) > 0 {
		fmt.Fprintf(w, "Failed (%d):\n", len(res.Failed))
		for _, fl := range res.Failed {
			fmt.Fprintf(w, "  %s: %s\n", fl.Step, failureText(fl.Err))
		}
	}
	if len(res.Remaining) > 0 {
		fmt.Fprintf(w, "Not done (%d steps):\n", len(res.Remaining))
		listSteps(w, res.Remaining)
	}
	if res.RecordErr != nil {
		fmt.Fprintf(w, "Ownership record: %v\n", res.RecordErr)
	}
	return incomplete(res)
}

// incomplete is the error of an apply that did not finish: why, and what
// to do next.
func incomplete(res *apply.Result) error {
	why := fmt.Sprintf("%d %s failed", len(res.Failed), pluralize("step", len(res.Failed)))
	next := "fix the cause and run mqctl apply again"
	switch {
	case unreachable(res.Failed) && !res.Interrupted:
		// The root cause even when the apply also stopped for its lost
		// lock: a broker that goes down takes the lock's connection along.
		why += ": the management API could not be reached"
		next = "run mqctl apply again once it answers"
	case errors.Is(res.Stopped, lock.ErrLost):
		// Another apply may have run since: what is done, and what the
		// file wants, must be read again before anything more changes.
		return fmt.Errorf("apply stopped after %d of %d steps: %s. It sent no request after it found that; another apply may have changed the broker since, so run mqctl plan to see where it is now, then mqctl apply to finish (the steps done and not done are listed above; the next apply records what the steps done made as mqctl's)",
			len(res.Done), len(res.Done)+len(res.Failed)+len(res.Remaining), res.Stopped)
	case res.Stopped != nil:
		why, next = "stopped: "+res.Stopped.Error(), "run mqctl apply again to finish"
	case len(res.Failed) == 0 && errors.Is(res.RecordErr, apply.ErrRecordRaced):
		// Another apply wrote the record meanwhile: what it did must be
		// read before this one's changes are recorded or more is changed.
		return fmt.Errorf("apply wrote its %d %s, but another apply wrote mqctl's ownership record at the same time (see above): nothing was lost; run mqctl plan again to see where the broker is now, then mqctl apply",
			len(res.Done), pluralize("step", len(res.Done)))
	case res.Interrupted:
		why, next = "interrupted", "run mqctl apply again to finish"
	case len(res.Failed) == 0:
		why = "the ownership record could not be written"
	}
	return fmt.Errorf("apply %s after %d of %d steps; nothing was lost: %s, it continues from where the broker is now", why, len(res.Done), len(res.Done)+len(res.Failed)+len(res.Remaining), next)
}

// unreachable reports whether every failure is the management API out of
// reach (no answer, or a write whose outcome could not be told). A write
// the broker answered with a 5xx and that reads back not done
// (apply.ErrNotDone) is the broker refusing it, in reach.
func unreachable(failed []apply.Failure) bool {
	for _, f := range failed {
		if errors.Is(f.Err, apply.ErrNotDone) || !errors.Is(f.Err, broker.ErrUnreachable) && !errors.Is(f.Err, broker.ErrOutcomeUnknown) {
			return false
		}
	}
	return len(failed) > 0
}

// failureText is a failed step's error without the broker client's own
// description of the request, which repeats the step.
func failureText(err error) string {
	var ae *broker.APIError
	if errors.As(err, &ae) && ae.Op != "" {
		return strings.TrimPrefix(err.Error(), ae.Op+": ")
	}
	return err.Error()
}

func listSteps(w io.Writer, steps []apply.Step) {
	const most = 20
	for i, s := range steps {
		if i == most {
			fmt.Fprintf(w, "  … and %d more\n", len(steps)-most)
			return
		}
		fmt.Fprintf(w, "  %s\n", s)
	}
}

// them is the pronoun for n things: "it" or "them".
func them(n int) string {
	if n == 1 {
		return "it"
	}
	return "them"
}

func pluralize(word string, n int) string {
	if n == 1 {
		return word
	}
	return word + "s"
}
