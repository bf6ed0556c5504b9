package flow

import (
	"encoding/binary"
	"slices"
	"strconv"
	"strings"
)

// keyClass is a class of routing keys: all the keys that exactly the same
// patterns match.
type keyClass struct {
	key     string // a shortest key of the class
	matches []int  // the patterns it matches (indexes), ascending
}

// keyAutomaton partitions routing keys by the patterns that match them,
// as the topic exchange matches (route.TopicMatch): words split on ".",
// "*" one word, "#" zero or more; a literal pattern matches itself only.
// It is the subset construction of the patterns' word automata, walked
// breadth first over the words the patterns name plus one word they do
// not, so each class is first met with one of its shortest keys.
type keyAutomaton struct {
	pats  []keyPattern
	words [][]string
	// Every state is a position in a pattern: owner and pos say which.
	owner, pos []int32
	// other is a word no pattern names: it stands for every such word.
	other string
	// gated: some pattern is a gate (keyPattern.gate).
	gated bool
}

// splitKey splits a routing or binding key into words as the topic
// exchange does: "" has none.
func splitKey(key string) []string {
	if key == "" {
		return nil
	}
	return strings.Split(key, ".")
}

// newKeyAutomaton builds the word automata of pats.
func newKeyAutomaton(pats []keyPattern) *keyAutomaton {
	a := &keyAutomaton{pats: pats, words: make([][]string, len(pats))}
	named := map[string]bool{}
	for i, p := range pats {
		a.gated = a.gated || p.gate
		a.words[i] = splitKey(p.text)
		for j, w := range a.words[i] {
			if p.literal || (w != "*" && w != "#") {
				named[w] = true
			}
			a.owner = append(a.owner, int32(i))
			a.pos = append(a.pos, int32(j))
		}
		a.owner = append(a.owner, int32(i))
		a.pos = append(a.pos, int32(len(a.words[i])))
	}
	a.other = freshWord(named)
	return a
}

// freshWord returns a short word that is not in used.
func freshWord(used map[string]bool) string {
	for _, w := range []string{"x", "y", "z", "other"} {
		if !used[w] {
			return w
		}
	}
	for i := 1; ; i++ {
		if w := "x" + strconv.Itoa(i); !used[w] {
			return w
		}
	}
}

// word returns the word of state s and whether s is a wildcard ("*" or
// "#" of a topic pattern); "" and false at a pattern's end.
func (a *keyAutomaton) word(s int32) (w string, wild, end bool) {
	ws := a.words[a.owner[s]]
	if int(a.pos[s]) == len(ws) {
		return "", false, true
	}
	w = ws[a.pos[s]]
	return w, !a.pats[a.owner[s]].literal && (w == "*" || w == "#"), false
}

// closure adds to states the states a "#" can skip to, sorted, each once.
func (a *keyAutomaton) closure(states []int32) []int32 {
	out := make([]int32, 0, len(states))
	for _, s := range states {
		out = append(out, s)
		for w, wild, end := a.word(s); wild && w == "#" && !end; w, wild, end = a.word(s) {
			s++
			out = append(out, s)
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// successors returns the states after one more word: for each word some
// state names, in order, and last for every other word.
func (a *keyAutomaton) successors(states []int32) (words []string, next [][]int32) {
	var anyWord []int32
	byWord := map[string][]int32{}
	for _, s := range states {
		w, wild, end := a.word(s)
		switch {
		case end:
		case wild && w == "#":
			anyWord = append(anyWord, s)
		case wild:
			anyWord = append(anyWord, s+1)
		default:
			byWord[w] = append(byWord[w], s+1)
		}
	}
	words = mapKeys(byWord)
	slices.Sort(words)
	for _, w := range words {
		next = append(next, a.closure(append(byWord[w], anyWord...)))
	}
	return append(words, a.other), append(next, a.closure(anyWord))
}

// accepted returns the patterns whose end is among states, ascending.
func (a *keyAutomaton) accepted(states []int32) []int {
	var out []int
	for _, s := range states {
		if _, _, end := a.word(s); end {
			out = append(out, int(a.owner[s]))
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// admits reports whether a key that matches the patterns ps may be a
// class's: the automaton has no gate patterns, or a gate is among ps.
func (a *keyAutomaton) admits(ps []int) bool {
	if !a.gated {
		return true
	}
	return slices.ContainsFunc(ps, func(p int) bool { return a.pats[p].gate })
}

// routing returns ps without the gate patterns.
func (a *keyAutomaton) routing(ps []int) []int {
	if !a.gated {
		return ps
	}
	return slices.DeleteFunc(ps, func(p int) bool { return a.pats[p].gate })
}

// relevant reports whether a relevant pattern is among ps.
func (a *keyAutomaton) relevant(ps []int) bool {
	for _, p := range ps {
		if a.pats[p].relevant {
			return true
		}
	}
	return false
}

// alive reports whether a relevant pattern can still match after more
// words in states.
func (a *keyAutomaton) alive(states []int32) bool {
	for _, s := range states {
		if _, _, end := a.word(s); !end && a.pats[a.owner[s]].relevant {
			return true
		}
	}
	return false
}

// encode renders states (and the one-empty-word mark) as a map key.
func encode(states []int32, mark bool) string {
	b := make([]byte, 1, 1+4*len(states))
	if mark {
		b[0] = 1
	}
	for _, s := range states {
		b = binary.LittleEndian.AppendUint32(b, uint32(s))
	}
	return string(b)
}

// keyNode is a set of states the automaton reaches, with the shortest
// key (as words) that reaches it.
type keyNode struct {
	states []int32
	words  []string
	// oneEmpty marks the key of one empty word, which no routing key
	// has: "" has no words at all.
	oneEmpty bool
}

// keyClasses partitions routing keys by the patterns that match them and
// returns one class per set of patterns some key matches, in the order
// met (shortest keys first). With prune, only the classes that match a
// relevant pattern, and only the keys that still can, are explored. Gate
// patterns (keyPattern.gate) do not tell classes apart: where there are
// some, a class is of the keys one of them matches, its example the
// shortest such key, and its matches leave them out.
// truncated is true when the classes (or the sets of states visited, at
// most 16 per class allowed) went past max.
func keyClasses(pats []keyPattern, prune bool, max int) (classes []keyClass, truncated bool) {
	a := newKeyAutomaton(pats)
	start := a.closure(a.startStates())
	queue := []keyNode{{states: start}}
	seen := map[string]bool{encode(start, false): true}
	found := map[string]bool{}
	for len(queue) > 0 {
		n := queue[0]
		queue = queue[1:]
		if len(seen) > 16*max {
			return classes, true
		}
		if ps := a.accepted(n.states); !n.oneEmpty && (!prune || a.relevant(ps)) && a.admits(ps) {
			ps = a.routing(ps)
			sig := encodeInts(ps)
			if !found[sig] {
				if len(classes) == max {
					return classes, true
				}
				found[sig] = true
				classes = append(classes, keyClass{key: strings.Join(n.words, "."), matches: ps})
			}
		}
		if prune && !a.alive(n.states) {
			continue
		}
		words, next := a.successors(n.states)
		for i, w := range words {
			mark := len(n.words) == 0 && w == ""
			k := encode(next[i], mark)
			if seen[k] {
				continue
			}
			seen[k] = true
			queue = append(queue, keyNode{states: next[i], words: append(slices.Clip(n.words), w), oneEmpty: mark})
		}
	}
	return classes, false
}

// startStates are the first state of every pattern.
func (a *keyAutomaton) startStates() []int32 {
	out := make([]int32, 0, len(a.pats))
	for s := range a.pos {
		if a.pos[s] == 0 {
			out = append(out, int32(s))
		}
	}
	return out
}

// encodeInts renders a list of indexes as a map key.
func encodeInts(xs []int) string {
	b := make([]byte, 0, 4*len(xs))
	for _, x := range xs {
		b = binary.LittleEndian.AppendUint32(b, uint32(x))
	}
	return string(b)
}
