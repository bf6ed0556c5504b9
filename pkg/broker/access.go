package broker

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"slices"
	"sort"
	"strconv"
	"strings"

	rabbithole "github.com/michaelklishin/rabbit-hole/v2"

	"github.com/mqctl/mqctl/pkg/topology"
)

// GrantFullPermissions gives user configure, write and read permissions on
// every resource of vhost. apply calls it on a vhost it has just created,
// where the creating administrator has no permissions yet.
func (c *Client) GrantFullPermissions(ctx context.Context, vhost, user string) error {
	body := map[string]string{"configure": ".*", "write": ".*", "read": ".*"}
	return c.do(ctx, &request{method: http.MethodPut, path: seg("permissions", vhost, user), body: body,
		op: fmt.Sprintf("grant user %q permissions on vhost %q", user, vhost), vhost: vhost}, nil)
}

// QueueHolder names the connection that owns exclusive queue name in vhost
// (its client-provided connection name when it set one), or "" when it
// cannot be told.
func (c *Client) QueueHolder(ctx context.Context, vhost, name string) string {
	// owner_pid_details is [] until the broker has emitted the owner
	// connection's statistics (a few seconds after it opened), an object after.
	var q struct {
		Owner json.RawMessage `json:"owner_pid_details"`
	}
	if err := c.do(ctx, &request{method: http.MethodGet, path: seg("queues", vhost, name),
		query: url.Values{"columns": {"owner_pid_details"}}, op: "read lock holder", vhost: vhost}, &q); err != nil {
		return ""
	}
	var owner struct {
		Name string `json:"name"`
	}
	if json.Unmarshal(q.Owner, &owner) != nil || owner.Name == "" {
		return ""
	}
	var conn struct {
		User        string         `json:"user"`
		ClientProps map[string]any `json:"client_properties"`
	}
	if err := c.do(ctx, &request{method: http.MethodGet, path: seg("connections", owner.Name),
		op: "read lock holder connection"}, &conn); err != nil {
		return fmt.Sprintf("connection %s", owner.Name)
	}
	if n, ok := conn.ClientProps["connection_name"].(string); ok && n != "" {
		return fmt.Sprintf("%q (user %q, connection %s)", n, conn.User, owner.Name)
	}
	b, _ := json.Marshal(conn.User)
	return fmt.Sprintf("user %s on connection %s", b, owner.Name)
}

// QueueArguments returns the arguments queue name was declared with. They
// come from the queue's record, so unlike its statistics they are there as
// soon as the queue is. The error wraps ErrNotFound when it does not exist.
func (c *Client) QueueArguments(ctx context.Context, vhost, name string) (topology.Args, error) {
	var q struct {
		Arguments map[string]any `json:"arguments"`
	}
	if err := c.do(ctx, &request{method: http.MethodGet, path: seg("queues", vhost, name),
		query: url.Values{"columns": {"arguments"}}, op: fmt.Sprintf("read queue %q in vhost %q", name, vhost), vhost: vhost}, &q); err != nil {
		return nil, err
	}
	return topology.Args(q.Arguments).Normalized(), nil
}

// AMQPURL returns the AMQP URL (no vhost) that goes with this management
// connection: the same host and credentials, and the AMQP listener port the
// broker reports (5672 when it reports none); amqps and the TLS listener
// when the management API is https. override (or else Config.AMQPURL),
// when set, is used instead; it gets this client's credentials when it
// carries none. The result holds the password: never print it (MaskURL).
func (c *Client) AMQPURL(ctx context.Context, override string) (string, error) {
	if override == "" {
		override = c.amqpOverride
	}
	var u *url.URL
	if override != "" {
		o, err := parseAMQPURL(override)
		if err != nil {
			return "", err
		}
		u = o
	} else {
		b, err := url.Parse(c.Server())
		if err != nil {
			return "", err
		}
		tls := b.Scheme == "https"
		port, err := c.listenerPort(ctx, tls)
		if err != nil {
			return "", err
		}
		u = &url.URL{Scheme: "amqp", Host: net.JoinHostPort(b.Hostname(), strconv.Itoa(port))}
		if tls {
			u.Scheme = "amqps"
		}
	}
	if u.User == nil {
		u.User = url.UserPassword(c.user, c.pass)
	}
	u.Path = ""
	return u.String(), nil
}

// parseAMQPURL checks an AMQP URL setting.
func parseAMQPURL(raw string) (*url.URL, error) {
	u, err := url.Parse(raw)
	if err != nil && strings.Contains(err.Error(), "invalid URL escape") {
		// The parser's message quotes the escape, which may be part of
		// the password: it is not repeated.
		return nil, fmt.Errorf("invalid AMQP URL %q (--amqp-url / MQCTL_AMQP_URL): a %% in it starts no escape (%%XX); write a literal %% as %%25, in the user name and password too", maskSetting(raw))
	}
	if err != nil || (u.Scheme != "amqp" && u.Scheme != "amqps") || u.Host == "" {
		hint := ""
		switch {
		case u != nil && (u.Scheme == "http" || u.Scheme == "https"):
			hint = "; that is the management API's URL, for --server: --amqp-url takes the broker's AMQP listener, amqp://HOST:5672 (amqps://HOST:5671 with TLS)"
		case !strings.Contains(raw, "://"):
			hint = fmt.Sprintf("; write the scheme: amqp://%s", maskSetting(raw))
		}
		return nil, fmt.Errorf("invalid AMQP URL %q: want amqp://HOST:PORT or amqps://HOST:PORT (--amqp-url / MQCTL_AMQP_URL)%s", maskSetting(raw), hint)
	}
	return u, nil
}

// listenerPort is the port of the AMQP listener (amqps: its TLS listener)
// of the node that answers. The node is first asked whether it listens on
// the protocol's own port, 5672 or 5671 (GET /api/health/checks/port-
// listener/{port}, which answers from the node's listeners alone, in about
// a millisecond); only where it does not is the port read from the
// overview (listeners), which also sums up the broker's statistics: 20-30
// ms on an idle node and 90 ms (0.2 s of the broker's CPU) on RabbitMQ
// 4.3.6 holding 50,000 objects, for every apply.
func (c *Client) listenerPort(ctx context.Context, tls bool) (int, error) {
	def := 5672
	if tls {
		def = 5671
	}
	c.listenersMu.Lock()
	listens, checked := c.listensOnDefault[tls]
	c.listenersMu.Unlock()
	if !checked {
		// A 503 is the check's answer for a port the node does not listen
		// on; any other failure leaves the overview to tell.
		err := c.do(ctx, &request{method: http.MethodGet, path: seg("health", "checks", "port-listener", strconv.Itoa(def)),
			op: "check the AMQP listener", answers503: true}, nil)
		listens = err == nil
		var ae *APIError
		notThere := errors.As(err, &ae) && ae.Status == http.StatusServiceUnavailable
		c.listenersMu.Lock()
		if c.listensOnDefault == nil {
			c.listensOnDefault = map[bool]bool{}
			c.notOnDefault = map[bool]bool{}
		}
		c.listensOnDefault[tls] = listens
		c.notOnDefault[tls] = notThere
		c.listenersMu.Unlock()
	}
	if listens {
		return def, nil
	}
	amqpPort, amqpsPort, err := c.listeners(ctx)
	if err != nil {
		return 0, err
	}
	port := amqpPort
	if tls {
		port = amqpsPort
	}
	if port != 0 {
		return port, nil
	}
	c.listenersMu.Lock()
	notThere := c.notOnDefault[tls]
	c.listenersMu.Unlock()
	if notThere {
		// The node said it does not listen on the default port, and
		// does not show this user its listeners: the default would
		// reach another broker on the host, or none.
		return 0, fmt.Errorf("the node at %s does not listen on port %d (its port-listener health check says so), and shows user %q none of its AMQP listeners (only the monitoring and administrator tags see them): give its AMQP URL with --amqp-url (env MQCTL_AMQP_URL), amqp%s://HOST:PORT",
			MaskURL(c.Server()), def, c.user, map[bool]string{true: "s"}[tls])
	}
	return def, nil
}

// listeners reads, once, the AMQP listener ports of the node that answers
// (GET /api/overview: a cluster lists every node's listeners, and nodes on
// one host listen on different ports).
func (c *Client) listeners(ctx context.Context) (amqpPort, amqpsPort int, err error) {
	c.listenersMu.Lock()
	read, amqpPort, amqpsPort := c.listenersRead, c.amqpPort, c.amqpsPort
	c.listenersMu.Unlock()
	if read {
		return amqpPort, amqpsPort, nil
	}
	ov, err := c.readListeners(ctx)
	if err != nil {
		return 0, 0, err
	}
	for _, own := range []bool{true, false} {
		for _, l := range ov.Listeners {
			if own && l.Node != ov.Node {
				continue
			}
			switch {
			case l.Protocol == "amqp" && amqpPort == 0:
				amqpPort = l.Port
			case l.Protocol == "amqp/ssl" && amqpsPort == 0:
				amqpsPort = l.Port
			}
		}
	}
	c.listenersMu.Lock()
	c.listenersRead, c.amqpPort, c.amqpsPort = true, amqpPort, amqpsPort
	c.listenersMu.Unlock()
	return amqpPort, amqpsPort, nil
}

// listenersJSON is GET /api/overview's node (the node that answered) and
// listeners (every node's, in a cluster).
type listenersJSON struct {
	Node      string `json:"node"`
	Listeners []struct {
		Node     string `json:"node"`
		Protocol string `json:"protocol"`
		Port     int    `json:"port"`
	} `json:"listeners"`
}

// readListeners reads the broker's listeners. A user without the
// monitoring or administrator tag is not shown the node and its
// listeners: asked for those columns, RabbitMQ 3.10.8, 4.0.5 and 4.3.6
// answer [] instead of an object, which reads as none.
func (c *Client) readListeners(ctx context.Context) (listenersJSON, error) {
	var ov listenersJSON
	var raw json.RawMessage
	q := url.Values{"columns": {"node,listeners"}}
	if err := c.do(ctx, &request{method: http.MethodGet, path: "overview", query: q, op: "read the AMQP listeners"}, &raw); err != nil {
		return ov, err
	}
	if t := bytes.TrimSpace(raw); len(t) > 0 && t[0] == '{' {
		if err := json.Unmarshal(t, &ov); err != nil {
			return ov, fmt.Errorf("read the AMQP listeners: the management API at %s sent an answer that is not the expected JSON: %w", c.Server(), err)
		}
	}
	return ov, nil
}

// Nodes is what the broker says of where it listens (Client.ReadNodes).
type Nodes struct {
	// Hosts are its nodes' host names (rabbit@HOST), each once.
	Hosts []string
	// AMQP and AMQPS are the ports of its nodes' AMQP and AMQP-over-TLS
	// listeners, each once.
	AMQP, AMQPS []int
}

// ReadNodes reads the host names of the broker's nodes and the ports of
// their AMQP listeners (GET /api/overview: a cluster lists every node's).
// nil, without an error, where the broker shows the user none (a user
// without the monitoring or administrator tag: 3.10.8, 4.0.5 and 4.3.6
// answer [] for these columns) or lists no AMQP listener.
func (c *Client) ReadNodes(ctx context.Context) (*Nodes, error) {
	ov, err := c.readListeners(ctx)
	if err != nil {
		return nil, err
	}
	n := &Nodes{}
	for _, l := range ov.Listeners {
		if _, host, ok := strings.Cut(l.Node, "@"); ok && !slices.Contains(n.Hosts, host) {
			n.Hosts = append(n.Hosts, host)
		}
		switch {
		case l.Protocol == "amqp" && !slices.Contains(n.AMQP, l.Port):
			n.AMQP = append(n.AMQP, l.Port)
		case l.Protocol == "amqp/ssl" && !slices.Contains(n.AMQPS, l.Port):
			n.AMQPS = append(n.AMQPS, l.Port)
		}
	}
	if len(n.AMQP)+len(n.AMQPS) == 0 {
		return nil, nil
	}
	return n, nil
}

// TLSConfig is the TLS configuration of this connection (CA, client
// certificate), for AMQP connections that go with it.
func (c *Client) TLSConfig() *tls.Config { return c.transport.TLSClientConfig.Clone() }

// VhostNames lists the vhosts the user can see, sorted, less mqctl's
// throwaway vhosts (IsThrowaway).
func (c *Client) VhostNames(ctx context.Context) ([]string, error) {
	infos, err := c.listVhosts(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]string, 0, len(infos))
	for n := range infos {
		if !IsThrowaway(n) {
			out = append(out, n)
		}
	}
	sort.Strings(out)
	return out, nil
}

func orDefault(port, def int) int {
	if port == 0 {
		return def
	}
	return port
}

// OwnPermissions reads the permissions of the user mqctl is connected as
// on vhost (found: it has some), and whether it has topic permissions
// there: an administrator's read (RabbitMQ shows other users none of
// their own permissions: ErrForbidden).
func (c *Client) OwnPermissions(ctx context.Context, vhost string) (p rabbithole.PermissionInfo, found, topic bool, err error) {
	err = c.do(ctx, &request{method: http.MethodGet, path: seg("permissions", vhost, c.user),
		op: fmt.Sprintf("read the permissions of user %q on vhost %q", c.user, vhost), vhost: vhost}, &p)
	switch {
	case errors.Is(err, ErrNotFound) && !errors.Is(err, ErrVhostNotFound):
		return p, false, false, nil
	case err != nil:
		return p, false, false, err
	}
	var tps []rabbithole.TopicPermissionInfo
	if err := c.do(ctx, &request{method: http.MethodGet, path: seg("topic-permissions", vhost, c.user),
		op: fmt.Sprintf("read the topic permissions of user %q on vhost %q", c.user, vhost), vhost: vhost}, &tps); err != nil && !errors.Is(err, ErrNotFound) {
		return p, true, false, err
	}
	return p, true, len(tps) > 0, nil
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

// ExclusiveQueueNames lists the exclusive queues of vhost, sorted: the
// queues of client connections, which a state read leaves out
// (definitions.SkipQueue).
func (c *Client) ExclusiveQueueNames(ctx context.Context, vhost string) ([]string, error) {
	var qs []struct {
		Name      string `json:"name"`
		Exclusive bool   `json:"exclusive"`
	}
	if err := c.do(ctx, &request{method: http.MethodGet, path: seg("queues", vhost), query: url.Values{"columns": {"name,exclusive"}, "disable_stats": {"true"}},
		op: fmt.Sprintf("list the queues of vhost %q", vhost), vhost: vhost}, &qs); err != nil {
		return nil, err
	}
	var out []string
	for _, q := range qs {
		if q.Exclusive {
			out = append(out, q.Name)
		}
	}
	sort.Strings(out)
	return out, nil
}

// exclusiveAsked is how many queue names ExclusiveQueues asks of the
// broker one by one; past it, one listing of the vhost's queues is the
// cheaper read.
const exclusiveAsked = 20

// ExclusiveQueues returns those of names that vhost holds as exclusive
// queues: a client connection's own, which a state read leaves out
// (definitions.SkipQueue). Only that connection may declare or bind such
// a queue again: the management API answers 400 "cannot obtain exclusive
// access to locked queue" to any other. A name the vhost does not hold is
// not in the result.
func (c *Client) ExclusiveQueues(ctx context.Context, vhost string, names []string) (map[string]bool, error) {
	out := map[string]bool{}
	if len(names) == 0 {
		return out, nil
	}
	type queue struct {
		Exclusive bool `json:"exclusive"`
	}
	if len(names) > exclusiveAsked {
		all, err := c.ExclusiveQueueNames(ctx, vhost)
		if err != nil {
			return nil, err
		}
		want := make(map[string]bool, len(names))
		for _, n := range names {
			want[n] = true
		}
		for _, n := range all {
			if want[n] {
				out[n] = true
			}
		}
		return out, nil
	}
	for _, n := range names {
		var q queue
		err := c.do(ctx, &request{method: http.MethodGet, path: seg("queues", vhost, n), query: url.Values{"columns": {"exclusive"}},
			op: fmt.Sprintf("read queue %q in vhost %q", n, vhost), vhost: vhost}, &q)
		switch {
		case errors.Is(err, ErrNotFound):
		case err != nil:
			return nil, err
		case q.Exclusive:
			out[n] = true
		}
	}
	return out, nil
}
