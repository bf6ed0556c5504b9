package plan

import (
	"github.com/mqctl/mqctl/pkg/kind"
	pj "github.com/mqctl/mqctl/pkg/planjson"
	"github.com/mqctl/mqctl/pkg/topology"
)

// A queue in a plan: its Object and how a vhost holds queues.

// QueueObject is a queue in a change.
type QueueObject struct{ *topology.Queue }

// queueObjects is what the plan knows of queues (objectType).
var queueObjects = objectType{
	object: QueueObject{},
	in: func(Kind) vhostKind {
		return inMap(func(v *topology.Vhost) map[string]*topology.Queue { return v.Queues },
			func(o QueueObject) *topology.Queue { return o.Queue }, func(q *topology.Queue) Object { return QueueObject{q} }, QueuePrint)
	},
	saved: savedAs("queue", func(o QueueObject) *topology.Queue { return o.Queue }, func(q *topology.Queue) Object { return QueueObject{q} }),
	fromJSON: func(o *pj.Object) Object {
		q := o.Queue
		if q == nil {
			return nil
		}
		return QueueObject{&topology.Queue{Name: q.Name, Type: q.Type, Durable: q.Durable, AutoDelete: q.AutoDelete, Arguments: q.Arguments}}
	},
}

func (o QueueObject) carries(k Kind) bool { return k == kind.Queue }

// QueueType returns the type of the queue o (classic when unknown, or
// when o is not a queue).
func QueueType(o Object) string {
	if q, ok := o.(QueueObject); ok && q.Type != "" {
		return q.Type
	}
	return topology.QueueClassic
}

func (o QueueObject) fieldsFrom(k Kind, have Object) []FieldChange {
	if h, ok := have.(QueueObject); ok {
		return definitionFields(topology.QueueDefinition, h.Queue, o.Queue, !k.InPlace())
	}
	return nil
}

func (o QueueObject) headline() string { return definedHeadline(topology.QueueDefinition, o.Queue) }

func (o QueueObject) describe() []string { return describeDefined(topology.QueueDefinition, o.Queue) }

func (o QueueObject) json() *pj.Object {
	q := o.Queue
	return &pj.Object{Queue: &pj.Queue{Name: q.Name, Type: q.Type, Durable: q.Durable, AutoDelete: q.AutoDelete, Arguments: q.Arguments}}
}

func (o QueueObject) normalize() { o.Arguments = o.Arguments.Normalized() }

func (o QueueObject) pos() topology.Pos { return o.Pos }
