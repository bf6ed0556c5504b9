package loader

import (
	"fmt"
	"slices"
	"sort"
	"strconv"
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
	// literals are the values the files wrote themselves for an object's
	// own field that equal a value of hidden for the same field, and
	// envIn the values objects' own fields take from the environment
	// (literal): envValues keeps the literals of objects that take no
	// such value from the environment (topology.EnvValue.Literal).
	literals []topology.EnvValue
	envIn    map[topology.EnvValue]bool
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

// ownFields are, for each section of a vhost that declares objects by
// name, the kind of its objects and the fields of one whose values are
// the object's own (its arguments, its definition), not another's: a
// queue's dead_letter, retry and bindings declare other objects, which a
// value there may show in.
var ownFields = map[string]struct {
	kind   string
	fields []string
}{
	"queues":            {"queue", []string{"limits", "arguments", "delivery_limit", "max_priority"}},
	"exchanges":         {"exchange", []string{"arguments"}},
	"policies":          {"policy", []string{"definition"}},
	"operator_policies": {"operator_policy", []string{"definition"}},
}

// objectOf is the object (topology.EnvValue Kind, Vhost, Object) whose
// own field a scalar at path (the keys above it) is a value of, or
// false.
func objectOf(path []string) (kind, vhost, name string, ok bool) {
	if len(path) < 5 || path[0] != "vhosts" {
		return "", "", "", false
	}
	own, found := ownFields[path[2]]
	if !found || !slices.Contains(own.fields, path[4]) {
		return "", "", "", false
	}
	return own.kind, path[1], path[3], true
}

// literal records, where c holds values from the environment, the
// scalars under n (a file's root) that are an object's own field's
// (objectOf): those from the environment in envIn, the others, where
// a value from the environment is the same (as the plan shows it: a
// duration in ms, a size in bytes) for the same field, in literals.
func (c *collector) literal(root *node) {
	if len(c.hidden) == 0 || root == nil {
		return
	}
	// The fields each value from the environment is given for, by value.
	fields := map[string][]string{}
	for _, h := range c.hidden {
		if h.Key != "" && !slices.Contains(fields[h.Value], fieldKey(h.Key)) {
			fields[h.Value] = append(fields[h.Value], fieldKey(h.Key))
		}
	}
	c.literalIn(root, nil, "", fields)
}

// literalIn is literal's walk of n, at path, the value of key.
func (c *collector) literalIn(n *node, path []string, key string, fields map[string][]string) {
	if n == nil {
		return
	}
	switch n.kind {
	case scalarNode:
		kind, vhost, object, ok := objectOf(path)
		if !ok || key == "" {
			return
		}
		if h, env := c.hidden[n]; env {
			if c.envIn == nil {
				c.envIn = map[topology.EnvValue]bool{}
			}
			c.envIn[topology.EnvValue{Value: h.Value, Key: fieldKey(key), Kind: kind, Vhost: vhost, Object: object}] = true
			return
		}
		if n.value == "" || n.interpolated {
			return
		}
		for _, v := range shownAs(n.value) {
			if slices.Contains(fields[v], fieldKey(key)) {
				c.literals = append(c.literals, topology.EnvValue{Value: v, Raw: n.value, Key: key, Literal: true, Kind: kind, Vhost: vhost, Object: object})
			}
		}
	case mapNode:
		for _, e := range n.entries {
			if e.key != nil {
				c.literalIn(e.value, append(path, e.key.value), e.key.value, fields)
			}
		}
	case seqNode:
		for _, it := range n.items {
			c.literalIn(it, path, key, fields)
		}
	}
}

// shownAs are the texts a plan may show for scalar value v: v, and the
// milliseconds of a duration (1s: 1000) or the bytes of a size.
func shownAs(v string) []string {
	out := []string{v}
	if ms, err := parseDuration(v); err == nil && strconv.FormatInt(ms, 10) != v {
		out = append(out, strconv.FormatInt(ms, 10))
	}
	if b, err := parseSize(v); err == nil && strconv.FormatInt(b, 10) != v && !slices.Contains(out, strconv.FormatInt(b, 10)) {
		out = append(out, strconv.FormatInt(b, 10))
	}
	return out
}

// fieldKey is key as envIn compares fields: lower case, "-" for "_",
// without an argument's x- (x-max-length and max_length are one field).
func fieldKey(key string) string {
	return strings.TrimPrefix(strings.ToLower(strings.ReplaceAll(key, "_", "-")), "x-")
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
	// A literal of an object that takes the same value for the same
	// field from the environment as well (limits.max_length: ${N} and
	// arguments.x-max-length: 1000) is hidden with it.
	if len(c.literals) > 0 {
		type field struct{ value, key string }
		shown := map[field]bool{}
		for _, h := range vs {
			shown[field{h.Value, fieldKey(h.Key)}] = true
		}
		for _, l := range c.literals {
			env := c.envIn[topology.EnvValue{Value: l.Value, Key: fieldKey(l.Key), Kind: l.Kind, Vhost: l.Vhost, Object: l.Object}]
			if !env && shown[field{l.Value, fieldKey(l.Key)}] {
				vs = append(vs, l)
			}
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
