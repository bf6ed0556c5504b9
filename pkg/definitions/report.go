package definitions

import (
	"fmt"
	"sort"
	"strings"
)

// Categories of definitions that mqctl reads past without managing them.
// Users, permissions, topic permissions, vhost and user limits, shovels and
// federation objects are read (as topology items), not skipped.
const (
	SkipParameters       = "runtime parameters"
	SkipGlobalParameters = "global parameters"
)

// skipOrder is the order in which Lines reports skipped categories, with the
// singular noun and the reason given to the user.
var skipOrder = []struct {
	category, singular, reason string
}{
	{SkipParameters, "runtime parameter", "mqctl manages the runtime parameters of shovels, federation upstreams and upstream sets, vhost limits and operator policies, not these components"},
	{SkipGlobalParameters, "global parameter", "mqctl does not manage global parameters"},
}

// Report says what a definitions file held that the topology does not: the
// categories mqctl does not manage (with counts) and warnings about objects
// that were dropped or look wrong.
type Report struct {
	// Skipped counts the objects of each Skip* category that were read past.
	Skipped map[string]int
	// Components counts skipped runtime parameters by component (those
	// of plugins mqctl does not manage, "without component").
	Components map[string]int
	// Warnings are one-line notes about dropped or suspicious objects.
	Warnings []string
}

func newReport() *Report {
	return &Report{Skipped: map[string]int{}, Components: map[string]int{}}
}

func (r *Report) skip(category string, n int) {
	if n > 0 {
		r.Skipped[category] += n
	}
}

func (r *Report) warnf(format string, args ...any) {
	r.Warnings = append(r.Warnings, fmt.Sprintf(format, args...))
}

// Lines renders the report, one line per skipped category and per warning,
// e.g. "skipped 1 global parameter (mqctl does not manage global parameters)".
func (r *Report) Lines() []string {
	if r == nil {
		return nil
	}
	var out []string
	for _, s := range skipOrder {
		n := r.Skipped[s.category]
		if n == 0 {
			continue
		}
		noun := s.singular
		if n != 1 {
			noun = s.category
		}
		detail := ""
		if s.category == SkipParameters && len(r.Components) > 0 {
			detail = ": " + r.componentSummary()
		}
		out = append(out, fmt.Sprintf("skipped %d %s%s (%s)", n, noun, detail, s.reason))
	}
	for _, w := range r.Warnings {
		out = append(out, "warning: "+w)
	}
	return out
}

func (r *Report) componentSummary() string {
	names := make([]string, 0, len(r.Components))
	for c := range r.Components {
		names = append(names, c)
	}
	sort.Strings(names)
	parts := make([]string, len(names))
	for i, c := range names {
		parts[i] = fmt.Sprintf("%d %s", r.Components[c], c)
	}
	return strings.Join(parts, ", ")
}
