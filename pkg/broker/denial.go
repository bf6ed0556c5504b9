package broker

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/mqctl/mqctl/internal/shell"
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
// a binding that does not exist, an invalid declaration: MissingPermissions)
// and whose ACCESS_REFUSED answers name the refused object.

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
		var topic *Need
		missing, topic, certain = c.probeNeeds(ctx, r, vhost, parts, needs)
		if topic != nil {
			return TopicReadLacks(c.user, vhost, topic.Name, topic.RoutingKey) + "; " + TopicReadFix(c.user, vhost, topic.Name, []string{topic.RoutingKey})
		}
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

// UnseenVhost says that vhost is not among the vhosts RabbitMQ shows the
// user, who is not an administrator: it shows such a user only the vhosts
// it has permissions on, so the vhost may not exist, or be one the user
// has no permissions on.
func (c *Client) UnseenVhost(vhost string) string {
	return fmt.Sprintf("user %q is not shown vhost %q: it does not exist, or the user has no permissions on it (RabbitMQ answers both alike to a user who is not an administrator); an administrator can tell, and create it or grant the permissions (rabbitmqctl set_permissions -p %s %s ...)", c.user, vhost, shell.Quote(vhost), shell.Quote(c.user))
}

func (c *Client) noVhostAccess(vhost string) string { return noVhostAccess(c.user, vhost) }

// NoVhostAccess says that the user has no permissions on vhost, and how an
// administrator grants them.
func (c *Client) NoVhostAccess(vhost string) string { return c.noVhostAccess(vhost) }

func noVhostAccess(user, vhost string) string {
	return fmt.Sprintf("user %q has no permissions on vhost %q (an administrator grants them: rabbitmqctl set_permissions -p %s %s CONFIGURE WRITE READ)", user, vhost, shell.Quote(vhost), shell.Quote(user))
}

// LacksPermission says that the user lacks n's permission (Perm, Kind,
// Name) in vhost, what needs it (why), and how an administrator grants
// it. Ask MissingPermissions whether it does.
func (c *Client) LacksPermission(vhost string, n Need, why string) string {
	name, what := n.Name, n.res().String()
	if n.Kind == "exchange" && n.Name == "" {
		// RabbitMQ checks the default exchange's permissions on the
		// name "amq.default" (rabbit_access_control).
		name, what = "amq.default", `the default exchange ("amq.default" in permissions)`
	}
	return fmt.Sprintf("user %q lacks %s permission on %s in vhost %q: its %s regexp does not match %q (%s); an administrator extends it: rabbitmqctl set_permissions -p %s %s CONFIGURE WRITE READ",
		c.user, n.Perm, what, vhost, n.Perm, name, why, shell.Quote(vhost), shell.Quote(c.user))
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

// probeNeeds narrows needs down to the missing ones with the probes of
// the permission check before an apply (MissingPermissions), which change
// nothing; certain is false (and needs unchanged) when the probes cannot
// tell. needs are requestNeeds': a binding's write on its destination and
// read on its source (told by one unbind to the destination, with the
// binding's key, which also tells the source's topic permission on it), or
// a new queue's (exchange's) configure, read on it and write on its
// dead-letter (alternate) exchange. topic is set (Name the exchange,
// RoutingKey the key) when what the binding lacks is the topic permission
// on its key, the vhost permissions being there.
func (c *Client) probeNeeds(ctx context.Context, r *request, vhost string, parts []string, needs []need) (missing []need, topic *Need, certain bool) {
	amqpURL, err := c.AMQPURL(ctx, "")
	if err != nil {
		return needs, nil, false
	}
	asked := make([]Need, len(needs))
	for i, n := range needs {
		asked[i] = Need{Perm: n.perm, Kind: n.res.kind, Name: n.res.name}
	}
	switch {
	case parts[0] == "bindings":
		asked[1].ViaKind, asked[1].Via = needs[0].res.kind, needs[0].res.name
		// RabbitMQ checks the topic permission on the key of a binding
		// from a topic exchange only (the probe's answer says whether it
		// did).
		asked[1].RoutingKey, asked[1].TopicKey = r.bindingKey, true
	case needs[0].res.kind == "queue":
		asked[0].HasDeadLetter, asked[0].DeadLetter = true, needs[2].res.name
	default:
		asked[1].ViaKind, asked[1].Via = "exchange", needs[2].res.name
	}
	got, err := c.MissingPermissions(ctx, amqpURL, vhost, asked)
	if err != nil {
		return needs, nil, false
	}
	for _, n := range needs {
		if slices.ContainsFunc(got, func(m Need) bool { return !m.Topic && m.Perm == n.perm && m.res() == n.res }) {
			missing = append(missing, n)
		}
	}
	if len(missing) == 0 {
		for _, m := range got {
			if m.Topic {
				return nil, &m, true
			}
		}
		return needs, nil, false
	}
	return missing, nil, true
}

// TopicReadLacks says that user may not bind (or unbind) with key on
// topic exchange x of vhost: the read regexp of its topic permission for
// x does not match the key (RabbitMQ checks it on the binding key of a
// topic exchange, rabbit_channel).
func TopicReadLacks(user, vhost, x, key string) string {
	return fmt.Sprintf("user %q lacks the topic permission to read routing key %q on exchange %q in vhost %q: the read regexp of its topic permission for that exchange does not match %q (a binding from a topic exchange needs it to match the binding's key)", user, key, x, vhost, key)
}

// TopicReadFix is how an administrator lets user bind with keys on topic
// exchange x of vhost: the read regexp of its topic permission for x must
// match them too. RabbitMQ shows a user that is not an administrator none
// of its permissions, so the regexps it has now are not known here: the
// command keeps them as WRITE and READ, and READ is told what to match.
func TopicReadFix(user, vhost, x string, keys []string) string {
	quoted := make([]string, len(keys))
	alts := make([]string, len(keys))
	for i, k := range keys {
		quoted[i] = strconv.Quote(k)
		alts[i] = regexp.QuoteMeta(k)
	}
	only, which := "^"+alts[0]+"$", "it"
	if len(alts) > 1 {
		only, which = "^("+strings.Join(alts, "|")+")$", "them"
	}
	return fmt.Sprintf("an administrator extends the read regexp of user %q's topic permission for exchange %q in vhost %q to match %s: rabbitmqctl set_topic_permissions -p %s %s %s WRITE READ, with WRITE the write regexp it has and READ the read regexp it has extended (%s matches %s alone)",
		user, x, vhost, strings.Join(quoted, ", "), shell.Quote(vhost), shell.Quote(user), shell.Quote(x), shell.Quote(only), which)
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
