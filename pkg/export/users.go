package export

import (
	"fmt"

	"go.yaml.in/yaml/v3"

	"github.com/mqctl/mqctl/pkg/kind"
	"github.com/mqctl/mqctl/pkg/topology"
)

// usersNode is the top-level users section of t (nil when t covers no
// users): each user's tags, limits, and permissions and topic permissions
// by vhost. A password is never written: a ${VAR} placeholder stands for
// it (userVariables lists them), the file's own variable when known.
// With mask, a password is written as topology.Mask instead.
func usersNode(t *topology.Topology, mask bool) *yaml.Node {
	if !t.Declares(kind.User) && len(t.Items[kind.User]) == 0 {
		return nil
	}
	m := mapping()
	for _, name := range t.Items.Names(kind.User) {
		u := t.Items.Get(kind.User, name)
		n := mapping()
		switch {
		case mask && hasPassword(u):
			add(n, kind.UserPassword, str(topology.Mask))
		case hasPassword(u):
			add(n, kind.UserPassword, placeholder(passwordVariable(u)))
		}
		tags := valueNode(u.Settings[kind.UserTags])
		tags.Style = yaml.FlowStyle
		add(n, kind.UserTags, tags)
		if l := t.Items.Get(kind.UserLimits, name); l != nil {
			ln := valueNode(map[string]any(l.Settings))
			flowify(ln, 6)
			add(n, "limits", ln)
		}
		perms, topics := mapping(), mapping()
		for _, vn := range t.VhostNames() {
			v := t.Vhosts[vn]
			if p := v.Items.Get(kind.Permission, name); p != nil {
				pn := mapping()
				for _, k := range kind.Permission.FieldNames() {
					s, _ := p.Settings[k].(string)
					add(pn, k, str(s))
				}
				flowify(pn, 8+len(vn))
				add(perms, vn, pn)
			}
			if tp := v.Items.Get(kind.TopicPermission, name); tp != nil {
				seq := sequence()
				for _, x := range tp.Settings.Keys() {
					xm, _ := tp.Settings[x].(map[string]any)
					e := mapping()
					add(e, "exchange", str(x))
					for _, k := range []string{"write", "read"} {
						s, _ := xm[k].(string)
						add(e, k, str(s))
					}
					flowify(e, 10)
					seq.Content = append(seq.Content, e)
				}
				add(topics, vn, seq)
			}
		}
		if len(perms.Content) > 0 {
			add(n, "permissions", perms)
		}
		if len(topics.Content) > 0 {
			add(n, "topic_permissions", topics)
		}
		add(m, name, n)
	}
	return m
}

// hasPassword reports whether user u has a password to stand in for.
func hasPassword(u *topology.Item) bool {
	if _, ok := u.Settings[kind.UserPassword]; ok {
		return true
	}
	if _, ok := u.Settings[kind.UserPasswordHash]; ok && u.Refs == nil && u.Settings[kind.UserPasswordHash] == topology.Mask {
		return true
	}
	h, _ := u.Settings[kind.UserPasswordHash].(string)
	return h != ""
}

// passwordVariable names the placeholder of user u's password: the
// file's variable when known, else the user's name in upper case with
// _PASSWORD.
func passwordVariable(u *topology.Item) string {
	if v, ok := u.Refs[kind.UserPassword]; ok {
		return v
	}
	return kind.PasswordVariable(u.Name)
}

// userVariables lists the password placeholders of t's users.
func userVariables(t *topology.Topology) []Variable {
	var out []Variable
	for _, name := range t.Items.Names(kind.User) {
		if u := t.Items.Get(kind.User, name); hasPassword(u) {
			out = append(out, Variable{Name: passwordVariable(u), What: fmt.Sprintf("the password of user %q", name)})
		}
	}
	return out
}
