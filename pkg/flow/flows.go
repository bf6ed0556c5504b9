package flow

import (
	"slices"

	"github.com/mqctl/mqctl/pkg/route"
	"github.com/mqctl/mqctl/pkg/topology"
)

// flowChange is how the routing from one start exchange changes: the
// closures of start on both sides (before's start and after's start may
// differ, for dead letters), whether they route alike, and the binding
// patterns that tell messages apart there.
type flowChange struct {
	startB, startA string
	// identical: every exchange of both closures routes alike on both
	// sides, so every message goes where it went.
	identical bool
	// keysOnly: the starts are the same and only bindings of exchanges
	// that route by key (topic, direct, the default exchange) changed, so
	// a message whose key matches none of relevant's patterns routes
	// alike. headersOnly: likewise for headers exchanges and criteria.
	keysOnly, headersOnly bool
	// keyRouted and headers say whether some exchange of either closure
	// routes by key, by headers; keyBehind whether one other than the
	// start does.
	keyRouted, headers, keyBehind bool
	// relevant are the key patterns of the changed bindings, and
	// relevantCriteria the criteria (Canonical) of the changed headers
	// bindings.
	relevant         []keyPattern
	relevantCriteria []string
	// patterns and criteria tell messages apart: the keys and headers
	// criteria of every binding of both closures (made on first use).
	patterns []keyPattern
	criteria []criterion
	// critIndex finds a criterion (by text) among criteria. (patterns
	// have no index kept: none was read, and each flow held one map entry
	// per binding key of both sides, 12,500 of them for a start exchange of
	// the bench's 50,002-object topology.)
	critIndex map[string]int
	made      bool
}

// keyPattern is a binding key: a topic pattern, or a literal key (a
// direct exchange's, or a queue name for the default exchange).
type keyPattern struct {
	text     string
	literal  bool
	relevant bool
	sides    uint8 // onBefore, onAfter: the sides with a binding of it
	// gate: the pattern is not a binding to route by but one of the keys
	// by which messages reach a queue (classRequest.gates).
	gate bool
}

// Sides of the change, as bits.
const (
	onBefore uint8 = 1 << iota
	onAfter
)

// matches reports whether key routes through p.
func (p keyPattern) matches(key string) bool {
	if p.literal {
		return p.text == key
	}
	return route.TopicMatch(p.text, key)
}

// criterion is a headers binding's arguments.
type criterion struct {
	args     topology.Args
	text     string // criteriaText(args)
	relevant bool
	sides    uint8 // onBefore, onAfter: the sides with a binding of it
}

// flow returns (and remembers) how the routing from startB before and
// startA after changes.
func (c *vhostCompare) flow(startB, startA string) *flowChange {
	key := [2]string{startB, startA}
	if f, ok := c.flows[key]; ok {
		return f
	}
	f := &flowChange{startB: startB, startA: startA}
	cb, ca := c.b.closure(startB), c.a.closure(startA)
	same := startB == startA
	f.identical, f.keysOnly, f.headersOnly = same, same, same
	for _, x := range cb {
		f.note(c.b.kind(x), x != startB)
	}
	for _, x := range ca {
		f.note(c.a.kind(x), x != startA)
	}
	seen := map[string]bool{}
	for _, x := range append(cb, ca...) {
		if seen[x] {
			continue
		}
		seen[x] = true
		ch := c.exchangeChange(x)
		if !ch.same {
			f.identical, f.keysOnly, f.headersOnly = false, false, false
			continue
		}
		if len(ch.changed) > 0 {
			f.identical = false
			f.noteChanged(c.b.kind(x), ch.changed)
		}
	}
	c.flows[key] = f
	return f
}

// note records the kind of an exchange of one of the closures (behind:
// not its start).
func (f *flowChange) note(k string, behind bool) {
	switch k {
	case ClassTopic, ClassDirect, ClassDefault:
		f.keyRouted = true
		f.keyBehind = f.keyBehind || behind
	case ClassHeaders:
		f.headers = true
	}
}

// noteChanged records the changed bindings of an exchange of kind k that
// routes alike otherwise.
func (f *flowChange) noteChanged(k string, changed []*topology.Binding) {
	switch k {
	case ClassTopic, ClassDirect, ClassDefault:
		f.headersOnly = false
		for _, b := range changed {
			f.relevant = append(f.relevant, keyPattern{text: b.RoutingKey, literal: k != ClassTopic, relevant: true})
		}
	case ClassHeaders:
		f.keysOnly = false
		for _, b := range changed {
			f.relevantCriteria = append(f.relevantCriteria, criteriaText(b.Arguments))
		}
	default:
		f.keysOnly, f.headersOnly = false, false
	}
}

// keyAffected reports whether a message with routing key key (whatever
// its headers) may route differently.
func (f *flowChange) keyAffected(key string) bool {
	if f.identical {
		return false
	}
	if !f.keysOnly {
		return true
	}
	for _, p := range f.relevant {
		if p.matches(key) {
			return true
		}
	}
	return false
}

// make collects the patterns and criteria of both closures.
func (f *flowChange) make(c *vhostCompare) {
	if f.made {
		return
	}
	f.made = true
	keys := map[keyPattern]int{}
	crits := map[string]int{}
	for _, s := range []struct {
		side  *side
		start string
		bit   uint8
	}{{c.b, f.startB, onBefore}, {c.a, f.startA, onAfter}} {
		for _, x := range s.side.closure(s.start) {
			k := s.side.kind(x)
			for _, b := range s.side.bindings(x) {
				switch k {
				case ClassTopic, ClassDirect, ClassDefault:
					p := keyPattern{text: b.RoutingKey, literal: k != ClassTopic}
					if _, ok := keys[p]; !ok {
						keys[p] = len(f.patterns)
						f.patterns = append(f.patterns, p)
					}
					f.patterns[keys[p]].sides |= s.bit
				case ClassHeaders:
					if _, valid := route.HeadersMatch(b.Arguments, nil, c.ver); valid {
						text := criteriaText(b.Arguments)
						if _, ok := crits[text]; !ok {
							crits[text] = len(f.criteria)
							f.criteria = append(f.criteria, criterion{args: b.Arguments, text: text})
						}
						f.criteria[crits[text]].sides |= s.bit
					}
				}
			}
		}
	}
	f.critIndex = crits
	for _, r := range f.relevant {
		if i, ok := keys[keyPattern{text: r.text, literal: r.literal}]; ok {
			f.patterns[i].relevant = true
		}
	}
	for _, text := range f.relevantCriteria {
		if i, ok := crits[text]; ok {
			f.criteria[i].relevant = true
		}
	}
}

// criteriaText renders a headers binding's arguments as Class.Matches
// lists them: Canonical, "{}" for none (which x-match all matches).
func criteriaText(args topology.Args) string {
	if len(args) == 0 {
		return "{}"
	}
	return args.Canonical()
}

// keyText renders a binding key as Class.Matches lists it: as it is, but
// for a literal key (a direct exchange's, a queue name) with a "*" or "#"
// word, which is followed by " (literal)" to tell it from the topic
// pattern it looks like: it matches only itself.
func keyText(key string, literal bool) string {
	if literal && slices.ContainsFunc(splitKey(key), func(w string) bool { return w == "*" || w == "#" }) {
		return key + " (literal)"
	}
	return key
}
