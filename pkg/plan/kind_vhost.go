package plan

import (
	"github.com/mqctl/mqctl/pkg/kind"
	pj "github.com/mqctl/mqctl/pkg/planjson"
	"github.com/mqctl/mqctl/pkg/topology"
)

// A vhost in a plan is its VhostMeta; no vhost holds vhosts.

// VhostMeta is the mutable part of a vhost, and a vhost in a change.
type VhostMeta struct {
	Name             string `json:"name"`
	Description      string `json:"description,omitempty"`
	DefaultQueueType string `json:"default_queue_type,omitempty"`
	// Tags: nil leaves the broker's, empty clears them.
	Tags []string `json:"tags,omitzero"`
}

// vhostObjects is what the plan knows of vhosts (objectType).
var vhostObjects = objectType{
	object: &VhostMeta{},
	saved:  savedAs("vhost", func(m *VhostMeta) *VhostMeta { return m }, func(m *VhostMeta) Object { return m }),
	fromJSON: func(o *pj.Object) Object {
		if o.Vhost == nil {
			return nil
		}
		return &VhostMeta{Name: o.Vhost.Name, Description: o.Vhost.Description, DefaultQueueType: o.Vhost.DefaultQueueType, Tags: o.Vhost.Tags}
	},
}

func (m *VhostMeta) carries(k Kind) bool { return k == kind.Vhost }

func (m *VhostMeta) fieldsFrom(_ Kind, have Object) []FieldChange {
	h, ok := have.(*VhostMeta)
	if !ok {
		return nil
	}
	return vhostFields(&topology.Vhost{Description: m.Description, DefaultQueueType: m.DefaultQueueType, Tags: m.Tags},
		&topology.Vhost{Description: h.Description, DefaultQueueType: h.DefaultQueueType, Tags: h.Tags})
}

func (m *VhostMeta) headline() string { return "" }

func (m *VhostMeta) describe() []string {
	var out []string
	if m.Description != "" {
		out = append(out, "description: "+show(m.Description))
	}
	if m.DefaultQueueType != "" {
		out = append(out, "default_queue_type: "+m.DefaultQueueType)
	}
	if len(m.Tags) > 0 {
		out = append(out, "tags: "+show(m.Tags))
	}
	return out
}

func (m *VhostMeta) json() *pj.Object {
	return &pj.Object{Vhost: &pj.Vhost{Name: m.Name, Description: m.Description, DefaultQueueType: m.DefaultQueueType, Tags: m.Tags}}
}

func (m *VhostMeta) normalize() {}

func (m *VhostMeta) ObjectPos() topology.Pos { return topology.Pos{} }
