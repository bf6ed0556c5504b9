package rmqversion

import (
	"maps"

	"github.com/mqctl/mqctl/pkg/topology"
)

// Prepare is what mqctl makes of a file before it compares it with what a
// broker of version v holds (plan against the broker read, diff against
// the old files): it refuses what v refuses (Check), naming each object
// where the file declares it, and otherwise returns the file as v stores
// it (Normalize). t itself is never changed.
func (v Version) Prepare(t *topology.Topology) (*topology.Topology, error) {
	if err := v.Check(t); err != nil {
		return nil, err
	}
	return v.Normalize(t), nil
}

// Normalize is t as a broker of version v stores it, leaving t itself
// alone: the caller's topology is never changed. Before 3.11 the broker
// ignores a vhost's default queue type (the file's queues carry their
// types, which mqctl declares), so the vhosts that give one are copied
// without it; the objects in them are shared, not copied.
func (v Version) Normalize(t *topology.Topology) *topology.Topology {
	if v.StoresDefaultQueueType() {
		return t
	}
	var out *topology.Topology
	for name, vh := range t.Vhosts {
		if vh.DefaultQueueType == "" {
			continue
		}
		if out == nil {
			cp := *t
			cp.Vhosts = maps.Clone(t.Vhosts)
			out = &cp
		}
		nv := *vh
		nv.DefaultQueueType = ""
		out.Vhosts[name] = &nv
	}
	if out == nil {
		return t
	}
	return out
}
