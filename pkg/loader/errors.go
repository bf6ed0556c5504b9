package loader

import (
	"fmt"
	"sort"
	"strings"

	"github.com/mqctl/mqctl/pkg/topology"
)

// Error is one problem in a topology file, at a position.
type Error struct {
	Pos topology.Pos
	// Msg says what is wrong, naming the offending value.
	Msg string
	// Hint says what would be accepted or how to fix it (may be empty).
	Hint string
}

func (e *Error) Error() string {
	var sb strings.Builder
	if p := e.Pos.String(); p != "" {
		sb.WriteString(p)
		sb.WriteString(": ")
	}
	sb.WriteString(e.Msg)
	if e.Hint != "" {
		sb.WriteString(" (")
		sb.WriteString(e.Hint)
		sb.WriteString(")")
	}
	return sb.String()
}

// ErrorList is every problem found in one load, in file order.
type ErrorList []*Error

func (l ErrorList) Error() string {
	switch len(l) {
	case 0:
		return "no errors"
	case 1:
		return l[0].Error()
	default:
		return fmt.Sprintf("%s (and %d more errors)", l[0].Error(), len(l)-1)
	}
}

// collector gathers the errors and warnings of one load. Files are
// numbered in the order they were read so that the final lists come out in
// file order.
type collector struct {
	order map[string]int
	errs  ErrorList
	warns ErrorList
	// hidden holds each value replaced from the environment (${VAR}),
	// but for keys: what no error or warning shows (hide).
	hidden map[*node]topology.EnvValue
}

func newCollector() *collector { return &collector{order: map[string]int{}} }

// interpolated records that scalar n holds value, replaced from the
// environment where the file wrote raw.
func (c *collector) interpolated(n *node, value, raw string) {
	if value == "" || !strings.Contains(raw, "${") {
		return
	}
	if c.hidden == nil {
		c.hidden = map[*node]topology.EnvValue{}
	}
	c.hidden[n] = topology.EnvValue{Value: value, Raw: raw}
}

// keyed records, for each value under n replaced from the environment,
// the key of its field (EnvValue.Key): the key of the mapping entry it is
// the value of, or of the list it is an item of. key is n's own.
func (c *collector) keyed(n *node, key string) {
	if len(c.hidden) == 0 || n == nil {
		return
	}
	switch n.kind {
	case scalarNode:
		if h, ok := c.hidden[n]; ok && h.Key == "" {
			h.Key = key
			c.hidden[n] = h
		}
	case mapNode:
		for _, e := range n.entries {
			if e.key != nil {
				c.keyed(e.value, e.key.value)
			}
		}
	case seqNode:
		for _, it := range n.items {
			c.keyed(it, key)
		}
	}
}

// envValues are the values of c.hidden, once each, the longest first
// (topology.NewEnvValues), but those written with $$ alone ($${X} is the
// text ${X}) and those that are the name of one of t's objects (a
// dead-letter exchange from ${DLX} the file declares): a name is shown
// anyway, and hidden it would leave the texts that name the object
// unreadable.
func (c *collector) envValues(t *topology.Topology) topology.EnvValues {
	if len(c.hidden) == 0 {
		return nil
	}
	names := map[string]bool{}
	addItems := func(items topology.Items) {
		for _, byName := range items {
			for n := range byName {
				names[n] = true
			}
		}
	}
	addItems(t.Items)
	for vn, v := range t.Vhosts {
		names[vn] = true
		for n := range v.Exchanges {
			names[n] = true
		}
		for n := range v.Queues {
			names[n] = true
		}
		for n := range v.Policies {
			names[n] = true
		}
		for n := range v.OperatorPolicies {
			names[n] = true
		}
		addItems(v.Items)
	}
	vs := make([]topology.EnvValue, 0, len(c.hidden))
	for _, h := range c.hidden {
		if !names[h.Value] && strings.Contains(strings.ReplaceAll(h.Raw, "$$", ""), "${") {
			vs = append(vs, h)
		}
	}
	return topology.NewEnvValues(vs)
}

// hide rewrites e so that it shows no value taken from the environment
// that it is about (a ${VAR} may hold a secret in any field: a URI given
// to the wrong key, a token in an argument): the value of a scalar at e's
// position, quoted, is replaced with what the file wrote, ${VAR}, saying
// its value is not shown (topology.EnvValue.Hide). The errors about other
// objects, which name them (their names may be as short as a value), are
// left as they are.
func hide(e *Error, byPos map[topology.Pos][]topology.EnvValue) {
	for _, h := range byPos[e.Pos] {
		// The last one: an error names its object first, whose name
		// may be the same, and masked would tell the value.
		e.Msg, e.Hint = h.Hide(e.Msg, true), h.Hide(e.Hint, true)
	}
}

// file registers name as the next file read.
func (c *collector) file(name string) {
	if _, ok := c.order[name]; !ok {
		c.order[name] = len(c.order)
	}
}

// addf records an error at pos; hint may be empty.
func (c *collector) addf(pos topology.Pos, hint, format string, args ...any) {
	c.errs = append(c.errs, &Error{Pos: pos, Msg: fmt.Sprintf(format, args...), Hint: hint})
}

// warnf records a warning at pos: a problem that does not fail the load.
func (c *collector) warnf(pos topology.Pos, hint, format string, args ...any) {
	c.warns = append(c.warns, &Error{Pos: pos, Msg: fmt.Sprintf(format, args...), Hint: hint})
}

func (c *collector) count() int { return len(c.errs) }

// err returns the collected errors sorted by file, line and column, without
// exact repeats, or nil when there are none.
func (c *collector) err() error {
	if len(c.errs) == 0 {
		return nil
	}
	return c.sorted(c.errs)
}

// warnings returns the collected warnings as err does the errors.
func (c *collector) warnings() ErrorList {
	if len(c.warns) == 0 {
		return nil
	}
	return c.sorted(c.warns)
}

// sorted is a copy of errs sorted by file, line and column, without exact
// repeats.
func (c *collector) sorted(errs ErrorList) ErrorList {
	list := make(ErrorList, len(errs))
	copy(list, errs)
	if len(c.hidden) > 0 {
		byPos := make(map[topology.Pos][]topology.EnvValue, len(c.hidden))
		for n, h := range c.hidden {
			byPos[n.pos] = append(byPos[n.pos], h)
		}
		for _, e := range list {
			hide(e, byPos)
		}
	}
	sort.SliceStable(list, func(i, j int) bool { return c.before(list[i].Pos, list[j].Pos) })
	out := list[:0]
	seen := map[string]bool{}
	for _, e := range list {
		s := e.Error()
		if seen[s] {
			continue
		}
		seen[s] = true
		out = append(out, e)
	}
	return out
}

// before orders positions by file (in reading order), line and column.
func (c *collector) before(a, b topology.Pos) bool {
	fa, fb := c.fileIndex(a.File), c.fileIndex(b.File)
	if fa != fb {
		return fa < fb
	}
	if a.Line != b.Line {
		return a.Line < b.Line
	}
	return a.Col < b.Col
}

func (c *collector) fileIndex(name string) int {
	if i, ok := c.order[name]; ok {
		return i
	}
	return -1
}
