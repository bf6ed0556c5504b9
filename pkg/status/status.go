// Package status reports how the queues a topology file declares are doing
// on the live broker: depth, ready and unacknowledged messages, consumers,
// publish and deliver rates, and each queue's role (working queue, DLQ,
// delay tier); and whether its shovels and federation links run. It names
// the states that need attention — a DLQ holding dead letters, a queue
// deeper than its alert.max_depth, a declared queue missing on the broker,
// dead letters a quorum queue keeps because its dead-letter exchange routes
// them to no queue, messages piling up with no consumer, a shovel or a
// federation link that does not run — so that `mqctl status --check` can
// fail a cron job or a CI step on them.
package status

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/mqctl/mqctl/internal/shell"
	"github.com/mqctl/mqctl/pkg/broker"
	"github.com/mqctl/mqctl/pkg/kind"
	"github.com/mqctl/mqctl/pkg/lint"
	"github.com/mqctl/mqctl/pkg/rmqversion"
	"github.com/mqctl/mqctl/pkg/topology"
)

// Severity says whether a problem fails `status --check`.
type Severity string

const (
	// Alert problems fail --check.
	Alert Severity = "alert"
	// Warning problems fail --check only with --strict.
	Warning Severity = "warning"
)

// Kind names a problem.
type Kind string

const (
	KindDeadLetters   Kind = "dead-letters"   // a DLQ holds messages
	KindOverMaxDepth  Kind = "over-max-depth" // depth above the file's alert.max_depth
	KindMissing       Kind = "missing"        // declared in the file, absent on the broker
	KindNoConsumers   Kind = "no-consumers"   // a working queue holds messages and nobody consumes
	KindDeadLettering Kind = "dead-lettering" // a queue holds dead letters its dead-letter exchange has not taken (an alert when it routes them to no queue)
	KindNotRunning    Kind = "not-running"    // the broker reports the queue down (its node), without a majority, crashed, …
	KindMemberDown    Kind = "member-down"    // a quorum queue or stream runs with some of its members down
	KindNoRaftServer  Kind = "no-raft-server" // a quorum queue no Raft server runs for: it nacks every publish, and no listing says so
	KindNoLeader      Kind = "no-leader"      // a quorum queue whose Raft servers never elected a leader: it takes no message, and no listing says so
	KindLinkDown      Kind = "link-down"      // a shovel or a federation link does not run
	KindLinkUnknown   Kind = "link-unknown"   // the broker reports no state of links (no management plugin)
)

// Problem is one thing about a queue that needs attention.
type Problem struct {
	Kind     Kind     `json:"kind"`
	Severity Severity `json:"severity"`
	Message  string   `json:"message"`
}

// Queue is one declared queue and what the broker says about it.
type Queue struct {
	Name string
	Role topology.QueueRole
	// DeadLettersFrom lists the queues whose dead letters reach a DLQ.
	DeadLettersFrom []string
	// ReturnsTo lists the queues a delay tier's expired messages go back to.
	ReturnsTo []string
	// Delay is a delay tier's TTL in milliseconds (0: unknown).
	Delay int64
	// MaxDepth is the file's alert.max_depth (nil: none).
	MaxDepth *int64

	// Present is false when the queue does not exist on the broker.
	Present bool
	// Known is false while the broker has not reported its statistics yet.
	Known    bool
	Type     string
	State    string
	Messages int64
	Ready    int64
	Unacked  int64
	// Delayed are the messages a quorum queue holds back for a delayed
	// retry (RabbitMQ 4.3+), counted in Messages; nil where the broker
	// does not report it.
	Delayed *int64
	// DeadLettering are the dead letters a quorum queue that dead-letters
	// at least once holds until its dead-letter exchange takes them
	// (messages_dlx), counted in Messages; nil where the broker does not
	// report it.
	DeadLettering *int64
	Consumers     int64
	PublishRate   float64
	DeliverRate   float64
	// Node is where the broker says the queue lives (a classic queue's
	// home node, a quorum queue's or stream's leader); Members and Online
	// are a quorum queue's or stream's replicas and those reachable now.
	Node    string
	Members []string
	Online  []string
	// NoServer are the members online (their node runs) where no Raft
	// server of the quorum queue runs, where the broker tells
	// (broker.QueueActivity.NoServer: 3.10).
	NoServer []string
	// Stopped is set for a quorum queue no Raft server runs for (the
	// broker lists it as running all the same).
	Stopped *broker.Stopped
	// Unreachable is true while the broker cannot serve the queue: a
	// classic queue whose home node is down, a quorum queue or stream
	// without a majority of its members online. Its messages are then
	// not counted (Known is false), and no statistics will come until
	// the node or the majority is back.
	Unreachable bool

	Problems []Problem
}

// Vhost is the status of one declared vhost.
type Vhost struct {
	Name string
	// Missing is true when the vhost does not exist on the broker.
	Missing bool
	Queues  []Queue // sorted by name
	// Links are the vhost's shovels the file declares, then the
	// federation links of the upstreams it declares.
	Links []Link
}

// Link is a shovel or a federation link and what the broker says of it.
type Link struct {
	Kind string // "shovel" or "federation link"
	// Name is the shovel's name, or the federation link's upstream.
	Name string
	// Target is what a federation link federates ("exchange x").
	Target string
	// State is the broker's word (running, starting, terminated, error,
	// …); "" when it reports none.
	State  string
	Reason string
	// Exists is false for a shovel the broker does not have.
	Exists   bool
	Problems []Problem
}

// Report is the status of every declared queue.
type Report struct {
	Server  string // management API URL, without credentials
	Version string // RabbitMQ version
	// Strict makes warnings fail the check too.
	Strict bool
	Vhosts []Vhost // sorted by name
}

// Counts returns the number of queues, of alert problems and of warnings
// (of queues and links).
func (r *Report) Counts() (queues, alerts, warnings int) {
	count := func(ps []Problem) {
		for _, p := range ps {
			if p.Severity == Alert {
				alerts++
			} else {
				warnings++
			}
		}
	}
	for _, v := range r.Vhosts {
		queues += len(v.Queues)
		for _, q := range v.Queues {
			count(q.Problems)
		}
		for _, l := range v.Links {
			count(l.Problems)
		}
	}
	return queues, alerts, warnings
}

// Failing returns the problems that fail the check, each prefixed with its
// queue and vhost: alerts, and warnings too when Strict.
func (r *Report) Failing() []string {
	var out []string
	for _, v := range r.Vhosts {
		if v.Missing {
			out = append(out, fmt.Sprintf("vhost %q is missing on the broker, and with it %s the file declares (run mqctl apply)", v.Name, countOf(len(v.Queues), "queue")))
			continue
		}
		for _, q := range v.Queues {
			for _, p := range q.Problems {
				if p.Severity == Alert || r.Strict {
					out = append(out, fmt.Sprintf("queue %q in vhost %q: %s", q.Name, v.Name, p.Message))
				}
			}
		}
		for _, l := range v.Links {
			for _, p := range l.Problems {
				if p.Severity == Alert || r.Strict {
					out = append(out, fmt.Sprintf("%s in vhost %q: %s", l.Label(), v.Name, p.Message))
				}
			}
		}
	}
	return out
}

// Label names l: `shovel "s"`, `federation link from upstream "u" (exchange x)`,
// `federation links` (all of them, unknown).
func (l Link) Label() string {
	if l.Name == "" {
		return l.Kind
	}
	if l.Target != "" {
		return fmt.Sprintf("%s from upstream %q (%s)", l.Kind, l.Name, l.Target)
	}
	return fmt.Sprintf("%s %q", l.Kind, l.Name)
}

// OK reports whether the check passes.
func (r *Report) OK() bool { return len(r.Failing()) == 0 }

// Lister reads the queues of one vhost (broker.Client does).
type Lister interface {
	ListQueueActivity(ctx context.Context, vhost string) ([]broker.QueueActivity, error)
}

// LinkLister reads the states of a vhost's shovels and federation links,
// and the shovels it holds (broker.Client does). Collect asks a Lister
// that is one for the vhosts that declare shovels or upstreams.
type LinkLister interface {
	ListShovelStates(ctx context.Context, vhost string) ([]broker.LinkState, error)
	ListFederationLinks(ctx context.Context, vhost string) ([]broker.LinkState, error)
	ReadItems(ctx context.Context, k kind.Kind, vhost string) ([]*topology.Item, error)
}

// Options tune Collect.
type Options struct {
	// Strict makes warnings (messages with no consumers, a queue not
	// running) fail the check too.
	Strict bool
	// Version is the broker's, for which the file's dead-letter routing is
	// judged (zero: rmqversion.Default).
	Version rmqversion.Version
	// StatsWait bounds how long Collect lists a vhost again while some of
	// its declared queues exist but have no statistics yet (declared less
	// than the broker's statistics interval ago). Zero: no waiting.
	StatsWait time.Duration
	// Poll is the pause between two listings (default 250ms).
	Poll time.Duration
	// Stopped are the declared quorum queues no Raft server runs for, by
	// vhost: Collect asks a Lister that is a RaftChecker.
	Stopped map[string]map[string]broker.Stopped
}

// RaftChecker tells which quorum queues of a vhost no Raft server runs
// for (broker.Client does), from the vhost's listing.
type RaftChecker interface {
	StoppedQuorumQueues(ctx context.Context, vhost string, rows []broker.QueueActivity, names []string) (map[string]broker.Stopped, error)
}

// Collect lists the queues of every vhost of t (one request per vhost)
// and builds the report. Its listings share one reading of which nodes
// run (broker.WithNodesSnapshot: 3.10 asks GET /api/nodes for each).
func Collect(ctx context.Context, t *topology.Topology, src Lister, opts Options) (*Report, error) {
	ctx = broker.WithNodesSnapshot(ctx)
	poll := opts.Poll
	if poll <= 0 {
		poll = 250 * time.Millisecond
	}
	deadline := time.Now().Add(opts.StatsWait)
	live := map[string][]broker.QueueActivity{}
	rc, checks := src.(RaftChecker)
	if checks {
		opts.Stopped = map[string]map[string]broker.Stopped{}
	}
	for _, name := range t.VhostNames() {
		for first := true; ; first = false {
			list, err := src.ListQueueActivity(ctx, name)
			if errors.Is(err, broker.ErrVhostNotFound) {
				break
			}
			if err != nil {
				return nil, err
			}
			live[name] = list
			if checks && first {
				// Asked once: a queue no Raft server runs for reports no
				// statistics to wait for.
				stopped, err := rc.StoppedQuorumQueues(ctx, name, list, t.Vhosts[name].QueueNames())
				if err != nil {
					return nil, err
				}
				opts.Stopped[name] = stopped
			}
			if !pending(t.Vhosts[name], list, opts.Stopped[name]) || !time.Now().Before(deadline) {
				break
			}
			select {
			case <-ctx.Done():
				return nil, fmt.Errorf("wait for the statistics of vhost %q: %w", name, ctx.Err())
			case <-time.After(poll):
			}
		}
	}
	r := Build(t, live, opts)
	if ll, ok := src.(LinkLister); ok {
		for i := range r.Vhosts {
			vs := &r.Vhosts[i]
			if vs.Missing {
				continue
			}
			read, err := readLinks(ctx, ll, t.Vhosts[vs.Name], deadline, poll)
			if err != nil {
				return nil, err
			}
			vs.Links = Links(t.Vhosts[vs.Name], read)
		}
	}
	return r, nil
}

// LinkRead is what the broker said of a vhost's links: the states of its
// shovels and of its federation links (each nil with its error when it
// could not say: ErrNotFound for a broker without the management plugin),
// and the shovels it holds (nil when the user may not read them: reading
// runtime parameters takes the policymaker tag, and status only the
// management tag).
type LinkRead struct {
	Shovels    []broker.LinkState
	ShovelsErr error
	Held       map[string]bool
	Federation []broker.LinkState
	FedErr     error
	// Upstreams are the federation upstreams the broker holds (nil: not
	// read, for a user who may not read them).
	Upstreams map[string]bool
}

// readLinks reads the links of v, if it declares shovels or upstreams,
// again until deadline while one of them is starting (or, for a shovel,
// not reported yet).
func readLinks(ctx context.Context, ll LinkLister, v *topology.Vhost, deadline time.Time, poll time.Duration) (LinkRead, error) {
	var read LinkRead
	shovels, upstreams := v.Items.Names(kind.Shovel), v.Items.Names(kind.FederationUpstream)
	if len(shovels) == 0 && len(upstreams) == 0 {
		return read, nil
	}
	for {
		read = LinkRead{}
		if len(shovels) > 0 {
			read.Shovels, read.ShovelsErr = ll.ListShovelStates(ctx, v.Name)
			held, err := ll.ReadItems(ctx, kind.Shovel, v.Name)
			if err != nil && !errors.Is(err, broker.ErrForbidden) {
				return read, err
			}
			if err == nil {
				read.Held = map[string]bool{}
				for _, it := range held {
					read.Held[it.Name] = true
				}
			}
		}
		if len(upstreams) > 0 {
			read.Federation, read.FedErr = ll.ListFederationLinks(ctx, v.Name)
			held, err := ll.ReadItems(ctx, kind.FederationUpstream, v.Name)
			if err != nil && !errors.Is(err, broker.ErrForbidden) {
				return read, err
			}
			if err == nil {
				read.Upstreams = map[string]bool{}
				for _, it := range held {
					read.Upstreams[it.Name] = true
				}
			}
		}
		if err := fatal(read.ShovelsErr, read.FedErr); err != nil {
			return read, err
		}
		if !linksPending(v, read) || !time.Now().Before(deadline) {
			return read, nil
		}
		select {
		case <-ctx.Done():
			return read, fmt.Errorf("wait for the shovels and federation links of vhost %q: %w", v.Name, ctx.Err())
		case <-time.After(poll):
		}
	}
}

// fatal is the first of errs that is not the broker lacking an endpoint,
// refusing it to the user or failing to answer it (see unknown).
func fatal(errs ...error) error {
	for _, err := range errs {
		if err != nil && (!(errors.Is(err, broker.ErrNotFound) || errors.Is(err, broker.ErrForbidden) || answered5xx(err)) || errors.Is(err, broker.ErrVhostNotFound)) {
			return err
		}
	}
	return nil
}

// answered5xx reports whether err is the broker answering a server error:
// RabbitMQ 3.10.8 answers 500 now and then to a federation links listing
// while a link restarts (measured under load).
func answered5xx(err error) bool {
	var ae *broker.APIError
	return errors.As(err, &ae) && ae.Status >= 500
}

// unknown is the warning of links whose states the broker did not give
// (err): it has no such endpoint without the management plugin of what
// (shovel or federation), and gives it only to a user with the monitoring
// tag (or administrator).
func unknown(err error, what string) Problem {
	if answered5xx(err) {
		return Problem{KindLinkUnknown, Warning, fmt.Sprintf("state unknown: the broker failed to list %s states: %v", what, err)}
	}
	if errors.Is(err, broker.ErrForbidden) {
		return Problem{KindLinkUnknown, Warning, fmt.Sprintf("state unknown: the user may not read %s states (RabbitMQ gives them to the monitoring and administrator tags)", what)}
	}
	return Problem{KindLinkUnknown, Warning, fmt.Sprintf("state unknown: the broker reports no %s states (enable the rabbitmq_%s_management plugin)", what, strings.ReplaceAll(what, " link", ""))}
}

// linksPending reports whether a declared shovel the broker holds is
// starting or not reported, or a federation link of a declared upstream
// is starting, or a declared upstream a policy of the file federates
// with has no link yet (the broker starts links a moment after the
// policy is set).
func linksPending(v *topology.Vhost, read LinkRead) bool {
	if answered5xx(read.ShovelsErr) || answered5xx(read.FedErr) {
		return true // asked again until the wait ends
	}
	for _, l := range Links(v, read) {
		if l.State == "starting" || (l.Exists && l.State == "" && read.ShovelsErr == nil && l.Kind == "shovel") {
			return true
		}
	}
	if read.FedErr != nil {
		return false
	}
	linked := map[string]bool{}
	for _, st := range read.Federation {
		linked[st.Name] = true
	}
	for _, up := range federatedUpstreams(v) {
		if !linked[up] {
			return true
		}
	}
	return false
}

// federatedUpstreams are the upstreams v declares that a policy of v
// federates with: by federation-upstream, or through
// federation-upstream-set (a set of v's, or "all").
func federatedUpstreams(v *topology.Vhost) []string {
	declared := v.Items.Names(kind.FederationUpstream)
	used := map[string]bool{}
	for _, p := range v.Policies {
		if up, ok := p.Definition["federation-upstream"].(string); ok {
			used[up] = true
		}
		set, ok := p.Definition["federation-upstream-set"].(string)
		if !ok {
			continue
		}
		if set == "all" {
			for _, up := range declared {
				used[up] = true
			}
			continue
		}
		if it := v.Items.Get(kind.FederationUpstreamSet, set); it != nil {
			for _, m := range kind.UpstreamSetMembers(it.Settings) {
				if up, ok := m["upstream"].(string); ok {
					used[up] = true
				}
			}
		}
	}
	var out []string
	for _, up := range declared {
		if used[up] {
			out = append(out, up)
		}
	}
	return out
}

// Links are the shovels v declares and the federation links of the
// upstreams it declares, with their problems, from what the broker said
// (read). It is a pure function.
func Links(v *topology.Vhost, read LinkRead) []Link {
	var out []Link
	states := map[string]broker.LinkState{}
	for _, s := range read.Shovels {
		states[s.Name] = s
	}
	for _, name := range v.Items.Names(kind.Shovel) {
		st, listed := states[name]
		l := Link{Kind: "shovel", Name: name, Exists: read.Held[name] || (read.Held == nil && listed), State: st.State, Reason: st.Reason}
		oneShot := selfDeleting(v, name)
		switch {
		case read.Held == nil && !listed && read.ShovelsErr == nil:
			l.Problems = []Problem{{KindLinkDown, Alert, "not running: the broker reports no state for it (it is missing, or it keeps failing to start)"}}
		case !l.Exists && read.Held != nil && oneShot != "":
			// Gone once done: not down, unless it never ran.
			l.Problems = []Problem{{KindMissing, Warning, fmt.Sprintf("not on the broker: it deletes itself once done (%s), so it has finished, unless it was never applied", oneShot)}}
		case !l.Exists && read.Held != nil:
			l.Problems = []Problem{{KindMissing, Alert, "missing on the broker (run mqctl apply)"}}
		case read.ShovelsErr != nil:
			l.Problems = []Problem{unknown(read.ShovelsErr, "shovel")}
		default:
			l.Problems = linkProblems(l, "moves no messages")
		}
		out = append(out, l)
	}
	declared := map[string]bool{}
	for _, name := range v.Items.Names(kind.FederationUpstream) {
		declared[name] = true
		if read.Upstreams != nil && !read.Upstreams[name] {
			out = append(out, Link{Kind: "federation upstream", Name: name, Problems: []Problem{{KindMissing, Alert, "missing on the broker (run mqctl apply)"}}})
		}
	}
	if len(declared) > 0 && read.FedErr != nil {
		out = append(out, Link{Kind: "federation links", Problems: []Problem{unknown(read.FedErr, "federation link")}})
		return out
	}
	for _, st := range read.Federation {
		if !declared[st.Name] {
			continue
		}
		l := Link{Kind: "federation link", Name: st.Name, Target: st.Target, State: st.State, Reason: st.Reason, Exists: true}
		l.Problems = linkProblems(l, "federates no messages")
		out = append(out, l)
	}
	return out
}

// linkProblems finds what needs attention in a link the broker has: it
// runs, or it does not (an alert). One still starting after Collect's
// wait keeps retrying to connect (3.10.8 reports a shovel that cannot
// connect as starting for ever; 4.3.6 as terminated).
func linkProblems(l Link, stopped string) []Problem {
	why := ""
	if l.Reason != "" {
		why = ": " + l.Reason
	}
	switch l.State {
	case "running":
		return nil
	case "starting":
		return []Problem{{KindLinkDown, Alert, "still starting" + why + ": it keeps retrying to connect, so it " + stopped}}
	case "":
		return []Problem{{KindLinkDown, Alert, "not running: the broker reports no state for it (it keeps failing to start)"}}
	}
	return []Problem{{KindLinkDown, Alert, fmt.Sprintf("%s%s, so it %s", l.State, why, stopped)}}
}

// pending reports whether a queue v declares exists in list without
// statistics, and may report some (it is neither unreachable nor
// stopped).
func pending(v *topology.Vhost, list []broker.QueueActivity, stopped map[string]broker.Stopped) bool {
	for _, a := range list {
		_, dead := stopped[a.Name]
		if _, declared := v.Queues[a.Name]; declared && !a.Known && !unreachable(a) && !dead {
			return true
		}
	}
	return false
}

// Build maps the broker's queue lists (by vhost; a vhost absent from live
// does not exist on the broker) onto the queues t declares and finds the
// problems, with opts.Strict and opts.Version (its other fields are
// Collect's). It is a pure function.
func Build(t *topology.Topology, live map[string][]broker.QueueActivity, opts Options) *Report {
	r := &Report{Strict: opts.Strict}
	unrouted := unroutedDeadLetters(t, live, opts.Version)
	for _, vname := range t.VhostNames() {
		v := t.Vhosts[vname]
		list, exists := live[vname]
		byName := make(map[string]broker.QueueActivity, len(list))
		for _, a := range list {
			byName[a.Name] = a
		}
		roles := lint.Roles(v)
		vs := Vhost{Name: vname, Missing: !exists}
		for _, qname := range v.QueueNames() {
			decl := v.Queues[qname]
			ri := roles[qname]
			q := Queue{Name: qname, Role: ri.Role, DeadLettersFrom: ri.From, ReturnsTo: ri.ReturnsTo, Delay: ri.DelayMS}
			if decl.Alert != nil {
				d := decl.Alert.MaxDepth
				q.MaxDepth = &d
			}
			if a, ok := byName[qname]; ok {
				q.Present, q.Known, q.Type, q.State = true, a.Known, a.Type, a.State
				q.Messages, q.Ready, q.Unacked, q.Delayed, q.DeadLettering, q.Consumers = a.Messages, a.Ready, a.Unacked, a.Delayed, a.DeadLettering, a.Consumers
				q.PublishRate, q.DeliverRate = a.PublishRate, a.DeliverRate
				q.Node, q.Members, q.Online, q.NoServer, q.Unreachable = a.Node, a.Members, a.Online, a.NoServer, unreachable(a)
				if s, ok := opts.Stopped[vname][qname]; ok {
					q.Stopped = &s
				}
			}
			q.Problems = problems(vname, &q, vs.Missing, unrouted[vname][qname])
			vs.Queues = append(vs.Queues, q)
		}
		r.Vhosts = append(r.Vhosts, vs)
	}
	return r
}

// offline returns the members of a quorum queue or stream that are not
// online.
func offline(members, online []string) []string {
	var off []string
	for _, m := range members {
		if !slices.Contains(online, m) {
			off = append(off, m)
		}
	}
	return off
}

// replicated reports whether a queue of type typ has members (a quorum
// queue or a stream).
func replicated(typ string) bool {
	return typ == topology.QueueQuorum || typ == topology.QueueStream
}

// unreachable reports whether the broker cannot serve queue a: a classic
// queue whose home node is down (state "down" in a listing on every
// version, "stopped" on 4.x), or a quorum queue or stream without a
// majority of its members online (state "minority" from 4.0; RabbitMQ
// 3.10 reports no state then, only its members and those online).
func unreachable(a broker.QueueActivity) bool {
	if !replicated(a.Type) {
		return a.State == "down" || a.State == "stopped"
	}
	if a.State == "minority" {
		return true
	}
	return len(a.Members) > 0 && 2*(len(a.Members)-len(offline(a.Members, a.Online))) <= len(a.Members)
}

// placementProblem says what a node that is down does to q: a classic
// queue on it, a quorum queue or stream without a majority, or one with
// a member down that still runs. ok is false when no node of q is down
// as far as the broker reports.
func placementProblem(vhost string, q *Queue) (p Problem, ok bool) {
	off := offline(q.Members, q.Online)
	uncounted := ""
	if !q.Known {
		uncounted = " (not counted)"
	}
	switch {
	case q.Unreachable && !replicated(q.Type):
		node := q.Node
		if node == "" {
			node = "(unknown)"
		}
		return Problem{KindNotRunning, Warning, fmt.Sprintf("its node %s is down: the queue and its messages%s wait on that node's disk "+
			"until it is back, and no client can publish to it or consume from it meanwhile", node, uncounted)}, true
	case q.Unreachable:
		// The broker may say "minority" before its list of the members
		// online catches up.
		members := "without a majority of its members online"
		switch {
		case len(off) > 0:
			members = fmt.Sprintf("%d of its %d members online (down: %s), no majority", len(q.Members)-len(off), len(q.Members), strings.Join(off, ", "))
		case len(q.Members) > 0:
			members = fmt.Sprintf("without a majority of its %d members online", len(q.Members))
		}
		what := "it takes and delivers no message"
		if q.Type == topology.QueueStream {
			what = "it takes no message"
		}
		return Problem{KindNotRunning, Warning, fmt.Sprintf("%s: %s, and its messages%s wait, until a majority of its members is back",
			members, what, uncounted)}, true
	case len(q.NoServer) > 0:
		// 3.10: a member whose node runs without the queue's Raft server
		// counts for no majority, and no wait brings it back.
		servers := len(q.Members) - len(off) - len(q.NoServer)
		down := ""
		if len(off) > 0 {
			down = "; down: " + strings.Join(off, ", ")
		}
		what := fmt.Sprintf("%d of its %d members run its Raft server (none on %s, whose node runs%s)", servers, len(q.Members), strings.Join(q.NoServer, ", "), down)
		fix := fmt.Sprintf("mqctl apply does not repair it: start its Raft servers again, which keeps what their logs hold (%s: ok for each member it starts, {error,{already_started,…}} for one that runs)",
			broker.RestartServersCommand(vhost, q.Name))
		if 2*servers <= len(q.Members) {
			return Problem{KindNotRunning, Warning, fmt.Sprintf("%s, no majority: it takes and delivers no message until a majority runs again; %s", what, fix)}, true
		}
		return Problem{KindMemberDown, Warning, fmt.Sprintf("%s: it runs, but loses its majority if %s; %s", what, spare(len(q.Members), len(off)+len(q.NoServer)), fix)}, true
	case replicated(q.Type) && len(off) > 0:
		return Problem{KindMemberDown, Warning, fmt.Sprintf("%d of its %d members online (down: %s): it runs, but loses its majority "+
			"if %s", len(q.Members)-len(off), len(q.Members), strings.Join(off, ", "), spare(len(q.Members), len(off)))}, true
	}
	return Problem{}, false
}

// spare says how many more of a replicated queue's members going down
// cost it its majority, for a queue that still has one.
func spare(members, off int) string {
	if n := members - off - members/2; n > 1 {
		return fmt.Sprintf("%d more go down", n)
	}
	return "one more goes down"
}

// badState reports whether a queue state means the queue cannot serve: a
// quorum queue without a majority, a crashed or stopped queue process.
func badState(state string) bool {
	switch state {
	case "down", "crashed", "stopped", "minority", "terminated":
		return true
	}
	return false
}

// unroutedRules are lint's rules that find dead letters the file's
// dead-letter wiring routes to no queue: MQ102 (the dead-letter exchange
// is not declared) and MQ103 (no binding matches them).
var unroutedRules = func() *lint.Registry {
	builtin := lint.Builtin()
	var as []*lint.Analyzer
	for _, id := range []string{"MQ102", "MQ103"} {
		a, ok := builtin.Lookup(id)
		if !ok {
			panic("lint has no rule " + id) // a fixed table, covered by tests
		}
		as = append(as, a)
	}
	r, err := lint.NewRegistry(as...)
	if err != nil {
		panic(err) // two distinct rules of the catalogue
	}
	return r
}()

// unroutedDeadLetters finds, by vhost and queue, why the file routes to no
// queue the dead letters of the declared queues that hold some for their
// dead-letter exchange (messages_dlx in live): the finding of MQ102 or
// MQ103, which says where they go and names the fix. At-least-once
// dead-lettering keeps those dead letters in the queue until the wiring
// changes. A queue whose dead letters the file routes somewhere is absent:
// its dead letters are on their way, or a DLQ refuses them.
func unroutedDeadLetters(t *topology.Topology, live map[string][]broker.QueueActivity, ver rmqversion.Version) map[string]map[string]lint.Finding {
	// Only the vhosts with such queues are judged, without the file's
	// lint settings: status reports what the broker holds, whatever lint
	// is told to say of the file.
	judged := &topology.Topology{Vhosts: map[string]*topology.Vhost{}, Items: t.Items}
	for vname, list := range live {
		v := t.Vhosts[vname]
		if v == nil {
			continue
		}
		for _, a := range list {
			if _, declared := v.Queues[a.Name]; declared && a.Known && a.DeadLettering != nil && *a.DeadLettering > 0 {
				judged.Vhosts[vname] = v
			}
		}
	}
	if len(judged.Vhosts) == 0 {
		return nil
	}
	fs, err := unroutedRules.Run(judged, lint.Options{Version: ver})
	if err != nil {
		panic(err) // only lint settings fail a run, and judged has none
	}
	out := map[string]map[string]lint.Finding{}
	for _, f := range fs {
		if f.Object.Kind != lint.KindQueue {
			continue
		}
		if out[f.Vhost] == nil {
			out[f.Vhost] = map[string]lint.Finding{}
		}
		if _, seen := out[f.Vhost][f.Object.Name]; !seen {
			out[f.Vhost][f.Object.Name] = f
		}
	}
	return out
}

// problems finds what needs attention in q of vhost; unrouted is lint's
// finding that the file routes q's dead letters to no queue (zero: none).
func problems(vhost string, q *Queue, vhostMissing bool, unrouted lint.Finding) []Problem {
	out := []Problem{}
	if !q.Present {
		msg := "missing on the broker (run mqctl apply)"
		if vhostMissing {
			msg = "missing on the broker: its vhost does not exist"
		}
		return append(out, Problem{KindMissing, Alert, msg})
	}
	if q.Stopped != nil {
		// No listing says so; what it counted last is all it holds.
		var last *int64
		if q.Known {
			last = &q.Messages
		}
		kind := KindNoRaftServer
		if q.Stopped.Unelected {
			kind = KindNoLeader
		}
		out = append(out, Problem{kind, Alert, q.Stopped.Advice(vhost, q.Name, last)})
	} else if p, ok := placementProblem(vhost, q); ok {
		out = append(out, p)
	} else if badState(q.State) {
		out = append(out, Problem{KindNotRunning, Warning, fmt.Sprintf("the broker reports the queue %s", q.State)})
	}
	if !q.Known {
		return out
	}
	if q.Role == topology.RoleDeadLetter && q.Messages > 0 {
		msg := fmt.Sprintf("DLQ holds %s", plural(q.Messages, "dead letter"))
		if len(q.DeadLettersFrom) > 0 {
			msg += " (from " + joinNames(q.DeadLettersFrom) + ")"
		}
		out = append(out, Problem{KindDeadLetters, Alert, msg + ": " + dlqAdvice(vhost, q)})
	}
	switch n := q.DeadLettering; {
	case n == nil || *n == 0:
	case unrouted.ID != "":
		// Dead letters outside any DLQ, there until the wiring changes.
		out = append(out, Problem{KindDeadLettering, Alert, fmt.Sprintf("%s outside any DLQ (%s): %s", plural(*n, "dead letter"), unrouted.ID, unrouted.Message)})
	default:
		out = append(out, Problem{KindDeadLettering, Warning, fmt.Sprintf("%s waiting for its dead-letter exchange to take them (at-least-once dead-lettering: RabbitMQ keeps them here until a DLQ takes them)", plural(*n, "dead letter"))})
	}
	if q.MaxDepth != nil && q.Messages > *q.MaxDepth {
		out = append(out, Problem{KindOverMaxDepth, Alert, fmt.Sprintf("depth %d > alert.max_depth %d", q.Messages, *q.MaxDepth)})
	}
	// DLQs are read by hand, delay tiers by nobody, streams keep their
	// messages whoever reads them: only a working queue wants a consumer,
	// for the messages one can take: ready, unacknowledged and held back
	// for a delayed retry (ready again once their wait ends), not the dead
	// letters waiting for the dead-letter exchange, which no consumer gets;
	// and none while no Raft server runs for it, which none could get.
	if n := forConsumers(q); q.Role == topology.RoleWorking && q.Type != topology.QueueStream && q.Stopped == nil && n > 0 && q.Consumers == 0 {
		out = append(out, Problem{KindNoConsumers, Warning, fmt.Sprintf("%s, no consumers", plural(n, "message"))})
	}
	return out
}

// dlqAdvice says how to look at the dead letters DLQ q of vhost holds and
// move them back once their cause is fixed: mqctl dlq peek and replay,
// with the queue and vhost, and --from-queue where the dead letters of
// several queues meet. dlq reads no stream (basic.get does not work on
// one), so for a stream it says what does.
func dlqAdvice(vhost string, q *Queue) string {
	if q.Type == topology.QueueStream {
		return "mqctl dlq does not read a stream, which keeps its messages whoever reads them: read them with a stream consumer from an offset, and keep dead letters for replay in a classic or quorum queue"
	}
	cmd := func(sub string) string {
		return fmt.Sprintf("mqctl dlq %s %s --vhost %s", sub, shell.Quote(q.Name), shell.Quote(vhost))
	}
	advice := fmt.Sprintf("see them, with why and where each died, with `%s`; once what made them fail is fixed, move them back where they came from with `%s` (add --dry-run first to see where each goes)", cmd("peek"), cmd("replay"))
	if len(q.DeadLettersFrom) > 1 {
		advice += fmt.Sprintf(", or those of one queue alone with --from-queue %s", shell.Quote(q.DeadLettersFrom[0]))
	}
	return advice
}

// forConsumers is how many of q's messages a consumer can still get: its
// messages but the dead letters it holds for its dead-letter exchange.
func forConsumers(q *Queue) int64 {
	if q.DeadLettering == nil {
		return q.Messages
	}
	return q.Messages - *q.DeadLettering
}

func plural(n int64, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

// joinNames renders up to three names, then "and N more".
func joinNames(names []string) string {
	const show = 3
	switch {
	case len(names) == 1:
		return names[0]
	case len(names) <= show:
		s := names[0]
		for _, n := range names[1 : len(names)-1] {
			s += ", " + n
		}
		return s + " and " + names[len(names)-1]
	default:
		s := names[0]
		for _, n := range names[1:show] {
			s += ", " + n
		}
		return fmt.Sprintf("%s and %d more", s, len(names)-show)
	}
}

// selfDeleting says which setting makes shovel name of v delete itself
// once done ("src-delete-after: queue-length"), "" for none.
func selfDeleting(v *topology.Vhost, name string) string {
	if key, value := kind.DeletesItself(v.Items.Get(kind.Shovel, name).Settings); key != "" {
		return fmt.Sprintf("%s: %v", key, value)
	}
	return ""
}
