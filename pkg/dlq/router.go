package dlq

import (
	"slices"
	"sort"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/mqctl/mqctl/pkg/route"
	"github.com/mqctl/mqctl/pkg/topology"
)

// Router tells which queues a publish would reach, from the broker's
// bindings. known is false when it cannot tell (an exchange it has not
// read, a plugin exchange type it does not simulate).
type Router interface {
	Route(t Target, headers amqp.Table) (queues []string, known bool)
}

// TopologyRouter routes with mqctl's simulator over a vhost read from the
// live broker (broker.Client.ReadTopology).
type TopologyRouter struct {
	sim *route.Simulator
}

// NewTopologyRouter returns a Router over v.
func NewTopologyRouter(v *topology.Vhost) *TopologyRouter {
	return &TopologyRouter{sim: route.New(v)}
}

// Route implements Router: the union of where the routing key and each CC
// key lead.
func (r *TopologyRouter) Route(t Target, headers amqp.Table) ([]string, bool) {
	if t.Exchange != "" && r.sim.Exchange(t.Exchange) == nil {
		// Not declared (as far as the topology read shows): the broker
		// itself has the last word.
		return nil, false
	}
	var queues []string
	for _, key := range append([]string{t.RoutingKey}, t.CC...) {
		res := r.sim.Publish(route.Message{Exchange: t.Exchange, RoutingKey: key, Headers: map[string]any(headers)})
		if len(res.Unsimulated) > 0 {
			return nil, false
		}
		for _, q := range res.Queues() {
			if !slices.Contains(queues, q) {
				queues = append(queues, q)
			}
		}
	}
	sort.Strings(queues)
	return queues, true
}

// DeliveryLimit returns the effective delivery limit of queue when it is a
// quorum queue that has one (by argument or policy), else 0. Every peek,
// dry run or failed replay returns messages to the queue, and a quorum
// queue counts each return as a delivery: past the limit the message is
// dead-lettered or dropped.
func DeliveryLimit(v *topology.Vhost, queue string) int64 {
	q := v.Queues[queue]
	if q == nil || q.Type != "quorum" {
		return 0
	}
	n, ok := route.New(v).QueueArgs(queue).Int("x-delivery-limit")
	if !ok || n <= 0 {
		return 0
	}
	return n
}
