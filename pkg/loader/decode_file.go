package loader

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/mqctl/mqctl/pkg/kind"
	"github.com/mqctl/mqctl/pkg/topology"
)

// Field names, per mapping. The JSON Schema (schema/mqctl.schema.json)
// lists the same fields; a test keeps them in step.
var (
	topFields      = []string{"version", "owner", "vhosts", "users", "lint", "tests"}
	lintFields     = []string{"rules"}
	vhostFields    = slices.Concat([]string{"description", "default_queue_type", "tags", "exchanges", "queues", "bindings"}, namedSections(), []string{"defaults"}, itemSections())
	defaultsFields = []string{"queue", "exchange"}
)

// namedKinds are the kinds with a type of their own (topology.TypedOf)
// that a vhost's section declares by name with no section of their own in
// a rawVhost (all but exchanges and queues, which take defaults and
// sugar): the kinds of policy, and any such kind added to the registry.
func namedKinds() []kind.Kind {
	var out []kind.Kind
	for _, s := range kind.VhostKinds() {
		if _, ok := topology.TypedOf(s.Kind); ok && s.Kind != kind.Exchange && s.Kind != kind.Queue {
			out = append(out, s.Kind)
		}
	}
	return out
}

// namedSections are the sections of namedKinds in a vhost.
func namedSections() []string {
	var out []string
	for _, k := range namedKinds() {
		out = append(out, k.Section())
	}
	return out
}

var severities = []string{"off", "info", "warning", "error"}

// named is one object of a mapping of objects: its name (key) and body.
type named struct {
	key   *node
	value *node
}

// objects is a mapping of named objects merged from several files, in the
// order they were read.
type objects struct {
	kind  string // "exchange", "queue", …, for messages
	order []string
	byKey map[string]named
}

func newObjects(kind string) *objects { return &objects{kind: kind, byKey: map[string]named{}} }

// indexed is an entry of a list, with its label such as `bindings[2]`.
type indexed struct {
	n    *node
	what string
}

// rawVhost is one vhost's declarations merged across files, not yet decoded.
type rawVhost struct {
	name             string
	pos              topology.Pos
	ignore           []string
	description      *node
	defaultQueueType *node
	// tags is the first file's tags (a list), tagsList its strings.
	tags      *node
	tagsList  []string
	exchanges *objects
	queues    *objects
	// named are the sections of namedKinds (the kinds of policy), by
	// kind.
	named    map[kind.Kind]*objects
	bindings []indexed
	defaults *objects // "queue" and "exchange"
	// items are the sections of the generic kinds (kind.VhostItems), by kind.
	items map[kind.Kind]*node
}

// fileDecoder reads files' top level into rawVhosts and the lint config.
type fileDecoder struct {
	d        *decoder
	vhosts   map[string]*rawVhost
	order    []string
	lint     topology.LintConfig
	lintPos  map[string]topology.Pos
	lintSeen bool
	owner    *node     // `owner:`, the first file's that sets it
	tests    []indexed // entries of `tests:`, from every file
	users    rawUsers  // `users:`, from every file
}

func newFileDecoder(d *decoder) *fileDecoder {
	return &fileDecoder{d: d, vhosts: map[string]*rawVhost{}, lintPos: map[string]topology.Pos{}}
}

func (fd *fileDecoder) decodeFile(root *node) {
	d := fd.d
	if root.kind != mapNode {
		d.errs.addf(root.pos, `start the file with "version: 1" and "vhosts:"`, "a topology file is a mapping, got %s", describe(root))
		return
	}
	f, _ := d.fields(root, "", topFields)
	if !f.has("version") {
		d.errs.addf(root.pos, `add "version: 1" at the top of the file`, "missing version")
	} else if v := f.value("version"); v.kind == scalarNode && typedTag(v) == tagInt {
		if i, err := parseInt(v.value); err != nil || i != 1 {
			d.errs.addf(v.pos, "this mqctl reads version: 1", "version %s is not supported", v.value)
		}
	} else {
		d.errs.addf(v.pos, "write version: 1", "version: expected the integer 1, got %s", describe(v))
	}
	if e, ok := f.get("owner"); ok {
		fd.decodeOwner(e.value)
	}
	if f.has("lint") {
		fd.decodeLint(f.entry("lint"))
	}
	fd.addTests(f.value("tests")) // decoded in decode_tests.go once the vhosts are built
	if e, ok := f.get("users"); ok {
		fd.addUsers(e.value) // decoded in decode_users.go once the vhosts are built
	} else if root.get("users") != nil {
		fd.addUsers(&node{kind: mapNode}) // users: (null) declares none
	}
	if vs := f.value("vhosts"); vs != nil && !vs.isNull() {
		if vs.kind != mapNode {
			d.errs.addf(vs.pos, `write vhosts as a mapping of names, e.g. vhosts: {"/": {…}}`, "vhosts: expected a mapping of vhost names, got %s", describe(vs))
			return
		}
		for _, e := range vs.entries {
			fd.decodeVhost(e.key, e.value)
		}
	}
}

// decodeOwner reads `owner:`; files merged into one topology must agree
// on it (a file without one takes the others').
func (fd *fileDecoder) decodeOwner(n *node) {
	d := fd.d
	s, ok := d.str(n, "owner")
	if !ok {
		return
	}
	if err := topology.ValidOwner(s); err != nil {
		d.errs.addf(n.pos, "name the team that applies this file, e.g. owner: orders-team", "%v", err)
		return
	}
	if s == "" {
		d.errs.addf(n.pos, `leave "owner:" out for the default owner, or name the team that applies this file`, "owner: must not be empty")
		return
	}
	if fd.owner != nil && fd.owner.value != s {
		d.errs.addf(n.pos, "the files applied together are one owner's: give them the same owner, or apply each owner's files on their own", "owner %q conflicts with owner %q at %s", s, fd.owner.value, fd.owner.pos)
		return
	}
	if fd.owner == nil {
		fd.owner = n
	}
}

func (fd *fileDecoder) decodeLint(e entry) {
	d := fd.d
	f, ok := d.fields(e.value, "lint", lintFields)
	if !ok {
		return
	}
	if !fd.lintSeen {
		fd.lint.Pos = e.key.pos
		fd.lintSeen = true
	}
	rules := f.value("rules")
	if rules.isNull() {
		return
	}
	if rules.kind != mapNode {
		d.errs.addf(rules.pos, "write rules as a mapping such as {MQ101: off}", "lint.rules: expected a mapping of rule IDs, got %s", describe(rules))
		return
	}
	for _, r := range rules.entries {
		id := r.key.value
		if !isRuleID(id) || id == "all" {
			d.errs.addf(r.key.pos, "rule IDs look like MQ101", "lint.rules: %q is not a rule ID", id)
			continue
		}
		sev, ok := d.enum(r.value, "lint.rules."+id, severities...)
		if !ok {
			continue
		}
		if prev, dup := fd.lint.Rules[id]; dup && prev != sev {
			d.errs.addf(r.value.pos, "set each rule's severity once", "lint.rules.%s: %q conflicts with %q at %s", id, sev, prev, fd.lintPos[id])
			continue
		}
		if fd.lint.Rules == nil {
			fd.lint.Rules = map[string]string{}
		}
		fd.lint.Rules[id] = sev
		fd.lintPos[id] = r.value.pos
		if fd.lint.RulePos == nil {
			fd.lint.RulePos = map[string]topology.Pos{}
		}
		fd.lint.RulePos[id] = r.key.pos
	}
}

func (fd *fileDecoder) vhost(key *node) *rawVhost {
	v, ok := fd.vhosts[key.value]
	if !ok {
		v = &rawVhost{
			name:      key.value,
			pos:       key.pos,
			exchanges: newObjects("exchange"),
			queues:    newObjects("queue"),
			named:     map[kind.Kind]*objects{},
			defaults:  newObjects("defaults section"),
		}
		for _, k := range namedKinds() {
			v.named[k] = newObjects(k.Label())
		}
		fd.vhosts[key.value] = v
		fd.order = append(fd.order, key.value)
	}
	return v
}

func (fd *fileDecoder) decodeVhost(key, body *node) {
	d := fd.d
	what := fmt.Sprintf("vhost %q", key.value)
	if key.value == "" {
		d.errs.addf(key.pos, `the default vhost is named "/"`, "vhost name must not be empty")
		return
	}
	v := fd.vhost(key)
	v.ignore = append(v.ignore, ignoresOf(key)...)
	f, ok := d.fields(body, what, vhostFields)
	if !ok {
		return
	}
	if e, ok := f.get("description"); ok {
		if _, ok := d.str(e.value, label(what, "description")); ok {
			fd.setOnce(&v.description, e.value, label(what, "description"))
		}
	}
	if e, ok := f.get("tags"); ok {
		fd.vhostTags(v, e.value, label(what, "tags"))
	}
	if e, ok := f.get("default_queue_type"); ok {
		if _, ok := d.enum(e.value, label(what, "default_queue_type"), queueTypes...); ok {
			fd.setOnce(&v.defaultQueueType, e.value, label(what, "default_queue_type"))
		}
	}
	fd.addObjects(v.exchanges, f.value("exchanges"), label(what, "exchanges"))
	fd.addObjects(v.queues, f.value("queues"), label(what, "queues"))
	for _, k := range namedKinds() {
		section := k.Section()
		fd.addObjects(v.named[k], f.value(section), label(what, section))
	}
	fd.addItems(v, f, what)
	if b := f.value("bindings"); b != nil && !b.isNull() {
		if b.kind != seqNode {
			d.errs.addf(b.pos, "write bindings as a list of {source, destination, routing_key}", "%s: expected a list, got %s", label(what, "bindings"), describe(b))
		} else {
			for i, it := range b.items {
				v.bindings = append(v.bindings, indexed{n: it, what: fmt.Sprintf("%s[%d]", label(what, "bindings"), i)})
			}
		}
	}
	if df := f.value("defaults"); df != nil {
		df2, ok := d.fields(df, label(what, "defaults"), defaultsFields)
		if ok {
			for _, name := range defaultsFields {
				if e, ok := df2.get(name); ok {
					v.defaults.add(d, e.key, e.value, label(what, "defaults."+name))
				}
			}
		}
	}
}

// setOnce records a vhost setting; a second, different value is an error.
// vhostTags reads a vhost's tags: a list of strings, each without a comma
// (the broker's API joins them with commas), set in one file only or to
// the same tags.
func (fd *fileDecoder) vhostTags(v *rawVhost, n *node, what string) {
	d := fd.d
	if n.bad {
		return
	}
	if n.kind != seqNode {
		d.errs.addf(n.pos, `write a list of strings: tags: [prod, team-a], or [] for none`, "%s: expected a list of strings, got %s", what, describe(n))
		return
	}
	tags := make([]string, 0, len(n.items))
	for i, e := range n.items {
		if e.bad {
			return
		}
		switch {
		case !textual(e):
			d.errs.addf(e.pos, "quote it", "%s[%d]: expected a string, got %s", what, i, describe(e))
			return
		case strings.TrimSpace(e.value) == "":
			d.errs.addf(e.pos, "remove it, or write the tag", "%s[%d]: a tag must not be empty", what, i)
			return
		case strings.Contains(e.value, ","):
			d.errs.addf(e.pos, "write each tag as its own list item", "%s[%d]: a tag must not contain a comma (the broker splits tags at commas), found %q", what, i, e.value)
			return
		}
		tags = append(tags, strings.TrimSpace(e.value))
	}
	if v.tags == nil {
		v.tags, v.tagsList = n, tags
		return
	}
	if !topology.SameTags(v.tagsList, tags) {
		d.errs.addf(n.pos, "set it in one file only, or to the same tags", "%s: %q conflicts with %q at %s", what, tags, v.tagsList, v.tags.pos)
	}
}

func (fd *fileDecoder) setOnce(slot **node, n *node, what string) {
	if *slot == nil {
		*slot = n
		return
	}
	if (*slot).value != n.value {
		fd.d.errs.addf(n.pos, "set it in one file only, or to the same value", "%s: %q conflicts with %q at %s", what, n.value, (*slot).value, (*slot).pos)
	}
}

func (fd *fileDecoder) addObjects(objs *objects, n *node, what string) {
	if n.isNull() {
		return
	}
	if n.kind != mapNode {
		fd.d.errs.addf(n.pos, "write a mapping from each "+objs.kind+" name to its settings", "%s: expected a mapping of names, got %s", what, describe(n))
		return
	}
	if len(objs.byKey) == 0 {
		objs.byKey = make(map[string]named, len(n.entries))
		objs.order = slices.Grow(objs.order, len(n.entries))
	}
	var owner *node // the object left with no settings by the fields beside it
	for i, e := range n.entries {
		if i > 0 && n.entries[i-1].value.isNull() {
			owner = n.entries[i-1].key
		}
		if owner != nil && misindentedField(objs.kind, e) {
			fd.d.errs.addf(e.key.pos, fmt.Sprintf("indent it under %q, further than %q", owner.value, owner.value),
				"%q reads as another %s's name, but it is a setting: it is written beside %s %q (%s), which has none", e.key.value, objs.kind, objs.kind, owner.value, owner.pos)
			continue
		}
		owner = nil
		objs.add(fd.d, e.key, e.value, "")
	}
}

// objectFields are the fields of each kind addObjects reads by name whose
// values a user may write one level too far left.
var objectFields = map[string][]string{"queue": queueFields, "exchange": exchangeFields}

// misindentedField reports whether e, read as an object's name after one
// left with no settings, is a field of that object written one level too
// far left:
//
//	q1:
//	type: quorum
//
// q1 is then null, and e a field name (type, durable, …) whose value is no
// mapping, which no object's settings are.
func misindentedField(kind string, e entry) bool {
	return e.value != nil && e.value.kind != mapNode && !e.value.isNull() && slices.Contains(objectFields[kind], e.key.value)
}

// add records one object; the same name twice is an error naming both
// places, the object by what ("" for its kind and name: built only for
// the error, as a large file's objects are many).
func (o *objects) add(d *decoder, key, value *node, what string) {
	if prev, dup := o.byKey[key.value]; dup {
		if what == "" {
			what = fmt.Sprintf("%s %q", o.kind, key.value)
		}
		d.errs.addf(key.pos, "declare each "+o.kind+" once per vhost; remove or rename one", "%s is already declared at %s", what, prev.key.pos)
		return
	}
	o.byKey[key.value] = named{key: key, value: value}
	o.order = append(o.order, key.value)
}

// release drops the nodes of a decoded object, so that a large file's node
// tree is freed while its objects are built. The name stays in order.
func (o *objects) release(name string) {
	o.byKey[name] = named{}
}

// intRange bounds for fields that have none of their own.
const (
	maxInt   = math.MaxInt64
	maxInt32 = math.MaxInt32
)
