package engine

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/mqctl/mqctl/internal/parallel"
	"github.com/mqctl/mqctl/pkg/apply"
	"github.com/mqctl/mqctl/pkg/broker"
	"github.com/mqctl/mqctl/pkg/kind"
	"github.com/mqctl/mqctl/pkg/plan"
	"github.com/mqctl/mqctl/pkg/topology"
)

// What a RabbitMQ cluster adds to plan and apply.
//
// A classic queue lives on one node. While that node is down, the queue and
// its messages wait on that node's disk; the other nodes still list the
// queue in their definitions, with its node and state "down". What else
// they do depends on the version (see broker.Placement): 3.10 answers 404
// to GET and DELETE of it, refuses to bind it and leaves its bindings out
// of every listing, so a plain diff would plan to bind it again (and
// fail), or "delete" it with a 404 taken for success; 4.0 lists its
// bindings, binds it, and deletes it when asked, messages and all. A quorum
// queue (or stream) without a majority of its members online is deleted
// by both, forcibly, with messages nobody could count. holdBackDownQueues
// recognises such queues from what the broker reports about their node or
// members, never from what it refuses or hides, keeps every change on them
// (and on their bindings) out of the plan, and says why.

// queueRef is a queue by vhost and name.
type queueRef struct{ vhost, name string }

// holdBack is holdBackDownQueues with the exact reads of the queues p
// deletes or replaces (through exact, when given) begun beside it; they
// are in the stakes it returns, for readStakes to merge.
func (e *Engine) holdBack(ctx context.Context, p *plan.Plan, l *Live, exact func(context.Context) (inspectFunc, error)) (stakes, error) {
	var reads *exactReads
	if exact != nil {
		reads = startExact(ctx, p, exact)
	}
	known, err := e.holdBackDownQueues(ctx, p, l)
	if err != nil {
		reads.abandon()
		return stakes{}, err
	}
	known.exact = reads
	return known, nil
}

// holdBackDownQueues removes from p the changes on existing queues that
// cannot be reached: classic queues whose home node is down (bindings to
// them created or deleted, the queue deleted or replaced), and quorum
// queues and streams without a majority of their members online (the queue
// deleted or replaced, with its binding changes). Each such queue gets a
// note saying what is down and what waits for it. Only the
// queues the plan would touch are checked: one GET each, and one queue
// listing per vhost where one of them does not answer (RabbitMQ 3.10
// answers 404 for a classic queue on a down node).
//
// The placements also say which of the queues the plan deletes or
// replaces a plugin owns (broker.Placement.Owner): a read from the
// definitions (broker.SourceDefinitions) tells no owner, so they are
// recorded in the state read (Live.Owned) and keepProtected leaves those
// queues alone, as it does with the owners the lists tell.
func (e *Engine) holdBackDownQueues(ctx context.Context, p *plan.Plan, l *Live) (stakes, error) {
	cands := map[queueRef]bool{}
	streams := map[string]bool{} // vhosts with a stream at stake
	created := map[queueRef]bool{}
	for _, ch := range p.Changes {
		if ch.Kind == kind.Queue && ch.Action == plan.Create {
			created[queueRef{ch.Vhost, ch.Name}] = true
		}
	}
	for _, ch := range p.Changes {
		r, ok := touchedQueue(ch)
		if !ok || created[r] {
			continue
		}
		// Bindings matter for a classic queue only: the broker binds a
		// quorum queue or stream without a majority as any other.
		typ, ok := brokerQueueType(l, r)
		if ok && (typ == topology.QueueClassic || ch.Kind == kind.Queue) {
			cands[r] = cands[r] || ch.RisksMessages()
		}
		if ok && typ == topology.QueueStream && ch.RisksMessages() {
			streams[r.vhost] = true
		}
	}
	if len(cands) == 0 {
		return stakes{}, nil
	}
	down, read, owners, err := downQueues(ctx, e.c, cands, streams)
	if err != nil {
		return stakes{}, err
	}
	if l.keepOwners(owners) {
		e.keepProtected(p, l)
	}
	if len(down) == 0 {
		return read, nil
	}
	// RabbitMQ 3.10 leaves the bindings of a queue on a down node out of
	// every listing: a vhost with such a queue keeps its record's bindings
	// that seem gone until the node is back.
	downVhost := map[string]bool{}
	for r := range down {
		downVhost[r.vhost] = true
	}
	p.Stale = slices.DeleteFunc(p.Stale, func(ref plan.ObjectRef) bool { return ref.Kind == kind.Binding && downVhost[ref.Vhost] })
	// What waits for each queue, then each of those changes held back
	// with that.
	held := map[queueRef][]string{}
	for _, ch := range p.Changes {
		if r, ok := touchedQueue(ch); ok && down[r] != nil {
			held[r] = append(held[r], fmt.Sprintf("%s %s %s", ch.Action, ch.Kind, ch.Name))
		}
	}
	p.HoldBack(func(ch *plan.Change) (string, string) {
		if r, ok := touchedQueue(*ch); ok && down[r] != nil {
			return plan.HeldNodeDown, downNote(r, down[r], nil)
		}
		return "", ""
	})
	refs := make([]queueRef, 0, len(held))
	for r := range held {
		refs = append(refs, r)
	}
	sort.Slice(refs, func(i, j int) bool {
		return refs[i].vhost < refs[j].vhost || (refs[i].vhost == refs[j].vhost && refs[i].name < refs[j].name)
	})
	for _, n := range downNotes(refs, down, held) {
		e.note("%s", n)
	}
	return read, nil
}

// oneNoteEach is how many queues out of reach get a note each; past it,
// one note per node that is down (or set of members that are) says it
// for all its queues, naming the first of them: a node holding 400
// queues gave 400 notes of three lines each (the plan's held list names
// them all).
const oneNoteEach = 5

// downNotes are the notes on the queues refs (sorted) that down puts out
// of reach, with what waits for each (held).
func downNotes(refs []queueRef, down map[queueRef]*broker.Placement, held map[queueRef][]string) []string {
	if len(refs) <= oneNoteEach {
		out := make([]string, 0, len(refs))
		for _, r := range refs {
			out = append(out, downNote(r, down[r], held[r]))
		}
		return out
	}
	type group struct {
		why    string
		refs   []queueRef
		queues []string
		waits  int
	}
	var order []string
	groups := map[string]*group{}
	for _, r := range refs {
		q := down[r]
		key, why := "", ""
		if q.Down {
			node := q.Node
			if node == "" {
				node = "(unknown)"
			}
			key = "node " + node
			why = fmt.Sprintf("live on node %s, which is down: their messages wait on that node's disk, and until the node is back RabbitMQ can neither count them nor bind or delete the queues safely; run again once %s is back", node, node)
		} else {
			off := q.Offline()
			key = "members " + strings.Join(off, ",")
			why = fmt.Sprintf("have lost the majority of their members (down: %s): without it RabbitMQ cannot count their messages, and deleting them would force them away; run again once a majority is back", strings.Join(off, ", "))
		}
		g := groups[key]
		if g == nil {
			g = &group{why: why}
			groups[key] = g
			order = append(order, key)
		}
		g.refs = append(g.refs, r)
		g.queues = append(g.queues, fmt.Sprintf("%q in vhost %q", r.name, r.vhost))
		g.waits += len(held[r])
	}
	out := make([]string, 0, len(order))
	for _, key := range order {
		g := groups[key]
		if len(g.refs) == 1 {
			r := g.refs[0]
			out = append(out, downNote(r, down[r], held[r]))
			continue
		}
		shown := g.queues[:min(len(g.queues), 10)]
		more := ""
		if n := len(g.queues) - len(shown); n > 0 {
			more = fmt.Sprintf(" and %d more", n)
		}
		waits := "the change that waits"
		if g.waits != 1 {
			waits = fmt.Sprintf("the %d changes that wait", g.waits)
		}
		out = append(out, fmt.Sprintf("%d queues %s; this run leaves them alone, with %s for them (the plan's held-back list names each): %s%s",
			len(g.queues), g.why, waits, strings.Join(shown, ", "), more))
	}
	return out
}

// downNote says why queue r is left alone and what waits for it.
func downNote(r queueRef, q *broker.Placement, held []string) string {
	// What waits, in parentheses (the plan's Held lists it instead).
	what := ""
	if len(held) > 0 {
		what = " (" + strings.Join(held, "; ") + ")"
	}
	if q.Down {
		node := q.Node
		if node == "" {
			node = "(unknown)"
		}
		return fmt.Sprintf("queue %q in vhost %q lives on node %s, which is down: its messages wait on that node's disk, and until "+
			"the node is back RabbitMQ can neither count them nor bind or delete the queue safely, so this run leaves it alone%s; run again once %s is back",
			r.name, r.vhost, node, what, node)
	}
	off := q.Offline()
	return fmt.Sprintf("%s queue %q in vhost %q has %d of its %d members online (down: %s): without a majority RabbitMQ cannot count its "+
		"messages, and deleting it would force them away, so this run leaves it alone%s; run again once a majority is back",
		q.Type, r.name, r.vhost, len(q.Members)-len(off), len(q.Members), strings.Join(off, ", "), what)
}

// touchedQueue is the existing queue a change acts on: the destination of a
// binding (a kind named by its ends) created or deleted, or the queue (a
// kind that holds messages) deleted or replaced.
func touchedQueue(ch plan.Change) (queueRef, bool) {
	switch {
	case ch.Kind.NamedByEnds():
		for _, o := range []plan.Object{ch.After, ch.Before} {
			if b, ok := o.(plan.BindingObject); ok && b.DestinationType == topology.DestQueue {
				return queueRef{ch.Vhost, b.Destination}, true
			}
		}
	case ch.Kind.HoldsMessages():
		if ch.Action == plan.Delete || ch.Action == plan.Replace {
			return queueRef{ch.Vhost, ch.Name}, true
		}
	}
	return queueRef{}, false
}

// brokerQueueType returns the type of queue r in the broker state read for
// the plan (classic for a queue without one), and whether r is there.
func brokerQueueType(l *Live, r queueRef) (string, bool) {
	if l == nil || l.current.State == nil {
		return "", false
	}
	v := l.current.State.Vhosts[r.vhost]
	if v == nil {
		return "", false
	}
	q := v.Queues[r.name]
	if q == nil {
		return "", false
	}
	if q.Type == "" {
		return topology.QueueClassic, true
	}
	return q.Type, true
}

// downQueues returns, for each queue of cands that cannot be reached (a
// classic queue whose home node is down, a quorum queue or stream without a
// majority), where the broker says it lives; the depth and consumers of
// the reachable candidates that a listing gave (with statistics, before
// 4.0; from 4.0 the depth alone of those at stake, cands[r] true, from the
// queue totals: stakes.depthOnly); and the owner of each candidate the
// broker says a plugin owns.
//
// From 4.0 the queue totals are left out of the listing of a vhost that
// holds no unacknowledged message (broker.Client.VhostUnacked), unless a
// stream is at stake there (streams): a queue's depth is then its ready
// messages, which the exact reads count as they are now, and the totals
// would only have repeated them a few seconds late. They cost the broker
// most of the listing (on 4.3.6, 25,000 queues listed in 2.3 s with them
// and 1.0-1.2 s without). The queues at stake are handed on as
// stakes.depthOnly with no messages of their own: where the exact reads
// do not run, or fail, readStakes reads their statistics after all.
func downQueues(ctx context.Context, c *broker.Client, cands map[queueRef]bool, streams map[string]bool) (map[queueRef]*broker.Placement, stakes, map[queueRef]string, error) {
	f := &placed{down: map[queueRef]*broker.Placement{}, owners: map[queueRef]string{}, read: stakes{}}
	listed, err := f.readEach(ctx, c, cands)
	if err != nil {
		return nil, stakes{}, nil, err
	}
	for vh := range listed {
		if err := f.readListing(ctx, c, vh, cands, streams[vh]); err != nil {
			return nil, stakes{}, nil, err
		}
	}
	return f.down, f.read, f.owners, nil
}

// placed is what downQueues found.
type placed struct {
	down   map[queueRef]*broker.Placement
	owners map[queueRef]string
	read   stakes
}

// note records what the broker says of queue r.
func (f *placed) note(r queueRef, q *broker.Placement) {
	if q.Owner != "" {
		f.owners[r] = q.Owner
	}
	if q.Down || q.NoMajority() {
		f.down[r] = q
	}
}

// readEach reads the placement of each candidate one by one, where its
// vhost has few of them, and returns the vhosts to list instead. A vhost
// with more than a few candidates is read with one listing (a teardown
// plan of 4,000 queues would take 4,000 reads); so is one with a queue
// that does not answer: the listing also holds the classic queues of a
// down node that 3.10 answers 404 for.
func (f *placed) readEach(ctx context.Context, c *broker.Client, cands map[queueRef]bool) (listed map[string]bool, err error) {
	var (
		mu   sync.Mutex
		errs []error
	)
	listed = map[string]bool{}
	perVhost := map[string]int{}
	for r := range cands {
		perVhost[r.vhost]++
	}
	for vh, n := range perVhost {
		if n >= listStakesFrom {
			listed[vh] = true
		}
	}
	g := parallel.New(8)
	for r := range cands {
		if perVhost[r.vhost] >= listStakesFrom {
			continue
		}
		g.Go(func() {
			q, err := c.QueuePlacement(ctx, r.vhost, r.name)
			mu.Lock()
			defer mu.Unlock()
			switch {
			case errors.Is(err, broker.ErrVhostNotFound):
			case errors.Is(err, broker.ErrNotFound):
				listed[r.vhost] = true
			case err != nil:
				errs = append(errs, err)
			default:
				f.note(r, &q)
			}
		})
	}
	g.Wait()
	return listed, errors.Join(errs...)
}

// readListing reads the placements of vhost vh's candidates from one
// listing, with the depth of those at stake (stream: one of them is a
// stream; see downQueues for when the depth is the ready messages alone).
func (f *placed) readListing(ctx context.Context, c *broker.Client, vh string, cands map[queueRef]bool, stream bool) error {
	var depthOf []string // its queues whose depth is wanted
	for r, stake := range cands {
		if stake && r.vhost == vh {
			depthOf = append(depthOf, r.name)
		}
	}
	readyOnly := len(depthOf) > 0 && !stream && noUnacked(ctx, c, vh)
	if readyOnly {
		depthOf = nil
	}
	// Each queue is noted as the listing is read: the listing of a vhost
	// whose 25,000 queues a plan replaces, and a map of their
	// placements, were 8-10 MB at the plan's peak of memory. A listing
	// read again after its answer was cut short notes its queues again:
	// their depths are the later reading's, and an owner or a queue out
	// of reach that either reading found stands (the safe side: the queue
	// is left alone).
	err := c.EachQueuePlacement(ctx, vh, depthOf, func(q broker.Placement) {
		r := queueRef{vh, q.Name}
		stake, ok := cands[r]
		if !ok {
			return
		}
		f.note(r, &q)
		switch {
		case q.Down || q.NoMajority():
		case q.Stats != nil && q.Stats.Known:
			f.read.add(r, *q.Stats, false)
		case q.Depth != nil && q.Depth.Known && q.Type != topology.QueueStream:
			// A stream's consumers are the statistics' alone: the exact
			// reads of a plan do not read streams.
			f.read.add(r, *q.Depth, true)
		case readyOnly && stake:
			f.read.add(r, broker.QueueStats{Known: true}, true)
		}
	})
	if errors.Is(err, broker.ErrVhostNotFound) {
		return nil // gone, and its queues with it
	}
	return err
}

// noUnacked reports whether vhost holds no unacknowledged message, where
// the queues' depths would come from the queue totals (from 4.0): false
// when the broker does not say (or the read fails; the listing with the
// totals then reads them as before).
func noUnacked(ctx context.Context, c *broker.Client, vhost string) bool {
	if !c.RabbitMQVersion().PlacementsWithoutStats() {
		return false
	}
	n, known, err := c.VhostUnacked(ctx, vhost)
	return err == nil && known && n == 0
}

// waitVisible waits, after an apply through several management endpoints,
// until the endpoint a later plan reads from (the first that answers, as
// for any command: Options.Reconnect) shows every change apply made: a
// plan right after apply is then empty there too, not only on the node
// apply wrote through. With a single endpoint apply reads where it wrote,
// and there is nothing to wait for.
func (e *Engine) waitVisible(ctx context.Context, res *apply.Result, vhosts []string, waiting func(server string, pending []string)) error {
	if e.opts.Reconnect == nil || len(e.c.Servers()) < 2 || len(res.Done) == 0 || len(vhosts) == 0 {
		return nil
	}
	reader, err := e.opts.Reconnect(ctx)
	if err != nil {
		return fmt.Errorf("apply is complete, but its changes could not be read back: %w", err)
	}
	read := func(ctx context.Context) (*topology.Topology, error) {
		l, err := New(reader, Options{}).ReadLive(ctx, vhosts)
		if err != nil {
			return nil, err
		}
		return l.State(), nil
	}
	err = apply.WaitVisible(ctx, read, res.Done, apply.WaitOptions{Waiting: func(pending []string) {
		if waiting != nil {
			waiting(reader.Server(), pending)
		}
	}})
	if err != nil {
		if reader.Server() == e.c.Server() {
			return fmt.Errorf("apply is complete, but reading %s back: %w", reader.Server(), err)
		}
		return fmt.Errorf("apply is complete on %s, but %s (which plans read from): %w", e.c.Server(), reader.Server(), err)
	}
	return nil
}
