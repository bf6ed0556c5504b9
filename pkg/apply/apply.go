package apply

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mqctl/mqctl/pkg/broker"
	"github.com/mqctl/mqctl/pkg/broker/driver"
	"github.com/mqctl/mqctl/pkg/kind"
	"github.com/mqctl/mqctl/pkg/lock"
	"github.com/mqctl/mqctl/pkg/ownership"
	"github.com/mqctl/mqctl/pkg/plan"
	"github.com/mqctl/mqctl/pkg/topology"
)

// ErrRefused is wrapped by every safety refusal.
var ErrRefused = errors.New("refused to lose data")

// Options configure an apply.
type Options struct {
	// AllowDataLoss lets apply delete or replace queues that hold messages
	// or have consumers.
	AllowDataLoss bool
	// AllowReplace lets apply replace (delete and re-declare) queues and
	// exchanges whose immutable settings changed.
	AllowReplace bool
	// Parallelism is the number of concurrent requests within a phase.
	Parallelism int
	// Progress is told about every finished step.
	Progress func(Event)
	// Inspect reads a queue's state right before it is deleted (AMQP
	// passive declare; for a stream, of type topology.QueueStream, also a
	// read from its first offset); nil uses the management API's
	// statistics only.
	Inspect func(ctx context.Context, vhost, queue, queueType string) (lock.QueueState, error)
	// PropertiesKey looks up a binding's properties_key read with the
	// state; when it has none, apply asks the broker (one listing of the
	// vhost's bindings where it deletes listKeysFrom or more of them).
	PropertiesKey func(vhost string, b *topology.Binding) (string, bool)
	// Current gives the object of kind k named name in vhost as the
	// broker holds it now (read with the state apply runs from; nil when
	// it holds none): a write whose driver keeps what the broker holds
	// (driver.Driver.KeepsCurrent: a vhost's tags a file leaves out)
	// starts from it. Nil: from the object as the plan saw it.
	Current func(k plan.Kind, vhost, name string) plan.Object
	// VhostCreated runs right after apply creates a vhost (to take its lock).
	VhostCreated func(ctx context.Context, vhost string) error
	// Guard, when set, is asked before every step and before every write
	// request a step (or the ownership record) makes, right before it goes
	// out (broker.WithWriteGuard); an error stops apply: no further
	// request goes out, the steps not yet done are left undone (reported
	// as Remaining, not as failures) and the ownership record is left as it
	// was (e.g. the apply lock was lost, so another apply could have
	// started: nothing may change any more). A step under way for
	// lateAfter or more is followed by one more ask.
	Guard func() error
	// Records are the ownership records read with the state, per vhost.
	Records map[string]*ownership.Record
	// Undrainable says why queue of vhost, which holds messages, cannot be
	// drained, and the fix that keeps them ("" for a queue that can be):
	// Check gives it instead of "drain it first". Nil: every queue can.
	Undrainable func(vhost, queue string) string
	// BulkDeclares is the number of declarations (exchanges, queues,
	// bindings) in a vhost from which apply makes them over AMQP rather
	// than through the management API; 0 means DefaultBulkDeclares, a
	// negative number never.
	BulkDeclares int
}

// DefaultBulkDeclares is where declaring over AMQP starts to pay: one
// connection to open per vhost, then each declaration costs the broker
// less than a management API request does (4.0.5, 10,000 objects: 15 s
// over AMQP, 19-20 s through the API). Below it, the difference is under
// a second, and the API, whose every request apply can read back, is used.
const DefaultBulkDeclares = 1000

// Event reports one finished step.
type Event struct {
	Step     Step
	Err      error
	Duration time.Duration
}

// Failure is a step that failed, with the broker's reason.
type Failure struct {
	Step Step
	Err  error
}

// Result is what an apply did.
type Result struct {
	Done      []Step
	Failed    []Failure
	Remaining []Step
	// Interrupted is true when the context was cancelled (Ctrl-C): the
	// steps in flight were finished, no new one was started.
	Interrupted bool
	// Stopped is the Guard's error when it stopped the apply; it also
	// names the steps done that finished late, after a pause in which
	// the guard's condition may have failed (see lateAfter): made before
	// it, when their requests went out at once after the guard's yes, or
	// maybe after, when one went out long after (lateSteps).
	Stopped error
	// RecordErr is set when the ownership record could not be written.
	RecordErr error
}

// OK reports whether everything was applied.
func (r *Result) OK() bool {
	return len(r.Failed) == 0 && len(r.Remaining) == 0 && !r.Interrupted && r.Stopped == nil && r.RecordErr == nil
}

// Check refuses a plan that would lose data or replace objects without the
// flags that allow it, before anything is changed. The error lists every
// refused change with what forced it and what to do instead.
func Check(p *plan.Plan, opts Options) error {
	var refusals []string
	successor := p.Successors()
	for _, c := range p.Changes {
		if _, ok := objectOf(c.Kind); !ok {
			// A plan from a newer mqctl, or a kind missing its apply steps.
			refusals = append(refusals, fmt.Sprintf("%s %q in vhost %q: %v", c.Kind, c.Name, c.Vhost, kind.Unknown("apply step", c.Kind)))
			continue
		}
		// Both refusals of one change are listed, so that one re-run with
		// the right flags goes through.
		if c.Action == plan.Replace && !opts.AllowReplace {
			refusals = append(refusals, fmt.Sprintf("%s %q in vhost %q must be replaced (deleted and declared again): %s; pass --allow-replace to do it", c.Kind, c.Name, c.Vhost, c.Reason))
		}
		if (c.Action == plan.Replace || c.Action == plan.Delete) && (c.Messages > 0 || c.Consumers > 0) && !opts.AllowDataLoss {
			keep := ""
			if c.Action == plan.Replace && c.Kind.HoldsMessages() {
				keep = " (or keep them: declare the new settings under a new queue name with the same bindings, and plan: it says how to move the messages there)"
			}
			fix := stakeFix(c.Messages, c.Consumers, keep)
			if c.Messages > 0 {
				if to, created := successor(&c); to != "" {
					fix = moveFix(c, to, created)
				}
			}
			if opts.Undrainable != nil && c.Kind.HoldsMessages() {
				if why := opts.Undrainable(c.Vhost, c.Name); why != "" {
					fix = "it cannot be drained: " + why + "; keep it in the file as the broker holds it until then, or pass --allow-data-loss to drop them"
				}
			}
			refusals = append(refusals, fmt.Sprintf("%s %q in vhost %q would be %sd but holds %s and has %d %s: %s",
				c.Kind, c.Name, c.Vhost, c.Action, c.MessagesText(), c.Consumers, plural("consumer", c.Consumers), fix))
		}
	}
	if len(refusals) == 0 {
		return nil
	}
	return &RefusalError{Refusals: refusals}
}

// RefusalError lists the changes apply will not make without a flag.
type RefusalError struct{ Refusals []string }

func (e *RefusalError) Error() string {
	return fmt.Sprintf("nothing was changed: %d %s refused:\n  %s", len(e.Refusals), plural("change", int64(len(e.Refusals))), strings.Join(e.Refusals, "\n  "))
}

func (e *RefusalError) Unwrap() error { return ErrRefused }

func plural(w string, n int64) string {
	if n == 1 {
		return w
	}
	return w + "s"
}

// FirstAlone returns the change whose write Execute(p, opts) makes first,
// alone in its phase and in one step (a create or an in-place update),
// when no ownership record must be rewritten unless a step is done: if
// the broker refuses that write, Execute stops there, and everything is
// as it was. nil when the plan does not start so.
func FirstAlone(p *plan.Plan, opts Options) *plan.Change {
	phases := Order(p)
	if len(phases) == 0 || len(phases[0]) != 1 {
		return nil
	}
	s := phases[0][0]
	if s.Delete || s.Restore || (s.Change.Action != plan.Create && s.Change.Action != plan.Update) {
		return nil
	}
	// A write the record must follow is not alone (the cheap tests first:
	// plannedRecords copies the vhost's whole record).
	if len(p.Prints) > 0 || len(p.Stale) > 0 || len(p.Adopt) > 0 || p.KeptChanged {
		return nil
	}
	if _, vhosts := (&executor{opts: opts}).plannedRecords(p); len(vhosts) > 0 {
		return nil
	}
	return s.Change
}

// Execute carries out p on c, phase by phase. It stops after the phase in
// which a step failed (later phases depend on it), or when ctx is
// cancelled (after the steps in flight). The ownership record of every
// vhost it touched is then rewritten to match what was actually done.
func Execute(ctx context.Context, c *broker.Client, p *plan.Plan, opts Options) *Result {
	if opts.Parallelism <= 0 {
		opts.Parallelism = 8
	}
	e := &executor{c: c, opts: opts, p: p}
	res := &Result{}
	phases := Order(p)
	// left is what the run did not reach, phase by phase: the steps the
	// last phase run did not start, then the phases not begun.
	var left [][]Step
	if vhosts := bulkDeclares(phases, opts.BulkDeclares); len(vhosts) > 0 {
		e.amqp, e.amqpVhosts = c.Declarer(lock.DefaultName("apply")), vhosts
		defer e.amqp.Close()
	}
	defer func() {
		if e.marksAMQP != nil {
			e.marksAMQP.Close()
		}
	}()
	for i, phase := range phases {
		if ctx.Err() != nil {
			res.Interrupted = true
		}
		if res.Stopped == nil && opts.Guard != nil && e.guard() != nil {
			res.Stopped = e.stopped()
		}
		if res.Interrupted || len(res.Failed) > 0 || res.Stopped != nil || e.stopped() != nil {
			if res.Stopped == nil {
				res.Stopped = e.stopped()
			}
			left = append(left, phases[i:]...)
			break
		}
		e.listKeys(ctx, phase)
		done, failed, notRun := e.runPhase(ctx, phase)
		res.Done = append(res.Done, done...)
		res.Failed = append(res.Failed, failed...)
		if len(notRun) > 0 {
			left = append(left, notRun)
		}
		if len(notRun) > 0 && ctx.Err() != nil {
			res.Interrupted = true
		}
	}
	if res.Stopped == nil {
		res.Stopped = e.stopped()
	}
	if res.Stopped == nil && !unreachable(res.Failed) {
		left = e.finishReplaces(ctx, res, left)
	}
	for _, ph := range left {
		res.Remaining = append(res.Remaining, ph...)
	}
	if len(res.Remaining) == 0 {
		// The interruption came during the last phase, and the replaces
		// under way were all that was left: the apply is complete.
		res.Interrupted = false
	}
	// The record is written even after a failure or an interruption, so it
	// always describes what exists; it must not be cut short itself. Not
	// once the guard stopped the apply: another apply may be writing it
	// (the next plan finds what was done and records it: plan.Plan.Adopt).
	if res.Stopped == nil {
		res.RecordErr = e.writeRecords(e.guarded(context.WithoutCancel(ctx)), p, res)
		res.Stopped = e.stopped()
	}
	if res.Stopped != nil {
		res.Stopped = e.lateSteps(res.Stopped)
	}
	return res
}

// lateAfter is how long a step may take before the guard is asked again
// once it is done: a step that long was under way while the process was
// paused (Ctrl-Z) or its host hung, and its requests may have gone out
// only after the pause, when the guard's condition (the apply lock) may
// already have failed. Steps take milliseconds; the lock is lost only
// after 20 s or more without a word from the process (lock.Lock.Check).
const lateAfter = 5 * time.Second

// errStopped wraps the Guard's error in the steps it stopped.
type errStopped struct{ err error }

func (e *errStopped) Error() string { return e.err.Error() }
func (e *errStopped) Unwrap() error { return e.err }

// guard asks Options.Guard; its first error is kept (stopped) and the
// error returned wraps it in errStopped.
func (e *executor) guard() error {
	if e.opts.Guard == nil {
		return nil
	}
	e.mu.Lock()
	stopped := e.stop
	e.mu.Unlock()
	if stopped == nil {
		err := e.opts.Guard()
		if err == nil {
			return nil
		}
		e.mu.Lock()
		if e.stop == nil {
			e.stop = err
		}
		stopped = e.stop
		e.mu.Unlock()
	}
	return &errStopped{err: stopped}
}

// guarded is ctx under which every write asks the guard first.
func (e *executor) guarded(ctx context.Context) context.Context {
	if e.opts.Guard == nil {
		return ctx
	}
	return broker.WithWriteGuard(ctx, e.guard)
}

// lateStep is a step done that took lateAfter or more, after which the
// Guard said no: atOnce when each of its write requests went out at once
// after the guard let it through (writeLag), so before the pause.
type lateStep struct {
	Step
	atOnce bool
}

// writeLag gathers the times of a step's write requests
// (broker.WithWriteTimes).
type writeLag struct {
	mu     sync.Mutex
	writes int
	lag    time.Duration // the longest from a guard's yes to its request out
}

func (w *writeLag) record(t broker.WriteTimes) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.writes++
	w.lag = max(w.lag, t.Sent.Sub(t.Guarded))
}

// atOnce reports whether every write request of the step went out within
// lateAfter of the guard's yes right before it: the guard's condition (the
// apply lock, confirmed by the broker at most a second before its yes,
// and lost only after 20 s or more without a word from the process) held
// when it went out. A step none of whose writes was seen is not.
func (w *writeLag) atOnce() bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.writes > 0 && w.lag < lateAfter
}

// lateSteps adds to stop, the Guard's error, the steps done that finished
// late (lateAfter): those whose requests all went out at once after the
// guard's yes were made before it said no, only their answers came late
// (the process paused while it waited for them); the others, a request of
// which went out lateAfter or more after the guard's yes (the process
// paused in between), may have been made after.
func (e *executor) lateSteps(stop error) error {
	e.mu.Lock()
	late := slices.Clone(e.late)
	e.mu.Unlock()
	if len(late) == 0 {
		return stop
	}
	slices.SortStableFunc(late, func(a, b lateStep) int { return strings.Compare(a.String(), b.String()) })
	var before, after []string
	for _, s := range late {
		if s.atOnce {
			before = append(before, s.String())
		} else {
			after = append(after, s.String())
		}
	}
	var parts []string
	if len(before) > 0 {
		verb, reqs := "was", "its requests went"
		if len(before) > 1 {
			verb, reqs = "were", "their requests went"
		}
		parts = append(parts, fmt.Sprintf("%s %s made before it (%s out at once, before the pause; only the answers came late): %s",
			countSteps(len(before), len(late)), verb, reqs, strings.Join(before, "; ")))
	}
	if len(after) > 0 {
		of := "it"
		if len(after) > 1 {
			of = "each"
		}
		parts = append(parts, fmt.Sprintf("%s may have been made after it (a request of %s went out %s or more after the lock was last checked, across the pause): %s",
			countSteps(len(after), len(late)), of, lateAfter, strings.Join(after, "; ")))
	}
	return fmt.Errorf("%w; %d %s done had been under way for %s or more when that was found: %s",
		stop, len(late), plural("step", int64(len(late))), lateAfter, strings.Join(parts, "; and "))
}

// countSteps names n of the total steps: "it" when it is all of one,
// "both" or "all N" for all, else "N".
func countSteps(n, total int) string {
	switch {
	case n == total && n == 1:
		return "it"
	case n == total && n == 2:
		return "both"
	case n == total:
		return fmt.Sprintf("all %d", n)
	}
	return strconv.Itoa(n)
}

// finishReplaces completes, once an apply stopped early (interrupted, or
// a step failed), the replaces whose delete half was done: it declares
// their objects again and restores the bindings they took down (those
// whose either end it deleted), phase by phase, even though ctx was
// cancelled, and leaves every other step of left undone. Stopping between
// the halves would leave the broker without the bindings the file does
// not hold (another team's queue bound to a replaced exchange): the plan
// listed them from the object it took down, the next plan cannot know
// them. It returns the steps still not done, phase by phase.
func (e *executor) finishReplaces(ctx context.Context, res *Result, left [][]Step) [][]Step {
	deleted := map[plan.ObjectRef]bool{}
	for _, s := range res.Done {
		if s.Delete && s.Change != nil && s.Change.Action == plan.Replace {
			deleted[s.Change.Ref()] = true
		}
	}
	if len(deleted) == 0 {
		return left
	}
	completes := func(s Step) bool {
		switch {
		case s.Delete || s.Change == nil:
			return false
		case s.Restore:
			source, dest := plan.BindingEnds(s.Vhost, s.Binding)
			return deleted[source] || deleted[dest]
		}
		return s.Change.Action == plan.Replace && deleted[s.Change.Ref()]
	}
	run := context.WithoutCancel(ctx)
	var rest [][]Step
	for _, ph := range left {
		var finish, skip []Step
		for _, s := range ph {
			if completes(s) {
				finish = append(finish, s)
			} else {
				skip = append(skip, s)
			}
		}
		if len(finish) > 0 && e.stopped() == nil {
			e.listKeys(run, finish)
			done, failed, notRun := e.runPhase(run, finish)
			res.Done = append(res.Done, done...)
			res.Failed = append(res.Failed, failed...)
			skip = append(skip, notRun...)
		} else {
			skip = append(skip, finish...)
		}
		rest = append(rest, skip)
	}
	return rest
}

// unreachable reports whether a step failed because the management API
// could not be reached, or left a write's outcome unknown: no further
// step is worth trying.
func unreachable(failed []Failure) bool {
	for _, f := range failed {
		if errors.Is(f.Err, broker.ErrUnreachable) || errors.Is(f.Err, broker.ErrOutcomeUnknown) {
			return true
		}
	}
	return false
}

type executor struct {
	c    *broker.Client
	opts Options

	mu   sync.Mutex
	stop error // the Guard's error, once it said no
	// late are the steps done that took lateAfter or more, after which
	// the Guard said no.
	late []lateStep
	// policyMu serialises the policy writes of each vhost: RabbitMQ 4.0
	// reads a vhost's policies before the transaction that applies them
	// to its queues and exchanges (rabbit_policy:update_matched_objects at
	// v4.0.5), so two policies put at once can leave a queue under the
	// policies only one of them saw — a dead-letter exchange or a limit
	// silently missing.
	policyMu map[string]*sync.Mutex

	// amqp declares exchanges, queues and bindings in amqpVhosts, the
	// vhosts where the plan declares many (see bulkDeclares).
	amqp       *broker.Declarer
	amqpVhosts map[string]bool

	// keys are the properties_keys of the bindings of the vhosts where a
	// phase deletes many bindings that Options.PropertiesKey does not know
	// (listKeys); written before the phase runs, read during it.
	keys map[string]map[string]string

	// marks are the exchanges of each vhost whose delete the broker marks
	// as in progress (deleteMarks).
	marksMu sync.Mutex
	marks   map[string]map[string]bool
	// marksAMQP is declaredDespiteMark's connection, where there is no
	// amqp; opened when first needed.
	marksAMQP *broker.Declarer

	// p is the plan being carried out; done, the steps done so far (for
	// the records written at once: recordAtOnce).
	p    *plan.Plan
	done []Step
	// recordMu serialises the writes of the records; wrote holds, per
	// vhost, the record as apply last wrote it, which the next write of
	// that vhost's record follows (in place of Options.Records).
	recordMu sync.Mutex
	wrote    map[string]*ownership.Record
	// created are the objects of SPEC §9 this apply created (noteCreated):
	// the records list them as mqctl's (ownership.Record.Created).
	created map[plan.ObjectRef]bool
}

// listKeysFrom is how many bindings of one vhost, whose properties_key the
// state read does not hold, a phase deletes for apply to list the vhost's
// bindings once rather than ask for each binding's (the state was read
// from the definitions export, which has none: broker.SourceDefinitions).
// A listing costs about what its answer holds (two exchanges of 2,500
// bindings each: 0.04-0.13 s each on RabbitMQ 4.3.6), a lookup one
// request per binding.
const listKeysFrom = 16

// listKeys lists, before a phase runs, the bindings of each vhost where it
// deletes at least listKeysFrom bindings whose properties_key
// Options.PropertiesKey does not know. A listing that fails leaves those
// bindings to be asked for one by one, which reports what is wrong.
func (e *executor) listKeys(ctx context.Context, phase []Step) {
	n := map[string]int{}
	for _, s := range phase {
		if !s.Delete || !s.Kind().DeletedByKey() || e.keys[s.Vhost] != nil {
			continue
		}
		if e.opts.PropertiesKey != nil {
			if _, ok := e.opts.PropertiesKey(s.Vhost, s.Binding); ok {
				continue
			}
		}
		n[s.Vhost]++
	}
	for vh, k := range n {
		if k < listKeysFrom {
			continue
		}
		keys, err := e.c.ListPropertiesKeys(ctx, vh)
		if err != nil {
			continue
		}
		if e.keys == nil {
			e.keys = map[string]map[string]string{}
		}
		e.keys[vh] = keys
	}
}

// bulkDeclares returns the vhosts where the plan declares at least from
// exchanges, queues and bindings (see Options.BulkDeclares).
func bulkDeclares(phases [][]Step, from int) map[string]bool {
	if from < 0 {
		return nil
	}
	if from == 0 {
		from = DefaultBulkDeclares
	}
	n := map[string]int{}
	for _, phase := range phases {
		for _, s := range phase {
			if o, _ := objectOf(s.Kind()); o.bulk() && !s.Delete {
				n[s.Vhost]++
			}
		}
	}
	out := map[string]bool{}
	for vh, k := range n {
		if k >= from {
			out[vh] = true
		}
	}
	return out
}

// overAMQP makes a declaration over AMQP where apply makes them so. It
// reports false when it did not: the caller makes it through the
// management API, which, declarations being idempotent, is safe after
// any AMQP failure, and reports a refusal as it always does.
func (e *executor) overAMQP(vhost string, f func(d *broker.Declarer) error) bool {
	if e.amqp == nil || !e.amqpVhosts[vhost] {
		return false
	}
	return f(e.amqp) == nil
}

// policyLock returns the lock of vhost's policy writes.
func (e *executor) policyLock(vhost string) *sync.Mutex {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.policyMu == nil {
		e.policyMu = map[string]*sync.Mutex{}
	}
	m := e.policyMu[vhost]
	if m == nil {
		m = &sync.Mutex{}
		e.policyMu[vhost] = m
	}
	return m
}

func (e *executor) stopped() error {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.stop
}

// runPhase runs the independent steps of one phase concurrently. Steps
// already started finish even when ctx is cancelled. Once a step failed
// because the management API cannot be reached (or left a write's outcome
// unknown), no new step starts: the others would only fail the same way.
func (e *executor) runPhase(ctx context.Context, steps []Step) (done []Step, failed []Failure, notRun []Step) {
	var mu sync.Mutex
	var wg sync.WaitGroup
	var unreachable atomic.Bool
	// halted are the steps the guard stopped under way (their goroutines'
	// part of notRun).
	var halted []Step
	sem := make(chan struct{}, e.opts.Parallelism)
	run := e.guarded(context.WithoutCancel(ctx))
	for i, s := range steps {
		select {
		case <-ctx.Done():
			wg.Wait()
			return done, failed, slices.Concat(halted, notRun, steps[i:])
		case sem <- struct{}{}:
		}
		if unreachable.Load() {
			<-sem
			notRun = append(notRun, steps[i:]...)
			break
		}
		if e.guard() != nil {
			<-sem
			notRun = append(notRun, steps[i:]...)
			break
		}
		wg.Add(1)
		go func(s Step) {
			defer wg.Done()
			defer func() { <-sem }()
			if o, _ := objectOf(s.Kind()); o.serial() {
				pm := e.policyLock(s.Vhost)
				pm.Lock()
				defer pm.Unlock()
			}
			start := time.Now()
			var sent writeLag
			err := e.guard()
			if err == nil {
				err = e.step(broker.WithWriteTimes(run, sent.record), s)
			}
			var stopped *errStopped
			if errors.As(err, &stopped) {
				// Stopped before its request went out (or before its
				// next one: a step of several requests is redone whole).
				mu.Lock()
				halted = append(halted, s)
				mu.Unlock()
				return
			}
			if err == nil && time.Since(start) >= lateAfter && e.guard() != nil {
				e.mu.Lock()
				e.late = append(e.late, lateStep{Step: s, atOnce: sent.atOnce()})
				e.mu.Unlock()
			}
			if err == nil {
				e.mu.Lock()
				e.done = append(e.done, s)
				e.mu.Unlock()
				if recordAtOnce(s) {
					e.recordNow(run, s.Vhost)
				}
			}
			mu.Lock()
			if err != nil {
				failed = append(failed, Failure{Step: s, Err: err})
				if errors.Is(err, broker.ErrUnreachable) || errors.Is(err, broker.ErrOutcomeUnknown) {
					unreachable.Store(true)
				}
			} else {
				done = append(done, s)
			}
			if e.opts.Progress != nil {
				e.opts.Progress(Event{Step: s, Err: err, Duration: time.Since(start)})
			}
			mu.Unlock()
		}(s)
	}
	wg.Wait()
	notRun = append(halted, notRun...)
	sortSteps(done)
	sort.SliceStable(failed, func(i, j int) bool { return failed[i].Step.String() < failed[j].Step.String() })
	return done, failed, notRun
}

func sortSteps(s []Step) {
	sort.SliceStable(s, func(i, j int) bool { return s[i].String() < s[j].String() })
}

// deleteQueue deletes a queue (for a delete or the first half of a
// replace), checking at this very moment that it holds no messages and has
// no consumers unless data loss is allowed. Classic queues are also
// deleted with the broker's own if-empty/if-unused guard; quorum queues
// have none, so the check right before is what protects them.
func (e *executor) deleteQueue(ctx context.Context, s Step, o object) error {
	verb := "deleted"
	if s.Change.Action == plan.Replace {
		verb = "replaced"
	}
	var opts broker.DeleteQueueOptions
	q, ok := plan.As[topology.Queue](s.Change.Before)
	classic := ok && topology.QueueTypeOrClassic(q.Type) == topology.QueueClassic
	if !e.opts.AllowDataLoss {
		if e.opts.Inspect != nil {
			// The inspection reads through the apply lock's connection:
			// once the lock is lost, it would fail for that reason.
			if err := e.guard(); err != nil {
				return err
			}
			st, err := e.opts.Inspect(ctx, s.Vhost, s.Name, plan.QueueType(s.Change.Before))
			if err != nil {
				return err
			}
			if !st.Exists {
				return nil
			}
			if st.Ready > 0 || st.Consumers > 0 {
				return refuse(s, verb, st.Ready, st.AtLeast, st.Consumers)
			}
		}
		// The statistics also count unacknowledged messages. Right after
		// a queue is declared the broker has none to report yet; with the
		// exact passive check above there is no point waiting for them.
		stats := e.c.GetQueueStats
		if e.opts.Inspect != nil {
			stats = e.c.QueueStatsNow
		}
		st, err := stats(ctx, s.Vhost, s.Name)
		if errors.Is(err, broker.ErrNotFound) {
			return nil
		}
		if err != nil {
			return err
		}
		if e.opts.Inspect != nil {
			// The AMQP count of consumers is exact. For a stream there is
			// none (a passive declare reports 0), and the statistics
			// count the probe that read the stream a moment ago: its
			// consumers were checked before the apply began (Check).
			st.Consumers = 0
			if classic && st.ReadyKnown {
				// So is a classic queue's count of ready messages, which
				// the statistics', lagging, may still count after the
				// queue was drained: what is left of theirs is what the
				// passive declare does not see (unacknowledged messages).
				// Not a quorum queue's: one whose Raft servers do not run
				// answers 0 whatever it holds.
				st.Messages = max(0, st.Messages-st.Ready)
			}
		}
		if st.Messages > 0 || st.Consumers > 0 {
			return refuse(s, verb, st.Messages, false, st.Consumers)
		}
		if classic {
			opts = broker.DeleteQueueOptions{IfEmpty: true, IfUnused: true}
		}
	}
	err := o.d.Delete(ctx, e.c, o.k, s.Vhost, s.Name, e.deleted(s), driver.DeleteOptions{Queue: opts})
	if errors.Is(err, broker.ErrRejected) && !errors.Is(err, broker.ErrOutcomeUnknown) && (opts.IfEmpty || opts.IfUnused) {
		return fmt.Errorf("queue %q in vhost %q was not %s: %w (it received messages or a consumer at the last moment; pass --allow-data-loss to drop them)", s.Name, s.Vhost, verb, errors.Join(ErrRefused, err))
	}
	return ignoreNotFound(err)
}

func refuse(s Step, verb string, msgs int64, atLeast bool, consumers int64) error {
	c := plan.Change{Messages: msgs, MessagesAtLeast: atLeast}
	return fmt.Errorf("queue %q in vhost %q was not %s: it holds %s and has %d %s right now: %w; %s",
		s.Name, s.Vhost, verb, c.MessagesText(), consumers, plural("consumer", consumers), ErrRefused, stakeFix(msgs, consumers, ""))
}

// moveFix is the way to the delete of a queue that holds messages when
// the plan moves all its bindings onto queue to (plan.MoveAdvice), or
// dropping them.
func moveFix(c plan.Change, to string, created bool) string {
	return plan.MoveAdvice(c, to, created) + "; or pass --allow-data-loss to drop them"
}

// stakeFix is the way to the delete or replace of a queue that holds
// msgs messages and has consumers: drain the messages, stop the consumers
// (an application that consumes a queue may well declare it too, and
// declares it again when it starts), or pass --allow-data-loss. Draining
// is no fix for a queue that holds nothing: its consumers keep it. keep,
// when not "", follows the advice to drain it: another way to keep the
// messages.
func stakeFix(msgs, consumers int64, keep string) string {
	switch {
	case consumers == 0:
		return "drain it first" + keep + ", or pass --allow-data-loss to drop them"
	case msgs == 0:
		return "stop its consumers first (an application that consumes it may declare it again when it starts: change that too), or pass --allow-data-loss to cancel them"
	}
	return "stop its consumers and drain it first" + keep + " (an application that consumes it may declare it again when it starts: change that too), or pass --allow-data-loss to drop the messages and cancel the consumers"
}

func ignoreNotFound(err error) error {
	if errors.Is(err, broker.ErrNotFound) {
		return nil
	}
	return err
}

// recordAtOnce reports whether the ownership record must list what step s
// did as soon as it is done, rather than when the apply ends: a vhost
// created (an existing vhost is never adopted, so an apply killed before
// it wrote the record left mqctl believing the vhost was there before
// it), and a shovel that deletes itself once done (kind.DeletesItself:
// unrecorded, it is gone by the time the next apply looks, which creates
// it again and moves its messages again).
func recordAtOnce(s Step) bool {
	if s.Delete || s.Restore || s.Change == nil {
		return false
	}
	if s.Op() == OpCreateVhost {
		return true
	}
	if it, ok := s.Change.After.(plan.ItemObject); ok && it.Item != nil && s.Kind() == kind.Shovel {
		key, _ := kind.DeletesItself(it.Settings)
		return key != ""
	}
	return false
}

// recordNow writes the ownership record of vhost vh with what the steps
// done so far did (see recordAtOnce). A failure is left to the record
// written when the apply ends, which reports it.
func (e *executor) recordNow(ctx context.Context, vh string) {
	e.mu.Lock()
	done := slices.Clone(e.done)
	e.mu.Unlock()
	managed, vhosts := e.plannedRecords(e.p)
	deleted, readBack := recordDone(managed, vhosts, done)
	if deleted[vh] {
		return
	}
	_ = e.readPrints(ctx, readBack, managed)
	e.noteCreated(done)
	_ = e.writeRecord(ctx, vh, e.p.Owner, managed)
}

// noteCreated notes the objects of SPEC §9 (users and their access, vhost
// limits, shovels, federation upstreams and sets: those no plan adopts,
// kind.Kind.Adoptable) that the steps done created (executor.created).
func (e *executor) noteCreated(done []Step) {
	e.recordMu.Lock()
	defer e.recordMu.Unlock()
	for _, s := range done {
		if c := s.Change; c != nil && !s.Delete && !s.Restore && c.Action == plan.Create && !c.Kind.Adoptable() {
			if e.created == nil {
				e.created = map[plan.ObjectRef]bool{}
			}
			e.created[c.Ref()] = true
		}
	}
}

// writeRecords rewrites the ownership record of every vhost the plan
// touched (or whose objects it adopts, or whose record is left over from
// an interrupted swap, in an older format, or lists what the plan drops)
// to list what mqctl now manages there, each object with its print: the
// old record, minus the objects no longer there (plan.Plan.Stale), those
// changed outside mqctl (plan.Plan.ChangedOutside) and those deleted, with
// the prints the plan sets (plan.Plan.Prints: adopted objects, objects
// recorded without a print), plus what was created, updated, replaced or
// restored with the print the change leaves (read back from the broker
// where only the broker knows it). The new record is declared under the
// next generation before the old ones are deleted, so a failure in between
// leaves the newest readable and the next apply finishes the swap.
func (e *executor) writeRecords(ctx context.Context, p *plan.Plan, res *Result) error {
	managed, vhosts := e.plannedRecords(p)
	deletedVhosts, readBack := recordDone(managed, vhosts, res.Done)
	failedVhost := map[string]bool{}
	for _, f := range res.Failed {
		if f.Step.Op() == OpCreateVhost {
			failedVhost[f.Step.Vhost] = true
		}
	}
	var errs []error
	if err := e.readPrints(ctx, readBack, managed); err != nil {
		errs = append(errs, err)
	}
	e.noteCreated(res.Done)
	names := make([]string, 0, len(vhosts))
	for vh := range vhosts {
		names = append(names, vh)
	}
	sort.Strings(names)
	for _, vh := range names {
		if deletedVhosts[vh] || failedVhost[vh] {
			continue
		}
		if err := e.writeRecord(ctx, vh, p.Owner, managed); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// plannedRecords is what the records list once the plan's own decisions
// are in, before any step: the old records, minus the objects no longer
// there and those changed outside mqctl, with the prints the plan sets;
// and the vhosts whose record must be written whatever the steps do.
func (e *executor) plannedRecords(p *plan.Plan) (managed map[plan.ObjectRef]plan.Print, vhosts map[string]bool) {
	managed = map[plan.ObjectRef]plan.Print{}
	vhosts = map[string]bool{}
	for vh, r := range e.opts.Records {
		for ref, pr := range r.Managed {
			managed[ref] = pr
		}
		if len(r.Exchanges) > 1 || r.Outdated() || len(r.Absorbed) > 0 {
			vhosts[vh] = true // an interrupted record swap to finish, an old format to rewrite, or another owner's record taken over
		}
	}
	for _, ref := range p.Stale {
		delete(managed, ref)
		vhosts[ref.Vhost] = true
	}
	for _, o := range p.ChangedOutside {
		if !o.Deleted { // someone else's now; one deleted leaves with its step
			delete(managed, o.ObjectRef)
			vhosts[o.Vhost] = true
		}
	}
	for _, o := range p.Others {
		if o.Recorded && !o.Shared { // shared once, left to the other owners now (a shared one stays)
			delete(managed, o.ObjectRef)
			vhosts[o.Vhost] = true
		}
	}
	for ref, pr := range p.Prints {
		managed[ref] = pr
		vhosts[ref.Vhost] = true
	}
	for _, ref := range p.Adopt {
		vhosts[ref.Vhost] = true
	}
	if p.KeptChanged {
		// The lists of objects kept (writeRecord): the plan's, and the
		// records' it changes.
		for _, ref := range p.Kept {
			vhosts[ref.Vhost] = true
		}
		for vh, r := range e.opts.Records {
			if len(r.Kept) > 0 {
				vhosts[vh] = true
			}
		}
	}
	return managed, vhosts
}

// recordDone puts into managed what the done steps created, updated,
// replaced, restored or deleted, and their vhosts into vhosts. It returns
// the vhosts deleted (whose records went with them) and the objects
// written with a print only the broker knows (readPrints).
func recordDone(managed map[plan.ObjectRef]plan.Print, vhosts map[string]bool, done []Step) (deletedVhosts map[string]bool, readBack []plan.ObjectRef) {
	deletedVhosts = map[string]bool{}
	for _, s := range done {
		c := s.Change
		vhosts[c.Vhost] = true
		ref := c.Ref()
		switch {
		case s.Restore:
			// A binding put back after its end was replaced: its print
			// changed with the end, and stays mqctl's only if it was.
			bref := plan.BindingRef(c.Vhost, s.Binding)
			if _, ok := managed[bref]; ok {
				if i := slices.Index(c.Bindings, s.Binding); i >= 0 && i < len(c.BindingPrints) {
					managed[bref] = c.BindingPrints[i]
				}
			}
		case s.Delete && c.Kind.Container():
			deletedVhosts[c.Vhost] = true
		case c.Action == plan.Delete:
			delete(managed, ref)
		case c.Action == plan.Replace && s.Delete:
			// The delete half of a replace: its declare half records it.
		default:
			if _, ok := managed[ref]; !ok && c.Action == plan.Update {
				break // an update records nothing new (an existing vhost is never adopted)
			}
			managed[ref] = c.Print
			if c.Print == plan.NoPrint {
				readBack = append(readBack, ref)
			}
		}
	}
	return deletedVhosts, readBack
}

// writeRecord writes the record of vhost vh ("" for the broker's own
// objects) to list what managed holds there, unless it does already.
func (e *executor) writeRecord(ctx context.Context, vh, owner string, managed map[plan.ObjectRef]plan.Print) error {
	e.recordMu.Lock()
	defer e.recordMu.Unlock()
	rec := e.wrote[vh]
	if rec == nil {
		rec = e.opts.Records[vh]
	}
	if rec == nil {
		rec = &ownership.Record{Vhost: vh, Owner: owner, Managed: map[plan.ObjectRef]plan.Print{}}
	}
	kept, keptSame := e.keptIn(vh, rec, managed)
	created, createdSame := e.createdIn(vh, rec, managed)
	if keptSame && createdSame && rec.Equal(managed) {
		return nil
	}
	if vh == "" {
		return e.writeGlobalRecord(ctx, owner, rec, managed, created, kept)
	}
	next := ownership.OwnerExchange(owner, vh, rec.Generation+1, managed)
	if list := ownership.KeptList(vh, managed, kept); list != nil {
		next.Arguments[ownership.ArgKept] = list
	}
	if list := ownership.CreatedList(vh, managed, created); list != nil {
		next.Arguments[ownership.ArgCreated] = list
	}
	record := Step{Vhost: vh, Name: next.Name, Change: &plan.Change{Kind: kind.Exchange, Vhost: vh, Name: next.Name, After: plan.Of(next)}}
	if err := write(ctx, func() error { return e.c.DeclareExchange(ctx, vh, next) }, e.written(record, objects[kind.Exchange])); err != nil {
		return fmt.Errorf("write the ownership record of vhost %q: %w", vh, err)
	}
	if err := e.recordIsMine(ctx, record); err != nil {
		return err
	}
	var errs []error
	left := []string{next.Name}
	for _, old := range slices.Concat(rec.Exchanges, rec.Absorbed) {
		if err := ignoreNotFound(write(ctx, func() error {
			return e.c.DeleteExchange(ctx, vh, old, broker.DeleteExchangeOptions{})
		}, e.gone(Step{Vhost: vh, Name: old, Change: &plan.Change{Kind: kind.Exchange, Vhost: vh, Name: old}}, objects[kind.Exchange]))); err != nil {
			errs = append(errs, fmt.Errorf("remove the old ownership record %q of vhost %q: %w", old, vh, err))
			left = append(left, old)
		}
	}
	// What the broker holds now: a later write of this record follows it.
	mine := map[plan.ObjectRef]plan.Print{}
	for ref, pr := range managed {
		if ref.Vhost == vh {
			mine[ref] = pr
		}
	}
	if e.wrote == nil {
		e.wrote = map[string]*ownership.Record{}
	}
	e.wrote[vh] = &ownership.Record{Vhost: vh, Owner: owner, Generation: rec.Generation + 1, Format: ownership.FormatPrinted, Exchanges: left, Managed: mine, Kept: kept, Created: created}
	return errors.Join(errs...)
}

// createdIn is what the record of vhost vh ("" the broker's users) lists
// as created by mqctl (ownership.Record.Created): of the objects managed
// holds there that mqctl never adopts (users and their access, the
// objects of SPEC §9), those it created before, and in this apply; same
// when the record lists that already.
func (e *executor) createdIn(vh string, rec *ownership.Record, managed map[plan.ObjectRef]plan.Print) (created map[plan.ObjectRef]bool, same bool) {
	created, same = map[plan.ObjectRef]bool{}, true
	for ref := range managed {
		if ref.Vhost != vh || ref.Kind.Adoptable() {
			continue
		}
		if rec.Created[ref] || e.created[ref] {
			created[ref] = true
		}
		same = same && created[ref] == rec.Created[ref]
	}
	return created, same
}

// writeGlobalRecord writes the record of the broker's own objects: one
// global parameter, replaced whole, then deletes the records it took
// over.
func (e *executor) writeGlobalRecord(ctx context.Context, owner string, rec *ownership.Record, managed map[plan.ObjectRef]plan.Print, created, kept map[plan.ObjectRef]bool) error {
	name := ownership.GlobalParameterOf(owner)
	body := map[string]any{"name": name, "value": ownership.GlobalValue(managed, created, kept)}
	if err := e.c.PutJSON(ctx, body, "write mqctl's ownership record of the broker's users", "", "global-parameters", name); err != nil {
		return fmt.Errorf("write the ownership record of the broker's users: %w", err)
	}
	var errs []error
	for _, old := range rec.Absorbed {
		if err := ignoreNotFound(e.c.DeleteJSON(ctx, "remove the ownership record taken over", "", "global-parameters", old)); err != nil {
			errs = append(errs, fmt.Errorf("remove the ownership record %q of the broker's users, taken over: %w", old, err))
		}
	}
	return errors.Join(errs...)
}

// keptIn is what the record of vhost vh ("" the broker's users) lists as
// kept after apply (ownership.Record.Kept: on the broker before mqctl,
// named by the file): the plan's list (plan.Plan.Kept) where it changes
// it, rec's otherwise, less what the record now manages; same when that
// is what rec lists.
func (e *executor) keptIn(vh string, rec *ownership.Record, managed map[plan.ObjectRef]plan.Print) (kept map[plan.ObjectRef]bool, same bool) {
	kept = map[plan.ObjectRef]bool{}
	if e.p != nil && e.p.KeptChanged {
		for _, ref := range e.p.Kept {
			if ref.Vhost == vh {
				kept[ref] = true
			}
		}
	} else {
		maps.Copy(kept, rec.Kept)
	}
	maps.DeleteFunc(kept, func(ref plan.ObjectRef, v bool) bool { _, mine := managed[ref]; return mine || !v || ref.Vhost != vh })
	had := maps.Clone(rec.Kept)
	maps.DeleteFunc(had, func(ref plan.ObjectRef, v bool) bool { return !v || ref.Vhost != vh })
	return kept, maps.Equal(kept, had)
}

// ErrRecordRaced is wrapped by the error of an ownership record write that
// another apply beat: it wrote the same generation first (its lock lost,
// or a paused apply's write let through), so the declare of this one was
// a no-op (RabbitMQ compares no argument of an exchange declared again
// but alternate-exchange) and its record is not on the broker.
var ErrRecordRaced = errors.New("another apply wrote the ownership record")

// recordIsMine reads back the record exchange just declared (record): the
// broker keeps the first declaration of a name and takes a second one
// with other arguments without a word, so a record another apply wrote
// under the same generation first reads back with its list, not this
// one's (or is gone already, replaced by a later generation).
func (e *executor) recordIsMine(ctx context.Context, record Step) error {
	have, err := objects[kind.Exchange].read(ctx, e, record)
	mine, err := present(err)
	if err != nil {
		return fmt.Errorf("write the ownership record of vhost %q: read back %q, to tell that no other apply wrote it first: %w", record.Vhost, record.Name, err)
	}
	if mine && len(plan.ObjectFields(record.Kind(), have, record.object())) == 0 {
		return nil
	}
	what := "holds another list of objects"
	if !mine {
		what = "is gone already, replaced by a later one"
	}
	return fmt.Errorf("%w of vhost %q at the same time: %q, this apply's record, %s, so this apply's changes are not recorded as mqctl's; nothing more was written: run mqctl plan again to see where the broker is now (the objects this apply made that the file holds are recorded by the next apply), then mqctl apply",
		ErrRecordRaced, record.Vhost, record.Name, what)
}

// readPrints reads back from the broker the objects of refs, which apply
// wrote but whose prints only the broker knows (a user given a plaintext
// password: the broker salts its hash), and sets their prints in managed.
// One listing per kind and vhost. An object it cannot read keeps
// plan.NoPrint: no plan deletes it before an apply that names it records
// its print.
func (e *executor) readPrints(ctx context.Context, refs []plan.ObjectRef, managed map[plan.ObjectRef]plan.Print) error {
	type list struct {
		kind  plan.Kind
		vhost string
	}
	byList := map[list][]plan.ObjectRef{}
	for _, ref := range refs {
		l := list{ref.Kind, ref.Vhost}
		byList[l] = append(byList[l], ref)
	}
	var errs []error
	for l, refs := range byList {
		if l.kind.Item() == nil {
			continue
		}
		items, err := e.c.ReadItems(ctx, l.kind, l.vhost)
		if err != nil {
			errs = append(errs, fmt.Errorf("read back the %s just written, for mqctl's ownership record: %w", l.kind.Plural(), err))
			continue
		}
		byName := make(map[string]*topology.Item, len(items))
		for _, it := range items {
			byName[it.Name] = it
		}
		for _, ref := range refs {
			if it := byName[ref.Name]; it != nil {
				managed[ref] = plan.ItemPrint(it)
			}
		}
	}
	return errors.Join(errs...)
}
