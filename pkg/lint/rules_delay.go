package lint

import (
	"fmt"
	"sort"
	"strings"

	"github.com/mqctl/mqctl/pkg/loader"
	"github.com/mqctl/mqctl/pkg/route"
	"github.com/mqctl/mqctl/pkg/topology"
)

const delayFix = `Set x-dead-letter-exchange to "" (the default exchange) and x-dead-letter-routing-key to the name of the queue the retries belong to, ` +
	`with one delay queue per origin queue — retry.delays on the origin queue declares exactly that`

// delayAdvice is delayFix for delay queue q, with the sugar that declares
// it for the queues its dead-letter exchange feeds, when those are few:
// `for example retry: {delays: [10s, 1m]} on queue orders.shipping`.
func (p *Pass) delayAdvice(q string) string {
	d := p.dl[q]
	if d == nil || d.Exchange == "" {
		return delayFix
	}
	origins := p.memoWorkQueues("work", d.Exchange, p.candidates, p.reachedByWork)
	if len(origins) == 0 || len(origins) > 3 {
		return delayFix
	}
	names := p.tierDelays(d.Exchange)
	if len(names) == 0 {
		return delayFix
	}
	where, fed := "queue "+origins[0], "the queue"
	if len(origins) > 1 {
		where, fed = "each of queues "+joinOr(origins), "the queues"
	}
	return fmt.Sprintf("%s: here, retry: {delays: [%s]} on %s (%s exchange %q feeds) declares %s.retry.%s and the other tiers, each returning expired messages to its own queue alone",
		delayFix, strings.Join(names, ", "), where, fed, d.Exchange, origins[0], names[0])
}

// tierDelays lists, shortest first, the TTLs of the delay candidates that
// dead-letter to exchange x, as retry.delays writes them (memoised).
func (p *Pass) tierDelays(x string) []string {
	key := "delays\x00" + x
	if r, ok := p.exchangeMemo[key]; ok {
		return r
	}
	seen := map[int64]bool{}
	var delays []int64
	for _, c := range p.dlxOf[x] {
		if ttl, ok := p.qargs[c].Int(argTTL); ok && ttl > 0 && p.candidates[c] && !seen[ttl] {
			seen[ttl] = true
			delays = append(delays, ttl)
		}
	}
	sort.Slice(delays, func(i, j int) bool { return delays[i] < delays[j] })
	names := make([]string, len(delays))
	for i, ms := range delays {
		names[i] = loader.FormatDuration(ms)
	}
	p.exchangeMemo[key] = names
	return names
}

// MQ201: a delay queue whose expired messages do not return to exactly one
// queue.
func runDelayMisrouted(p *Pass) []Finding {
	var out []Finding
	for _, name := range p.queueNames {
		d := p.dl[name]
		if d == nil || d.Missing || !p.isDelay(name) {
			continue
		}
		if d.HeadersDLX && len(p.from[d.Exchange]) > 0 {
			continue
		}
		msg := p.delayProblem(name, d, p.delayAdvice(name))
		if msg != "" {
			out = append(out, p.queueFinding(p.Vhost.Queues[name], "%s", msg))
		}
	}
	return out
}

// delayProblem explains how delay queue q's expired messages go astray,
// or returns "" when every one of them returns to exactly one queue.
func (p *Pass) delayProblem(q string, d *dlInfo, fix string) string {
	if d.HasDLRK {
		return p.fixedKeyProblem(q, d, fix)
	}
	return p.ownKeyProblem(q, d, fix)
}

// fixedKeyProblem is delayProblem for a delay queue with an
// x-dead-letter-routing-key: one route for every message.
func (p *Pass) fixedKeyProblem(q string, d *dlInfo, fix string) string {
	if len(d.Routes) == 0 {
		return ""
	}
	r := d.Routes[0].Route
	qs := r.Result.Queues()
	if openRoute(r) {
		return "" // through an exchange whose pick is unknown: where it goes is unknown
	}
	switch {
	case len(qs) == 0 && d.Exchange == "":
		return fmt.Sprintf("delay queue %q sends expired messages to the default exchange with routing key %q, and no queue %q is declared%s: every retry is dropped. %s",
			q, d.DLRK, d.DLRK, p.queueHint(d.DLRK), fix)
	case len(qs) == 0:
		return fmt.Sprintf("delay queue %q sends expired messages to %s with routing key %q, which no binding matches: every retry is dropped. "+
			"Bind the origin queue to %s for %q, or %s",
			q, exchangeLabel(d.Exchange), d.DLRK, exchangeLabel(d.Exchange), d.DLRK, lowerFirst(fix))
	case len(qs) == 1 && qs[0] == q:
		return fmt.Sprintf("delay queue %q sends expired messages back into itself (%s, routing key %q): RabbitMQ drops a message that dead-letters around a cycle without a rejection, so every retry is lost. %s",
			q, exchangeLabel(d.Exchange), d.DLRK, fix)
	case len(qs) > 1:
		return fmt.Sprintf("delay queue %q sends expired messages to %s with routing key %q, which delivers them to %d queues (%s): each retry is processed again by every one of them, not only by the queue that scheduled it. %s",
			q, exchangeLabel(d.Exchange), d.DLRK, len(qs), queuesList(qs), fix)
	}
	return ""
}

// keyOutcomes are where a delay queue's expired messages go by the keys
// they were published with, key by key.
type keyOutcomes struct {
	nowhere, self, multi, single []keyRoute
	hashed                       *route.Choice // an x-modulus-hash exchange picking by the message's keys
	consistent                   bool          // every key of single reaches the same queue
}

// outcomes sorts delay queue q's routes by where they end.
func outcomes(q string, d *dlInfo) keyOutcomes {
	o := keyOutcomes{consistent: true}
	dest := ""
	for _, r := range d.Routes {
		qs := r.Route.Result.Queues()
		if openRoute(r.Route) {
			if c := keyedChoice(r.Route); c != nil && o.hashed == nil {
				o.hashed = c
			}
			continue // through an exchange whose pick is unknown: where it goes is unknown
		}
		switch {
		case len(qs) == 0:
			o.nowhere = append(o.nowhere, r)
		case len(qs) == 1 && qs[0] == q:
			o.self = append(o.self, r)
		case len(qs) > 1:
			o.multi = append(o.multi, r)
		default:
			o.single = append(o.single, r)
			if dest == "" {
				dest = qs[0]
			} else if dest != qs[0] {
				o.consistent = false
			}
		}
	}
	return o
}

// ownKeyProblem is delayProblem for a delay queue without an
// x-dead-letter-routing-key.
func (p *Pass) ownKeyProblem(q string, d *dlInfo, fix string) string {
	// No dead-letter routing key: the message keeps its own key, so where it
	// lands depends on that key. Fine only when every key ends in one and
	// the same queue.
	o := outcomes(q, d)
	if len(o.nowhere) == 0 && len(o.self) == 0 && len(o.multi) == 0 && o.consistent && o.hashed == nil {
		return ""
	}
	var cases []string
	if o.hashed != nil {
		cases = append(cases, fmt.Sprintf("through x-modulus-hash exchange %q it reaches one of %s, whichever the message's routing keys (its CC and BCC keys included) pick, not necessarily the queue that scheduled the retry",
			o.hashed.Exchange, targetsList(o.hashed.Among)))
	}
	if r, ok := pickExample(o.nowhere); ok {
		cases = append(cases, fmt.Sprintf("with key %q it matches no binding and is dropped", r.Sample))
	}
	if r, ok := pickExample(o.self); ok {
		cases = append(cases, fmt.Sprintf("with key %q it comes back into %q itself, where RabbitMQ drops it as a dead-letter cycle", r.Sample, q))
	}
	if r, ok := pickExample(o.multi); ok {
		qs := r.Route.Result.Queues()
		cases = append(cases, fmt.Sprintf("with key %q it reaches %d queues (%s)", r.Sample, len(qs), queuesList(qs)))
	}
	if r, ok := pickExample(o.single); ok {
		cases = append(cases, fmt.Sprintf("with key %q it reaches %s — every queue bound for that key, not only the queue that scheduled the retry", r.Sample, r.Route.Result.Queues()[0]))
		if !o.consistent {
			for _, s := range o.single[1:] {
				if s.Route.Result.Queues()[0] != r.Route.Result.Queues()[0] {
					cases = append(cases, fmt.Sprintf("with key %q it reaches %s", s.Sample, s.Route.Result.Queues()[0]))
					break
				}
			}
		}
	}
	verb := "sends expired messages to"
	if len(o.single) > 0 || len(o.multi) > 0 || o.hashed != nil {
		verb = "sends expired messages back to"
	}
	return fmt.Sprintf("delay queue %q %s %s with the routing key they were published with (%s, and it has no x-dead-letter-routing-key), so where a retry lands depends on that key: %s. %s",
		q, verb, exchangeLabel(d.Exchange), inboundPhrase(p, q), strings.Join(cases, "; "), fix)
}

// keyedChoice returns the x-modulus-hash choice of r that picks among more
// than one destination by the dead letter's own routing keys, or nil.
func keyedChoice(r route.DeadLetterRoute) *route.Choice {
	if !r.KeyFromMessage {
		return nil
	}
	for i := range r.Result.OneOf {
		if len(r.Result.OneOf[i].Among) > 1 {
			return &r.Result.OneOf[i]
		}
	}
	return nil
}

// targetsList renders a choice's destinations: work.a and work.b, or
// exchange x (exchanges named as such).
func targetsList(ts []route.Target) string {
	names := make([]string, len(ts))
	for i, t := range ts {
		names[i] = t.Name
		if t.Type == topology.DestExchange {
			names[i] = "exchange " + exchangeLabel(t.Name)
		}
	}
	return queuesList(names)
}

// pickExample prefers a route whose sample key is not empty.
func pickExample(rs []keyRoute) (keyRoute, bool) {
	for _, r := range rs {
		if r.Sample != "" {
			return r, true
		}
	}
	if len(rs) > 0 {
		return rs[0], true
	}
	return keyRoute{}, false
}

// inboundPhrase says how messages get into queue q.
func inboundPhrase(p *Pass, q string) string {
	bs := p.into[q]
	if len(bs) == 0 {
		return fmt.Sprintf("through the default exchange, with key %q", q)
	}
	b := bs[0]
	s := fmt.Sprintf("it is bound to %s with %q", exchangeLabel(b.Source), b.RoutingKey)
	if len(bs) > 1 {
		s += fmt.Sprintf(" and %d more bindings", len(bs)-1)
	}
	return s
}

func lowerFirst(s string) string {
	if s == "" {
		return s
	}
	return strings.ToLower(s[:1]) + s[1:]
}

// MQ202: a delay queue that relies on per-message expiration.
func runDelayNoTTL(p *Pass) []Finding {
	var out []Finding
	for _, name := range p.queueNames {
		if !p.perMsgDelay[name] {
			continue
		}
		back := ""
		if d := p.dl[name]; d != nil {
			var others []string
			for _, t := range d.Targets {
				if t != name {
					others = append(others, t)
				}
			}
			if len(others) > 0 {
				back = " back to " + queuesList(others)
			}
		}
		out = append(out, p.queueFinding(p.Vhost.Queues[name],
			"delay queue %q sends messages%s when they expire but has no queue-level TTL, so it relies on per-message expiration: RabbitMQ only expires the message at the head of the queue, "+
				"so one message with a long expiration holds back every shorter one behind it. "+
				"Give the queue an x-message-ttl (limits.message_ttl) and use one delay queue per delay — retry.delays does this",
			name, back))
	}
	return out
}
