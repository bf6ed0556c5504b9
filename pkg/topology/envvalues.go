package topology

import (
	"bufio"
	"bytes"
	"cmp"
	"encoding/json"
	"io"
	"slices"
	"strconv"
	"strings"
)

// EnvValue is a value a file took from the environment (${VAR}, written
// anywhere but in a key) and what the file wrote for it (Raw, with its
// ${…}). Such a value may be a secret: output shows Raw in its place.
type EnvValue struct {
	Value string `json:"value"`
	Raw   string `json:"written"`
	// Key is the key of the field the file took the value for (x-max-length,
	// max_length, routing_key; the key above a list it is an item of): a
	// short value is hidden where a text names this field before it.
	Key string `json:"key,omitempty"`
	// Secret: the value of a secret field (a password, a URI), which no
	// saved plan holds.
	Secret bool `json:"-"`
	// Literal: not a value from the environment but one the file wrote
	// itself for field Key of object (Kind, Vhost, Object) (a queue's
	// limits or arguments, an exchange's arguments, a policy's
	// definition), equal to a value from the environment for the same
	// field of another object (${N} for q1's max_length, 1000 for q2's),
	// where this object takes no such value from the environment. A text
	// about that object shows it as written (For); no text hides it.
	Literal bool   `json:"literal,omitempty"`
	Kind    string `json:"kind,omitempty"`
	Vhost   string `json:"vhost,omitempty"`
	Object  string `json:"object,omitempty"`
}

// HiddenMinBytes is the length from which a value from the environment is
// hidden wherever text shows it, not only where the text quotes it, sets
// it apart ([v], k=v) or names its field before it (x-max-length -5,
// x-max-length: -5): a shorter value (1, quorum) is too likely part of the
// text's own words (3 queues, quorum queue "q").
const HiddenMinBytes = 8

// Written is what text shows in place of the value quoted ("…"): the
// file's ${VAR} when that is all it wrote, else what it wrote, quoted.
func (e EnvValue) Written() string {
	if strings.HasPrefix(e.Raw, "${") && strings.Count(e.Raw, "${") == 1 && strings.HasSuffix(e.Raw, "}") {
		return e.Raw
	}
	return strconv.Quote(e.Raw)
}

// Hide is s without e's value: where s quotes it ("…"), the last quote
// only when lastOnly (a loader error naming its object first, whose name
// may be the same, is about the last), it is replaced with Written and
// "(its value not shown)"; a value of HiddenMinBytes or more is replaced
// with Written wherever it is.
func (e EnvValue) Hide(s string, lastOnly bool) string {
	if e.Value == "" {
		return s
	}
	written, quoted := e.Written(), strconv.Quote(e.Value)
	shown := written + notShown
	if lastOnly {
		if i := strings.LastIndex(s, quoted); i >= 0 {
			s = s[:i] + shown + s[i+len(quoted):]
		}
	} else {
		s = strings.ReplaceAll(s, quoted, shown)
	}
	if len(e.Value) >= HiddenMinBytes {
		s = strings.ReplaceAll(s, e.Value, written)
	}
	return s
}

// notShown follows a value's ${VAR} where an error or a note quoted the
// value: the reader learns that a value was there.
const notShown = " (its value not shown)"

// EnvValues are the values of a load taken from the environment
// (Topology.Env), the longest first, and the literals of the file equal to
// one of them for the same field (EnvValue.Literal), which no text hides.
type EnvValues []EnvValue

// HasLiterals reports whether vs holds a literal (EnvValue.Literal): only
// then does a text about one object hide other values than another's
// (For, ScopeMark).
func (vs EnvValues) HasLiterals() bool {
	for _, v := range vs {
		if v.Literal {
			return true
		}
	}
	return false
}

// env is vs without its literals: the values a text hides.
func (vs EnvValues) env() EnvValues {
	if !vs.HasLiterals() {
		return vs
	}
	out := make(EnvValues, 0, len(vs))
	for _, v := range vs {
		if !v.Literal {
			out = append(out, v)
		}
	}
	return out
}

// MergeEnv are the values of loads a and b (two sets of files: mqctl
// diff's old and new) as one (NewEnvValues), but a literal of one load
// (EnvValue.Literal) where the other takes the same value for the same
// field from the environment and does not write it itself in that object
// too: that object's value may be one from the environment there, which
// a text about it, telling neither load's values apart, must hide.
func MergeEnv(a, b EnvValues) EnvValues {
	if !a.HasLiterals() && !b.HasLiterals() {
		return NewEnvValues(append(slices.Clone(a), b...))
	}
	keep := func(l EnvValue, other EnvValues) bool {
		env, lit := false, false
		for _, o := range other {
			if o.Value != l.Value || !sameField(o.Key, l.Key) {
				continue
			}
			if !o.Literal {
				env = true
			} else if o.Kind == l.Kind && o.Vhost == l.Vhost && o.Object == l.Object {
				lit = true
			}
		}
		return !env || lit
	}
	out := make([]EnvValue, 0, len(a)+len(b))
	for _, side := range [2][2]EnvValues{{a, b}, {b, a}} {
		for _, v := range side[0] {
			if !v.Literal || keep(v, side[1]) {
				out = append(out, v)
			}
		}
	}
	return NewEnvValues(out)
}

// For are the values of vs a text about object (kind, vhost, object)
// hides (EnvScopes.For).
func (vs EnvValues) For(kind, vhost, object string) EnvValues {
	return vs.Scopes().For(kind, vhost, object)
}

// EnvScopes are the values of vs a text hides, by the object it is about
// (For): made once for texts about many objects.
type EnvScopes struct {
	env   EnvValues
	lits  map[scope][]EnvValue
	cache map[scope]EnvValues
}

// scope names an object (EnvValue.Kind, Vhost, Object).
type scope struct{ kind, vhost, object string }

// Scopes are vs by object.
func (vs EnvValues) Scopes() *EnvScopes {
	s := &EnvScopes{env: vs.env()}
	for _, v := range vs {
		if v.Literal {
			if s.lits == nil {
				s.lits, s.cache = map[scope][]EnvValue{}, map[scope]EnvValues{}
			}
			k := scope{v.Kind, v.Vhost, v.Object}
			s.lits[k] = append(s.lits[k], v)
		}
	}
	return s
}

// For are the values a text about object (kind, vhost, object) hides:
// every value from the environment but those that object's file wrote
// itself, the same, for the same field (EnvValue.Literal: ${N} for q1's
// max_length and 1000 for q2's, both 1000: a text about q2 shows 1000).
// A text about no one object (object "") hides every value.
func (s *EnvScopes) For(kind, vhost, object string) EnvValues {
	k := scope{kind, vhost, object}
	lits := s.lits[k]
	if len(lits) == 0 {
		return s.env
	}
	if out, ok := s.cache[k]; ok {
		return out
	}
	out := make(EnvValues, 0, len(s.env))
	for _, v := range s.env {
		if !slices.ContainsFunc(lits, func(l EnvValue) bool { return l.Value == v.Value && v.Key != "" && sameField(l.Key, v.Key) }) {
			out = append(out, v)
		}
	}
	s.cache[k] = out
	return out
}

// ScopeMark is what a text writes before its part about object (kind,
// vhost, object) for Hide, Written and Quoted to hide there the values
// For says, up to the next mark (ScopeMark("", "", ""): every value);
// they leave the marks out.
func ScopeMark(kind, vhost, object string) string {
	return markByte + kind + markSep + vhost + markSep + object + markByte
}

const (
	markByte = "\x00"
	markSep  = "\x1f"
)

// scoped is replace for a text with marks (ScopeMark): each part with
// the values For gives its object.
func (vs EnvValues) scoped(s, note string, keepQuotes bool) string {
	var sb strings.Builder
	scopes := vs.Scopes()
	cur := scopes.env
	for s != "" {
		i := strings.Index(s, markByte)
		if i < 0 {
			sb.WriteString(cur.replace(s, note, keepQuotes))
			break
		}
		sb.WriteString(cur.replace(s[:i], note, keepQuotes))
		s = s[i+1:]
		j := strings.Index(s, markByte)
		if j < 0 {
			break
		}
		parts := strings.SplitN(s[:j], markSep, 3)
		s = s[j+1:]
		cur = scopes.env
		if len(parts) == 3 {
			cur = scopes.For(parts[0], parts[1], parts[2])
		}
	}
	return sb.String()
}

// NewEnvValues returns vs without repeats, the longest value first (so
// that a value is hidden whole before a shorter one within it).
func NewEnvValues(vs []EnvValue) EnvValues {
	out := slices.Clone(vs)
	slices.SortFunc(out, func(a, b EnvValue) int {
		if c := cmp.Compare(len(b.Value), len(a.Value)); c != 0 {
			return c
		}
		return cmp.Or(strings.Compare(a.Value, b.Value), strings.Compare(a.Raw, b.Raw), strings.Compare(a.Key, b.Key))
	})
	return EnvValues(slices.Compact(out))
}

// Hide returns s with each value of vs it shows replaced with what the
// file wrote, for an error, a finding, a note or a refusal: quoted ("v",
// as Go and JSON quote it, or \"v\" within a quoted text) as Written
// says, followed by "(its value not shown)"; bare as Written says,
// followed by "(its value not shown)", where it is a whole word after the
// name of its field (Key) and a space, ": " or "=" (x-max-length -5,
// limits.max_length: -5, "x-overflow": abc: afield's value as a message
// quotes it); and bare as Raw where it is at least HiddenMinBytes long or
// stands apart (after one of `[{(,=` or `":`, before one of `]}),;` or
// the end).
func (vs EnvValues) Hide(s string) string { return vs.text(s, notShown, false) }

// Written is s as Hide makes it, without "(its value not shown)": for
// mqctl test's report, which shows each value as the file wrote it.
func (vs EnvValues) Written(s string) string { return vs.text(s, "", false) }

// Quoted is s as Written makes it, but a quoted value keeps its quotes
// around what the file wrote ("${TOKEN}"): for a text in a syntax of its
// own (a diagram, JSON), which a bare ${VAR} would break.
func (vs EnvValues) Quoted(s string) string { return vs.text(s, "", true) }

// text is s without the values of vs (replace), each part after a mark
// (ScopeMark) without those For says.
func (vs EnvValues) text(s, note string, keepQuotes bool) string {
	if strings.Contains(s, markByte) {
		return vs.scoped(s, note, keepQuotes)
	}
	return vs.env().replace(s, note, keepQuotes)
}

// WrittenFor is what the file wrote for s when s is a value it took from
// the environment, or holds one that a text would hide (a long one within
// it): v.Written for a value that is all of s, else s as Written makes it,
// quoted; "" when s shows none. Advice built from s (a binding key
// rewritten) then names the variable to change rather than show a value
// made from it.
func (vs EnvValues) WrittenFor(s string) string {
	for _, v := range vs {
		if !v.Literal && v.Value != "" && v.Value == s {
			return v.Written()
		}
	}
	if w := vs.Written(s); w != s {
		return strconv.Quote(w)
	}
	return ""
}

func (vs EnvValues) replace(s, note string, keepQuotes bool) string {
	if len(vs) == 0 || s == "" {
		return s
	}
	var sb strings.Builder
	last := 0
	for i := 0; i < len(s); {
		rep, n := vs.at(s, i, note, keepQuotes)
		if n == 0 {
			i++
			continue
		}
		sb.WriteString(s[last:i])
		sb.WriteString(rep)
		i += n
		last = i
	}
	if last == 0 {
		return s
	}
	sb.WriteString(s[last:])
	return sb.String()
}

// at is the replacement of the value of vs that s shows at i, and its
// length there (0: none).
func (vs EnvValues) at(s string, i int, note string, keepQuotes bool) (string, int) {
	rest := s[i:]
	// A value after the name of its own field is that field's, whatever
	// other variable holds the same value.
	for _, v := range vs {
		if !v.Literal && v.Value != "" && v.Key != "" && strings.HasPrefix(rest, v.Value) && afterKey(s, i, i+len(v.Value), v.Key) {
			if keepQuotes {
				return v.Raw, len(v.Value)
			}
			return v.Written() + note, len(v.Value)
		}
	}
	for _, v := range vs {
		if v.Literal || v.Value == "" {
			continue
		}
		if rest[0] != '"' && rest[0] != '\\' && !strings.HasPrefix(rest, v.Value) {
			// None of the forms below is there: each starts with a
			// quote (the value quoted), an escaped one (quoted twice)
			// or the value. Asked at every byte of every text the
			// output shows, they were made for nothing: a 50,002-object
			// replace plan with a value from the environment took 31 s
			// of CPU to show as text, 7.6 s now (5 s without the value).
			continue
		}
		raw := v.Raw
		written := vs.sameValue(v, EnvValue.Written) + note
		if keepQuotes {
			written = strconv.Quote(v.Raw)
		} else {
			raw = vs.sameValue(v, func(e EnvValue) string { return e.Raw })
		}
		q := strconv.Quote(v.Value)
		if strings.HasPrefix(rest, q) {
			return written, len(q)
		}
		if j, err := json.Marshal(v.Value); err == nil && string(j) != q && strings.HasPrefix(rest, string(j)) {
			if keepQuotes {
				jr, _ := json.Marshal(v.Raw)
				return string(jr), len(j)
			}
			return written, len(j)
		}
		// Quoted within a quoted text (a test's name, quoted in a list).
		if qq := strconv.Quote(q); strings.HasPrefix(rest, qq[1:len(qq)-1]) {
			shown := strconv.Quote(written)
			return shown[1 : len(shown)-1], len(qq) - 2
		}
		if strings.HasPrefix(rest, v.Value) && (len(v.Value) >= HiddenMinBytes || apart(s, i, i+len(v.Value))) {
			return raw, len(v.Value)
		}
	}
	return "", 0
}

// sameValue is v as shown shows it, or, where other variables of vs hold
// the same value (${DL} and ${TTL} both -1), each of them: "${DL} or
// ${TTL}". A text that quotes the value does not say whose it is, and
// naming one would send the reader to the wrong variable.
func (vs EnvValues) sameValue(v EnvValue, shown func(EnvValue) string) string {
	var all []string
	for _, o := range vs {
		if !o.Literal && o.Value == v.Value && !slices.Contains(all, shown(o)) {
			all = append(all, shown(o))
		}
	}
	if len(all) <= 1 {
		return shown(v)
	}
	return strings.Join(all, " or ")
}

// apart reports whether s[from:to] stands apart: a binding key in a route
// ([key]), a header in a list of them (k=v, …), a value in a table
// ({"k":v}).
func apart(s string, from, to int) bool {
	left := from > 0 && (strings.IndexByte("[{(,=", s[from-1]) >= 0 || from > 1 && s[from-2:from] == `":`)
	right := to == len(s) || strings.IndexByte("]}),;", s[to]) >= 0
	return left && right
}

// afterKey reports whether s[from:to] is a whole word that s names as the
// value of field key: it follows the field's name and a space, ": ", ":"
// or "=" (sets x-max-length -5, x-max-length: -5: RabbitMQ refuses it,
// "x-max-length": -5). A name is the field's when it is key, or ends with
// it as its last word, with the x- of an argument, the case, "_" or "-"
// and a path before a dot aside: limits.max_length, x-max-length and
// max-length name max_length; x-dead-letter-exchange names exchange.
func afterKey(s string, from, to int, key string) bool {
	if to < len(s) && !wordEnd(s, to) {
		return false
	}
	if strings.HasSuffix(s[:from], arrow) {
		// A field change: "~ arguments.x-tok: before → after".
		line := strings.LastIndexByte(s[:from], '\n') + 1
		k := strings.Index(s[line:from], ": ")
		if k < 0 {
			return false
		}
		from = line + k + 2
	}
	j := -1
	for _, sep := range []string{`": `, `":`, ": ", " = ", "=", ":", " "} {
		if strings.HasSuffix(s[:from], sep) {
			j = from - len(sep)
			break
		}
	}
	if j <= 0 {
		return false
	}
	end := j
	for j > 0 && keyByte(s[j-1]) {
		j--
	}
	name := s[j:end]
	if k := strings.LastIndexByte(name, '.'); k >= 0 {
		name = name[k+1:]
	}
	return sameField(name, key)
}

// arrow is what a plan's field change writes between its before and after
// values.
const arrow = " → "

// keyByte reports whether c may be part of a field's name.
func keyByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_' || c == '.'
}

// wordEnd reports whether a value of s ending at i ends a word there: i is
// a space, a punctuation mark or a quote, or a dot ending a sentence.
func wordEnd(s string, i int) bool {
	switch c := s[i]; {
	case c == '.':
		return i+1 == len(s) || s[i+1] == ' ' || s[i+1] == '\n'
	default:
		return strings.IndexByte(" \t\n,;:)]}\"'\x1b", c) >= 0
	}
}

// fieldWord is a field's name as afterKey compares it: lower case, "-"
// for "_", without an argument's x-.
func fieldWord(name string) string {
	name = strings.ToLower(strings.ReplaceAll(name, "_", "-"))
	return strings.TrimPrefix(name, "x-")
}

// HideJSON is JSON document doc (a JSON plan) without the values of vs:
// a string or number that is a value of vs (a queue's argument, a
// policy's key, a binding's key, a field change's before or after), under
// the name of its field (afterKey's rule: the object's key, or a field
// change's "field") or at least HiddenMinBytes long, becomes the string the
// file wrote ("${TOKEN}"); a string that shows one in its text (a binding's
// name, a reason) shows what the file wrote instead (Written). A field
// change ({"field", "before", "after"}) whose value was replaced says so:
// "from_env": true. The document is indented with indent, as the JSON
// plan is ("  "), or on one line ("", apply -o json's messages), and ends
// with a newline; characters are escaped as encoding/json does.
func (vs EnvValues) HideJSON(doc []byte, indent string) ([]byte, error) {
	if len(vs) == 0 {
		return doc, nil
	}
	var buf bytes.Buffer
	if err := vs.WriteHiddenJSON(&buf, bytes.NewReader(doc), indent); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// WriteHiddenJSON writes to w the JSON document r holds as HideJSON makes
// it, as it streams: it holds a token of the document at a time, never
// the document (a 50,002-object JSON plan's is 51 MB).
func (vs EnvValues) WriteHiddenJSON(w io.Writer, r io.Reader, indent string) error {
	dec := json.NewDecoder(r)
	dec.UseNumber()
	var out io.Writer = w
	if indent != "" {
		out = &jsonIndenter{w: w, indent: indent}
	}
	h := &jsonHider{vs: vs.env(), out: bufio.NewWriter(out)}
	if vs.HasLiterals() {
		h.scopes = vs.Scopes()
	}
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			return err
		}
		h.token(tok)
	}
	if err := h.out.Flush(); err != nil {
		return err
	}
	// After the document: the indenter would drop it.
	_, err := io.WriteString(w, "\n")
	return err
}

// jsonIndenter is json.Indent(w, text, "", indent) of the text written to
// it, as it streams: the same bytes for a valid document.
type jsonIndenter struct {
	w      io.Writer
	indent string
	depth  int
	// needIndent: an object or a list was opened and its first value, if
	// any, not yet written (empty, it is written {} or []).
	needIndent, inString, escaped bool
	buf                           []byte
}

func (d *jsonIndenter) Write(p []byte) (int, error) {
	b := d.buf[:0]
	for _, c := range p {
		if d.inString {
			b = append(b, c)
			switch {
			case d.escaped:
				d.escaped = false
			case c == '\\':
				d.escaped = true
			case c == '"':
				d.inString = false
			}
			continue
		}
		switch c {
		case ' ', '\t', '\n', '\r':
			continue
		}
		if d.needIndent && c != '}' && c != ']' {
			d.needIndent = false
			d.depth++
			b = d.newline(b)
		}
		switch c {
		case '"':
			d.inString = true
			b = append(b, c)
		case '{', '[':
			d.needIndent = true
			b = append(b, c)
		case ',':
			b = d.newline(append(b, c))
		case ':':
			b = append(b, c, ' ')
		case '}', ']':
			if d.needIndent {
				d.needIndent = false
			} else {
				d.depth--
				b = d.newline(b)
			}
			b = append(b, c)
		default:
			b = append(b, c)
		}
	}
	d.buf = b
	if _, err := d.w.Write(b); err != nil {
		return 0, err
	}
	return len(p), nil
}

func (d *jsonIndenter) newline(b []byte) []byte {
	b = append(b, '\n')
	for range d.depth {
		b = append(b, d.indent...)
	}
	return b
}

// jsonHider writes a JSON document again, token by token, without the
// values of vs (HideJSON).
type jsonHider struct {
	vs EnvValues
	// scopes, where vs holds literals, give the values hidden within an
	// object about one object (a change, a flow of a queue): For.
	scopes *EnvScopes
	stack  []*jsonLevel
	out    *bufio.Writer
}

// values are the values hidden at the hider's place: those For gives the
// object the innermost object with a "vhost" is about (a change's "kind"
// and "name", a flow's "queue"), every one elsewhere.
func (h *jsonHider) values() EnvValues {
	if h.scopes == nil {
		return h.vs
	}
	for i := len(h.stack) - 1; i >= 0; i-- {
		l := h.stack[i]
		if !l.hasVhost {
			continue
		}
		switch {
		case l.name != "" && l.kind != "":
			return h.scopes.For(l.kind, l.vhost, l.name)
		case l.queue != "":
			return h.scopes.For("queue", l.vhost, l.queue)
		}
		return h.vs
	}
	return h.vs
}

// jsonLevel is an object or a list the hider is in.
type jsonLevel struct {
	object, wantKey, first bool
	// replaced: a value of the object was hidden; key is the key of the
	// value being written (a list's items are its key's values), field
	// the object's "field" (a field change's).
	replaced   bool
	key, field string
	// kind, vhost, name and queue are the object's strings of those keys
	// (hasVhost: it has "vhost"), which say what it is about (values).
	kind, vhost, name, queue string
	hasVhost                 bool
}

func (h *jsonHider) top() *jsonLevel {
	if len(h.stack) == 0 {
		return nil
	}
	return h.stack[len(h.stack)-1]
}

func (h *jsonHider) token(tok any) {
	if d, ok := tok.(json.Delim); ok {
		h.delim(d)
		return
	}
	if top := h.top(); top != nil && top.object && top.wantKey {
		h.key(tok.(string))
		return
	}
	h.value(tok)
}

// next writes the comma before a value of the level on top, if it is not
// the first, and, in an object, expects a key after it.
func (h *jsonHider) next() {
	top := h.top()
	if top == nil {
		return
	}
	if !top.first {
		h.out.WriteByte(',')
	}
	top.first = false
	if top.object {
		top.wantKey = true
	}
}

func (h *jsonHider) delim(d json.Delim) {
	top := h.top()
	switch d {
	case '{', '[':
		h.next()
		h.out.WriteRune(rune(d))
		l := &jsonLevel{object: d == '{', wantKey: d == '{', first: true}
		if d == '[' && top != nil {
			l.key = top.key // a list's items are its key's values
		}
		h.stack = append(h.stack, l)
	default:
		if top.object && top.replaced && top.field != "" {
			h.out.WriteString(`,"from_env":true`)
		}
		h.out.WriteRune(rune(d))
		h.stack = h.stack[:len(h.stack)-1]
	}
}

func (h *jsonHider) key(k string) {
	top := h.top()
	if !top.first {
		h.out.WriteByte(',')
	}
	top.first, top.wantKey, top.key = true, false, k
	b, _ := json.Marshal(k)
	h.out.Write(b)
	h.out.WriteByte(':')
}

func (h *jsonHider) value(tok any) {
	h.next()
	top := h.top()
	text, isString, isNumber := jsonLiteral(tok)
	if isString && top != nil && top.object {
		switch top.key {
		case "field":
			top.field = text
		case "kind":
			top.kind = text
		case "vhost":
			top.vhost, top.hasVhost = text, true
		case "name":
			top.name = text
		case "queue":
			top.queue = text
		}
	}
	vs := h.values()
	if (isString || isNumber) && top != nil && top.key != "" {
		if raw, ok := vs.hiddenAs(top.fieldName(), text); ok {
			b, _ := json.Marshal(raw)
			h.out.Write(b)
			if top.object && (top.key == "before" || top.key == "after") {
				top.replaced = true
			}
			return
		}
	}
	switch {
	case isString:
		b, _ := json.Marshal(vs.Written(text))
		h.out.Write(b)
	case isNumber:
		h.out.WriteString(text)
	default:
		b, _ := json.Marshal(tok)
		h.out.Write(b)
	}
}

// fieldName is the name of the field whose value the level's key holds:
// the key, or for a field change's before or after its field's last part.
func (l *jsonLevel) fieldName() string {
	if (l.key == "before" || l.key == "after") && l.field != "" {
		if k := strings.LastIndexByte(l.field, '.'); k >= 0 {
			return l.field[k+1:]
		}
		return l.field
	}
	return l.key
}

// WrittenAs is what the file wrote for text, a value of field key, as a
// text shows it in the value's place (EnvValue.Written: ${N}), when it is
// a value of vs that output hides there (hiddenAs's rule, as the plan's
// field changes hide it): for a text that shows the value in words of its
// own ("a length limit of 99 messages", with x-max-length: ${N}), which
// Hide cannot tell is that field's.
func (vs EnvValues) WrittenAs(key, text string) (string, bool) {
	for _, v := range vs {
		if v.Literal || v.Value == "" || v.Value != text {
			continue
		}
		if len(v.Value) >= HiddenMinBytes || v.Key != "" && sameField(key, v.Key) {
			return v.Written(), true
		}
	}
	return "", false
}

// hiddenAs is what the file wrote for text, a value of field key, when it
// is a value of vs that a document hides there: one at least
// HiddenMinBytes long, or one given as that field's (afterKey's rule).
func (vs EnvValues) hiddenAs(key, text string) (string, bool) {
	for _, v := range vs {
		if v.Literal || v.Value == "" || v.Value != text {
			continue
		}
		if len(v.Value) >= HiddenMinBytes || v.Key != "" && sameField(key, v.Key) {
			return v.Raw, true
		}
	}
	return "", false
}

// jsonLiteral is a JSON token's text, and whether it is a string or a
// literal written as it is (a number, a boolean).
func jsonLiteral(tok any) (text string, isString, isNumber bool) {
	switch t := tok.(type) {
	case string:
		return t, true, false
	case json.Number:
		return t.String(), false, true
	case bool:
		return strconv.FormatBool(t), false, true // a literal, as a number is
	}
	return "", false, false
}

// sameField reports whether name (a field's name in a text or a JSON
// document) names field key, as afterKey compares them.
func sameField(name, key string) bool {
	name, want := fieldWord(name), fieldWord(key)
	if want == "routing-keys" || want == "routing-key" {
		// A binding's key: "key" in a message, the keys a message
		// class of the flows matches ("matching k", "matches": ["k"]).
		switch name {
		case "key", "matching", "matches":
			return true
		}
	}
	return name != "" && want != "" && (name == want || strings.HasSuffix(name, "-"+want))
}
