package kind

import (
	"crypto/md5"
	"crypto/sha256"
	"crypto/sha512"
	"crypto/subtle"
	"encoding/base64"
	"fmt"
	"hash"
	"slices"
	"strings"

	"github.com/mqctl/mqctl/pkg/pattern"
	"github.com/mqctl/mqctl/pkg/suggest"
)

// The kinds about users and their access (SPEC §9), declared under the
// file's top-level users section: a plan covers them only when the file
// has one (Spec.Declared). Users and their limits live on the broker
// (Spec.Broker), permissions and topic permissions in a vhost, one item
// per user. A user's item holds the others (ItemSpec.Nested): its limits,
// and its permissions and topic permissions by vhost (ByVhost); these
// kinds have no section of a vhost.
const (
	User            Kind = "user"
	UserLimits      Kind = "user_limits"
	Permission      Kind = "permission"
	TopicPermission Kind = "topic_permission"
)

var accessSpecs = []Spec{
	{Kind: User, WriteTag: Administrator, Label: "user", Plural: "users", Section: "users", APIPath: "users", InPlace: true, Broker: true, Declared: true,
		DeletePhase: 2, WritePhase: 6, Secret: []string{UserPassword, UserPasswordHash, UserHashingAlgorithm}, Item: userItem},
	{Kind: UserLimits, WriteTag: Administrator, Label: "user limits", Plural: "user limits", Section: "limits", APIPath: "user-limits", InPlace: true, Broker: true, Declared: true,
		DeletePhase: 1, WritePhase: 9, Item: userLimitsItem},
	{Kind: Permission, WriteTag: Administrator, Label: "permission", Plural: "permissions", Section: "permissions", APIPath: "permissions", InPlace: true, Declared: true,
		DeletePhase: 1, WritePhase: 9, Item: permissionItem},
	{Kind: TopicPermission, WriteTag: Administrator, Label: "topic permission", Plural: "topic permissions", Section: "topic_permissions", APIPath: "topic-permissions", InPlace: true, Declared: true,
		DeletePhase: 1, WritePhase: 9, Item: topicPermissionItem},
}

// Access returns the spec of every kind about users and their access,
// declared under the file's users section.
func Access() []Spec { return slices.Clone(accessSpecs) }

// Settings of a user item.
const (
	// UserPassword is the file's password (a secret).
	UserPassword = "password"
	// UserPasswordHash and UserHashingAlgorithm are the hash as the broker
	// stores it (secrets), from the broker or from the file's
	// password_hash.
	UserPasswordHash     = "password_hash"
	UserHashingAlgorithm = "hashing_algorithm"
	// UserTags are the user's tags, a sorted list (TagList).
	UserTags = "tags"
)

// BuiltinTags are the user tags RabbitMQ gives a meaning (the management
// plugin's, and impersonator); it takes any other tag too.
var BuiltinTags = []string{"administrator", "monitoring", "policymaker", "management", "impersonator"}

// HashingAlgorithms are the values a user's hashing_algorithm may take in
// the file: the default first, then sha512, then md5, which brokers before
// RabbitMQ 3.6 used and which users made then keep across upgrades
// (RabbitMQ 3.10.8, 4.0.5 and 4.3.6 take it: PUT /api/users/… answers 201),
// so that an export of such a user loads.
var HashingAlgorithms = []string{"rabbit_password_hashing_sha256", "rabbit_password_hashing_sha512", "rabbit_password_hashing_md5"}

// userItem: a user, named (users: {name: {password: …, tags: […],
// limits: {…}, permissions: {vhost: {…}}, topic_permissions: {vhost: […]}}}).
var userItem = &ItemSpec{
	Shape: Named,
	Doc:   "A user (SPEC §9): its password (or the hash the broker stores), its tags, and its limits, permissions and topic permissions, set in place.",
	Fields: []Field{
		{Name: UserPassword, Type: FieldString, Help: "the password, from ${VAR}: compared with the hash the broker stores, never shown or saved"},
		{Name: UserPasswordHash, Type: FieldString, Help: "the password's hash as the broker stores it (base64 of a 4-byte salt and the digest)"},
		{Name: UserHashingAlgorithm, Type: FieldString, Enum: HashingAlgorithms, Help: "rabbit_password_hashing_sha256 (the default), rabbit_password_hashing_sha512, or rabbit_password_hashing_md5 (of users an old broker made)"},
		{Name: UserTags, Type: FieldNames, Default: []any{}, Example: "management", Help: "the user's tags: administrator, monitoring, policymaker, management and impersonator grant access to the management API; RabbitMQ takes any other tag too"},
	},
	Validate: validateUser,
	Compare:  compareUsers,
	Nested:   []Kind{UserLimits, Permission, TopicPermission},
}

// validateUser: a user has a password or a hash, not both, and a hashing
// algorithm only with a hash.
func validateUser(s map[string]any) []Problem {
	var ps []Problem
	if has(s, UserPassword) && has(s, UserPasswordHash) {
		ps = append(ps, Problem{Field: UserPasswordHash, Msg: "password is set too", Hint: "keep one: password (from ${VAR}) or password_hash"})
	}
	if has(s, UserHashingAlgorithm) && !has(s, UserPasswordHash) {
		ps = append(ps, Problem{Field: UserHashingAlgorithm, Msg: "applies to password_hash only", Hint: "remove it, or give password_hash"})
	}
	if tags, ok := s[UserTags].([]any); ok {
		for _, t := range tags {
			// RabbitMQ takes any tag, so a misspelt one is taken too, and
			// the user silently lacks the access it was meant to grant.
			if t, ok := t.(string); ok && !slices.Contains(BuiltinTags, t) {
				if near := suggest.Within(t, BuiltinTags, 1); near != "" {
					ps = append(ps, Problem{Field: UserTags, Msg: fmt.Sprintf("%q is no tag RabbitMQ knows, and one letter from %q: RabbitMQ would take it, and the user would not have %s's access", t, near, near),
						Hint: fmt.Sprintf("write %s", near)})
				}
			}
		}
	}
	if h, ok := str(s, UserPasswordHash); ok && !base64Hash(h) {
		// The value is a secret: the problem never quotes it.
		ps = append(ps, Problem{Field: UserPasswordHash, Msg: "is not base64 (with its = padding): RabbitMQ refuses it (not_base64)",
			Hint: "give the hash as the broker stores it (GET /api/users/NAME, or a definitions export), or give password instead"})
	}
	return ps
}

// base64Hash reports whether RabbitMQ takes h as a password hash: ""
// (no password) or standard base64 with its padding, as Erlang's
// base64:decode/1 reads it (measured on 4.3.6: "QUJDRA==" taken,
// "QUJDRA", "QUJDRA=", "QUJDRA===" and "QUJD-_==" refused, HTTP 400
// not_base64). Whitespace, which the broker skips and then stores the
// hash without, is refused too: the next plan would see a change.
func base64Hash(h string) bool {
	if h == "" {
		return true
	}
	if strings.ContainsAny(h, " \t\r\n") {
		return false
	}
	_, err := base64.StdEncoding.DecodeString(h)
	return err == nil
}

// none is the regexp of an operation a permission leaves out: no name.
const none = "^$"

// permissionItem: a user's permissions on a vhost, one item per user
// named after it.
var permissionItem = &ItemSpec{
	Shape: ByVhost,
	Doc:   "The user's permissions (SPEC §9) by vhost, set in place: on each, regexps of the names it may configure, write and read.",
	Fields: []Field{
		{Name: "configure", Type: FieldString, Default: none, Help: "a regexp of the names the user may declare and delete"},
		{Name: "write", Type: FieldString, Default: none, Help: "a regexp of the names the user may publish to (and bind to)"},
		{Name: "read", Type: FieldString, Default: none, Help: "a regexp of the names the user may consume from (and bind from)"},
	},
	Validate: func(s map[string]any) []Problem { return regexpProblems(s, "permission", "configure", "write", "read") },
}

// regexpProblems are the problems of the regexps in fields of settings s
// that RabbitMQ refuses (pattern.Refused: invalid_regexp), the object
// named what ("permission").
func regexpProblems(s map[string]any, what string, fields ...string) []Problem {
	var ps []Problem
	for _, f := range fields {
		expr, ok := str(s, f)
		if !ok {
			continue
		}
		if why, fix, refused := pattern.Refused(expr); refused {
			ps = append(ps, Problem{Field: f, Msg: fmt.Sprintf("%q: %s: RabbitMQ refuses the %s (invalid_regexp)", expr, why, what), Hint: fix})
		}
	}
	return ps
}

// TopicPermissionExchange is the field of a topic permission's entry that
// names its exchange.
const TopicPermissionExchange = "exchange"

// topicPermissionItem: a user's topic permissions on a vhost, one item per
// user, written as a list of {exchange, write, read}: its settings map
// each exchange to {write, read}.
var topicPermissionItem = &ItemSpec{
	Shape: ByVhost,
	Doc:   "The user's topic permissions (SPEC §9) by vhost, set in place: on each, a list of {exchange, write, read}, regexps of the routing keys it may publish and bind with on that topic exchange.",
	List: &ListSpec{
		By:       TopicPermissionExchange,
		Required: []string{TopicPermissionExchange},
		Doc:      "a topic permission on one topic exchange",
		Fields: []Field{
			{Name: TopicPermissionExchange, Type: FieldString, Help: "the topic exchange the permission is for"},
			{Name: "write", Type: FieldString, Default: none, Help: "a regexp of the routing keys the user may publish with"},
			{Name: "read", Type: FieldString, Default: none, Help: "a regexp of the routing keys the user may bind with"},
		},
		Validate: func(s map[string]any) []Problem {
			if !has(s, TopicPermissionExchange) {
				return []Problem{{Msg: `missing required field "exchange"`, Hint: "add exchange: amq.topic"}}
			}
			return regexpProblems(s, "topic permission", "write", "read")
		},
	},
}

// compareUsers gives the settings the diff compares (ItemSpec.Compare):
// tags as they are, and the password as "unchanged" or "changed" after
// checking the file's password against the stored hash with its salt and
// algorithm (or the file's hash against the stored one), so that no value
// of either ever reaches a plan.
func compareUsers(have, want map[string]any) (map[string]any, map[string]any) {
	h := map[string]any{UserTags: have[UserTags], UserPassword: "stored"}
	w := map[string]any{UserTags: want[UserTags], UserPassword: "stored"}
	if !PasswordMatches(want, have) {
		w[UserPassword] = "new"
	}
	return h, w
}

// PasswordMatches reports whether the settings of the broker's user have
// hold the password of want (or want's hash). A have that holds a
// plaintext password is a file's user (mqctl diff's old side, as a broker
// would hold it once applied): the same plaintext is the same password;
// a hash given instead of it is written again, as plan would write it.
func PasswordMatches(want, have map[string]any) bool {
	if hp, ok := have[UserPassword].(string); ok {
		wp, ok := want[UserPassword].(string)
		return ok && wp == hp
	}
	hash, _ := have[UserPasswordHash].(string)
	alg, _ := have[UserHashingAlgorithm].(string)
	if wh, ok := want[UserPasswordHash].(string); ok {
		wa, _ := want[UserHashingAlgorithm].(string)
		return wh == hash && (wa == "" || wa == alg)
	}
	pw, ok := want[UserPassword].(string)
	if !ok {
		return hash == "" // a user without a password
	}
	return CheckPassword(pw, hash, alg)
}

// CheckPassword reports whether stored (base64 of a 4-byte salt and the
// digest of salt+password) holds password under alg, as RabbitMQ's
// rabbit_password checks it.
func CheckPassword(password, stored, alg string) bool {
	raw, err := base64.StdEncoding.DecodeString(stored)
	if err != nil || len(raw) < 5 {
		return false
	}
	var h hash.Hash
	switch alg {
	case "", "rabbit_password_hashing_sha256":
		h = sha256.New()
	case "rabbit_password_hashing_sha512":
		h = sha512.New()
	case "rabbit_password_hashing_md5":
		h = md5.New()
	default:
		return false
	}
	salt := raw[:4]
	h.Write(salt)
	h.Write([]byte(password))
	return subtle.ConstantTimeCompare(h.Sum(nil), raw[4:]) == 1
}

// TagList is tags as a user item holds them: sorted, each once.
func TagList(tags []string) []any {
	tags = slices.Clone(tags)
	slices.Sort(tags)
	tags = slices.Compact(tags)
	out := make([]any, len(tags))
	for i, s := range tags {
		out[i] = s
	}
	return out
}

// PasswordVariable is the environment variable mqctl suggests for user's
// password (export's placeholder, lint's advice).
func PasswordVariable(user string) string { return VariableName(user, "PASSWORD") }

// VariableName joins parts into an environment variable's name: upper
// case, every other character as _, parts joined by _.
func VariableName(parts ...string) string {
	var sb strings.Builder
	for i, part := range parts {
		if i > 0 {
			sb.WriteByte('_')
		}
		for _, r := range part {
			switch {
			case r >= 'a' && r <= 'z':
				sb.WriteRune(r - 'a' + 'A')
			case r >= 'A' && r <= 'Z', r >= '0' && r <= '9':
				sb.WriteRune(r)
			default:
				sb.WriteByte('_')
			}
		}
	}
	return sb.String()
}
