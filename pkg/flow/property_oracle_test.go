package flow

import (
	"slices"

	"github.com/mqctl/mqctl/pkg/route"
	"github.com/mqctl/mqctl/pkg/topology"
)

// This file is the property test's own account of what tells messages
// apart, written against the simulator's API only: the patterns and
// criteria of the exchanges a message can pass through, and which of them
// a message matches.

// oracleExchanges returns the exchanges a message entering at x can pass
// through on the side simulated by s (v its vhost): x, and those its
// exchange-to-exchange bindings and alternate exchanges lead to, not
// through an exchange the simulator does not route.
func oracleExchanges(s *route.Simulator, v *topology.Vhost, x string) []string {
	if x == "" {
		return []string{""}
	}
	if s.Exchange(x) == nil {
		return nil
	}
	out := []string{x}
	for i := 0; i < len(out); i++ {
		cur := out[i]
		if s.RoutingType(cur) == "" {
			continue
		}
		var next []string
		for _, b := range v.Bindings {
			if b.Source == cur && b.DestinationType == topology.DestExchange {
				next = append(next, b.Destination)
			}
		}
		if ae, ok := s.ExchangeArgs(cur).String("alternate-exchange"); ok {
			next = append(next, ae)
		}
		for _, n := range next {
			if s.Exchange(n) != nil && !slices.Contains(out, n) {
				out = append(out, n)
			}
		}
	}
	return out
}

// oracleOnWay returns the headers exchanges a message entering at x with
// routing key key, whatever its headers, can pass through on the side
// simulated by s (v its vhost): an exchange that routes by key leads on by
// the exchange-to-exchange bindings whose key matches, and to its
// alternate exchange when none of its bindings does; any other exchange
// by every exchange-to-exchange binding, and to its alternate exchange
// when it may match none of its bindings (a headers exchange, or one
// without bindings).
func oracleOnWay(s *route.Simulator, v *topology.Vhost, x, key string) map[string]bool {
	out := map[string]bool{}
	if x == "" || s.Exchange(x) == nil {
		return out
	}
	seen := []string{x}
	for i := 0; i < len(seen); i++ {
		cur := seen[i]
		typ := s.RoutingType(cur)
		if typ == "headers" {
			out[cur] = true
		}
		var next []string
		matched, bound := false, false
		for _, b := range v.Bindings {
			if b.Source != cur || !declared(s, v, b) {
				continue
			}
			bound = true
			m := true
			switch typ {
			case "topic":
				m = route.TopicMatch(b.RoutingKey, key)
			case "direct":
				m = b.RoutingKey == key
			}
			matched = matched || (m && typ != "headers")
			if m && b.DestinationType == topology.DestExchange {
				next = append(next, b.Destination)
			}
		}
		if typ != "topic" && typ != "direct" && typ != "headers" {
			matched = bound
		}
		if ae, ok := s.ExchangeArgs(cur).String("alternate-exchange"); ok && !matched {
			next = append(next, ae)
		}
		for _, n := range next {
			if s.Exchange(n) != nil && !slices.Contains(seen, n) {
				seen = append(seen, n)
			}
		}
	}
	return out
}

// oracleMatches returns, as text, the binding keys and criteria of
// exchanges (of the side simulated by s) that a message with key key
// (when keys) and headers headers matches: what Class.Matches lists. The
// criteria are those of the headers exchanges on the way of a message
// of key onWay (oracleOnWay), whatever its headers: the others do not
// tell messages of that key apart.
func oracleMatches(s *route.Simulator, v *topology.Vhost, exchanges []string, keys bool, key, onWay string, headers map[string]any) []string {
	way := oracleOnWay(s, v, exchanges[0], onWay)
	var out []string
	for _, x := range exchanges {
		if x == "" {
			if keys && v.Queues[key] != nil {
				out = append(out, keyText(key, true))
			}
			continue
		}
		typ := s.RoutingType(x)
		for _, b := range v.Bindings {
			if b.Source != x || !declared(s, v, b) {
				continue
			}
			switch typ {
			case "topic":
				if keys && route.TopicMatch(b.RoutingKey, key) {
					out = append(out, b.RoutingKey)
				}
			case "direct":
				if keys && b.RoutingKey == key {
					out = append(out, keyText(b.RoutingKey, true))
				}
			case "headers":
				if !way[x] {
					continue
				}
				if ok, _ := route.HeadersMatch(b.Arguments, headers, s.Version()); ok {
					out = append(out, criteriaText(b.Arguments))
				}
			}
		}
	}
	return out
}

// declared reports whether b's destination is declared.
func declared(s *route.Simulator, v *topology.Vhost, b *topology.Binding) bool {
	if b.DestinationType == topology.DestExchange {
		return s.Exchange(b.Destination) != nil
	}
	return v.Queues[b.Destination] != nil
}

// sortedSet sorts xs and drops repeats; nil when empty.
func sortedSet(xs []string) []string {
	if len(xs) == 0 {
		return nil
	}
	slices.Sort(xs)
	return slices.Compact(xs)
}

// signature is what Class.Matches must be for message m published to
// exchange x.
func (p *propertyCase) signature(x string, m route.Message) []string {
	var out []string
	for _, s := range []struct {
		sim *route.Simulator
		v   *topology.Vhost
	}{{p.b, p.vb}, {p.a, p.va}} {
		if x != "" && (s.sim.Exchange(x) == nil || s.sim.Exchange(x).Internal) {
			continue
		}
		out = append(out, oracleMatches(s.sim, s.v, oracleExchanges(s.sim, s.v, x), true, m.RoutingKey, m.RoutingKey, m.Headers)...)
	}
	return sortedSet(out)
}

// deadLetterExchanges returns the dead-letter exchanges of queue q for
// reason r on both sides (where it has one for r).
func (p *propertyCase) deadLetterExchanges(q string, r route.Reason) []string {
	var out []string
	for _, s := range []*route.Simulator{p.b, p.a} {
		if p.deadLetters(s, q, r) {
			if d := s.DeadLetter(q, r, route.Message{}); d.Configured && !slices.Contains(out, d.Exchange) {
				out = append(out, d.Exchange)
			}
		}
	}
	return out
}

// deadLetterSignature is what Class.Matches must be for queue q's dead
// letters of m for reason r, whether they have a class at all (where
// they go depends on the message: its own key, kept by a dead-letter
// exchange that routes by key, or its headers, named by the criteria of
// a headers exchange on the way), and
// whether their classes are of keys (keyed: the key is kept and routed
// by).
func (p *propertyCase) deadLetterSignature(q string, r route.Reason, m route.Message) (sig []string, classed, keyed bool) {
	var out []string
	keyFrom, keyRouted, told := false, false, false
	type inPlay struct {
		sim     *route.Simulator
		v       *topology.Vhost
		d       route.DeadLetterRoute
		closure []string
	}
	var sides []inPlay
	for _, s := range []struct {
		sim *route.Simulator
		v   *topology.Vhost
	}{{p.b, p.vb}, {p.a, p.va}} {
		if !p.deadLetters(s.sim, q, r) {
			continue
		}
		d := s.sim.DeadLetter(q, r, m)
		if !d.Configured {
			continue
		}
		keyFrom = keyFrom || d.KeyFromMessage
		var closure []string
		if !d.ExchangeMissing {
			closure = oracleExchanges(s.sim, s.v, d.Exchange)
		}
		for _, x := range closure {
			typ := s.sim.RoutingType(x)
			keyRouted = keyRouted || x == "" || typ == "topic" || typ == "direct"
		}
		// The dead letters are told apart by their headers where a
		// criterion on their way names a header they may carry, not
		// one the broker sets on them.
		if len(closure) > 0 {
			for x := range oracleOnWay(s.sim, s.v, closure[0], d.Result.Message.RoutingKey) {
				for _, b := range s.v.Bindings {
					if b.Source != x || !declared(s.sim, s.v, b) {
						continue
					}
					if _, valid := route.HeadersMatch(b.Arguments, nil, s.sim.Version()); !valid {
						continue
					}
					for k := range b.Arguments {
						told = told || (k != "x-match" && !deathSkip(k))
					}
				}
			}
		}
		sides = append(sides, inPlay{s.sim, s.v, d, closure})
	}
	keys := keyFrom && keyRouted
	for _, s := range sides {
		h := map[string]any{}
		for k, v := range s.d.Result.Message.Headers {
			h[k] = v
		}
		if !s.sim.Version().RegroupsXDeath() {
			delete(h, "x-death") // routed by the client's x-death: none
		}
		if len(s.closure) > 0 {
			out = append(out, oracleMatches(s.sim, s.v, s.closure, keys, m.RoutingKey, s.d.Result.Message.RoutingKey, h)...)
		}
	}
	return sortedSet(out), keys || told, keys
}

// reachesQueue reports whether a message with m's routing key can reach
// queue q on either side (route.Simulator.InboundKeys): the dead letters
// that keep their key have no other.
func (p *propertyCase) reachesQueue(q string, m route.Message) bool {
	return p.b.InboundKeys(q).Admits(m.RoutingKey) || p.a.InboundKeys(q).Admits(m.RoutingKey)
}

// reasons returns the ways queue q dead-letters a message before and
// after the change: the simulator's, and where the queue has a message
// TTL on neither side but a dead-letter exchange on one, expired too, as
// for a message published with a TTL of its own (ReasonsFor): any queue
// may hold such messages.
func (p *propertyCase) reasons(q string) (rb, ra []route.Reason) {
	rb, ra = p.b.Reasons(q), p.a.Reasons(q)
	dlx := p.b.DeadLetter(q, route.Rejected, route.Message{}).Configured || p.a.DeadLetter(q, route.Rejected, route.Message{}).Configured
	if len(rb) > 0 && len(ra) > 0 && !slices.Contains(rb, route.Expired) && !slices.Contains(ra, route.Expired) && dlx {
		withTTL := route.Message{Expiration: "60000"}
		rb, ra = p.b.ReasonsFor(q, withTTL), p.a.ReasonsFor(q, withTTL)
	}
	return rb, ra
}

// deadLetters reports whether queue q dead-letters for reason r on the
// side s simulates (reasons).
func (p *propertyCase) deadLetters(s *route.Simulator, q string, r route.Reason) bool {
	rb, ra := p.reasons(q)
	if s == p.b {
		return slices.Contains(rb, r)
	}
	return slices.Contains(ra, r)
}
