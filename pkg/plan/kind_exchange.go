package plan

import (
	"github.com/mqctl/mqctl/pkg/kind"
	pj "github.com/mqctl/mqctl/pkg/planjson"
	"github.com/mqctl/mqctl/pkg/topology"
)

// An exchange in a plan: its Object and how a vhost holds exchanges.

// ExchangeObject is an exchange in a change.
type ExchangeObject struct{ *topology.Exchange }

// exchangeObjects is what the plan knows of exchanges (objectType).
var exchangeObjects = objectType{
	object: ExchangeObject{},
	in: func(Kind) vhostKind {
		return inMap(func(v *topology.Vhost) map[string]*topology.Exchange { return v.Exchanges },
			func(o ExchangeObject) *topology.Exchange { return o.Exchange }, func(e *topology.Exchange) Object { return ExchangeObject{e} }, ExchangePrint)
	},
	saved: savedAs("exchange", func(o ExchangeObject) *topology.Exchange { return o.Exchange }, func(x *topology.Exchange) Object { return ExchangeObject{x} }),
	fromJSON: func(o *pj.Object) Object {
		x := o.Exchange
		if x == nil {
			return nil
		}
		return ExchangeObject{&topology.Exchange{Name: x.Name, Type: x.Type, Durable: x.Durable, AutoDelete: x.AutoDelete, Internal: x.Internal, Arguments: x.Arguments}}
	},
}

func (o ExchangeObject) carries(k Kind) bool { return k == kind.Exchange }

func (o ExchangeObject) fieldsFrom(k Kind, have Object) []FieldChange {
	if h, ok := have.(ExchangeObject); ok {
		return definitionFields(topology.ExchangeDefinition, h.Exchange, o.Exchange, !k.InPlace())
	}
	return nil
}

func (o ExchangeObject) headline() string {
	return definedHeadline(topology.ExchangeDefinition, o.Exchange)
}

func (o ExchangeObject) describe() []string {
	return describeDefined(topology.ExchangeDefinition, o.Exchange)
}

func (o ExchangeObject) json() *pj.Object {
	x := o.Exchange
	return &pj.Object{Exchange: &pj.Exchange{Name: x.Name, Type: x.Type, Durable: x.Durable, AutoDelete: x.AutoDelete, Internal: x.Internal, Arguments: x.Arguments}}
}

func (o ExchangeObject) normalize() { o.Arguments = o.Arguments.Normalized() }

func (o ExchangeObject) pos() topology.Pos { return o.Pos }
