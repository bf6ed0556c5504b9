package rmqversion

import (
	"fmt"

	"github.com/mqctl/mqctl/pkg/kind"
	"github.com/mqctl/mqctl/pkg/topology"
)

// MaxPatternBytes is the longest regular expression RabbitMQ takes in a
// policy's pattern, a permission and a topic permission from 4.2.9 and
// 4.3.2 (rabbit_re; measured on 4.3.6: "pattern must not exceed 1024
// bytes" for a policy, invalid_regexp for a permission, where 4.0.5 and
// 3.10.8 take a pattern of 1,083 bytes).
const MaxPatternBytes = 1024

// PatternLimit: RabbitMQ refuses a pattern longer than MaxPatternBytes.
func (v Version) PatternLimit() bool { return v.atLeastPatch(4, 3, 2) }

// Pattern is one regular expression of a vhost's objects that RabbitMQ
// evaluates: its owner, what it is in the owner, and its text.
type Pattern struct {
	Kind   kind.Kind // a policy kind, kind.Permission or kind.TopicPermission
	Name   string    // the policy's name, or the user's
	Object string    // `policy "p"`, `permission of user "u"`, …
	Key    string    // "pattern", "configure", `write on exchange "x"`, …
	Meta   topology.Meta
	Expr   string
}

// Patterns lists the regular expressions of vhost vh: its policies' and
// operator policies' patterns, and the permissions and topic permissions
// of its users.
func Patterns(vh *topology.Vhost) []Pattern {
	var out []Pattern
	for _, k := range kind.PolicyKinds() {
		ps := vh.PoliciesOf(k)
		for _, name := range sortedKeys(ps) {
			out = append(out, Pattern{Kind: k, Name: name, Object: fmt.Sprintf("%s %q", k.Label(), name), Key: "pattern", Meta: ps[name].Meta, Expr: ps[name].Pattern})
		}
	}
	for _, user := range vh.Items.Names(kind.Permission) {
		it := vh.Items.Get(kind.Permission, user)
		for _, f := range []string{"configure", "write", "read"} {
			if s, ok := it.Settings.String(f); ok {
				out = append(out, Pattern{Kind: kind.Permission, Name: user, Object: fmt.Sprintf("permission of user %q", user), Key: f, Meta: it.Meta, Expr: s})
			}
		}
	}
	for _, user := range vh.Items.Names(kind.TopicPermission) {
		it := vh.Items.Get(kind.TopicPermission, user)
		for _, x := range sortedKeys(it.Settings) {
			m, _ := it.Settings[x].(map[string]any)
			for _, f := range []string{"write", "read"} {
				if s, ok := m[f].(string); ok {
					out = append(out, Pattern{Kind: kind.TopicPermission, Name: user, Object: fmt.Sprintf("topic permission of user %q", user), Key: fmt.Sprintf("%s on exchange %q", f, x), Meta: it.Meta, Expr: s})
				}
			}
		}
	}
	return out
}

// PatternFix says how to shorten a pattern of n bytes.
func PatternFix(p Pattern) string {
	if p.Key == "pattern" {
		return fmt.Sprintf("shorten it to %d bytes at most: match a common prefix (^orders\\.) rather than listing every name, or split the policy in two", MaxPatternBytes)
	}
	return fmt.Sprintf("shorten it to %d bytes at most: grant a common prefix (^orders\\.) rather than every name, or give the names a prefix in common (an access list writes one alternative per name)", MaxPatternBytes)
}

// checkPatterns appends to out the patterns of vhost vn longer than v
// takes.
func (v Version) checkPatterns(out []Refusal, vn string, vh *topology.Vhost) []Refusal {
	if !v.PatternLimit() {
		return out
	}
	for _, p := range Patterns(vh) {
		if len(p.Expr) <= MaxPatternBytes {
			continue
		}
		out = append(out, Refusal{Vhost: vn, Object: p.Object, Key: p.Key, Pos: p.Meta.Pos,
			Reason: fmt.Sprintf("RabbitMQ %s refuses a regular expression over %d bytes (HTTP 400, from 4.3.2), and this one has %d", v.Line(), MaxPatternBytes, len(p.Expr)),
			Fix:    PatternFix(p)})
	}
	return out
}
