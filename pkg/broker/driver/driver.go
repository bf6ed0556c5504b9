// Package driver is each kind's broker driver over the plan's objects:
// read one, write and delete, with the capabilities apply and the
// preflight ask for instead of naming a kind.
package driver

import (
	"context"
	"errors"
	"fmt"

	"github.com/mqctl/mqctl/pkg/broker"
	"github.com/mqctl/mqctl/pkg/kind"
	"github.com/mqctl/mqctl/pkg/plan"
	"github.com/mqctl/mqctl/pkg/topology"
)

// Every kind is written, deleted and read back one object at a time
// through its Driver (Of), over the plan's objects: a kind with a type of
// its own (a vhost, an exchange, a queue, a binding, a kind of policy) has
// its driver in typed, over its requests in pkg/broker (exchange.go,
// queue.go, …); a kind carried as topology.Item is served through the same
// Driver by its item driver in pkg/broker (broker.ReadItems, WriteItem,
// DeleteItem: drivers, items.go). Its special cases are capabilities the
// driver declares (bulk declares over AMQP, writes one at a time in a
// vhost, a declaration the broker ignores while it marks a delete in
// progress, its own check of a write read back) or facts of its kind.Spec
// (HoldsMessages: the message check at a delete; DeletedByKey: a delete by
// the broker's properties_key), which apply and the preflight ask for
// instead of naming the kind. A typed kind without a driver fails
// TestEveryTypedKindHasADriver. (pkg/broker itself knows nothing of the
// plan: pkg/plan's tests reach pkg/broker through their live helpers.)

// Ops names what a step does with an object of a kind: create it, write
// it again (an update), delete it.
type Ops struct{ Create, Update, Delete string }

// DeleteOptions are what a delete may need beyond the object: the
// properties_key of a kind deleted by it (kind.Spec.DeletedByKey: a
// binding) and the preconditions of one that holds messages
// (kind.Spec.HoldsMessages: a queue), which the broker checks atomically
// with the delete.
type DeleteOptions struct {
	PropertiesKey string
	Queue         broker.DeleteQueueOptions
}

// Driver is one kind's requests over the plan's objects.
type Driver struct {
	// Ops are its steps' names.
	Ops Ops
	// read reads the object o stands for (name, or for a binding o
	// itself, which is all identity) as the broker holds it; the error
	// wraps broker.ErrNotFound when it holds none. o is nil for a delete's
	// object of a kind that is named.
	read func(ctx context.Context, c *broker.Client, k kind.Kind, vhost, name string, o plan.Object) (plan.Object, error)
	// write makes the broker hold want where it held have (nil for none).
	write func(ctx context.Context, c *broker.Client, k kind.Kind, vhost string, have, want plan.Object) error
	// del removes name (have: the object as the plan saw it, nil when not
	// known) from vhost.
	del func(ctx context.Context, c *broker.Client, k kind.Kind, vhost, name string, have plan.Object, o DeleteOptions) error
	// declare, when set, declares want over AMQP: apply declares the kind
	// in bulk where a vhost has many (Bulk).
	declare func(ctx context.Context, d *broker.Declarer, vhost string, want plan.Object) error
	// holds, when set, says whether have, read back, is what a write of
	// want made; nil compares them as the diff does (plan.ObjectFields).
	holds func(have, want plan.Object) bool
	// Serial: its writes and deletes in one vhost run one at a time: the
	// broker applies each policy change to every matching queue, and
	// concurrent changes may leave the older one in force.
	Serial bool
	// DeleteMarked: RabbitMQ marks a delete of one as in progress, and
	// ignores every declaration of it while the mark is there
	// (ExchangeDeletesInProgress).
	DeleteMarked bool
	// KeepsCurrent: its write keeps what the broker holds where want
	// leaves it out (a vhost's tags, which a file that declares none
	// keeps), so its have is the object as the broker holds it now, where
	// that is known, rather than as the plan saw it.
	KeepsCurrent bool
}

// typed are the drivers of the kinds with types of their own; every
// kind of policy (kind.PolicyKinds) has policyDriver.
var typed = func() map[kind.Kind]Driver {
	m := map[kind.Kind]Driver{
		kind.Vhost: {Ops: Ops{"create vhost", "update vhost", "delete vhost"},
			read: readVhost, write: writeVhost, del: deleteVhost, holds: vhostDescribed, KeepsCurrent: true},
		kind.Exchange: declared(Driver{Ops: Ops{"declare exchange", "declare exchange", "delete exchange"},
			read: readExchange, del: deleteExchange, DeleteMarked: true},
			plan.As[topology.Exchange], (*broker.Client).DeclareExchange, (*broker.Declarer).DeclareExchange),
		kind.Queue: declared(Driver{Ops: Ops{"declare queue", "declare queue", "delete queue"}, read: readQueue, del: deleteQueue},
			plan.As[topology.Queue], (*broker.Client).DeclareQueue, (*broker.Declarer).DeclareQueue),
		kind.Binding: declared(Driver{Ops: Ops{"create binding", "create binding", "delete binding"}, read: readBinding, del: deleteBinding},
			func(o plan.Object) (*topology.Binding, bool) { b, ok := o.(plan.BindingObject); return b.Binding, ok }, (*broker.Client).DeclareBinding, (*broker.Declarer).DeclareBinding),
	}
	for _, k := range kind.PolicyKinds() {
		m[k] = policyDriver(k)
	}
	return m
}()

// policyDriver is the driver of policies of kind k: its steps are "put"
// and "delete" and its label ("put operator policy").
func policyDriver(k kind.Kind) Driver {
	put, del := "put "+k.Label(), "delete "+k.Label()
	return Driver{Ops: Ops{put, put, del}, read: readPolicy, write: writePolicy, del: deletePolicy, Serial: true}
}

// itemOps are the steps of every kind carried as topology.Item: the
// step's words name its kind.
var itemOps = Ops{"write", "write", "delete"}

// Of returns k's driver: its own for a typed kind, one over its item
// driver in pkg/broker for a kind carried as topology.Item; kind.Unknown's
// error for a kind that is neither.
func Of(k kind.Kind) (Driver, error) {
	if d, ok := typed[k]; ok {
		return d, nil
	}
	if k.Item() == nil {
		return Driver{}, kind.Unknown("broker driver", k)
	}
	return Driver{Ops: itemOps, read: readItem, write: writeItem, del: deleteItem}, nil
}

// Read reads the object of kind k in vhost that name (or o, for a kind
// whose objects are all identity) stands for, as the broker holds it; the
// error wraps broker.ErrNotFound when it holds none.
func (d Driver) Read(ctx context.Context, c *broker.Client, k kind.Kind, vhost, name string, o plan.Object) (plan.Object, error) {
	return d.read(ctx, c, k, vhost, name, o)
}

// Write makes the broker hold want, of kind k, in vhost, where it held
// have (nil when it held none), through the management API.
func (d Driver) Write(ctx context.Context, c *broker.Client, k kind.Kind, vhost string, have, want plan.Object) error {
	return d.write(ctx, c, k, vhost, have, want)
}

// Delete removes the object of kind k named name from vhost; have is the
// object as the plan saw it.
func (d Driver) Delete(ctx context.Context, c *broker.Client, k kind.Kind, vhost, name string, have plan.Object, o DeleteOptions) error {
	return d.del(ctx, c, k, vhost, name, have, o)
}

// Bulk reports whether the kind's writes may be declared over AMQP
// (Declare).
func (d Driver) Bulk() bool { return d.declare != nil }

// Declare declares want in vhost over AMQP, for a kind that is Bulk.
func (d Driver) Declare(ctx context.Context, dd *broker.Declarer, vhost string, want plan.Object) error {
	if d.declare == nil {
		return errors.New("this kind is not declared over AMQP")
	}
	return d.declare(ctx, dd, vhost, want)
}

// Holds reports whether have, read back after a write of want, is what
// the write made: the kind's own rule, or no field that differs as the
// diff compares them (a user's password against the hash the broker
// keeps included).
func (d Driver) Holds(k kind.Kind, have, want plan.Object) bool {
	if d.holds != nil {
		return d.holds(have, want)
	}
	return len(plan.ObjectFields(k, have, want)) == 0
}

// PropertiesKey asks the broker for the properties_key of o, of a kind
// deleted by it (kind.Spec.DeletedByKey: a binding); the error wraps broker.ErrNotFound when it holds none.
func (d Driver) PropertiesKey(ctx context.Context, c *broker.Client, vhost string, o plan.Object) (string, error) {
	return c.BindingPropertiesKey(ctx, vhost, o.(plan.BindingObject).Binding)
}

// A vhost's: its metadata (DeclareVhost: a PUT replaces description and
// tags as a whole; a file that declares no tags keeps the broker's, which
// have holds).

func readVhost(ctx context.Context, c *broker.Client, _ kind.Kind, _, name string, _ plan.Object) (plan.Object, error) {
	info, err := c.GetVhost(ctx, name)
	if err != nil {
		return nil, err
	}
	return &plan.VhostMeta{Name: info.Name, Description: info.Description, DefaultQueueType: info.DefaultQueueType, Tags: info.Tags}, nil
}

func writeVhost(ctx context.Context, c *broker.Client, _ kind.Kind, _ string, have, want plan.Object) error {
	v := want.(*plan.VhostMeta)
	tags := v.Tags
	if h, ok := have.(*plan.VhostMeta); ok && tags == nil {
		tags = h.Tags
	}
	return c.DeclareVhost(ctx, v.Name, broker.VhostSettings{Description: v.Description, DefaultQueueType: v.DefaultQueueType, Tags: tags})
}

func deleteVhost(ctx context.Context, c *broker.Client, _ kind.Kind, _, name string, _ plan.Object, _ DeleteOptions) error {
	return c.DeleteVhost(ctx, name)
}

// vhostDescribed: the vhost has the description the write set (the only
// metadata every supported broker version stores: 3.10 keeps no default
// queue type).
func vhostDescribed(have, want plan.Object) bool {
	h, w := have.(*plan.VhostMeta), want.(*plan.VhostMeta)
	return w.Description == "" || h.Description == w.Description
}

func readExchange(ctx context.Context, c *broker.Client, _ kind.Kind, vhost, name string, _ plan.Object) (plan.Object, error) {
	x, err := c.GetExchange(ctx, vhost, name)
	return plan.Of(x), err
}

func deleteExchange(ctx context.Context, c *broker.Client, _ kind.Kind, vhost, name string, _ plan.Object, _ DeleteOptions) error {
	return c.DeleteExchange(ctx, vhost, name, broker.DeleteExchangeOptions{})
}

func readQueue(ctx context.Context, c *broker.Client, _ kind.Kind, vhost, name string, _ plan.Object) (plan.Object, error) {
	q, err := c.GetQueue(ctx, vhost, name)
	return plan.Of(q), err
}

func deleteQueue(ctx context.Context, c *broker.Client, _ kind.Kind, vhost, name string, _ plan.Object, o DeleteOptions) error {
	return c.DeleteQueue(ctx, vhost, name, o.Queue)
}

// declared sets d's write and declare for a kind whose objects (T, carried
// in a plan as an Object that of opens) are declared through the
// management API (api) and over AMQP (amqp) alike: exchanges, queues and
// bindings.
func declared[T any](d Driver, of func(plan.Object) (*T, bool), api func(*broker.Client, context.Context, string, *T) error, amqp func(*broker.Declarer, context.Context, string, *T) error) Driver {
	d.write = func(ctx context.Context, c *broker.Client, _ kind.Kind, vhost string, _, want plan.Object) error {
		x, _ := of(want)
		return api(c, ctx, vhost, x)
	}
	d.declare = func(ctx context.Context, dd *broker.Declarer, vhost string, want plan.Object) error {
		x, _ := of(want)
		return amqp(dd, ctx, vhost, x)
	}
	return d
}

// readBinding finds o: a binding is all identity, so found is as written.
func readBinding(ctx context.Context, c *broker.Client, _ kind.Kind, vhost, _ string, o plan.Object) (plan.Object, error) {
	b := o.(plan.BindingObject).Binding
	_, err := c.BindingPropertiesKey(ctx, vhost, b)
	return plan.BindingObject{Binding: b}, err
}

func deleteBinding(ctx context.Context, c *broker.Client, _ kind.Kind, vhost, _ string, have plan.Object, o DeleteOptions) error {
	return c.DeleteBinding(ctx, vhost, have.(plan.BindingObject).Binding, o.PropertiesKey)
}

func readPolicy(ctx context.Context, c *broker.Client, k kind.Kind, vhost, name string, _ plan.Object) (plan.Object, error) {
	p, err := c.GetPolicy(ctx, k, vhost, name)
	return plan.Of(p), err
}

func writePolicy(ctx context.Context, c *broker.Client, k kind.Kind, vhost string, _, want plan.Object) error {
	p, _ := plan.As[topology.Policy](want)
	return c.PutPolicy(ctx, k, vhost, p)
}

func deletePolicy(ctx context.Context, c *broker.Client, k kind.Kind, vhost, name string, _ plan.Object, _ DeleteOptions) error {
	return c.DeletePolicy(ctx, k, vhost, name)
}

// The item kinds' (broker's drivers): read one is a listing of the kind (the
// drivers read no single item), the item found in it by name.

func readItem(ctx context.Context, c *broker.Client, k kind.Kind, vhost, name string, _ plan.Object) (plan.Object, error) {
	items, err := c.ReadItems(ctx, k, vhost)
	if err != nil {
		return nil, err
	}
	for _, it := range items {
		if it.Name == name {
			return plan.ItemObject{Item: it}, nil
		}
	}
	return nil, fmt.Errorf("%s %q: %w", k.Label(), name, broker.ErrNotFound)
}

func writeItem(ctx context.Context, c *broker.Client, k kind.Kind, vhost string, have, want plan.Object) error {
	var h *topology.Item
	if b, ok := have.(plan.ItemObject); ok {
		h = b.Item
	}
	return c.WriteItem(ctx, k, vhost, h, want.(plan.ItemObject).Item)
}

func deleteItem(ctx context.Context, c *broker.Client, k kind.Kind, vhost, _ string, have plan.Object, _ DeleteOptions) error {
	return c.DeleteItem(ctx, k, vhost, have.(plan.ItemObject).Item)
}
