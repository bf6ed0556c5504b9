// Package preflight asks the broker itself whether it takes what a plan
// declares, before apply changes anything: it declares each distinct shape
// of the plan's writes in a throwaway vhost, then deletes that vhost.
//
// Shapes (this file) are pure: which of a plan's objects the broker could
// refuse, grouped so that objects the broker validates alike are tried
// once. Run (run.go) tries them on a broker.
package preflight

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/mqctl/mqctl/pkg/kind"
	"github.com/mqctl/mqctl/pkg/plan"
	"github.com/mqctl/mqctl/pkg/topology"
)

// Object is one object of the plan that a trial stands for.
type Object = plan.ObjectAt

// Trial is one distinct shape the plan writes, and the objects that share
// it: the broker validates them alike, so declaring one tells for all.
type Trial struct {
	Kind kind.Kind
	// Key is the shape, canonical: equal keys, one trial.
	Key string
	// Objects are the plan's objects of this shape, in plan order.
	Objects []Object

	// Exactly one of these is set: what is declared in the throwaway
	// vhost (names are the first object's; Run renames them). Object is
	// the object of a kind with a type of its own (topology.Typed: an
	// exchange, a queue, a policy or operator policy, which Kind tells
	// apart).
	Object topology.Named
	Vhost  *plan.VhostMeta
	Item   *topology.Item
	// Binding, with the shape of its source exchange (nil for the
	// broker's own amq.* exchanges, which every vhost has).
	Binding *topology.Binding
	Source  *topology.Exchange
	// DestQueueType is the type of the queue Binding leads to, where the
	// source's type may judge it (judgesDestination) and the plan or the
	// broker says what it is: the trial binds a queue of that type. ""
	// otherwise (a classic queue stands for the destination).
	DestQueueType string
}

// Shapes returns the trials of p: one per distinct shape of the objects p
// creates, replaces or updates that the broker could refuse, leaving out
// the shapes held holds already (the broker took them once: an object of
// the same shape is taken again). held is the state read for p (nil: none
// known). untried are the plan's writes of kinds a throwaway vhost cannot
// try without touching the real broker (users, permissions, shovels,
// federation), which the version table alone judges.
func Shapes(p *plan.Plan, held *topology.Topology) (trials []*Trial, untried []Object) {
	byKey := map[string]*Trial{}
	add := func(t *Trial, o Object) {
		if prev, ok := byKey[t.Key]; ok {
			prev.Objects = append(prev.Objects, o)
			return
		}
		t.Objects = []Object{o}
		byKey[t.Key] = t
		trials = append(trials, t)
	}
	ends := endsOf(p, held)
	for i := range p.Changes {
		c := &p.Changes[i]
		if c.Action == plan.Delete || c.After == nil {
			continue
		}
		o := Object{ObjectRef: c.Ref(), Pos: c.Pos}
		tr, ok := tryerOf(c.Kind)
		if !ok {
			untried = append(untried, o)
			continue
		}
		if t, ok := tr.trial(c, ends); ok {
			add(t, o)
		}
	}
	if len(trials) == 0 {
		return trials, untried
	}
	have := heldShapes(held, trials)
	return slices.DeleteFunc(trials, func(t *Trial) bool { return have[t.Key] }), untried
}

// heldShapes returns which of the trials' shapes the objects held holds.
// Only objects that could share a trial's shape are keyed (of its kind,
// with as many arguments): a plan that adds one queue to a vhost of
// 10,000 objects keys a few of them, not all (12-25 ms on that vhost).
func heldShapes(held *topology.Topology, trials []*Trial) map[string]bool {
	out := map[string]bool{}
	if held == nil {
		return out
	}
	// The kinds and argument counts the trials have.
	type shape struct {
		kind kind.Kind
		size int
	}
	wanted := map[shape]bool{}
	kinds := map[kind.Kind]bool{}
	for _, t := range trials {
		tr, _ := tryerOf(t.Kind)
		wanted[shape{t.Kind, tr.size(t)}] = true
		kinds[t.Kind] = true
	}
	for _, v := range held.Vhosts {
		for _, tr := range tryers {
			if tr.held != nil && kinds[tr.kind] {
				tr.held(v, func(size int) bool { return wanted[shape{tr.kind, size}] }, out)
			}
		}
	}
	return out
}

// planEnds are what a binding of a plan can start from and lead to.
type planEnds struct {
	// exchanges maps (vhost, name) to each exchange a binding can start
	// from: as the plan declares it, else as the broker holds it.
	exchanges map[[2]string]*topology.Exchange
	// queueTypes maps (vhost, name) to the type of each queue, alike.
	queueTypes map[[2]string]string
}

// endsOf returns the ends of p's bindings, from p and from held (nil:
// nothing known).
func endsOf(p *plan.Plan, held *topology.Topology) *planEnds {
	e := &planEnds{exchanges: map[[2]string]*topology.Exchange{}, queueTypes: map[[2]string]string{}}
	// Only the vhosts a binding is written in need theirs: a plan adding
	// one queue to a vhost of 5,000 need not map them all.
	bound := map[string]bool{}
	for _, c := range p.Changes {
		if c.Kind == kind.Binding && c.Action != plan.Delete && c.After != nil {
			bound[c.Vhost] = true
		}
	}
	if len(bound) == 0 {
		return e
	}
	if held != nil {
		for vn, v := range held.Vhosts {
			if !bound[vn] {
				continue
			}
			for name, x := range v.Exchanges {
				e.exchanges[[2]string{vn, name}] = x
			}
			for name, q := range v.Queues {
				e.queueTypes[[2]string{vn, name}] = q.TypeOrClassic()
			}
		}
	}
	for _, c := range p.Changes {
		if x, ok := plan.As[topology.Exchange](c.After); ok {
			e.exchanges[[2]string{c.Vhost, c.Name}] = x
		}
		if q, ok := plan.As[topology.Queue](c.After); ok {
			e.queueTypes[[2]string{c.Vhost, c.Name}] = q.TypeOrClassic()
		}
	}
	return e
}

// judgesDestination reports whether an exchange of type typ may refuse a
// binding for what its destination is: not a core routing type, which
// takes any queue; a plugin's or x-local-random, which takes classic
// queues only (rabbit_exchange_type_local_random:validate_binding/2).
func judgesDestination(typ string) bool {
	switch typ {
	case "direct", "fanout", "topic", "headers":
		return false
	}
	return true
}

// nameArgs are the arguments and policy keys whose value names another
// object (an exchange, a routing key, an upstream). RabbitMQ checks only
// that they are strings (rabbit_amqqueue check_dlxname_arg/2 and
// check_dlxrk_arg/2, which also needs x-dead-letter-exchange present;
// rabbit_exchange's alternate-exchange), so objects that differ only in
// them share a shape: the seed's 38 queues, each dead-lettering with its
// own name as key, are one trial.
var nameArgs = map[string]bool{
	"x-dead-letter-exchange": true, "x-dead-letter-routing-key": true, "alternate-exchange": true,
	"dead-letter-exchange": true, "dead-letter-routing-key": true,
	"federation-upstream": true, "federation-upstream-set": true,
}

// shapeArgs is args without skip (when it is not "") and with the value
// of every name argument that is a string replaced by "": a string of any
// content is taken alike.
func shapeArgs(args topology.Args, skip string) string {
	if len(args) == 0 {
		return "{}"
	}
	out := make(topology.Args, len(args))
	for k, v := range args {
		if k == skip && skip != "" {
			continue
		}
		if _, isString := v.(string); isString && nameArgs[k] {
			out[k] = ""
			continue
		}
		out[k] = v
	}
	return out.Canonical()
}

// exchangeKey is an exchange's shape, as its tryer makes it
// (definedTryer): a binding's trial is on the shape of its source.
func exchangeKey(x *topology.Exchange) string {
	return shapeKey("exchange", topology.ExchangeDefinition, x)
}

// shapeKey is o's shape as def describes it, after prefix (its kind): its
// settings, then its arguments (shapeArgs) without def.Skip, compared as
// a setting.
func shapeKey[T any](prefix string, def topology.Definition[T], o T) string {
	var b strings.Builder
	b.WriteString(prefix)
	for _, s := range def.Settings {
		b.WriteByte(0)
		fmt.Fprint(&b, s.Value(o))
	}
	b.WriteByte(0)
	b.WriteString(shapeArgs(def.Args(o), def.Skip))
	return b.String()
}

// bindingKey is a binding's shape on its source src (nil: an amq.*
// exchange, known by name). The key is kept as it is on exchange types
// that may validate it, and reduced to its form on the core types: a
// direct, fanout or headers exchange takes any key (up to AMQP's 255
// bytes), and a topic exchange checks only its words' wildcards (4.3.5
// refuses more than two '#'), so "order.created" and "invoice.paid" are
// both "w.w".
//
// qtype is the destination queue's type where the source's type may judge
// it (judgesDestination), "" otherwise.
func bindingKey(b *topology.Binding, src *topology.Exchange, qtype string) string {
	srcKey, typ := "builtin\x00"+b.Source, ""
	if src != nil {
		srcKey, typ = exchangeKey(src), src.Type
	} else if x, ok := topology.BuiltinExchange(b.Source); ok {
		typ = x.Type
	}
	return bindingKeyOn(b, srcKey, typ, qtype)
}

// bindingKeyOn is bindingKey on a source of key srcKey and type typ.
func bindingKeyOn(b *topology.Binding, srcKey, typ, qtype string) string {
	return fmt.Sprintf("binding\x00%s\x00%s\x00%s\x00%s\x00%s", srcKey, b.DestinationType, qtype, keyForm(typ, b.RoutingKey), b.Arguments.Canonical())
}

func keyForm(exchangeType, key string) string {
	if len(key) > 255 {
		return key
	}
	switch exchangeType {
	case "direct", "fanout", "headers":
		return ""
	case "topic":
		words := strings.Split(key, ".")
		for i, w := range words {
			if w != "#" && w != "*" && w != "" {
				words[i] = "w"
			}
		}
		return strings.Join(words, ".")
	}
	return key
}

// sortObjects orders the objects of trials refused together, each once, in
// file order (objects without a place last, by name).
func sortObjects(objs []Object) {
	sort.SliceStable(objs, func(i, j int) bool {
		a, b := objs[i].Pos, objs[j].Pos
		if a.File != b.File {
			return a.File < b.File
		}
		if a.Line != b.Line {
			return a.Line < b.Line
		}
		return a.Col < b.Col
	})
}
