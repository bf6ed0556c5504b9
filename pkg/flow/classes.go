package flow

import (
	"slices"
	"strings"
)

// msgClass is a class of messages: a class of routing keys crossed with a
// class of header sets.
type msgClass struct {
	key     string
	headers map[string]any
	matches []string // the patterns and criteria the class matches, as text
	// byHeaders: criteria on the class's way tell it apart (Class.ByHeaders):
	// they name a header the message may carry.
	byHeaders bool
	// keys and crits are the indexes of those patterns and criteria in
	// the flowChange's.
	keys, crits []int
}

// classRequest says which classes of a flowChange to make.
type classRequest struct {
	// keys: the routing key matters (else every class has key "").
	keys bool
	// pruneKeys, pruneHeaders: only the classes that match a changed
	// binding's pattern (criterion) can route differently (see
	// flowChange.keysOnly).
	pruneKeys, pruneHeaders bool
	// skip are the headers the classes leave out; context the headers
	// the broker adds before routing (a dead letter's), and memo names
	// the context.
	skip    func(string) bool
	context map[string]any
	memo    string
	// gates, when set, are the only keys the classes may have (patterns
	// marked gate): the keys by which messages reach the queue whose dead
	// letters keep them. A class of keys none of them admits is left out,
	// and the classes are still told apart by f's patterns alone.
	gates []keyPattern
	// keyB and keyA, when set, are the routing key every message of the
	// classes carries before (after) the change, whatever its class's (a
	// dead-letter routing key): the headers exchanges on its way there
	// depend on it.
	keyB, keyA *string
}

// classKey names the classes of one request.
type classKey struct {
	f                    *flowChange
	keys, pruneK, pruneH bool
	memo                 string
}

// classes returns (and remembers) the classes of messages that f's
// patterns and criteria tell apart, at most Options.MaxClasses of them
// (truncated then true).
func (c *vhostCompare) classes(f *flowChange, r classRequest) ([]msgClass, bool) {
	k := classKey{f, r.keys, r.pruneKeys, r.pruneHeaders, r.memo}
	if got, ok := c.classMemo[k]; ok {
		return got.classes, got.truncated
	}
	f.make(c)
	ks := []keyClass{{}}
	var truncated bool
	if r.keys {
		ks, truncated = keyClasses(append(slices.Clip(f.patterns), r.gates...), r.pruneKeys, c.max)
	}
	// Each class of keys is told apart by the criteria of the headers
	// exchanges on its way only: those of one it never passes through
	// would split it into classes that all route alike.
	type headerList struct {
		classes   []headerClass
		truncated bool
		// told: some header a message may carry is named by a
		// criterion, so the criteria can tell messages apart.
		told bool
	}
	memo := map[string]headerList{}
	var out []msgClass
	for _, kc := range ks {
		hs, byHeaders := []headerClass{{}}, false
		if f.headers {
			crits, index := f.criteria, []int(nil) // index: crits' indexes in f.criteria (nil: the same)
			if sub, ok := c.critsOnWay(f, r, kc.matches); ok {
				crits, index = make([]criterion, len(sub)), sub
				for i, j := range sub {
					crits[i] = f.criteria[j]
				}
			}
			sig := "all"
			if index != nil {
				sig = "sub" + encodeInts(index)
			}
			got, ok := memo[sig]
			if !ok {
				got.classes, got.truncated = headerClasses(crits, r.skip, r.context, r.pruneHeaders, c.max, c.ver)
				names, _ := headerChoices(crits, r.skip)
				got.told = len(names) > 0
				for i := range got.classes {
					got.classes[i].matches = reindex(got.classes[i].matches, index)
				}
				memo[sig] = got
			}
			hs, truncated, byHeaders = got.classes, truncated || got.truncated, got.told
		}
		for _, hc := range hs {
			if len(out) == c.max {
				truncated = true
				break
			}
			out = append(out, msgClass{key: kc.key, headers: hc.headers, matches: f.texts(kc.matches, hc.matches), keys: kc.matches, crits: hc.matches, byHeaders: byHeaders})
		}
	}
	c.classMemo[k] = classList{out, truncated}
	return out, truncated
}

// reindex maps indexes into a subset of a list to indexes into the list
// (index: the subset's, nil for the list itself).
func reindex(xs, index []int) []int {
	if index == nil {
		return xs
	}
	out := make([]int, len(xs))
	for i, x := range xs {
		out[i] = index[x]
	}
	return out
}

// classList is a remembered result of classes.
type classList struct {
	classes   []msgClass
	truncated bool
}

// texts renders the patterns and criteria of the given indexes, sorted,
// each once.
func (f *flowChange) texts(keys, crits []int) []string {
	return f.sideTexts(keys, crits, onBefore|onAfter)
}

// sideTexts renders the patterns and criteria of the given indexes that
// a binding of side (onBefore, onAfter or both) has, sorted, each once.
func (f *flowChange) sideTexts(keys, crits []int, side uint8) []string {
	var out []string
	for _, i := range keys {
		if f.patterns[i].sides&side != 0 {
			out = append(out, keyText(f.patterns[i].text, f.patterns[i].literal))
		}
	}
	for _, i := range crits {
		if f.criteria[i].sides&side != 0 {
			out = append(out, f.criteria[i].text)
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// publishSkip leaves out of a published message's classes the headers
// that are more routing keys (CC, BCC) rather than headers to match: a
// message with them goes where each of its keys goes.
func publishSkip(h string) bool { return h == "CC" || h == "BCC" }

// deathSkip leaves out of a dead letter's classes the headers the broker
// sets on it (x-death, x-first-death-*, x-last-death-*) besides CC and
// BCC: whatever the message carried, they are the dead letter's.
func deathSkip(h string) bool {
	return publishSkip(h) || h == "x-death" || strings.HasPrefix(h, "x-first-death-") || strings.HasPrefix(h, "x-last-death-")
}
