package broker

// A queue's requests: declare (over the management API, or AMQP in bulk
// through a Declarer), delete and read one. What it holds is read in
// stats.go and placement.go.

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strings"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/mqctl/mqctl/pkg/definitions"
	"github.com/mqctl/mqctl/pkg/kind"
	"github.com/mqctl/mqctl/pkg/topology"
)

// queueBody is PUT /api/queues/{vhost}/{name}.
type queueBody struct {
	Durable    bool           `json:"durable"`
	AutoDelete bool           `json:"auto_delete"`
	Arguments  map[string]any `json:"arguments"`
}

// DeclareQueue declares q in vhost. q.Type is sent as `x-queue-type`
// (classic too, so that a vhost's default queue type never applies).
func (c *Client) DeclareQueue(ctx context.Context, vhost string, q *topology.Queue) error {
	args := argsBody(q.Arguments)
	if q.Type != "" {
		args["x-queue-type"] = q.Type
	}
	body := queueBody{Durable: q.Durable, AutoDelete: q.AutoDelete, Arguments: args}
	return c.do(ctx, &request{method: http.MethodPut, path: seg("queues", vhost, q.Name), body: body,
		op: strings.Replace(fmt.Sprintf("declare %s queue %q in vhost %q", q.Type, q.Name, vhost), "  ", " ", 1), vhost: vhost}, nil)
}

// DeleteQueueOptions are the preconditions of DeleteQueue; the broker
// checks them atomically with the delete.
type DeleteQueueOptions struct {
	IfEmpty  bool // refuse when the queue holds messages
	IfUnused bool // refuse when the queue has consumers
}

// DeleteQueue deletes queue name with its messages. When a precondition of
// o does not hold the broker refuses (the error wraps ErrRejected and says
// why). The error wraps ErrNotFound when the queue does not exist.
func (c *Client) DeleteQueue(ctx context.Context, vhost, name string, o DeleteQueueOptions) error {
	q := url.Values{}
	if o.IfEmpty {
		q.Set("if-empty", "true")
	}
	if o.IfUnused {
		q.Set("if-unused", "true")
	}
	return c.do(ctx, &request{method: http.MethodDelete, path: seg("queues", vhost, name), query: q,
		op: fmt.Sprintf("delete queue %q in vhost %q", name, vhost), vhost: vhost}, nil)
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

// DeclareQueue declares q in vhost, as Client.DeclareQueue does (q.Type
// as x-queue-type).
func (d *Declarer) DeclareQueue(ctx context.Context, vhost string, q *topology.Queue) error {
	args, err := amqpTable(q.Arguments)
	if err != nil {
		return err
	}
	if q.Type != "" {
		args["x-queue-type"] = q.Type
	}
	return d.with(ctx, vhost, func(ch *amqp.Channel) error {
		_, err := ch.QueueDeclare(q.Name, q.Durable, q.AutoDelete, false, false, args)
		return err
	})
}
