package broker

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/url"
	"strings"
	"sync"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/mqctl/mqctl/pkg/topology"
)

// AMQPDial says how to reach a vhost over AMQP.
type AMQPDial struct {
	// URL is the AMQP URL without vhost path (amqp://user:pass@host:5672).
	URL   string
	Vhost string
	// TLS is used for amqps URLs.
	TLS *tls.Config
	// Name is the connection name the broker shows.
	Name string
	// Batch queues the connection's writes and writes what is queued
	// in one go (batchWriter): for a connection that many goroutines send
	// short methods on at once, as a plan's exact reads do.
	Batch bool
}

// DialAMQP opens an AMQP connection to a vhost, with a 10 s heartbeat and
// a handshake that cannot hang on a silent peer. Errors never hold the
// password.
func DialAMQP(ctx context.Context, o AMQPDial) (*amqp.Connection, error) {
	u, err := url.Parse(o.URL)
	if err != nil {
		return nil, fmt.Errorf("the AMQP URL %s is invalid: %s", MaskURL(o.URL), MaskURL(err.Error()))
	}
	u.Path = "/" + o.Vhost
	u.RawPath = "/" + url.PathEscape(o.Vhost)
	d := &amqpDialer{ctx: ctx, net: &net.Dialer{Timeout: 10 * time.Second}, stop: func() bool { return true }, batch: o.Batch}
	cfg := amqp.Config{
		Properties:      amqp.Table{"connection_name": o.Name},
		TLSClientConfig: o.TLS,
		Heartbeat:       10 * time.Second,
		Dial:            d.dial,
	}
	conn, err := dialWhileVhostDown(ctx, u.String(), cfg)
	// ctx ended while the connection was being opened (what opened may
	// have been cut), or a dial failed because it had: the caller asked
	// to stop.
	if cut := !d.stop(); cut || err != nil && ended(ctx) != nil {
		if conn != nil {
			_ = conn.Close()
		}
		return nil, Interrupted(fmt.Sprintf("cannot open an AMQP connection to %s for vhost %q", u.Host, o.Vhost), "before the broker answered", ended(ctx))
	}
	if err != nil {
		return nil, dialFailure(u, o.Vhost, d.first, err)
	}
	return conn, nil
}

// amqpDialer opens DialAMQP's network connections. amqp091-go runs the
// TLS and AMQP handshakes itself, without a context: once ctx ends, a
// deadline in the past ends them (stop takes that back once the dial is
// over).
type amqpDialer struct {
	ctx  context.Context
	net  *net.Dialer
	stop func() bool
	// first is the last connection opened, which keeps what the peer
	// sent first; nil before one opened.
	first *firstBytes
	// batch: the connection's writes go through a batchWriter.
	batch bool
}

func (d *amqpDialer) dial(network, addr string) (net.Conn, error) {
	c, err := d.net.DialContext(d.ctx, network, addr)
	if err != nil {
		return nil, err
	}
	// The handshake must not hang on a silent peer.
	if err := c.SetDeadline(time.Now().Add(10 * time.Second)); err != nil {
		c.Close()
		return nil, err
	}
	d.stop = context.AfterFunc(d.ctx, func() { _ = c.SetDeadline(time.Unix(1, 0)) })
	d.first = &firstBytes{Conn: c}
	if d.batch {
		return newBatchWriter(d.first), nil
	}
	return d.first, nil
}

// dialWhileVhostDown dials amqpURL with cfg. A vhost just created may not run
// yet on the node that answers ("access to vhost … refused …: vhost … is
// down"; met by an apply racing another that had just created the vhost,
// on 4.3.6): asked again, for a few seconds.
func dialWhileVhostDown(ctx context.Context, amqpURL string, cfg amqp.Config) (*amqp.Connection, error) {
	conn, err := amqp.DialConfig(amqpURL, cfg)
	for wait := 250 * time.Millisecond; err != nil && vhostDown(err) && wait <= 2*time.Second && ended(ctx) == nil; wait *= 2 {
		select {
		case <-ctx.Done():
		case <-time.After(wait):
			conn, err = amqp.DialConfig(amqpURL, cfg)
		}
	}
	return conn, err
}

// dialFailure is the error of a dial to u for vhost that failed with err,
// first keeping what the peer sent (nil when no connection opened): what
// went wrong and what to do about it, as the user reads it (no password).
func dialFailure(u *url.URL, vhost string, first *firstBytes, err error) error {
	if first != nil {
		switch head := first.bytes(); {
		case head == "HTTP/":
			return fmt.Errorf("cannot open an AMQP connection to %s: it answers in HTTP, not AMQP (is it the management API's port?); give --amqp-url the broker's AMQP port (5672 by default, 5671 with TLS)", u.Host)
		case head == "" && strings.Contains(err.Error(), "EOF"):
			// RabbitMQ's management listener waits for the rest of an
			// HTTP request, then closes without a word (4.3.6: 5 s).
			return fmt.Errorf("cannot open an AMQP connection to %s: it closed the connection without answering the AMQP handshake, as the management API's port does; give --amqp-url the broker's AMQP port (5672 by default, 5671 with TLS)", u.Host)
		}
	}
	var ae *amqp.Error
	msg := MaskURL(err.Error())
	if errors.As(err, &ae) {
		msg = ae.Reason + refusalFix(ae, u, vhost)
	} else {
		switch s := err.Error(); {
		case strings.Contains(s, "connection refused"):
			msg += ": nothing listens there; give --amqp-url the broker's AMQP port (5672 by default, 5671 with TLS)"
		case strings.Contains(s, "first record does not look like a TLS handshake"):
			msg += ": that port does not speak TLS; use amqp:// for a plain listener (5672 by default), or the TLS listener's port (5671 by default)"
		}
	}
	return &dialError{text: fmt.Sprintf("cannot open an AMQP connection to %s for vhost %q: %s", u.Host, vhost, msg), err: ae}
}

// refusalFix is what to do about the broker's refusal ae of a connection
// to u for vhost, to follow its reason ("" where the reason says it all).
func refusalFix(ae *amqp.Error, u *url.URL, vhost string) string {
	msg := ae.Reason
	switch {
	case strings.Contains(msg, "user connection limit"):
		return ": the user mqctl connects as has as many connections as its max-connections allows; mqctl needs one to the vhost (its apply lock, its declarations): raise the user's max-connections (rabbitmqctl set_user_limits), or close some of its connections"
	case strings.Contains(msg, "connection limit"):
		return ": the vhost has as many connections as its max-connections allows; mqctl needs one to it (its apply lock, its declarations): raise max-connections (rabbitmqctl set_vhost_limits), or close some connections"
	case ae.Code == amqp.NotAllowed && strings.HasPrefix(msg, "NOT_ALLOWED - access to vhost ") && strings.HasSuffix(msg, "'") && u.User != nil:
		// "access to vhost 'v' refused for user 'u'", nothing after (a
		// limit says why after it): no permissions. The broker's words
		// name neither that nor the fix.
		return ": " + noVhostAccess(u.User.Username(), vhost)
	case ae.Code == amqp.NotAllowed && strings.HasSuffix(msg, " not found") && strings.HasPrefix(msg, "NOT_ALLOWED - vhost "):
		return fmt.Sprintf(": there is no vhost %q on the broker; check its name (--vhost), or create it: mqctl apply the file that declares it", vhost)
	case ae.Code == amqp.AccessRefused && strings.Contains(msg, "username or password not allowed"):
		return ": check the user and password: --amqp-url's own, when it has some, else --username and --password"
	}
	return ""
}

// dialError is a failed dial as the user reads it (no password), which
// unwraps to the broker's refusal (an *amqp.Error, nil for another cause).
type dialError struct {
	text string
	err  *amqp.Error
}

func (e *dialError) Error() string { return e.text }

func (e *dialError) Unwrap() error {
	if e.err == nil {
		return nil
	}
	return e.err
}

// firstBytes is a connection that keeps the first bytes it reads: what
// answered the AMQP protocol header, to tell an HTTP listener (the
// management API's port given for the AMQP one) from a broker.
type firstBytes struct {
	net.Conn
	mu   sync.Mutex
	head []byte
}

func (f *firstBytes) Read(p []byte) (int, error) {
	n, err := f.Conn.Read(p)
	f.mu.Lock()
	if len(f.head) < 5 {
		f.head = append(f.head, p[:min(n, 5-len(f.head))]...)
	}
	f.mu.Unlock()
	return n, err
}

// bytes are the first bytes the peer sent (up to 5).
func (f *firstBytes) bytes() string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return string(f.head)
}

// CheckAMQP makes sure, before anything changes, that o reaches a broker
// over AMQP with the user's credentials: it opens a connection to
// o.Vhost, a vhost that does not exist yet, which the broker refuses only
// after the protocol handshake and the login (530 NOT_ALLOWED "vhost …
// not found"). An apply that creates every vhost it writes in asks it
// before creating the first, whose lock it can only take after. nil when
// the broker answers so, or opens the connection (the vhost exists after
// all), or refuses the user that vhost once logged in (530 NOT_ALLOWED
// "access to vhost … refused for user …": another apply created it a
// moment ago and has not yet given its user permissions there, which the
// apply that asks gives its own user too, as it creates the vhost); the
// dial's error otherwise.
func CheckAMQP(ctx context.Context, o AMQPDial) error {
	conn, err := DialAMQP(ctx, o)
	if err == nil {
		return conn.Close()
	}
	var ae *amqp.Error
	if errors.As(err, &ae) && ae.Code == amqp.NotAllowed && (strings.Contains(ae.Reason, "not found") ||
		strings.Contains(ae.Reason, "access to vhost") && strings.Contains(ae.Reason, "refused for user")) {
		return nil
	}
	return err
}

// vhostDown reports whether err is the broker's refusal of a connection
// to a vhost that does not run (yet) on the node that answers.
func vhostDown(err error) bool {
	var ae *amqp.Error
	return errors.As(err, &ae) && strings.Contains(ae.Reason, "access to vhost") && strings.Contains(ae.Reason, "is down")
}

// ended is why ctx ended, or nil. A dial that reaches ctx's deadline
// fails with "i/o timeout" a moment before ctx.Err() says so (seen on a
// loaded machine): a deadline passed is DeadlineExceeded already.
func ended(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if d, ok := ctx.Deadline(); ok && !time.Now().Before(d) {
		return context.DeadlineExceeded
	}
	return nil
}

// Declarer declares exchanges, queues and bindings over AMQP: one
// connection per vhost, its channels reused. RabbitMQ does the same
// declarations over AMQP with less work than through the management API,
// which handles every declaration as a request of its own (measured on
// 4.0.5, 5,000 queues and 5,000 bindings, 8 at a time: 16 s over AMQP,
// 19-20 s through the API). A declaration that fails here changed nothing
// the management API's would not: callers that get an error make the
// same declaration through the API, which reports what is wrong.
type Declarer struct {
	c        *Client
	name     string
	mu       sync.Mutex
	url      string
	urlErr   error
	resolved bool
	vhosts   map[string]*amqpVhost
}

// amqpVhost is one vhost's connection and its idle channels.
type amqpVhost struct {
	mu   sync.Mutex
	conn *amqp.Connection
	idle []*amqp.Channel
	err  error // the dial failed: no more tries in this vhost
}

// Declarer returns a Declarer for this broker; the connection to a vhost
// is opened by its first declaration. Close it when done.
func (c *Client) Declarer(name string) *Declarer {
	return &Declarer{c: c, name: name, vhosts: map[string]*amqpVhost{}}
}

// Close closes every connection.
func (d *Declarer) Close() {
	d.mu.Lock()
	defer d.mu.Unlock()
	for _, v := range d.vhosts {
		v.mu.Lock()
		if v.conn != nil {
			_ = v.conn.Close()
		}
		v.conn, v.idle = nil, nil
		v.mu.Unlock()
	}
}

func (d *Declarer) vhost(vhost string) *amqpVhost {
	d.mu.Lock()
	defer d.mu.Unlock()
	v := d.vhosts[vhost]
	if v == nil {
		v = &amqpVhost{}
		d.vhosts[vhost] = v
	}
	return v
}

func (d *Declarer) amqpURL(ctx context.Context) (string, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if !d.resolved {
		d.url, d.urlErr = d.c.AMQPURL(ctx, "")
		d.resolved = true
	}
	return d.url, d.urlErr
}

// channel takes an idle channel of vhost, or opens one (and the
// connection when there is none or it closed).
func (d *Declarer) channel(ctx context.Context, vhost string) (*amqpVhost, *amqp.Channel, error) {
	v := d.vhost(vhost)
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.err != nil {
		return nil, nil, v.err
	}
	if v.conn != nil && v.conn.IsClosed() {
		v.conn, v.idle = nil, nil
	}
	if n := len(v.idle); n > 0 {
		ch := v.idle[n-1]
		v.idle = v.idle[:n-1]
		return v, ch, nil
	}
	if v.conn == nil {
		raw, err := d.amqpURL(ctx)
		if err != nil {
			v.err = err
			return nil, nil, err
		}
		conn, err := DialAMQP(ctx, AMQPDial{URL: raw, Vhost: vhost, TLS: d.c.TLSConfig(), Name: d.name})
		if err != nil {
			v.err = err
			return nil, nil, err
		}
		v.conn = conn
	}
	ch, err := v.conn.Channel()
	if err != nil {
		return nil, nil, err
	}
	return v, ch, nil
}

// with runs f on a channel of vhost; the channel goes back to the idle
// ones unless f failed (the broker closes a channel on any error).
func (d *Declarer) with(ctx context.Context, vhost string, f func(ch *amqp.Channel) error) error {
	v, ch, err := d.channel(ctx, vhost)
	if err != nil {
		return err
	}
	asked := time.Now()
	if err := checkWrite(ctx); err != nil {
		v.mu.Lock()
		v.idle = append(v.idle, ch)
		v.mu.Unlock()
		return err
	}
	err = f(ch)
	sentBy(ctx, asked)
	if err != nil {
		_ = ch.Close()
		return err
	}
	v.mu.Lock()
	v.idle = append(v.idle, ch)
	v.mu.Unlock()
	return nil
}

// errFieldOrder is a Declarer's refusal of arguments holding a table of
// two or more fields (topology.HasMultiFieldTable): amqp091-go would send
// its fields in Go's map order, a different one on each declaration,
// which RabbitMQ keeps and compares by (a headers binding would match
// some clients' messages and not others', apply to apply). The caller
// declares such an object through the management API instead, which
// sends the fields sorted by name.
var errFieldOrder = errors.New("the arguments hold a table of two or more fields, whose order only the management API keeps fixed")

// amqpTable converts normalised arguments into an AMQP table, typed as the
// management API types the same JSON: integers as long, other numbers as
// double, strings as long strings, lists as arrays, objects as tables.
// Arguments holding a table of two or more fields are refused
// (errFieldOrder).
func amqpTable(a topology.Args) (amqp.Table, error) {
	for _, v := range a {
		if topology.HasMultiFieldTable(v) {
			return nil, errFieldOrder
		}
	}
	t, err := AMQPTable(a.Normalized())
	if t == nil && err == nil {
		t = amqp.Table{}
	}
	return t, err
}

// AMQPTable converts decoded JSON or YAML (objects as map[string]any, at
// any depth) into an AMQP table, the values as they are; nil when m is
// empty. The error names a value AMQP has no type for.
func AMQPTable(m map[string]any) (amqp.Table, error) {
	if len(m) == 0 {
		return nil, nil
	}
	out := amqp.Table{}
	for k, v := range m {
		out[k] = amqpValue(v)
	}
	if err := out.Validate(); err != nil {
		return nil, err
	}
	return out, nil
}

func amqpValue(v any) any {
	switch x := v.(type) {
	case map[string]any:
		t := amqp.Table{}
		for k, e := range x {
			t[k] = amqpValue(e)
		}
		return t
	case topology.Args:
		return amqpValue(map[string]any(x))
	case []any:
		l := make([]any, len(x))
		for i, e := range x {
			l[i] = amqpValue(e)
		}
		return l
	}
	return v
}
