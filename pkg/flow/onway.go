package flow

import (
	"slices"

	"github.com/mqctl/mqctl/pkg/topology"
)

// headersOnWay returns the headers exchanges a message published to (or
// dead-lettered into) start can pass through on side s when the binding
// keys it matches are matched (patterns by text and literal only),
// whatever its headers: an exchange that routes by key leads on by the
// exchange-to-exchange bindings whose key it matches, and to its
// alternate exchange where it matches none of its bindings; a headers
// exchange, a fanout one and one of a type that picks among its bindings
// or is not simulated lead on by each of theirs, and to their alternate
// exchange where it may be used. It may name more exchanges than a
// message of the key visits (it does not tell the headers apart), never
// fewer. In no particular order.
func (s *side) headersOnWay(start string, matched map[keyPattern]bool) []string {
	if start == "" || !s.exists(start) {
		return nil // the default exchange leads to queues only
	}
	seen := map[string]bool{start: true}
	queue := []string{start}
	var out []string
	next := func(y string) {
		if !seen[y] && s.exists(y) {
			seen[y] = true
			queue = append(queue, y)
		}
	}
	for i := 0; i < len(queue); i++ {
		x := queue[i]
		info, bs := s.ex[x], s.from[x]
		k := s.kind(x)
		unmatched := true
		switch k {
		case ClassTopic, ClassDirect:
			// The matched patterns, a class's, are a few; the bindings
			// of an exchange may be 12,500: each class of a plan looked
			// at each binding (a plan replacing 12,500 queues, 1,000
			// classes: 12.5 million look-ups).
			byKey := s.keyedBindings(x)
			for p := range matched {
				if dests, ok := byKey[p.text]; ok && p.literal == (k != ClassTopic) {
					unmatched = false
					for _, y := range dests {
						next(y)
					}
				}
			}
		default:
			if k == ClassHeaders {
				out = append(out, x)
			}
			// A headers exchange may match none of its bindings; the
			// others match every binding (fanout) or pick one, and only
			// an exchange without bindings leaves its messages to its
			// alternate exchange.
			unmatched = k == ClassHeaders || len(bs) == 0
			for _, b := range bs {
				if b.DestinationType == topology.DestExchange {
					next(b.Destination)
				}
			}
		}
		if unmatched && info.hasAE {
			next(info.ae)
		}
	}
	return out
}

// critsOnWay returns the indexes of f's criteria that some headers
// exchange on the way of messages whose key matches f's patterns matches
// (a class's) has a binding of, on either side, ascending;
// false when which headers exchanges they pass through cannot be told
// from the key (the classes are not of keys, some exchange routes by key
// and a side does not fix the key): every criterion may then tell them
// apart.
func (c *vhostCompare) critsOnWay(f *flowChange, r classRequest, matches []int) ([]int, bool) {
	var classMatched map[keyPattern]bool
	if r.keys || !f.keyRouted { // no exchange on the way routes by key: the key does not matter

		classMatched = map[keyPattern]bool{}
		for _, i := range matches {
			p := f.patterns[i]
			classMatched[keyPattern{text: p.text, literal: p.literal}] = true
		}
	}
	set := map[int]bool{}
	for _, sd := range []struct {
		s     *side
		start string
		fixed *string
	}{{c.b, f.startB, r.keyB}, {c.a, f.startA, r.keyA}} {
		if sd.start == noExchange {
			continue
		}
		m := classMatched
		if sd.fixed != nil {
			m = map[keyPattern]bool{}
			for _, p := range f.patterns {
				if p.matches(*sd.fixed) {
					m[keyPattern{text: p.text, literal: p.literal}] = true
				}
			}
		} else if m == nil {
			return nil, false
		}
		for _, x := range sd.s.headersOnWay(sd.start, m) {
			for _, text := range sd.s.criteriaOf(x) {
				if i, ok := f.critIndex[text]; ok {
					set[i] = true
				}
			}
		}
	}
	out := mapIntKeys(set)
	slices.Sort(out)
	return out, true
}

// mapIntKeys returns the keys of m, in no order.
func mapIntKeys(m map[int]bool) []int {
	out := make([]int, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	return out
}

// keyedBindings returns (and remembers) the bindings of exchange x by
// routing key: for each key a binding of x has, the exchanges its
// bindings of that key lead to (none for a key that binds queues only).
func (s *side) keyedBindings(x string) map[string][]string {
	if m, ok := s.byKey[x]; ok {
		return m
	}
	m := map[string][]string{}
	for _, b := range s.from[x] {
		dests := m[b.RoutingKey]
		if b.DestinationType == topology.DestExchange {
			dests = append(dests, b.Destination)
		}
		m[b.RoutingKey] = dests
	}
	s.byKey[x] = m
	return m
}

// criteriaOf returns (and remembers) the criteria of exchange x's
// bindings (criteriaText), each once, in the order of its bindings.
func (s *side) criteriaOf(x string) []string {
	if cs, ok := s.criteria[x]; ok {
		return cs
	}
	var cs []string
	seen := map[string]bool{}
	for _, b := range s.from[x] {
		if text := criteriaText(b.Arguments); !seen[text] {
			seen[text] = true
			cs = append(cs, text)
		}
	}
	s.criteria[x] = cs
	return cs
}
