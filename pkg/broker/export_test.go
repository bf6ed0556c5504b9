package broker

import "context"

// MissingPermissionsCounted is missingPermissions for tests: the needs
// missing, the probes made and the channels opened.
func (c *Client) MissingPermissionsCounted(ctx context.Context, amqpURL, vhost string, needs []Need) ([]Need, int64, int64, error) {
	return c.missingPermissions(ctx, amqpURL, vhost, needs)
}
