// Package apply carries out a plan against a broker: ordered, parallel
// within a phase, checking at the moment of every queue deletion that no
// message is lost, and reporting exactly what was done, what failed and
// what remains.
package apply

import (
	"fmt"

	"github.com/mqctl/mqctl/pkg/plan"
	"github.com/mqctl/mqctl/pkg/topology"
)

// Op is one broker operation.
type Op string

const (
	OpCreateVhost     Op = "create vhost"
	OpUpdateVhost     Op = "update vhost"
	OpDeletePolicy    Op = "delete policy"
	OpDeleteOpPolicy  Op = "delete operator policy"
	OpUnbind          Op = "delete binding"
	OpDeleteQueue     Op = "delete queue"
	OpDeleteExchange  Op = "delete exchange"
	OpDeleteVhost     Op = "delete vhost"
	OpDeclareExchange Op = "declare exchange"
	OpDeclareQueue    Op = "declare queue"
	OpBind            Op = "create binding"
	OpPutPolicy       Op = "put policy"
	OpPutOpPolicy     Op = "put operator policy"
)

// Step is one operation of an apply.
type Step struct {
	Op    Op
	Vhost string
	Name  string
	// Change is the plan change this step carries out (for a restored
	// binding: the replace that took it down).
	Change *plan.Change
	// Binding is set for OpBind and OpUnbind.
	Binding *topology.Binding
	// Restore marks a binding put back after its end was replaced.
	Restore bool
}

func (s Step) String() string {
	switch s.Op {
	case OpBind, OpUnbind:
		what := "create"
		if s.Op == OpUnbind {
			what = "delete"
		} else if s.Restore {
			what = "restore"
		}
		return fmt.Sprintf("%s binding %s in vhost %q", what, plan.BindingName(s.Binding), s.Vhost)
	case OpCreateVhost, OpUpdateVhost, OpDeleteVhost:
		return fmt.Sprintf("%s %q", s.Op, s.Name)
	}
	return fmt.Sprintf("%s %q in vhost %q", s.Op, s.Name, s.Vhost)
}

// Order turns a plan into phases of steps. Steps within a phase do not
// depend on each other; each phase needs the ones before it:
//
//	vhosts created/updated
//	deletes, in reverse: policies, bindings, queues, exchanges, vhosts
//	  (a replace's delete half runs here)
//	creates: exchanges, queues, bindings (with those a replace took down), policies
func Order(p *plan.Plan) [][]Step {
	var (
		vhosts, delPolicies, unbinds, delQueues, delExchanges, delVhosts []Step
		declExchanges, declQueues, binds, putPolicies                    []Step
	)
	// Objects deleted for good (not replaced): a binding on one of them is
	// gone with it and cannot be restored.
	goneExchanges := map[[2]string]bool{}
	goneQueues := map[[2]string]bool{}
	for i := range p.Changes {
		c := &p.Changes[i]
		s := Step{Vhost: c.Vhost, Name: c.Name, Change: c}
		switch c.Kind {
		case plan.KindVhost:
			switch c.Action {
			case plan.Create:
				s.Op = OpCreateVhost
				vhosts = append(vhosts, s)
			case plan.Update:
				s.Op = OpUpdateVhost
				vhosts = append(vhosts, s)
			case plan.Delete:
				s.Op = OpDeleteVhost
				delVhosts = append(delVhosts, s)
			}
		case plan.KindExchange:
			if c.Action == plan.Delete || c.Action == plan.Replace {
				s.Op = OpDeleteExchange
				delExchanges = append(delExchanges, s)
			}
			if c.Action == plan.Delete {
				goneExchanges[[2]string{c.Vhost, c.Name}] = true
			}
			if c.Action == plan.Create || c.Action == plan.Replace {
				s.Op = OpDeclareExchange
				declExchanges = append(declExchanges, s)
			}
		case plan.KindQueue:
			if c.Action == plan.Delete || c.Action == plan.Replace {
				s.Op = OpDeleteQueue
				delQueues = append(delQueues, s)
			}
			if c.Action == plan.Delete {
				goneQueues[[2]string{c.Vhost, c.Name}] = true
			}
			if c.Action == plan.Create || c.Action == plan.Replace {
				s.Op = OpDeclareQueue
				declQueues = append(declQueues, s)
			}
		case plan.KindBinding:
			if c.Action == plan.Delete {
				s.Op, s.Binding = OpUnbind, c.Before.Binding
				unbinds = append(unbinds, s)
			} else {
				s.Op, s.Binding = OpBind, c.After.Binding
				binds = append(binds, s)
			}
		case plan.KindPolicy, plan.KindOperatorPolicy:
			op, del := OpPutPolicy, OpDeletePolicy
			if c.Kind == plan.KindOperatorPolicy {
				op, del = OpPutOpPolicy, OpDeleteOpPolicy
			}
			if c.Action == plan.Delete {
				s.Op = del
				delPolicies = append(delPolicies, s)
			} else {
				s.Op = op
				putPolicies = append(putPolicies, s)
			}
		}
	}
	// Bindings a replace took down come back once both ends exist again.
	seen := map[string]bool{}
	for _, s := range binds {
		seen[s.Vhost+"\x00"+s.Binding.Key()] = true
	}
	for i := range p.Changes {
		c := &p.Changes[i]
		if c.Action != plan.Replace {
			continue
		}
		for _, b := range c.Bindings {
			k := c.Vhost + "\x00" + b.Key()
			dest := [2]string{c.Vhost, b.Destination}
			if seen[k] || goneExchanges[[2]string{c.Vhost, b.Source}] ||
				(b.DestinationType == topology.DestExchange && goneExchanges[dest]) ||
				(b.DestinationType == topology.DestQueue && goneQueues[dest]) {
				continue
			}
			seen[k] = true
			binds = append(binds, Step{Op: OpBind, Vhost: c.Vhost, Name: plan.BindingName(b), Change: c, Binding: b, Restore: true})
		}
	}
	var phases [][]Step
	for _, ph := range [][]Step{vhosts, delPolicies, unbinds, delQueues, delExchanges, delVhosts, declExchanges, declQueues, binds, putPolicies} {
		if len(ph) > 0 {
			phases = append(phases, ph)
		}
	}
	return phases
}
