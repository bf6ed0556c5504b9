package plan

import (
	pj "github.com/mqctl/mqctl/pkg/planjson"
	"github.com/mqctl/mqctl/pkg/topology"
)

// A policy or an operator policy in a plan (every kind of policy,
// kind.PolicyKinds): its Object and how a vhost holds each kind of policy
// (topology.Vhost.PoliciesOf).

// PolicyObject is a policy or an operator policy in a change.
type PolicyObject struct{ *topology.Policy }

// policyObjects is what the plan knows of every kind of policy
// (objectType).
var policyObjects = objectType{
	object: PolicyObject{},
	in: func(k Kind) vhostKind {
		return inMap(func(v *topology.Vhost) map[string]*topology.Policy { return v.PoliciesOf(k) },
			func(o PolicyObject) *topology.Policy { return o.Policy }, func(p *topology.Policy) Object { return PolicyObject{p} }, PolicyPrint)
	},
	saved: savedAs("policy", func(o PolicyObject) *topology.Policy { return o.Policy }, func(p *topology.Policy) Object { return PolicyObject{p} }),
	fromJSON: func(o *pj.Object) Object {
		p := o.Policy
		if p == nil {
			return nil
		}
		return PolicyObject{&topology.Policy{Name: p.Name, Pattern: p.Pattern, ApplyTo: p.ApplyTo, Priority: p.Priority, Definition: p.Definition}}
	},
}

func (o PolicyObject) carries(k Kind) bool { return k.Policy() }

func (o PolicyObject) fieldsFrom(k Kind, have Object) []FieldChange {
	if h, ok := have.(PolicyObject); ok {
		return definitionFields(topology.PolicyDefinition, h.Policy, o.Policy, !k.InPlace())
	}
	return nil
}

func (o PolicyObject) headline() string { return definedHeadline(topology.PolicyDefinition, o.Policy) }

func (o PolicyObject) describe() []string {
	return describeDefined(topology.PolicyDefinition, o.Policy)
}

func (o PolicyObject) json() *pj.Object {
	p := o.Policy
	return &pj.Object{Policy: &pj.Policy{Name: p.Name, Pattern: p.Pattern, ApplyTo: p.ApplyTo, Priority: p.Priority, Definition: p.Definition}}
}

func (o PolicyObject) normalize() { o.Definition = o.Definition.Normalized() }

func (o PolicyObject) pos() topology.Pos { return o.Pos }
