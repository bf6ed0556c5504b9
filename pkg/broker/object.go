package broker

import (
	"context"
	"fmt"
	"net/http"
	"net/url"

	rabbithole "github.com/michaelklishin/rabbit-hole/v2"

	"github.com/mqctl/mqctl/pkg/definitions"
	"github.com/mqctl/mqctl/pkg/kind"
	"github.com/mqctl/mqctl/pkg/topology"
)

// Single-object reads, mapped onto the model as ReadState maps them. apply
// uses them to tell whether a write whose outcome is unknown
// (ErrOutcomeUnknown) was carried out. Each error wraps ErrNotFound when
// the object (ErrVhostNotFound: its vhost) does not exist.

// GetVhost reads vhost name's metadata.
func (c *Client) GetVhost(ctx context.Context, name string) (VhostInfo, error) {
	infos, err := c.listVhosts(ctx)
	if err != nil {
		return VhostInfo{}, err
	}
	info, ok := infos[name]
	if !ok {
		return VhostInfo{}, fmt.Errorf("vhost %q does not exist on %s: %w", name, c.Server(), ErrNotFound)
	}
	return info, nil
}

// GetExchange reads exchange name of vhost.
func (c *Client) GetExchange(ctx context.Context, vhost, name string) (*topology.Exchange, error) {
	var e exchangeJSON
	if err := c.getObject(ctx, kind.Exchange, vhost, name, "name,type,durable,auto_delete,internal,arguments", &e); err != nil {
		return nil, err
	}
	e.Name = name
	return definitions.MapExchange(e), nil
}

// GetQueue reads queue name of vhost: Type from `x-queue-type` or the
// queue's reported type, not repeated in Arguments (definitions.MapQueue;
// no vhost default applies).
func (c *Client) GetQueue(ctx context.Context, vhost, name string) (*topology.Queue, error) {
	var q queueJSON
	if err := c.getObject(ctx, kind.Queue, vhost, name, "name,type,durable,auto_delete,arguments", &q); err != nil {
		return nil, err
	}
	q.Name = name
	return definitions.MapQueue(q), nil
}

// GetPolicy reads the policy of kind k (kind.PolicyKinds) named name in
// vhost.
func (c *Client) GetPolicy(ctx context.Context, k kind.Kind, vhost, name string) (*topology.Policy, error) {
	if _, err := policySpec(k, "read"); err != nil {
		return nil, err
	}
	var p policyJSON
	if err := c.getObject(ctx, k, vhost, name, "", &p); err != nil {
		return nil, err
	}
	p.Name = name
	return definitions.MapPolicy(p), nil
}

// getObject reads object name of kind k in vhost into out (GET
// /api/{APIPath}/{vhost}/{name}, only the given columns when not "").
func (c *Client) getObject(ctx context.Context, k kind.Kind, vhost, name, columns string, out any) error {
	spec, ok := kind.Of(k)
	if !ok {
		return kind.Unknown("read", k)
	}
	r := &request{method: http.MethodGet, path: seg(spec.APIPath, vhost, name),
		op: fmt.Sprintf("read %s %q in vhost %q", spec.Label, name, vhost), vhost: vhost}
	if columns != "" {
		r.query = url.Values{"columns": {columns}}
	}
	return c.do(ctx, r, out)
}

// HasPermissions reports whether user has any permissions on vhost.
func (c *Client) HasPermissions(ctx context.Context, vhost, user string) (bool, error) {
	var p rabbithole.PermissionInfo
	err := c.do(ctx, &request{method: http.MethodGet, path: seg("permissions", vhost, user),
		op: fmt.Sprintf("read the permissions of user %q on vhost %q", user, vhost), vhost: vhost}, &p)
	if err != nil {
		return false, err
	}
	return p.Configure != "" || p.Write != "" || p.Read != "", nil
}
