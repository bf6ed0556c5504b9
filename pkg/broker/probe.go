package broker

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"strings"

	"github.com/mqctl/mqctl/pkg/topology"
)

// TransientProbePrefix names the throwaway queue of TransientQueuesDenied.
const TransientProbePrefix = "mqctl.probe.transient."

// TransientQueuesDenied tells whether the broker refuses transient
// non-exclusive queues (RabbitMQ 4.x's deprecated feature
// transient_nonexcl_queues, denied by configuration, and by default from
// 4.3). No API reports that setting, so it declares a throwaway transient
// queue in vhost (mqctl.probe.transient.<random>, expiring after a minute
// should mqctl die before it deletes it) and deletes it again. An error
// means the answer is unknown (e.g. no configure permission on the name).
func (c *Client) TransientQueuesDenied(ctx context.Context, vhost string) (denied bool, reason string, err error) {
	var b [6]byte
	_, _ = rand.Read(b[:])
	q := &topology.Queue{Name: TransientProbePrefix + hex.EncodeToString(b[:]), Type: topology.QueueClassic,
		Arguments: topology.Args{"x-expires": int64(60000)}}
	err = c.DeclareQueue(ctx, vhost, q)
	var apiErr *APIError
	if errors.As(err, &apiErr) && strings.Contains(apiErr.Reason, "transient_nonexcl_queues") {
		return true, apiErr.Reason, nil
	}
	if err != nil {
		return false, "", err
	}
	if err := c.DeleteQueue(ctx, vhost, q.Name, DeleteQueueOptions{}); err != nil && !errors.Is(err, ErrNotFound) {
		return false, "", err
	}
	return false, "", nil
}
