// Package apply carries out a plan against a broker: ordered, parallel
// within a phase, checking at the moment of every queue deletion that no
// message is lost, and reporting exactly what was done, what failed and
// what remains.
package apply

import (
	"fmt"
	"slices"
	"strings"

	"github.com/mqctl/mqctl/pkg/kind"
	"github.com/mqctl/mqctl/pkg/plan"
	"github.com/mqctl/mqctl/pkg/topology"
)

// Op is one broker operation, as its kind's broker driver names it
// (broker.Driver.Ops). A kind of policy's (kind.PolicyKinds) are "put"
// and "delete" and its label: "put operator policy".
type Op string

const (
	OpCreateVhost     Op = "create vhost"
	OpUpdateVhost     Op = "update vhost"
	OpUnbind          Op = "delete binding"
	OpDeleteQueue     Op = "delete queue"
	OpDeleteExchange  Op = "delete exchange"
	OpDeleteVhost     Op = "delete vhost"
	OpDeclareExchange Op = "declare exchange"
	OpDeclareQueue    Op = "declare queue"
	OpBind            Op = "create binding"
	// The generic kinds (kind.Spec.Item): the step's Change says which.
	OpPutItem    Op = "write"
	OpDeleteItem Op = "delete"
)

// Step is one operation of an apply: it writes or deletes (Delete) the
// object of its Change, through its kind's object (objects).
type Step struct {
	// Delete: the step deletes its object (a delete, or the first half of
	// a replace); otherwise it writes Change.After (Binding, for a
	// binding restored).
	Delete bool
	Vhost  string
	Name   string
	// Change is the plan change this step carries out (for a restored
	// binding: the replace that took it down).
	Change *plan.Change
	// Binding is set for a binding's steps.
	Binding *topology.Binding
	// Restore marks a binding put back after its end was replaced.
	Restore bool
	// Loosen marks the early write of a kind whose settings bound the
	// apply's declarations (kind.ItemSpec.Loosen): Change is a copy of the
	// plan's update with After the loosened item; the update itself is
	// written in its own phase.
	Loosen bool
}

// object is the object s writes: its change's After, or for a binding's
// steps (one restored after a replace included) its binding.
func (s Step) object() plan.Object {
	if s.Binding != nil {
		return plan.BindingObject{Binding: s.Binding}
	}
	if s.Change == nil {
		return nil
	}
	return s.Change.After
}

// Kind is the kind of the object the step writes or deletes ("" for a
// step without a change).
func (s Step) Kind() plan.Kind {
	switch {
	case s.Restore:
		return kind.Binding
	case s.Change == nil:
		return ""
	}
	return s.Change.Kind
}

// Op names what the step does, as its kind's object names it ("declare
// queue"); "" for a kind apply has no steps for.
func (s Step) Op() Op {
	o, ok := objectOf(s.Kind())
	switch {
	case !ok:
		return ""
	case s.Delete:
		return o.ops.del
	case s.Change != nil && s.Change.Action == plan.Update:
		return o.ops.update
	}
	return o.ops.create
}

func (s Step) String() string {
	op := s.Op()
	switch op {
	case OpBind, OpUnbind:
		what := "create"
		if s.Delete {
			what = "delete"
		} else if s.Restore {
			what = "restore"
		}
		return fmt.Sprintf("%s binding %s in vhost %q", what, plan.BindingName(s.Binding), s.Vhost)
	case OpCreateVhost, OpUpdateVhost, OpDeleteVhost:
		return fmt.Sprintf("%s %q", op, s.Name)
	case OpPutItem, OpDeleteItem:
		if s.Loosen {
			return fmt.Sprintf("loosen %s %q in vhost %q before the declarations (to %s)", s.Change.Kind.Label(), s.Name, s.Vhost, settingsText(s.Change.After))
		}
		if s.Vhost == "" {
			return fmt.Sprintf("%s %s %q", op, s.Change.Kind.Label(), s.Name)
		}
		return fmt.Sprintf("%s %s %q in vhost %q", op, s.Change.Kind.Label(), s.Name, s.Vhost)
	}
	return fmt.Sprintf("%s %q in vhost %q", op, s.Name, s.Vhost)
}

// Order turns a plan into phases of steps. Steps within a phase do not
// depend on each other; each phase needs the ones before it. The phase of
// each kind's deletes and writes is the kind's (kind.Spec.DeletePhase,
// WritePhase):
//
//	vhosts created/updated
//	deletes, in reverse: policies, bindings, queues, exchanges, vhosts
//	  (a replace's delete half runs here)
//	creates: exchanges, queues, bindings (with those a replace took down), policies
//	deletes for good of policies, bindings, queues and exchanges whose
//	  vhost (and a binding's ends) stay, in that order
//	  (kind.Spec.DeleteLate: make before break)
func Order(p *plan.Plan) [][]Step {
	byPhase := make([][]Step, kind.Phases)
	// Objects deleted for good (not replaced): a binding on one of them is
	// gone with it and cannot be restored. Taken down: deleted or
	// replaced before the writes, so that what hangs on it goes with it;
	// an object deleted late is not (lateDeletes).
	gone := map[plan.ObjectRef]bool{}
	takenDown := map[plan.ObjectRef]bool{}
	for i := range p.Changes {
		c := &p.Changes[i]
		if c.Action == plan.Delete {
			gone[c.Ref()] = true
		}
		if c.Action == plan.Delete || c.Action == plan.Replace {
			takenDown[c.Ref()] = true
		}
	}
	late := lateDeletes(p, takenDown)
	for ref := range late {
		delete(takenDown, ref)
	}
	for i := range p.Changes {
		c := &p.Changes[i]
		spec, ok := kind.Of(c.Kind)
		if _, known := objectOf(c.Kind); !ok || !known {
			continue // refused by Check
		}
		if c.Action == plan.Delete || c.Action == plan.Replace {
			s := Step{Delete: true, Vhost: c.Vhost, Name: c.Name, Change: c}
			if b, ok := c.Before.(plan.BindingObject); ok {
				s.Binding = b.Binding
			}
			phase := spec.DeletePhase
			if late[c.Ref()] || c.Action == plan.Delete && spec.DeleteLate && s.Binding != nil && staysUnder(c, s.Binding, takenDown) {
				phase = spec.LateDeletePhase()
			}
			byPhase[phase] = append(byPhase[phase], s)
		}
		phase := spec.WritePhase
		if early := loosened(c); early != nil {
			if early.Change.After.(plan.ItemObject).Settings.Equal(c.After.(plan.ItemObject).Settings) {
				phase = kind.LoosenPhase // the update only loosens: written early, once
			} else {
				byPhase[kind.LoosenPhase] = append(byPhase[kind.LoosenPhase], *early)
			}
		}
		if c.Action != plan.Delete {
			s := Step{Vhost: c.Vhost, Name: c.Name, Change: c}
			if b, ok := c.After.(plan.BindingObject); ok {
				s.Binding = b.Binding
			}
			byPhase[phase] = append(byPhase[phase], s)
		}
	}
	binds := byPhase[kind.Binding.WritePhase()]
	// Bindings a replace took down come back once both ends exist again.
	seen := map[string]bool{}
	for _, s := range binds {
		if s.Binding != nil { // another kind may share the bindings' phase
			seen[s.Vhost+"\x00"+s.Binding.Key()] = true
		}
	}
	for i := range p.Changes {
		c := &p.Changes[i]
		if c.Action != plan.Replace {
			continue
		}
		for _, b := range c.Bindings {
			k := c.Vhost + "\x00" + b.Key()
			source, dest := plan.BindingEnds(c.Vhost, b)
			if seen[k] || gone[source] || gone[dest] {
				continue
			}
			seen[k] = true
			binds = append(binds, Step{Vhost: c.Vhost, Name: plan.BindingName(b), Change: c, Binding: b, Restore: true})
		}
	}
	byPhase[kind.Binding.WritePhase()] = binds
	var phases [][]Step
	for _, ph := range byPhase {
		if len(ph) > 0 {
			phases = append(phases, ph)
		}
	}
	return phases
}

// loosened is the early step of update c (plan.Loosened), nil when it
// loosens nothing.
func loosened(c *plan.Change) *Step {
	it := plan.Loosened(c)
	if it == nil {
		return nil
	}
	early := *c
	early.After = plan.ItemObject{Item: it}
	early.Print = plan.ItemPrint(it)
	return &Step{Vhost: c.Vhost, Name: c.Name, Change: &early, Loosen: true}
}

// settingsText is an item's settings as "k: v, …", in key order.
func settingsText(o plan.Object) string {
	it, ok := o.(plan.ItemObject)
	if !ok || it.Item == nil {
		return ""
	}
	var parts []string
	for _, k := range it.Settings.Keys() {
		parts = append(parts, fmt.Sprintf("%s: %v", k, it.Settings[k]))
	}
	if len(parts) == 0 {
		return "none"
	}
	return strings.Join(parts, ", ")
}

// lateDeletes are the objects of p deleted for good after every write
// (kind.Spec.DeleteLate) that others hang on: those of a kind without
// ends (exchanges, queues, policies) whose vhost stays, but for the queues of a
// vhost whose max-queues has no room for them beside the queues the
// apply declares (plan.Plan.QueuesDeletedFirst). takenDown is every
// object deleted or replaced.
func lateDeletes(p *plan.Plan, takenDown map[plan.ObjectRef]bool) map[plan.ObjectRef]bool {
	late := map[plan.ObjectRef]bool{}
	for i := range p.Changes {
		c := &p.Changes[i]
		spec, ok := kind.Of(c.Kind)
		if !ok || c.Action != plan.Delete || !spec.DeleteLate || spec.NamedByEnds || !staysUnder(c, nil, takenDown) {
			continue
		}
		if spec.HoldsMessages && slices.Contains(p.QueuesDeletedFirst, c.Vhost) {
			continue
		}
		late[c.Ref()] = true
	}
	return late
}

// staysUnder reports whether what change c's object hangs on stays through
// the apply: its vhost, and a binding's two ends (b), neither deleted nor
// replaced before the writes. Then its delete can wait until every write
// is made; otherwise it goes first, before what it hangs on
// (kind.Spec.DeleteLate).
func staysUnder(c *plan.Change, b *topology.Binding, takenDown map[plan.ObjectRef]bool) bool {
	if takenDown[plan.ObjectRef{Kind: kind.Vhost, Vhost: c.Vhost, Name: c.Vhost}] {
		return false
	}
	if b == nil {
		return true
	}
	source, dest := plan.BindingEnds(c.Vhost, b)
	return !takenDown[source] && !takenDown[dest]
}
