package flow

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"

	"github.com/mqctl/mqctl/pkg/route"
	"github.com/mqctl/mqctl/pkg/topology"
)

// vocab is what random messages for one exchange are made of.
type vocab struct {
	words   []string         // words of the patterns and keys
	keys    []string         // patterns and keys to instantiate
	headers map[string][]any // header names and the values criteria ask for
}

// vocabulary collects the words, keys and headers of the closures of
// exchanges xs on both sides.
func (p *propertyCase) vocabulary(xs ...string) *vocab {
	v := &vocab{words: []string{"a", "b", "zz", ""}, headers: map[string][]any{}}
	for _, s := range []struct {
		sim *route.Simulator
		v   *topology.Vhost
	}{{p.b, p.vb}, {p.a, p.va}} {
		for _, x := range xs {
			for _, e := range oracleExchanges(s.sim, s.v, x) {
				v.add(s.v, e)
			}
		}
	}
	return v
}

// add collects the keys and criteria of exchange x's bindings (for the
// default exchange, the queue names).
func (v *vocab) add(vh *topology.Vhost, x string) {
	if x == "" {
		v.keys = append(v.keys, vh.QueueNames()...)
		return
	}
	for _, b := range vh.Bindings {
		if b.Source != x {
			continue
		}
		v.keys = append(v.keys, b.RoutingKey)
		v.words = append(v.words, splitKey(b.RoutingKey)...)
		for k, val := range b.Arguments {
			if k != "x-match" {
				v.headers[k] = append(v.headers[k], val)
			}
		}
	}
}

// otherValues are header values no generated criterion asks for, or
// that equal one only by value (int32, float32, 1.0), or void.
var otherValues = []any{int32(1), 1.0, "zz", nil, float32(1.5), int64(2), "v1", true}

// message returns a random message: a key made of the vocabulary's words
// (often an instance of one of its patterns), and headers.
func (v *vocab) message(r *rand.Rand) route.Message {
	var m route.Message
	switch n := r.IntN(100); {
	case n < 12:
	case n < 45 && len(v.keys) > 0:
		m.RoutingKey = v.instance(r, v.keys[r.IntN(len(v.keys))])
	default:
		words := make([]string, 1+r.IntN(4))
		for i := range words {
			words[i] = v.words[r.IntN(len(v.words))]
		}
		m.RoutingKey = strings.Join(words, ".")
	}
	if len(v.headers) == 0 || r.IntN(100) < 30 {
		return m
	}
	m.Headers = map[string]any{}
	for k, vals := range v.headers {
		switch n := r.IntN(100); {
		case n < 40:
		case n < 80:
			m.Headers[k] = vals[r.IntN(len(vals))]
		default:
			m.Headers[k] = otherValues[r.IntN(len(otherValues))]
		}
	}
	return m
}

// instance returns a key pattern matches: * a word, # none to two.
func (v *vocab) instance(r *rand.Rand, pattern string) string {
	var out []string
	for _, w := range splitKey(pattern) {
		switch w {
		case "*":
			out = append(out, v.words[r.IntN(len(v.words))])
		case "#":
			for range r.IntN(3) {
				out = append(out, v.words[r.IntN(len(v.words))])
			}
		default:
			out = append(out, w)
		}
	}
	return strings.Join(out, ".")
}

// cloneVhost returns a deep copy of v.
func cloneVhost(v *topology.Vhost) *topology.Vhost {
	c := topology.NewVhost(v.Name)
	for n, x := range v.Exchanges {
		cx := *x
		cx.Arguments = x.Arguments.Clone()
		c.Exchanges[n] = &cx
	}
	for n, q := range v.Queues {
		cq := *q
		cq.Arguments = q.Arguments.Clone()
		c.Queues[n] = &cq
	}
	for _, b := range v.Bindings {
		cb := *b
		cb.Arguments = b.Arguments.Clone()
		c.Bindings = append(c.Bindings, &cb)
	}
	for _, ps := range [][2]map[string]*topology.Policy{{v.Policies, c.Policies}, {v.OperatorPolicies, c.OperatorPolicies}} {
		for n, p := range ps[0] {
			cp := *p
			cp.Definition = p.Definition.Clone()
			ps[1][n] = &cp
		}
	}
	return c
}

// mutate makes one to three random changes to v and describes them.
func mutate(r *rand.Rand, v *topology.Vhost) []string {
	var out []string
	for range 1 + r.IntN(3) {
		if s := mutateOnce(r, v); s != "" {
			out = append(out, s)
		}
	}
	return out
}

// mutations are the kinds of change mutate makes.
var mutations = []func(*rand.Rand, *topology.Vhost) string{
	removeBinding, addBinding, changeBinding, changeDLRK, changeDLX, deleteQueue,
	deleteExchange, changeType, changeAE, addPolicy, toggleInternal, changeTTL, changeBinding, addBinding,
}

// mutateOnce makes one random change.
func mutateOnce(r *rand.Rand, v *topology.Vhost) string {
	return mutations[r.IntN(len(mutations))](r, v)
}

// pickName returns a random key of m, "" when it has none.
func pickName[V any](r *rand.Rand, m map[string]V) string {
	names := mapKeys(m)
	if len(names) == 0 {
		return ""
	}
	slices.Sort(names)
	return names[r.IntN(len(names))]
}

// randomKey returns a routing key (with wild, a topic pattern).
func randomKey(r *rand.Rand, wild bool) string {
	words := make([]string, r.IntN(4))
	choices := []string{"a", "b", "c", ""}
	if wild {
		choices = append(choices, "*", "#", "*", "#")
	}
	for i := range words {
		words[i] = choices[r.IntN(len(choices))]
	}
	return strings.Join(words, ".")
}

// randomCriteria returns random headers binding arguments.
func randomCriteria(r *rand.Rand) topology.Args {
	args := topology.Args{}
	if m := []string{"", "all", "any", "all-with-x", "any-with-x"}[r.IntN(5)]; m != "" {
		args["x-match"] = m
	}
	for range r.IntN(3) {
		k := []string{"h1", "h2", "x-h", "x-first-death-reason"}[r.IntN(4)]
		args[k] = []any{"v1", "v2", int64(1), 1.5, true, nil, "expired", "rejected"}[r.IntN(8)]
	}
	return args.Normalized()
}

// The mutations: each makes one change of its kind, and describes it
// ("" when it found nothing to change).

func removeBinding(r *rand.Rand, v *topology.Vhost) string {
	if len(v.Bindings) == 0 {
		return ""
	}
	i := r.IntN(len(v.Bindings))
	b := v.Bindings[i]
	v.Bindings = append(v.Bindings[:i:i], v.Bindings[i+1:]...)
	return fmt.Sprintf("remove binding %s->%s %q %v", b.Source, b.Destination, b.RoutingKey, b.Arguments)
}

func addBinding(r *rand.Rand, v *topology.Vhost) string {
	src := pickName(r, v.Exchanges)
	if src == "" || r.IntN(10) == 0 {
		src = topology.BuiltinExchangeNames()[r.IntN(5)]
	}
	b := &topology.Binding{Source: src, Destination: pickName(r, v.Queues), DestinationType: topology.DestQueue}
	if r.IntN(4) == 0 && len(v.Exchanges) > 0 {
		b.Destination, b.DestinationType = pickName(r, v.Exchanges), topology.DestExchange
	}
	switch v.ExchangeType(src) {
	case "headers":
		b.Arguments = randomCriteria(r)
	default:
		b.RoutingKey = randomKey(r, v.ExchangeType(src) == "topic")
	}
	v.Bindings = append(v.Bindings, b)
	return fmt.Sprintf("add binding %s->%s %q %v", b.Source, b.Destination, b.RoutingKey, b.Arguments)
}

func changeBinding(r *rand.Rand, v *topology.Vhost) string {
	if len(v.Bindings) == 0 {
		return ""
	}
	i := r.IntN(len(v.Bindings))
	b := *v.Bindings[i]
	if v.ExchangeType(b.Source) == "headers" {
		b.Arguments = randomCriteria(r)
	} else {
		b.RoutingKey = randomKey(r, v.ExchangeType(b.Source) == "topic")
	}
	v.Bindings[i] = &b
	return fmt.Sprintf("binding %s->%s now %q %v", b.Source, b.Destination, b.RoutingKey, b.Arguments)
}

// setArg sets (or, with val nil and remove, deletes) a queue argument.
func setArg(q *topology.Queue, k string, val any, remove bool) {
	args := q.Arguments.Clone()
	if args == nil {
		args = topology.Args{}
	}
	if remove {
		delete(args, k)
	} else {
		args[k] = val
	}
	q.Arguments = args.Normalized()
}

// randomQueue returns a random queue, nil when there is none.
func randomQueue(r *rand.Rand, v *topology.Vhost) *topology.Queue {
	n := pickName(r, v.Queues)
	if n == "" {
		return nil
	}
	return v.Queues[n]
}

func changeDLRK(r *rand.Rand, v *topology.Vhost) string {
	q := randomQueue(r, v)
	if q == nil || !q.Arguments.Has("x-dead-letter-exchange") {
		return ""
	}
	key := randomKey(r, false)
	if r.IntN(2) == 0 {
		key = pickName(r, v.Queues)
	}
	setArg(q, "x-dead-letter-routing-key", key, r.IntN(3) == 0)
	return fmt.Sprintf("queue %s dlrk %v", q.Name, q.Arguments["x-dead-letter-routing-key"])
}

func changeDLX(r *rand.Rand, v *topology.Vhost) string {
	q := randomQueue(r, v)
	if q == nil {
		return ""
	}
	dlx := []string{pickName(r, v.Exchanges), "", "missing", "amq.topic"}[r.IntN(4)]
	remove := r.IntN(4) == 0
	setArg(q, "x-dead-letter-exchange", dlx, remove)
	if remove {
		setArg(q, "x-dead-letter-routing-key", nil, true)
	}
	return fmt.Sprintf("queue %s dlx %v", q.Name, q.Arguments["x-dead-letter-exchange"])
}

func changeTTL(r *rand.Rand, v *topology.Vhost) string {
	q := randomQueue(r, v)
	if q == nil {
		return ""
	}
	setArg(q, "x-message-ttl", int64(1000), q.Arguments.Has("x-message-ttl"))
	return fmt.Sprintf("queue %s ttl %v", q.Name, q.Arguments["x-message-ttl"])
}

func deleteQueue(r *rand.Rand, v *topology.Vhost) string {
	return deleteNamed(r, v, v.Queues, topology.DestQueue)
}

func deleteExchange(r *rand.Rand, v *topology.Vhost) string {
	return deleteNamed(r, v, v.Exchanges, topology.DestExchange)
}

// deleteNamed deletes a random object of objects (queues or exchanges, as
// kind says), and half the time its bindings too.
func deleteNamed[V any](r *rand.Rand, v *topology.Vhost, objects map[string]V, kind string) string {
	n := pickName(r, objects)
	if n == "" {
		return ""
	}
	delete(objects, n)
	if r.IntN(2) == 0 {
		v.Bindings = withoutBindings(v.Bindings, kind, n)
	}
	return "delete " + kind + " " + n
}

// withoutBindings returns bs without the bindings to (destType, dest)
// and, for an exchange, from it.
func withoutBindings(bs []*topology.Binding, destType, dest string) []*topology.Binding {
	var out []*topology.Binding
	for _, b := range bs {
		if !(b.DestinationType == destType && b.Destination == dest) && !(destType == topology.DestExchange && b.Source == dest) {
			out = append(out, b)
		}
	}
	return out
}

func changeType(r *rand.Rand, v *topology.Vhost) string {
	n := pickName(r, v.Exchanges)
	if n == "" {
		return ""
	}
	x := *v.Exchanges[n]
	x.Type = []string{"direct", "fanout", "topic", "headers"}[r.IntN(4)]
	v.Exchanges[n] = &x
	return fmt.Sprintf("exchange %s type %s", n, x.Type)
}

func changeAE(r *rand.Rand, v *topology.Vhost) string {
	n := pickName(r, v.Exchanges)
	if n == "" {
		return ""
	}
	x := *v.Exchanges[n]
	args := x.Arguments.Clone()
	if args.Has("alternate-exchange") && r.IntN(2) == 0 {
		delete(args, "alternate-exchange")
	} else {
		if args == nil {
			args = topology.Args{}
		}
		args["alternate-exchange"] = []string{pickName(r, v.Exchanges), "missing", "amq.fanout"}[r.IntN(3)]
	}
	x.Arguments = args.Normalized()
	v.Exchanges[n] = &x
	return fmt.Sprintf("exchange %s args %v", n, x.Arguments)
}

func addPolicy(r *rand.Rand, v *topology.Vhost) string {
	def := topology.Args{}
	applyTo := "all"
	switch r.IntN(3) {
	case 0:
		def["alternate-exchange"] = pickName(r, v.Exchanges)
		applyTo = "exchanges"
	case 1:
		def["dead-letter-exchange"] = []string{pickName(r, v.Exchanges), ""}[r.IntN(2)]
	default:
		def["dead-letter-routing-key"] = pickName(r, v.Queues)
	}
	target := pickName(r, v.Queues)
	if applyTo == "exchanges" {
		target = pickName(r, v.Exchanges)
	}
	name := fmt.Sprintf("mut%d", len(v.Policies))
	v.Policies[name] = &topology.Policy{Name: name, Pattern: "^" + target + "$", ApplyTo: applyTo, Priority: 100 + len(v.Policies), Definition: def.Normalized()}
	return fmt.Sprintf("policy %s on %s: %v", name, target, def)
}

func toggleInternal(r *rand.Rand, v *topology.Vhost) string {
	n := pickName(r, v.Exchanges)
	if n == "" {
		return ""
	}
	x := *v.Exchanges[n]
	x.Internal = !x.Internal
	v.Exchanges[n] = &x
	return fmt.Sprintf("exchange %s internal %v", n, x.Internal)
}
