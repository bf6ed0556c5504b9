package cli

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/spf13/cobra"

	"github.com/mqctl/mqctl/pkg/apply"
	"github.com/mqctl/mqctl/pkg/broker"
	"github.com/mqctl/mqctl/pkg/lock"
	"github.com/mqctl/mqctl/pkg/plan"
	"github.com/mqctl/mqctl/pkg/topology"
)

// ErrStalePlan is returned when a saved plan no longer matches the broker.
var ErrStalePlan = errors.New("saved plan is stale")

type applyFlags struct {
	autoApprove   bool
	allowDataLoss bool
	allowReplace  bool
	lockTimeout   time.Duration
	parallelism   int
	quiet         bool
}

func newApplyCmd(g *globals) *cobra.Command {
	var f applyFlags
	cmd := &cobra.Command{
		Use:   "apply [PLANFILE]",
		Short: "Make the broker match the file (or a saved plan), safely and idempotently",
		Long: `apply makes the broker match the file: it plans, shows the plan, asks for
confirmation on a terminal (or --auto-approve), then creates, updates, replaces
and deletes in order (vhosts, exchanges, queues, bindings, policies; deletes in
reverse), printing progress.

Nothing is lost: a queue holding messages or with consumers is never deleted or
replaced without --allow-data-loss (checked again at the moment of deletion),
and an empty queue is replaced only with --allow-replace. Two applies on one
vhost never interleave. Given PLANFILE (from "mqctl plan --out"), apply makes
exactly those changes, and refuses when the broker changed since.`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			planFile := ""
			if len(args) == 1 {
				planFile = args[0]
			}
			return g.runApply(cmd.Context(), cmd.OutOrStdout(), cmd.ErrOrStderr(), planFile, f)
		},
	}
	fs := cmd.Flags()
	fs.BoolVar(&f.autoApprove, "auto-approve", false, "apply without asking for confirmation")
	fs.BoolVar(&f.allowDataLoss, "allow-data-loss", false, "allow deleting or replacing queues that hold messages or have consumers")
	fs.BoolVar(&f.allowReplace, "allow-replace", false, "allow replacing (delete and re-declare) queues and exchanges whose settings cannot change in place")
	fs.DurationVar(&f.lockTimeout, "lock-timeout", 0, "how long to wait while another apply holds a vhost's lock")
	fs.IntVar(&f.parallelism, "parallelism", 8, "concurrent requests within a phase")
	fs.BoolVar(&f.quiet, "quiet", false, "do not print a line per step")
	return cmd
}

func (g *globals) runApply(ctx context.Context, stdout, stderr io.Writer, planFile string, f applyFlags) error {
	var (
		saved   *plan.Plan
		desired *topology.Topology
		scope   []string
	)
	if planFile != "" {
		fh, err := os.Open(planFile)
		if err != nil {
			return fmt.Errorf("read the saved plan: %w", err)
		}
		saved, err = plan.ReadJSON(fh)
		fh.Close()
		if err != nil {
			return fmt.Errorf("%s: %w", planFile, err)
		}
		scope = saved.Vhosts
	} else {
		var err error
		if desired, err = g.loadTopology(); err != nil {
			return err
		}
		scope = desired.VhostNames()
	}
	c, amqpURL, err := g.connect(ctx)
	if err != nil {
		return err
	}
	locks, err := newLocks(ctx, c, amqpURL, f.lockTimeout)
	if err != nil {
		return err
	}
	locks.opts.Waiting = func(vhost, holder string) {
		fmt.Fprintf(stderr, "mqctl: vhost %q is locked by %s; waiting up to %s (--lock-timeout)\n", vhost, holder, f.lockTimeout)
	}
	defer locks.releaseAll()
	existing, err := c.VhostNames(ctx)
	if err != nil {
		return err
	}
	for _, vh := range scope {
		if contains(existing, vh) {
			if err := locks.acquire(ctx, vh); err != nil {
				return err
			}
		}
	}

	var (
		p *plan.Plan
		l *live
	)
	if saved != nil {
		if l, err = readLive(ctx, c, scope); err != nil {
			return err
		}
		if l.info.Fingerprint != saved.Fingerprint {
			return fmt.Errorf("%s: the broker changed since this plan was made (%w): run \"mqctl plan --out %s\" again and review it", planFile, ErrStalePlan, planFile)
		}
		p = saved
		// A node that went down since leaves the fingerprint alone (4.0
		// still lists the queues on it): check again what is out of reach.
		if err := holdBackDownQueues(ctx, c, p, l, stderr); err != nil {
			return err
		}
	} else {
		if p, l, err = planFor(ctx, c, desired, nil, stderr); err != nil {
			return err
		}
	}
	if err := checkTransientQueues(ctx, c, p, existing, stderr); err != nil {
		return err
	}
	// Exact figures for the safety check, read through the locks' AMQP
	// connections (the statistics the plan was made from lag).
	if err := refreshStakes(ctx, p, locks.inspect); err != nil {
		return err
	}
	if err := plan.WriteText(stdout, p, plan.RenderOptions{Color: g.useColor()}); err != nil {
		return err
	}
	if p.Empty() && len(p.Adopt) == 0 {
		return nil
	}
	opts := apply.Options{
		AllowDataLoss: f.allowDataLoss,
		AllowReplace:  f.allowReplace,
		Parallelism:   f.parallelism,
		Records:       l.records,
		PropertiesKey: l.info.PropertiesKey,
		VhostTags:     func(vh string) []string { return l.info.Vhosts[vh].Tags },
		VhostCreated:  locks.acquire,
		Guard:         locks.lost,
		Inspect:       locks.inspect,
	}
	if err := apply.Check(p, opts); err != nil {
		return err
	}
	if !p.Empty() && !f.autoApprove {
		if !g.env.StdinIsTerminal {
			return errors.New("apply asks for confirmation on a terminal: run it in one, or pass --auto-approve")
		}
		fmt.Fprint(stdout, "\nDo you want to perform these actions? Only 'yes' will be accepted: ")
		answer, _ := bufio.NewReader(g.env.Stdin).ReadString('\n')
		if strings.TrimSpace(answer) != "yes" {
			return &ExitCodeError{Code: ExitError, Err: errors.New("apply cancelled: nothing was changed")}
		}
	}
	var mu sync.Mutex
	if !f.quiet {
		fmt.Fprintln(stdout)
		opts.Progress = func(ev apply.Event) {
			mu.Lock()
			defer mu.Unlock()
			if ev.Err != nil {
				fmt.Fprintf(stdout, "  failed: %s: %s\n", ev.Step, failureText(ev.Err))
				return
			}
			fmt.Fprintf(stdout, "  done: %s (%s)\n", ev.Step, ev.Duration.Round(time.Millisecond))
		}
	}
	res := apply.Execute(ctx, c, p, opts)
	if err := report(stdout, p, res); err != nil {
		return err
	}
	return g.waitVisible(ctx, c, stderr, res, p.Vhosts)
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
	why := fmt.Sprintf("%d %s failed", len(res.Failed), pluralize("step", len(res.Failed)))
	next := "fix the cause and run mqctl apply again"
	switch {
	case unreachable(res.Failed) && !res.Interrupted:
		// The root cause even when the apply also stopped for its lost
		// lock: a broker that goes down takes the lock's connection along.
		why += ": the management API could not be reached"
		next = "run mqctl apply again once it answers"
	case res.Stopped != nil:
		why, next = "stopped: "+res.Stopped.Error(), "run mqctl apply again to finish"
	case res.Interrupted:
		why, next = "interrupted", "run mqctl apply again to finish"
	case len(res.Failed) == 0:
		why = "the ownership record could not be written"
	}
	return fmt.Errorf("apply %s after %d of %d steps; nothing was lost: %s, it continues from where the broker is now", why, len(res.Done), len(res.Done)+len(res.Failed)+len(res.Remaining), next)
}

// unreachable reports whether every failure is the management API out of
// reach (no answer, or a write whose outcome could not be told).
func unreachable(failed []apply.Failure) bool {
	for _, f := range failed {
		if !errors.Is(f.Err, broker.ErrUnreachable) && !errors.Is(f.Err, broker.ErrOutcomeUnknown) {
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

func pluralize(word string, n int) string {
	if n == 1 {
		return word
	}
	return word + "s"
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// locks holds the apply locks of the vhosts being changed.
type locks struct {
	mu   sync.Mutex
	c    *broker.Client
	opts lock.Options
	held map[string]*lock.Lock
}

func newLocks(ctx context.Context, c *broker.Client, amqpURL string, wait time.Duration) (*locks, error) {
	opts := lock.Options{URL: amqpURL, Name: lock.DefaultName("apply"), Wait: wait,
		Holder: func(ctx context.Context, vhost string) string { return lockHolder(ctx, c, vhost) }}
	if strings.HasPrefix(amqpURL, "amqps:") {
		opts.TLS = c.TLSConfig()
	}
	return &locks{c: c, opts: opts, held: map[string]*lock.Lock{}}, nil
}

// lockHolder names who holds the apply lock of vhost: its connection once
// the broker reports it (a few seconds after it opened), until then the
// name the holder wrote into the lock queue's arguments.
func lockHolder(ctx context.Context, c *broker.Client, vhost string) string {
	if conn := c.QueueHolder(ctx, vhost, lock.QueueName); conn != "" {
		return conn
	}
	args, err := c.QueueArguments(ctx, vhost, lock.QueueName)
	if err != nil {
		return ""
	}
	if name, ok := args.String(lock.ArgHolder); ok && name != "" {
		return fmt.Sprintf("%q", name)
	}
	return ""
}

func (l *locks) acquire(ctx context.Context, vhost string) error {
	l.mu.Lock()
	_, ok := l.held[vhost]
	l.mu.Unlock()
	if ok {
		return nil
	}
	lk, err := lock.Acquire(ctx, vhost, l.opts)
	if err != nil {
		return err
	}
	l.mu.Lock()
	l.held[vhost] = lk
	l.mu.Unlock()
	return nil
}

func (l *locks) inspect(_ context.Context, vhost, queue, queueType string) (lock.QueueState, error) {
	l.mu.Lock()
	lk := l.held[vhost]
	l.mu.Unlock()
	if lk == nil {
		return lock.QueueState{}, fmt.Errorf("no apply lock held on vhost %q", vhost)
	}
	if queueType == topology.QueueStream {
		return lk.InspectStream(queue, lock.StreamWait)
	}
	return lk.Inspect(queue)
}

// lost returns an error when a held lock's connection has closed: another
// apply could then take the vhost, so no further step may start.
func (l *locks) lost() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	for vh, lk := range l.held {
		if lk.Lost() {
			return fmt.Errorf("the apply lock of vhost %q was lost (its AMQP connection closed), so another apply could interleave", vh)
		}
	}
	return nil
}

func (l *locks) releaseAll() {
	l.mu.Lock()
	defer l.mu.Unlock()
	for vh, lk := range l.held {
		_ = lk.Release()
		delete(l.held, vh)
	}
}
