package loader

import (
	"bytes"
	"maps"
	"strings"
	"unicode/utf8"
	"unsafe"

	"github.com/mqctl/mqctl/internal/intern"
	"github.com/mqctl/mqctl/pkg/topology"
)

// The fast path: most topology files are written in a small part of YAML
// (block mappings and sequences, one-line flow collections, plain and
// one-line quoted scalars, comments, a "---" that starts the document),
// and the YAML library reads them at some 18 MB/s, building a tree that is
// then copied into nodes. fastParse reads that part of YAML straight into
// nodes, about three times faster and without the library's tree (at
// 10,000 objects the library's part of loading the file was 40% of it,
// and of a no-op plan's CPU a quarter; bench/4.3/results.md).
//
// It never decides anything the library would decide differently: at the
// first thing outside that part, or anything it is not sure of (anchors,
// aliases, tags, merge keys, block scalars, a scalar over two lines,
// escapes other than \\ and \", tabs, control characters, `mqctl:ignore`
// comments, duplicate keys, an empty value in a flow collection, nesting
// past maxDepth, any error), it gives up and parseFile reads the file with
// the library as before, which then reports what is wrong.
// TestFastParseMatchesLibrary, TestFastParseReadsTheProjectsFiles and
// FuzzFastParse check that whatever it reads, it reads as the library
// does: values, tags, positions, errors and variables.

// fastBail is the panic with which the fast path gives up.
type fastBail struct{}

type fastParser struct {
	file    string
	data    string // the file's bytes, read in place (readFast)
	i       int    // cursor
	line    int    // one-based line of the cursor
	bol     int    // offset where the cursor's line begins
	ind     int    // column (zero-based) of the block content the cursor is at
	count   int    // nodes read
	depth   int    // collections open
	started bool   // past the start of the document, where markers give up
	ascii   bool   // columns are byte offsets
	// runes is the number of characters between the start of the line
	// and runesFrom (pos, for a file that is not ASCII).
	runes, runesFrom int
	// fin finishes each scalar as it is read (parser.finishScalar),
	// reporting into a collector and maps of its own, which become the
	// caller's only once the whole file is read: a fast path that gives up
	// has reported nothing.
	fin *parser
	// guess: a scalar is read to tell what follows it (isKey), not kept.
	guess bool
	// The nodes, and the entries and items of collections, are carved
	// from blocks rather than allocated one by one (a 50,000-object file
	// has some 250,000 nodes): nodes is the rest of the current block of
	// nodes, entryBlock and itemBlock of entries and items. entries and
	// items are stacks of the collections being read: each collection's
	// so far, from where it began, moved to a block of its exact size
	// once it ends.
	nodes      []node
	entries    []entry
	items      []*node
	entryBlock []entry
	itemBlock  []*node
	// Scalars are copied out of the file's text (keep), so that the names
	// a plan holds on to do not hold the whole text (2.9 MB at 50,002
	// objects): text is the rest of the current block they are copied
	// to, and seen the strings already kept, up to intern.Max of them,
	// which the same scalar again (a key, "events.dlx") shares.
	text []byte
	seen *intern.Table[string]
}

// Sizes of the blocks the fast path carves nodes, entries and items from:
// each fills the allocator's 32 KiB or 16 KiB size class (a block of 256
// nodes, 28 KiB, took 32). A block is freed once none of its nodes is
// held: the node tree of a large file is freed as its objects are built,
// in the order the file is read, as it was node by node.
const (
	nodeBlock  = int(32768 / unsafe.Sizeof(node{}))
	entryBlock = int(32768 / unsafe.Sizeof(entry{}))
	itemBlock  = int(16384 / unsafe.Sizeof((*node)(nil)))
	// textBlock is the size of the blocks scalars are copied to; a
	// scalar over a quarter of it has its own copy.
	textBlock = 8192
)

// fastParse reads data with the fast path; ok is false when it gave up,
// and then nothing has been reported or recorded.
func fastParse(p *parser, data []byte) (root *node, ok bool) {
	root, ok, _ = readFast(p, data)
	return root, ok
}

// readFast is fastParse, and says what panicked if something did: a
// mistake of the fast path, which the user never sees (the library reads
// the file instead) but the tests do.
func readFast(p *parser, data []byte) (root *node, ok bool, crash any) {
	ok, ascii := fastCandidate(data)
	if !ok {
		return nil, false, nil
	}
	fin := &parser{file: p.file, lookup: p.lookup, errs: newCollector()}
	if p.refs != nil {
		fin.refs = map[*node]string{}
	}
	if p.unset != nil {
		fin.unset = map[*node]*unsetVars{}
	}
	// The file is read in place, not copied: what the nodes keep of it is
	// copied (keep, quoted's unescaping), so nothing refers to data once
	// the file is read.
	f := &fastParser{file: p.file, data: unsafe.String(unsafe.SliceData(data), len(data)), line: 1, ascii: ascii, fin: fin}
	defer func() {
		if r := recover(); r != nil {
			if _, bail := r.(fastBail); !bail {
				crash = r
			}
			root, ok = nil, false
		}
	}()
	if !f.documentStart() || !f.nextContent() {
		return nil, false, nil
	}
	root = f.block()
	if f.i < len(f.data) {
		f.bail() // content left over, less indented than the root
	}
	p.errs.errs = append(p.errs.errs, fin.errs.errs...)
	for n, h := range fin.errs.hidden {
		p.errs.interpolated(n, h.Value, h.Raw)
	}
	maps.Copy(p.refs, fin.refs)
	maps.Copy(p.unset, fin.unset)
	return root, true, nil
}

// fastCandidate rules out, at a glance, files the fast path would give up on
// anyway or must not read: control characters (tabs and CR included),
// characters the library reads as line breaks, a byte order mark, and lint
// suppressions, which the library attaches to nodes by rules of its own;
// ascii says whether columns are byte offsets.
func fastCandidate(data []byte) (ok, ascii bool) {
	ascii = true
	for i := 0; i < len(data); {
		c := data[i]
		if c < 0x80 {
			if (c < 0x20 && c != '\n') || c == 0x7f {
				return false, false
			}
			i++
			continue
		}
		// The library refuses C1 controls and reads U+0085, U+2028 and
		// U+2029 as line breaks; U+FEFF is a byte order mark.
		r, size := utf8.DecodeRune(data[i:])
		if r == utf8.RuneError && size == 1 || r <= 0x9f || r == 0x2028 || r == 0x2029 || r == 0xfeff || r >= 0xfffe && r <= 0xffff {
			return false, false
		}
		ascii = false
		i += size
	}
	return !bytes.Contains(data, []byte("mqctl:ignore")), ascii
}

func (f *fastParser) bail() { panic(fastBail{}) }

func (f *fastParser) at(i int) byte {
	if i < len(f.data) {
		return f.data[i]
	}
	return '\n'
}

func (f *fastParser) pos() topology.Pos {
	if f.ascii {
		return topology.Pos{File: f.file, Line: f.line, Col: f.i - f.bol + 1}
	}
	// The library counts characters. They are counted on from the last
	// position asked for on the line, so that a long line with many values
	// is read once, not once per value.
	if f.runesFrom < f.bol || f.runesFrom > f.i {
		f.runesFrom, f.runes = f.bol, 0
	}
	f.runes += utf8.RuneCountInString(f.data[f.runesFrom:f.i])
	f.runesFrom = f.i
	return topology.Pos{File: f.file, Line: f.line, Col: f.runes + 1}
}

func (f *fastParser) newNode(k nodeKind) *node {
	f.count++
	if f.count > MaxNodes {
		f.bail()
	}
	if len(f.nodes) == 0 {
		f.nodes = make([]node, nodeBlock)
	}
	// Zeroed, and never handed out twice (the node a guess reads, isKey,
	// is left unused): set field by field, as a whole node would be
	// written with the collector's bulk barrier while it marks.
	n := &f.nodes[0]
	f.nodes = f.nodes[1:]
	n.kind, n.pos = k, f.pos()
	return n
}

// carve moves the top of stack, from start, to a slice of its own size
// carved from *block (a new block when it has too little room left, or
// one of the slice's own size for a long one), and pops it from stack;
// nil when empty.
func carve[T any](stack *[]T, start int, block *[]T, size int) []T {
	top := (*stack)[start:]
	n := len(top)
	if n == 0 {
		return nil
	}
	var out []T
	switch b := *block; {
	case n > size/4:
		out = make([]T, n)
	case cap(b)-len(b) < n:
		b = make([]T, 0, size)
		fallthrough
	default:
		out = b[len(b) : len(b)+n : len(b)+n]
		*block = b[:len(b)+n]
	}
	copy(out, top)
	clear(top) // no pointers left behind in the stack
	*stack = (*stack)[:start]
	return out
}

// maxKey is the longest key the fast path reads; the library reads keys
// of up to 1,024 characters its own way.
const maxKey = 1000

// maxDepth is how deep the fast path nests collections; past it the
// library decides (it refuses files nested over 10,000 deep).
const maxDepth = 1000

// open starts a collection one level deeper, which leave ends.
func (f *fastParser) open(k nodeKind) *node {
	f.depth++
	if f.depth > maxDepth {
		f.bail()
	}
	return f.newNode(k)
}

func (f *fastParser) leave() { f.depth-- }

// documentStart reads a "---" that starts the document on a line of its
// own, after blank lines and comments only; false at the end of the file.
// Any other marker is left to nextContent, which gives up on it.
func (f *fastParser) documentStart() bool {
	if !f.nextContent() {
		return false
	}
	f.started = true
	if f.ind == 0 && f.hasPrefixAt(f.i, "---") && f.at(f.i+3) == '\n' {
		f.i += 3
		if f.i >= len(f.data) {
			return false
		}
		f.i++
		f.bol, f.line = f.i, f.line+1
	} else {
		f.i = f.bol // the line is read again
	}
	return true
}

// nextContent moves the cursor from the start of a line to the first
// character of the next line with content, skipping blank lines and
// comments, and sets f.ind to its indentation; false at the end.
func (f *fastParser) nextContent() bool {
	for f.i < len(f.data) {
		j := f.i
		for j < len(f.data) && f.data[j] == ' ' {
			j++
		}
		c := f.at(j)
		if c == '\n' || c == '#' {
			nl := strings.IndexByte(f.data[j:], '\n')
			if nl < 0 {
				f.i = len(f.data)
				return false
			}
			f.i = j + nl + 1
			f.bol, f.line = f.i, f.line+1
			continue
		}
		if j == f.i && f.started && (c == '%' || f.hasPrefixAt(j, "---") || f.hasPrefixAt(j, "...")) {
			f.bail() // directives and document markers
		}
		f.i, f.ind = j, j-f.bol
		return true
	}
	return false
}

func (f *fastParser) hasPrefixAt(i int, s string) bool {
	return strings.HasPrefix(f.data[i:], s)
}

// endLine reads the rest of a line after a value: spaces, then a comment
// or nothing, and moves to the next line with content; false at the end.
func (f *fastParser) endLine() bool {
	if !f.lineEnds() {
		f.bail()
	}
	for f.i < len(f.data) && f.data[f.i] != '\n' {
		f.i++
	}
	if f.i >= len(f.data) {
		return false
	}
	f.i++
	f.bol, f.line = f.i, f.line+1
	return f.nextContent()
}

// dash reports whether the cursor is at a block sequence entry's "-".
func (f *fastParser) dash() bool {
	return f.at(f.i) == '-' && (f.at(f.i+1) == ' ' || f.at(f.i+1) == '\n')
}

// block reads the block node at the cursor, whose indentation is f.ind.
func (f *fastParser) block() *node {
	switch c := f.at(f.i); {
	case f.dash():
		return f.sequence(f.ind)
	case c == '{' || c == '[':
		n := f.inline(false)
		if f.endLine() {
			f.bail() // a flow collection as a block: only alone in a file
		}
		return n
	}
	return f.mapping(f.ind)
}

// more reports, after an entry, whether the block at ind goes on: the
// cursor is at a line of that indentation. A line indented more than the
// block, but not inside one of its entries, gives up.
func (f *fastParser) more(ind int) bool {
	if f.i >= len(f.data) || f.ind < ind {
		return false
	}
	if f.ind > ind {
		f.bail()
	}
	return true
}

func (f *fastParser) mapping(ind int) *node {
	n := f.open(mapNode)
	defer f.leave()
	start := len(f.entries)
	var keys keySet
	for {
		k := f.key(false)
		var v *node
		if at := f.pos(); f.lineEnds() {
			switch more := f.endLine(); {
			case more && f.ind > ind:
				v = f.block()
			case more && f.ind == ind && f.dash():
				v = f.sequence(ind)
			default:
				v = f.empty(at)
			}
		} else {
			v = f.inline(false)
			if f.endLine() && f.ind > ind {
				f.bail() // a scalar over two lines
			}
		}
		keys.add(f, start, k, v)
		if !f.more(ind) {
			n.entries = carve(&f.entries, start, &f.entryBlock, entryBlock)
			return n
		}
		if f.dash() {
			f.bail()
		}
	}
}

// lineEnds skips spaces and reports whether the line ends there (a
// comment, or nothing).
func (f *fastParser) lineEnds() bool {
	f.skipSpaces()
	c := f.at(f.i)
	return c == '\n' || (c == '#' && f.data[f.i-1] == ' ')
}

func (f *fastParser) sequence(ind int) *node {
	n := f.open(seqNode)
	defer f.leave()
	start := len(f.items)
	for {
		f.i++ // the "-"
		var item *node
		if at := f.pos(); f.lineEnds() {
			if more := f.endLine(); more && f.ind > ind {
				item = f.block()
			} else {
				item = f.empty(at)
			}
		} else {
			f.ind = f.i - f.bol
			switch {
			case f.dash():
				f.bail() // "- - a"
			case f.isKey():
				item = f.mapping(f.ind)
			default:
				item = f.inline(false)
				if f.endLine() && f.ind > ind {
					f.bail()
				}
			}
		}
		f.items = append(f.items, item)
		if !f.more(ind) || !f.dash() {
			n.items = carve(&f.items, start, &f.itemBlock, itemBlock)
			return n
		}
	}
}

// empty is the null a key or an entry without a value holds; the library
// places it just after the ":" or the "-".
func (f *fastParser) empty(at topology.Pos) *node {
	n := f.newNode(scalarNode)
	n.pos, n.tag = at, tagNull
	f.finish(n, true)
	return n
}

// finish finishes scalar n (interpolation, length), unless it is read to
// guess what follows it.
func (f *fastParser) finish(n *node, plain bool) {
	if !f.guess {
		f.fin.finishScalar(n, plain)
	}
}

// isKey reports whether a mapping key starts at the cursor.
func (f *fastParser) isKey() bool {
	i, count := f.i, f.count
	f.guess = true
	defer func() { f.i, f.count, f.guess = i, count, false }()
	if c := f.at(f.i); c == '{' || c == '[' {
		return false
	}
	f.scalar(false)
	return f.at(f.i) == ':'
}

// key reads a mapping's key and its ":", which a space follows (or, in a
// block, the end of the line).
func (f *fastParser) key(flow bool) *node {
	if c := f.at(f.i); c == '{' || c == '[' {
		f.bail()
	}
	start := f.i
	k := f.scalar(flow)
	if f.at(f.i) != ':' || f.i-start > maxKey {
		f.bail()
	}
	f.i++
	if c := f.at(f.i); c != ' ' && (flow || c != '\n') {
		f.bail()
	}
	delete(f.fin.errs.hidden, k) // a name, shown
	return k
}

// inline reads a value that starts and ends on the cursor's line: a flow
// collection or a scalar.
func (f *fastParser) inline(flow bool) *node {
	switch f.at(f.i) {
	case '{':
		return f.flowMapping()
	case '[':
		return f.flowSequence()
	}
	return f.scalar(flow)
}

// keySet adds entries to the mapping being read (f.entries from start),
// giving up on a key set twice (the library's path reports it); past a
// few entries it keeps the keys in a set, for mappings of thousands of
// queues.
type keySet map[string]struct{}

func (s *keySet) add(f *fastParser, start int, k, v *node) {
	dup := false
	switch read := f.entries[start:]; {
	case *s != nil:
		_, dup = (*s)[k.value]
		(*s)[k.value] = struct{}{}
	default:
		for _, e := range read {
			if e.key.value == k.value {
				dup = true
				break
			}
		}
		if len(read) == 8 {
			*s = make(keySet, 16)
			for _, e := range read {
				(*s)[e.key.value] = struct{}{}
			}
			(*s)[k.value] = struct{}{}
		}
	}
	if dup {
		f.bail()
	}
	f.entries = append(f.entries, entry{key: k, value: v})
}

func (f *fastParser) skipSpaces() {
	for f.at(f.i) == ' ' {
		f.i++
	}
}

func (f *fastParser) flowMapping() *node {
	n := f.open(mapNode)
	defer f.leave()
	var keys keySet
	if f.flowEmpty('}') {
		return n
	}
	start := len(f.entries)
	for {
		k := f.key(true)
		f.skipSpaces()
		if c := f.at(f.i); c == ',' || c == '}' {
			f.bail() // an empty value
		}
		keys.add(f, start, k, f.inline(true))
		if f.flowNext('}') {
			n.entries = carve(&f.entries, start, &f.entryBlock, entryBlock)
			return n
		}
	}
}

func (f *fastParser) flowSequence() *node {
	n := f.open(seqNode)
	defer f.leave()
	if f.flowEmpty(']') {
		return n
	}
	start := len(f.items)
	for {
		f.items = append(f.items, f.inline(true))
		if f.flowNext(']') {
			n.items = carve(&f.items, start, &f.itemBlock, itemBlock)
			return n
		}
	}
}

// flowEmpty reads a flow collection's opening bracket and reports whether
// closing follows at once.
func (f *fastParser) flowEmpty(closing byte) bool {
	f.i++
	f.skipSpaces()
	if f.at(f.i) == closing {
		f.i++
		return true
	}
	return false
}

// flowNext reads what follows an entry of a flow collection: true after
// its closing bracket, false after a "," with another entry to come.
func (f *fastParser) flowNext(closing byte) bool {
	f.skipSpaces()
	switch f.at(f.i) {
	case closing:
		f.i++
		return true
	case ',':
		f.i++
		f.skipSpaces()
		if c := f.at(f.i); c == closing || c == ',' {
			f.bail()
		}
		return false
	}
	f.bail() // a line break, a ":" in a sequence, another bracket
	return false
}

// scalar reads a quoted or plain scalar on the cursor's line.
func (f *fastParser) scalar(flow bool) *node {
	n := f.newNode(scalarNode)
	switch c := f.at(f.i); c {
	case '"', '\'':
		n.value = f.quoted(c)
		n.tag = tagStr
		f.finish(n, false)
		return n
	}
	n.value = f.plain(flow)
	if n.value == "<<" {
		f.bail() // the library's merge key, a key or not
	}
	n.tag = plainTag(n.value)
	f.finish(n, true)
	return n
}

// quoted reads a one-line quoted scalar: in single quotes a doubled quote
// is one quote; in double quotes a backslash escapes a backslash or a
// double quote, and any other escape gives up (the library refuses "\/",
// which JSON reads).
func (f *fastParser) quoted(q byte) string {
	start := f.i + 1
	var sb *strings.Builder
	for j := start; ; j++ {
		c := f.at(j)
		switch {
		case c == '\n':
			f.bail()
		case c == '\\' && q == '"' || c == '\'' && q == '\'' && f.at(j+1) == '\'':
			if n := f.at(j + 1); q == '"' && n != '\\' && n != '"' {
				f.bail()
			}
			if sb == nil {
				sb = &strings.Builder{}
			}
			sb.WriteString(f.data[start:j])
			j++ // the escaped character, kept
			start = j
		case c == q:
			f.i = j + 1
			if sb == nil {
				return f.keep(f.data[start:j])
			}
			sb.WriteString(f.data[start:j])
			return sb.String()
		}
	}
}

// flowStop marks the characters that end a plain scalar in a flow
// collection: ",[]{}?" (a table: plain looks each character up).
var flowStop = [256]bool{',': true, '[': true, ']': true, '{': true, '}': true, '?': true}

// plain reads a plain scalar: in a block, up to ": ", " #" or the end of
// the line; in a flow collection also up to ",", "[", "]", "{" or "}".
func (f *fastParser) plain(flow bool) string {
	c, next := f.at(f.i), f.at(f.i+1)
	blank := next == ' ' || next == '\n' || flow && flowStop[next]
	switch {
	case strings.IndexByte("[]{},#&*!|>'\"%@`", c) >= 0:
		f.bail()
	case c == '-' && blank, (c == '?' || c == ':') && (flow || blank):
		f.bail()
	}
	start, end := f.i, f.i
	j := f.i
scan:
	for ; ; j++ {
		switch c := f.at(j); {
		case c == '\n':
			break scan
		case c == ':':
			if n := f.at(j + 1); n == ' ' || n == '\n' {
				break scan
			} else if flow && flowStop[n] {
				f.bail() // the library reads "a:," its own way
			}
		case c == '#' && f.data[j-1] == ' ':
			break scan
		case flow && flowStop[c]:
			break scan
		}
		if c := f.data[j]; c != ' ' {
			end = j + 1
		}
	}
	f.i = end
	if end == start {
		f.bail()
	}
	return f.keep(f.data[start:end])
}

// keep returns scalar s, a part of the file's text, as a string of its
// own: the one kept before when s was seen before, else a copy carved from
// a block. A scalar read to guess what follows it is not kept.
func (f *fastParser) keep(s string) string {
	if f.guess || s == "" {
		return s
	}
	if k, ok := f.seen.Get(s); ok {
		return k
	}
	var k string
	switch {
	case len(s) > textBlock/4:
		k = strings.Clone(s)
	default:
		if len(f.text) < len(s) {
			f.text = make([]byte, textBlock)
		}
		n := copy(f.text, s)
		k = unsafe.String(&f.text[0], n)
		f.text = f.text[n:]
	}
	if f.seen == nil {
		f.seen = intern.New[string]()
	}
	f.seen.Put(k, k)
	return k
}
