package export

import (
	"fmt"
	"net/url"

	"go.yaml.in/yaml/v3"

	"github.com/mqctl/mqctl/pkg/kind"
	"github.com/mqctl/mqctl/pkg/topology"
)

// usersNode is the top-level users section of t (nil when t covers no
// users): each user's tags, then the kinds nested in it (kind.ItemSpec:
// its limits, and permissions and topic permissions by vhost). A password
// is never written: a ${VAR} placeholder stands for it (userVariables
// lists them), the file's own variable when known. With mask, each secret
// is written under its own key as topology.Mask instead (addMaskedSecrets).
func usersNode(t *topology.Topology, opts Options) *yaml.Node {
	if !t.Declares(kind.User) && len(t.Items[kind.User]) == 0 {
		return nil
	}
	spec, _ := kind.Of(kind.User)
	m := mapping()
	for _, name := range t.Items.Names(kind.User) {
		u := t.Items.Get(kind.User, name)
		n := mapping()
		switch {
		case opts.MaskSecrets:
			addMaskedSecrets(n, spec, u)
		case opts.PasswordHashes && hashOnly(u):
			add(n, kind.UserPasswordHash, placeholder(hashVariable(u)))
			if alg, _ := u.Settings[kind.UserHashingAlgorithm].(string); alg != "" && alg != kind.HashingAlgorithms[0] {
				add(n, kind.UserHashingAlgorithm, str(alg))
			}
		case hasPassword(u):
			add(n, kind.UserPassword, placeholder(passwordVariable(u)))
		}
		tags := valueNode(u.Settings[kind.UserTags])
		tags.Style = yaml.FlowStyle
		add(n, kind.UserTags, tags)
		nestedNodes(t, spec, name, n)
		add(m, name, n)
	}
	return m
}

// addMaskedSecrets adds to n each secret setting user u has, under its
// own key (password, or password_hash and hashing_algorithm), as
// topology.Mask.
func addMaskedSecrets(n *yaml.Node, s kind.Spec, u *topology.Item) {
	for _, k := range s.Secret {
		if _, ok := u.Settings[k]; ok {
			add(n, k, str(topology.Mask))
		}
	}
}

// nestedNodes adds to n, the node of item owner of kind s, the section of
// each kind nested in it that holds an item of owner: a Single kind's
// settings (from t's broker-level items), a ByVhost kind's item in each
// vhost of t, its fields in their order (a list by ListSpec.By, one
// mapping per value).
func nestedNodes(t *topology.Topology, s kind.Spec, owner string, n *yaml.Node) {
	for _, k := range s.Item.Nested {
		ns, _ := kind.Of(k)
		switch ns.Item.Shape {
		case kind.Single:
			if it := t.Items.Get(k, owner); it != nil {
				in := valueNode(map[string]any(it.Settings))
				flowify(in, 6)
				add(n, ns.Section, in)
			}
		case kind.ByVhost:
			sec := mapping()
			for _, vn := range t.VhostNames() {
				it := t.Vhosts[vn].Items.Get(k, owner)
				if it == nil {
					continue
				}
				ls := ns.Item.List
				if ls == nil || ls.By == "" {
					in := mapping()
					addFields(in, ns.Item.Fields, "", it.Settings)
					flowify(in, 8+len(vn))
					add(sec, vn, in)
					continue
				}
				seq := sequence()
				for _, by := range it.Settings.Keys() {
					e, _ := it.Settings[by].(map[string]any)
					en := mapping()
					add(en, ls.By, str(by))
					addFields(en, ls.Fields, ls.By, e)
					flowify(en, 10)
					seq.Content = append(seq.Content, en)
				}
				add(sec, vn, seq)
			}
			if len(sec.Content) > 0 {
				add(n, ns.Section, sec)
			}
		}
	}
}

// addFields adds settings to mapping m by fields, in their order, but
// skip.
func addFields(m *yaml.Node, fields []kind.Field, skip string, settings map[string]any) {
	for _, fl := range fields {
		if fl.Name == skip {
			continue
		}
		v, ok := settings[fl.Name]
		if !ok && fl.Type == kind.FieldString {
			v = ""
		}
		add(m, fl.Name, valueNode(v))
	}
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

// hashOnly reports whether the source holds user u's password only as a
// hash (a broker, a definitions export), not from a file's password.
func hashOnly(u *topology.Item) bool {
	if _, ok := u.Settings[kind.UserPassword]; ok {
		return false
	}
	h, _ := u.Settings[kind.UserPasswordHash].(string)
	return h != "" && h != topology.Mask
}

// hashVariable names the placeholder of user u's password hash: the
// user's name in upper case with _PASSWORD_HASH.
func hashVariable(u *topology.Item) string {
	return kind.VariableName(u.Name, "PASSWORD_HASH")
}

// userVariables lists the password placeholders of t's users, as an
// export with opts writes them.
func userVariables(t *topology.Topology, opts Options) []Variable {
	var out []Variable
	for _, name := range t.Items.Names(kind.User) {
		u := t.Items.Get(kind.User, name)
		switch {
		case opts.PasswordHashes && hashOnly(u):
			out = append(out, Variable{Name: hashVariable(u), What: fmt.Sprintf("the password hash of user %q, as the broker stores it (password_hash of GET /api/users/%s)", name, url.PathEscape(name))})
		case hasPassword(u):
			out = append(out, Variable{Name: passwordVariable(u), What: fmt.Sprintf("the password of user %q", name)})
		}
	}
	return out
}
