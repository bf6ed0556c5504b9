package apply

import (
	"context"
	"errors"
	"fmt"

	"github.com/mqctl/mqctl/internal/shell"
	"github.com/mqctl/mqctl/pkg/broker"
	"github.com/mqctl/mqctl/pkg/broker/driver"
	"github.com/mqctl/mqctl/pkg/kind"
	"github.com/mqctl/mqctl/pkg/lock"
	"github.com/mqctl/mqctl/pkg/plan"
)

// object is what apply does with the objects of one kind, through the
// kind's broker driver (driver.Of): the requests that make the
// broker hold one (write: a create, an update, the declare half of a
// replace, a binding put back) or hold none (del: a delete, the first half
// of a replace), each read back when its outcome is unknown, and the names
// of those operations as steps print them. Every step goes through its
// kind's object (executor.step); a kind without one is refused before
// anything changes (Check). What one kind does that another does not is a
// capability of its driver (bulk declares, serial writes, the marks of
// deletes in progress) or a fact of its kind.Spec (Container,
// HoldsMessages, DeletedByKey, NamedByEnds), asked here, never its name.
type object struct {
	k   plan.Kind
	d   driver.Driver
	ops kindOps
}

// kindOps are the operations that write (create, update, declare again)
// and delete one object of a kind.
type kindOps struct{ create, update, del Op }

// objects are the objects of every kind with a broker driver, made once.
var objects = func() map[plan.Kind]object {
	m := map[plan.Kind]object{}
	for _, s := range kind.All() {
		d, err := driver.Of(s.Kind)
		if err != nil {
			continue
		}
		m[s.Kind] = object{k: s.Kind, d: d, ops: kindOps{Op(d.Ops.Create), Op(d.Ops.Update), Op(d.Ops.Delete)}}
	}
	return m
}()

// objectOf returns k's object; false for a kind apply has no steps for,
// which Check refuses before anything changes.
func objectOf(k plan.Kind) (object, bool) {
	o, ok := objects[k]
	return o, ok
}

// bulk: its writes are declarations that apply makes over AMQP where a
// vhost has many (bulkDeclares).
func (o object) bulk() bool { return o.d.Bulk() }

// serial: its writes and deletes in one vhost run one at a time
// (policyLock): the broker applies each policy change to every matching
// queue, and concurrent changes may leave the older one in force.
func (o object) serial() bool { return o.d.Serial }

// read reads back the object step s writes or deletes as the broker holds
// it, with an error wrapping broker.ErrNotFound when it holds none: a
// write and a delete settle an unknown outcome through it
// (executor.written, executor.gone).
func (o object) read(ctx context.Context, e *executor, s Step) (plan.Object, error) {
	return o.d.Read(ctx, e.c, o.k, s.Vhost, s.Name, s.object())
}

// write makes the broker hold the object step s writes: over AMQP where
// apply declares the kind in bulk in the step's vhost, else through the
// management API, read back when its outcome is unknown. A kind whose
// delete the broker marks in progress has the mark cleared first and its
// declaration made sure of after; a container created is opened to the
// user (full permissions) and handed to Options.VhostCreated.
func (o object) write(ctx context.Context, e *executor, s Step) error {
	if o.d.DeleteMarked {
		if err := e.unmarkDelete(ctx, s); err != nil {
			return err
		}
	}
	if err := o.put(ctx, e, s); err != nil {
		return err
	}
	if o.d.DeleteMarked {
		return e.declaredDespiteMark(ctx, s, o)
	}
	if o.k.Container() && s.Change.Action == plan.Create {
		if err := write(ctx, func() error { return e.c.GrantFullPermissions(ctx, s.Name, e.c.Username()) }, e.permitted(s.Name)); err != nil {
			return err
		}
		if e.opts.VhostCreated != nil {
			return e.opts.VhostCreated(ctx, s.Name)
		}
	}
	return nil
}

// put declares the object step s writes (see write).
func (o object) put(ctx context.Context, e *executor, s Step) error {
	want := s.object()
	if o.d.Bulk() && e.overAMQP(s.Vhost, func(d *broker.Declarer) error { return o.d.Declare(ctx, d, s.Vhost, want) }) {
		return nil
	}
	err := write(ctx, func() error { return o.d.Write(ctx, e.c, o.k, s.Vhost, e.have(s, o), want) }, e.written(s, o))
	if o.k.NamedByEnds() && errors.Is(err, broker.ErrNotFound) && !errors.Is(err, broker.ErrVhostNotFound) {
		b := s.Binding
		return fmt.Errorf("exchange %q or %s %q does not exist: declare both ends of the binding (mqctl lint reports this as MQ401): %w",
			b.Source, b.DestinationType, b.Destination, err)
	}
	return err
}

// have is what the broker holds where step s writes an object of o: its
// change's Before; for a kind whose write keeps what the broker holds
// (KeepsCurrent), the object as the broker holds it now
// (Options.Current), where that is known.
func (e *executor) have(s Step, o object) plan.Object {
	if s.Change == nil || s.Change.Before == nil {
		return nil
	}
	if o.d.KeepsCurrent && e.opts.Current != nil {
		if now := e.opts.Current(o.k, s.Vhost, s.Name); now != nil {
			return now
		}
	}
	return s.Change.Before
}

// del deletes the object of step s. Of a kind that holds messages, at that
// very moment only when none is lost (executor.deleteQueue), and read back,
// one still there goes through every check again; of a kind deleted by
// its properties_key, by the key read with the state, listed before the
// phase (listKeys), or asked for, which also tells whether it is gone.
// An object already gone is deleted.
func (o object) del(ctx context.Context, e *executor, s Step) error {
	if o.k.HoldsMessages() {
		return write(ctx, func() error { return e.deleteQueue(ctx, s, o) }, e.gone(s, o))
	}
	var opts driver.DeleteOptions
	if o.k.DeletedByKey() {
		key, err := e.propertiesKey(ctx, s, o)
		if errors.Is(err, broker.ErrNotFound) {
			return nil
		}
		if err != nil {
			return err
		}
		opts.PropertiesKey = key
	}
	return ignoreNotFound(write(ctx, func() error { return o.d.Delete(ctx, e.c, o.k, s.Vhost, s.Name, e.deleted(s), opts) }, e.gone(s, o)))
}

// deleted is the object step s deletes as the plan saw it: its binding, or
// its change's Before.
func (e *executor) deleted(s Step) plan.Object {
	if s.Binding != nil {
		return plan.BindingObject{Binding: s.Binding}
	}
	if s.Change == nil {
		return nil
	}
	return s.Change.Before
}

// propertiesKey is the properties_key of the binding step s deletes: read
// with the state (Options.PropertiesKey), listed before the phase
// (listKeys), or asked of the broker (an error wrapping
// broker.ErrNotFound when it holds none).
func (e *executor) propertiesKey(ctx context.Context, s Step, o object) (string, error) {
	if e.opts.PropertiesKey != nil {
		if key, ok := e.opts.PropertiesKey(s.Vhost, s.Binding); ok {
			return key, nil
		}
	}
	if key, ok := e.keys[s.Vhost][s.Binding.Key()]; ok {
		return key, nil
	}
	return o.d.PropertiesKey(ctx, e.c, s.Vhost, s.object())
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
func (e *executor) declaredDespiteMark(ctx context.Context, s Step, o object) error {
	if s.Change.Action != plan.Create || e.deleteMarks(ctx, s.Vhost) != nil {
		return nil
	}
	d := e.markDeclarer()
	if there, err := d.ExchangeExists(ctx, s.Vhost, s.Name); err != nil || there {
		return nil // not known: as before, the bindings on it tell
	}
	if err := d.ClearAbsentExchangeDeleteMark(ctx, s.Vhost, s.Name); err != nil {
		return fmt.Errorf("exchange %q in vhost %q was not declared: RabbitMQ answers its declaration as done and declares nothing, as it does while it marks a delete of the exchange as in progress (left by a delete that was cut off: an apply killed or cut from the broker during it); clearing the mark with an exchange.delete of the absent exchange failed: %w; an operator clears it with: rabbitmqctl clear_parameter -p %s exchange-delete-in-progress %s (or user %q, given the policymaker tag, lets apply clear it)",
			s.Name, s.Vhost, err, shell.Quote(s.Vhost), shell.Quote(s.Name), e.c.Username())
	}
	return o.put(ctx, e, s)
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
