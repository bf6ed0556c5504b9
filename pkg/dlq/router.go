package dlq

import (
	"fmt"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/mqctl/mqctl/pkg/rmqversion"
	"github.com/mqctl/mqctl/pkg/route"
	"github.com/mqctl/mqctl/pkg/topology"
)

// Router tells where a publish would go, from the broker's definitions.
type Router interface {
	Route(t Target, headers amqp.Table) Routing
	// HasQueue reports whether queue name exists (per the definitions
	// read): a message's origin queue may have been deleted since.
	HasQueue(name string) bool
	// RejectsAt returns the effective x-max-length of queue name when its
	// overflow refuses publishes past it (reject-publish, and for a
	// classic queue reject-publish-dlx); false otherwise.
	RejectsAt(name string) (int64, bool)
	// DropsHead returns queue name's effective length limits when its
	// overflow pushes the oldest messages out past them, with where those
	// go; false for a queue without a limit, one that refuses publishes
	// past it instead, a stream, or one not declared.
	DropsHead(name string) (HeadDrop, bool)
	// MayPushOut reports whether some queue (DropsHead) may push out
	// messages: a replay then judges all its messages before publishing.
	MayPushOut() bool
}

// HeadDrop is the length limit of a queue whose overflow pushes its
// oldest messages out (drop-head, the default), and their fate, dead
// letters of reason maxlen.
type HeadDrop struct {
	// MaxLength and MaxBytes are the effective x-max-length and
	// x-max-length-bytes (argument, policy or operator policy), where
	// HasLength and HasBytes.
	MaxLength, MaxBytes int64
	HasLength, HasBytes bool
	Fate                route.DeadLetterFate
}

// Routing is a Router's answer.
type Routing struct {
	// Queues are the queues reached, sorted; meaningful when Known.
	Queues []string
	// Known is false when the router cannot tell (an exchange it has not
	// read, a plugin exchange type it does not simulate).
	Known bool
	// Refused, when set, says why the broker would refuse the publish
	// outright, closing the channel (an internal exchange).
	Refused string
}

// TopologyRouter routes with mqctl's simulator over a vhost read from the
// live broker (broker.Client.ReadTopology).
type TopologyRouter struct {
	sim *route.Simulator
	v   *topology.Vhost
}

// NewTopologyRouter returns a Router over v, routing as a broker of
// version ver does.
func NewTopologyRouter(v *topology.Vhost, ver rmqversion.Version) *TopologyRouter {
	return &TopologyRouter{sim: route.NewWith(v, route.Options{Version: ver}), v: v}
}

// HasQueue implements Router.
func (r *TopologyRouter) HasQueue(name string) bool {
	_, ok := r.v.Queues[name]
	return ok
}

// RejectsAt implements Router, from the queue's effective arguments (its
// own, its policy's and its operator policy's).
func (r *TopologyRouter) RejectsAt(name string) (int64, bool) {
	q := r.v.Queues[name]
	if q == nil {
		return 0, false
	}
	args := r.sim.QueueArgs(name)
	switch overflow, _ := args.String("x-overflow"); {
	case overflow == "reject-publish":
	case overflow == "reject-publish-dlx" && q.Type != topology.QueueQuorum:
	default:
		return 0, false
	}
	return args.Int("x-max-length")
}

// DropsHead implements Router, from the queue's effective arguments: its
// overflow pushes out the oldest (route.Simulator.DropsHead: drop-head,
// or reject-publish-dlx on a quorum queue, which does not know it).
func (r *TopologyRouter) DropsHead(name string) (HeadDrop, bool) {
	q := r.v.Queues[name]
	if q == nil || q.Type == topology.QueueStream || !r.sim.DropsHead(name) {
		return HeadDrop{}, false
	}
	args := r.sim.QueueArgs(name)
	var h HeadDrop
	h.MaxLength, h.HasLength = args.Int("x-max-length")
	h.MaxBytes, h.HasBytes = args.Int("x-max-length-bytes")
	if !h.HasLength && !h.HasBytes {
		return HeadDrop{}, false
	}
	h.Fate = r.sim.DeadLetterFate(name, route.MaxLen)
	return h, true
}

// MayPushOut implements Router.
func (r *TopologyRouter) MayPushOut() bool {
	for name := range r.v.Queues {
		if _, ok := r.DropsHead(name); ok {
			return true
		}
	}
	return false
}

// Route implements Router: where one publish with the routing key and the
// CC keys goes. It is one publish, not one per key: an x-modulus-hash
// exchange picks its one destination by a hash of all the keys together.
func (r *TopologyRouter) Route(t Target, headers amqp.Table) Routing {
	if t.Exchange != "" {
		x := r.sim.Exchange(t.Exchange)
		if x == nil {
			// Not declared (as far as the definitions read show): the
			// broker itself has the last word.
			return Routing{}
		}
		if x.Internal {
			return Routing{Known: true, Refused: fmt.Sprintf("exchange %q is internal: clients cannot publish to it; pass --to-exchange with an exchange bound to it", t.Exchange)}
		}
	}
	h := make(map[string]any, len(headers)+1)
	for k, v := range headers {
		h[k] = v
	}
	if len(t.CC) > 0 {
		cc := make([]any, len(t.CC))
		for i, k := range t.CC {
			cc[i] = k
		}
		h[HeaderCC] = cc
	}
	res := r.sim.Publish(route.Message{Exchange: t.Exchange, RoutingKey: t.RoutingKey, Headers: h})
	if len(res.Unsimulated) > 0 {
		return Routing{}
	}
	return Routing{Queues: res.Queues(), Known: true}
}

// DeliveryLimit returns the effective delivery limit of queue when it is a
// quorum queue with one (0 otherwise), on a broker of version ver: the
// queue's x-delivery-limit, a policy's delivery-limit, or from 4.0 the
// default of 20 a quorum queue has without either. Before 4.3 each return
// of a message to such a queue counts as a delivery: past the limit the
// message is dead-lettered or dropped. 4.3 counts only failed deliveries
// (basic.reject with requeue among them), not a basic.nack with requeue,
// which is how peek and replay return messages (seen on 4.3.6: a quorum
// DLQ with a limit of 1 kept its messages through four peeks; 4.0.5
// dropped them at the second).
func DeliveryLimit(v *topology.Vhost, queue string, ver rmqversion.Version) int64 {
	n, ok := route.NewWith(v, route.Options{Version: ver}).DeliveryLimit(queue)
	if !ok || n <= 0 {
		return 0
	}
	return n
}
