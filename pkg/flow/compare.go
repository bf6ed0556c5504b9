package flow

import "github.com/mqctl/mqctl/pkg/topology"

// compare is Compare's body (being written: see api.go for the contract).
func compare(before, after *topology.Topology, o Options) *Diff {
	_, _, _ = before, after, o
	return &Diff{}
}
