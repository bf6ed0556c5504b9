package plan

import (
	"fmt"
	"slices"

	"github.com/mqctl/mqctl/pkg/flow"
	"github.com/mqctl/mqctl/pkg/kind"
	"github.com/mqctl/mqctl/pkg/rmqversion"
	"github.com/mqctl/mqctl/pkg/topology"
)

// routes reports whether objects of kind k can decide where messages go:
// the vhost and the kinds of the topology proper (exchanges, queues,
// bindings, policies, operator policies), not those carried as items
// (limits, shovels, federation, users and their access).
func routes(k Kind) bool {
	s, ok := kind.Of(k)
	return ok && s.Item == nil
}

// links reports whether objects of kind k move messages between queues
// or brokers (kind.Spec.ReachesOut): shovels and federation upstreams (and
// their sets), whose changes the flows report (flow.Link).
func links(k Kind) bool {
	s, ok := kind.Of(k)
	return ok && s.ReachesOut
}

// SetFlows computes what the plan does to messages (Flows): from the state
// the plan was made against (cur.State) to the state apply leaves
// (Project), following version's routing rules. The plan's vhosts (every
// vhost of either side when it names none) are compared, except those
// where a kind that routes messages could not be read (the plan's or
// cur's Unread): their flows are unknown, and FlowsUnknown says so. The
// values the files took from the environment (current.Env) are shown in
// the flows' words as the files wrote them.
func (p *Plan) SetFlows(current Current, version rmqversion.Version) {
	cur := current.State
	if cur == nil {
		cur = topology.New()
	}
	unread := append(slices.Clip(p.Unread), current.AllUnread()...)
	// Only a vhost with a change of a kind that routes can move a message:
	// the others are the same on both sides, and comparing them (two
	// simulators of every vhost) would find nothing, at a cost that grows
	// with the vhost (a fifth of a 50,000-object no-op plan).
	touched := map[string]bool{}
	for i := range p.Changes {
		if c := &p.Changes[i]; routes(c.Kind) || links(c.Kind) {
			touched[c.Vhost] = true
		}
	}
	before := topology.New()
	for name, v := range cur.Vhosts {
		if touched[name] {
			before.Vhosts[name] = v
		}
	}
	after := p.Project(before)
	vhosts := p.Vhosts
	if vhosts == nil {
		vhosts = union(cur.VhostNames(), after.VhostNames())
	}
	p.FlowsUnknown = nil
	known := make([]string, 0, len(vhosts))
	for _, v := range vhosts {
		i := slices.IndexFunc(unread, func(u Unread) bool { return u.Vhost == v && routes(u.Kind) })
		if i < 0 {
			if touched[v] {
				known = append(known, v)
			}
			continue
		}
		u := unread[i]
		what := u.Kind.Plural() + " there"
		if u.Kind.Container() {
			what = "the vhost"
		}
		p.FlowsUnknown = append(p.FlowsUnknown, FlowUnknown{Vhost: v, Reason: fmt.Sprintf("mqctl could not read %s: %s", what, u.Reason)})
	}
	p.Flows = flow.Compare(before, after, flow.Options{Version: version, Vhosts: known, Here: current.Here, Env: current.Env})
}
