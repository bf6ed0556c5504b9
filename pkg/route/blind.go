package route

import (
	"slices"
	"strings"
	"sync"

	"github.com/mqctl/mqctl/pkg/topology"
)

// A message-blind exchange routes every message alike: it and every
// exchange it can pass a message to (by binding or as alternate
// exchange) pick their bindings without looking at the routing keys or
// the headers. A fanout exchange is one; so is a topic exchange whose
// bindings are all "#", a headers exchange whose bindings have no
// criteria, and any exchange without bindings. Where such an exchange
// delivers is then computed once and shared by every message routed from
// it: a fanout dead-letter exchange of N queues would otherwise cost N
// deliveries for each of N queues' dead letters.

// fixedRoute is the shared result of a message-blind exchange, computed
// by the first message routed from it.
type fixedRoute struct {
	once sync.Once
	// ok is false when that message reached no queue: the problems then
	// describe the message, and each message is routed on its own.
	ok          bool
	deliveries  []Delivery
	problems    []string
	unsimulated []string
	queues      []string
}

// findBlind returns the message-blind exchanges of s, each with its
// (not yet computed) fixed route: the greatest set of exchanges that
// pick their bindings blindly and lead only to such exchanges.
func (s *Simulator) findBlind() map[string]*fixedRoute {
	blind := map[string]bool{}
	preds := map[string][]string{} // exchange -> the exchanges that lead to it
	for name, ix := range s.exchanges {
		if ix.picksBlindly() {
			blind[name] = true
		}
		for _, next := range s.leadsTo(name, ix) {
			preds[next] = append(preds[next], name)
		}
	}
	// An exchange that leads to one that is not blind is not blind
	// either, and so on back.
	var work []string
	for name := range s.exchanges {
		if !blind[name] {
			work = append(work, name)
		}
	}
	for len(work) > 0 {
		x := work[len(work)-1]
		work = work[:len(work)-1]
		for _, p := range preds[x] {
			if blind[p] {
				delete(blind, p)
				work = append(work, p)
			}
		}
	}
	out := make(map[string]*fixedRoute, len(blind))
	for name := range blind {
		out[name] = &fixedRoute{}
	}
	return out
}

// RoutesAlike reports whether every message published to exchange x
// reaches the same queues, whatever its routing key and headers: x and
// every exchange it can pass a message to are message-blind (a fanout
// exchange, a topic exchange whose bindings are all "#", …), and each is
// of a type mqctl simulates.
func (s *Simulator) RoutesAlike(x string) bool {
	if s.blind[x] == nil {
		return false
	}
	seen := map[string]bool{x: true}
	for work := []string{x}; len(work) > 0; {
		e := work[len(work)-1]
		work = work[:len(work)-1]
		ix := s.exchanges[e]
		if ix.routingType == "" {
			return false
		}
		for _, next := range s.leadsTo(e, ix) {
			if !seen[next] {
				seen[next] = true
				work = append(work, next)
			}
		}
	}
	return true
}

// leadsTo returns the declared exchanges that exchange name (ix) can pass
// a message to: its exchange destinations and its alternate exchange.
func (s *Simulator) leadsTo(name string, ix *exchangeIndex) []string {
	var out []string
	for _, b := range ix.bindings {
		if b.DestinationType == topology.DestExchange && s.exchanges[b.Destination] != nil {
			out = append(out, b.Destination)
		}
	}
	if ae, ok := s.exchangeArgs[name].String("alternate-exchange"); ok && s.exchanges[ae] != nil {
		out = append(out, ae)
	}
	return out
}

// picksBlindly reports whether ix picks the same bindings for every
// message (see match).
func (ix *exchangeIndex) picksBlindly() bool {
	if len(ix.bindings) == 0 {
		return !picksOne(ix.routingType)
	}
	switch ix.routingType {
	case "", typeFanout:
		return true // "": not simulated, whatever the message
	case typeTopic:
		for _, b := range ix.bindings {
			if b.RoutingKey != "#" {
				return false
			}
		}
		return true
	case typeHeaders:
		for _, hb := range ix.headers {
			for k := range hb.b.Arguments {
				if k != "x-match" && (hb.mode.withX || !strings.HasPrefix(k, "x-")) {
					return false // a criterion
				}
			}
		}
		return true
	}
	return false
}

// result returns f's shared result for message m (walk routes the first
// message), or false when the result depends on the message after all
// (it reaches no queue).
func (f *fixedRoute) result(m Message, walk func() Result) (Result, bool) {
	f.once.Do(func() {
		r := walk()
		if len(r.Deliveries) == 0 {
			return
		}
		f.ok = true
		f.deliveries = slices.Clip(r.Deliveries)
		f.problems = slices.Clip(r.Problems)
		f.unsimulated = slices.Clip(r.Unsimulated)
		f.queues = slices.Clip(r.Queues())
	})
	if !f.ok {
		return Result{}, false
	}
	return Result{Message: m, Deliveries: f.deliveries, Problems: f.problems, Unsimulated: f.unsimulated, queues: f.queues}, true
}
