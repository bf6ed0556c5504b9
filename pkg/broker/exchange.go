package broker

// An exchange's requests: declare (over the management API, or AMQP in
// bulk through a Declarer), delete and read one.

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/mqctl/mqctl/pkg/definitions"
	"github.com/mqctl/mqctl/pkg/kind"
	"github.com/mqctl/mqctl/pkg/topology"
)

// exchangeBody is PUT /api/exchanges/{vhost}/{name}; unlike rabbit-hole's
// ExchangeSettings it carries `internal`.
type exchangeBody struct {
	Type       string         `json:"type"`
	Durable    bool           `json:"durable"`
	AutoDelete bool           `json:"auto_delete"`
	Internal   bool           `json:"internal"`
	Arguments  map[string]any `json:"arguments"`
}

// DeclareExchange declares e in vhost. Declaring an existing exchange with
// other properties fails with the broker's "inequivalent arg" reason
// (wrapping ErrRejected).
func (c *Client) DeclareExchange(ctx context.Context, vhost string, e *topology.Exchange) error {
	body := exchangeBody{Type: e.Type, Durable: e.Durable, AutoDelete: e.AutoDelete, Internal: e.Internal, Arguments: argsBody(e.Arguments)}
	return c.do(ctx, &request{method: http.MethodPut, path: seg("exchanges", vhost, e.Name), body: body,
		op: fmt.Sprintf("declare exchange %q in vhost %q", e.Name, vhost), vhost: vhost}, nil)
}

// DeleteExchangeOptions are the preconditions of DeleteExchange.
type DeleteExchangeOptions struct {
	IfUnused bool // refuse when the exchange is the source of a binding
}

// DeleteExchange deletes exchange name (and every binding on it). The
// error wraps ErrNotFound when it does not exist.
func (c *Client) DeleteExchange(ctx context.Context, vhost, name string, o DeleteExchangeOptions) error {
	var q url.Values
	if o.IfUnused {
		q = url.Values{"if-unused": {"true"}}
	}
	return c.do(ctx, &request{method: http.MethodDelete, path: seg("exchanges", vhost, name), query: q,
		op: fmt.Sprintf("delete exchange %q in vhost %q", name, vhost), vhost: vhost}, nil)
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

// DeclareExchange declares e in vhost, as Client.DeclareExchange does.
func (d *Declarer) DeclareExchange(ctx context.Context, vhost string, e *topology.Exchange) error {
	args, err := amqpTable(e.Arguments)
	if err != nil {
		return err
	}
	return d.with(ctx, vhost, func(ch *amqp.Channel) error {
		return ch.ExchangeDeclare(e.Name, e.Type, e.Durable, e.AutoDelete, e.Internal, false, args)
	})
}

// exchangeDeleteInProgress is the runtime parameter component RabbitMQ
// sets, per exchange, for the time it deletes one, and ignores every
// declaration of an exchange while it is set (rabbit_exchange:declare and
// delete, since rabbitmq-server#533: the declaration is answered as done,
// over AMQP and the management API alike, and nothing is declared). The
// delete clears it when it ends; a delete cut off in between (the
// management API ends a request whose client went away: an apply killed,
// timed out or cut from the network during an exchange's delete) leaves
// it for good, and the exchange can never be declared again until it is
// cleared (measured on 3.10.8, 4.0.5 and 4.3.6).
const exchangeDeleteInProgress = "exchange-delete-in-progress"

// ExchangeDeletesInProgress returns the names of the exchanges of vhost
// whose delete the broker marks as in progress (see
// exchangeDeleteInProgress). Listing runtime parameters takes the
// policymaker tag: other users get an error wrapping ErrForbidden.
func (c *Client) ExchangeDeletesInProgress(ctx context.Context, vhost string) (map[string]bool, error) {
	var params []struct {
		Name string `json:"name"`
	}
	if err := c.GetJSON(ctx, &params, fmt.Sprintf("list the exchange deletes in progress in vhost %q", vhost), vhost, "parameters", exchangeDeleteInProgress, vhost); err != nil {
		return nil, err
	}
	out := make(map[string]bool, len(params))
	for _, p := range params {
		out[p.Name] = true
	}
	return out, nil
}

// ExchangeExists reports whether exchange name of vhost exists, asked over
// AMQP with a passive declare (NOT_FOUND: it does not).
func (d *Declarer) ExchangeExists(ctx context.Context, vhost, name string) (bool, error) {
	err := d.with(ctx, vhost, func(ch *amqp.Channel) error {
		return ch.ExchangeDeclarePassive(name, amqp.ExchangeDirect, false, false, false, false, nil)
	})
	var ae *amqp.Error
	if errors.As(err, &ae) && ae.Code == amqp.NotFound {
		return false, nil
	}
	return err == nil, err
}

// ClearAbsentExchangeDeleteMark clears the broker's mark that a delete of
// exchange name of vhost is in progress (see exchangeDeleteInProgress)
// without the policymaker tag, which ClearExchangeDeleteInProgress needs:
// an exchange.delete of the exchange (if unused), over AMQP, needs only
// configure on it, and rabbit_exchange:delete/3 sets the mark and clears
// it when it ends, whatever it found; the management API answers 404
// before it deletes (3.10.8, 4.0.5 and 4.3.6). For an exchange that is
// absent only: one that exists, and is unused, would be deleted. While
// the mark is there, no one can declare the exchange.
func (d *Declarer) ClearAbsentExchangeDeleteMark(ctx context.Context, vhost, name string) error {
	return d.with(ctx, vhost, func(ch *amqp.Channel) error { return ch.ExchangeDelete(name, true, false) })
}

// ClearExchangeDeleteInProgress removes the broker's mark that exchange
// name of vhost is being deleted (see exchangeDeleteInProgress), so that
// it can be declared again. A mark already gone is no error.
func (c *Client) ClearExchangeDeleteInProgress(ctx context.Context, vhost, name string) error {
	err := c.DeleteJSON(ctx, fmt.Sprintf("clear the mark of a delete of exchange %q in vhost %q", name, vhost), vhost, "parameters", exchangeDeleteInProgress, vhost, name)
	if errors.Is(err, ErrNotFound) {
		return nil
	}
	return err
}
