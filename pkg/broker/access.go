package broker

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
)

// GrantFullPermissions gives user configure, write and read permissions on
// every resource of vhost. apply calls it on a vhost it has just created,
// where the creating administrator has no permissions yet.
func (c *Client) GrantFullPermissions(ctx context.Context, vhost, user string) error {
	body := map[string]string{"configure": ".*", "write": ".*", "read": ".*"}
	return c.do(ctx, &request{method: http.MethodPut, path: seg("permissions", vhost, user), body: body,
		op: fmt.Sprintf("grant user %q permissions on vhost %q", user, vhost), vhost: vhost}, nil)
}

// QueueHolder names the connection that owns exclusive queue name in vhost
// (its client-provided connection name when it set one), or "" when it
// cannot be told.
func (c *Client) QueueHolder(ctx context.Context, vhost, name string) string {
	var q struct {
		Owner struct {
			Name string `json:"name"`
		} `json:"owner_pid_details"`
	}
	if err := c.do(ctx, &request{method: http.MethodGet, path: seg("queues", vhost, name),
		query: url.Values{"columns": {"owner_pid_details"}}, op: "read lock holder", vhost: vhost}, &q); err != nil || q.Owner.Name == "" {
		return ""
	}
	var conn struct {
		User        string         `json:"user"`
		ClientProps map[string]any `json:"client_properties"`
	}
	if err := c.do(ctx, &request{method: http.MethodGet, path: seg("connections", q.Owner.Name),
		op: "read lock holder connection"}, &conn); err != nil {
		return fmt.Sprintf("connection %s", q.Owner.Name)
	}
	if n, ok := conn.ClientProps["connection_name"].(string); ok && n != "" {
		return fmt.Sprintf("%q (user %q, connection %s)", n, conn.User, q.Owner.Name)
	}
	b, _ := json.Marshal(conn.User)
	return fmt.Sprintf("user %s on connection %s", b, q.Owner.Name)
}
