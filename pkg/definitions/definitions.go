// Package definitions reads RabbitMQ definitions files — the JSON that
// GET /api/definitions (whole broker) and GET /api/definitions/{vhost}
// (one vhost) return, RabbitMQ 3.6 to 4.x — into a topology.Topology.
//
// Queues, exchanges, bindings, policies, operator policies and vhost metadata
// become topology objects; users, their limits, permissions, topic
// permissions, vhost limits, shovels, federation upstreams and upstream sets
// become the items (topology.Item) the engine's live read makes of the same
// broker state (access.go). What mqctl does not manage (global parameters,
// runtime parameters of other components, vhost tags) is read past and
// counted in a Report.
// Files that RabbitMQ itself refuses to import are rejected with an error
// naming the file, the object and the problem.
package definitions

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"sort"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/mqctl/mqctl/pkg/kind"
	"github.com/mqctl/mqctl/pkg/rmqversion"
	"github.com/mqctl/mqctl/pkg/topology"
)

// ReadOptions configure a read.
type ReadOptions struct {
	// DefaultVhost is the vhost of objects that carry no "vhost" field. A
	// whole-broker file whose objects lack it is rejected (RabbitMQ rejects
	// it too) unless DefaultVhost is set. For a file marked as a single-vhost
	// export ("rabbitmq_definition_format": "single_virtual_host") it replaces
	// the vhost the file was exported from.
	DefaultVhost string
}

// MaxFileSize is the largest definitions file Read accepts.
const MaxFileSize = 256 << 20

// Read parses the definitions file data (name is used in messages only).
// On failure the error is an ErrorList naming every problem found.
func Read(name string, data []byte) (*topology.Topology, *Report, error) {
	return ReadWithOptions(name, data, ReadOptions{})
}

// ReadWithOptions is Read with options.
func ReadWithOptions(name string, data []byte, opts ReadOptions) (*topology.Topology, *Report, error) {
	r := &reader{name: name, data: bytes.TrimPrefix(data, []byte("\xef\xbb\xbf")), rep: newReport(), t: topology.New()}
	top, err := r.decode()
	if err != nil {
		return nil, nil, err
	}
	r.offsets = elementOffsets(r.data)
	r.read(top, opts)
	if len(r.errs) > 0 {
		return nil, nil, r.errs
	}
	return r.t, r.rep, nil
}

// Top-level keys that carry no topology and need no report.
var metadataKeys = map[string]bool{
	"rabbit_version": true, "rabbitmq_version": true, "product_name": true, "product_version": true,
	"rabbitmq_definition_format": true, "original_vhost_name": true, "original_cluster_name": true,
	"explanation": true,
}

// builtinExchange reports the exchanges every vhost has (the default one
// included): dropped without a warning.
func builtinExchange(name string) bool {
	return topology.IsBrokerExchange(name) || name == ""
}

type reader struct {
	name    string
	data    []byte
	lines   *lineIndex
	offsets map[string][]int
	errs    ErrorList
	rep     *Report
	t       *topology.Topology

	// vhost mapping for objects without a "vhost" field.
	defaultVhost string
	single       bool // single_virtual_host format: every object is in defaultVhost

	missingVhost      *object // first object without a vhost (whole-broker form)
	missingVhostCount int

	// the entry that first lists each object, for duplicate warnings.
	declared map[string]*object
	// bindingsListed are the bindings read, by vhost and key: a binding
	// listed again is left out with a warning.
	bindingsListed map[string]bool
	// users, limits and the other items, as they are read (access.go).
	acc accessState
	// source is the version of the RabbitMQ that wrote the file (its
	// rabbitmq_version or rabbit_version), when it says.
	source      rmqversion.Version
	sourceKnown bool
}

func (r *reader) errorAt(pos topology.Pos, format string, args ...any) {
	r.errs = append(r.errs, &Error{Pos: pos, Msg: fmt.Sprintf(format, args...)})
}

func (r *reader) filePos(offset int) topology.Pos {
	if r.lines == nil {
		r.lines = newLineIndex(r.data)
	}
	line, col := r.lines.position(offset)
	return topology.Pos{File: r.name, Line: line, Col: col}
}

// decode parses the whole document, reporting syntax errors with line:col.
func (r *reader) decode() (map[string]any, error) {
	fail := func(pos topology.Pos, format string, args ...any) (map[string]any, error) {
		return nil, ErrorList{{Pos: pos, Msg: fmt.Sprintf(format, args...)}}
	}
	if len(bytes.TrimSpace(r.data)) == 0 {
		return fail(topology.Pos{File: r.name}, "the file is empty: expected a RabbitMQ definitions JSON object (export one with GET /api/definitions or rabbitmqctl export_definitions)")
	}
	if len(r.data) > MaxFileSize {
		return fail(topology.Pos{File: r.name}, "the file is %d bytes, more than the %d MiB mqctl reads", len(r.data), MaxFileSize>>20)
	}
	if !utf8.Valid(r.data) {
		off := 0
		for off < len(r.data) {
			c, size := utf8.DecodeRune(r.data[off:])
			if c == utf8.RuneError && size <= 1 {
				break
			}
			off += size
		}
		return fail(r.filePos(off), "invalid UTF-8 (byte 0x%02x): RabbitMQ definitions are UTF-8 JSON; re-export the file or fix its encoding", r.data[off])
	}
	template := bytes.Contains(r.data, []byte("${"))
	dec := json.NewDecoder(bytes.NewReader(r.data))
	dec.UseNumber()
	var doc any
	if err := dec.Decode(&doc); err != nil {
		var syn *json.SyntaxError
		var pos topology.Pos
		var what string
		switch {
		case errors.As(err, &syn):
			pos = r.filePos(int(syn.Offset) - 1)
			what = syn.Error()
		case errors.Is(err, io.ErrUnexpectedEOF):
			pos = r.filePos(len(r.data))
			what = "unexpected end of file (an object or array is not closed)"
		default:
			pos = topology.Pos{File: r.name}
			what = err.Error()
		}
		if template {
			return fail(pos, "not valid JSON (%s): the file looks like a template with ${…} placeholders, not a definitions export; render the template first and export the result", what)
		}
		return fail(pos, "not valid JSON: %s (RabbitMQ rejects this file too; fix the JSON syntax)", what)
	}
	if _, err := dec.Token(); err != io.EOF {
		off := int(dec.InputOffset())
		return fail(r.filePos(off), "unexpected data after the end of the JSON object; a definitions file holds exactly one JSON object")
	}
	top, ok := doc.(map[string]any)
	if !ok {
		first := len(r.data) - len(bytes.TrimLeftFunc(r.data, unicode.IsSpace))
		return fail(r.filePos(first), "expected a JSON object with \"queues\", \"exchanges\", \"bindings\"…, found %s", jsonKind(doc))
	}
	return top, nil
}

// elementOffsets returns, for each top-level key whose value is an array,
// the byte offset where each element starts. data must be valid JSON.
func elementOffsets(data []byte) map[string][]int {
	out := map[string][]int{}
	dec := json.NewDecoder(bytes.NewReader(data))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return out
	}
	skip := func(off int) int {
		for off < len(data) && (data[off] == ' ' || data[off] == '\t' || data[off] == '\n' || data[off] == '\r' || data[off] == ',' || data[off] == ':') {
			off++
		}
		return off
	}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return out
		}
		key, _ := tok.(string)
		if off := skip(int(dec.InputOffset())); off < len(data) && data[off] == '[' {
			if _, err := dec.Token(); err != nil {
				return out
			}
			var offs []int
			for dec.More() {
				offs = append(offs, skip(int(dec.InputOffset())))
				var raw json.RawMessage
				if err := dec.Decode(&raw); err != nil {
					return out
				}
			}
			if _, err := dec.Token(); err != nil {
				return out
			}
			out[key] = offs
			continue
		}
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return out
		}
		delete(out, key)
	}
	return out
}

func jsonKind(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case bool:
		return "a boolean"
	case json.Number:
		return "a number"
	case string:
		return "a string"
	case []any:
		return "an array"
	case map[string]any:
		return "an object"
	default:
		return fmt.Sprintf("%T", v)
	}
}

func (r *reader) read(top map[string]any, opts ReadOptions) {
	r.declared = map[string]*object{}
	r.bindingsListed = map[string]bool{}
	r.acc = accessState{users: map[string]bool{}, limits: map[string]topology.Args{}, limitsPos: map[string]topology.Pos{}}
	format, _ := top["rabbitmq_definition_format"].(string)
	for _, k := range []string{"rabbitmq_version", "rabbit_version"} {
		if s, ok := top[k].(string); ok && !r.sourceKnown {
			if v, err := rmqversion.Parse(s); err == nil {
				r.source, r.sourceKnown = v, true
			}
		}
	}
	r.defaultVhost = opts.DefaultVhost
	if format == "single_virtual_host" {
		r.single = true
		if r.defaultVhost == "" {
			r.defaultVhost, _ = top["original_vhost_name"].(string)
		}
		if r.defaultVhost == "" {
			r.defaultVhost = "/"
		}
	}
	topPos := topology.Pos{File: r.name}

	// The typed kinds' sections (typedSpecs), the vhosts first: they hold
	// the others, and the users' access names them.
	if r.single {
		r.t.Vhost(r.defaultVhost)
	}
	typed := typedSpecs()
	for _, s := range typed {
		if s.Container {
			r.readSection(top, s)
		}
	}
	r.readTopLevelVhostMetadata(top, topPos)
	r.readUsers(top)
	r.readNested(top)
	r.readGlobalParameters(top)
	r.readParameters(top)
	for _, s := range typed {
		if !s.Container {
			r.readSection(top, s)
		}
	}
	r.putVhostLimits()
	r.warnUnlistedUsers()

	if r.missingVhost != nil {
		more := ""
		if r.missingVhostCount > 1 {
			more = fmt.Sprintf(" (and %d more objects)", r.missingVhostCount-1)
		}
		r.errorAt(r.missingVhost.pos, "%s has no \"vhost\" field%s: RabbitMQ rejects objects without a vhost in a whole-broker definitions file; add \"vhost\" to each object, or, if this is a single-vhost export (GET /api/definitions/{vhost}), say which vhost it belongs to (mqctl export --vhost NAME)", r.missingVhost.what, more)
	}

	keys := make([]string, 0, len(top))
	for k := range top {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		switch k {
		case "users", "permissions", "topic_permissions", "parameters", "global_parameters",
			"metadata", "description", "default_queue_type", "limits", "tags":
		default:
			if _, typed := sectionKind(k); !typed && !metadataKeys[k] {
				r.rep.warnf("ignored unknown top-level key %q", k)
			}
		}
	}
	sort.SliceStable(r.errs, func(i, j int) bool { return posLess(r.errs[i].Pos, r.errs[j].Pos) })
	for _, v := range r.t.Vhosts {
		v.SortBindings()
	}
	r.warnDangling()
}

func posLess(a, b topology.Pos) bool {
	if a.Line != b.Line {
		return a.Line < b.Line
	}
	return a.Col < b.Col
}

// object is one element of a top-level array, with where it is and how to
// name it in messages.
type object struct {
	r    *reader
	m    map[string]any
	pos  topology.Pos
	what string
	// off is where the object starts in the file; -1 when not known
	// (an operator policy parameter's value).
	off int
}

func (o *object) errorf(format string, args ...any) {
	o.r.errorAt(o.pos, "%s: %s", o.what, fmt.Sprintf(format, args...))
}

// fieldErrorf is errorf at the value of the field path names (a field,
// or a key of an object-valued field: "arguments", "x-queue-type"), so
// that an error about one field points at it; at the object where the
// file does not have it.
func (o *object) fieldErrorf(path []string, format string, args ...any) {
	o.r.errorAt(o.fieldPos(path...), "%s: %s", o.what, fmt.Sprintf(format, args...))
}

// fieldPos is where the value of the field path names starts: the
// deepest of its fields the file has (a limit in a list of limits: the
// list), o's own position when it has none (or where o is is not known).
func (o *object) fieldPos(path ...string) topology.Pos {
	if o.off < 0 || o.off >= len(o.r.data) {
		return o.pos
	}
	data := o.r.data[o.off:]
	dec := json.NewDecoder(bytes.NewReader(data))
	at := -1 // where the deepest field found so far starts
	for _, field := range path {
		if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
			break
		}
		found := false
		for dec.More() {
			tok, err := dec.Token()
			if err != nil {
				break
			}
			if tok == field {
				found = true
				break
			}
			var skip json.RawMessage
			if err := dec.Decode(&skip); err != nil {
				break
			}
		}
		if !found {
			break
		}
		at = int(dec.InputOffset())
		for at < len(data) && (data[at] == ' ' || data[at] == '\t' || data[at] == '\n' || data[at] == '\r' || data[at] == ':') {
			at++
		}
	}
	if at < 0 {
		return o.pos
	}
	return o.r.filePos(o.off + at)
}

// list returns the elements of the top-level array key as objects; kind
// names one element in messages ("queue").
func (r *reader) list(top map[string]any, key, kind string) []*object {
	v, ok := top[key]
	if !ok || v == nil {
		return nil
	}
	arr, ok := v.([]any)
	if !ok {
		if m, isMap := v.(map[string]any); isMap && len(m) == 0 {
			return nil
		}
		r.errorAt(topology.Pos{File: r.name}, "%q must be an array of %s objects, found %s", key, kind, jsonKind(v))
		return nil
	}
	offs := r.offsets[key]
	out := make([]*object, 0, len(arr))
	for i, e := range arr {
		pos, off := topology.Pos{File: r.name}, -1
		if i < len(offs) {
			pos, off = r.filePos(offs[i]), offs[i]
		}
		m, ok := e.(map[string]any)
		if !ok {
			r.errorAt(pos, "%s[%d] must be a JSON object describing a %s, found %s", key, i, kind, jsonKind(e))
			continue
		}
		o := &object{r: r, m: m, pos: pos, what: fmt.Sprintf("%s[%d]", key, i), off: off}
		out = append(out, o)
	}
	return out
}

// str reads a string field. present is false when the field is absent or
// null; a non-string value is an error.
func (o *object) str(field string) (s string, present bool) {
	v, ok := o.m[field]
	if !ok || v == nil {
		return "", false
	}
	s, ok = v.(string)
	if !ok {
		o.fieldErrorf([]string{field}, "%q must be a string, found %s", field, jsonKind(v))
		return "", false
	}
	return s, true
}

// args reads an argument table: an object, or null / [] for none.
func (o *object) args(field string) topology.Args {
	v, ok := o.m[field]
	if !ok || v == nil {
		return nil
	}
	switch x := v.(type) {
	case map[string]any:
		return topology.Args(x).Normalized()
	case []any:
		if len(x) == 0 {
			return nil
		}
	}
	o.fieldErrorf([]string{field}, "%q must be a JSON object, found %s", field, jsonKind(v))
	return nil
}

func describe(v any) string {
	switch x := v.(type) {
	case string:
		return fmt.Sprintf("the string %q", x)
	case json.Number:
		return "the number " + x.String()
	default:
		return jsonKind(v)
	}
}

// name reads the required "name" field and renames the object in messages.
func (o *object) name(kind string) (string, bool) {
	n, ok := o.str("name")
	if !ok {
		if _, present := o.m["name"]; !present || o.m["name"] == nil {
			o.errorf("%s has no name", kind)
		}
		return "", false
	}
	if (kind == "queue" || kind == "exchange") && len(n) > topology.MaxNameBytes {
		o.what = fmt.Sprintf("%s %q…", kind, truncateUTF8(n, 40))
		o.errorf("the name is %d bytes long; RabbitMQ takes %s names of at most %d bytes", len(n), kind, topology.MaxNameBytes)
		return "", false
	}
	o.what = fmt.Sprintf("%s %q", kind, n)
	return n, true
}

// truncateUTF8 cuts s to at most n bytes without splitting a character.
func truncateUTF8(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

// vhost resolves the object's vhost and completes its name for messages.
func (o *object) vhost() (string, bool) {
	if o.r.single {
		o.what += fmt.Sprintf(" in vhost %q", o.r.defaultVhost)
		return o.r.defaultVhost, true
	}
	v, present := o.str("vhost")
	if present {
		if v == "" {
			o.errorf("\"vhost\" is empty; name the vhost the object belongs to")
			return "", false
		}
		o.what += fmt.Sprintf(" in vhost %q", v)
		return v, true
	}
	if _, has := o.m["vhost"]; has && o.m["vhost"] != nil {
		return "", false // not a string: already reported
	}
	if o.r.defaultVhost != "" {
		o.what += fmt.Sprintf(" in vhost %q", o.r.defaultVhost)
		return o.r.defaultVhost, true
	}
	if o.r.missingVhost == nil {
		o.r.missingVhost = o
	}
	o.r.missingVhostCount++
	return "", false
}

// nameIn reads an exchange's or queue's name, then its vhost.
func (o *object) nameIn(kind string) (name, vhost string, ok bool) {
	if name, ok = o.name(kind); ok {
		vhost, ok = o.vhost()
	}
	return name, vhost, ok
}

// duplicate reports whether o, of kind k named name in vhost, is to be
// left out: when an entry before it lists the same object and mqctl keeps
// that one, as RabbitMQ's import does or may (twice warns of either).
// what names the object in the warning.
func (r *reader) duplicate(k kind.Kind, what, vhost, name string, o *object) bool {
	key := string(k) + "\x00" + vhost + "\x00" + name
	first, ok := r.declared[key]
	if !ok {
		r.declared[key] = o
		return false
	}
	if r.twice(k, what, first, o) {
		r.declared[key] = o
		return false
	}
	return true
}

func validQueueType(t string) bool {
	return t == topology.QueueClassic || t == topology.QueueQuorum || t == topology.QueueStream
}

// vhostDefaultQueueType reads a default queue type; "" and "undefined" (as
// some 3.x exports write it) mean none.
func (o *object) defaultQueueType(m map[string]any, field string) string {
	v, ok := m[field]
	if !ok || v == nil {
		return ""
	}
	s, ok := v.(string)
	if !ok {
		o.fieldErrorf([]string{field}, "%q must be a string (classic, quorum or stream), found %s", field, jsonKind(v))
		return ""
	}
	if s == "" || s == "undefined" {
		return ""
	}
	if !validQueueType(s) {
		o.errorf("default queue type %q is not a queue type; use classic, quorum or stream", s)
		return ""
	}
	return s
}

// readVhostMetadata fills v from a vhost object's description, metadata,
// default queue type, tags and limits.
func (r *reader) readVhostMetadata(o *object, v *topology.Vhost) {
	meta, _ := o.m["metadata"].(map[string]any)
	if d, ok := o.str("description"); ok {
		v.Description = d
	} else if d, ok := meta["description"].(string); ok {
		v.Description = d
	}
	if dqt := o.defaultQueueType(o.m, "default_queue_type"); dqt != "" {
		v.DefaultQueueType = dqt
	} else if meta != nil {
		v.DefaultQueueType = o.defaultQueueType(meta, "default_queue_type")
	}
	if tags, ok := readTags(o.m["tags"]); ok {
		v.Tags = tags
	} else if tags, ok := readTags(meta["tags"]); ok {
		v.Tags = tags
	}
	if l, ok := o.limits("limits", "vhost", vhostLimitKeys); ok {
		r.addVhostLimits(v.Name, l, o.pos, false)
	}
}

// readTags reads a vhost's tags as a definitions file holds them: a list
// of strings (4.x, and its metadata.tags) or one comma-separated string
// (3.x); false when there are none.
func readTags(v any) ([]string, bool) {
	var tags []string
	add := func(s string) {
		for _, t := range strings.Split(s, ",") {
			if t = strings.TrimSpace(t); t != "" {
				tags = append(tags, t)
			}
		}
	}
	switch x := v.(type) {
	case []any:
		for _, t := range x {
			if s, ok := t.(string); ok {
				add(s)
			}
		}
	case string:
		add(x)
	}
	return tags, len(tags) > 0
}

// readVhost reads an element of the vhosts section (k: its kind).
func (r *reader) readVhost(o *object, k kind.Kind) {
	name, ok := o.name("vhost")
	if !ok {
		return
	}
	if name == "" {
		o.errorf("the vhost name is empty")
		return
	}
	if r.duplicate(k, fmt.Sprintf("vhost %q", name), name, name, o) {
		return
	}
	r.readVhostMetadata(o, r.t.Vhost(name))
}

// readTopLevelVhostMetadata applies the vhost metadata that a single-vhost
// export carries at the top level.
func (r *reader) readTopLevelVhostMetadata(top map[string]any, pos topology.Pos) {
	has := false
	for _, k := range []string{"metadata", "description", "default_queue_type", "limits", "tags"} {
		if _, ok := top[k]; ok {
			has = true
		}
	}
	if !has {
		return
	}
	if r.defaultVhost == "" {
		r.rep.warnf("ignored the top-level vhost metadata (description, default_queue_type, limits): the file does not say which vhost it describes")
		return
	}
	o := &object{r: r, m: top, pos: pos, what: fmt.Sprintf("vhost %q", r.defaultVhost)}
	r.readVhostMetadata(o, r.t.Vhost(r.defaultVhost))
}

func (r *reader) readParameters(top map[string]any) {
	for _, o := range r.list(top, "parameters", "parameter") {
		comp, _ := o.str("component")
		if comp == OperatorPolicyComponent {
			body, isMap := o.m["value"].(map[string]any)
			if !isMap {
				o.errorf("the value of an operator_policy parameter must be a JSON object with pattern and definition, found %s", jsonKind(o.m["value"]))
				continue
			}
			r.readPolicy(o, &object{r: r, m: body, pos: o.pos, off: -1}, kind.OperatorPolicy)
			continue
		}
		if comp == "vhost-limits" {
			r.readVhostLimitsParameter(o)
			continue
		}
		if _, ok := parameterKinds()[comp]; ok {
			r.readItemParameter(o, comp)
			continue
		}
		if comp == "" {
			comp = "without component"
		}
		r.rep.skip(SkipParameters, 1)
		r.rep.Components[comp]++
	}
}

func validExchangeType(t string) bool {
	switch t {
	case "direct", "fanout", "topic", "headers":
		return true
	}
	if !strings.HasPrefix(t, "x-") || len(t) == 2 {
		return false
	}
	for _, c := range t[2:] {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_' || c == '.') {
			return false
		}
	}
	return true
}

// readSettings reads into x, an object of a kind with a
// topology.Definition, each of def's settings of a form
// (topology.SettingForm: a type is read by hand) from o's field named by
// the setting's APIKey, as RabbitMQ's import checks it: a flag true or
// false, one of the setting's Values, an integer, text. A setting left
// out (or null) takes its Default; one without a Default is required.
// false when one is refused (each is reported).
func readSettings[T any](o *object, def topology.Definition[T], x T) bool {
	ok := true
	for _, s := range def.Settings {
		if s.Set == nil {
			continue
		}
		key := s.APIKey
		v, present := o.m[key]
		if !present || v == nil {
			if s.Default == nil {
				o.errorf("no %q; set it to %s", key, settingHint(s.Help, s.Example))
				ok = false
				continue
			}
			s.Set(x, s.Default)
			continue
		}
		switch s.Form() {
		case topology.FormFlag:
			b, isBool := v.(bool)
			if !isBool {
				o.fieldErrorf([]string{key}, "%q must be true or false, found %s", key, describe(v))
				ok = false
				continue
			}
			s.Set(x, b)
		case topology.FormInt:
			i, isInt := topology.Normalize(v).(int64)
			if !isInt || int64(int(i)) != i {
				o.fieldErrorf([]string{key}, "%s must be an integer, found %s", key, describe(v))
				ok = false
				continue
			}
			s.Set(x, int(i))
		case topology.FormEnum, topology.FormText, topology.FormNone:
			// A setting of no form (an exchange's type) is a word whose
			// values the kind's own checks judge.
			str, isStr := o.str(key)
			if !isStr {
				ok = false // reported
				continue
			}
			if s.Values != nil && !slices.Contains(s.Values, str) {
				o.fieldErrorf([]string{key}, "%s %q is not valid; use one of %s", key, str, strings.Join(s.Values, ", "))
				ok = false
				continue
			}
			s.Set(x, str)
		}
	}
	return ok
}

// settingHint says what a required setting is, from its help and an
// example value.
func settingHint(help, example string) string {
	switch {
	case help != "" && example != "":
		return help + ", such as " + example
	case help != "":
		return help
	}
	return "a value such as " + example
}

// readExchange reads an element of the exchanges section (k: its kind).
func (r *reader) readExchange(o *object, k kind.Kind) {
	name, vh, ok := o.nameIn("exchange")
	if !ok {
		return
	}
	if SkipExchange(name) {
		if !builtinExchange(name) {
			r.rep.warnf("skipped exchange %q in vhost %q: names starting with \"amq.\" are reserved (RabbitMQ skips it on import too)", name, vh)
		}
		return
	}
	typ, present := o.str("type")
	if !present {
		if _, has := o.m["type"]; !has || o.m["type"] == nil {
			o.errorf("no exchange type; set \"type\" to direct, fanout, topic, headers or a plugin type such as x-delayed-message")
		}
		return
	}
	if !validExchangeType(typ) {
		o.fieldErrorf([]string{"type"}, "exchange type %q is not known to RabbitMQ (it rejects this file); use direct, fanout, topic, headers or a plugin type such as x-delayed-message or x-consistent-hash", typ)
		return
	}
	x := MapExchange(Exchange{Name: name, Type: typ, Arguments: o.args("arguments")})
	readSettings(o, topology.ExchangeDefinition, x)
	if r.duplicate(k, fmt.Sprintf("exchange %q in vhost %q", name, vh), vh, name, o) {
		return
	}
	x.Pos = o.pos
	r.t.Vhost(vh).Exchanges[name] = x
}

// queueType checks the queue's type in "type" and "x-queue-type" (MapQueue
// lifts it) and returns the one named.
func (o *object) queueType(args topology.Args) (string, bool) {
	fromArg := ""
	if v, ok := args[topology.QueueTypeArgument]; ok {
		s, isStr := v.(string)
		if !isStr {
			o.fieldErrorf([]string{"arguments", topology.QueueTypeArgument}, "argument x-queue-type must be a string (classic, quorum or stream), found %s", describe(v))
			return "", false
		}
		fromArg = s
	}
	fromField, _ := o.str("type")
	for i, t := range []string{fromArg, fromField} {
		if t != "" && !validQueueType(t) {
			at := []string{"arguments", topology.QueueTypeArgument}
			if i == 1 {
				at = []string{"type"}
			}
			o.fieldErrorf(at, "queue type %q is not a queue type (RabbitMQ rejects it); use classic, quorum or stream", t)
			return "", false
		}
	}
	if fromArg != "" && fromField != "" && fromArg != fromField {
		o.fieldErrorf([]string{"arguments", topology.QueueTypeArgument}, "\"type\" is %q but argument x-queue-type is %q; they must agree", fromField, fromArg)
		return "", false
	}
	if fromArg != "" {
		return fromArg, true
	}
	return fromField, true
}

// readQueue reads an element of the queues section (k: its kind).
func (r *reader) readQueue(o *object, k kind.Kind) {
	name, vh, ok := o.nameIn("queue")
	if !ok {
		return
	}
	if name == "" {
		o.errorf("the queue name is empty (server-named queues cannot be imported); give the queue a name")
		return
	}
	if SkipQueue(Queue{Name: name}) {
		r.rep.warnf("skipped queue %q in vhost %q: names starting with \"amq.\" are reserved for server-named queues (RabbitMQ skips it on import too)", name, vh)
		return
	}
	args := o.args("arguments")
	typ, ok := o.queueType(args)
	if !ok {
		return
	}
	if args.Has("x-dead-letter-routing-key") && !args.Has("x-dead-letter-exchange") {
		o.fieldErrorf([]string{"arguments", "x-dead-letter-routing-key"}, "x-dead-letter-routing-key without x-dead-letter-exchange: RabbitMQ refuses to declare such a queue; add x-dead-letter-exchange (\"\" for the default exchange)")
		return
	}
	v := r.t.Vhost(vh)
	tq := MapQueue(Queue{Name: name, Type: typ, Arguments: args}, v.DefaultQueueType)
	readSettings(o, topology.QueueDefinition, tq)
	if r.duplicate(k, fmt.Sprintf("queue %q in vhost %q", name, vh), vh, name, o) {
		return
	}
	tq.Pos = o.pos
	v.Queues[name] = tq
}

// readBinding reads an element of the bindings section (k: its kind).
func (r *reader) readBinding(o *object, k kind.Kind) {
	seen := r.bindingsListed
	src, srcOK := o.str("source")
	dst, dstOK := o.str("destination")
	dt, dtOK := o.str("destination_type")
	if srcOK && dstOK {
		o.what = fmt.Sprintf("binding from %q to %q", src, dst)
	}
	vh, ok := o.vhost()
	if !ok {
		return
	}
	switch {
	case !srcOK:
		if _, has := o.m["source"]; !has || o.m["source"] == nil {
			o.errorf("no \"source\" exchange")
		}
		return
	case !dstOK:
		if _, has := o.m["destination"]; !has || o.m["destination"] == nil {
			o.errorf("no \"destination\"")
		}
		return
	case !dtOK:
		if _, has := o.m["destination_type"]; !has || o.m["destination_type"] == nil {
			o.errorf("no \"destination_type\"; set it to \"queue\" or \"exchange\"")
		}
		return
	case dt != topology.DestQueue && dt != topology.DestExchange:
		o.fieldErrorf([]string{"destination_type"}, "destination_type %q is not valid (RabbitMQ rejects it); use \"queue\" or \"exchange\"", dt)
		return
	}
	key, _ := o.str("routing_key")
	b, ok := MapBinding(Binding{Source: src, Destination: dst, DestinationType: dt, RoutingKey: key, Arguments: o.args("arguments")})
	if !ok {
		r.rep.warnf("skipped %s: the default exchange binds every queue implicitly and takes no explicit bindings", o.what)
		return
	}
	if dst == "" {
		o.errorf("the destination is empty; no %s named \"\" can be bound: name the %s to bind", dt, dt)
		return
	}
	if dt == topology.DestQueue && topology.IsReservedName(dst) {
		r.rep.warnf("skipped %s: queues named \"amq.*\" are server-named and not managed", o.what)
		return
	}
	id := vh + "\x00" + b.Key()
	if seen[id] {
		r.rep.warnf("%s with routing key %q is listed twice; kept one", o.what, key)
		return
	}
	seen[id] = true
	b.Pos = o.pos
	v := r.t.Vhost(vh)
	v.Bindings = append(v.Bindings, b)
}

// readPolicy reads the policy described by body (the object itself, or the
// "value" of an operator_policy runtime parameter); o names it and gives its
// name and vhost.
func (r *reader) readPolicy(o, body *object, k kind.Kind) {
	label := k.Label()
	name, nameOK := o.str("name")
	if nameOK {
		o.what = fmt.Sprintf("%s %q", label, name)
	} else {
		o.what = label
	}
	vh, ok := o.vhost()
	if !ok {
		return
	}
	body.what = o.what
	if !nameOK {
		if _, has := o.m["name"]; !has || o.m["name"] == nil {
			o.errorf("the policy has no name (RabbitMQ rejects it); add \"name\"")
		}
		return
	}
	if name == "" {
		// RabbitMQ 3.10.8 and 4.0.5 both import it, but no management
		// API path names it: it could be neither changed nor deleted.
		o.errorf("the name is empty; RabbitMQ imports such a %s, but its management API has no address for it, so it could be neither changed nor deleted: give the %s a name", label, label)
		return
	}
	p := &topology.Policy{Name: name}
	if !readSettings(body, topology.PolicyDefinition, p) {
		return
	}
	def, isMap := body.m["definition"].(map[string]any)
	if !isMap {
		body.fieldErrorf([]string{"definition"}, "\"definition\" must be a JSON object of policy keys such as {\"max-length\": 1000}, found %s", jsonKind(body.m["definition"]))
		return
	}
	if len(def) == 0 {
		body.fieldErrorf([]string{"definition"}, "the definition is empty (RabbitMQ rejects it: \"no policy provided\"); set at least one policy key, such as {\"max-length\": 1000}")
		return
	}
	p.Definition = topology.Args(def).Normalized()
	if r.duplicate(k, fmt.Sprintf("%s %q in vhost %q", label, name, vh), vh, name, body) {
		return
	}
	p.Pos = o.pos
	v := r.t.Vhost(vh)
	v.PoliciesOf(k)[name] = p
}

// warnDangling notes bindings whose ends the file does not declare:
// RabbitMQ's import leaves them out, mqctl keeps them so that lint reports them.
func (r *reader) warnDangling() {
	for _, vn := range r.t.VhostNames() {
		v := r.t.Vhosts[vn]
		var missing []string
		seen := map[string]bool{}
		note := func(kind, name string) {
			if builtinExchange(name) || topology.IsReservedName(name) || seen[kind+name] {
				return
			}
			seen[kind+name] = true
			missing = append(missing, fmt.Sprintf("%s %q", kind, name))
		}
		for _, b := range v.Bindings {
			if _, ok := v.Exchanges[b.Source]; !ok {
				note("exchange", b.Source)
			}
			if b.DestinationType == topology.DestQueue {
				if _, ok := v.Queues[b.Destination]; !ok {
					note("queue", b.Destination)
				}
			} else if _, ok := v.Exchanges[b.Destination]; !ok {
				note("exchange", b.Destination)
			}
		}
		if len(missing) == 0 {
			continue
		}
		list := missing
		if len(list) > 3 {
			list = append(list[:3:3], fmt.Sprintf("%d more", len(missing)-3))
		}
		why := ""
		if r.sourceKnown && r.source.StreamsDefinitions() {
			// rmqversion StreamsDefinitions: such an export leaves internal
			// exchanges and exclusive queues out, and keeps the bindings of
			// both.
			why = fmt.Sprintf(". RabbitMQ %s's definitions export leaves out internal exchanges and exclusive queues (a client's own, gone with its connection) but keeps their bindings: declare such an exchange in the file (internal: true), or export from the broker itself (mqctl export without --from), which reads its internal exchanges and leaves clients' exclusive queues and their bindings out; a client binds its own queue, and plan refuses a binding to it while the client holds it", r.source)
		}
		r.rep.warnf("vhost %q: bindings refer to objects the file does not declare: %s; they are kept (mqctl lint reports them)%s", vn, strings.Join(list, ", "), why)
	}
}
