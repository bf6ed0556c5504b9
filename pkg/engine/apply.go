package engine

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/mqctl/mqctl/pkg/apply"
	"github.com/mqctl/mqctl/pkg/broker"
	"github.com/mqctl/mqctl/pkg/kind"
	"github.com/mqctl/mqctl/pkg/ownership"
	"github.com/mqctl/mqctl/pkg/plan"
	"github.com/mqctl/mqctl/pkg/preflight"
	"github.com/mqctl/mqctl/pkg/topology"
)

// ErrStalePlan is wrapped by Apply's error when a saved plan no longer
// matches the broker.
var ErrStalePlan = errors.New("saved plan is stale")

// ErrIncomplete is Apply's error when the apply did not finish (a step
// failed, it was interrupted or stopped, or the ownership record could
// not be written) and ApplyOptions.Report did not return an error of its
// own: ApplyResult.Result says what was done, what failed and what is
// left.
var ErrIncomplete = errors.New("apply did not finish")

// ApplyInput is what to apply: exactly one of Desired and Saved.
type ApplyInput struct {
	// Desired is the state to reach: Apply plans it (as Plan does, under
	// the locks) and applies that plan. Apply never changes it (as Plan;
	// TestPlanAndApplyLeaveDesired).
	Desired *topology.Topology
	// Saved is a plan made earlier (plan.ReadSaved), applied exactly as it
	// is when the broker has not changed since it was made, and refused
	// (ErrStalePlan) when it has.
	Saved *plan.Plan
}

// ApplyOptions configure Apply. The hooks are called in this order, from
// the goroutine that called Apply (Progress excepted); an error from one
// stops the apply there and is Apply's error.
type ApplyOptions struct {
	// AllowDataLoss lets apply delete or replace queues that hold messages
	// or have consumers.
	AllowDataLoss bool
	// DeleteChanged deletes the objects the file dropped that mqctl managed
	// once and that were changed outside mqctl since (PlanOptions).
	DeleteChanged bool
	// TakeOverFrom takes over another owner's records (PlanOptions).
	TakeOverFrom *string
	// AllowReplace lets apply replace (delete and re-declare) queues and
	// exchanges whose immutable settings changed.
	AllowReplace bool
	// NoPreflight skips the preflight: by default, once the plan passed
	// the safety check and before Confirm, apply asks the broker whether
	// it takes the plan's objects, declaring each distinct shape in a
	// throwaway vhost (pkg/preflight), and changes nothing when it refuses
	// one (a *preflight.RefusedError). A plan whose only shape to try is
	// apply's first write, made alone, needs no throwaway vhost: that
	// write asks the broker, and its refusal, which changes nothing, is a
	// *preflight.RefusedError too (after Confirm).
	NoPreflight bool
	// Parallelism is the number of concurrent requests within a phase
	// (8 when zero).
	Parallelism int
	// LockTimeout is how long to wait while another apply holds a vhost's
	// lock; LockWaiting, when set, is told once per vhost that Apply
	// waits, and for whom.
	LockTimeout time.Duration
	LockWaiting func(vhost, holder string)
	// Counting, when set, is told how many quorum queues the apply waits
	// for, before it waits until their statistics count the messages a
	// passive declare does not see (about 10 s with RabbitMQ's default
	// intervals; see countHidden).
	Counting func(queues int)
	// Show is given the plan once it is final, with the exact messages at
	// stake, before the safety check: a plan that is refused is shown too.
	Show func(*plan.Plan) error
	// Confirm is called once the plan has passed the safety check, right
	// before anything changes; a plan with nothing to change or record
	// never gets here, one that only records existing objects as managed
	// (Plan.Empty, with Plan.Adopt) does. An error stops the apply with
	// nothing changed.
	Confirm func(*plan.Plan) error
	// Progress is told about every finished step, from the goroutines
	// that run them.
	Progress func(apply.Event)
	// Report is given what apply did, before Apply waits until the
	// changes are visible; an error is Apply's error, and it does not
	// wait.
	Report func(*plan.Plan, *apply.Result) error
	// Waiting is told once, with the endpoint read and what it does not
	// show yet, when the changes are not visible at once where later
	// plans read (see Options.Reconnect).
	Waiting func(server string, pending []string)
}

// ApplyResult is what Apply did.
type ApplyResult struct {
	// Plan is the plan applied (or refused): the saved plan, less what
	// was held back (and, once shown, its flows), or the one made from
	// the desired state.
	Plan *plan.Plan
	// Result is what apply did; nil when nothing was attempted.
	Result *apply.Result
	// Preflight is what the preflight found (nil when it did not run).
	Preflight *preflight.Report
}

// touchesBroker reports whether in may change the broker's own objects.
func touchesBroker(in ApplyInput) bool {
	if in.Desired != nil {
		return in.Desired.Declares(kind.User)
	}
	for _, c := range in.Saved.Changes {
		if c.Vhost == "" {
			return true
		}
	}
	for ref := range in.Saved.Prints {
		if ref.Vhost == "" {
			return true
		}
	}
	return in.Saved.KeptChanged || slices.ContainsFunc(in.Saved.Stale, func(r plan.ObjectRef) bool { return r.Vhost == "" }) ||
		slices.ContainsFunc(in.Saved.ChangedOutside, func(o plan.Outside) bool { return o.Vhost == "" })
}

// records are the ownership records an apply may rewrite: the vhosts',
// and the broker's own (users) only when it touches the broker, under the
// default vhost's lock (touchesBroker).
func records(l *Live, touches bool) map[string]*ownership.Record {
	if touches {
		return l.records
	}
	out := make(map[string]*ownership.Record, len(l.records))
	for vh, r := range l.records {
		if vh != "" {
			out[vh] = r
		}
	}
	return out
}

// Apply makes the broker match in, under the apply lock of every vhost it
// changes, released before it returns: it takes the locks of the vhosts
// that exist (a vhost it creates, right after creating it), plans (or
// checks that the saved plan is not stale, and holds back the changes on
// queues gone out of reach since), refuses transient queues on a broker
// that denies them, reads the exact messages at stake through the locks'
// connections, refuses what would lose data or replace objects without
// the options that allow it, executes, and waits until a later plan sees
// every change. The result is returned with the error whenever there is a
// plan. An apply with nothing to do still rewrites an ownership record
// left in an older format (silently: no step, no question, no report).
func (e *Engine) Apply(ctx context.Context, in ApplyInput, o ApplyOptions) (*ApplyResult, error) {
	scope, err := e.scopeOf(in)
	if err != nil {
		return nil, err
	}
	amqpURL, err := e.amqpURL(ctx)
	if err != nil {
		return nil, err
	}
	locks := newLocks(e.c, amqpURL, o.LockTimeout, o.LockWaiting)
	// The locks go first, then the wait for the preflight's throwaway
	// vhost to be deleted (it is no vhost of the apply's).
	var preflightDone func()
	defer func() {
		locks.releaseAll()
		if preflightDone != nil {
			preflightDone()
		}
	}()
	existing, err := e.lockAll(ctx, locks, scope, touchesBroker(in))
	if err != nil {
		return nil, err
	}
	p, l, exactErr, existing, err := e.planLocked(ctx, in, scope, locks, o, existing)
	if err != nil {
		return nil, err
	}
	out := &ApplyResult{Plan: p}
	if err := e.refuse(ctx, p, existing, exactErr); err != nil {
		return out, err
	}
	if err := e.checkLosses(ctx, p, l, o, locks); err != nil {
		return out, err
	}
	if o.Show != nil {
		if err := o.Show(p); err != nil {
			return out, err
		}
	}
	if in.Saved != nil {
		// A saved plan's flows are there to be shown, and nothing after
		// Show reads them: they go before the changes are made (11 MB
		// and more of the 50,002-object replace plan's 45).
		p.Flows = nil
	}
	recs := records(l, touchesBroker(in))
	if p.Empty() && len(p.Adopt) == 0 {
		e.cleanUp(ctx, p, l, locks, recs)
		return out, nil
	}
	opts := e.applyOptions(ctx, p, o, l, locks, recs)
	if err := apply.Check(p, opts); err != nil {
		return out, err
	}
	if err := locks.checkFirst(ctx, p); err != nil {
		return out, err
	}
	var first *plan.Change
	if !o.NoPreflight {
		var err error
		if first, preflightDone, err = e.preflightApply(ctx, p, l, amqpURL, opts, out); err != nil {
			return out, err
		}
	}
	return out, e.executeAndPutBack(ctx, p, l, o, opts, first, locks, recs, out)
}

// checkLosses counts into p the messages its queues hold where a passive
// declare does not see them (countHidden), for apply.Check to refuse
// losing them, and refuses the policy changes that lose messages
// (checkPolicyLosses), unless o allows data loss.
func (e *Engine) checkLosses(ctx context.Context, p *plan.Plan, l *Live, o ApplyOptions, locks *locks) error {
	if err := e.countHidden(ctx, p, l, o); err != nil {
		return err
	}
	return e.checkPolicyLosses(ctx, p, l, o, locks.inspect)
}

// cleanUp is an apply with nothing to do: it still rewrites the ownership
// records that need it (cleanRecords), and, while the locks hold,
// declares again the bindings of the restore lists earlier applies left
// (putBack).
func (e *Engine) cleanUp(ctx context.Context, p *plan.Plan, l *Live, locks *locks, recs map[string]*ownership.Record) {
	e.cleanRecords(ctx, p, l, locks, recs)
	if locks.lost() == nil {
		e.putBack(broker.WithWriteGuard(ctx, locks.lost), l.State(), recs, nil, nil, true)
	}
}

// applyOptions are executeOptions, with the fix that keeps the messages
// of a queue Check refuses because they cannot be drained.
func (e *Engine) applyOptions(ctx context.Context, p *plan.Plan, o ApplyOptions, l *Live, locks *locks, recs map[string]*ownership.Record) apply.Options {
	opts := executeOptions(o, l, locks, recs)
	if !o.AllowDataLoss {
		// A queue Check refuses for its messages that cannot be drained
		// gets the fix that keeps them.
		if at := e.stoppedAtStake(ctx, p); at != nil {
			opts.Undrainable = func(vhost, queue string) string { return at[queueRef{vhost, queue}] }
		}
	}
	return opts
}

// preflightApply asks the broker, in a throwaway vhost, whether it takes
// p's objects, before the first change; out.Preflight is its answer, and
// a refusal its error. first is the write left to be its own trial
// (apply.FirstAlone); done waits for the throwaway vhost to be deleted,
// which goes on while the apply does (set even with an error).
func (e *Engine) preflightApply(ctx context.Context, p *plan.Plan, l *Live, amqpURL string, opts apply.Options, out *ApplyResult) (first *plan.Change, done func(), err error) {
	first = apply.FirstAlone(p, opts)
	rep, done, err := e.preflight(ctx, p, l, amqpURL, first, "Pass --no-preflight to leave the preflight out")
	out.Preflight = rep
	if err != nil {
		return first, done, err
	}
	if len(rep.Refusals) > 0 {
		return first, done, &preflight.RefusedError{Report: rep}
	}
	return first, done, nil
}

// executeAndPutBack carries p out (execute) and then, while the locks
// hold, puts back the bindings the replaces took down. Those that only
// this plan knows are written down before the first change, and put back
// from there, once the apply is over, with those an earlier apply stopped
// during a replace left (restore.go).
func (e *Engine) executeAndPutBack(ctx context.Context, p *plan.Plan, l *Live, o ApplyOptions, opts apply.Options, first *plan.Change, locks *locks, recs map[string]*ownership.Record, out *ApplyResult) error {
	var written map[string][]string
	before := func(ctx context.Context) (err error) {
		written, err = e.writeRestoreLists(broker.WithWriteGuard(ctx, locks.lost), p, recs)
		return err
	}
	err := e.execute(ctx, p, opts, first, o, out, before)
	if out.Result != nil && locks.lost() == nil {
		e.putBack(broker.WithWriteGuard(ctx, locks.lost), l.State(), recs, written, foreignTakenDown(p, recs), applyComplete(out.Result))
	}
	return err
}

// planLocked makes the plan under the locks of the vhosts existing (those
// that existed when the locks were taken). A vhost of the scope that
// another apply created once the locks were taken (absent then, so not
// locked) is read as existing, and this plan would write in it unlocked,
// before that apply has even granted itself permissions there (met on
// 4.3.6: "Access refused" on the first declaration). Its lock is taken
// now (that apply holds it until it is done) and the plan made again
// under it; existing is returned with it.
func (e *Engine) planLocked(ctx context.Context, in ApplyInput, scope []string, locks *locks, o ApplyOptions, existing []string) (p *plan.Plan, l *Live, exactErr error, locked []string, err error) {
	for {
		if p, l, exactErr, err = e.planUnderLocks(ctx, in, scope, locks, o); err != nil {
			return nil, nil, nil, nil, err
		}
		var appeared []string
		for _, vh := range scope {
			if _, ok := l.State().Vhosts[vh]; ok && !slices.Contains(existing, vh) {
				appeared = append(appeared, vh)
			}
		}
		if len(appeared) == 0 {
			return p, l, exactErr, existing, nil
		}
		for _, vh := range appeared {
			if err := acquireCreated(ctx, locks, vh); err != nil {
				return nil, nil, nil, nil, err
			}
			existing = append(existing, vh)
		}
	}
}

// acquireCreated takes the lock of vhost vh, which another apply has just
// created: that apply grants its user permissions there right after, so a
// refusal of access to the vhost is asked again for a few seconds.
func acquireCreated(ctx context.Context, locks *locks, vh string) error {
	err := locks.acquire(ctx, vh)
	for wait := 100 * time.Millisecond; err != nil && accessRefused(err) && wait <= 2*time.Second; wait *= 2 {
		select {
		case <-ctx.Done():
			return err
		case <-time.After(wait):
		}
		err = locks.acquire(ctx, vh)
	}
	return err
}

// accessRefused reports whether err is the broker's refusal of a
// connection to a vhost where the user has no permissions.
func accessRefused(err error) bool {
	s := err.Error()
	return strings.Contains(s, "access to vhost") && strings.Contains(s, "refused for user")
}

// scopeOf is the vhosts an apply of in plans: the desired state's, or the
// saved plan's (whose secrets it resolves from the environment).
func (e *Engine) scopeOf(in ApplyInput) ([]string, error) {
	switch {
	case (in.Desired == nil) == (in.Saved == nil):
		return nil, errors.New("engine: apply needs either a desired state or a saved plan")
	case in.Saved != nil && in.Saved.Fingerprint == "":
		return nil, errors.New("engine: the saved plan holds no fingerprint of the broker's state to be checked against: make it to be saved (PlanOptions.Save)")
	case in.Saved != nil:
		if err := resolveSecrets(in.Saved, e.opts.LookupEnv); err != nil {
			return nil, err
		}
		return in.Saved.Vhosts, nil
	default:
		return in.Desired.VhostNames(), nil
	}
}

// refuse says why p must not be carried out, found before anything
// changes: a vhost it could not see, transient queues on a broker that
// denies them, or exact reads of what is at stake that failed (exactErr).
func (e *Engine) refuse(ctx context.Context, p *plan.Plan, existing []string, exactErr error) error {
	if err := e.refuseUnseenVhosts(p); err != nil {
		return err
	}
	if err := e.checkTransientQueues(ctx, p, existing); err != nil {
		return err
	}
	return exactErr
}

// executeOptions are apply's options for a plan made under locks from l:
// the user's choices, the records it may rewrite, and the locks that
// guard each vhost and read its queues.
func executeOptions(o ApplyOptions, l *Live, locks *locks, recs map[string]*ownership.Record) apply.Options {
	return apply.Options{
		AllowDataLoss: o.AllowDataLoss,
		AllowReplace:  o.AllowReplace,
		Parallelism:   o.Parallelism,
		Progress:      o.Progress,
		Records:       recs,
		PropertiesKey: l.current.PropertiesKey,
		Current:       func(k plan.Kind, vh, name string) plan.Object { return plan.ObjectOf(l.current.State, k, vh, name) },
		VhostCreated:  locks.acquire,
		Guard:         locks.lost,
		Inspect:       locks.inspect,
	}
}

// execute asks o.Confirm, carries p out, hands the result to o.Report and
// waits until a later plan sees every change; the result is out's. first
// is the write the preflight left to be its own trial
// (apply.FirstAlone): refused alone, it changed nothing, and is reported
// as the preflight's refusal.
func (e *Engine) execute(ctx context.Context, p *plan.Plan, opts apply.Options, first *plan.Change, o ApplyOptions, out *ApplyResult, before func(context.Context) error) error {
	if o.Confirm != nil {
		if err := o.Confirm(p); err != nil {
			return err
		}
	}
	if err := before(ctx); err != nil {
		return err
	}
	out.Result = apply.Execute(ctx, e.c, p, opts)
	if rep := out.Preflight; rep != nil && len(out.Result.Done) == 0 && len(out.Result.Failed) == 1 &&
		out.Result.Failed[0].Step.Change == first && preflight.Refused(rep, first, out.Result.Failed[0].Err) {
		return &preflight.RefusedError{Report: rep}
	}
	if o.Report != nil {
		if err := o.Report(p, out.Result); err != nil {
			return err
		}
	}
	if !out.Result.OK() {
		return ErrIncomplete
	}
	return e.waitVisible(ctx, out.Result, p.Vhosts, o.Waiting)
}

// lockAll takes the lock of every vhost of scope that exists, and of the
// default vhost when the apply writes the broker's own objects, in one
// order for every apply (no deadlock). It returns the vhosts that exist.
func (e *Engine) lockAll(ctx context.Context, locks *locks, scope []string, brokerWide bool) (existing []string, err error) {
	existing, err = e.c.VhostNames(ctx)
	if err != nil {
		return nil, err
	}
	lockVhosts := slices.Clone(scope)
	if brokerWide && !slices.Contains(lockVhosts, "/") {
		// The broker's own objects (users) and their record (one global
		// parameter, replaced whole) have no vhost: two applies that write
		// them take the default vhost's lock, so that neither loses the
		// other's record.
		lockVhosts = append(lockVhosts, "/")
		slices.Sort(lockVhosts)
	}
	for _, vh := range lockVhosts {
		if slices.Contains(existing, vh) {
			if err := locks.acquire(ctx, vh); err != nil {
				return nil, err
			}
		}
	}
	return existing, nil
}

// planUnderLocks is the plan an apply carries out, made or checked under
// its locks: a saved plan, checked against the broker's fingerprint, or a
// fresh diff. Exact figures for the safety check are read through the
// locks' AMQP connections (the statistics lag): for a saved plan over its
// plan's statistics, for a fresh diff while the statistics are read. A
// failure of those reads is exactErr, reported once the plan is known.
func (e *Engine) planUnderLocks(ctx context.Context, in ApplyInput, scope []string, locks *locks, o ApplyOptions) (p *plan.Plan, l *Live, exactErr, err error) {
	if in.Saved == nil {
		var known stakes
		if p, l, known, err = e.diff(ctx, in.Desired, nil, plan.Options{DeleteChanged: o.DeleteChanged}, o.TakeOverFrom, locks.open, nil); err != nil {
			return nil, nil, nil, err
		}
		// No saved plan to compare with: the copy of the read the prints
		// are made of goes before the apply.
		l.forgetPrints()
		// What the user may not write, which the broker would refuse
		// only once the changes before it were made.
		if err := e.checkPermissions(ctx, p, l); err != nil {
			known.exact.abandon()
			return nil, nil, nil, err
		}
		cur := l.current
		cur.Here = e.here(ctx, in.Desired, cur.State)
		cur.Env = in.Desired.Env // the flows' words show what the file wrote for them
		p.SetFlows(cur, e.c.RabbitMQVersion())
		if exactErr, err = e.readStakes(ctx, p, l, known); err != nil {
			return nil, nil, nil, err
		}
		return p, l, exactErr, nil
	}
	if l, err = e.ReadLive(ctx, scope); err != nil {
		return nil, nil, nil, err
	}
	var take *plan.TakeOver
	if t := in.Saved.TakeOver; t != nil {
		take = &plan.TakeOver{From: t.From, Users: t.Users}
	}
	l.useOwner(in.Saved.Owner, take)
	if l.fingerprintLike(in.Saved.Fingerprint) != in.Saved.Fingerprint {
		return nil, nil, nil, fmt.Errorf("the broker changed since this plan was made: %s (%w)", l.staleObjects(in.Saved, e.c.IsAdmin()), ErrStalePlan)
	}
	l.forgetPrints()
	p = in.Saved
	shareWithBroker(p, l.current.State)
	e.deleteQueuesFirst(p, &l.current.Live)
	// A node that went down since leaves the fingerprint alone (4.0
	// still lists the queues on it): check again what is out of reach.
	known, err := e.holdBack(ctx, p, l, locks.open)
	if err != nil {
		return nil, nil, nil, err
	}
	if err := e.checkPermissions(ctx, p, l); err != nil {
		known.exact.abandon()
		return nil, nil, nil, err
	}
	return p, l, known.exact.merge(p, nil), nil
}

// cleanRecords rewrites, under the locks held, the ownership records of
// the vhosts read when the apply has nothing else to do (otherwise
// apply.Execute rewrites them with the rest) but a record is in an older
// format, or lists objects that are gone or were changed outside mqctl,
// or lacks the prints of objects the file names (plan.Plan.Records). It
// changes only the records; a failure is a note, and the next apply tries
// again.
func (e *Engine) cleanRecords(ctx context.Context, p *plan.Plan, l *Live, locks *locks, recs map[string]*ownership.Record) {
	outdated := false
	for _, rc := range p.RecordChanges() {
		// The restore lists are putBack's, not the record's.
		outdated = outdated || rc.Cause != plan.RecordRestore
	}
	for _, r := range recs {
		// An old format, or a swap an apply stopped half way left as two
		// exchanges (apply.Execute finishes it: plannedRecords).
		outdated = outdated || r.Outdated() || r != nil && len(r.Exchanges) > 1
	}
	if !outdated || locks.lost() != nil {
		return
	}
	res := apply.Execute(ctx, e.c, &plan.Plan{Vhosts: l.scope, Owner: p.Owner, Stale: p.Stale, ChangedOutside: p.ChangedOutside, Others: p.Others, Prints: p.Prints, Kept: p.Kept, KeptChanged: p.KeptChanged},
		apply.Options{Records: recs, Guard: locks.lost})
	if res.RecordErr != nil {
		e.note("mqctl's ownership record is left as it was, which this mqctl reads too (the next apply tries again): %v", res.RecordErr)
	}
}
