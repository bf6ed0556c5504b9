package broker

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
)

// QueueActivity is one queue's depth, consumers and message rates as the
// management API lists them.
type QueueActivity struct {
	Name  string
	Type  string // classic, quorum or stream
	State string // the broker's queue state: running, idle, down, crashed, minority, …
	// Known is false while the broker has not reported statistics for the
	// queue yet (right after it was declared, for up to the broker's
	// collect_statistics_interval): the counts below are then zero but not
	// measured.
	Known       bool
	Messages    int64 // ready + unacknowledged
	Ready       int64
	Unacked     int64
	Consumers   int64
	PublishRate float64 // messages/s published into the queue
	DeliverRate float64 // messages/s delivered or fetched (deliver_get)
}

// activityColumns are the fields ListQueueActivity reads; nested
// message_stats fields are named with dots (RabbitMQ 3.10 accepts them).
const activityColumns = "name,type,state,messages,messages_ready,messages_unacknowledged,consumers," +
	"message_stats.publish_details.rate,message_stats.deliver_get_details.rate"

type rateJSON struct {
	Rate float64 `json:"rate"`
}

type activityJSON struct {
	Name         string `json:"name"`
	Type         string `json:"type"`
	State        string `json:"state"`
	Messages     *int64 `json:"messages"`
	Ready        *int64 `json:"messages_ready"`
	Unacked      *int64 `json:"messages_unacknowledged"`
	Consumers    *int64 `json:"consumers"`
	MessageStats struct {
		Publish    rateJSON `json:"publish_details"`
		DeliverGet rateJSON `json:"deliver_get_details"`
	} `json:"message_stats"`
}

// VhostUnacked reads how many messages of vhost are delivered and not yet
// acknowledged, from the vhost's statistics (GET /api/vhosts/{vhost}: one
// small answer, however many queues the vhost has). known is false when
// the broker reports no figure (statistics not collected yet, or turned
// off). The figure lags as a queue listing's do: both come from the
// statistics the broker emits every few seconds.
func (c *Client) VhostUnacked(ctx context.Context, vhost string) (n int64, known bool, err error) {
	var v struct {
		Unacked *int64 `json:"messages_unacknowledged"`
	}
	if err := c.do(ctx, &request{method: http.MethodGet, path: seg("vhosts", vhost),
		query: url.Values{"columns": {"name,messages_unacknowledged"}},
		op:    fmt.Sprintf("read the unacknowledged messages of vhost %q", vhost), vhost: vhost}, &v); err != nil {
		return 0, false, err
	}
	if v.Unacked == nil {
		return 0, false, nil
	}
	return *v.Unacked, true, nil
}

// ListQueueActivity lists the depth, consumers and rates of every queue in
// vhost with one GET /api/queues/{vhost}. The error wraps ErrVhostNotFound
// when the vhost does not exist.
func (c *Client) ListQueueActivity(ctx context.Context, vhost string) ([]QueueActivity, error) {
	var list []activityJSON
	if err := c.do(ctx, &request{method: http.MethodGet, path: seg("queues", vhost),
		query: url.Values{"columns": {activityColumns}},
		op:    fmt.Sprintf("list queues of vhost %q", vhost), vhost: vhost}, listOf[activityJSON]{&list}); err != nil {
		return nil, err
	}
	out := make([]QueueActivity, len(list))
	for i, q := range list {
		a := QueueActivity{
			Name: q.Name, Type: q.Type, State: q.State, Known: q.Messages != nil,
			PublishRate: q.MessageStats.Publish.Rate, DeliverRate: q.MessageStats.DeliverGet.Rate,
		}
		for _, f := range []struct {
			dst *int64
			src *int64
		}{{&a.Messages, q.Messages}, {&a.Ready, q.Ready}, {&a.Unacked, q.Unacked}, {&a.Consumers, q.Consumers}} {
			if f.src != nil {
				*f.dst = *f.src
			}
		}
		out[i] = a
	}
	return out, nil
}
