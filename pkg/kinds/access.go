package kinds

import (
	"context"
	"crypto/md5"
	"crypto/sha256"
	"crypto/sha512"
	"crypto/subtle"
	"encoding/base64"
	"fmt"
	"hash"
	"slices"
	"strings"

	"github.com/mqctl/mqctl/pkg/kind"
	"github.com/mqctl/mqctl/pkg/topology"
)

// The kinds about users and their access (SPEC §9): users and their
// limits live on the broker (Spec.Broker: Read and the rest get vhost ""),
// permissions and topic permissions in a vhost, one item per user. The
// file declares them under its top-level users section, which pkg/loader
// decodes itself (decode_users.go): these handlers have no section of a
// vhost, and All leaves them out; Access lists them.

var accessHandlers = []Handler{users{}, userLimits{}, permissions{}, topicPermissions{}}

// Access returns the handlers of the kinds about users and their access.
func Access() []Handler { return append([]Handler(nil), accessHandlers...) }

// Settings of a user item.
const (
	// UserPassword is the file's password (a secret).
	UserPassword = "password"
	// UserPasswordHash and UserHashingAlgorithm are the hash as the broker
	// stores it (secrets), from the broker or from the file's
	// password_hash.
	UserPasswordHash     = "password_hash"
	UserHashingAlgorithm = "hashing_algorithm"
	// UserTags are the user's tags, a sorted list.
	UserTags = "tags"
)

// users: GET /api/users, PUT and DELETE /api/users/{name}.
type users struct{}

func (users) Spec() kind.Spec { return spec(kind.User) }
func (users) Shape() Shape    { return Named }

func (users) Fields() []Field {
	return []Field{
		{Name: UserPassword, Type: String, Help: "the password, from ${VAR}: compared with the hash the broker stores, never shown"},
		{Name: UserPasswordHash, Type: String, Help: "the password's hash as the broker stores it (base64 of salt and digest)"},
		{Name: UserHashingAlgorithm, Type: String, Help: "rabbit_password_hashing_sha256 (the default) or rabbit_password_hashing_sha512"},
		{Name: UserTags, Type: String, Help: "the user's tags: administrator, monitoring, policymaker, management, impersonator"},
	}
}

func (users) Read(ctx context.Context, api API, _ string) ([]*topology.Item, error) {
	var list []struct {
		Name             string `json:"name"`
		PasswordHash     string `json:"password_hash"`
		HashingAlgorithm string `json:"hashing_algorithm"`
		Tags             any    `json:"tags"` // "a,b" (3.10) or ["a","b"] (3.12+)
	}
	if err := api.GetJSON(ctx, &list, "list users", "", "users"); err != nil {
		return nil, err
	}
	out := make([]*topology.Item, 0, len(list))
	for _, u := range list {
		out = append(out, &topology.Item{Kind: kind.User, Name: u.Name, Settings: topology.Args{
			UserPasswordHash: u.PasswordHash, UserHashingAlgorithm: u.HashingAlgorithm, UserTags: tagList(u.Tags),
		}})
	}
	return out, nil
}

// tagList is a user's tags as a sorted list, from either form the
// management API writes them in.
func tagList(v any) []any {
	var tags []string
	switch t := v.(type) {
	case string:
		for _, s := range strings.Split(t, ",") {
			if s = strings.TrimSpace(s); s != "" {
				tags = append(tags, s)
			}
		}
	case []any:
		for _, s := range t {
			if str, ok := s.(string); ok && str != "" {
				tags = append(tags, str)
			}
		}
	}
	return TagList(tags)
}

// Comparable gives the settings the diff compares: tags as they are, and
// the password as "unchanged" or "changed" after checking the file's
// password against the stored hash with its salt and algorithm (or the
// file's hash against the stored one), so that no value of either ever
// reaches a plan.
func (users) Comparable(have, want *topology.Item) (topology.Args, topology.Args) {
	h := topology.Args{UserTags: have.Settings[UserTags], UserPassword: "stored"}
	w := topology.Args{UserTags: want.Settings[UserTags], UserPassword: "stored"}
	if !PasswordMatches(want, have) {
		w[UserPassword] = "new"
	}
	return h, w
}

// PasswordMatches reports whether the broker's user have holds want's
// password (or want's hash).
func PasswordMatches(want, have *topology.Item) bool {
	hash, _ := have.Settings[UserPasswordHash].(string)
	alg, _ := have.Settings[UserHashingAlgorithm].(string)
	if wh, ok := want.Settings[UserPasswordHash].(string); ok {
		wa, _ := want.Settings[UserHashingAlgorithm].(string)
		return wh == hash && (wa == "" || wa == alg)
	}
	pw, ok := want.Settings[UserPassword].(string)
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

func (users) Write(ctx context.Context, api API, _ string, have, want *topology.Item) error {
	body := map[string]any{"tags": strings.Join(stringsOf(want.Settings[UserTags]), ",")}
	switch {
	case want.Settings.Has(UserPasswordHash):
		body[UserPasswordHash] = want.Settings[UserPasswordHash]
		if alg, ok := want.Settings[UserHashingAlgorithm]; ok {
			body[UserHashingAlgorithm] = alg
		}
	case want.Settings.Has(UserPassword):
		if have != nil && PasswordMatches(want, have) {
			// Unchanged: send the stored hash back rather than hash again.
			body[UserPasswordHash] = have.Settings[UserPasswordHash]
			body[UserHashingAlgorithm] = have.Settings[UserHashingAlgorithm]
		} else {
			body[UserPassword] = want.Settings[UserPassword]
		}
	default:
		body[UserPasswordHash] = "" // no password: the user cannot log in with one
	}
	return api.PutJSON(ctx, body, fmt.Sprintf("write user %q", want.Name), "", "users", want.Name)
}

func (users) Delete(ctx context.Context, api API, _ string, have *topology.Item) error {
	return api.DeleteJSON(ctx, fmt.Sprintf("delete user %q", have.Name), "", "users", have.Name)
}

func stringsOf(v any) []string {
	list, _ := v.([]any)
	out := make([]string, 0, len(list))
	for _, x := range list {
		if s, ok := x.(string); ok {
			out = append(out, s)
		}
	}
	return out
}

// userLimits: a user's limits, one item per user: GET /api/user-limits,
// PUT and DELETE /api/user-limits/{user}/{limit} ({"value": n}).
type userLimits struct{}

func (userLimits) Spec() kind.Spec { return spec(kind.UserLimits) }
func (userLimits) Shape() Shape    { return Single }

func (userLimits) Fields() []Field {
	return []Field{
		{Name: "max-connections", Type: Int, Min: -1, Help: "the most connections the user may open (-1: no limit)"},
		{Name: "max-channels", Type: Int, Min: -1, Help: "the most channels the user may open (-1: no limit)"},
	}
}

func (userLimits) Read(ctx context.Context, api API, _ string) ([]*topology.Item, error) {
	var list []struct {
		User  string         `json:"user"`
		Value map[string]any `json:"value"`
	}
	if err := api.GetJSON(ctx, &list, "list user limits", "", "user-limits"); err != nil {
		return nil, err
	}
	var out []*topology.Item
	for _, l := range list {
		if len(l.Value) > 0 {
			out = append(out, &topology.Item{Kind: kind.UserLimits, Name: l.User, Settings: topology.Args(l.Value).Normalized()})
		}
	}
	return out, nil
}

func (userLimits) Write(ctx context.Context, api API, _ string, have, want *topology.Item) error {
	return writeLimits(ctx, api, "user", want.Name, "", []string{"user-limits", want.Name}, have, want)
}

func (userLimits) Delete(ctx context.Context, api API, _ string, have *topology.Item) error {
	return writeLimits(ctx, api, "user", have.Name, "", []string{"user-limits", have.Name}, have, &topology.Item{Name: have.Name})
}

// writeLimits sets want's limits and clears those of have that want lacks,
// one request per limit (the API keeps each on its own), for the owner
// (a "user" or a "vhost") at path.
func writeLimits(ctx context.Context, api API, owner, name, vhost string, path []string, have, want *topology.Item) error {
	var old topology.Args
	if have != nil {
		old = have.Settings
	}
	for _, k := range want.Settings.Keys() {
		if old.Has(k) && topology.ValueEqual(old[k], want.Settings[k]) {
			continue
		}
		if err := api.PutJSON(ctx, map[string]any{"value": want.Settings[k]}, fmt.Sprintf("set limit %s of %s %q", k, owner, name), vhost, append(path, k)...); err != nil {
			return err
		}
	}
	for _, k := range old.Keys() {
		if !want.Settings.Has(k) {
			if err := api.DeleteJSON(ctx, fmt.Sprintf("clear limit %s of %s %q", k, owner, name), vhost, append(path, k)...); err != nil {
				return err
			}
		}
	}
	return nil
}

// permissions: a user's permissions on a vhost, one item per user named
// after it: GET /api/vhosts/{vhost}/permissions, PUT and DELETE
// /api/permissions/{vhost}/{user}.
type permissions struct{}

func (permissions) Spec() kind.Spec { return spec(kind.Permission) }
func (permissions) Shape() Shape    { return Named }

func (permissions) Fields() []Field {
	return []Field{
		{Name: "configure", Type: String, Help: "a regexp of the names the user may declare and delete"},
		{Name: "write", Type: String, Help: "a regexp of the names the user may publish to (and bind to)"},
		{Name: "read", Type: String, Help: "a regexp of the names the user may consume from (and bind from)"},
	}
}

func (permissions) Read(ctx context.Context, api API, vhost string) ([]*topology.Item, error) {
	var list []struct {
		User      string `json:"user"`
		Configure string `json:"configure"`
		Write     string `json:"write"`
		Read      string `json:"read"`
	}
	if err := api.GetJSON(ctx, &list, fmt.Sprintf("list the permissions of vhost %q", vhost), vhost, "vhosts", vhost, "permissions"); err != nil {
		return nil, err
	}
	out := make([]*topology.Item, 0, len(list))
	for _, p := range list {
		out = append(out, &topology.Item{Kind: kind.Permission, Name: p.User, Settings: topology.Args{"configure": p.Configure, "write": p.Write, "read": p.Read}})
	}
	return out, nil
}

func (permissions) Write(ctx context.Context, api API, vhost string, _, want *topology.Item) error {
	body := map[string]any{}
	for _, k := range []string{"configure", "write", "read"} {
		s, _ := want.Settings[k].(string)
		body[k] = s
	}
	return api.PutJSON(ctx, body, fmt.Sprintf("set the permissions of user %q on vhost %q", want.Name, vhost), vhost, "permissions", vhost, want.Name)
}

func (permissions) Delete(ctx context.Context, api API, vhost string, have *topology.Item) error {
	return api.DeleteJSON(ctx, fmt.Sprintf("delete the permissions of user %q on vhost %q", have.Name, vhost), vhost, "permissions", vhost, have.Name)
}

// topicPermissions: a user's topic permissions on a vhost, one item per
// user whose settings map each exchange to {write, read}: GET
// /api/vhosts/{vhost}/topic-permissions, PUT
// /api/topic-permissions/{vhost}/{user} (one exchange per request) and
// DELETE of the same path (every exchange at once).
type topicPermissions struct{}

func (topicPermissions) Spec() kind.Spec { return spec(kind.TopicPermission) }
func (topicPermissions) Shape() Shape    { return Named }
func (topicPermissions) Fields() []Field { return nil } // exchange names: decoded by the users section

func (topicPermissions) Read(ctx context.Context, api API, vhost string) ([]*topology.Item, error) {
	var list []struct {
		User     string `json:"user"`
		Exchange string `json:"exchange"`
		Write    string `json:"write"`
		Read     string `json:"read"`
	}
	if err := api.GetJSON(ctx, &list, fmt.Sprintf("list the topic permissions of vhost %q", vhost), vhost, "vhosts", vhost, "topic-permissions"); err != nil {
		return nil, err
	}
	byUser := map[string]*topology.Item{}
	var out []*topology.Item
	for _, p := range list {
		it := byUser[p.User]
		if it == nil {
			it = &topology.Item{Kind: kind.TopicPermission, Name: p.User, Settings: topology.Args{}}
			byUser[p.User] = it
			out = append(out, it)
		}
		it.Settings[p.Exchange] = map[string]any{"write": p.Write, "read": p.Read}
	}
	return out, nil
}

func (t topicPermissions) Write(ctx context.Context, api API, vhost string, have, want *topology.Item) error {
	if have != nil {
		for _, x := range have.Settings.Keys() {
			if !want.Settings.Has(x) {
				// The API deletes a user's topic permissions of every
				// exchange at once: start again from none.
				if err := t.Delete(ctx, api, vhost, have); err != nil {
					return err
				}
				have = nil
				break
			}
		}
	}
	for _, x := range want.Settings.Keys() {
		if have != nil && have.Settings.Has(x) && topology.ValueEqual(have.Settings[x], want.Settings[x]) {
			continue
		}
		m, _ := want.Settings[x].(map[string]any)
		body := map[string]any{"exchange": x, "write": m["write"], "read": m["read"]}
		if err := api.PutJSON(ctx, body, fmt.Sprintf("set the topic permissions of user %q on exchange %q in vhost %q", want.Name, x, vhost), vhost, "topic-permissions", vhost, want.Name); err != nil {
			return err
		}
	}
	return nil
}

func (topicPermissions) Delete(ctx context.Context, api API, vhost string, have *topology.Item) error {
	return api.DeleteJSON(ctx, fmt.Sprintf("delete the topic permissions of user %q in vhost %q", have.Name, vhost), vhost, "topic-permissions", vhost, have.Name)
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
