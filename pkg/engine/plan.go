package engine

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/mqctl/mqctl/pkg/flow"
	"github.com/mqctl/mqctl/pkg/kind"
	"github.com/mqctl/mqctl/pkg/ownership"
	"github.com/mqctl/mqctl/pkg/plan"
	"github.com/mqctl/mqctl/pkg/preflight"
	"github.com/mqctl/mqctl/pkg/rmqversion"
	"github.com/mqctl/mqctl/pkg/topology"
)

// PlanOptions configure Plan.
type PlanOptions struct {
	// Read waits for a read of the desired state's vhosts begun
	// beforehand (ReadLive), typically while the desired state was still
	// being built: Plan calls it once it has checked desired against the
	// version, which the read's time then covers. nil, or a read of other
	// vhosts, makes Plan read the broker.
	Read func() (*Live, error)
	// DeleteChanged plans the deletes of the objects the file dropped that
	// mqctl managed once and that were changed outside mqctl since
	// (plan.Plan.ChangedOutside), which are otherwise left alone.
	DeleteChanged bool
	// TakeOverFrom, when set, takes over the ownership records of that
	// owner ("" the owner of the files without owner:) in the file's
	// vhosts: what they list is the file's owner's (plan.Plan.TakeOver).
	TakeOverFrom *string
	// Save makes the plan one that can be saved for a later apply
	// (plan.WriteSaved): it records the broker's fingerprint
	// (plan.Plan.Fingerprint), which that apply checks. Computing it costs
	// a hash of the whole state read.
	Save bool
	// Preflight asks the broker whether it takes the plan's objects, in a
	// throwaway vhost (pkg/preflight), as apply does before it changes
	// anything; PlanResult.Preflight says what it answered. Without it
	// the plan is judged from the version table alone.
	Preflight bool
}

// PlanResult is what Plan found.
type PlanResult struct {
	// Plan is the changes apply would make; Plan.Vhosts is the scope read.
	Plan *plan.Plan
	// Preflight is the preflight's answer (PlanOptions.Preflight); its
	// refusals are no error of Plan's: the caller shows the plan with them.
	Preflight *preflight.Report
}

// Plan diffs desired against the broker: it refuses what this broker's
// version would refuse of what the plan declares (of an object the broker
// already holds as desired declares it, a note says), diffs a copy of desired adjusted to what the
// version stores (desired itself is never changed) against the broker
// (read unless opts.Read gives the read), fills in the messages and
// consumers at stake in every queue the plan deletes or replaces (exactly,
// over AMQP, where it can) and holds back (plan.Plan.Held) the changes it
// must not make, each with why. It reads only, takes no lock, and tells
// Options.Note what the user should know about the plan.
func (e *Engine) Plan(ctx context.Context, desired *topology.Topology, opts PlanOptions) (*PlanResult, error) {
	// The exact reads go through connections that take no lock (plan
	// changes nothing), opened by the reads once the diff is known.
	pk := newPeeks(e.c, e.amqpURL)
	defer pk.close()
	p, l, known, err := e.diff(ctx, desired, opts.Read, plan.Options{DeleteChanged: opts.DeleteChanged}, opts.TakeOverFrom, pk.open, pk.warm)
	if err != nil {
		return nil, err
	}
	// What the user may not write, which the broker would refuse only
	// once the changes before it were made: apply refuses it, a plan
	// (which needs no more than access to the vhost) says so.
	if err := e.notePermissions(ctx, p, l); err != nil {
		return nil, err
	}
	if opts.Save {
		p.Fingerprint = l.fingerprintFor(desired)
		p.ObjectPrints = plan.PrintsOf(l.objectSums(), desired.Declares(kind.User))
		p.Broker = &plan.Broker{Version: e.c.Version(), Cluster: e.c.ClusterName(), Nodes: e.c.ClusterNodes(ctx)}
	}
	e.noteRestoreLists(l.State(), l.records)
	l.forgetRecords()
	l.forgetPrints()
	e.noteTransientQueues(p)
	e.noteEmptyKeyTopicBindings(desired)
	exactErr, err := e.readStakes(ctx, p, l, known)
	if err != nil {
		return nil, err
	}
	if exactErr != nil {
		e.note("%v; the messages at stake shown come from the management API's statistics, which lag by a few seconds", exactErr)
	}
	e.notePolicyLosses(ctx, p, l)
	e.noteStoppedQuorumQueues(ctx, desired, p, l)
	e.noteStoppedAtStake(ctx, p)
	res := &PlanResult{Plan: p}
	if opts.Preflight {
		amqpURL, err := e.amqpURL(ctx)
		if err != nil {
			return nil, err
		}
		var done func()
		res.Preflight, done, err = e.preflight(ctx, p, l, amqpURL, nil, "Leave out --preflight, which asks for it")
		done()
		if err != nil {
			return nil, err
		}
	}
	// What the plan does to messages, last: it needs only the broker's
	// state, so the ownership records, which only the diff needed, are no
	// longer held while the two simulators are (about 9 MB of a 50,000-
	// object plan's peak).
	// The flows need of desired only the values from the environment and
	// where the broker listens: from here on desired is not held, and the
	// objects only it reaches (those the plan does not change, the file's
	// maps and positions) are not live beside the two simulators (7 MB of
	// the 50,002-object replace plan's peak).
	here, env := e.here(ctx, desired, l.current.State), desired.Env
	if e.beforeFlows != nil {
		e.beforeFlows()
	}
	p.SetFlows(plan.Current{Live: l.current.Live, Here: here, Env: env}, e.c.RabbitMQVersion())
	return res, nil
}

// here is where the broker listens, for the flows to tell whether a
// shovel's URI naming a host is this broker (flow.Here): read only where
// a shovel of desired or of the broker (state) names one, nil where the
// broker does not say (the flows then say they cannot tell).
func (e *Engine) here(ctx context.Context, desired, state *topology.Topology) *flow.Here {
	if !flow.NamesHosts(desired) && !flow.NamesHosts(state) {
		return nil
	}
	n, err := e.c.ReadNodes(ctx)
	if err != nil || n == nil {
		return nil
	}
	return &flow.Here{Hosts: n.Hosts, Ports: n.AMQP, TLSPorts: n.AMQPS}
}

// diff reads the broker for desired's vhosts (unless read, when not nil,
// gives them once desired is checked), diffs them and holds back the changes on queues out of reach;
// the messages at stake are the caller's to read (readStakes), given the
// depths diff read on the way and the exact reads it began through exact
// (known), and so are the plan's flows (plan.Plan.SetFlows). warm, when
// not nil, is told beside the diff the vhosts where it will put a queue
// at stake (peeks.warm).
func (e *Engine) diff(ctx context.Context, desired *topology.Topology, read func() (*Live, error), opts plan.Options, takeOverFrom *string, exact func(context.Context) (inspectFunc, error), warm func(context.Context, []string)) (*plan.Plan, *Live, stakes, error) {
	scope := desired.VhostNames()
	take, err := takeOverOf(desired, takeOverFrom)
	if err != nil {
		return nil, nil, stakes{}, err
	}
	// What the broker says of itself (deprecated features it denies,
	// exchange types it offers) wins over its version's table.
	if _, err := e.c.ReadFacts(ctx); err != nil {
		return nil, nil, stakes{}, err
	}
	version := e.c.RabbitMQVersion()
	if e.asVersion != nil {
		version = e.asVersion.WithFacts(version.Facts())
	}
	// What the broker would refuse is refused here, before anything
	// changes, naming the object and the key; what it accepts is diffed
	// as it stores it (mqctl diff prepares its new side alike).
	// What the table refuses of an object the broker already holds as the
	// file declares it (kept across an upgrade) refuses nothing: the diff
	// tells (refuseDeclared).
	// The check reads the file alone: it runs beside the wait for the
	// read and the diff, which read the file too and change nothing in it
	// (at 50,002 objects it took 22 ms after the read, on the plan's way).
	table := make(chan error, 1)
	go func(desired *topology.Topology) {
		if e.noTable {
			table <- nil
			return
		}
		table <- version.Check(desired)
	}(desired)
	desired = version.Normalize(desired)
	l, err := e.liveFor(ctx, read, scope)
	if err != nil {
		return nil, nil, stakes{}, err
	}
	// What the broker would refuse given what it holds, checked while the
	// diff is made (neither changes desired or the state read; a refusal
	// drops the diff).
	checked := make(chan error, 1)
	go func() { checked <- e.checkAgainst(ctx, version, desired, l) }()
	// What could not be read is the plan's to say (plan.Plan.Unread).
	opts.Version = version
	l.useOwner(desired.Owner, take)
	if take != nil && take.Objects == 0 {
		e.note("--take-over-from %s: that owner's records list nothing in the file's vhosts; there is nothing to take over", topology.OwnerArg(take.From))
	}
	if warm != nil {
		// Looked for beside the diff, which reads the same maps.
		go func(dropped func() []string) {
			if vhosts := dropped(); len(vhosts) > 0 {
				warm(ctx, vhosts)
			}
		}(l.droppedQueues(desired))
	}
	p := plan.DiffWith(desired, l.current, opts)
	if err := e.refusals(ctx, p, desired, version, <-table, checked, l); err != nil {
		return nil, nil, stakes{}, err
	}
	e.keepOwnUser(p)
	e.keepProtected(p, l)
	e.keepUnseenVhosts(p, desired, l)
	e.keepFinishedShovels(p, l)
	e.restoreTopicPermissions(p, desired, l)
	known, err := e.holdBack(ctx, p, l, exact)
	if err != nil {
		return nil, nil, stakes{}, err
	}
	// A vhost's max-queues that would refuse the apply's lock or its
	// queue declarations.
	if err := checkVhostLimits(p, &l.current.Live, version); err != nil && !e.noTable {
		known.exact.abandon()
		return nil, nil, stakes{}, plan.Refuse(fmt.Errorf("plan refused, nothing was changed: %w", err), plan.RefusedVhostLimits, desired, nil)
	}
	e.deleteQueuesFirst(p, &l.current.Live)
	p.Vhosts = scope
	recs := records(l, desired.Declares(kind.User))
	p.OutdatedRecords = outdatedRecords(recs)
	p.UnfinishedRecords = unfinishedRecords(recs)
	p.Restores = restoresOf(l.State(), recs)
	return p, l, known, nil
}

// takeOverOf is what --take-over-from (nil when not given) takes over
// for desired.
func takeOverOf(desired *topology.Topology, takeOverFrom *string) (*plan.TakeOver, error) {
	if takeOverFrom == nil {
		return nil, nil
	}
	if *takeOverFrom == desired.Owner {
		return nil, fmt.Errorf("--take-over-from %s names the file's own owner: name the owner whose records to take over (%s for the files without owner:)",
			topology.OwnerArg(*takeOverFrom), topology.DefaultOwner)
	}
	return &plan.TakeOver{From: *takeOverFrom, Users: desired.Declares(kind.User)}, nil
}

// liveFor is the broker's state of vhosts scope: read's (the read begun
// beside the loader), unless there is none or it is of other vhosts.
func (e *Engine) liveFor(ctx context.Context, read func() (*Live, error), scope []string) (*Live, error) {
	var l *Live
	if read != nil {
		var err error
		if l, err = read(); err != nil {
			return nil, err
		}
	}
	if l == nil || !slices.Equal(l.scope, scope) {
		return e.ReadLive(ctx, scope)
	}
	return l, nil
}

// refusals refuses plan p, before anything changes, for what the broker
// of version would refuse of it: what the version's table refuses of the
// objects p writes (tableErr), what the broker refuses given what it
// holds (checked, begun beside the diff, and the topic keys of its topic
// exchanges), a change to what another owner manages, a binding whose
// end p deletes, and a client's exclusive queue p would write.
func (e *Engine) refusals(ctx context.Context, p *plan.Plan, desired *topology.Topology, version rmqversion.Version, tableErr error, checked <-chan error, l *Live) error {
	if err := e.refuseDeclared(p, desired, version, tableErr, plan.RefusedVersion); err != nil {
		return err
	}
	if err := <-checked; err != nil {
		return plan.Refuse(err, plan.RefusedBrokerState, desired, nil)
	}
	if !e.noTable {
		if err := e.refuseDeclared(p, desired, version, version.CheckBrokerTopicKeys(desired, l.exchangeType), plan.RefusedBrokerState); err != nil {
			return err
		}
	}
	// What another owner's file manages, this file may share as it is,
	// never change.
	if err := p.ConflictError(); err != nil {
		return plan.Refuse(err, plan.RefusedOwnership, desired, p.Conflicts)
	}
	if err := p.CheckDeletedEnds(version, desired); err != nil && !e.noTable {
		return plan.Refuse(fmt.Errorf("plan refused, nothing was changed: %w", err), plan.RefusedDeletedEnd, desired, nil)
	}
	if !e.noTable {
		if err := e.checkClientQueues(ctx, p, version, desired, l); err != nil {
			return plan.Refuse(fmt.Errorf("plan refused, nothing was changed: %w", err), plan.RefusedBrokerState, desired, nil)
		}
	}
	return nil
}

// checkAgainst refuses, before anything changes, what the broker of
// version would refuse given what it holds (l): a topic permission for an
// exchange neither the file nor the broker has (4.3.2+; an exchange mqctl
// could not read may be there), a binding whose end neither has, and a
// shovel (any version) or a federation upstream (4.3.3+) whose URI without
// a host names a vhost the user cannot connect to. (A topic key on a
// broker's topic exchange is refuseDeclared's, after the diff.)
func (e *Engine) checkAgainst(ctx context.Context, version rmqversion.Version, desired *topology.Topology, l *Live) error {
	if e.noTable {
		return nil
	}
	has := func(vhost, x string) bool {
		if _, unread := l.current.UnreadKind(vhost, kind.Exchange); unread {
			return true
		}
		v := l.current.State.Vhosts[vhost]
		return v == nil || v.Exchanges[x] != nil
	}
	for _, err := range []func() error{
		func() error { return version.CheckTopicPermissionExchanges(desired, has) },
		func() error { return version.CheckBindingEnds(desired, e.endExists(ctx, l)) },
		func() error { return version.CheckURIVhosts(desired, e.vhostReach(ctx)) },
	} {
		if err := err(); err != nil {
			return fmt.Errorf("plan refused, nothing was changed: %w", err)
		}
	}
	return nil
}

// keepOwnUser leaves out of p every change that would delete or change
// the user mqctl is connected as, or its permissions or topic
// permissions, and every change to its limits: a new password, a tag or a
// permission taken away, a connection limit would lock the rest of this
// apply, and every one after it, out (the management API asks for the
// password on every request, the lock is an AMQP connection). What grants
// it more (its permissions on a new vhost) is written. The user is told.
func (e *Engine) keepOwnUser(p *plan.Plan) {
	me := e.c.Username()
	p.HoldBack(func(c *plan.Change) (string, string) {
		owner, _ := c.Kind.Owner()
		mine := c.Name == me && (c.Kind == kind.User || owner == kind.User)
		if mine && (c.Action == plan.Delete || c.Action == plan.Update || c.Kind == kind.UserLimits) {
			where := ""
			if c.Vhost != "" {
				where = fmt.Sprintf(" on vhost %q", c.Vhost)
			}
			why := "mqctl is connected as that user, and never changes or deletes it or its access (do it as another user)"
			e.note("%s %q%s is left alone: %s", c.Kind.Label(), me, where, why)
			return plan.HeldOwnUser, why
		}
		return "", ""
	})
}

// keepProtected leaves out of p every change the broker refuses because
// the object is protected, and tells the user why and what to do: without
// this, apply would stop half way on it. A queue the broker reports owned
// by a plugin (internal_owner, 4.1+) is neither deleted nor replaced; a
// user tagged "protected" (4.2+: "Protected users cannot be modified via
// the HTTP API") is neither changed nor deleted. (A vhost protected from deletion needs no such care: mqctl reads,
// and so deletes, only the vhosts the file names.)
func (e *Engine) keepProtected(p *plan.Plan, l *Live) {
	p.HoldBack(func(c *plan.Change) (string, string) {
		if owner := l.current.Owned[c.Vhost][c.Name]; c.Kind == kind.Queue && (c.Action == plan.Delete || c.Action == plan.Replace) && owner != "" {
			why := fmt.Sprintf("the broker reports it owned by %s (internal_owner), and protects it from deletion by clients; the plugin that made it manages it", owner)
			e.note("queue %q in vhost %q is left alone: %s", c.Name, c.Vhost, why)
			return plan.HeldInternalOwner, why
		}
		if c.Kind == kind.User && (c.Action == plan.Delete || c.Action == plan.Update) && protectedUser(l.State().Items.Get(kind.User, c.Name)) && e.c.RabbitMQVersion().ProtectsTaggedUsers() {
			why := fmt.Sprintf("it is tagged protected, and RabbitMQ %s refuses to change or delete a protected user through the management API (\"Protected users cannot be modified via the HTTP API\"); change it with rabbitmqctl, or remove the tag there first", l.current.Version)
			e.note("user %q is left alone: %s", c.Name, why)
			return plan.HeldProtectedUser, why
		}
		return "", ""
	})
}

// protectedUser reports whether user u (nil: none) carries the protected
// tag.
func protectedUser(u *topology.Item) bool {
	if u == nil {
		return false
	}
	tags, _ := u.Settings[kind.UserTags].([]any)
	return slices.Contains(tags, any("protected"))
}

// keepUnseenVhosts leaves out of p every change in a vhost the file names
// that the broker did not show a user who is not an administrator: such a
// user is shown only the vhosts it has permissions on, and RabbitMQ 4.3
// answers 404 for the others as for a vhost that does not exist. Whether
// it exists is unknown, never "absent": the plan records it as unread
// (and only an administrator could create it anyway).
func (e *Engine) keepUnseenVhosts(p *plan.Plan, desired *topology.Topology, l *Live) {
	if e.c.IsAdmin() {
		return
	}
	unseen := map[string]bool{}
	for _, vh := range desired.VhostNames() {
		if l.State().Vhosts[vh] == nil {
			unseen[vh] = true
			p.Unread = append(p.Unread, plan.Unread{Vhost: vh, Kind: kind.Vhost, Declared: 1,
				Reason: e.c.UnseenVhost(vh)})
		}
	}
	if len(unseen) == 0 {
		return
	}
	p.HoldBack(func(c *plan.Change) (string, string) {
		if !unseen[c.Vhost] {
			return "", ""
		}
		return plan.HeldUnseenVhost, fmt.Sprintf("user %q is not shown vhost %q (see what was not read)", e.c.Username(), c.Vhost)
	})
}

// refuseUnseenVhosts refuses, before anything changes, to apply a file
// that names a vhost the broker did not show the user (keepUnseenVhosts):
// none of the file's objects there could be applied, and an apply that
// ended "complete" would say otherwise.
func (e *Engine) refuseUnseenVhosts(p *plan.Plan) error {
	var lines []string
	for _, u := range p.Unread {
		if !u.Kind.Container() {
			continue
		}
		user := e.c.Username()
		lines = append(lines, fmt.Sprintf("user %q is not shown vhost %q: if it does not exist, user %q may not create vhost %q: it needs the administrator tag; if it does, the user has no permissions on it (an administrator grants them: rabbitmqctl set_permissions -p %s %s CONFIGURE WRITE READ)",
			user, u.Vhost, user, u.Vhost, u.Vhost, user))
	}
	if len(lines) == 0 {
		return nil
	}
	return fmt.Errorf("apply refused, nothing was changed: %s", strings.Join(lines, "; "))
}

// outdatedRecords are the vhosts ("" the broker's users) of recs whose
// record is in an older format, sorted: an apply rewrites them, a no-op
// apply included (cleanRecords).
// unfinishedRecords are the vhosts whose record an apply stopped while
// rewriting it left as several exchanges (the new generation written,
// the old not yet deleted): the next apply writes it as one again.
func unfinishedRecords(recs map[string]*ownership.Record) []string {
	var out []string
	for vh, r := range recs {
		if r != nil && vh != "" && len(r.Exchanges) > 1 {
			out = append(out, vh)
		}
	}
	slices.Sort(out)
	return out
}

func outdatedRecords(recs map[string]*ownership.Record) []string {
	var out []string
	for vh, r := range recs {
		if r.Outdated() {
			out = append(out, vh)
		}
	}
	slices.Sort(out)
	return out
}
