package loader

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"regexp"
	"strconv"
	"strings"
	"unicode/utf8"

	"go.yaml.in/yaml/v3"

	"github.com/mqctl/mqctl/pkg/definitions"
	"github.com/mqctl/mqctl/pkg/topology"
)

// Limits that protect against hostile input.
const (
	// MaxFileSize is the largest topology file the loader reads.
	MaxFileSize = 10 << 20
	// MaxNodes is the most YAML nodes a file may hold, aliases expanded
	// (a 10,000-queue topology holds some 150,000).
	MaxNodes = 1_000_000
	// MaxValueBytes is the longest single value (a name, a key, an
	// argument) a file may hold.
	MaxValueBytes = 64 << 10
	// minNodeLimit is the node count a document may always expand to
	// through aliases; larger documents may expand to twice their size.
	minNodeLimit = 200_000
)

type nodeKind uint8

const (
	scalarNode nodeKind = iota + 1
	mapNode
	seqNode
)

// scalarTag is a scalar's YAML tag after resolution (timestamps and binary
// are strings to us). One byte rather than the tag's text: a 50,000-object
// file has some 250,000 nodes.
type scalarTag uint8

const (
	tagStr scalarTag = iota
	tagInt
	tagFloat
	tagBool
	tagNull
)

// resolvedTag maps a YAML short tag onto a scalarTag; ok is false for tags
// mqctl does not read.
func resolvedTag(short string) (t scalarTag, ok bool) {
	switch short {
	case "!!str", "!!timestamp", "!!binary":
		return tagStr, true
	case "!!int":
		return tagInt, true
	case "!!float":
		return tagFloat, true
	case "!!bool":
		return tagBool, true
	case "!!null":
		return tagNull, true
	}
	return tagStr, false
}

// node is a YAML node after alias resolution, merge keys and ${VAR}
// interpolation, with the position it was written at.
type node struct {
	// The one-byte fields come first, packed into one word: a
	// 50,000-object file has some 250,000 nodes.
	kind nodeKind
	tag  scalarTag // scalars only
	// interpolated marks a scalar that had ${…} or $$ replaced. Typed fields
	// read such a value by what it looks like even when it was quoted (as
	// it must be inside {…}), and string fields take it as text whatever
	// it looks like.
	interpolated bool
	// bad marks a scalar whose interpolation failed (already reported), so
	// that its value is not reported again as being of the wrong type.
	bad bool
	// templated marks a scalar of a vhost's defaults whose placeholder
	// ({queue}) substitute replaced with the object's name: a name it
	// holds is generated, and grows with the object's.
	templated bool
	value     string // scalars only
	pos       topology.Pos
	entries   []entry // mappings, in source order, keys unique
	items     []*node // sequences
	// ignore lists the lint rule IDs of `# mqctl:ignore …` comments written
	// before or after this node; nil for nearly every node.
	ignore *[]string
}

type entry struct {
	key   *node
	value *node
}

func (n *node) isNull() bool { return n == nil || (n.kind == scalarNode && n.tag == tagNull) }

// get returns the value of key in mapping n, or nil.
func (n *node) get(key string) *node {
	if n == nil {
		return nil
	}
	for _, e := range n.entries {
		if e.key.value == key {
			return e.value
		}
	}
	return nil
}

// parser turns one file's YAML into nodes.
type parser struct {
	file   string
	lookup func(string) (string, bool)
	errs   *collector
	limit  int
	count  int
	over   bool
	active map[*yaml.Node]bool  // anchors being expanded, to catch self-reference
	refs   map[*node]string     // see parseFile
	unset  map[*node]*unsetVars // see parseFile
	// shared counts the anchored nodes being converted. Outside them each
	// YAML node is read once, so convert drops it from its parent as soon as
	// it is copied: the YAML tree is freed while the node tree grows, and a
	// large file never holds both in full (see bench/results.md).
	shared int
}

// parseFile parses data (the contents of file) into a node tree, reporting
// problems to errs. It returns nil when nothing usable could be read.
// refs, when not nil, receives each scalar written as exactly one ${VAR}
// and the variable's name (for secrets: a saved plan names the variable,
// never the value). unset, when not nil, receives each scalar whose only
// problem is variables that are not set, instead of errs: the decoder
// reports it, as a warning where it reads a secret and as the error it is
// anywhere else (Options.SecretsOptional).
func parseFile(file string, data []byte, lookup func(string) (string, bool), errs *collector, refs map[*node]string, unset map[*node]*unsetVars) *node {
	return parseYAML(file, data, lookup, errs, refs, unset, true)
}

// parseYAML is parseFile, with the fast path (fastParse) tried first when
// fast is set.
func parseYAML(file string, data []byte, lookup func(string) (string, bool), errs *collector, refs map[*node]string, unset map[*node]*unsetVars, fast bool) *node {
	pos := topology.Pos{File: file}
	if len(data) > MaxFileSize {
		errs.addf(pos, "split the topology into several files", "file is %d bytes, more than the %d MiB limit", len(data), MaxFileSize>>20)
		return nil
	}
	if len(bytes.TrimSpace(data)) == 0 {
		errs.addf(pos, `a topology file starts with "version: 1"`, "file is empty")
		return nil
	}
	if off := invalidUTF8(data); off >= 0 {
		line := 1 + bytes.Count(data[:off], []byte("\n"))
		col := off - bytes.LastIndexByte(data[:off], '\n')
		errs.addf(topology.Pos{File: file, Line: line, Col: col}, "save the file as UTF-8",
			"invalid UTF-8 (byte 0x%02x at offset %d)", data[off], off)
		return nil
	}
	if definitions.Is(data) {
		// JSON is YAML: read as a topology, a definitions export gets an
		// error for each of its sections, none saying what the file is.
		src := file
		if file == StdinName {
			src = "-"
		}
		errs.addf(topology.Pos{File: file, Line: 1, Col: 1},
			fmt.Sprintf("turn it into one with \"mqctl export --from %s > topology.yaml\", then use that file", src),
			"this is a RabbitMQ definitions file (JSON, as GET /api/definitions or rabbitmqctl export_definitions write it), not an mqctl topology file")
		return nil
	}
	p := &parser{file: file, lookup: lookup, errs: errs, active: map[*yaml.Node]bool{}, refs: refs, unset: unset}
	if fast {
		if root, ok := fastParse(p, data); ok {
			return root
		}
	}
	doc, extra, err := decodeYAML(data)
	switch {
	case errors.Is(err, io.EOF):
		errs.addf(pos, `a topology file starts with "version: 1"`, "file holds only comments")
		return nil
	case err != nil:
		line, msg := syntaxErrorLine(err, data)
		line = contentLine(data, line)
		col, where := errorColumn(data, line, msg)
		if msg == "did not find expected key" {
			if l, c := misindented(data, line, col); l > 0 {
				where = fmt.Sprintf(" (this line is indented to no key of the mapping that starts at %d:%d, nor inside one)", line, col)
				line, col = l, c
			}
		}
		hint := ""
		if text := []rune(lineText(data, line)); col >= 1 && col <= len(text) && text[col-1] == '\t' {
			// The scanner says only "found character that cannot start
			// any token".
			hint = "YAML indents with spaces, never tabs: replace the tab with spaces"
		}
		if c := flowInterpolation(lineText(data, line)); c > 0 {
			// What breaks is the ${ ... } itself, read as a mapping.
			col, where = c, ""
			hint = `inside {…} or […], YAML reads the { of ${VAR} as the start of a mapping: write that mapping or list one entry per line, where ${VAR} needs no quotes and takes the type of its value, or quote it, "${VAR}", in a field of mqctl's own (a quoted ${…} takes the field's type there; in arguments, a policy's definition and headers it stays a string)`
		}
		errs.addf(topology.Pos{File: file, Line: line, Col: col}, hint, "invalid YAML: %s%s", msg, where)
		return nil
	case extra != nil:
		errs.addf(topology.Pos{File: file, Line: extra.Line, Col: extra.Column},
			"put each topology in its own file, or merge them into one document",
			"a second YAML document (---) starts here; a topology file holds one document")
		return nil
	}
	if len(doc.Content) == 0 {
		errs.addf(pos, `a topology file starts with "version: 1"`, "file is empty")
		return nil
	}
	size := countNodes(doc)
	if size > MaxNodes {
		errs.addf(pos, "split the topology into several files", "file holds %d YAML nodes, more than the %d the loader reads", size, MaxNodes)
		return nil
	}
	p.limit = min(MaxNodes, max(minNodeLimit, 2*size))
	root := p.convert(doc.Content[0])
	if p.over {
		errs.addf(pos, "expand fewer aliases (*name), or write the objects out",
			"YAML aliases expand this file to more than %d nodes; refusing it", p.limit)
		return nil
	}
	return root
}

// decodeYAML reads the first document of data and reports a second one.
// The YAML library is not trusted to never panic on hostile input.
func decodeYAML(data []byte) (doc *yaml.Node, extra *yaml.Node, err error) {
	defer func() {
		if r := recover(); r != nil {
			doc, extra, err = nil, nil, fmt.Errorf("yaml: parser failed: %v", r)
		}
	}()
	dec := yaml.NewDecoder(bytes.NewReader(data))
	doc = &yaml.Node{}
	if err := dec.Decode(doc); err != nil {
		return nil, nil, err
	}
	var next yaml.Node
	switch err := dec.Decode(&next); {
	case err == nil:
		return doc, &next, nil
	case errors.Is(err, io.EOF):
		return doc, nil, nil
	default:
		return nil, nil, err
	}
}

// countNodes counts the nodes of a document without following aliases.
func countNodes(n *yaml.Node) int {
	c := 1
	for _, ch := range n.Content {
		c += countNodes(ch)
	}
	return c
}

// Problems reported by yaml's parser (as opposed to its scanner). For those
// the library prints a zero-based line number; see syntaxErrorLine.
var parserProblems = []string{
	"did not find expected <stream-start>",
	"did not find expected <document start>",
	"found undefined tag handle",
	"did not find expected node content",
	"did not find expected '-' indicator",
	"did not find expected key",
	"did not find expected ',' or ']'",
	"did not find expected ',' or '}'",
	"found duplicate %YAML directive",
	"found incompatible YAML document",
	"found duplicate %TAG directive",
}

var (
	yamlLineRe   = regexp.MustCompile(`^yaml: line (\d+): (.*)$`)
	yamlAnchorRe = regexp.MustCompile(`^yaml: unknown anchor '(.*)' referenced$`)
)

// syntaxErrorLine extracts a one-based line number and the problem from a
// yaml syntax error. The library prints scanner errors with one-based lines,
// parser errors with zero-based lines, and omits the line when it is zero.
func syntaxErrorLine(err error, data []byte) (int, string) {
	msg := err.Error()
	if m := yamlAnchorRe.FindStringSubmatch(msg); m != nil {
		return lineOf(data, "*"+m[1]), fmt.Sprintf("alias *%s refers to no anchor &%s defined before it", m[1], m[1])
	}
	line := 0
	if m := yamlLineRe.FindStringSubmatch(msg); m != nil {
		line, _ = strconv.Atoi(m[1])
		msg = m[2]
	} else {
		msg = strings.TrimPrefix(msg, "yaml: ")
	}
	for _, p := range parserProblems {
		if msg == p {
			return line + 1, msg
		}
	}
	if line == 0 {
		line = 1
	}
	return line, msg
}

// contentLine returns line, or the last line with content before it when
// it has none (an error at the end of the file: an unclosed collection is
// on a line above).
func contentLine(data []byte, line int) int {
	for l := line; l > 1; l-- {
		if strings.TrimSpace(lineText(data, l)) != "" {
			return l
		}
	}
	return line
}

// errorColumn finds the one-based column of a syntax error on line (the
// library reports the line only) and says what is there when the column is
// not the problem itself but where the broken construct starts. For an
// unclosed or broken flow collection the library reports the line where it
// opens: the column is its bracket. Otherwise it is the offending
// character where one can be told (a tab, an unmatched quote, a second ":"
// on the line), else the line's first character that is not a space.
func errorColumn(data []byte, line int, msg string) (col int, where string) {
	text := lineText(data, line)
	first := 1 + len(text) - len(strings.TrimLeft(text, " \t"))
	if strings.TrimSpace(text) == "" {
		return 1, ""
	}
	if name, ok := strings.CutPrefix(msg, "alias *"); ok {
		if i := strings.Index(text, "*"+strings.SplitN(name, " ", 2)[0]); i >= 0 {
			return i + 1, ""
		}
	}
	switch msg {
	case "did not find expected node content":
		for _, open := range []byte{'[', '{'} {
			if c := flowStart(text, open); c > 0 {
				return c, " (the flow collection that starts here is never closed)"
			}
		}
	case "did not find expected ',' or ']'":
		if c := flowStart(text, '['); c > 0 {
			return c, " (in the flow sequence [...] that starts here: is a ',' or the closing ']' missing?)"
		}
	case "did not find expected ',' or '}'":
		if c := flowStart(text, '{'); c > 0 {
			return c, " (in the flow mapping {...} that starts here: is a ',' or the closing '}' missing?)"
		}
	case "found character that cannot start any token":
		if i := strings.IndexAny(text, "\t@`"); i >= 0 {
			return i + 1, ""
		}
	case "found unexpected end of stream":
		if c := openQuote(text); c > 0 {
			return c, " (the quoted string that starts here is never closed)"
		}
	case "mapping values are not allowed in this context":
		if i := strings.Index(text, ": "); i >= 0 {
			if j := strings.Index(text[i+2:], ":"); j >= 0 {
				return i + 2 + j + 1, ""
			}
		}
	}
	return first, ""
}

// misindented finds, below the block mapping whose first key is at line:col,
// the first line indented to none of the levels opened above it (a key
// that belongs neither to that mapping nor inside one of its values), and
// returns its line and column; 0, 0 when there is none.
func misindented(data []byte, line, col int) (int, int) {
	levels := []int{col - 1}
	last := bytes.Count(data, []byte("\n")) + 1
	for l := line + 1; l <= last; l++ {
		text := lineText(data, l)
		trimmed := strings.TrimLeft(text, " ")
		if trimmed == "" || strings.HasPrefix(trimmed, "#") {
			continue
		}
		indent := len(text) - len(trimmed)
		if indent < levels[0] {
			return 0, 0
		}
		popped := false
		for len(levels) > 1 && levels[len(levels)-1] > indent {
			levels, popped = levels[:len(levels)-1], true
		}
		switch top := levels[len(levels)-1]; {
		case indent == top:
		case popped || indent < top:
			return l, indent + 1
		default:
			levels = append(levels, indent)
		}
	}
	return 0, 0
}

// lineText returns one-based line of data without its line break ("" past
// the end).
func lineText(data []byte, line int) string {
	for i := 1; i < line; i++ {
		nl := bytes.IndexByte(data, '\n')
		if nl < 0 {
			return ""
		}
		data = data[nl+1:]
	}
	if nl := bytes.IndexByte(data, '\n'); nl >= 0 {
		data = data[:nl]
	}
	return strings.TrimRight(string(data), "\r")
}

// flowStart returns the one-based column of the flow collection opened by
// open on a line: the innermost one left open at the end of the line, else
// the last one opened (quotes and comments skipped); 0 when none.
func flowStart(text string, open byte) int {
	var stack []int // columns of open brackets of both kinds, with their kind
	var kinds []byte
	last := 0
	unquoted(text, func(i int, c byte) {
		switch {
		case c == '[' || c == '{':
			stack, kinds = append(stack, i+1), append(kinds, c)
			if c == open {
				last = i + 1
			}
		case (c == ']' || c == '}') && len(stack) > 0:
			stack, kinds = stack[:len(stack)-1], kinds[:len(kinds)-1]
		}
	})
	for i := len(stack) - 1; i >= 0; i-- {
		if kinds[i] == open {
			return stack[i]
		}
	}
	return last
}

// openQuote returns the one-based column of a quote left open at the end
// of a line, or 0.
func openQuote(text string) int { return unquoted(text, func(int, byte) {}) + 1 }

// flowInterpolation returns the column of the first ${ outside quoted
// strings that follows the opening of a flow collection ({ or [) on a
// line, 0 when there is none: there YAML reads its { as a mapping.
func flowInterpolation(text string) int {
	col, open := 0, false
	unquoted(text, func(i int, c byte) {
		switch {
		case c == '{' && i > 0 && text[i-1] == '$':
			if open && col == 0 {
				col = i // the $ is at index i-1: column i
			}
		case c == '[' || c == '{':
			open = true
		}
	})
	return col
}

// unquoted calls f with each byte of a line outside quoted strings and
// comments, and returns the index of the quote that starts a string left
// open at the end of the line, or -1.
func unquoted(text string, f func(i int, c byte)) int {
	var quote byte
	at := -1
	for i := 0; i < len(text); i++ {
		c := text[i]
		switch {
		case quote != 0:
			if c == quote {
				quote, at = 0, -1
			}
		case c == '\'' || c == '"':
			quote, at = c, i
		case c == '#' && (i == 0 || text[i-1] == ' ' || text[i-1] == '\t'):
			return -1
		default:
			f(i, c)
		}
	}
	return at
}

// lineOf returns the one-based line of the first occurrence of s, or 0.
func lineOf(data []byte, s string) int {
	i := bytes.Index(data, []byte(s))
	if i < 0 {
		return 0
	}
	return bytes.Count(data[:i], []byte("\n")) + 1
}

func (p *parser) pos(y *yaml.Node) topology.Pos {
	return topology.Pos{File: p.file, Line: y.Line, Col: y.Column}
}

// convert copies y into a node: aliases are expanded (within p.limit),
// merge keys (<<) applied, duplicate keys reported and scalars interpolated.
func (p *parser) convert(y *yaml.Node) *node {
	p.count++
	if p.count > p.limit {
		p.over = true
	}
	if p.over {
		return &node{kind: scalarNode, tag: tagNull}
	}
	if y.Anchor != "" && y.Kind != yaml.AliasNode {
		// An alias of this node inside it would expand forever.
		p.active[y] = true
		p.shared++
		defer func() { delete(p.active, y); p.shared-- }()
	}
	switch y.Kind {
	case yaml.AliasNode:
		if y.Alias == nil || p.active[y.Alias] {
			p.errs.addf(p.pos(y), "an anchor cannot contain an alias of itself", "alias *%s refers to the node that contains it", y.Value)
			return &node{kind: scalarNode, tag: tagNull, pos: p.pos(y)}
		}
		p.active[y.Alias] = true
		p.shared++
		n := p.convert(y.Alias)
		p.shared--
		delete(p.active, y.Alias)
		return n
	case yaml.MappingNode:
		return p.mapping(y)
	case yaml.SequenceNode:
		n := &node{kind: seqNode, pos: p.pos(y), ignore: commentIgnores(y), items: make([]*node, 0, len(y.Content))}
		for i, c := range y.Content {
			n.items = append(n.items, p.convert(c))
			p.release(y, i)
		}
		return n
	case yaml.DocumentNode:
		if len(y.Content) == 0 {
			return &node{kind: scalarNode, tag: tagNull, pos: p.pos(y)}
		}
		return p.convert(y.Content[0])
	default:
		return p.scalar(y)
	}
}

// release drops child i of y once it is copied, unless y may be read again
// through an alias.
func (p *parser) release(y *yaml.Node, i int) {
	if p.shared == 0 {
		y.Content[i] = nil
	}
}

func (p *parser) scalar(y *yaml.Node) *node {
	n := &node{kind: scalarNode, value: y.Value, pos: p.pos(y), ignore: commentIgnores(y)}
	tag, known := resolvedTag(y.ShortTag())
	n.tag = tag
	if !known {
		p.errs.addf(n.pos, "remove the tag; mqctl reads plain YAML values", "unsupported YAML tag %s", y.ShortTag()) // the value may be a secret (password: !vault …)
		n.bad = true
		return n
	}
	return p.finishScalar(n, y.Style&(yaml.TaggedStyle|yaml.DoubleQuotedStyle|yaml.SingleQuotedStyle|yaml.LiteralStyle|yaml.FoldedStyle) == 0)
}

// finishScalar checks scalar n's length and interpolates it; plain says
// it was written unquoted and untagged, and is then typed after
// interpolation. The fast path (fastParse) finishes its scalars here too.
func (p *parser) finishScalar(n *node, plain bool) *node {
	raw := n.value
	if len(raw) > MaxValueBytes {
		p.errs.addf(n.pos, "mqctl reads values of at most 64 KiB", "value is %d bytes long", len(raw))
		n.value, n.bad = "", true
		return n
	}
	v, changed, ierr := interpolate(raw, p.lookup)
	if ierr != nil {
		n.bad = true
		if p.unset != nil && ierr.unset != nil {
			// Kept as written, which holds no secret; reported by the
			// decoder (decoder.unsetSecret, decoder.reportUnset).
			p.unset[n] = &unsetVars{err: ierr}
			p.ref(n, raw)
			return n
		}
		p.errs.addf(n.pos, ierr.hint, "%s", ierr.msg)
		return n
	}
	if len(v) > MaxValueBytes {
		p.errs.addf(n.pos, "mqctl reads values of at most 64 KiB", "value is %d bytes long after ${…} substitution", len(v))
		n.value, n.bad = "", true
		return n
	}
	if !changed {
		return n
	}
	n.value = v
	n.interpolated = true
	p.errs.interpolated(n, v, raw)
	p.ref(n, raw)
	// A plain (unquoted, untagged) scalar is typed after interpolation, so
	// that `max_priority: ${P:-10}` is the integer 10.
	if plain {
		n.tag = plainTag(v)
	}
	return n
}

// ref records in p.refs the variable of scalar n when it was written as
// exactly one ${VAR} (raw).
func (p *parser) ref(n *node, raw string) {
	if p.refs != nil && strings.HasPrefix(raw, "${") && strings.HasSuffix(raw, "}") && validVarName(raw[2:len(raw)-1]) {
		p.refs[n] = raw[2 : len(raw)-1]
	}
}

func (p *parser) mapping(y *yaml.Node) *node {
	n := &node{kind: mapNode, pos: p.pos(y), ignore: commentIgnores(y)}
	seen := map[string]*node{}
	var merges []*yaml.Node
	for i := 0; i+1 < len(y.Content); i += 2 {
		ky, vy := y.Content[i], y.Content[i+1]
		if ky.Kind == yaml.ScalarNode && ky.ShortTag() == "!!merge" {
			merges = append(merges, vy)
			continue
		}
		k := p.convert(ky)
		delete(p.errs.hidden, k) // a name, shown
		v := p.convert(vy)
		p.release(y, i)
		p.release(y, i+1)
		if p.over {
			return n
		}
		if k.kind != scalarNode {
			p.errs.addf(k.pos, "use a plain name as the key", "a mapping key must be a scalar, got %s", describe(k))
			continue
		}
		if first, dup := seen[k.value]; dup {
			p.errs.addf(k.pos, "each key may appear once in a mapping; remove or rename one",
				"key %q is already set at %s", k.value, first.pos)
			continue
		}
		seen[k.value] = k
		n.entries = append(n.entries, entry{key: k, value: v})
	}
	// Merge keys: entries of the merged mappings that the mapping does not
	// set itself, earlier merged mappings first.
	for _, my := range merges {
		m := p.convert(my)
		var sources []*node
		switch m.kind {
		case mapNode:
			sources = []*node{m}
		case seqNode:
			sources = m.items
		}
		for _, src := range sources {
			if src.kind != mapNode {
				p.errs.addf(src.pos, "write <<: *anchor or <<: [*a, *b] with anchors of mappings", "merge key << needs a mapping, got %s", describe(src))
				continue
			}
			for _, e := range src.entries {
				if _, ok := seen[e.key.value]; ok {
					continue
				}
				seen[e.key.value] = e.key
				n.entries = append(n.entries, e)
			}
		}
		if len(sources) == 0 {
			p.errs.addf(m.pos, "write <<: *anchor or <<: [*a, *b] with anchors of mappings", "merge key << needs a mapping, got %s", describe(m))
		}
	}
	return n
}

// plainTag is the tag YAML resolves an unquoted scalar v to.
func plainTag(v string) scalarTag {
	if v == "" {
		return tagNull
	}
	// The library's first test: a scalar whose first character can start
	// no number, boolean, null or merge key is a string. Two more of its
	// cases are read here, as it reads them, and not through a node of
	// its own for each (two allocations, 5 per queue of make bench's
	// file): a scalar that starts with one of "yYnNtTfFoO~<" is a
	// boolean, a null or a merge key (which mqctl reads as a string) as
	// its table of those says, else a string (type, topic, overflow); a
	// decimal integer without a leading zero that fits 64 bits is an
	// integer (10000).
	switch c := v[0]; {
	case !strings.ContainsRune("+-0123456789yYnNtTfFoO~<.", rune(c)):
		return tagStr
	case strings.IndexByte("yYnNtTfFoO~<", c) >= 0:
		switch v {
		case "true", "True", "TRUE", "false", "False", "FALSE":
			return tagBool
		case "~", "null", "Null", "NULL":
			return tagNull
		}
		return tagStr
	case c >= '1' && c <= '9' && len(v) <= 18 && strings.Trim(v, "0123456789") == "":
		return tagInt
	}
	t, _ := resolvedTag((&yaml.Node{Kind: yaml.ScalarNode, Value: v}).ShortTag())
	return t
}

// commentIgnores returns the rule IDs of `mqctl:ignore` comments written
// before or on the same line as y, or nil.
func commentIgnores(y *yaml.Node) *[]string {
	if y.HeadComment == "" && y.LineComment == "" {
		return nil
	}
	ids := parseIgnores(y.HeadComment + "\n" + y.LineComment)
	if len(ids) == 0 {
		return nil
	}
	return &ids
}

// parseIgnores reads "# mqctl:ignore MQ101 MQ301" and "# mqctl:ignore
// MQ101, MQ301 reason…": IDs up to the first word that is not one.
func parseIgnores(comment string) []string {
	const marker = "mqctl:ignore"
	var ids []string
	for line := range strings.SplitSeq(comment, "\n") {
		i := strings.Index(line, marker)
		if i < 0 {
			continue
		}
		words := strings.FieldsFunc(line[i+len(marker):], func(r rune) bool { return r == ' ' || r == '\t' || r == ',' })
		for _, w := range words {
			if !isRuleID(w) {
				break
			}
			ids = append(ids, w)
		}
	}
	return ids
}

// isRuleID accepts "all" and IDs such as MQ101.
func isRuleID(w string) bool {
	if w == "all" {
		return true
	}
	i := 0
	for i < len(w) && w[i] >= 'A' && w[i] <= 'Z' {
		i++
	}
	if i == 0 || i == len(w) {
		return false
	}
	for _, r := range w[i:] {
		if r < '0' || r > '9' {
			return false
		}
	}
	return true
}

// invalidUTF8 returns the offset of the first byte that is not valid
// UTF-8, or -1.
func invalidUTF8(data []byte) int {
	if utf8.Valid(data) {
		return -1
	}
	for off := 0; off < len(data); {
		r, size := utf8.DecodeRune(data[off:])
		if r == utf8.RuneError && size <= 1 {
			return off
		}
		off += size
	}
	return -1
}
