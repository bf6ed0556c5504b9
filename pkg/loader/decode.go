package loader

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/mqctl/mqctl/pkg/suggest"
	"github.com/mqctl/mqctl/pkg/topology"
)

// decoder checks node values against the types the file format expects.
// Every check reports its own error and returns ok=false; callers go on
// with the next field so that one load reports every problem.
type decoder struct {
	errs *collector
	// refs names the variable of each scalar written as exactly ${VAR}.
	refs map[*node]string
	// unset holds the scalars that name variables that are not set, when
	// secrets are optional (Options.SecretsOptional); nil otherwise.
	unset map[*node]*unsetVars
}

// unsetVars is why a scalar could not be interpolated when all that is
// wrong is variables that are not set (interpolationError.unset).
type unsetVars struct {
	err *interpolationError
	// secret: the scalar was read as a secret, and its variables
	// reported as warnings.
	secret bool
}

// unsetSecret reports whether n, read as the secret field what, names
// variables that are not set while secrets are optional. Each is then a
// warning (once), and n stands as written ("${VAR}"): no secret, and a
// reference to the variable (decoder.refs).
func (d *decoder) unsetSecret(n *node, what string) bool {
	u := d.unset[n]
	if u == nil {
		return false
	}
	if !u.secret {
		u.secret = true
		for _, name := range u.err.unset {
			d.errs.warnf(n.pos, "a secret is not needed offline; plan and apply need it set",
				"%s: environment variable %s is not set", what, name)
		}
	}
	return true
}

// reportUnset reports, as the errors they are, the variables that are not
// set in scalars not read as secrets.
func (d *decoder) reportUnset() {
	for n, u := range d.unset {
		if !u.secret {
			d.errs.addf(n.pos, u.err.hint, "%s", u.err.msg)
		}
	}
}

// describe names a node's type and value for error messages.
func describe(n *node) string {
	if n == nil {
		return "nothing"
	}
	switch n.kind {
	case mapNode:
		return "a mapping"
	case seqNode:
		return "a list"
	}
	switch n.tag {
	case tagNull:
		return "null"
	case tagBool:
		return "boolean " + n.value
	case tagInt:
		return "integer " + n.value
	case tagFloat:
		return "number " + n.value
	default:
		return "string " + strconv.Quote(n.value)
	}
}

// label joins an object name and a field path: `queue "a": limits`.
func label(obj, path string) string {
	switch {
	case obj == "":
		return path
	case path == "":
		return obj
	default:
		return obj + ": " + path
	}
}

// fieldSet is the known fields present in one mapping, in source order: a
// few entries, the mapping's own (a slice of it when every field is
// known), looked up one by one. A map per mapping was a seventh of what
// loading a 10,000-object file allocated.
type fieldSet []entry

// get returns field name's entry, and whether it is present.
func (f fieldSet) get(name string) (entry, bool) {
	for _, e := range f {
		if e.key.value == name {
			return e, true
		}
	}
	return entry{}, false
}

// entry returns field name's entry, the zero entry when absent.
func (f fieldSet) entry(name string) entry { e, _ := f.get(name); return e }

func (f fieldSet) has(name string) bool { _, ok := f.get(name); return ok }

// value returns the node of field name, nil when absent.
func (f fieldSet) value(name string) *node { return f.entry(name).value }

// valuePos is where to report a problem with field name's value.
func (f fieldSet) valuePos(name string) topology.Pos {
	e := f.entry(name)
	if e.value == nil || e.value.isNull() && e.key != nil {
		return e.key.pos
	}
	return e.value.pos
}

// fields checks that n is a mapping (null counts as an empty one) whose
// keys are all in known, and returns the known fields present and not null.
func (d *decoder) fields(n *node, what string, known []string) (fieldSet, bool) {
	return d.fieldsHinted(n, what, known, nil)
}

// misplacedHint gives the hint for an unknown field key, with its value,
// that a user is likely to write there but belongs elsewhere; false for
// any other field.
type misplacedHint func(key string, value *node) (string, bool)

// hintsOf is the misplacedHint of fixed hints by field.
func hintsOf(hints map[string]string) misplacedHint {
	return func(key string, _ *node) (string, bool) {
		h, ok := hints[key]
		return h, ok
	}
}

// fieldsHinted is fields, with the hint of misplaced for an unknown field
// it names: a field a user is likely to write there that belongs
// elsewhere.
func (d *decoder) fieldsHinted(n *node, what string, known []string, misplaced misplacedHint) (fieldSet, bool) {
	// Never nil: some callers tell an empty mapping (or null) from a
	// field set not read at all.
	if n.isNull() {
		return fieldSet{}, true
	}
	if n.kind != mapNode {
		hint := "fields: " + strings.Join(known, ", ")
		// The one field a user meant a lone value or list for (e: topic,
		// dead_letter: dlx, retry: [10s, 1m]): that mapping is the fix.
		if sh, ok := shorthands[known[0]]; ok {
			switch {
			case n.kind == scalarNode && sh.scalar != "" && (sh.fits == nil || sh.fits(n)):
				hint = fmt.Sprintf("write it as {%s: %s}; %s", sh.scalar, n.value, hint)
			case n.kind == seqNode && sh.list != "":
				hint = fmt.Sprintf("write it as {%s: [%s]}; %s", sh.list, strings.Join(scalarValues(n), ", "), hint)
			}
		}
		d.errs.addf(n.pos, hint, "%s: expected a mapping, got %s", what, describe(n))
		return fieldSet{}, false
	}
	// The mapping's entries themselves when every one is known and none
	// is null (nearly always): nothing to copy.
	all := true
	for _, e := range n.entries {
		if e.value.isNull() || !slices.Contains(known, e.key.value) {
			all = false
			break
		}
	}
	if all && len(n.entries) > 0 {
		return fieldSet(n.entries), true
	}
	out := fieldSet{}
	for _, e := range n.entries {
		k := e.key.value
		if slices.Contains(known, k) {
			// A field set to null is as if not written (and so it keeps a
			// vhost default from applying).
			if !e.value.isNull() {
				out = append(out, e)
			}
			continue
		}
		if hint, ok := misplacedFor(misplaced, k, e.value); ok {
			d.errs.addf(e.key.pos, hint, "%s: unknown field %q", what, k)
		} else if what == "" {
			d.errs.addf(e.key.pos, suggestHint(k, known, "fields"), "unknown top-level field %q", k)
		} else {
			d.errs.addf(e.key.pos, suggestHint(k, known, "fields"), "%s: unknown field %q", what, k)
		}
	}
	return out, true
}

// misplacedFor is misplaced's hint for field k, written with value; false
// when there is none (or no misplaced).
func misplacedFor(misplaced misplacedHint, k string, value *node) (string, bool) {
	if misplaced == nil {
		return "", false
	}
	return misplaced(k, value)
}

// shorthands: for the mappings written as one value or one list, keyed by
// their first field (exchangeFields, queueFields, …), the field that value
// or list is most likely meant for.
// fits, when set, says whether the value can be that field's.
var shorthands = map[string]struct {
	scalar, list string
	fits         func(*node) bool
}{
	exchangeFields[0]: {scalar: "type", fits: func(n *node) bool { // "type" for queues too
		return slices.Contains(queueTypes, n.value) || slices.Contains(exchangeTypes, n.value) || strings.HasPrefix(n.value, "x-")
	}},
	deadLetterFields[0]: {scalar: "exchange", fits: isString},
	retryFields[0]:      {list: "delays"},
	limitsFields[0]:     {scalar: "max_length", fits: isInt},
	alertFields[0]:      {scalar: "max_depth", fits: isInt},
}

func isInt(n *node) bool { return n.kind == scalarNode && n.tag == tagInt }

// scalarValues are the values of list n, "…" for one that is no scalar.
func scalarValues(n *node) []string {
	out := make([]string, len(n.items))
	for i, it := range n.items {
		out[i] = "…"
		if it.kind == scalarNode {
			out[i] = it.value
		}
	}
	return out
}

// require reports a missing field.
func (d *decoder) require(f fieldSet, n *node, what, name, example string) bool {
	if f.has(name) {
		return true
	}
	if d.nullField(n, what, name, example) {
		return false
	}
	d.errs.addf(n.pos, "add "+example, "%s: missing required field %q", what, name)
	return false
}

// nullField reports, at its key, a required field name of mapping n
// (named what) written with no value (null, ~ or nothing after the
// colon), which fields drops as if not written: it is there, and empty,
// not missing. It says whether it did.
func (d *decoder) nullField(n *node, what, name, example string) bool {
	if n == nil || n.kind != mapNode {
		return false
	}
	for _, e := range n.entries {
		if e.key.value == name && e.value.isNull() {
			d.errs.addf(e.key.pos, "write "+example, "%s: %s is empty (null)", what, name)
			return true
		}
	}
	return false
}

func isString(n *node) bool { return n != nil && n.kind == scalarNode && n.tag == tagStr }

// typedTag is the tag a typed field reads n with: an interpolated string is
// resolved by its value, so that "${N}" can fill an integer field.
func typedTag(n *node) scalarTag {
	if n.kind == scalarNode && n.interpolated && n.tag == tagStr {
		return plainTag(n.value)
	}
	return n.tag
}

// textual reports whether a string field accepts n: a string, or any
// scalar that came from ${…} (the environment has no types).
func textual(n *node) bool {
	return isString(n) || (n.kind == scalarNode && n.interpolated)
}

func quoteHint(n *node) string {
	if n != nil && n.kind == scalarNode && n.tag != tagNull {
		return fmt.Sprintf("quote it to use it as text: %q", n.value)
	}
	return ""
}

func (d *decoder) str(n *node, what string) (string, bool) {
	if n.bad {
		return "", false
	}
	if textual(n) {
		return n.value, true
	}
	d.errs.addf(n.pos, quoteHint(n), "%s: expected a string, got %s", what, describe(n))
	return "", false
}

// name reads a non-empty string.
func (d *decoder) name(n *node, what, hint string) (string, bool) {
	s, ok := d.str(n, what)
	if ok && s == "" {
		d.errs.addf(n.pos, hint, "%s: must not be empty", what)
		return "", false
	}
	return s, ok
}

func (d *decoder) boolean(n *node, what string) (bool, bool) {
	if n.bad {
		return false, false
	}
	if n.kind == scalarNode && typedTag(n) == tagBool {
		return strings.EqualFold(n.value, "true"), true
	}
	hint := ""
	switch strings.ToLower(n.value) {
	case "yes", "no", "on", "off", "y", "n":
		if n.kind == scalarNode {
			hint = "YAML 1.2 booleans are only true and false"
		}
	}
	d.errs.addf(n.pos, hint, "%s: expected true or false, got %s", what, describe(n))
	return false, false
}

// parseInt reads a YAML integer (decimal, 0x, 0o, 0b, with _ separators).
func parseInt(s string) (int64, error) {
	s = strings.ReplaceAll(s, "_", "")
	if rest, ok := strings.CutPrefix(s, "+"); ok {
		s = rest
	}
	return strconv.ParseInt(s, 0, 64)
}

func (d *decoder) integer(n *node, what string, lo, hi int64) (int64, bool) {
	if n.bad {
		return 0, false
	}
	if n.kind != scalarNode || typedTag(n) != tagInt {
		d.errs.addf(n.pos, quoteHintNumber(n), "%s: expected %s, got %s", what, intRange(lo, hi), describe(n))
		return 0, false
	}
	i, err := parseInt(n.value)
	if err != nil || i < lo || i > hi {
		d.errs.addf(n.pos, "expected "+intRange(lo, hi), "%s: %s is out of range", what, n.value)
		return 0, false
	}
	return i, true
}

// quoteHintNumber helps with a number written as a quoted string.
func quoteHintNumber(n *node) string {
	if isString(n) {
		if _, err := parseInt(n.value); err == nil {
			return "remove the quotes"
		}
	}
	return ""
}

func intRange(lo, hi int64) string {
	switch {
	case hi == math.MaxInt64 && lo == 0:
		return "a non-negative integer"
	case hi == math.MaxInt64:
		return fmt.Sprintf("an integer of at least %d", lo)
	default:
		return fmt.Sprintf("an integer from %d to %d", lo, hi)
	}
}

// quantity reads an integer (in the base unit) or a string with a unit.
func (d *decoder) quantity(n *node, what, noun string, min int64, baseUnit string, parse func(string) (int64, error), guess func(string) string, help string) (int64, bool) {
	if n.bad {
		return 0, false
	}
	var v int64
	switch {
	case n.kind == scalarNode && typedTag(n) == tagInt:
		i, err := parseInt(n.value)
		if err != nil {
			d.errs.addf(n.pos, help, "%s: %s is out of range", what, n.value)
			return 0, false
		}
		v = i
	case isString(n):
		i, err := parse(n.value)
		if err != nil {
			hint := help
			if g := guess(n.value); g != "" && g != n.value {
				hint = fmt.Sprintf("write %s: one whole number and one unit; %s", g, strings.TrimPrefix(help, "write "))
			}
			d.errs.addf(n.pos, hint, "%s: invalid %s %q", what, strings.TrimPrefix(noun, "a "), n.value)
			return 0, false
		}
		v = i
	default:
		d.errs.addf(n.pos, help, "%s: expected %s, got %s", what, noun, describe(n))
		return 0, false
	}
	if v < min {
		d.errs.addf(n.pos, help, "%s: %s is too small (the minimum is %d%s)", what, n.value, min, baseUnit)
		return 0, false
	}
	return v, true
}

// duration reads milliseconds of at least min.
func (d *decoder) duration(n *node, what string, min int64) (int64, bool) {
	return d.quantity(n, what, "a duration", min, "ms", parseDuration, guessDuration, durationHelp)
}

// size reads bytes.
func (d *decoder) size(n *node, what string) (int64, bool) {
	return d.quantity(n, what, "a size", 0, " bytes", parseSize, guessSize, sizeHelp)
}

// enum reads one of allowed.
func (d *decoder) enum(n *node, what string, allowed ...string) (string, bool) {
	if n.bad {
		return "", false
	}
	if !textual(n) {
		d.errs.addf(n.pos, "expected one of "+strings.Join(allowed, ", "), "%s: expected a string, got %s", what, describe(n))
		return "", false
	}
	if slices.Contains(allowed, n.value) {
		return n.value, true
	}
	d.errs.addf(n.pos, suggestHint(n.value, allowed, "expected one of"), "%s: invalid value %q", what, n.value)
	return "", false
}

// args reads an argument table (null is none). Values keep their YAML
// types, normalised as topology.Normalize does. at maps each key to the
// node of its value, for error positions.
func (d *decoder) args(n *node, what, example string) (topology.Args, map[string]*node, bool) {
	if n.isNull() {
		return nil, nil, true
	}
	if n.kind != mapNode {
		d.errs.addf(n.pos, "write a mapping such as "+example, "%s: expected a mapping, got %s", what, describe(n))
		return nil, nil, false
	}
	out := topology.Args{}
	at := map[string]*node{}
	ok := true
	for _, e := range n.entries {
		v, vok := d.anyValue(e.value, what+"."+e.key.value)
		ok = ok && vok
		out[e.key.value] = v
		at[e.key.value] = e.value
	}
	return out, at, ok
}

// anyValue converts a node into a plain Go value: string, int64, float64,
// bool, nil, []any or map[string]any.
func (d *decoder) anyValue(n *node, what string) (any, bool) {
	if n.bad {
		return nil, false
	}
	switch n.kind {
	case mapNode:
		m := make(map[string]any, len(n.entries))
		ok := true
		for _, e := range n.entries {
			v, vok := d.anyValue(e.value, what+"."+e.key.value)
			ok = ok && vok
			m[e.key.value] = v
		}
		return m, ok
	case seqNode:
		l := make([]any, 0, len(n.items))
		ok := true
		for i, it := range n.items {
			v, vok := d.anyValue(it, fmt.Sprintf("%s[%d]", what, i))
			ok = ok && vok
			l = append(l, v)
		}
		return l, ok
	}
	switch n.tag {
	case tagNull:
		return nil, true
	case tagBool:
		return strings.EqualFold(n.value, "true"), true
	case tagInt:
		if i, err := parseInt(n.value); err == nil {
			return i, true
		}
		if u, err := strconv.ParseUint(strings.ReplaceAll(n.value, "_", ""), 0, 64); err == nil {
			return topology.Normalize(u), true
		}
		d.errs.addf(n.pos, quoteHint(n), "%s: integer %s is out of range", what, n.value)
		return nil, false
	case tagFloat:
		f, err := strconv.ParseFloat(strings.ReplaceAll(n.value, "_", ""), 64)
		if err != nil || math.IsInf(f, 0) || math.IsNaN(f) {
			d.errs.addf(n.pos, quoteHint(n), "%s: %s is not a finite number", what, n.value)
			return nil, false
		}
		return topology.Normalize(f), true
	default:
		return n.value, true
	}
}

// ignoresOf collects the mqctl:ignore IDs of the given nodes and all the
// nodes below them, each ID once, in order.
func ignoresOf(nodes ...*node) []string {
	var ids ignoreIDs
	for _, n := range nodes {
		ids.below(n)
	}
	return ids
}

// ignoreIDs gathers mqctl:ignore IDs, each once, in the order met; nil
// while there are none (nearly always: it allocates nothing then).
type ignoreIDs []string

// of adds the IDs of n itself.
func (ids *ignoreIDs) of(n *node) {
	if n == nil || n.ignore == nil {
		return
	}
	for _, id := range *n.ignore {
		if !slices.Contains(*ids, id) {
			*ids = append(*ids, id)
		}
	}
}

// below adds the IDs of n and of every node below it.
func (ids *ignoreIDs) below(n *node) {
	if n == nil {
		return
	}
	ids.of(n)
	for _, e := range n.entries {
		ids.below(e.key)
		ids.below(e.value)
	}
	for _, it := range n.items {
		ids.below(it)
	}
}

// suggestHint proposes the closest of known to got, or lists known.
func suggestHint(got string, known []string, listPrefix string) string {
	if s := suggest.Closest(got, known); s != "" {
		return fmt.Sprintf("did you mean %q?", s)
	}
	return listPrefix + ": " + strings.Join(known, ", ")
}
