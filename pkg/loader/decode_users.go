package loader

import (
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/mqctl/mqctl/pkg/kind"
	"github.com/mqctl/mqctl/pkg/topology"
)

// The top-level users section (SPEC §9): each user's password or hash,
// tags and limits (broker-level items), and its permissions and topic
// permissions by vhost (items of those vhosts, which the file must
// declare).

var (
	userFields            = []string{"password", "password_hash", "hashing_algorithm", "tags", "limits", "permissions", "topic_permissions", "access"}
	topicPermissionFields = []string{"exchange", "write", "read"}
	hashingAlgorithms     = []string{"rabbit_password_hashing_sha256", "rabbit_password_hashing_sha512"}
)

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

// buildUsers decodes the users section into t: users and their limits on
// the broker, their permissions in the vhosts of t.
func (l *load) buildUsers(t *topology.Topology) {
	ru := l.fd.users
	if !ru.declared {
		return
	}
	for _, k := range []kind.Kind{kind.User, kind.UserLimits, kind.Permission, kind.TopicPermission} {
		t.Declare(k)
	}
	if ru.users == nil {
		return
	}
	d := l.d
	for _, name := range ru.users.order {
		o := ru.users.byKey[name]
		what := fmt.Sprintf("user %q", name)
		f, ok := d.fields(o.value, what, userFields)
		if !ok {
			continue
		}
		u := &topology.Item{Kind: kind.User, Name: name, Settings: topology.Args{}, Secret: kind.SecretFields(kind.User)}
		u.Pos = o.key.pos
		for _, field := range []string{kind.UserPassword, kind.UserPasswordHash} {
			e, ok := f[field]
			if !ok {
				continue
			}
			fw := label(what, field)
			s := e.value.value // as written, when its variable is not set
			if !d.unsetSecret(e.value, fw) {
				if s, ok = d.str(e.value, fw); !ok {
					continue
				}
			}
			u.Settings[field] = s
			if ref, ok := d.refs[e.value]; ok {
				if u.Refs == nil {
					u.Refs = map[string]string{}
				}
				u.Refs[field] = ref
			}
		}
		if f.has(kind.UserPassword) && f.has(kind.UserPasswordHash) {
			d.errs.addf(f.valuePos(kind.UserPasswordHash), "keep one: password (from ${VAR}) or password_hash", "%s: both password and password_hash are set", what)
		}
		if e, ok := f["hashing_algorithm"]; ok {
			if !f.has(kind.UserPasswordHash) {
				d.errs.addf(e.value.pos, "remove it, or give password_hash", "%s: hashing_algorithm applies to password_hash only", what)
			} else if alg, ok := d.enum(e.value, label(what, "hashing_algorithm"), hashingAlgorithms...); ok {
				u.Settings[kind.UserHashingAlgorithm] = alg
			}
		}
		u.Settings[kind.UserTags] = l.userTags(f, what)
		t.Items.Put(u)
		if e, ok := f["limits"]; ok {
			limits, _ := kind.Of(kind.UserLimits)
			if it := d.item(limits, name, e.value, label(what, "limits")); it != nil && len(it.Settings) > 0 {
				t.Items.Put(it)
			}
		}
		if e, ok := f["permissions"]; ok {
			l.userPermissions(t, name, e.value, label(what, "permissions"))
		}
		if e, ok := f["topic_permissions"]; ok {
			l.userTopicPermissions(t, name, e.value, label(what, "topic_permissions"))
		}
		if e, ok := f["access"]; ok {
			l.userAccess(t, name, e.value, label(what, "access"), f.value("permissions"))
		}
	}
}

// userTags reads tags: a list of tag names, or one name.
func (l *load) userTags(f fieldSet, what string) []any {
	e, ok := f["tags"]
	if !ok {
		return []any{}
	}
	d := l.d
	var nodes []*node
	switch e.value.kind {
	case seqNode:
		nodes = e.value.items
	case scalarNode:
		nodes = []*node{e.value}
	default:
		d.errs.addf(e.value.pos, "write tags as a list, e.g. [management]", "%s: expected a list of tags, got %s", label(what, "tags"), describe(e.value))
		return []any{}
	}
	// RabbitMQ takes any tag (plugins and people define their own); the
	// five it knows grant management access.
	var tags []string
	for i, n := range nodes {
		if s, ok := d.name(n, fmt.Sprintf("%s[%d]", label(what, "tags"), i), "write a tag such as management"); ok {
			tags = append(tags, s)
		}
	}
	return kind.TagList(tags)
}

// permissionVhost returns the vhost of t that a user's permissions name,
// reporting one the file does not declare.
func (l *load) permissionVhost(t *topology.Topology, key *node, what string) *topology.Vhost {
	v := t.Vhosts[key.value]
	if v == nil {
		l.d.errs.addf(key.pos, fmt.Sprintf("declare vhost %q under vhosts, or remove these permissions", key.value),
			"%s: vhost %q is not declared in the file", what, key.value)
	}
	return v
}

func (l *load) userPermissions(t *topology.Topology, user string, n *node, what string) {
	d := l.d
	if n.isNull() {
		return
	}
	if n.kind != mapNode {
		d.errs.addf(n.pos, "write permissions as a mapping from vhost to {configure, write, read}", "%s: expected a mapping of vhosts, got %s", what, describe(n))
		return
	}
	spec, _ := kind.Of(kind.Permission)
	for _, e := range n.entries {
		pw := fmt.Sprintf("%s.%s", what, e.key.value)
		v := l.permissionVhost(t, e.key, what)
		// The kind's own fields (configure, write, read), each a regexp.
		settings, f, _, ok := d.settings(spec.Item.Fields, e.value, pw, nil)
		if f == nil || !ok || v == nil {
			continue
		}
		for _, fl := range spec.Item.Fields {
			if !settings.Has(fl.Name) {
				settings[fl.Name] = "^$" // none: an operation left out is not allowed
			}
		}
		it := &topology.Item{Kind: kind.Permission, Name: user, Settings: settings}
		it.Pos, it.Ignore = e.key.pos, ignoresOf(e.key, e.value)
		v.Items.Put(it)
	}
}

func (l *load) userTopicPermissions(t *topology.Topology, user string, n *node, what string) {
	d := l.d
	if n.isNull() {
		return
	}
	if n.kind != mapNode {
		d.errs.addf(n.pos, "write topic_permissions as a mapping from vhost to a list of {exchange, write, read}", "%s: expected a mapping of vhosts, got %s", what, describe(n))
		return
	}
	for _, e := range n.entries {
		pw := fmt.Sprintf("%s.%s", what, e.key.value)
		v := l.permissionVhost(t, e.key, what)
		if e.value.kind != seqNode {
			d.errs.addf(e.value.pos, "write a list of {exchange, write, read}", "%s: expected a list, got %s", pw, describe(e.value))
			continue
		}
		it := &topology.Item{Kind: kind.TopicPermission, Name: user, Settings: topology.Args{}}
		it.Pos, it.Ignore = e.key.pos, ignoresOf(e.key, e.value)
		for i, x := range e.value.items {
			xw := fmt.Sprintf("%s[%d]", pw, i)
			f, ok := d.fields(x, xw, topicPermissionFields)
			if !ok || !d.require(f, x, xw, "exchange", "exchange: amq.topic") {
				continue
			}
			ex, ok := d.str(f.value("exchange"), label(xw, "exchange"))
			if !ok {
				continue
			}
			if it.Settings.Has(ex) {
				d.errs.addf(f.valuePos("exchange"), "give each exchange once", "%s: exchange %q is listed twice", xw, ex)
				continue
			}
			m := map[string]any{}
			for _, p := range []string{"write", "read"} {
				s := "^$"
				if fe, ok := f[p]; ok {
					if s, ok = d.str(fe.value, label(xw, p)); !ok {
						continue
					}
				}
				m[p] = s
			}
			it.Settings[ex] = m
		}
		if v != nil && len(it.Settings) > 0 {
			v.Items.Put(it)
		}
	}
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
	return "^(?:" + strings.Join(q, "|") + ")$"
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
	e, ok := f[field]
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
