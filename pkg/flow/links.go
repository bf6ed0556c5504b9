package flow

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/mqctl/mqctl/pkg/kind"
	"github.com/mqctl/mqctl/pkg/topology"
)

// links adds the shovels and federation upstreams of the vhost that are
// added, removed, or take messages from or move them to somewhere else
// after the change (Link).
func (c *vhostCompare) links(here *Here) {
	for _, k := range []kind.Kind{kind.Shovel, kind.FederationUpstream} {
		names := map[string]bool{}
		for _, s := range []*side{c.b, c.a} {
			for n, it := range s.v.Items[k] {
				if it != nil {
					names[n] = true
				}
			}
		}
		for _, n := range slices.Sorted(func(yield func(string) bool) {
			for n := range names {
				if !yield(n) {
					return
				}
			}
		}) {
			ib, ia := c.b.v.Items.Get(k, n), c.a.v.Items.Get(k, n)
			var l *Link
			if k == kind.Shovel {
				l = c.shovelLink(n, ib, ia, here)
			} else {
				l = c.upstreamLink(n, ib, ia, here)
			}
			if l != nil {
				c.d.Links = append(c.d.Links, *l)
			}
		}
	}
}

// settingsOf is an item's settings, nil for none.
func settingsOf(it *topology.Item) map[string]any {
	if it == nil {
		return nil
	}
	return it.Settings
}

// shovelLink says what a shovel's change does to messages, nil when it
// takes them from and moves them to the same places on both sides.
func (c *vhostCompare) shovelLink(name string, ib, ia *topology.Item, here *Here) *Link {
	sb, sa := settingsOf(ib), settingsOf(ia)
	l := &Link{Vhost: c.vhost, Kind: "shovel", Name: name}
	var fromB, toB, fromA, toA string
	var unknown []string
	if sb != nil {
		fromB, toB = c.shovelEnd(sb, "src", here, &unknown), c.shovelEnd(sb, "dest", here, &unknown)
	}
	if sa != nil {
		unknown = nil
		fromA, toA = c.shovelEnd(sa, "src", here, &unknown), c.shovelEnd(sa, "dest", here, &unknown)
	}
	if fromB == fromA && toB == toA {
		return nil
	}
	if sb != nil {
		l.Before = fromB + " to " + toB
	}
	if sa != nil {
		l.After = fromA + " to " + toA
	}
	switch {
	case sa == nil:
		l.Effect, l.Loses = c.stopsLeavingLoses(sb, fromB, toB)
		unknown = nil
	case sb == nil:
		l.Effect = fmt.Sprintf("messages now leave %s for %s", fromA, toA)
		if shovelFromQueue(sa) {
			l.Effect += " (consumers of the queue now share its messages with the shovel)"
		}
	case fromB != fromA && toB != toA:
		l.Effect = fmt.Sprintf("it now moves messages from %s to %s; ", fromA, toA) + c.stopsLeaving(sb, fromB, toB)
	case fromB != fromA:
		l.Effect = fmt.Sprintf("it now takes messages from %s instead; ", fromA) + c.stopsLeaving(sb, fromB, toB)
	default:
		l.Effect = fmt.Sprintf("messages from %s now go to %s instead of %s", fromA, toA, toB)
	}
	l.Unknown = strings.Join(unknown, "; ")
	return l
}

// stopsLeaving says what becomes of the messages a shovel of settings s
// took from "from" to "to" once it no longer does.
func (c *vhostCompare) stopsLeaving(s map[string]any, from, to string) string {
	text, _ := c.stopsLeavingLoses(s, from, to)
	return text
}

// stopsLeavingLoses is stopsLeaving, and whether the queue they stay in
// then loses some of them: past its length limit or message TTL without
// a dead-letter exchange, or refusing publishes once full.
func (c *vhostCompare) stopsLeavingLoses(s map[string]any, from, to string) (string, bool) {
	if !shovelFromQueue(s) {
		return fmt.Sprintf("messages of %s are no longer moved to %s (the queue the shovel consumed them through goes with it)", from, to), false
	}
	loses := false
	if q := c.shovelSourceQueue(s); q != "" && !c.a.hasQueue(q) && c.b.hasQueue(q) {
		return fmt.Sprintf("messages stop leaving %s for %s: the queue is deleted too, with what it holds", from, to), false
	}
	text := fmt.Sprintf("messages stop leaving %s for %s: they stay in the queue until something else consumes them", from, to)
	if q := c.shovelSourceQueue(s); c.a.hasQueue(q) {
		if limits := c.a.lengthLimits(q); limits != "" {
			text += fmt.Sprintf(", and once it holds its length limit of %s it %s", limits, c.a.fullText(q))
			loses = loses || c.a.rejectsPublish(q) || !c.a.setup(q).configured
		}
		if ttl, ok := c.a.sim.QueueArg(q, "x-message-ttl"); ok {
			after := c.a.valueText(q, "x-message-ttl", ttl, fmt.Sprintf("%vms", ttl), " ms")
			if ms, isInt := topology.Normalize(ttl).(int64); isInt {
				after = c.a.duration(q, "x-message-ttl", ms)
			}
			text += fmt.Sprintf(", and they expire after %s (%s)", after, c.a.ttlFate(q))
			loses = loses || !c.a.setup(q).configured
		}
	}
	return text, loses
}

// fullText says what queue q on side s does once full.
func (s *side) fullText(q string) string {
	if s.rejectsPublish(q) {
		return "refuses what is published to it (overflow reject-publish: lost where the publisher does not use confirms)"
	}
	if s.setup(q).configured {
		return s.whenFull(q)
	}
	return s.whenFull(q) + ", with no dead-letter exchange: they are lost"
}

// ttlFate says what becomes of queue q's expired messages on side s.
func (s *side) ttlFate(q string) string {
	if s.setup(q).configured {
		return "dead-lettered"
	}
	return "dropped: no dead-letter exchange"
}

// shovelFromQueue reports whether a shovel of settings s consumes from a
// queue (of any vhost or broker), not through a queue of its own bound to
// an exchange.
func shovelFromQueue(s map[string]any) bool {
	if kind.ShovelProtocol(s, "src") == "amqp10" {
		addr, _ := s["src-address"].(string)
		return strings.HasPrefix(addr, "/queues/")
	}
	return s["src-queue"] != nil
}

// shovelSourceQueue is the queue of this vhost a shovel of settings s
// consumes from ("" where it consumes from an exchange, another vhost or
// a broker that may be another).
func (c *vhostCompare) shovelSourceQueue(s map[string]any) string {
	q := kind.ShovelQueue(s, "src")
	if vh, ok := kind.ShovelLocalVhost(s, "src-uri"); !ok || vh != c.vhost {
		return ""
	}
	return q
}

// shovelEnd names a shovel's source (end "src") or destination ("dest")
// and the broker and vhost of its URI (never its credentials); what
// mqctl cannot tell of the broker goes to unknown.
func (c *vhostCompare) shovelEnd(s map[string]any, end string, here *Here, unknown *[]string) string {
	str := func(k string) (string, bool) { v, ok := s[end+"-"+k].(string); return v, ok }
	var what string
	switch {
	case kind.ShovelProtocol(s, end) == "amqp10":
		a, _ := str("address")
		what = fmt.Sprintf("address %q", a)
	case s[end+"-queue"] != nil:
		q, _ := str("queue")
		what = fmt.Sprintf("queue %q", q)
	case s[end+"-exchange"] != nil:
		x, _ := str("exchange")
		what = fmt.Sprintf("exchange %q", x)
		if k, ok := str("exchange-key"); ok {
			what += fmt.Sprintf(" with key %q", k)
		}
	case end == "dest":
		what = "the exchange and key each message was published with"
	default:
		what = "its source"
	}
	if u := unsetURI(s[end+"-uri"]); u != "" {
		*unknown = append(*unknown, unsetURIUnknown(u))
		return fmt.Sprintf("%s on the broker and vhost of %s", what, u)
	}
	if vh, ok := kind.ShovelLocalVhost(s, end+"-uri"); ok {
		if vh == c.vhost {
			return what
		}
		return fmt.Sprintf("%s of vhost %q", what, vh)
	}
	vh, hostPort, w := shovelPlace(map[string]any{"dest-uri": s[end+"-uri"]}, here)
	switch w {
	case whereHere:
		return fmt.Sprintf("%s of vhost %q (through %s, this broker)", what, vh, hostPort)
	case whereElsewhere:
		return fmt.Sprintf("%s of vhost %q on %s", what, vh, hostPort)
	}
	*unknown = append(*unknown, fmt.Sprintf("mqctl cannot tell whether %s is this broker", hostPort))
	return fmt.Sprintf("%s of vhost %q on %s", what, vh, hostPort)
}

// unsetURI is the first URI of setting v that is no URI but what the file
// wrote, a variable the environment does not set (a secret is not needed
// offline, and stands as written: "${VAR}"), "" when there is none.
// Where it connects is not known: never vhost "" on no host.
func unsetURI(v any) string {
	for _, u := range kind.URIs(v) {
		if _, _, ok := kind.URIVhost(u); !ok && strings.Contains(u, "${") {
			return u
		}
	}
	return ""
}

// unsetURIUnknown says what mqctl cannot tell of a link whose URI u is
// not set (unsetURI).
func unsetURIUnknown(u string) string {
	return fmt.Sprintf("mqctl cannot tell which broker and vhost %s names: it is not set here (set it, as plan and apply need)", u)
}

// upstreamLink says what a federation upstream's change does to
// messages, nil when it connects to the same place on both sides.
func (c *vhostCompare) upstreamLink(name string, ib, ia *topology.Item, here *Here) *Link {
	sb, sa := settingsOf(ib), settingsOf(ia)
	at := func(s map[string]any) string {
		if s == nil {
			return ""
		}
		var hosts []string
		for _, u := range kind.URIs(s["uri"]) {
			if unsetURI(u) != "" {
				hosts = append(hosts, "the broker and vhost of "+u+" (not set here)")
				continue
			}
			vh, hostPort, _ := here.place(u)
			if hostPort == "" {
				hostPort = "this broker"
			}
			hosts = append(hosts, fmt.Sprintf("vhost %q on %s", vh, hostPort))
		}
		out := strings.Join(hosts, " or ")
		for _, k := range []string{"exchange", "queue"} {
			if v, ok := s[k].(string); ok {
				out += fmt.Sprintf(" (its %s %q)", k, v)
			}
		}
		return out
	}
	b, a := at(sb), at(sa)
	if b == a {
		if sb == nil {
			return nil
		}
		return c.membershipLink(name, b)
	}
	l := &Link{Vhost: c.vhost, Kind: "federation_upstream", Name: name, Before: b, After: a}
	users := c.federatedBy(name)
	if users == "" {
		return nil // no policy federates through it: no message moves through it
	}
	switch {
	case sa == nil:
		l.Effect = fmt.Sprintf("%s no longer receive messages from %s", users, b)
		l.Unknown = upstreamLeft(&l.Effect, c.b.federatedFrom(name), sb, "the upstream")
	case sb == nil:
		l.Effect = fmt.Sprintf("%s now receive messages from %s", users, a)
	default:
		l.Effect = fmt.Sprintf("%s now receive messages from %s instead of %s", users, a, b)
		l.Unknown = upstreamLeft(&l.Effect, c.b.federatedFrom(name), sb, "the old upstream")
	}
	return l
}

// upstreamLeft adds to effect what becomes, on upstream (settings s),
// of what it holds for the links that federated objs from it
// (federatedFrom's `exchange "x"`, `queue "q"`), now gone, and returns
// what mqctl cannot tell of it offline ("" for nothing). An exchange's
// link consumes from a queue it declared on the upstream ("federation: x
// -> node:vhost:x"), bound to the upstream exchange: the link deletes it
// when it stops, with the messages it holds not yet federated, unless the
// upstream's resource-cleanup-mode is never, which keeps it, still bound
// and filling (rabbit_federation_exchange_link terminate; measured on
// RabbitMQ 4.3.6, 4.0.5 and 3.10.8, TestFederationLinkGoneAgainstBroker).
// Only a running link does: one still starting traps no exit yet
// (rabbit_federation_link_util start_conn_ch), and is killed without
// cleaning up, and one reconnecting has no connection to clean up with
// (seen on 4.3.6 under load: the queue stayed).
// A queue's link consumes from the upstream's own queue of its name,
// which keeps its messages.
func upstreamLeft(effect *string, objs []string, s map[string]any, upstream string) string {
	var exchanges, queues bool
	for _, o := range objs {
		exchanges = exchanges || strings.HasPrefix(o, "exchange ")
		queues = queues || strings.HasPrefix(o, "queue ")
	}
	var unknown string
	if exchanges {
		if s["resource-cleanup-mode"] == "never" {
			*effect += fmt.Sprintf("; the queue each exchange's link consumed from on %s stays there (resource-cleanup-mode never), still bound to the upstream exchange: it keeps taking its messages until it is deleted", upstream)
			unknown = fmt.Sprintf("how much those queues on %s hold, and for how long, is not known offline", upstream)
		} else {
			*effect += fmt.Sprintf("; the queue each exchange's link consumed from on %s (\"federation: …\") is deleted with the link, with the messages it holds not yet federated (resource-cleanup-mode never would keep it); a link that is not running then (still starting, or reconnecting) leaves it there, still bound to the upstream exchange and filling, until it is deleted by hand", upstream)
			unknown = fmt.Sprintf("what those queues on %s hold when the link goes is not known offline", upstream)
		}
	}
	if queues {
		*effect += fmt.Sprintf("; each federated queue's namesake on %s keeps what it holds", upstream)
	}
	return unknown
}

// federatedBy names the policies of the after side (else the before
// side) that federate exchanges or queues through upstream name: by its
// name, or through the set "all" or a set that holds it; "" for none.
func (c *vhostCompare) federatedBy(name string) string {
	var ps []string
	for _, s := range []*side{c.a, c.b} {
		for pn, p := range s.v.Policies {
			if p == nil {
				continue
			}
			if slices.Contains(s.policyUpstreams(p), name) || p.Definition["federation-upstream-set"] == "all" {
				ps = append(ps, fmt.Sprintf("%q", pn))
			}
		}
		if len(ps) > 0 {
			break
		}
	}
	if len(ps) == 0 {
		return ""
	}
	slices.Sort(ps)
	return "the exchanges and queues federated through it (policy " + strings.Join(ps, ", ") + ")"
}

// policyUpstreams returns the upstreams policy p of side s federates
// from: the one it names (federation-upstream), or those of the set it
// names (federation-upstream-set), "all" being every upstream of the
// vhost; nil for none.
func (s *side) policyUpstreams(p *topology.Policy) []string {
	if name, ok := p.Definition["federation-upstream"].(string); ok {
		return []string{name}
	}
	var out []string
	switch set, _ := p.Definition["federation-upstream-set"].(string); set {
	case "":
	case "all":
		for u, it := range s.v.Items[kind.FederationUpstream] {
			if it != nil {
				out = append(out, u)
			}
		}
	default:
		if it := s.v.Items.Get(kind.FederationUpstreamSet, set); it != nil {
			for _, m := range kind.UpstreamSetMembers(it.Settings) {
				if u, ok := m["upstream"].(string); ok {
					out = append(out, u)
				}
			}
		}
	}
	return out
}

// membershipLink says what changes for the messages federated from
// upstream name, which connects to the same place (at) on both sides,
// where the exchanges and queues that federate from it change: a set
// that no longer holds it (or now does), a policy that names another
// upstream or set, or that no longer matches an exchange (or now does).
// nil when they are the same. Before, the flows compared the upstream's
// own settings alone: a message federated from it before was not after,
// and they said nothing.
func (c *vhostCompare) membershipLink(name, at string) *Link {
	fb, fa := c.b.federatedFrom(name), c.a.federatedFrom(name)
	lost, gained := minus(fb, fa), minus(fa, fb)
	if len(lost) == 0 && len(gained) == 0 {
		return nil
	}
	to := func(objs []string) string {
		if len(objs) == 0 {
			return at + ", federating no exchange or queue"
		}
		return at + ", to " + strings.Join(objs, ", ")
	}
	l := &Link{Vhost: c.vhost, Kind: "federation_upstream", Name: name, Before: to(fb), After: to(fa)}
	var effects []string
	if len(lost) > 0 {
		effect := fmt.Sprintf("%s no longer %s messages from %s (%s)",
			strings.Join(lost, ", "), plural2("receives", "receive", len(lost)), at, c.b.federationPolicies(lost))
		l.Unknown = upstreamLeft(&effect, lost, settingsOf(c.b.v.Items.Get(kind.FederationUpstream, name)), "the upstream")
		effects = append(effects, effect)
	}
	if len(gained) > 0 {
		effects = append(effects, fmt.Sprintf("%s now %s messages from %s (%s)", strings.Join(gained, ", "), plural2("receives", "receive", len(gained)), at, c.a.federationPolicies(gained)))
	}
	l.Effect = strings.Join(effects, "; ")
	return l
}

// federatedFrom returns the exchanges and queues of side s that federate
// from upstream up (`exchange "x"`, `queue "q"`), sorted: those whose
// policy names it (federation-upstream), a set that holds it
// (federation-upstream-set), or the set "all", which holds every upstream
// of the vhost. Operator policies cannot federate. Worked out for every
// upstream at once, when first asked, and only where a policy federates.
func (s *side) federatedFrom(up string) []string {
	if s.federation == nil {
		s.federation = map[string][]string{}
		upstreams := map[string][]string{} // per policy, the upstreams it federates from
		for n, p := range s.v.Policies {
			if p != nil {
				if us := s.policyUpstreams(p); len(us) > 0 {
					upstreams[n] = us
				}
			}
		}
		if len(upstreams) > 0 {
			for _, x := range slices.Sorted(maps.Keys(s.v.Exchanges)) {
				if s.v.Exchanges[x] != nil {
					for _, u := range upstreams[s.sim.ExchangePolicy(x)] {
						s.federation[u] = append(s.federation[u], fmt.Sprintf("exchange %q", x))
					}
				}
			}
			for _, q := range s.v.QueueNames() {
				p, _ := s.sim.QueuePolicies(q)
				for _, u := range upstreams[p] {
					s.federation[u] = append(s.federation[u], fmt.Sprintf("queue %q", q))
				}
			}
			for _, objs := range s.federation {
				slices.Sort(objs) // quoted names sort apart from names (minus needs them sorted)
			}
		}
	}
	return s.federation[up]
}

// federationPolicies names the policies of side s that federate objs
// (as federatedFrom names them), sorted, each once: "policy \"fed\"",
// "none" where no policy of this side does.
func (s *side) federationPolicies(objs []string) string {
	var ps []string
	for _, o := range objs {
		var p string
		if n, ok := strings.CutPrefix(o, "exchange "); ok {
			n, _ = strconv.Unquote(n)
			p = s.sim.ExchangePolicy(n)
		} else if n, ok := strings.CutPrefix(o, "queue "); ok {
			n, _ = strconv.Unquote(n)
			p, _ = s.sim.QueuePolicies(n)
		}
		if p != "" && !slices.Contains(ps, p) {
			ps = append(ps, p)
		}
	}
	slices.Sort(ps)
	for i, p := range ps {
		ps[i] = strconv.Quote(p)
	}
	return plural2("policy ", "policies ", len(ps)) + strings.Join(ps, ", ")
}
