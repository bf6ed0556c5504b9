package definitions

import (
	"encoding/json"

	"github.com/mqctl/mqctl/pkg/kind"
	"github.com/mqctl/mqctl/pkg/topology"
)

// The objects of a definitions document as RabbitMQ writes them: the
// elements of a definitions file or of GET /api/definitions/{vhost}, and the
// same objects as the management API's list and single-object endpoints
// answer (GET /api/queues/{vhost} and so on). The Map* functions turn them
// into the model; Read (strict, for files) and MapLive (lenient, for live
// answers) both go through them, so that one rule holds in both.

// Exchange is an exchange object: the model's own type, whose fields
// are named as RabbitMQ names them (each setting of
// topology.ExchangeDefinition by its APIKey), so that every setting of
// the Definition is read from a broker's answer with no field or mapping
// of this package's (MapExchange normalises its arguments).
type Exchange = topology.Exchange

// Queue is a queue object. Type is the type the broker reports (4.x
// definitions and every queue list); Exclusive, Messages and Consumers
// come with the queue list only (a definitions document has no exclusive
// flag).
type Queue struct {
	Name       string         `json:"name"`
	Type       string         `json:"type"`
	Durable    bool           `json:"durable"`
	AutoDelete bool           `json:"auto_delete"`
	Exclusive  bool           `json:"exclusive"`
	Arguments  map[string]any `json:"arguments"`
	Messages   *json.Number   `json:"messages"`
	Consumers  *json.Number   `json:"consumers"`
	// InternalOwner is what a live broker (4.1+) says owns the queue: a
	// plugin's queue, protected from deletion by clients (false, or an
	// object naming the owner). Definitions files do not carry it.
	InternalOwner any `json:"internal_owner,omitempty"`
}

// Binding is a binding object. PropertiesKey (the broker's identity of the
// binding, needed to delete it) comes with the binding list only.
type Binding struct {
	Source          string         `json:"source"`
	Destination     string         `json:"destination"`
	DestinationType string         `json:"destination_type"`
	RoutingKey      string         `json:"routing_key"`
	Arguments       map[string]any `json:"arguments"`
	PropertiesKey   string         `json:"properties_key"`
}

// Policy is a policy or operator policy object, or the value of an
// "operator_policy" runtime parameter (which has no name of its own): the
// model's own type, whose fields are named as RabbitMQ names them (each
// setting of topology.PolicyDefinition by its APIKey, the definition by
// its ArgsKey), as Exchange is.
type Policy = topology.Policy

// Parameter is a runtime parameter object.
type Parameter struct {
	Component string          `json:"component"`
	Name      string          `json:"name"`
	Value     json.RawMessage `json:"value"`
}

// OperatorPolicyComponent is the runtime parameter component under which
// RabbitMQ 3.10's per-vhost definitions carry operator policies.
const OperatorPolicyComponent = "operator_policy"

// Document is a definitions document's topology: what a per-vhost
// definitions answer holds, or what the list endpoints give for one vhost.
type Document struct {
	Exchanges        []Exchange  `json:"exchanges"`
	Queues           []Queue     `json:"queues"`
	Bindings         []Binding   `json:"bindings"`
	Policies         []Policy    `json:"policies"`
	OperatorPolicies []Policy    `json:"operator_policies"`
	Parameters       []Parameter `json:"parameters"`
	// Objects are those of the kinds with a type of their own that have
	// no list of their own above (definedKind), by kind.
	Objects map[kind.Kind][]topology.Named `json:"-"`
}

// PoliciesOf is where d holds its policies of kind k (kind.PolicyKinds),
// listed in d's section of that kind (kind.Spec.Section); nil for any
// other kind.
func (d *Document) PoliciesOf(k kind.Kind) *[]Policy {
	switch k {
	case kind.Policy:
		return &d.Policies
	case kind.OperatorPolicy:
		return &d.OperatorPolicies
	}
	return nil
}

// SkipExchange reports whether an exchange is never managed: the default
// exchange ("") and the built-in and reserved amq.* ones.
func SkipExchange(name string) bool { return name == "" || topology.IsReservedName(name) }

// SkipQueue reports whether a queue is never managed: exclusive queues and
// server-named (amq.*) ones.
func SkipQueue(q Queue) bool { return q.Exclusive || topology.IsReservedName(q.Name) }

// MapExchange maps an exchange object onto the model: its arguments
// normalised.
func MapExchange(e Exchange) *topology.Exchange {
	e.Arguments = e.Arguments.Normalized()
	return &e
}

// MapQueue maps a queue object onto the model. Its type is the x-queue-type
// argument (lifted out of Arguments: the model keeps the type in Type
// only), else the object's own type, else the first of fallbacks that is
// not empty (the type the queue list reports, the vhost's default queue
// type), else classic. A non-string x-queue-type names no type (Read
// rejects it before).
func MapQueue(q Queue, fallbacks ...string) *topology.Queue {
	return mapQueue(q, topology.Args(q.Arguments).Normalized(), fallbacks)
}

// mapOwnedQueue is MapQueue of a queue whose arguments table nothing else
// holds (a queue just decoded): the table is normalised where it is and
// becomes the model's.
func mapOwnedQueue(q Queue, fallbacks ...string) *topology.Queue {
	return mapQueue(q, topology.Args(q.Arguments).NormalizedInPlace(), fallbacks)
}

// mapQueue maps q, its arguments normalised (args), onto the model.
func mapQueue(q Queue, args topology.Args, fallbacks []string) *topology.Queue {
	args, lifted, _ := topology.LiftQueueType(args)
	typ, _ := lifted.(string)
	if typ == "" {
		typ = q.Type
	}
	for _, t := range fallbacks {
		if typ != "" {
			break
		}
		typ = t
	}
	if typ == "" {
		typ = topology.QueueClassic
	}
	return &topology.Queue{Name: q.Name, Type: typ, Durable: q.Durable, AutoDelete: q.AutoDelete, Arguments: args,
		Role: topology.RoleWorking}
}

// MapBinding maps a binding object onto the model; false for a binding
// from the default exchange, which binds every queue implicitly and is
// never managed.
func MapBinding(b Binding) (*topology.Binding, bool) {
	if b.Source == "" {
		return nil, false
	}
	return &topology.Binding{
		Source: b.Source, Destination: b.Destination, DestinationType: b.DestinationType,
		RoutingKey: b.RoutingKey, Arguments: topology.Args(b.Arguments).Normalized(),
	}, true
}

// MapPolicy maps a policy or operator policy object onto the model; no
// apply-to means "all".
func MapPolicy(p Policy) *topology.Policy {
	if p.ApplyTo == "" {
		p.ApplyTo = "all"
	}
	p.Definition = p.Definition.Normalized()
	return &p
}
