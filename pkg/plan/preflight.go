package plan

import (
	"fmt"

	"github.com/mqctl/mqctl/pkg/kind"
	"github.com/mqctl/mqctl/pkg/topology"
)

// Preflight is what the broker answered when asked, before any change,
// whether it takes the plan's objects (pkg/preflight: each distinct shape
// declared in a throwaway vhost). A plan made without asking has none: it
// was judged from the version table alone.
type Preflight struct {
	// Vhost is the throwaway vhost used ("" when none was made).
	Vhost string `json:"vhost,omitempty"`
	// Tried counts the distinct shapes declared; Objects the plan's
	// objects they stand for.
	Tried   int `json:"tried"`
	Objects int `json:"objects"`
	// Refusals are the broker's refusals, one per distinct cause.
	Refusals []Refusal `json:"refusals,omitempty"`
	// Skipped says why the broker was not asked, in a clause: the plan
	// was then judged from the version table alone.
	Skipped string `json:"skipped,omitempty"`
	// Untried are the plan's writes that a throwaway vhost cannot try
	// (users, permissions, shovels, federation): the table judges them.
	Untried []ObjectAt `json:"untried,omitempty"`
	// Swept are the throwaway vhosts left behind by killed processes that
	// were deleted; SweepErr says why one could not be.
	Swept    []string `json:"swept,omitempty"`
	SweepErr string   `json:"sweep_error,omitempty"`
	// CleanupErr says why the throwaway vhost could not be deleted (the
	// next apply deletes it).
	CleanupErr string `json:"cleanup_error,omitempty"`
	// ByWrite says that the plan's only trial was apply's first write,
	// made alone: no throwaway vhost was made, and a refusal of the write
	// left the broker as it was. Only an apply sets it.
	ByWrite bool `json:"-"`
}

// Refusal is one cause the broker refuses, and the objects it refuses for
// it.
type Refusal struct {
	Kind kind.Kind `json:"kind"`
	// Reason is the broker's own words, for the first object.
	Reason  string     `json:"reason"`
	Objects []ObjectAt `json:"objects"`
}

// ObjectAt is an object and where the file declares it.
type ObjectAt struct {
	ObjectRef
	Pos topology.Pos `json:"-"`
}

// String names the object as plans do: `queue "q" in vhost "v"`, after
// its place in the file when known.
func (o ObjectAt) String() string {
	s := fmt.Sprintf("%s %q", kindLabel(o.Kind), o.Name)
	if o.Kind.InVhostByName() {
		s += fmt.Sprintf(" in vhost %q", o.Vhost)
	}
	if p := o.Pos.String(); p != "" {
		s = p + ": " + s
	}
	return s
}

func kindLabel(k kind.Kind) string {
	if s, ok := kind.Of(k); ok {
		return s.Label
	}
	return string(k)
}

// Refused counts the objects the broker refuses.
func (pf *Preflight) Refused() int {
	n := 0
	for _, r := range pf.Refusals {
		n += len(r.Objects)
	}
	return n
}

// RefusalLines are the refusals as text, one cause each, in the broker's
// words, with every object refused for it (indented below it where there
// are several).
func (pf *Preflight) RefusalLines() []string {
	var out []string
	for _, r := range pf.Refusals {
		if len(r.Objects) == 1 {
			out = append(out, fmt.Sprintf("%s: %s", r.Objects[0], r.Reason))
			continue
		}
		what := "objects"
		if sameKind(r.Objects) {
			what = r.Objects[0].Kind.Plural()
		}
		out = append(out, fmt.Sprintf("%d %s, for one cause: %s", len(r.Objects), what, r.Reason))
		for _, o := range r.Objects {
			out = append(out, "  "+o.String())
		}
	}
	return out
}

func sameKind(objs []ObjectAt) bool {
	for _, o := range objs[1:] {
		if o.Kind != objs[0].Kind {
			return false
		}
	}
	return true
}

// Summary says in one sentence what the preflight found.
func (pf *Preflight) Summary() string {
	switch {
	case pf.Skipped != "":
		return "the broker was not asked (" + pf.Skipped + "): the plan was judged from the version table alone"
	case len(pf.Refusals) > 0:
		return fmt.Sprintf("the broker refuses %d %s of the plan, tried in a throwaway vhost", pf.Refused(), plural("object", pf.Refused()))
	case pf.Tried == 0:
		return "nothing to try: every shape the plan writes is one the broker already holds"
	}
	return fmt.Sprintf("the broker takes every shape the plan writes (%d %s for %d %s, tried in a throwaway vhost)", pf.Tried, plural("shape", pf.Tried), pf.Objects, plural("object", pf.Objects))
}
