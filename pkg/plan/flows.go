package plan

import (
	"fmt"
	"slices"

	"github.com/mqctl/mqctl/pkg/flow"
	"github.com/mqctl/mqctl/pkg/rmqversion"
	"github.com/mqctl/mqctl/pkg/topology"
)

// routes reports whether objects of kind k decide where messages go.
func routes(k Kind) bool {
	switch k {
	case KindExchange, KindQueue, KindBinding, KindPolicy, KindOperatorPolicy:
		return true
	}
	return false
}

// SetFlows computes what the plan does to messages (Flows): from cur, the
// state the plan was made against, to the state apply leaves (Project),
// following version's routing rules. The plan's vhosts (every vhost of
// either side when it names none) are compared, except those where a kind
// that routes messages could not be read (Unread): their flows are
// unknown, and FlowsUnknown says so.
func (p *Plan) SetFlows(cur *topology.Topology, version rmqversion.Version) {
	after := p.Project(cur)
	vhosts := p.Vhosts
	if vhosts == nil {
		vhosts = union(cur.VhostNames(), after.VhostNames())
	}
	p.FlowsUnknown = nil
	known := make([]string, 0, len(vhosts))
	for _, v := range vhosts {
		i := slices.IndexFunc(p.Unread, func(u Unread) bool { return u.Vhost == v && routes(u.Kind) })
		if i < 0 {
			known = append(known, v)
			continue
		}
		u := p.Unread[i]
		p.FlowsUnknown = append(p.FlowsUnknown, FlowUnknown{Vhost: v,
			Reason: fmt.Sprintf("mqctl could not read the %s there: %s", u.Kind.Plural(), u.Reason)})
	}
	p.Flows = flow.Compare(cur, after, flow.Options{Version: version, Vhosts: known})
}
