package flow

import (
	"slices"
	"strconv"

	"github.com/mqctl/mqctl/pkg/rmqversion"
	"github.com/mqctl/mqctl/pkg/route"
	"github.com/mqctl/mqctl/pkg/topology"
)

// headerClass is a class of header sets: all those that exactly the same
// criteria match.
type headerClass struct {
	headers map[string]any // a smallest header set of the class; nil: none
	matches []int          // the criteria it matches (indexes), ascending
}

// headerChoice is one way a message can carry a header: absent, or a
// value.
type headerChoice struct {
	present bool
	value   any
}

// headerChoices returns, for each header some criterion names (but those
// skip refuses), the choices that tell the criteria apart: absent, each
// value a criterion asks for, and, where a criterion asks only for the
// header's presence, some other value. Any other value is absent to
// every criterion that asks for a value, and so needs no choice of its
// own unless presence counts.
func headerChoices(crits []criterion, skip func(string) bool) (names []string, choices [][]headerChoice) {
	values := map[string][]any{}
	void := map[string]bool{}
	seen := map[string]bool{}
	for _, c := range crits {
		for k, v := range c.args {
			if k == "x-match" || skip(k) {
				continue
			}
			if _, ok := values[k]; !ok {
				values[k] = nil
			}
			if v == nil {
				void[k] = true
				continue
			}
			if id := k + "\x00" + (topology.Args{"v": v}).Canonical(); !seen[id] {
				seen[id] = true
				values[k] = append(values[k], v)
			}
		}
	}
	names = mapKeys(values)
	slices.Sort(names)
	for _, k := range names {
		cs := []headerChoice{{}}
		for _, v := range values[k] {
			cs = append(cs, headerChoice{present: true, value: v})
		}
		if void[k] {
			cs = append(cs, headerChoice{present: true, value: otherValue(values[k])})
		}
		choices = append(choices, cs)
	}
	return names, choices
}

// otherValue returns a string no value of used equals.
func otherValue(used []any) string {
	taken := map[string]bool{}
	for _, v := range used {
		if s, ok := v.(string); ok {
			taken[s] = true
		}
	}
	for i := 0; ; i++ {
		v := "other"
		if i > 0 {
			v += strconv.Itoa(i)
		}
		if !taken[v] {
			return v
		}
	}
}

// headerClasses partitions header sets by the criteria that match them
// (as route.HeadersMatch does for version ver), the header sets of the
// dead letters' context (headers the broker sets, which skip keeps out
// of the choices) included. It enumerates the combinations of
// headerChoices, at most max, and returns one class per set of criteria
// matched, represented by a combination with the fewest headers; with
// prune, only the classes that match a relevant criterion.
func headerClasses(crits []criterion, skip func(string) bool, context map[string]any, prune bool, max int, ver rmqversion.Version) (classes []headerClass, truncated bool) {
	names, choices := headerChoices(crits, skip)
	index := map[string]int{}
	counts := []int{}
	pick := make([]int, len(names))
	for n := 0; ; n++ {
		if n == max {
			return classes, true
		}
		h, present := headerSet(names, choices, pick, context)
		matched := matchedCriteria(crits, h, ver)
		if !prune || anyRelevant(crits, matched) {
			sig := encodeInts(matched)
			if i, ok := index[sig]; !ok {
				index[sig] = len(classes)
				counts = append(counts, present)
				classes = append(classes, headerClass{headers: ownHeaders(h, context), matches: matched})
			} else if present < counts[i] {
				counts[i] = present
				classes[i].headers = ownHeaders(h, context)
			}
		}
		if !nextPick(pick, choices) {
			return classes, false
		}
	}
}

// headerSet returns the headers of combination pick over context, and
// how many of them the combination adds.
func headerSet(names []string, choices [][]headerChoice, pick []int, context map[string]any) (map[string]any, int) {
	h := make(map[string]any, len(names)+len(context))
	for k, v := range context {
		h[k] = v
	}
	n := 0
	for i, k := range names {
		if c := choices[i][pick[i]]; c.present {
			h[k] = c.value
			n++
		}
	}
	return h, n
}

// ownHeaders returns h without the context's headers; nil when none is
// left.
func ownHeaders(h, context map[string]any) map[string]any {
	var out map[string]any
	for k, v := range h {
		if _, ok := context[k]; ok {
			continue
		}
		if out == nil {
			out = map[string]any{}
		}
		out[k] = v
	}
	return out
}

// nextPick advances the mixed-radix counter pick (first digit fastest);
// false once every combination has been picked.
func nextPick(pick []int, choices [][]headerChoice) bool {
	for i := range pick {
		if pick[i]++; pick[i] < len(choices[i]) {
			return true
		}
		pick[i] = 0
	}
	return false
}

// matchedCriteria returns the criteria headers h match, ascending.
func matchedCriteria(crits []criterion, h map[string]any, ver rmqversion.Version) []int {
	var out []int
	for i, c := range crits {
		if ok, _ := route.HeadersMatch(c.args, h, ver); ok {
			out = append(out, i)
		}
	}
	return out
}

// anyRelevant reports whether one of the matched criteria is relevant.
func anyRelevant(crits []criterion, matched []int) bool {
	for _, i := range matched {
		if crits[i].relevant {
			return true
		}
	}
	return false
}
