package flow

import (
	"fmt"
	"slices"
	"sort"

	"github.com/mqctl/mqctl/pkg/kind"
	"github.com/mqctl/mqctl/pkg/loader"
	"github.com/mqctl/mqctl/pkg/rmqversion"
	"github.com/mqctl/mqctl/pkg/route"
	"github.com/mqctl/mqctl/pkg/topology"
)

// noExchange is the start of a side that routes nothing: the exchange is
// missing or not publishable there, or the queue has no dead-letter
// exchange. No exchange is named so: RabbitMQ names hold no NUL.
const noExchange = "\x00"

// side is one vhost as it is on one side of the change, with the indexes
// flow needs beside the simulator's.
type side struct {
	v   *topology.Vhost // never nil
	sim *route.Simulator
	// from holds, per source exchange, the bindings the simulator routes
	// by: their destination is declared. Sorted by CompareBindings.
	from map[string][]*topology.Binding
	ex   map[string]exchangeInfo // every exchange the simulator knows
	// bound are the queues some exchange other than the default binds,
	// made when first asked for (see isBound).
	bound map[string]bool
	// byName are the default exchange's bindings, one a queue (see
	// defaultBindings), made when first asked for.
	byName []*topology.Binding
	// targets remembers targetsFrom.
	targets map[string]*startTargets
	// byKey remembers keyedBindings, criteria criteriaOf.
	byKey    map[string]map[string][]string
	criteria map[string][]string
	// refusing are the queues that refuse every message, each with why
	// (refuses), listed when first asked for; nil before. Only those:
	// the arrival of every queue, kept for each of 25,000 queues on
	// both sides, held 7.5 MB of a 50,002-object plan.
	refusing map[string]string
	// federation holds, per upstream, the exchanges and queues that
	// federate from it (federatedFrom), once asked.
	federation map[string][]string
	// env are the values the files took from the environment
	// (Options.Env), by the queue a text is about (envFor): a text shows
	// what the file wrote in their place (valueText).
	env *topology.EnvScopes
	// vhost is the vhost's name.
	vhost string
}

// envFor are the values from the environment a text about queue q hides
// (topology.EnvScopes.For): not a value q's file wrote itself for the
// same field.
func (s *side) envFor(q string) topology.EnvValues {
	if s.env == nil {
		return nil
	}
	return s.env.For(string(kind.Queue), s.vhost, q)
}

// valueText is text, the words for value v of queue argument arg ("99
// messages", "1s"), or, where v is a value the files took from the
// environment for that field, those words with what the file wrote in its
// place ("${N} messages", "${TTL} ms"; unit after it): as the plan's field
// changes hide it, a flow must not tell it.
func (s *side) valueText(q, arg string, v any, text, unit string) string {
	if written, ok := s.envFor(q).WrittenAs(arg, fmt.Sprint(topology.Normalize(v))); ok {
		return written + unit
	}
	return text
}

// written is what the files wrote for v, queue argument arg, where it is a
// value they took from the environment ("${TTL}"), "" otherwise.
func (s *side) written(q, arg string, v any) string {
	return s.valueText(q, arg, v, "", "")
}

// duration is ms, queue q's argument arg, as words ("1s", "${TTL} ms").
func (s *side) duration(q, arg string, ms int64) string {
	return s.valueText(q, arg, ms, loader.FormatDuration(ms), " ms")
}

// exchangeInfo is what routing through an exchange depends on besides its
// bindings.
type exchangeInfo struct {
	typ      string // routing type (route.Simulator.RoutingType)
	declared string // declared type, for causes
	ae       string // effective alternate exchange, when hasAE
	hasAE    bool
	internal bool
}

// newSide indexes vhost v (nil: an empty vhost) for version ver.
func newSide(v *topology.Vhost, name string, ver rmqversion.Version) *side {
	if v == nil {
		v = topology.NewVhost(name)
	}
	s := &side{v: v, sim: route.NewWith(v, route.Options{Version: ver}), from: map[string][]*topology.Binding{}, ex: map[string]exchangeInfo{}, targets: map[string]*startTargets{},
		byKey: map[string]map[string][]string{}, criteria: map[string][]string{}}
	names := append(topology.BuiltinExchangeNames(), mapKeys(v.Exchanges)...)
	for _, n := range names {
		x := s.sim.Exchange(n)
		if x == nil {
			continue
		}
		ae, hasAE := s.sim.ExchangeArgs(n).String("alternate-exchange")
		s.ex[n] = exchangeInfo{typ: s.sim.RoutingType(n), declared: x.Type, ae: ae, hasAE: hasAE, internal: x.Internal}
	}
	for _, b := range v.Bindings {
		if b == nil || b.Source == "" || !s.exists(b.Source) || !s.destExists(b) {
			continue
		}
		s.from[b.Source] = append(s.from[b.Source], b)
	}
	for _, bs := range s.from {
		if !slices.IsSortedFunc(bs, topology.CompareBindings) {
			slices.SortFunc(bs, topology.CompareBindings)
		}
	}
	return s
}

// mapKeys returns the keys of m, in no order.
func mapKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	return out
}

// exists reports whether exchange x is declared (or built in); false for
// the default exchange.
func (s *side) exists(x string) bool {
	_, ok := s.ex[x]
	return ok
}

// isBound reports whether some exchange other than the default binds
// queue q.
func (s *side) isBound(q string) bool {
	if s.bound == nil {
		s.bound = map[string]bool{}
		for _, bs := range s.from {
			for _, b := range bs {
				if b.DestinationType == topology.DestQueue {
					s.bound[b.Destination] = true
				}
			}
		}
	}
	return s.bound[q]
}

// hasQueue reports whether queue q is declared.
func (s *side) hasQueue(q string) bool { return s.v.Queues[q] != nil }

// destExists reports whether the destination of b is declared.
func (s *side) destExists(b *topology.Binding) bool {
	if b.DestinationType == topology.DestExchange {
		return s.exists(b.Destination)
	}
	return b.DestinationType == topology.DestQueue && s.hasQueue(b.Destination)
}

// publishable reports whether a client can publish to exchange x: the
// default exchange, or a declared exchange that is not internal.
func (s *side) publishable(x string) bool {
	if x == "" {
		return true
	}
	info, ok := s.ex[x]
	return ok && !info.internal
}

// kind returns the Class kind of exchange x: how it tells messages apart.
func (s *side) kind(x string) string {
	if x == "" {
		return ClassDefault
	}
	switch t := s.ex[x].typ; t {
	case ClassTopic, ClassDirect, ClassFanout, ClassHeaders:
		return t
	}
	return ClassOther
}

// bindings returns the bindings exchange x routes by; for the default
// exchange, one a queue (see defaultBindings).
func (s *side) bindings(x string) []*topology.Binding {
	if x == "" {
		return s.defaultBindings()
	}
	return s.from[x]
}

// defaultBindings are the default exchange's implicit bindings: one to
// every queue, with the queue's name as key, sorted.
func (s *side) defaultBindings() []*topology.Binding {
	if s.byName == nil {
		names := make([]string, 0, len(s.v.Queues))
		for n, q := range s.v.Queues {
			if q != nil {
				names = append(names, n)
			}
		}
		sort.Strings(names)
		s.byName = make([]*topology.Binding, len(names))
		for i, n := range names {
			s.byName[i] = &topology.Binding{Destination: n, DestinationType: topology.DestQueue, RoutingKey: n}
		}
	}
	return s.byName
}

// closure returns the exchanges a message published to (or dead-lettered
// into) start can pass through: start, and every exchange reached from
// one of them by an exchange-to-exchange binding or as its alternate
// exchange, in the order reached; through exchanges of a type the
// simulator does not simulate too, since what their bindings lead to is
// where they may route (side.reached). Empty for
// noExchange and an undeclared exchange; just the default exchange for
// "".
func (s *side) closure(start string) []string {
	if start == "" {
		return []string{""}
	}
	return s.reach([]string{start}, true)
}

// reach returns the declared exchanges of starts and every exchange
// reached from them by exchange-to-exchange bindings and alternate
// exchanges, in the order reached; through exchanges of types the
// simulator does not simulate only with plugins (their plugin routes
// somewhere among their bindings).
func (s *side) reach(starts []string, plugins bool) []string {
	seen := map[string]bool{}
	var out []string
	next := func(y string) {
		if !seen[y] && s.exists(y) {
			seen[y] = true
			out = append(out, y)
		}
	}
	for _, x := range starts {
		next(x)
	}
	for i := 0; i < len(out); i++ {
		info := s.ex[out[i]]
		if info.typ == "" && !plugins {
			continue
		}
		for _, b := range s.from[out[i]] {
			if b.DestinationType == topology.DestExchange {
				next(b.Destination)
			}
		}
		if info.hasAE {
			next(info.ae)
		}
	}
	return out
}

// refuses reports whether queue q refuses every message published to it
// (route.Simulator.OnArrival: a classic queue with a length limit of 0
// and overflow reject-publish or reject-publish-dlx; the publisher gets a
// basic.nack, and without confirms the message is gone), and why, as a
// clause.
func (s *side) refuses(q string) (bool, string) {
	why, ok := s.refusers()[q]
	return ok, why
}

// refusers lists, once, the queues of s that refuse every message, with
// why (s.refusing). A queue s does not declare refuses nothing
// (route.Simulator.OnArrival).
func (s *side) refusers() map[string]string {
	if s.refusing == nil {
		s.refusing = map[string]string{}
		for q := range s.v.Queues {
			if a := s.sim.OnArrival(q, route.Message{}); a.Refused {
				s.refusing[q] = a.Why
			}
		}
	}
	return s.refusing
}

// anyRefuses reports whether a queue of s refuses every message. Most
// vhosts have none, and then a route's queues need no look each: a
// dead-letter route through a headers exchange that binds every queue
// reaches 12,500 queues at 50,002 objects, and looking each up, route by
// route, cost a plan that replaces them 12 s.
func (s *side) anyRefuses() bool { return len(s.refusers()) > 0 }

// refusesNow reports whether queue q, declared on both sides, refuses
// every message on one side and not on the other.
func (c *vhostCompare) refusesNow(q string) bool {
	if !c.b.hasQueue(q) || !c.a.hasQueue(q) {
		return false
	}
	rb, _ := c.b.refuses(q)
	ra, _ := c.a.refuses(q)
	return rb != ra
}
