package dlq

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/url"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/mqctl/mqctl/pkg/broker"
)

// DialOptions say how to reach a vhost over AMQP.
type DialOptions struct {
	// URL is the AMQP URL without vhost path (amqp://user:pass@host:5672).
	URL   string
	Vhost string
	// TLS is used for amqps URLs.
	TLS *tls.Config
	// Name is the connection name the broker shows.
	Name string
}

// Dial opens an AMQP connection to the vhost. Errors never hold the
// password.
func Dial(ctx context.Context, o DialOptions) (*amqp.Connection, error) {
	u, err := url.Parse(o.URL)
	if err != nil {
		return nil, fmt.Errorf("the AMQP URL %s is invalid: %s", broker.MaskURL(o.URL), broker.MaskURL(err.Error()))
	}
	u.Path = "/" + o.Vhost
	u.RawPath = "/" + url.PathEscape(o.Vhost)
	dialer := &net.Dialer{Timeout: 10 * time.Second}
	cfg := amqp.Config{
		Properties:      amqp.Table{"connection_name": o.Name},
		TLSClientConfig: o.TLS,
		Heartbeat:       10 * time.Second,
		Dial: func(network, addr string) (net.Conn, error) {
			c, err := dialer.DialContext(ctx, network, addr)
			if err != nil {
				return nil, err
			}
			// The handshake must not hang on a silent peer.
			if err := c.SetDeadline(time.Now().Add(10 * time.Second)); err != nil {
				c.Close()
				return nil, err
			}
			return c, nil
		},
	}
	conn, err := amqp.DialConfig(u.String(), cfg)
	if err != nil {
		var ae *amqp.Error
		msg := broker.MaskURL(err.Error())
		if errors.As(err, &ae) {
			msg = ae.Reason
		}
		return nil, fmt.Errorf("cannot open an AMQP connection to %s for vhost %q: %s", u.Host, o.Vhost, msg)
	}
	return conn, nil
}
