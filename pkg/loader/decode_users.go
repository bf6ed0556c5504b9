package loader

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/mqctl/mqctl/pkg/kind"
	"github.com/mqctl/mqctl/pkg/rmqversion"
	"github.com/mqctl/mqctl/pkg/topology"
)

// The top-level users section (SPEC §9): each user's password or hash,
// tags and limits (broker-level items), and its permissions and topic
// permissions by vhost (items of those vhosts, which the file must
// declare).

// accessSection is the users section's sugar: a user's access by vhost,
// expanded into its permissions (userAccess).
const accessSection = "access"

// userFields are the fields of a user in the file: its item's, the
// sections of the kinds nested in it, and access.
func userFields() []string {
	spec, _ := kind.Of(kind.User)
	return append(kind.User.FieldNames(), nestedSections(spec)...)
}

// nestedSections are the sections of the kinds nested in s's items, and
// the sugar of the users section.
func nestedSections(s kind.Spec) []string {
	var out []string
	for _, k := range s.Item.Nested {
		ns, _ := kind.Of(k)
		out = append(out, ns.Section)
	}
	if s.Kind == kind.User {
		out = append(out, accessSection)
	}
	return out
}

// rawUsers are the users of every file, not yet decoded.
type rawUsers struct {
	declared bool // some file has a users section
	users    *objects
}

// addUsers records a file's users section.
func (fd *fileDecoder) addUsers(n *node) {
	if n == nil {
		return
	}
	fd.users.declared = true
	if fd.users.users == nil {
		fd.users.users = newObjects("user")
	}
	fd.addObjects(fd.users.users, n, "users")
}

// buildUsers decodes the users section into t by the user kind's spec:
// each user (a broker-level item) and the kinds nested in it — its limits
// on the broker, its permissions and topic permissions in the vhosts of
// t — then the access sugar.
func (l *load) buildUsers(t *topology.Topology) {
	ru := l.fd.users
	if !ru.declared {
		return
	}
	spec, _ := kind.Of(kind.User)
	t.Declare(kind.User)
	for _, k := range spec.Item.Nested {
		t.Declare(k)
	}
	if ru.users == nil {
		return
	}
	for _, name := range ru.users.order {
		o := ru.users.byKey[name]
		if !l.d.itemNamed(spec, o.key) {
			continue
		}
		what := fmt.Sprintf("user %q", name)
		u, f := l.d.itemFields(spec, name, o.value, what, nestedSections(spec))
		if f == nil {
			continue
		}
		if u != nil {
			u.Pos = o.key.pos
			t.Items.Put(u)
		}
		l.nested(t, spec, name, f, what)
		if e, ok := f.get(accessSection); ok {
			l.userAccess(t, name, e.value, label(what, accessSection), f.value("permissions"))
		}
	}
}

// nested decodes the sections of the kinds nested in item owner of kind
// s (its fields f): a Single kind's item is named after owner and lives
// on the broker; a ByVhost kind's section gives one item per vhost.
func (l *load) nested(t *topology.Topology, s kind.Spec, owner string, f fieldSet, what string) {
	for _, k := range s.Item.Nested {
		ns, _ := kind.Of(k)
		e, ok := f.get(ns.Section)
		if !ok {
			continue
		}
		sec := label(what, ns.Section)
		switch ns.Item.Shape {
		case kind.Single:
			if it := l.d.item(ns, owner, e.value, sec); it != nil && len(it.Settings) > 0 {
				t.Items.Put(it)
			}
		case kind.ByVhost:
			l.byVhost(t, ns, owner, e.value, sec)
		}
	}
}

// byVhost decodes the section of a ByVhost kind s nested in item owner:
// a mapping from each vhost the file declares to that vhost's item.
func (l *load) byVhost(t *topology.Topology, s kind.Spec, owner string, n *node, what string) {
	d := l.d
	if n.isNull() {
		return
	}
	if n.kind != mapNode {
		d.errs.addf(n.pos, fmt.Sprintf("write %s as a mapping from vhost to %s", s.Section, itemShape(s)), "%s: expected a mapping of vhosts, got %s", what, describe(n))
		return
	}
	for _, e := range n.entries {
		v := l.declaredVhost(t, e.key, what, s.Plural)
		it := d.item(s, owner, e.value, fmt.Sprintf("%s.%s", what, e.key.value))
		if it == nil || v == nil || len(it.Settings) == 0 {
			continue
		}
		it.Pos, it.Ignore = e.key.pos, ignoresOf(e.key, e.value)
		v.Items.Put(it)
	}
}

// itemShape is how the file writes an item of s, for hints: {configure,
// write, read}, or a list of {exchange, write, read}.
func itemShape(s kind.Spec) string {
	if ls := s.Item.List; ls != nil {
		return "a list of " + braced(ls.Fields)
	}
	return braced(s.Item.Fields)
}

// braced is a mapping of fields as hints write it: {configure, write, read}.
func braced(fields []kind.Field) string {
	return "{" + strings.Join(kind.Names(fields), ", ") + "}"
}

// declaredVhost returns the vhost of t that a user's section of plural
// names, reporting one the file does not declare.
func (l *load) declaredVhost(t *topology.Topology, key *node, what, plural string) *topology.Vhost {
	v := t.Vhosts[key.value]
	if v == nil {
		l.d.errs.addf(key.pos, fmt.Sprintf("declare vhost %q under vhosts, or remove these %s", key.value, plural),
			"%s: vhost %q is not declared in the file", what, key.value)
	}
	return v
}

// The access sugar (SPEC §9): per user and vhost, the queues it consumes,
// the exchanges it publishes to and the queues or exchanges it declares,
// expanded into that user's permission on the vhost with exact, escaped,
// anchored regexps (ExactRegexp). What each operation needs is what
// RabbitMQ's channel checks (deps/rabbit/src/rabbit_channel.erl, the same
// in 3.10 and 4.0):
//
//   - basic.consume and basic.get: read on the queue (check_read_permitted);
//     nothing on the exchanges it is bound to, whatever the queue type.
//     queue.purge needs read too, so a consumer may purge its queue.
//   - basic.publish: write on the exchange (check_write_permitted); the
//     default exchange "" is checked as amq.default
//     (rabbit_access_control:check_resource_access), so publish: [""]
//     grants write on amq.default. Topic permissions, when the user has
//     any, are checked too; access writes none.
//   - queue.declare (active) and exchange.declare: configure on the name,
//     checked even when the object exists; queue.delete and
//     exchange.delete need configure too. A passive declare needs no
//     permission at all.
//   - queue.declare of a queue that does not exist yet, with an
//     x-dead-letter-exchange argument: read on the queue and write on the
//     dead-letter exchange (RabbitMQ checks both before it creates the
//     queue, so that nobody publishes through a DLX it may not write to).
//     mqctl usually creates the queue first, but a consumer that declares
//     its queue on start must not fail when it is first: declare grants
//     both for a queue the file gives a dead-letter exchange argument. A
//     DLX set by policy is not in the client's arguments and needs
//     nothing. Dead-lettering itself runs in the queue, under no user:
//     it needs no permission.
//   - exchange.declare of an exchange that does not exist yet, with an
//     alternate-exchange argument: read on the exchange and write on the
//     alternate exchange; granted likewise.
//   - queue.bind / exchange.bind (and unbind): write on the destination
//     and read on the source exchange (binding_action_with_checks). The
//     bindings a user declares are taken to be those the file gives the
//     objects it declares (the consumer owns its queue and its bindings):
//     for each such binding, write on the object and read on its source.
//     Binding from the default exchange is refused to everyone.
var accessFields = []string{"consume", "publish", "declare"}

// DefaultExchangeResource is the name RabbitMQ checks permissions on for
// the default exchange "".
const DefaultExchangeResource = "amq.default"

// Access is what one user's access sugar says about one vhost, as the file
// wrote it.
type Access struct {
	User, Vhost string
	// Consume are queues, Publish exchanges ("" the default exchange),
	// Declare queues or exchanges, in file order.
	Consume, Publish, Declare []AccessName
	// Pos is where the vhost is named under access.
	Pos topology.Pos
}

// AccessName is one name of an access list and where it is written.
type AccessName struct {
	Name string
	Pos  topology.Pos
}

// Expand is what a grants in vhost v (ExpandAccess).
func (a *Access) Expand(v *topology.Vhost) AccessGrant {
	return ExpandAccess(v, nameList(a.Consume), nameList(a.Publish), nameList(a.Declare))
}

func nameList(ns []AccessName) []string {
	out := make([]string, len(ns))
	for i, n := range ns {
		out[i] = n.Name
	}
	return out
}

// AccessGrant is what access expands to: the names each of the
// permission's regexps must match, sorted.
type AccessGrant struct {
	Configure, Write, Read []string
}

// Permission is the grant as the permission's settings.
func (g AccessGrant) Permission() topology.Args {
	return topology.Args{"configure": ExactRegexp(g.Configure), "write": ExactRegexp(g.Write), "read": ExactRegexp(g.Read)}
}

// ExpandAccess computes what the operations of an access entry need in
// vhost v (see the rules above accessFields).
func ExpandAccess(v *topology.Vhost, consume, publish, declare []string) AccessGrant {
	conf, write, read := map[string]bool{}, map[string]bool{}, map[string]bool{}
	exchange := func(name string) string {
		if name == "" {
			return DefaultExchangeResource
		}
		return name
	}
	for _, q := range consume {
		read[q] = true
	}
	for _, x := range publish {
		write[exchange(x)] = true
	}
	for _, name := range declare {
		conf[name] = true
		if v == nil {
			continue
		}
		if q := v.Queues[name]; q != nil {
			if dlx, ok := q.Arguments["x-dead-letter-exchange"].(string); ok {
				read[name], write[exchange(dlx)] = true, true
			}
		}
		if x := v.Exchanges[name]; x != nil {
			if ae, ok := x.Arguments["alternate-exchange"].(string); ok {
				read[name], write[exchange(ae)] = true, true
			}
		}
		for _, b := range v.Bindings {
			if b.Destination == name && b.Source != "" {
				write[name], read[b.Source] = true, true
			}
		}
	}
	keys := func(m map[string]bool) []string {
		return slices.Sorted(func(yield func(string) bool) {
			for k := range m {
				if !yield(k) {
					return
				}
			}
		})
	}
	return AccessGrant{Configure: keys(conf), Write: keys(write), Read: keys(read)}
}

// ExactRegexp is the regexp that matches exactly names: ^$ (nothing) for
// none, ^orders\.audit$ for one, ^(?:a|b)$ for several (sorted, each
// escaped with regexp.QuoteMeta).
func ExactRegexp(names []string) string {
	ns := slices.Sorted(slices.Values(names))
	ns = slices.Compact(ns)
	switch len(ns) {
	case 0:
		return "^$"
	case 1:
		return "^" + regexp.QuoteMeta(ns[0]) + "$"
	}
	q := make([]string, len(ns))
	for i, n := range ns {
		q[i] = regexp.QuoteMeta(n)
	}
	plain := "^(?:" + strings.Join(q, "|") + ")$"
	if len(plain) <= rmqversion.MaxPatternBytes {
		return plain
	}
	// RabbitMQ 4.3.2+ refuses a longer one: take the names' common prefix
	// and suffix out of the alternatives, which many names of one family
	// share (service.tenant07.events.inbox). A form that is still too
	// long is left for the version table and lint (MQ703) to refuse.
	pre, suf := commonAffixes(ns)
	mid := make([]string, len(ns))
	for i, n := range ns {
		mid[i] = regexp.QuoteMeta(n[len(pre) : len(n)-len(suf)])
	}
	return "^" + regexp.QuoteMeta(pre) + "(?:" + strings.Join(mid, "|") + ")" + regexp.QuoteMeta(suf) + "$"
}

// commonAffixes returns the longest prefix and suffix all names share,
// not overlapping in the shortest, and cut at whole UTF-8 characters.
func commonAffixes(names []string) (prefix, suffix string) {
	prefix, suffix = names[0], names[0]
	shortest := len(names[0])
	for _, n := range names[1:] {
		shortest = min(shortest, len(n))
		i := 0
		for i < len(prefix) && i < len(n) && prefix[i] == n[i] {
			i++
		}
		prefix = prefix[:i]
		j := 0
		for j < len(suffix) && j < len(n) && suffix[len(suffix)-1-j] == n[len(n)-1-j] {
			j++
		}
		suffix = suffix[len(suffix)-j:]
	}
	for !utf8.ValidString(prefix) {
		prefix = prefix[:len(prefix)-1]
	}
	if len(prefix)+len(suffix) > shortest {
		suffix = suffix[len(prefix)+len(suffix)-shortest:]
	}
	for !utf8.ValidString(suffix) {
		suffix = suffix[1:]
	}
	return prefix, suffix
}

// AccessOf returns the access sugar a permission item was expanded from
// (the item carries it: topology.Item.Sugar), nil when the file wrote the
// permission itself (or it was read from a broker).
func AccessOf(it *topology.Item) *Access {
	if it == nil {
		return nil
	}
	a, _ := it.Sugar.(*Access)
	return a
}

// userAccess expands a user's access section into its permissions.
// explicit is the user's permissions section (nil when none): a vhost in
// both is an error.
func (l *load) userAccess(t *topology.Topology, user string, n *node, what string, explicit *node) {
	d := l.d
	if n.isNull() {
		return
	}
	if n.kind != mapNode {
		d.errs.addf(n.pos, "write access as a mapping from vhost to {consume: [queues], publish: [exchanges], declare: [names]}", "%s: expected a mapping of vhosts, got %s", what, describe(n))
		return
	}
	byHand := map[string]*node{}
	if explicit != nil && explicit.kind == mapNode {
		for _, e := range explicit.entries {
			byHand[e.key.value] = e.key
		}
	}
	for _, e := range n.entries {
		vn := e.key.value
		aw := fmt.Sprintf("%s.%s", what, vn)
		f, ok := d.fields(e.value, aw, accessFields)
		if pk, both := byHand[vn]; both {
			d.errs.addf(e.key.pos, fmt.Sprintf("keep one for vhost %q: access (mqctl writes exact regexps) or permissions (your own regexps)", vn),
				"%s: vhost %q has both access and permissions (at %s)", what, vn, pk.pos)
			continue
		}
		v := t.Vhosts[vn]
		if v == nil {
			d.errs.addf(e.key.pos, fmt.Sprintf("declare vhost %q under vhosts, or remove its access", vn),
				"%s: vhost %q is not declared in the file", what, vn)
		}
		if !ok || v == nil {
			continue
		}
		a := &Access{User: user, Vhost: vn, Pos: e.key.pos}
		a.Consume = l.accessNames(f, "consume", aw, "queue")
		a.Publish = l.accessNames(f, "publish", aw, "exchange")
		a.Declare = l.accessNames(f, "declare", aw, "queue or exchange")
		it := &topology.Item{Kind: kind.Permission, Name: user, Settings: a.Expand(v).Permission(), Sugar: a}
		it.Pos, it.Ignore = e.key.pos, ignoresOf(e.key, e.value)
		v.Items.Put(it)
	}
}

// accessNames reads one access list: a list of names, or one name. Only
// publish may name "" (the default exchange).
func (l *load) accessNames(f fieldSet, field, what, noun string) []AccessName {
	e, ok := f.get(field)
	if !ok {
		return nil
	}
	d := l.d
	fw := label(what, field)
	var nodes []*node
	switch e.value.kind {
	case seqNode:
		nodes = e.value.items
	case scalarNode:
		nodes = []*node{e.value}
	default:
		d.errs.addf(e.value.pos, fmt.Sprintf("write %s as a list of %s names, e.g. %s: [orders.audit]", field, noun, field), "%s: expected a list of names, got %s", fw, describe(e.value))
		return nil
	}
	var out []AccessName
	for i, n := range nodes {
		iw := fmt.Sprintf("%s[%d]", fw, i)
		s, ok := d.str(n, iw)
		if !ok {
			continue
		}
		if s == "" && field != "publish" {
			hint := "name the queue, e.g. consume: [orders.audit]"
			if field == "declare" {
				hint = "name the queue or exchange: access grants exact names, so a server-named queue (amq.gen-…) needs permissions instead"
			}
			d.errs.addf(n.pos, hint, "%s: must not be empty", iw)
			continue
		}
		out = append(out, AccessName{Name: s, Pos: n.pos})
	}
	return out
}
