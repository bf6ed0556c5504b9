package apply

import (
	"context"
	"errors"
	"fmt"

	"github.com/mqctl/mqctl/pkg/broker"
	"github.com/mqctl/mqctl/pkg/kind"
	"github.com/mqctl/mqctl/pkg/lock"
	"github.com/mqctl/mqctl/pkg/plan"
	"github.com/mqctl/mqctl/pkg/topology"
)

// object is what apply does with the objects of one kind: the requests
// that make the broker hold one (write: a create, an update, the declare
// half of a replace, a binding put back) or hold none (del: a delete, the
// first half of a replace), each read back when its outcome is unknown,
// and the names of those operations as steps print them. Every step goes
// through its kind's object (executor.step); a kind without one is refused
// before anything changes (Check).
type object struct {
	ops        kindOps
	write, del func(ctx context.Context, e *executor, s Step) error
	// bulk: its writes are declarations that apply makes over AMQP where
	// a vhost has many (bulkDeclares).
	bulk bool
	// serial: its writes and deletes in one vhost run one at a time
	// (policyLock): the broker applies each policy change to every
	// matching queue, and concurrent changes may leave the older one in
	// force.
	serial bool
}

// readFunc reads back the object step s writes or deletes as the broker
// holds it, with an error wrapping broker.ErrNotFound when it holds none:
// each kind's write and delete settle an unknown outcome through their
// kind's (executor.written, executor.gone).
type readFunc func(ctx context.Context, e *executor, s Step) (plan.Object, error)

// kindOps are the operations that write (create, update, declare again)
// and delete one object of a kind.
type kindOps struct{ create, update, del Op }

// objects are the kinds with types of their own; every kind carried as
// topology.Item (kind.Spec.Item) shares itemObject.
// Every kind of policy (kind.PolicyKinds) has policyObject.
var objects = func() map[plan.Kind]object {
	m := map[plan.Kind]object{
		kind.Vhost:    {ops: kindOps{OpCreateVhost, OpUpdateVhost, OpDeleteVhost}, write: writeVhost, del: deleteVhost},
		kind.Exchange: {ops: kindOps{OpDeclareExchange, OpDeclareExchange, OpDeleteExchange}, write: declareExchange, del: deleteExchange, bulk: true},
		kind.Queue:    {ops: kindOps{OpDeclareQueue, OpDeclareQueue, OpDeleteQueue}, write: declareQueue, del: deleteQueue, bulk: true},
		kind.Binding:  {ops: kindOps{OpBind, OpBind, OpUnbind}, write: createBinding, del: deleteBinding, bulk: true},
	}
	for _, k := range kind.PolicyKinds() {
		m[k] = policyObject(k)
	}
	return m
}()

// policyObject is the object of policies of kind k: its operations are
// "put" and "delete" and its label ("put operator policy").
func policyObject(k kind.Kind) object {
	put, del := Op("put "+k.Label()), Op("delete "+k.Label())
	return object{ops: kindOps{put, put, del}, write: putPolicy(k), del: deletePolicy(k), serial: true}
}

// itemObject is the object of every kind carried as topology.Item: its
// requests are the broker driver's for the kind.
var itemObject = object{ops: kindOps{OpPutItem, OpPutItem, OpDeleteItem}, write: writeItem, del: deleteItem}

// objectOf returns k's object; false for a kind apply has no steps for,
// which Check refuses before anything changes.
func objectOf(k plan.Kind) (object, bool) {
	if o, ok := objects[k]; ok {
		return o, true
	}
	if k.Item() != nil {
		return itemObject, true
	}
	return object{}, false
}

func writeVhost(ctx context.Context, e *executor, s Step) error {
	v := s.Change.After.(*plan.VhostMeta)
	if s.Change.Action != plan.Create {
		tags := v.Tags
		if tags == nil && e.opts.VhostTags != nil {
			tags = e.opts.VhostTags(v.Name)
		}
		return write(ctx, func() error {
			return e.c.DeclareVhost(ctx, v.Name, broker.VhostSettings{Description: v.Description, DefaultQueueType: v.DefaultQueueType, Tags: tags})
		}, e.vhostDescribed(v.Name, v.Description))
	}
	if err := write(ctx, func() error {
		return e.c.DeclareVhost(ctx, v.Name, broker.VhostSettings{Description: v.Description, DefaultQueueType: v.DefaultQueueType, Tags: v.Tags})
	}, e.vhostExists(v.Name)); err != nil {
		return err
	}
	if err := write(ctx, func() error { return e.c.GrantFullPermissions(ctx, v.Name, e.c.Username()) }, e.permitted(v.Name)); err != nil {
		return err
	}
	if e.opts.VhostCreated != nil {
		return e.opts.VhostCreated(ctx, v.Name)
	}
	return nil
}

func deleteVhost(ctx context.Context, e *executor, s Step) error {
	return ignoreNotFound(write(ctx, func() error { return e.c.DeleteVhost(ctx, s.Name) }, e.vhostGone(s.Name)))
}

// declarer is how one kind's object is declared: over AMQP, and through
// the management API (read back when its outcome is unknown).
type declarer[T any] struct {
	amqp func(d *broker.Declarer, ctx context.Context, vhost string, o *T) error
	api  func(c *broker.Client, ctx context.Context, vhost string, o *T) error
	read readFunc
}

// declare declares o over AMQP where apply declares in bulk in the step's
// vhost (bulkDeclares), else through the management API.
func (k declarer[T]) declare(ctx context.Context, e *executor, s Step, o *T) error {
	if e.overAMQP(s.Vhost, func(d *broker.Declarer) error { return k.amqp(d, ctx, s.Vhost, o) }) {
		return nil
	}
	return write(ctx, func() error { return k.api(e.c, ctx, s.Vhost, o) }, e.written(s, k.read))
}

var (
	exchanges = declarer[topology.Exchange]{(*broker.Declarer).DeclareExchange, (*broker.Client).DeclareExchange, readExchange}
	queues    = declarer[topology.Queue]{(*broker.Declarer).DeclareQueue, (*broker.Client).DeclareQueue, readQueue}
	bindings  = declarer[topology.Binding]{(*broker.Declarer).DeclareBinding, (*broker.Client).DeclareBinding, readBinding}
)

func declareExchange(ctx context.Context, e *executor, s Step) error {
	if err := e.unmarkDelete(ctx, s); err != nil {
		return err
	}
	x := s.Change.After.(plan.ExchangeObject).Exchange
	if err := exchanges.declare(ctx, e, s, x); err != nil {
		return err
	}
	return e.declaredDespiteMark(ctx, s, x)
}

// declaredDespiteMark makes sure that exchange s, which the plan creates,
// was declared, where the broker's marks of deletes in progress could not
// be listed (unmarkDelete: a user without the policymaker tag). A marked
// exchange's declaration is answered as done and declares nothing: it is
// still absent after. Then the mark is there (no one can declare the
// exchange while it is, so the exchange is no one else's), and apply
// clears it as a user without the tag can (an exchange.delete of the
// absent exchange: broker.Declarer.ClearAbsentExchangeDeleteMark) and
// declares it again. Before, the declaration was reported done, and the
// exchange's bindings failed as if the file did not declare it ("declare
// both ends of the binding (MQ401)"), at that apply and every one after.
// A replace's delete clears the mark itself.
func (e *executor) declaredDespiteMark(ctx context.Context, s Step, x *topology.Exchange) error {
	if s.Change.Action != plan.Create || e.deleteMarks(ctx, s.Vhost) != nil {
		return nil
	}
	d := e.markDeclarer()
	if there, err := d.ExchangeExists(ctx, s.Vhost, s.Name); err != nil || there {
		return nil // not known: as before, the bindings on it tell
	}
	if err := d.ClearAbsentExchangeDeleteMark(ctx, s.Vhost, s.Name); err != nil {
		return fmt.Errorf("exchange %q in vhost %q was not declared: RabbitMQ answers its declaration as done and declares nothing, as it does while it marks a delete of the exchange as in progress (left by a delete that was cut off: an apply killed or cut from the broker during it); clearing the mark with an exchange.delete of the absent exchange failed: %w; an operator clears it with: rabbitmqctl clear_parameter -p %s exchange-delete-in-progress %s (or user %q, given the policymaker tag, lets apply clear it)",
			s.Name, s.Vhost, err, broker.ShellQuote(s.Vhost), broker.ShellQuote(s.Name), e.c.Username())
	}
	return exchanges.declare(ctx, e, s, x)
}

// markDeclarer is the AMQP connection declaredDespiteMark asks through:
// the bulk declares' where there is one, else one of its own.
func (e *executor) markDeclarer() *broker.Declarer {
	if e.amqp != nil {
		return e.amqp
	}
	e.marksMu.Lock()
	defer e.marksMu.Unlock()
	if e.marksAMQP == nil {
		e.marksAMQP = e.c.Declarer(lock.DefaultName("apply"))
	}
	return e.marksAMQP
}

// unmarkDelete clears, before apply declares exchange s (a create, or the
// declare half of a replace), the broker's mark that a delete of it is in
// progress, left by a delete that was cut off (an earlier apply killed,
// timed out or cut from the network while the broker deleted the
// exchange: see broker.ExchangeDeletesInProgress). While the mark is
// there, RabbitMQ answers every declaration of the exchange as done and
// declares nothing: the apply then failed at the exchange's bindings
// ("does not exist"), and so did every apply after it. The marks of a
// vhost are listed once, at its first such declaration; a user who may
// not list them (the policymaker tag) declares as before.
func (e *executor) unmarkDelete(ctx context.Context, s Step) error {
	if s.Change.Action != plan.Create && s.Change.Action != plan.Replace {
		return nil
	}
	if !e.deleteMarks(ctx, s.Vhost)[s.Name] {
		return nil
	}
	if err := e.c.ClearExchangeDeleteInProgress(ctx, s.Vhost, s.Name); err != nil {
		return fmt.Errorf("exchange %q in vhost %q cannot be declared: RabbitMQ still marks a delete of it as in progress, left by a delete that was cut off (an apply killed or cut from the broker during it), and ignores every declaration of it until the mark is cleared; clearing it failed: %w; clear it with: rabbitmqctl clear_parameter -p %q exchange-delete-in-progress %q",
			s.Name, s.Vhost, err, s.Vhost, s.Name)
	}
	return nil
}

// deleteMarks returns the exchanges of vhost whose delete the broker marks
// as in progress, listed once per apply (nil when they cannot be listed).
func (e *executor) deleteMarks(ctx context.Context, vhost string) map[string]bool {
	e.marksMu.Lock()
	defer e.marksMu.Unlock()
	if m, ok := e.marks[vhost]; ok {
		return m
	}
	m, err := e.c.ExchangeDeletesInProgress(ctx, vhost)
	if err != nil {
		m = nil
	}
	if e.marks == nil {
		e.marks = map[string]map[string]bool{}
	}
	e.marks[vhost] = m
	return m
}

func deleteExchange(ctx context.Context, e *executor, s Step) error {
	return ignoreNotFound(write(ctx, func() error {
		return e.c.DeleteExchange(ctx, s.Vhost, s.Name, broker.DeleteExchangeOptions{})
	}, e.gone(s, readExchange)))
}

func readExchange(ctx context.Context, e *executor, s Step) (plan.Object, error) {
	x, err := e.c.GetExchange(ctx, s.Vhost, s.Name)
	return plan.ExchangeObject{Exchange: x}, err
}

func declareQueue(ctx context.Context, e *executor, s Step) error {
	return queues.declare(ctx, e, s, s.Change.After.(plan.QueueObject).Queue)
}

// deleteQueue deletes a queue, checking at that very moment that no
// message is lost (executor.deleteQueue); read back, a queue still there
// goes through every check again.
func deleteQueue(ctx context.Context, e *executor, s Step) error {
	return write(ctx, func() error { return e.deleteQueue(ctx, s) }, e.gone(s, readQueue))
}

func readQueue(ctx context.Context, e *executor, s Step) (plan.Object, error) {
	q, err := e.c.GetQueue(ctx, s.Vhost, s.Name)
	return plan.QueueObject{Queue: q}, err
}

func createBinding(ctx context.Context, e *executor, s Step) error {
	b := s.Binding
	err := bindings.declare(ctx, e, s, b)
	if errors.Is(err, broker.ErrNotFound) && !errors.Is(err, broker.ErrVhostNotFound) {
		return fmt.Errorf("exchange %q or %s %q does not exist: declare both ends of the binding (mqctl lint reports this as MQ401): %w",
			b.Source, b.DestinationType, b.Destination, err)
	}
	return err
}

// deleteBinding deletes a binding by the properties_key the broker gave it
// (kind.Spec.DeletedByKey): read with the state, listed before the phase
// (listKeys), or asked for, which also tells whether it is gone.
func deleteBinding(ctx context.Context, e *executor, s Step) error {
	key, ok := "", false
	if e.opts.PropertiesKey != nil {
		key, ok = e.opts.PropertiesKey(s.Vhost, s.Binding)
	}
	if !ok {
		key, ok = e.keys[s.Vhost][s.Binding.Key()]
	}
	if !ok {
		k, err := e.c.BindingPropertiesKey(ctx, s.Vhost, s.Binding)
		if errors.Is(err, broker.ErrNotFound) {
			return nil
		}
		if err != nil {
			return err
		}
		key = k
	}
	return ignoreNotFound(write(ctx, func() error { return e.c.DeleteBinding(ctx, s.Vhost, s.Binding, key) }, e.gone(s, readBinding)))
}

// readBinding finds the step's binding: a binding is all identity, so
// found is as written.
func readBinding(ctx context.Context, e *executor, s Step) (plan.Object, error) {
	_, err := e.c.BindingPropertiesKey(ctx, s.Vhost, s.Binding)
	return plan.BindingObject{Binding: s.Binding}, err
}

func putPolicy(k kind.Kind) func(context.Context, *executor, Step) error {
	return func(ctx context.Context, e *executor, s Step) error {
		p := s.Change.After.(plan.PolicyObject).Policy
		return write(ctx, func() error { return e.c.PutPolicy(ctx, k, s.Vhost, p) }, e.written(s, readPolicy(k)))
	}
}

func deletePolicy(k kind.Kind) func(context.Context, *executor, Step) error {
	return func(ctx context.Context, e *executor, s Step) error {
		return ignoreNotFound(write(ctx, func() error { return e.c.DeletePolicy(ctx, k, s.Vhost, s.Name) }, e.gone(s, readPolicy(k))))
	}
}

func readPolicy(k kind.Kind) readFunc {
	return func(ctx context.Context, e *executor, s Step) (plan.Object, error) {
		p, err := e.c.GetPolicy(ctx, k, s.Vhost, s.Name)
		return plan.PolicyObject{Policy: p}, err
	}
}

func writeItem(ctx context.Context, e *executor, s Step) error {
	c := s.Change
	var have *topology.Item
	if b, ok := c.Before.(plan.ItemObject); ok {
		have = b.Item
	}
	want := c.After.(plan.ItemObject).Item
	return write(ctx, func() error { return e.c.WriteItem(ctx, c.Kind, s.Vhost, have, want) }, e.written(s, readItem))
}

func deleteItem(ctx context.Context, e *executor, s Step) error {
	c := s.Change
	return ignoreNotFound(write(ctx, func() error { return e.c.DeleteItem(ctx, c.Kind, s.Vhost, c.Before.(plan.ItemObject).Item) }, e.gone(s, readItem)))
}

// readItem finds the step's item among the items of its kind the broker's
// driver reads (one listing: the drivers read no single item).
func readItem(ctx context.Context, e *executor, s Step) (plan.Object, error) {
	k := s.Kind()
	items, err := e.c.ReadItems(ctx, k, s.Vhost)
	if err != nil {
		return nil, err
	}
	for _, it := range items {
		if it.Name == s.Name {
			return plan.ItemObject{Item: it}, nil
		}
	}
	return nil, fmt.Errorf("%s %q: %w", k.Label(), s.Name, broker.ErrNotFound)
}

// step performs one step through its kind's object. Deletes of objects
// already gone succeed (re-running converges). A write whose outcome is
// unknown is read back before it is tried again (see write).
func (e *executor) step(ctx context.Context, s Step) error {
	o, ok := objectOf(s.Kind())
	if !ok {
		return kind.Unknown("apply step", s.Kind())
	}
	if s.Delete {
		return o.del(ctx, e, s)
	}
	return o.write(ctx, e, s)
}
