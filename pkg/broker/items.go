package broker

import (
	"context"
	"fmt"

	"github.com/mqctl/mqctl/pkg/kind"
	"github.com/mqctl/mqctl/pkg/topology"
)

// The kinds carried as topology.Item (kind.Spec.Item) are read, written
// and deleted through one driver each, in drivers: what the rest of mqctl
// knows of such a kind is in pkg/kind. A kind of the registry without a
// driver fails TestEveryItemKindHasADriver. Items are read as the file
// reader makes them: settings normalised, one item per vhost (or user)
// for the limits.

// itemDriver is one item kind's requests. vhost is "" for a kind that
// lives on the broker (kind.Spec.Broker). write makes the broker hold want
// where it held have (nil when it held none).
type itemDriver struct {
	read  func(ctx context.Context, c *Client, vhost string) ([]*topology.Item, error)
	write func(ctx context.Context, c *Client, vhost string, have, want *topology.Item) error
	del   func(ctx context.Context, c *Client, vhost string, have *topology.Item) error
}

var drivers = map[kind.Kind]itemDriver{
	kind.VhostLimits:           {readVhostLimits, writeVhostLimits, deleteVhostLimits},
	kind.Shovel:                parameterDriver(kind.Shovel),
	kind.FederationUpstream:    parameterDriver(kind.FederationUpstream),
	kind.FederationUpstreamSet: parameterDriver(kind.FederationUpstreamSet),
	kind.User:                  {readUsers, writeUser, deleteUser},
	kind.UserLimits:            {readUserLimits, writeUserLimits, deleteUserLimits},
	kind.Permission:            {readPermissions, writePermission, deletePermission},
	kind.TopicPermission:       {readTopicPermissions, writeTopicPermission, deleteTopicPermission},
}

// driverOf is k's driver; kind.Unknown's error for a kind without one.
func driverOf(k kind.Kind) (itemDriver, error) {
	d, ok := drivers[k]
	if !ok {
		return itemDriver{}, kind.Unknown("broker driver", k)
	}
	return d, nil
}

// ReadItems lists the items of kind k in vhost ("" for a kind that lives
// on the broker).
func (c *Client) ReadItems(ctx context.Context, k kind.Kind, vhost string) ([]*topology.Item, error) {
	d, err := driverOf(k)
	if err != nil {
		return nil, err
	}
	return d.read(ctx, c, vhost)
}

// WriteItem makes the broker hold want, of kind k, in vhost, where it held
// have (nil when it held none).
func (c *Client) WriteItem(ctx context.Context, k kind.Kind, vhost string, have, want *topology.Item) error {
	d, err := driverOf(k)
	if err != nil {
		return err
	}
	return d.write(ctx, c, vhost, have, want)
}

// DeleteItem removes have, of kind k, from vhost.
func (c *Client) DeleteItem(ctx context.Context, k kind.Kind, vhost string, have *topology.Item) error {
	d, err := driverOf(k)
	if err != nil {
		return err
	}
	return d.del(ctx, c, vhost, have)
}

// Vhost limits (SPEC §9): the management API keeps each limit on its own:
// GET /api/vhost-limits/{vhost} lists them as [{"vhost": v, "value":
// {"max-queues": 10, …}}]; PUT and DELETE /api/vhost-limits/{vhost}/{limit}
// set ({"value": n}) and clear one.

func readVhostLimits(ctx context.Context, c *Client, vhost string) ([]*topology.Item, error) {
	var list []struct {
		Vhost string         `json:"vhost"`
		Value map[string]any `json:"value"`
	}
	if err := c.GetJSON(ctx, &list, fmt.Sprintf("read the limits of vhost %q", vhost), vhost, "vhost-limits", vhost); err != nil {
		return nil, err
	}
	settings := topology.Args{}
	for _, l := range list {
		for k, v := range l.Value {
			settings[k] = v
		}
	}
	if len(settings) == 0 {
		return nil, nil
	}
	return []*topology.Item{{Kind: kind.VhostLimits, Name: vhost, Settings: settings.Normalized()}}, nil
}

func writeVhostLimits(ctx context.Context, c *Client, vhost string, have, want *topology.Item) error {
	return c.writeLimits(ctx, "vhost", vhost, vhost, []string{"vhost-limits", vhost}, have, want)
}

func deleteVhostLimits(ctx context.Context, c *Client, vhost string, have *topology.Item) error {
	return c.writeLimits(ctx, "vhost", vhost, vhost, []string{"vhost-limits", vhost}, have, &topology.Item{Name: have.Name})
}

// writeLimits sets want's limits and clears those of have that want lacks,
// one request per limit (the API keeps each on its own), for the owner
// (a "user" or a "vhost") at path.
func (c *Client) writeLimits(ctx context.Context, owner, name, vhost string, path []string, have, want *topology.Item) error {
	var old topology.Args
	if have != nil {
		old = have.Settings
	}
	for _, k := range want.Settings.Keys() {
		if old.Has(k) && topology.ValueEqual(old[k], want.Settings[k]) {
			continue
		}
		if err := c.PutJSON(ctx, map[string]any{"value": want.Settings[k]}, fmt.Sprintf("set limit %s of %s %q", k, owner, name), vhost, append(path, k)...); err != nil {
			return err
		}
	}
	for _, k := range old.Keys() {
		if !want.Settings.Has(k) {
			if err := c.DeleteJSON(ctx, fmt.Sprintf("clear limit %s of %s %q", k, owner, name), vhost, append(path, k)...); err != nil {
				return err
			}
		}
	}
	return nil
}
