package broker

// A vhost's requests: declare, delete and read one. (A vhost's whole
// state is read by ReadState, read.go.)

import (
	"context"
	"fmt"
	"net/http"

	rabbithole "github.com/michaelklishin/rabbit-hole/v2"
)

// VhostSettings is a vhost's metadata as written by DeclareVhost.
type VhostSettings struct {
	Description string
	Tags        []string
	// DefaultQueueType is sent only when set (RabbitMQ 3.11+ honour it;
	// 3.10 ignores it).
	DefaultQueueType string
}

// DeclareVhost creates vhost name, or replaces its metadata when it exists
// (a PUT replaces description and tags as a whole).
func (c *Client) DeclareVhost(ctx context.Context, name string, s VhostSettings) error {
	body := rabbithole.VhostSettings{Description: s.Description, Tags: rabbithole.VhostTags(s.Tags), DefaultQueueType: s.DefaultQueueType}
	if body.Tags == nil {
		body.Tags = rabbithole.VhostTags{}
	}
	return c.do(ctx, &request{method: http.MethodPut, path: seg("vhosts", name), body: body,
		op: fmt.Sprintf("declare vhost %q", name)}, nil)
}

// DeleteVhost deletes vhost name and everything in it. The error wraps
// ErrVhostNotFound when it does not exist.
func (c *Client) DeleteVhost(ctx context.Context, name string) error {
	return c.do(ctx, &request{method: http.MethodDelete, path: seg("vhosts", name),
		op: fmt.Sprintf("delete vhost %q", name), vhost: name}, nil)
}

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
