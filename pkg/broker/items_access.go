package broker

import (
	"context"
	"fmt"
	"strings"

	"github.com/mqctl/mqctl/pkg/kind"
	"github.com/mqctl/mqctl/pkg/topology"
)

// The drivers of the kinds about users and their access (SPEC §9): users
// and their limits live on the broker (vhost ""), permissions and topic
// permissions in a vhost, one item per user.

// Users: GET /api/users, PUT and DELETE /api/users/{name}.

func readUsers(ctx context.Context, c *Client, _ string) ([]*topology.Item, error) {
	var list []struct {
		Name             string `json:"name"`
		PasswordHash     string `json:"password_hash"`
		HashingAlgorithm string `json:"hashing_algorithm"`
		Tags             any    `json:"tags"` // "a,b" (3.10) or ["a","b"] (3.12+)
	}
	if err := c.GetJSON(ctx, &list, "list users", "", "users"); err != nil {
		return nil, err
	}
	out := make([]*topology.Item, 0, len(list))
	for _, u := range list {
		out = append(out, &topology.Item{Kind: kind.User, Name: u.Name, Settings: topology.Args{
			kind.UserPasswordHash: u.PasswordHash, kind.UserHashingAlgorithm: u.HashingAlgorithm, kind.UserTags: kind.TagList(parseTags(u.Tags)),
		}})
	}
	return out, nil
}

func writeUser(ctx context.Context, c *Client, _ string, have, want *topology.Item) error {
	body := map[string]any{"tags": strings.Join(stringsOf(want.Settings[kind.UserTags]), ",")}
	switch {
	case want.Settings.Has(kind.UserPasswordHash):
		body[kind.UserPasswordHash] = want.Settings[kind.UserPasswordHash]
		if alg, ok := want.Settings[kind.UserHashingAlgorithm]; ok {
			body[kind.UserHashingAlgorithm] = alg
		} else if have != nil && have.Settings[kind.UserPasswordHash] == want.Settings[kind.UserPasswordHash] {
			// The file leaves the algorithm out, and the diff takes the
			// stored one as the file's (PasswordMatches). Without it the
			// broker stores the hash under its default algorithm
			// (measured on 4.3.6: a sha512 hash written back alone became
			// sha256, and the password no longer logged in).
			body[kind.UserHashingAlgorithm] = have.Settings[kind.UserHashingAlgorithm]
		}
	case want.Settings.Has(kind.UserPassword):
		if have != nil && kind.PasswordMatches(want.Settings, have.Settings) {
			// Unchanged: send the stored hash back rather than hash again.
			body[kind.UserPasswordHash] = have.Settings[kind.UserPasswordHash]
			body[kind.UserHashingAlgorithm] = have.Settings[kind.UserHashingAlgorithm]
		} else {
			body[kind.UserPassword] = want.Settings[kind.UserPassword]
		}
	default:
		body[kind.UserPasswordHash] = "" // no password: the user cannot log in with one
	}
	err := c.PutJSON(ctx, body, fmt.Sprintf("write user %q", want.Name), "", "users", want.Name)
	// The broker quotes a hash it refuses ([not_base64, HASH]); the
	// stored hash may be the one sent back.
	secrets := kind.SecretFields(kind.User)
	if have != nil {
		err = scrub(err, have, secrets)
	}
	return scrub(err, want, secrets)
}

func deleteUser(ctx context.Context, c *Client, _ string, have *topology.Item) error {
	return c.DeleteJSON(ctx, fmt.Sprintf("delete user %q", have.Name), "", "users", have.Name)
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

// User limits, one item per user: GET /api/user-limits, PUT and DELETE
// /api/user-limits/{user}/{limit} ({"value": n}).

func readUserLimits(ctx context.Context, c *Client, _ string) ([]*topology.Item, error) {
	var list []struct {
		User  string         `json:"user"`
		Value map[string]any `json:"value"`
	}
	if err := c.GetJSON(ctx, &list, "list user limits", "", "user-limits"); err != nil {
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

func writeUserLimits(ctx context.Context, c *Client, _ string, have, want *topology.Item) error {
	return c.writeLimits(ctx, "user", want.Name, "", []string{"user-limits", want.Name}, have, want)
}

func deleteUserLimits(ctx context.Context, c *Client, _ string, have *topology.Item) error {
	return c.writeLimits(ctx, "user", have.Name, "", []string{"user-limits", have.Name}, have, &topology.Item{Name: have.Name})
}

// Permissions, one item per user named after it: GET
// /api/vhosts/{vhost}/permissions, PUT and DELETE
// /api/permissions/{vhost}/{user}.

func readPermissions(ctx context.Context, c *Client, vhost string) ([]*topology.Item, error) {
	var list []map[string]any
	if err := c.GetJSON(ctx, &list, fmt.Sprintf("list the permissions of vhost %q", vhost), vhost, "vhosts", vhost, "permissions"); err != nil {
		return nil, err
	}
	out := make([]*topology.Item, 0, len(list))
	for _, p := range list {
		user, _ := p["user"].(string)
		it := &topology.Item{Kind: kind.Permission, Name: user, Settings: topology.Args{}}
		for _, op := range kind.Permission.FieldNames() { // configure, write, read
			s, _ := p[op].(string)
			it.Settings[op] = s
		}
		out = append(out, it)
	}
	return out, nil
}

func writePermission(ctx context.Context, c *Client, vhost string, _, want *topology.Item) error {
	body := map[string]any{}
	for _, k := range kind.Permission.FieldNames() {
		s, _ := want.Settings[k].(string)
		body[k] = s
	}
	return c.PutJSON(ctx, body, fmt.Sprintf("set the permissions of user %q on vhost %q", want.Name, vhost), vhost, "permissions", vhost, want.Name)
}

func deletePermission(ctx context.Context, c *Client, vhost string, have *topology.Item) error {
	return c.DeleteJSON(ctx, fmt.Sprintf("delete the permissions of user %q on vhost %q", have.Name, vhost), vhost, "permissions", vhost, have.Name)
}

// Topic permissions, one item per user whose settings map each exchange
// to {write, read}: GET /api/vhosts/{vhost}/topic-permissions, PUT
// /api/topic-permissions/{vhost}/{user} (one exchange per request) and
// DELETE of the same path (every exchange at once).

func readTopicPermissions(ctx context.Context, c *Client, vhost string) ([]*topology.Item, error) {
	var list []map[string]any // user, and the kind's fields: exchange, write, read
	if err := c.GetJSON(ctx, &list, fmt.Sprintf("list the topic permissions of vhost %q", vhost), vhost, "vhosts", vhost, "topic-permissions"); err != nil {
		return nil, err
	}
	ls := kind.TopicPermission.Item().List
	byUser := map[string]*topology.Item{}
	var out []*topology.Item
	for _, p := range list {
		user, _ := p["user"].(string)
		it := byUser[user]
		if it == nil {
			it = &topology.Item{Kind: kind.TopicPermission, Name: user, Settings: topology.Args{}}
			byUser[user] = it
			out = append(out, it)
		}
		m := map[string]any{}
		for _, f := range ls.FieldNames() {
			m[f] = p[f]
		}
		x, rest := ls.Entry(m)
		it.Settings[x] = rest
	}
	return out, nil
}

func writeTopicPermission(ctx context.Context, c *Client, vhost string, have, want *topology.Item) error {
	if have != nil {
		for _, x := range have.Settings.Keys() {
			if !want.Settings.Has(x) {
				// The API deletes a user's topic permissions of every
				// exchange at once: start again from none.
				if err := deleteTopicPermission(ctx, c, vhost, have); err != nil {
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
		body := kind.TopicPermission.Item().List.Member(x, m)
		if err := c.PutJSON(ctx, body, fmt.Sprintf("set the topic permissions of user %q on exchange %q in vhost %q", want.Name, x, vhost), vhost, "topic-permissions", vhost, want.Name); err != nil {
			return err
		}
	}
	return nil
}

func deleteTopicPermission(ctx context.Context, c *Client, vhost string, have *topology.Item) error {
	return c.DeleteJSON(ctx, fmt.Sprintf("delete the topic permissions of user %q in vhost %q", have.Name, vhost), vhost, "topic-permissions", vhost, have.Name)
}
