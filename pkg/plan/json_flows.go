package plan

import (
	"fmt"
	"hash/maphash"
	"slices"

	"github.com/mqctl/mqctl/pkg/flow"
	pj "github.com/mqctl/mqctl/pkg/planjson"
	"github.com/mqctl/mqctl/pkg/route"
)

// jsonFlows is the plan's message flows as the JSON plan's (nil when they
// were not computed).
func jsonFlows(p *Plan) *pj.Flows {
	if p.Flows == nil && len(p.FlowsUnknown) == 0 {
		return nil
	}
	return flowsDoc(p.Flows, p.FlowsUnknown)
}

// queueLists is pj.Flows.QueueLists being written: each distinct list of
// queue names once, an entry's list field its index. Many classes of
// messages reach the same queues (every key of a topic exchange made
// fanout or headers, every queue's dead letters through a fanout DLX):
// written in place, n lists of n queues made the document quadratic.
type queueLists struct {
	lists [][]string
	// same finds a list again by its backing array, without reading it
	// (the flows share one list among many entries); byHash by its
	// names.
	same   map[listKey]int
	byHash map[uint64][]int
	seed   maphash.Seed
}

type listKey struct {
	first *string
	n     int
}

func newQueueLists() *queueLists {
	return &queueLists{lists: [][]string{}, same: map[listKey]int{}, byHash: map[uint64][]int{}, seed: maphash.MakeSeed()}
}

// index is l's index in the table, l added when it is not there yet.
func (q *queueLists) index(l []string) int {
	var k listKey
	if len(l) > 0 {
		k = listKey{&l[0], len(l)}
		if i, ok := q.same[k]; ok {
			return i
		}
	}
	var h maphash.Hash
	h.SetSeed(q.seed)
	for _, s := range l {
		h.WriteString(s)
		h.WriteByte(0)
	}
	sum := h.Sum64()
	i := slices.IndexFunc(q.byHash[sum], func(i int) bool { return slices.Equal(q.lists[i], l) })
	if i >= 0 {
		i = q.byHash[sum][i]
	} else {
		i = len(q.lists)
		q.lists = append(q.lists, nonNil(l))
		q.byHash[sum] = append(q.byHash[sum], i)
	}
	if len(l) > 0 {
		q.same[k] = i
	}
	return i
}

// optional is index for a list that is absent when empty.
func (q *queueLists) optional(l []string) *int {
	if len(l) == 0 {
		return nil
	}
	i := q.index(l)
	return &i
}

// flowsDoc is d, and the vhosts whose flows are unknown, as the JSON
// plan's flows (d nil: only the unknown ones).
func flowsDoc(d *flow.Diff, unknown []FlowUnknown) *pj.Flows {
	q := newQueueLists()
	var routes []pj.FlowRoute
	var dead []pj.FlowDead
	if d != nil {
		for i := range d.Routes {
			routes = append(routes, q.route(&d.Routes[i]))
		}
		for i := range d.DeadLetters {
			dead = append(dead, q.deadLetter(&d.DeadLetters[i]))
		}
	}
	out := flowsHead(d, unknown, q)
	out.Routes, out.DeadLetters = nonNil(routes), nonNil(dead)
	out.QueueLists = q.lists
	return out
}

// flowsHead is flowsDoc but for its lists of queues, routes and dead
// letters, the lists the routes and dead letters name already in q (the
// other entries' added after them, as flowsDoc adds them).
func flowsHead(d *flow.Diff, unknown []FlowUnknown, q *queueLists) *pj.Flows {
	out := &pj.Flows{
		LosesMessages: d.LosesMessages(), DelayTiers: []pj.FlowTier{},
		Silenced: []pj.FlowQueue{}, Truncated: []string{}, Unknown: []pj.FlowUnknown{},
	}
	for _, u := range unknown {
		out.Unknown = append(out.Unknown, pj.FlowUnknown{Vhost: u.Vhost, Reason: u.Reason})
	}
	if d == nil {
		return out
	}
	out.Truncated = nonNil(d.Truncated)
	for _, t := range d.DelayTiers {
		out.DelayTiers = append(out.DelayTiers, pj.FlowTier{
			Vhost: t.Vhost, Queue: t.Queue, Origin: t.Origin, DelayMS: pj.Millis{MS: t.DelayMS, Written: t.DelayWritten}, Class: jsonClass(t.Class),
			Before: q.end(t.Before), After: q.end(t.After), LosesMessages: t.Loses, Cause: t.Cause, FromEnv: t.DelayWritten != "",
		})
	}
	for _, s := range d.Silenced {
		out.Silenced = append(out.Silenced, pj.FlowQueue{Vhost: s.Vhost, Queue: s.Queue, Cause: s.Cause, Unknown: s.Unknown})
	}
	for _, x := range d.Expiring {
		e := pj.FlowExpiring{Vhost: x.Vhost, Queue: x.Queue, AfterMS: pj.Millis{MS: x.AfterMS, Written: x.AfterWritten}, Cause: x.Cause,
			FromEnv: x.AfterWritten != "" || x.BeforeWritten != ""}
		if x.BeforeMS != nil {
			e.BeforeMS = &pj.Millis{MS: *x.BeforeMS, Written: x.BeforeWritten}
		}
		out.Expiring = append(out.Expiring, e)
	}
	for _, r := range d.Refusing {
		out.Refusing = append(out.Refusing, pj.FlowRefusing{
			Vhost: r.Vhost, Queue: r.Queue, Type: r.Type, Limit: r.Limit, BeforeLimit: r.BeforeLimit, BeforeOverflow: r.BeforeOverflow,
			Cause: r.Cause, Unknown: r.Unknown, NewQueue: r.NewQueue, From: q.optional(r.From), KeptMore: r.KeptMore,
		})
	}
	for _, t := range d.Trimming {
		out.Trimming = append(out.Trimming, pj.FlowTrimming(t))
	}
	for _, l := range d.Links {
		out.Links = append(out.Links, pj.FlowLink(l))
	}
	for _, u := range d.Unlisted {
		out.Unlisted = append(out.Unlisted, pj.FlowUnlisted{Vhost: u.Vhost, New: u.New, Deleted: u.Deleted})
	}
	for _, t := range d.Ties {
		out.Ties = append(out.Ties, pj.FlowTie(t))
	}
	return out
}

// route is r as the JSON plan's, its lists in q.
func (q *queueLists) route(r *flow.Route) pj.FlowRoute {
	return pj.FlowRoute{
		Vhost: r.Vhost, Exchange: r.Exchange, Class: *jsonClass(&r.Class), Before: q.index(r.Before), After: q.index(r.After),
		BeforeSplits: q.splits(r.BeforeSplits), AfterSplits: q.splits(r.AfterSplits), Selective: r.Selective,
		LosesMessages: r.Loses, Cause: r.Cause,
	}
}

// deadLetter is dl as the JSON plan's, its lists in q.
func (q *queueLists) deadLetter(dl *flow.DeadLetter) pj.FlowDead {
	return pj.FlowDead{
		Vhost: dl.Vhost, Queue: dl.Queue, Reason: string(dl.Reason), PerMessageTTL: dl.PerMessageTTL, Class: jsonClass(dl.Class),
		Before: q.end(dl.Before), After: q.end(dl.After), LosesMessages: dl.Loses, Cause: dl.Cause, NewQueue: dl.NewQueue, From: q.optional(dl.From), Sooner: dl.Sooner,
	}
}

// flowsHole is the hole of field key whose value is flowsDoc(d, unknown),
// written as it streams: its routes and dead letters (at 50,002 objects,
// most of the flows' 12 MB of text) are made the JSON plan's an entry at
// a time as they are written, and let go of. The lists of queues they
// name come first in the document: they are found by a pass over the
// entries before (whose entries are let go of), each list found again by
// the writing pass where the first left it (queueLists.same).
func flowsHole(key string, d *flow.Diff, unknown []FlowUnknown) hole {
	return hole{key: key, write: func(e *indentWriter, prefix string) error {
		q := newQueueLists()
		var routes []flow.Route
		var dead []flow.DeadLetter
		if d != nil {
			routes, dead = d.Routes, d.DeadLetters
		}
		for i := range routes {
			q.route(&routes[i])
		}
		for i := range dead {
			q.deadLetter(&dead[i])
		}
		return e.object(flowsHead(d, unknown, q), prefix, sliceHole("queue_lists", q.lists),
			arrayHole("routes", len(routes), false, func(i int) pj.FlowRoute { return q.route(&routes[i]) }),
			arrayHole("dead_letters", len(dead), false, func(i int) pj.FlowDead { return q.deadLetter(&dead[i]) }))
	}}
}

func jsonClass(c *flow.Class) *pj.FlowClass {
	if c == nil {
		return nil
	}
	return &pj.FlowClass{Kind: c.Kind, RoutingKey: c.RoutingKey, Headers: c.Headers, Matches: nonNil(c.Matches), Keyed: c.Keyed, ByHeaders: c.ByHeaders,
		Before: jsonClassSide(c.Before), After: jsonClassSide(c.After)}
}

func jsonClassSide(s *flow.ClassSide) *pj.FlowClassSide {
	if s == nil {
		return nil
	}
	return &pj.FlowClassSide{Kind: s.Kind, Matches: nonNil(s.Matches)}
}

func (q *queueLists) end(e *flow.DeadLetterEnd) *pj.FlowEnd {
	if e == nil {
		return nil
	}
	return &pj.FlowEnd{
		Configured: e.Configured, Exchange: e.Exchange, RoutingKey: e.RoutingKey, KeyFromMessage: e.KeyFromMessage,
		Queues: q.index(e.Queues), Splits: q.splits(e.Splits), Dropped: e.Dropped, Why: e.Why, Held: e.Held, Refused: e.Refused,
	}
}

func (q *queueLists) splits(ss []flow.Split) []pj.FlowSplit {
	var out []pj.FlowSplit
	for _, s := range ss {
		fs := pj.FlowSplit{Exchange: s.Exchange, Queues: q.index(s.Queues), Random: s.Random, Unsimulated: s.Unsimulated}
		for _, t := range s.Through {
			fs.Through = append(fs.Through, pj.FlowSplitThrough{Exchange: t.Exchange, Queues: q.index(t.Queues)})
		}
		out = append(out, fs)
	}
	return out
}

// listsRead are the lists of a document's flows (pj.Flows.QueueLists) as
// its entries' fields name them: err is the first index that names none.
type listsRead struct {
	lists [][]string
	err   error
}

func (r *listsRead) list(i int, what string) []string {
	if i < 0 || i >= len(r.lists) {
		if r.err == nil {
			r.err = fmt.Errorf("flows: %s is list %d of queue_lists, which has %d", what, i, len(r.lists))
		}
		return nil
	}
	// Entries that name one list share it: capped, an append to one
	// entry's copies it rather than write into the others'.
	l := r.lists[i]
	return emptyToNil(l[:len(l):len(l)])
}

func (r *listsRead) optional(i *int, what string) []string {
	if i == nil {
		return nil
	}
	return r.list(*i, what)
}

func (r *listsRead) splits(ss []pj.FlowSplit, what string) []flow.Split {
	var out []flow.Split
	for _, s := range ss {
		sp := flow.Split{Exchange: s.Exchange, Queues: r.list(s.Queues, what+" of exchange "+s.Exchange), Random: s.Random, Unsimulated: s.Unsimulated}
		for _, t := range s.Through {
			sp.Through = append(sp.Through, route.SplitThrough{Exchange: t.Exchange, Queues: r.list(t.Queues, what+" through exchange "+t.Exchange)})
		}
		out = append(out, sp)
	}
	return out
}

// planFlows is the JSON plan's message flows as the plan's; an error when
// an entry names a list that queue_lists does not have.
func planFlows(doc *pj.Flows) (*flow.Diff, []FlowUnknown, error) {
	if doc == nil {
		return nil, nil, nil
	}
	var unknown []FlowUnknown
	for _, u := range doc.Unknown {
		unknown = append(unknown, FlowUnknown{Vhost: u.Vhost, Reason: u.Reason})
	}
	r := &listsRead{lists: doc.QueueLists}
	d := &flow.Diff{Truncated: emptyToNil(doc.Truncated)}
	for i, rt := range doc.Routes {
		what := fmt.Sprintf("route %d's", i+1)
		d.Routes = append(d.Routes, flow.Route{
			Vhost: rt.Vhost, Exchange: rt.Exchange, Class: *planClass(&rt.Class), Before: r.list(rt.Before, what+" before"), After: r.list(rt.After, what+" after"),
			BeforeSplits: r.splits(rt.BeforeSplits, what+" before split"), AfterSplits: r.splits(rt.AfterSplits, what+" after split"), Selective: rt.Selective,
			Loses: rt.LosesMessages, Cause: rt.Cause,
		})
	}
	for i, dl := range doc.DeadLetters {
		what := fmt.Sprintf("dead-letter change %d's", i+1)
		d.DeadLetters = append(d.DeadLetters, flow.DeadLetter{
			Vhost: dl.Vhost, Queue: dl.Queue, Reason: flow.Reason(dl.Reason), PerMessageTTL: dl.PerMessageTTL, Class: planClass(dl.Class),
			Before: r.end(dl.Before, what+" before"), After: r.end(dl.After, what+" after"), Loses: dl.LosesMessages, Cause: dl.Cause, NewQueue: dl.NewQueue,
			From: r.optional(dl.From, what+" from"), Sooner: dl.Sooner,
		})
	}
	for i, t := range doc.DelayTiers {
		what := fmt.Sprintf("delay tier %d's", i+1)
		d.DelayTiers = append(d.DelayTiers, flow.DelayTier{
			Vhost: t.Vhost, Queue: t.Queue, Origin: t.Origin, DelayMS: t.DelayMS.MS, DelayWritten: t.DelayMS.Written, Class: planClass(t.Class),
			Before: r.end(t.Before, what+" before"), After: r.end(t.After, what+" after"), Loses: t.LosesMessages, Cause: t.Cause,
		})
	}
	for _, s := range doc.Silenced {
		d.Silenced = append(d.Silenced, flow.Silenced{Vhost: s.Vhost, Queue: s.Queue, Cause: s.Cause, Unknown: s.Unknown})
	}
	for _, x := range doc.Expiring {
		e := flow.Expiring{Vhost: x.Vhost, Queue: x.Queue, AfterMS: x.AfterMS.MS, AfterWritten: x.AfterMS.Written, Cause: x.Cause}
		if x.BeforeMS != nil {
			ms := x.BeforeMS.MS
			e.BeforeMS, e.BeforeWritten = &ms, x.BeforeMS.Written
		}
		d.Expiring = append(d.Expiring, e)
	}
	for i, x := range doc.Refusing {
		d.Refusing = append(d.Refusing, flow.Refusing{
			Vhost: x.Vhost, Queue: x.Queue, Type: x.Type, Limit: x.Limit, BeforeLimit: x.BeforeLimit, BeforeOverflow: x.BeforeOverflow,
			Cause: x.Cause, Unknown: x.Unknown, NewQueue: x.NewQueue, From: r.optional(x.From, fmt.Sprintf("refusing queue %d's from", i+1)), KeptMore: x.KeptMore,
		})
	}
	for _, t := range doc.Trimming {
		d.Trimming = append(d.Trimming, flow.Trimming(t))
	}
	for _, l := range doc.Links {
		d.Links = append(d.Links, flow.Link(l))
	}
	for _, u := range doc.Unlisted {
		d.Unlisted = append(d.Unlisted, flow.Unlisted{Vhost: u.Vhost, New: u.New, Deleted: u.Deleted})
	}
	for _, t := range doc.Ties {
		d.Ties = append(d.Ties, flow.Tie(t))
	}
	if r.err != nil {
		return nil, nil, r.err
	}
	return d, unknown, nil
}

func planClass(c *pj.FlowClass) *flow.Class {
	if c == nil {
		return nil
	}
	return &flow.Class{Kind: c.Kind, RoutingKey: c.RoutingKey, Headers: c.Headers, Matches: emptyToNil(c.Matches), Keyed: c.Keyed, ByHeaders: c.ByHeaders,
		Before: planClassSide(c.Before), After: planClassSide(c.After)}
}

func planClassSide(s *pj.FlowClassSide) *flow.ClassSide {
	if s == nil {
		return nil
	}
	return &flow.ClassSide{Kind: s.Kind, Matches: emptyToNil(s.Matches)}
}

func (r *listsRead) end(e *pj.FlowEnd, what string) *flow.DeadLetterEnd {
	if e == nil {
		return nil
	}
	return &flow.DeadLetterEnd{
		Configured: e.Configured, Exchange: e.Exchange, RoutingKey: e.RoutingKey, KeyFromMessage: e.KeyFromMessage,
		Queues: r.list(e.Queues, what+" queues"), Splits: r.splits(e.Splits, what+" split"), Dropped: e.Dropped, Why: e.Why, Held: e.Held, Refused: e.Refused,
	}
}
