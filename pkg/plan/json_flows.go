package plan

import (
	"github.com/mqctl/mqctl/pkg/flow"
	pj "github.com/mqctl/mqctl/pkg/planjson"
	"github.com/mqctl/mqctl/pkg/route"
)

// jsonFlows is the plan's message flows as the JSON plan's (nil when they
// were not computed).
func jsonFlows(p *Plan) *pj.Flows {
	d := p.Flows
	if d == nil && len(p.FlowsUnknown) == 0 {
		return nil
	}
	out := &pj.Flows{
		LosesMessages: d.LosesMessages(), Routes: []pj.FlowRoute{}, DeadLetters: []pj.FlowDead{}, DelayTiers: []pj.FlowTier{},
		Silenced: []pj.FlowQueue{}, Truncated: []string{}, Unknown: []pj.FlowUnknown{},
	}
	for _, u := range p.FlowsUnknown {
		out.Unknown = append(out.Unknown, pj.FlowUnknown{Vhost: u.Vhost, Reason: u.Reason})
	}
	if d == nil {
		return out
	}
	out.Truncated = nonNil(d.Truncated)
	for _, r := range d.Routes {
		out.Routes = append(out.Routes, pj.FlowRoute{
			Vhost: r.Vhost, Exchange: r.Exchange, Class: *jsonClass(&r.Class), Before: nonNil(r.Before), After: nonNil(r.After),
			BeforeSplits: jsonSplits(r.BeforeSplits), AfterSplits: jsonSplits(r.AfterSplits), Selective: r.Selective,
			Gained: nonNil(r.Gained()), Lost: nonNil(r.Lost()), LosesMessages: r.Loses, Cause: r.Cause,
		})
	}
	for _, dl := range d.DeadLetters {
		out.DeadLetters = append(out.DeadLetters, pj.FlowDead{
			Vhost: dl.Vhost, Queue: dl.Queue, Reason: string(dl.Reason), PerMessageTTL: dl.PerMessageTTL, Class: jsonClass(dl.Class),
			Before: jsonEnd(dl.Before), After: jsonEnd(dl.After), LosesMessages: dl.Loses, Cause: dl.Cause, NewQueue: dl.NewQueue, From: dl.From, Sooner: dl.Sooner,
		})
	}
	for _, t := range d.DelayTiers {
		out.DelayTiers = append(out.DelayTiers, pj.FlowTier{
			Vhost: t.Vhost, Queue: t.Queue, Origin: t.Origin, DelayMS: t.DelayMS, Class: jsonClass(t.Class),
			Before: jsonEnd(t.Before), After: jsonEnd(t.After), LosesMessages: t.Loses, Cause: t.Cause,
		})
	}
	for _, s := range d.Silenced {
		out.Silenced = append(out.Silenced, pj.FlowQueue{Vhost: s.Vhost, Queue: s.Queue, Cause: s.Cause, Unknown: s.Unknown})
	}
	for _, x := range d.Expiring {
		out.Expiring = append(out.Expiring, pj.FlowExpiring{Vhost: x.Vhost, Queue: x.Queue, BeforeMS: x.BeforeMS, AfterMS: x.AfterMS, Cause: x.Cause})
	}
	for _, r := range d.Refusing {
		out.Refusing = append(out.Refusing, pj.FlowRefusing(r))
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

func jsonEnd(e *flow.DeadLetterEnd) *pj.FlowEnd {
	if e == nil {
		return nil
	}
	return &pj.FlowEnd{
		Configured: e.Configured, Exchange: e.Exchange, RoutingKey: e.RoutingKey, KeyFromMessage: e.KeyFromMessage,
		Queues: nonNil(e.Queues), Splits: jsonSplits(e.Splits), Dropped: e.Dropped, Why: e.Why, Held: e.Held, Refused: e.Refused,
	}
}

func jsonSplits(ss []flow.Split) []pj.FlowSplit {
	var out []pj.FlowSplit
	for _, s := range ss {
		fs := pj.FlowSplit{Exchange: s.Exchange, Queues: s.Queues, Random: s.Random, Unsimulated: s.Unsimulated}
		for _, t := range s.Through {
			fs.Through = append(fs.Through, pj.FlowSplitThrough(t))
		}
		out = append(out, fs)
	}
	return out
}

func planSplits(ss []pj.FlowSplit) []flow.Split {
	var out []flow.Split
	for _, s := range ss {
		sp := flow.Split{Exchange: s.Exchange, Queues: s.Queues, Random: s.Random, Unsimulated: s.Unsimulated}
		for _, t := range s.Through {
			sp.Through = append(sp.Through, route.SplitThrough(t))
		}
		out = append(out, sp)
	}
	return out
}

// planFlows is the JSON plan's message flows as the plan's.
func planFlows(doc *pj.Flows) (*flow.Diff, []FlowUnknown) {
	if doc == nil {
		return nil, nil
	}
	var unknown []FlowUnknown
	for _, u := range doc.Unknown {
		unknown = append(unknown, FlowUnknown{Vhost: u.Vhost, Reason: u.Reason})
	}
	d := &flow.Diff{Truncated: emptyToNil(doc.Truncated)}
	for _, r := range doc.Routes {
		d.Routes = append(d.Routes, flow.Route{
			Vhost: r.Vhost, Exchange: r.Exchange, Class: *planClass(&r.Class), Before: emptyToNil(r.Before), After: emptyToNil(r.After),
			BeforeSplits: planSplits(r.BeforeSplits), AfterSplits: planSplits(r.AfterSplits), Selective: r.Selective,
			Loses: r.LosesMessages, Cause: r.Cause,
		})
	}
	for _, dl := range doc.DeadLetters {
		d.DeadLetters = append(d.DeadLetters, flow.DeadLetter{
			Vhost: dl.Vhost, Queue: dl.Queue, Reason: flow.Reason(dl.Reason), PerMessageTTL: dl.PerMessageTTL, Class: planClass(dl.Class),
			Before: planEnd(dl.Before), After: planEnd(dl.After), Loses: dl.LosesMessages, Cause: dl.Cause, NewQueue: dl.NewQueue, From: emptyToNil(dl.From), Sooner: dl.Sooner,
		})
	}
	for _, t := range doc.DelayTiers {
		d.DelayTiers = append(d.DelayTiers, flow.DelayTier{
			Vhost: t.Vhost, Queue: t.Queue, Origin: t.Origin, DelayMS: t.DelayMS, Class: planClass(t.Class),
			Before: planEnd(t.Before), After: planEnd(t.After), Loses: t.LosesMessages, Cause: t.Cause,
		})
	}
	for _, s := range doc.Silenced {
		d.Silenced = append(d.Silenced, flow.Silenced{Vhost: s.Vhost, Queue: s.Queue, Cause: s.Cause, Unknown: s.Unknown})
	}
	for _, x := range doc.Expiring {
		d.Expiring = append(d.Expiring, flow.Expiring{Vhost: x.Vhost, Queue: x.Queue, BeforeMS: x.BeforeMS, AfterMS: x.AfterMS, Cause: x.Cause})
	}
	for _, r := range doc.Refusing {
		d.Refusing = append(d.Refusing, flow.Refusing(r))
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
	return d, unknown
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

func planEnd(e *pj.FlowEnd) *flow.DeadLetterEnd {
	if e == nil {
		return nil
	}
	return &flow.DeadLetterEnd{
		Configured: e.Configured, Exchange: e.Exchange, RoutingKey: e.RoutingKey, KeyFromMessage: e.KeyFromMessage,
		Queues: emptyToNil(e.Queues), Splits: planSplits(e.Splits), Dropped: e.Dropped, Why: e.Why, Held: e.Held, Refused: e.Refused,
	}
}
