package flow

import (
	"github.com/mqctl/mqctl/pkg/kind"
	"github.com/mqctl/mqctl/pkg/topology"
)

// shovelled are the destinations on this broker of the shovels of a
// topology, per vhost: the queues a shovel publishes to. A shovel that
// publishes to an exchange needs none here: an exchange it can publish to
// is one clients publish to, whose bindings the flows follow already.
type shovelled map[string]*shovelDests

type shovelDests struct {
	queues map[string]bool
}

// shovelledInto returns where the shovels of t (in any of its vhosts)
// move messages on this broker: those whose dest-uri is this broker's
// (kind.ShovelLocalVhost: no host, or the local protocol), by the vhost
// it names. A shovel whose URI names a host may move them to another
// broker: it is not counted.
func shovelledInto(t *topology.Topology) shovelled {
	out := shovelled{}
	if t == nil {
		return out
	}
	for _, v := range t.Vhosts {
		if v == nil {
			continue
		}
		for _, it := range v.Items[kind.Shovel] {
			vn, ok := kind.ShovelLocalVhost(it.Settings, "dest-uri")
			if !ok {
				continue
			}
			q := kind.ShovelDestQueue(it.Settings)
			if q == "" {
				continue
			}
			d := out[vn]
			if d == nil {
				d = &shovelDests{queues: map[string]bool{}}
				out[vn] = d
			}
			d.queues[q] = true
		}
	}
	return out
}

// feeds reports whether a shovel publishes to queue q.
func (d *shovelDests) feeds(q string) bool {
	return d != nil && d.queues[q]
}
