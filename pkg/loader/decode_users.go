package loader

import (
	"fmt"

	"slices"

	"github.com/mqctl/mqctl/pkg/kind"
	"github.com/mqctl/mqctl/pkg/kinds"
	"github.com/mqctl/mqctl/pkg/topology"
)

// The top-level users section (SPEC §9): each user's password or hash,
// tags and limits (broker-level items), and its permissions and topic
// permissions by vhost (items of those vhosts, which the file must
// declare).

var (
	userFields            = []string{"password", "password_hash", "hashing_algorithm", "tags", "limits", "permissions", "topic_permissions"}
	permissionFields      = []string{"configure", "write", "read"}
	topicPermissionFields = []string{"exchange", "write", "read"}
	userTags              = []string{"administrator", "monitoring", "policymaker", "management", "impersonator"}
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
	secret := func(k kind.Kind) []string {
		h, _ := kinds.For(k)
		return kinds.SecretFields(h)
	}
	for _, name := range ru.users.order {
		o := ru.users.byKey[name]
		what := fmt.Sprintf("user %q", name)
		f, ok := d.fields(o.value, what, userFields)
		if !ok {
			continue
		}
		u := &topology.Item{Kind: kind.User, Name: name, Settings: topology.Args{}, Secret: secret(kind.User)}
		u.Pos = o.key.pos
		for _, field := range []string{kinds.UserPassword, kinds.UserPasswordHash} {
			e, ok := f[field]
			if !ok {
				continue
			}
			s, ok := d.str(e.value, label(what, field))
			if !ok {
				continue
			}
			u.Settings[field] = s
			if ref, ok := d.refs[e.value]; ok {
				if u.Refs == nil {
					u.Refs = map[string]string{}
				}
				u.Refs[field] = ref
			}
		}
		if f.has(kinds.UserPassword) && f.has(kinds.UserPasswordHash) {
			d.errs.addf(f.valuePos(kinds.UserPasswordHash), "keep one: password (from ${VAR}) or password_hash", "%s: both password and password_hash are set", what)
		}
		if e, ok := f["hashing_algorithm"]; ok {
			if !f.has(kinds.UserPasswordHash) {
				d.errs.addf(e.value.pos, "remove it, or give password_hash", "%s: hashing_algorithm applies to password_hash only", what)
			} else if alg, ok := d.enum(e.value, label(what, "hashing_algorithm"), hashingAlgorithms...); ok {
				u.Settings[kinds.UserHashingAlgorithm] = alg
			}
		}
		u.Settings[kinds.UserTags] = l.userTags(f, what)
		t.Items.Put(u)
		if e, ok := f["limits"]; ok {
			h, _ := kinds.For(kind.UserLimits)
			if it := d.item(h, name, e.value, label(what, "limits")); it != nil && len(it.Settings) > 0 {
				t.Items.Put(it)
			}
		}
		if e, ok := f["permissions"]; ok {
			l.userPermissions(t, name, e.value, label(what, "permissions"))
		}
		if e, ok := f["topic_permissions"]; ok {
			l.userTopicPermissions(t, name, e.value, label(what, "topic_permissions"))
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
	var tags []string
	for i, n := range nodes {
		if s, ok := d.enum(n, fmt.Sprintf("%s[%d]", label(what, "tags"), i), userTags...); ok {
			tags = append(tags, s)
		}
	}
	slices.Sort(tags)
	tags = slices.Compact(tags)
	out := make([]any, len(tags))
	for i, s := range tags {
		out[i] = s
	}
	return out
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
	for _, e := range n.entries {
		pw := fmt.Sprintf("%s.%s", what, e.key.value)
		v := l.permissionVhost(t, e.key, what)
		f, ok := d.fields(e.value, pw, permissionFields)
		if !ok || v == nil {
			continue
		}
		it := &topology.Item{Kind: kind.Permission, Name: user, Settings: topology.Args{}}
		it.Pos = e.key.pos
		for _, p := range permissionFields {
			s := "^$" // none: an operation left out is not allowed
			if fe, ok := f[p]; ok {
				if s, ok = d.str(fe.value, label(pw, p)); !ok {
					continue
				}
			}
			it.Settings[p] = s
		}
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
		it.Pos = e.key.pos
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
