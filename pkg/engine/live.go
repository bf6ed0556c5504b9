package engine

import (
	"context"
	"slices"

	"github.com/mqctl/mqctl/pkg/broker"
	"github.com/mqctl/mqctl/pkg/ownership"
	"github.com/mqctl/mqctl/pkg/plan"
	"github.com/mqctl/mqctl/pkg/topology"
)

// Live is the broker's side of a plan: the state of some vhosts, with
// mqctl's ownership records split off it.
type Live struct {
	scope   []string // the vhosts asked for, sorted
	info    *broker.Live
	records map[string]*ownership.Record
	current plan.Current
}

// ReadLive reads the vhosts of scope (sorted; those that do not exist are
// absent) and splits mqctl's ownership records off the topology. A read
// begun before the desired state is complete (loader.Options.Declared
// names its vhosts before its objects are built) is given to Plan
// (PlanOptions.Live), which then does not read again.
func (e *Engine) ReadLive(ctx context.Context, scope []string) (*Live, error) {
	scope = slices.Clone(scope)
	if len(scope) == 0 {
		// To the broker client no vhosts means every vhost: a file that
		// declares none must read (and so plan deletes in) none.
		info := &broker.Live{Server: e.c.Server(), Version: e.c.Version(), Vhosts: map[string]broker.VhostInfo{},
			Queues: map[string]map[string]broker.QueueStats{}, PropertiesKeys: map[string]map[string]string{}, Unread: map[string][]broker.Unread{}}
		return &Live{info: info, records: map[string]*ownership.Record{}, current: plan.Current{State: topology.New()}}, nil
	}
	state, info, err := e.c.ReadTopology(ctx, scope)
	if err != nil {
		return nil, err
	}
	recs, err := ownership.Extract(state)
	if err != nil {
		return nil, err
	}
	stats := map[plan.ObjectRef]plan.QueueStats{}
	for vh, qs := range info.Queues {
		for q, st := range qs {
			stats[plan.ObjectRef{Kind: plan.KindQueue, Vhost: vh, Name: q}] = plan.QueueStats{Messages: st.Messages, Consumers: st.Consumers}
		}
	}
	var unread []plan.Unread
	for vh, kinds := range info.Unread {
		for _, u := range kinds {
			unread = append(unread, plan.Unread{Vhost: vh, Kind: u.Kind, Reason: u.Reason})
		}
	}
	return &Live{
		scope:   scope,
		info:    info,
		records: recs,
		current: plan.Current{State: state, Managed: ownership.Merge(recs), Stats: stats, Fingerprint: info.Fingerprint, Unread: unread},
	}, nil
}
