package preflight

import (
	"context"
	"crypto/rand"
	"crypto/tls"
	"encoding/hex"
	"errors"
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/mqctl/mqctl/pkg/broker"
	"github.com/mqctl/mqctl/pkg/broker/driver"
	"github.com/mqctl/mqctl/pkg/kind"
	"github.com/mqctl/mqctl/pkg/plan"
	"github.com/mqctl/mqctl/pkg/topology"
)

// Options configure Run.
type Options struct {
	// AMQPURL (with credentials, without a vhost) opens the connection
	// the throwaway vhost is held by while the preflight runs: another
	// apply's sweep leaves a vhost with a connection alone. "" holds none.
	AMQPURL string
	TLS     *tls.Config
	// Parallelism is how many declarations run at once (8 when zero).
	Parallelism int
	// Now is the clock (time.Now when nil).
	Now func() time.Time
	// Sweepable limits the leftovers the sweep may delete to the names
	// it accepts (nil: every throwaway vhost). A test that moves Now
	// past the grace sweeps only its own: to it every other apply's
	// throwaway vhost, connection not yet listed, would look left behind.
	Sweepable func(name string) bool
	// First is the change that the caller's apply writes next, first and
	// alone (apply.FirstAlone), or nil. When it is the plan's only trial,
	// of a kind apply writes whole in one request (not a vhost or its
	// limits), that write asks the broker as the trial would, and a
	// refusal of it leaves the broker as it was: no throwaway vhost is
	// made, the report's ByWrite is set, and the caller reports the
	// write's refusal with Refused.
	First *plan.Change
}

// Grace is how old a throwaway vhost without a connection must be for an
// apply to take it for one a killed process left behind and delete it: the
// vhost exists for a moment before its connection does.
const Grace = 10 * time.Second

// Report is what a preflight did (plan.Plan.Preflight).
type Report = plan.Preflight

// Refusal is one cause the broker refuses.
type Refusal = plan.Refusal

// Run tries the shapes of p's writes on the broker behind c, in a
// throwaway vhost it deletes before it returns (even when ctx is
// cancelled), after deleting the ones killed processes left behind. held
// is the state read for p: the shapes it holds are not tried. A plan with
// no shape to try costs no vhost. The broker's refusals are in the report;
// the error is for a preflight that could not finish (the broker
// unreachable, ctx cancelled), when nothing must be applied either.
func Run(ctx context.Context, c *broker.Client, p *plan.Plan, held *topology.Topology, o Options) (*Report, error) {
	rep, wait, err := Start(ctx, c, p, held, o)
	wait()
	return rep, err
}

// Start is Run, but returns as soon as the broker has answered: the
// throwaway vhost is deleted meanwhile (an apply goes on with its changes),
// and wait, never nil, blocks until it is, then sets the report's
// CleanupErr. Call wait before the process ends.
func Start(ctx context.Context, c *broker.Client, p *plan.Plan, held *topology.Topology, o Options) (rep *Report, wait func(), err error) {
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Parallelism <= 0 {
		o.Parallelism = 8
	}
	trials, untried := Shapes(p, held)
	rep = &Report{Untried: untried}
	// The sweep of what killed processes left runs beside the rest, into
	// the report itself: not through rep, which a failure's return sets
	// to nil meanwhile (a data race, which go test -race found in
	// TestPreflightInterrupted).
	swept, report := make(chan struct{}), rep
	go func() {
		defer close(swept)
		report.Swept, report.SweepErr = sweep(ctx, c, o.Now(), o.Sweepable)
	}()
	wait = func() { <-swept }
	if len(trials) == 0 {
		return rep, wait, nil
	}
	if triedByWrite(trials, o.First) {
		rep.ByWrite = true
		return rep, wait, nil
	}
	if !c.IsAdmin() {
		// Only an administrator may make a vhost: the attempt would be
		// refused (it was made, and the refusal quoted).
		rep.Skipped = fmt.Sprintf("user %q may not make the throwaway vhost to try the plan in: that takes the administrator tag", c.Username())
		return rep, wait, nil
	}
	name, err := throwawayName(o.Now())
	if err != nil {
		return nil, wait, err
	}
	err = c.DeclareVhost(ctx, name, broker.VhostSettings{Description: description, Tags: []string{broker.ThrowawayTag}})
	if err != nil {
		if cannotRun(err) {
			rep.Skipped = fmt.Sprintf("mqctl could not make a throwaway vhost to try the plan in (%v)", err)
			return rep, wait, nil
		}
		return nil, wait, fmt.Errorf("preflight: %w", err)
	}
	rep.Vhost = name
	tw := &throwaway{c: c, name: name, dialed: make(chan struct{}), deleted: make(chan struct{})}
	wait = func() { <-swept; <-tw.deleted }
	if rep.Skipped, err = tw.prepare(ctx, trials); rep.Skipped != "" || err != nil {
		close(tw.dialed)
		go tw.remove(ctx, rep)
		if err != nil {
			return nil, wait, err
		}
		return rep, wait, nil
	}
	// The trials do not wait for the connection: remove does.
	tw.hold(ctx, o)
	t := &trier{c: c, vhost: name, sem: make(chan struct{}, o.Parallelism), refused: map[string]*Refusal{}, changes: changesByRef(p)}
	err = t.run(ctx, trials)
	go tw.remove(ctx, rep)
	if err != nil {
		return nil, wait, err
	}
	rep.Tried = len(trials)
	for _, tr := range trials {
		rep.Objects += len(tr.Objects)
	}
	rep.Refusals = t.refusals()
	return rep, wait, nil
}

// triedByWrite reports whether the plan's only trial is first, the change
// apply writes next and alone, of a kind apply writes whole in one
// request: that write asks the broker as the trial would (Options.First).
func triedByWrite(trials []*Trial, first *plan.Change) bool {
	if first == nil || len(trials) != 1 || len(trials[0].Objects) != 1 || trials[0].Objects[0].ObjectRef != first.Ref() {
		return false
	}
	k, ok := tryerOf(trials[0].Kind)
	return ok && k.whole
}

// throwaway is the vhost a preflight's trials run in, and the connection
// that holds it against other applies' sweeps.
type throwaway struct {
	c    *broker.Client
	name string
	conn interface{ Close() error }
	// dialed is closed once conn is set or will never be; deleted once
	// the vhost is deleted (or could not be).
	dialed, deleted chan struct{}
}

// prepare makes the vhost ready for trials, at once: the permissions (the
// management API gives the creator of a vhost none on some versions' auth
// backends) and the limits the broker gave the vhost. It says why the
// preflight is skipped (the user may not give itself permissions, the
// limits leave no room for the trials), or returns the error that stops
// it.
func (tw *throwaway) prepare(ctx context.Context, trials []*Trial) (skipped string, err error) {
	var (
		grantErr error
		tight    string
		setup    sync.WaitGroup
	)
	setup.Add(2)
	go func() { defer setup.Done(); grantErr = tw.c.GrantFullPermissions(ctx, tw.name, tw.c.Username()) }()
	go func() { defer setup.Done(); tight = tooTight(ctx, tw.c, tw.name, trials) }()
	setup.Wait()
	switch {
	case grantErr != nil && cannotRun(grantErr):
		return fmt.Sprintf("mqctl could not give itself permissions on its throwaway vhost (%v)", grantErr), nil
	case grantErr != nil:
		return "", fmt.Errorf("preflight: %w", grantErr)
	}
	return tight, nil
}

// hold opens the AMQP connection to the vhost, in the background (none
// without o.AMQPURL). Without it the vhost is only safe from other
// applies' sweeps for Grace, which a preflight does not take.
func (tw *throwaway) hold(ctx context.Context, o Options) {
	if o.AMQPURL == "" {
		close(tw.dialed)
		return
	}
	go func() {
		defer close(tw.dialed)
		if cn, err := broker.DialAMQP(ctx, broker.AMQPDial{URL: o.AMQPURL, Vhost: tw.name, TLS: o.TLS, Name: "mqctl preflight"}); err == nil {
			tw.conn = cn
		}
	}()
}

// remove closes the connection once it is dialed and deletes the vhost,
// even when ctx is cancelled (Ctrl-C), within a time limit of its own; a
// failure is rep's CleanupErr.
func (tw *throwaway) remove(ctx context.Context, rep *Report) {
	defer close(tw.deleted)
	<-tw.dialed
	if tw.conn != nil {
		_ = tw.conn.Close()
	}
	dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
	defer cancel()
	if err := tw.c.DeleteVhost(dctx, tw.name); err != nil && !errors.Is(err, broker.ErrNotFound) {
		rep.CleanupErr = err.Error()
	}
}

// tooTight says why the preflight cannot run in the throwaway vhost name,
// or "": the limits the broker gives a new vhost (default_limits in its
// configuration) must leave room for the queues the trials declare.
func tooTight(ctx context.Context, c *broker.Client, name string, trials []*Trial) string {
	items, err := c.ReadItems(ctx, kind.VhostLimits, name)
	if err != nil || len(items) == 0 {
		return ""
	}
	queues := 1 // the sink of the bindings
	sinks := map[string]bool{}
	for _, tr := range trials {
		switch {
		case tr.Kind == kind.Queue:
			queues++
		case tr.Kind == kind.Binding && tr.DestQueueType != "" && tr.DestQueueType != topology.QueueClassic && !sinks[tr.DestQueueType]:
			sinks[tr.DestQueueType] = true
			queues++ // a sink of that type
		}
	}
	if max, ok := items[0].Settings.Int("max-queues"); ok && max >= 0 && int(max) < queues {
		return fmt.Sprintf("the broker gives a new vhost a limit of %d queues (default_limits in its configuration), fewer than the %d the preflight would declare", max, queues)
	}
	return ""
}

const description = "a throwaway vhost of mqctl apply's preflight, where it asks the broker whether it takes the plan's objects before changing anything; it is deleted when the apply ends, and any apply deletes one left behind"

// cannotRun reports whether err means the user may not make or use a
// throwaway vhost (not a tag for it, a limit on vhosts): the plan is then
// judged from the table alone.
func cannotRun(err error) bool {
	return errors.Is(err, broker.ErrForbidden) || errors.Is(err, broker.ErrRejected)
}

// throwawayName is a new throwaway vhost's name: the prefix, the creation
// time in Unix seconds (which the sweep reads) and a random part.
func throwawayName(now time.Time) (string, error) {
	b := make([]byte, 4)
	if _, err := rand.Read(b); err != nil {
		return "", fmt.Errorf("preflight: %w", err)
	}
	return fmt.Sprintf("%s%d-%s", broker.ThrowawayPrefix, now.Unix(), hex.EncodeToString(b)), nil
}

// createdAt reads the creation time from a throwaway vhost's name.
func createdAt(name string) (time.Time, bool) {
	rest := strings.TrimPrefix(name, broker.ThrowawayPrefix)
	secs, _, ok := strings.Cut(rest, "-")
	n, err := strconv.ParseInt(secs, 10, 64)
	if !ok || err != nil {
		return time.Time{}, false
	}
	return time.Unix(n, 0), true
}

// sweep deletes the throwaway vhosts that killed processes left behind:
// older than Grace, with no connection. It returns those deleted and,
// when one could not be, why (the apply goes on: the next one tries
// again).
func sweep(ctx context.Context, c *broker.Client, now time.Time, sweepable func(string) bool) (swept []string, failed string) {
	vhosts, err := c.ThrowawayVhosts(ctx)
	if err != nil {
		return nil, err.Error()
	}
	for _, v := range vhosts {
		at, ok := createdAt(v.Name)
		if !ok || now.Sub(at) < Grace || (sweepable != nil && !sweepable(v.Name)) {
			continue
		}
		if n, err := c.VhostConnections(ctx, v.Name); err != nil || n > 0 {
			continue
		}
		if err := c.DeleteVhost(ctx, v.Name); err != nil {
			// Another apply sweeping at the same moment may have deleted
			// it first: 404, or 500 "no_such_vhost" from a broker that was
			// deleting it for both (4.0.5). Gone is what was wanted; it
			// is not this apply's to report.
			if _, gerr := c.GetVhost(ctx, v.Name); !errors.Is(err, broker.ErrNotFound) && !errors.Is(gerr, broker.ErrNotFound) {
				failed = err.Error()
			}
			continue
		}
		swept = append(swept, v.Name)
	}
	return swept, failed
}

// trier declares trials in the throwaway vhost.
type trier struct {
	c     *broker.Client
	vhost string
	sem   chan struct{}

	mu      sync.Mutex
	n       int
	refused map[string]*Refusal // by cause
	order   []string
	// sources maps an exchange shape to the name of an exchange of that
	// shape in the throwaway vhost ("" when the broker refused it).
	sources map[string]string
	// changes are the plan's changes by their object, for where the file
	// writes what the broker refuses (refusedAt).
	changes map[plan.ObjectRef]*plan.Change
}

// changesByRef maps each change of p by its object.
func changesByRef(p *plan.Plan) map[plan.ObjectRef]*plan.Change {
	out := make(map[plan.ObjectRef]*plan.Change, len(p.Changes))
	for i := range p.Changes {
		out[p.Changes[i].Ref()] = &p.Changes[i]
	}
	return out
}

// name returns a new object name in the throwaway vhost.
func (t *trier) name() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.n++
	return fmt.Sprintf("mqctl.preflight.%d", t.n)
}

func (t *trier) run(ctx context.Context, trials []*Trial) error {
	byKind := map[kind.Kind][]*Trial{}
	for _, tr := range trials {
		byKind[tr.Kind] = append(byKind[tr.Kind], tr)
	}
	t.sources = map[string]string{}
	// One phase per kind, in the order of tryers; a kind's prepare runs
	// in the phase before its own, and reads what that phase's
	// predecessors declared (so each phase is made when it starts).
	for i, k := range tryers {
		fs := t.each(byKind[k.kind], k.try)
		if i+1 < len(tryers) {
			if next := tryers[i+1]; next.prepare != nil && len(byKind[next.kind]) > 0 {
				fs = append(fs, next.prepare(t, byKind[next.kind])...)
			}
		}
		if err := t.phase(ctx, fs); err != nil {
			return err
		}
	}
	return nil
}

func (t *trier) each(trials []*Trial, try func(*trier, context.Context, *Trial) error) []func(context.Context) error {
	out := make([]func(context.Context) error, len(trials))
	for i, tr := range trials {
		out[i] = func(ctx context.Context) error {
			return t.judge(tr, granted(ctx, func(ctx context.Context) error { return try(t, ctx, tr) }))
		}
	}
	return out
}

// granted runs f again while the broker answers it 403 access refused,
// for about a second: the throwaway vhost's permissions were granted a
// moment before, and a loaded RabbitMQ 4.3.6 refused the first
// declaration after the grant so (seen in CI). phase runs every
// declaration through it; a trial's goes through it before judge, which
// would take the 403 for the broker refusing the user's object.
func granted(ctx context.Context, f func(context.Context) error) error {
	wait := 50 * time.Millisecond
	for try := 1; ; try++ {
		err := f(ctx)
		if !errors.Is(err, broker.ErrForbidden) || try == 5 {
			return err
		}
		select {
		case <-ctx.Done():
			return err
		case <-time.After(wait):
		}
		wait *= 2
	}
}

// phase runs fs, Parallelism at a time; the first error that is not a
// refusal is the phase's.
func (t *trier) phase(ctx context.Context, fs []func(context.Context) error) error {
	var (
		wg    sync.WaitGroup
		mu    sync.Mutex
		first error
	)
	for _, f := range fs {
		if err := ctx.Err(); err != nil {
			wg.Wait()
			return fmt.Errorf("preflight interrupted, nothing was changed: %w", err)
		}
		t.sem <- struct{}{}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() { <-t.sem }()
			if err := granted(ctx, f); err != nil {
				mu.Lock()
				if first == nil {
					first = err
				}
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("preflight interrupted, nothing was changed: %w", err)
	}
	if first != nil {
		return fmt.Errorf("preflight could not finish, nothing was changed: %w", first)
	}
	return nil
}

// refusal returns the broker's words when err is its refusal of what was
// sent (not a failure to reach it, or to hear its answer).
func refusal(err error) (reason string, ok bool) {
	var ae *broker.APIError
	if !errors.As(err, &ae) || !(errors.Is(err, broker.ErrRejected) || errors.Is(err, broker.ErrForbidden)) {
		return "", false
	}
	return ae.Reason, true
}

// Refused records, in a report whose ByWrite is set, the refusal of the
// write of change c (Options.First), which failed with err. It reports
// false, recording nothing, when err is not the broker's refusal.
func Refused(rep *Report, c *plan.Change, err error) bool {
	reason, ok := refusal(err)
	if !ok || !rep.ByWrite {
		return false
	}
	rep.Refusals = []Refusal{{Kind: c.Kind, Reason: internalReason(err, reason), Objects: []Object{{ObjectRef: c.Ref(), Pos: refusedAt(c, reason)}}}}
	return true
}

// refusedArg matches the argument the broker names in its refusal of a
// queue's ("invalid arg 'x-max-length' for queue …", rabbit_amqqueue at
// v3.10.8 to v4.3.5) or an exchange's arguments.
var refusedArg = regexp.MustCompile(`invalid arg '([^']+)'`)

// refusedAt is where the file writes what the broker refused of change
// c's object, in its words reason: the argument it names, where the file
// says where (topology.Meta.PosOf), else the object.
func refusedAt(c *plan.Change, reason string) topology.Pos {
	m := refusedArg.FindStringSubmatch(reason)
	if m == nil {
		return c.Pos
	}
	if o, ok := c.After.(interface{ PosOf(string) topology.Pos }); ok {
		if p := o.PosOf(m[1]); !p.IsZero() {
			return p
		}
	}
	return c.Pos
}

// judge records a trial's refusal; any other error is returned.
func (t *trier) judge(tr *Trial, err error) error {
	if err == nil {
		return nil
	}
	reason, ok := refusal(err)
	if !ok {
		return err
	}
	reason = internalReason(err, reason)
	// The broker's words name the trial's object and the throwaway vhost;
	// refusals() puts the first refused object's names in their place.
	cause := string(tr.Kind) + "\x00" + trialNames.ReplaceAllString(strings.ReplaceAll(reason, t.vhost, vhostMark), nameMark)
	t.mu.Lock()
	defer t.mu.Unlock()
	r, ok := t.refused[cause]
	if !ok {
		r = &Refusal{Kind: tr.Kind, Reason: cause[len(tr.Kind)+1:]}
		t.refused[cause] = r
		t.order = append(t.order, cause)
	}
	r.Objects = append(r.Objects, tr.Objects...)
	return nil
}

// Marks of the names in a refusal's words until refusals() fills them in.
const (
	nameMark  = "\x00name\x00"
	vhostMark = "\x00vhost\x00"
)

// trialNames matches the names of the objects declared in the throwaway
// vhost, in the broker's words.
var trialNames = regexp.MustCompile(`mqctl\.preflight\.[0-9]+`)

// sortRefusals orders refusals by where their first object is in the file.
func sortRefusals(rs []Refusal) {
	sort.SliceStable(rs, func(i, j int) bool {
		a, b := rs[i].Objects[0], rs[j].Objects[0]
		if a.Pos != b.Pos {
			objs := []Object{a, b}
			sortObjects(objs)
			return objs[0] == a
		}
		return a.Name < b.Name
	})
}

func (t *trier) refusals() []Refusal {
	out := make([]Refusal, 0, len(t.order))
	for _, cause := range t.order {
		r := *t.refused[cause]
		for i, o := range r.Objects {
			if c := t.changes[o.ObjectRef]; c != nil {
				r.Objects[i].Pos = refusedAt(c, r.Reason)
			}
		}
		sortObjects(r.Objects)
		first := r.Objects[0]
		r.Reason = strings.ReplaceAll(strings.ReplaceAll(r.Reason, nameMark, first.Name), vhostMark, first.Vhost)
		out = append(out, r)
	}
	// One order whatever the order the answers came in.
	sortRefusals(out)
	return out
}

// write writes o, of kind k, in the throwaway vhost through the kind's
// broker driver, as apply writes one.
func (t *trier) write(ctx context.Context, k kind.Kind, o plan.Object) error {
	d, err := driver.Of(k)
	if err != nil {
		return err
	}
	return d.Write(ctx, t.c, k, t.vhost, nil, o)
}

// source keeps the exchange a trial declared as name (err: refused) as the
// one of its shape that bindings are tried from.
func (t *trier) source(tr *Trial, name string, err error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if err == nil {
		t.sources[exchangeKey(tr.Object.(*topology.Exchange))] = name
	} else {
		t.sources[exchangeKey(tr.Object.(*topology.Exchange))] = ""
	}
}

// Names of the ends bindings are tried between, besides the sources.
const (
	sinkQueue    = "mqctl.preflight.sink"
	sinkExchange = "mqctl.preflight.sink"
)

// sinkQueueOf names the queue of type qtype that bindings are tried to.
func sinkQueueOf(qtype string) string {
	if qtype == topology.QueueClassic {
		return sinkQueue
	}
	return sinkQueue + "." + qtype
}

// ends returns the declarations the binding trials need: a queue (of
// each type a trial binds, see Trial.DestQueueType) and an exchange to
// bind to, and an exchange of each source shape the broker
// already holds (not a trial itself).
func (t *trier) ends(bindings []*Trial) []func(context.Context) error {
	if len(bindings) == 0 {
		return nil
	}
	out := []func(context.Context) error{
		func(ctx context.Context) error {
			return t.c.DeclareExchange(ctx, t.vhost, &topology.Exchange{Name: sinkExchange, Type: "fanout", Durable: true})
		},
	}
	sinks := map[string]bool{}
	for _, tr := range bindings {
		qtype := topology.QueueTypeOrClassic(tr.DestQueueType)
		if sinks[qtype] {
			continue
		}
		sinks[qtype] = true
		out = append(out, func(ctx context.Context) error {
			return t.c.DeclareQueue(ctx, t.vhost, &topology.Queue{Name: sinkQueueOf(qtype), Type: qtype, Durable: true})
		})
	}
	seen := map[string]bool{}
	for _, tr := range bindings {
		if tr.Source == nil {
			continue
		}
		key := exchangeKey(tr.Source)
		if _, tried := t.sources[key]; tried || seen[key] {
			continue
		}
		seen[key] = true
		src := *tr.Source
		out = append(out, func(ctx context.Context) error {
			x := src
			x.Name = t.name()
			err := granted(ctx, func(ctx context.Context) error { return t.c.DeclareExchange(ctx, t.vhost, &x) })
			t.mu.Lock()
			defer t.mu.Unlock()
			if err != nil {
				// The broker holds an exchange of this shape, so this is
				// unexpected; its bindings are left to the apply.
				t.sources[key] = ""
				return nil
			}
			t.sources[key] = x.Name
			return nil
		})
	}
	return out
}

func (t *trier) binding(ctx context.Context, tr *Trial) error {
	b := *tr.Binding
	if tr.Source != nil {
		t.mu.Lock()
		src := t.sources[exchangeKey(tr.Source)]
		t.mu.Unlock()
		if src == "" {
			return nil // its source was refused: that refusal stands for it
		}
		b.Source = src
	}
	b.Destination = sinkQueueOf(topology.QueueTypeOrClassic(tr.DestQueueType))
	if b.DestinationType == topology.DestExchange {
		b.Destination = sinkExchange
	}
	return t.c.DeclareBinding(ctx, t.vhost, &b)
}

// vhostSettings tries a vhost's default queue type on the throwaway vhost.
// It runs after every queue: from then on the throwaway vhost's queues
// would default to it (every queue mqctl declares names its type anyway).
func (t *trier) vhostSettings(ctx context.Context, tr *Trial) error {
	return t.c.DeclareVhost(ctx, t.vhost, broker.VhostSettings{Description: description, Tags: []string{broker.ThrowawayTag}, DefaultQueueType: tr.Vhost.DefaultQueueType})
}

// limits tries a vhost's limits on the throwaway vhost, last: a limit of
// max-queues 0 would refuse every queue after it.
func (t *trier) limits(ctx context.Context, tr *Trial) error {
	item := *tr.Item
	item.Name = t.vhost
	return t.c.WriteItem(ctx, kind.VhostLimits, t.vhost, nil, &item)
}
