package broker

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"
)

// The management API refuses a write the user's vhost permissions do not
// allow with 401 {"error":"not_authorised","reason":"Access refused."},
// naming neither the permission nor the object. explainRefusal works out
// which permission is missing: from what RabbitMQ checks for the request
// (configure on a declared or deleted queue or exchange; for a new queue
// with a dead-letter exchange also read on the queue and write on that
// exchange, likewise for an exchange with an alternate exchange; write on
// a binding's destination and read on its source) and, where a request
// needs more than one, from AMQP probes that change nothing (an unbind of
// a binding that does not exist, a basic.get from a queue that does not
// exist) and whose ACCESS_REFUSED answers name the refused object.

// resource is a queue or an exchange, as RabbitMQ's permission checks see it.
type resource struct {
	kind string // "queue" or "exchange"
	name string
}

func (r resource) String() string { return fmt.Sprintf("%s %q", r.kind, r.name) }

// need is one vhost permission a request needs, and why.
type need struct {
	perm string // "configure", "write" or "read"
	res  resource
	why  string // what needs it, for the message; "" for the plain case
}

// Refusal reasons of the management API (RabbitMQ 3.10).
const (
	reasonAccessRefused = "access refused."
	reasonNoVhost       = "user not authorised to access virtual host"
	reasonNoObject      = "user not authorised to access object"
	reasonNotAdmin      = "not administrator user"
)

// explainRefusal says what the user lacks for r, which the broker refused
// with reason; "" when r is not a request it knows.
func (c *Client) explainRefusal(ctx context.Context, r *request, reason string) string {
	parts := splitPath(r.path)
	if len(parts) < 2 || r.method == http.MethodGet {
		return ""
	}
	vhost := parts[1]
	lower := strings.ToLower(reason)
	switch parts[0] {
	case "vhosts":
		if c.IsAdmin() {
			return ""
		}
		verb := "delete"
		if r.method == http.MethodPut {
			verb = "create"
			if c.vhostExists(ctx, vhost) {
				verb = "change"
			}
		}
		return fmt.Sprintf("user %q may not %s vhost %q: it needs the administrator tag", c.user, verb, vhost)
	case "permissions":
		return fmt.Sprintf("user %q may not set permissions on vhost %q: it needs the administrator tag", c.user, vhost)
	case "operator-policies":
		return fmt.Sprintf("user %q may not %s operator policies in vhost %q: it needs the administrator tag", c.user, policyVerb(r.method), vhost)
	case "policies":
		if !slices.Contains(c.tags, "policymaker") && !c.IsAdmin() {
			return fmt.Sprintf("user %q may not %s policies in vhost %q: it needs the policymaker or administrator tag", c.user, policyVerb(r.method), vhost)
		}
		if lower == reasonNoObject || lower == reasonNoVhost {
			return c.noVhostAccess(vhost)
		}
		return ""
	}
	if lower == reasonNoVhost {
		return c.noVhostAccess(vhost)
	}
	if lower != reasonAccessRefused {
		return ""
	}
	needs, multi := c.requestNeeds(ctx, r, parts)
	if len(needs) == 0 {
		return ""
	}
	missing, certain := needs, !multi
	if multi {
		missing, certain = c.probeNeeds(ctx, vhost, parts, needs)
	}
	if len(missing) == 1 {
		return lacks(c.user, vhost, missing[0])
	}
	list := make([]string, len(missing))
	for i, n := range missing {
		list[i] = fmt.Sprintf("%s on %s", n.perm, n.res)
		if n.why != "" {
			list[i] += " (" + n.why + ")"
		}
	}
	which := "one of the permissions this needs"
	if certain {
		which = "these permissions"
	}
	return fmt.Sprintf("user %q lacks %s in vhost %q: %s", c.user, which, vhost, strings.Join(list, "; "))
}

func policyVerb(method string) string {
	if method == http.MethodDelete {
		return "delete"
	}
	return "create"
}

func (c *Client) noVhostAccess(vhost string) string {
	return fmt.Sprintf("user %q has no permissions on vhost %q (an administrator grants them: rabbitmqctl set_permissions -p %s %s CONFIGURE WRITE READ)", c.user, vhost, shellQuote(vhost), shellQuote(c.user))
}

func lacks(user, vhost string, n need) string {
	s := fmt.Sprintf("user %q lacks %s permission on %s in vhost %q: its %s regexp does not match %q", user, n.perm, n.res, vhost, n.perm, n.res.name)
	if n.why != "" {
		s += " (" + n.why + ")"
	}
	return s
}

// requestNeeds lists the permissions r needs; multi reports whether there
// is more than one, so that probing must tell which is missing.
func (c *Client) requestNeeds(ctx context.Context, r *request, parts []string) (needs []need, multi bool) {
	vhost := parts[1]
	switch {
	case (parts[0] == "queues" || parts[0] == "exchanges") && len(parts) == 3:
		kind := strings.TrimSuffix(parts[0], "s")
		self := resource{kind, parts[2]}
		needs = []need{{perm: "configure", res: self}}
		if r.method != http.MethodPut {
			return needs, false
		}
		arg, what := "x-dead-letter-exchange", "a dead-letter exchange"
		if kind == "exchange" {
			arg, what = "alternate-exchange", "an alternate exchange"
		}
		target, ok := declaredArgument(r.body, arg)
		if !ok || c.objectExists(ctx, vhost, self) {
			// RabbitMQ checks the extra permissions only when it creates the object.
			return needs, false
		}
		decl := "declaring a queue with " + what
		if kind == "exchange" {
			decl = "declaring an exchange with " + what
		}
		needs = append(needs,
			need{perm: "read", res: self, why: decl + " needs read on the " + kind},
			need{perm: "write", res: resource{"exchange", target}, why: decl + " needs write on that exchange"})
		return needs, true
	case parts[0] == "bindings" && len(parts) >= 6 && parts[2] == "e" && (parts[4] == "q" || parts[4] == "e"):
		dst := resource{"queue", parts[5]}
		if parts[4] == "e" {
			dst.kind = "exchange"
		}
		return []need{
			{perm: "write", res: dst, why: "a binding needs write on its destination and read on its source"},
			{perm: "read", res: resource{"exchange", parts[3]}, why: "a binding needs write on its destination and read on its source"},
		}, true
	}
	return nil, false
}

// declaredArgument returns the string argument arg of a queue or exchange
// declaration body.
func declaredArgument(body any, arg string) (string, bool) {
	var args map[string]any
	switch b := body.(type) {
	case queueBody:
		args = b.Arguments
	case exchangeBody:
		args = b.Arguments
	}
	s, ok := args[arg].(string)
	return s, ok
}

func (c *Client) objectExists(ctx context.Context, vhost string, res resource) bool {
	var out struct {
		Name string `json:"name"`
	}
	err := c.do(ctx, &request{method: http.MethodGet, path: seg(res.kind+"s", vhost, res.name),
		query: url.Values{"columns": {"name"}}, op: "read " + res.String(), vhost: vhost}, &out)
	return err == nil
}

// probeNeeds narrows needs down to the missing ones with AMQP probes;
// certain is false (and needs unchanged) when the probes cannot tell.
func (c *Client) probeNeeds(ctx context.Context, vhost string, parts []string, needs []need) (missing []need, certain bool) {
	conn, err := c.probeConn(ctx, vhost)
	if err != nil {
		return needs, false
	}
	defer conn.Close()
	p := permProbe{ctx: ctx, conn: conn, key: "mqctl.permission-probe." + time.Now().UTC().Format("20060102T150405.000000000")}
	if parts[0] == "bindings" {
		// Unbinding checks write on the destination, then read on the
		// source, before it looks for the binding (there is none).
		dst, src := needs[0].res, needs[1].res
		refused, ok := p.try(func(ch *amqp.Channel) error {
			if dst.kind == "exchange" {
				return ch.ExchangeUnbind(dst.name, p.key, src.name, false, nil)
			}
			return ch.QueueUnbind(dst.name, p.key, src.name, nil)
		})
		return pick(needs, refused, ok)
	}
	// A new queue (exchange) with a dead-letter (alternate) exchange:
	// configure on it, then read on it and write on the other exchange.
	if needs[1].res.kind == "exchange" {
		return p.exchangeNeeds(needs)
	}
	return p.queueNeeds(needs)
}

// permProbe asks the broker, over an AMQP connection to the vhost, which
// permission an operation lacks, with operations that change nothing.
type permProbe struct {
	ctx  context.Context
	conn *amqp.Connection
	key  string // a routing key no binding has
}

// try runs f on a channel of its own and returns the object named by an
// ACCESS_REFUSED answer ("" for none); ok is false when the answer says
// nothing about permissions.
func (p permProbe) try(f func(ch *amqp.Channel) error) (refused resource, ok bool) {
	if p.ctx.Err() != nil {
		return resource{}, false
	}
	ch, err := p.conn.Channel()
	if err != nil {
		return resource{}, false
	}
	err = f(ch)
	var ae *amqp.Error
	switch {
	case err == nil:
		ch.Close()
		return resource{}, true
	case errors.As(err, &ae) && ae.Code == amqp.AccessRefused:
		if res, found := refusedResource(ae.Reason); found {
			return res, true
		}
		return resource{}, true
	case errors.As(err, &ae) && ae.Code == amqp.NotFound:
		return resource{}, true
	}
	return resource{}, false
}

// exchangeNeeds probes the needs of a new exchange with an alternate
// exchange: exchange.unbind checks write on its destination, then read on
// its source.
func (p permProbe) exchangeNeeds(needs []need) ([]need, bool) {
	self, target := needs[1].res, needs[2].res
	refused, ok := p.try(func(ch *amqp.Channel) error { return ch.ExchangeUnbind(target.name, p.key, self.name, false, nil) })
	switch {
	case !ok:
		return needs, false
	case refused == target:
		return needs[2:], true
	case refused == self:
		return needs[1:2], true
	}
	return needs[:1], true
}

// queueNeeds probes the needs of a new queue with a dead-letter exchange:
// the queue does not exist, so basic.get checks read, then finds nothing;
// an unbind from the exchange checks write on it.
func (p permProbe) queueNeeds(needs []need) ([]need, bool) {
	self, target := needs[1].res, needs[2].res
	refused, ok := p.try(func(ch *amqp.Channel) error { _, _, err := ch.Get(self.name, false); return err })
	if !ok {
		return needs, false
	}
	var missing []need
	if refused == self {
		missing = append(missing, needs[1])
	}
	source := "amq.direct"
	if target.name == source {
		source = "amq.fanout"
	}
	refused, ok = p.try(func(ch *amqp.Channel) error { return ch.ExchangeUnbind(target.name, p.key, source, false, nil) })
	if !ok {
		return needs, false
	}
	if refused == target {
		missing = append(missing, needs[2])
	}
	if len(missing) == 0 {
		return needs[:1], true
	}
	return missing, true
}

// pick returns the need whose object was refused; all of needs (and
// certain false) when the probe could not tell.
func pick(needs []need, refused resource, ok bool) ([]need, bool) {
	if ok {
		for _, n := range needs {
			if n.res == refused {
				return []need{n}, true
			}
		}
	}
	return needs, false
}

// refusedRE matches RabbitMQ's "access to queue 'q' in vhost 'v' refused
// for user 'u'" (names may hold quotes; the vhost part is matched greedily
// up to the last " in vhost '").
var refusedRE = regexp.MustCompile(`access to (queue|exchange) '(.*)' in vhost '.*' refused for user '`)

func refusedResource(reason string) (resource, bool) {
	m := refusedRE.FindStringSubmatch(reason)
	if m == nil {
		return resource{}, false
	}
	if m[1] == "exchange" && m[2] == "amq.default" {
		m[2] = "" // the default exchange's name in permission checks
	}
	return resource{m[1], m[2]}, true
}

// probeConn opens a short AMQP connection to vhost for permission probes.
func (c *Client) probeConn(ctx context.Context, vhost string) (*amqp.Connection, error) {
	raw, err := c.AMQPURL(ctx, "")
	if err != nil {
		return nil, err
	}
	return DialAMQP(ctx, AMQPDial{URL: raw, Vhost: vhost, TLS: c.TLSConfig(), Name: "mqctl permission check"})
}

// splitPath unescapes the segments of a request path.
func splitPath(p string) []string {
	raw := strings.Split(p, "/")
	out := make([]string, len(raw))
	for i, s := range raw {
		u, err := url.PathUnescape(s)
		if err != nil {
			u = s
		}
		out[i] = u
	}
	return out
}

// shellQuote quotes s for a shell command line when it needs it.
func shellQuote(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-/@") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
