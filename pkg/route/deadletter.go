package route

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/mqctl/mqctl/pkg/topology"
)

// DeadLetter returns where a message m, sitting in queue (m as it was
// published: its exchange, routing key and headers; or a dead letter as an
// earlier DeadLetter returned it), goes when the queue dead-letters it for
// reason. It follows rabbit_dead_letter for the simulator's version:
//   - the dead-letter exchange is the queue's effective
//     x-dead-letter-exchange (argument or policy); without one the message
//     is discarded (Configured false). "" is the default exchange.
//   - the routing key is the effective x-dead-letter-routing-key when set,
//     else the message's own routing keys (CC and BCC included).
//   - a dead-letter exchange that does not exist drops the message.
//   - the dead letter keeps its headers; x-death gains (or counts up) the
//     entry for this queue and reason, and the first death also sets
//     x-first-death-reason/-queue/-exchange; from 3.13 every death sets
//     x-last-death-reason/-queue/-exchange too (see deathHeaders and
//     recordDeath for how the versions order x-death and treat an x-death
//     header a client published).
//   - unless reason is rejected, a queue the dead letter would reach is
//     skipped when the message was dead-lettered from that queue before and
//     no x-death entry ahead of that queue's (this death's included) is a
//     rejection: RabbitMQ's cycle detection (see isDeathCycle). Those
//     queues are listed in Cycles.
func (s *Simulator) DeadLetter(queue string, reason Reason, m Message) DeadLetterRoute {
	r := DeadLetterRoute{Queue: queue, Reason: reason}
	dlx, configured, problem := s.deadLetterExchange(queue)
	if !configured {
		if problem != "" {
			r.Result = Result{Problems: []string{problem}}
		}
		return r
	}
	r.Configured = true
	r.Exchange = dlx
	keys, err := m.routingKeys()
	if err != nil {
		r.Result = Result{Problems: []string{err.Error()}}
		return r
	}
	rk, hasRK := s.queues[queue].args["x-dead-letter-routing-key"].(string)
	dl := s.deadLetterMessage(m, keys, queue, reason, dlx, rk, hasRK)
	if hasRK {
		r.RoutingKey = rk
		dl.RoutingKey = rk
	} else {
		r.RoutingKey = m.RoutingKey
		r.KeyFromMessage = true
		dl.RoutingKey = m.RoutingKey
	}
	if dlx != "" && s.exchanges[dlx] == nil {
		r.ExchangeMissing, r.Held = true, s.AtLeastOnce(queue)
		fate := "RabbitMQ drops its dead letters"
		if r.Held {
			fate = "RabbitMQ keeps its dead letters in the queue (at-least-once dead-lettering) and tries again until the exchange exists"
		}
		r.Result = Result{Message: dl, Problems: []string{fmt.Sprintf("queue %q: dead-letter exchange %q is not declared: %s; declare the exchange or fix x-dead-letter-exchange", queue, dlx, fate)}}
		return r
	}
	r.Result = s.route(dl, false)
	if reason != Rejected {
		s.dropCycles(&r, dl)
	}
	s.dropAtStreams(&r)
	res := r.Result
	r.Held = s.AtLeastOnce(queue) && len(r.Cycles) == 0 && len(res.Deliveries) == 0 && len(res.Unsimulated) == 0 && len(res.OneOf) == 0
	return r
}

// AtLeastOnce reports whether queue dead-letters at least once: a quorum
// queue whose effective dead-letter-strategy is at-least-once, with a
// dead-letter exchange and overflow reject-publish (without which RabbitMQ
// falls back to at most once: rabbit_quorum_queue:dlh/5 on 3.10.8, 4.0.5
// and 4.3.5). It keeps each dead letter until the dead-letter exchange has
// routed it and every destination has taken it; no passive declare counts
// those (the statistics' messages and messages_dlx do).
func (s *Simulator) AtLeastOnce(queue string) bool {
	q := s.v.Queues[queue]
	if q == nil || queueType(q) != topology.QueueQuorum {
		return false
	}
	a := s.queues[queue].args
	_, dlx := a["x-dead-letter-exchange"]
	return dlx && a["x-dead-letter-strategy"] == "at-least-once" && a["x-overflow"] == "reject-publish"
}

// deadLetterExchange is queue's effective x-dead-letter-exchange
// (configured), or why the queue's dead letters are discarded: a problem,
// or "" for a queue that simply has no dead-letter exchange.
func (s *Simulator) deadLetterExchange(queue string) (dlx string, configured bool, problem string) {
	q, ok := s.v.Queues[queue]
	if !ok || q == nil {
		return "", false, fmt.Sprintf("queue %q is not declared", queue)
	}
	if queueType(q) == topology.QueueStream {
		return "", false, fmt.Sprintf("queue %q is a stream: streams do not dead-letter", queue)
	}
	v, has := s.queues[queue].args["x-dead-letter-exchange"]
	if !has {
		return "", false, routingKeyWithoutExchange(q)
	}
	dlx, isString := v.(string)
	if !isString {
		return "", false, fmt.Sprintf("queue %q: x-dead-letter-exchange is %v, not an exchange name: RabbitMQ refuses it; set it to a string", queue, v)
	}
	return dlx, true, ""
}

// deadLetterMessage is m dead-lettered from queue for reason to exchange
// dlx, before its routing key is set: keys are m's routing keys, rk the
// queue's x-dead-letter-routing-key when hasRK. Its headers are the
// simulator's version's (deathHeaders, or recordDeath before 3.13).
func (s *Simulator) deadLetterMessage(m Message, keys []string, queue string, reason Reason, dlx, rk string, hasRK bool) Message {
	// The message as the queue holds it: BCC is gone from its headers, its
	// keys are not.
	held := m
	if _, ok := m.Headers["BCC"]; ok {
		held.Headers = make(map[string]any, len(m.Headers))
		for k, v := range m.Headers {
			if k != "BCC" {
				held.Headers[k] = v
			}
		}
	}
	origExp, hasExp := s.originalExpiration(m)
	if s.ver.RegroupsXDeath() {
		dl := Message{Exchange: dlx, Headers: deathHeaders(held, keys, queue, reason, hasRK && !s.ver.KeepsCCWithDeadLetterRoutingKey(), origExp, hasExp)}
		if !hasRK && len(keys) > 1 {
			dl.keys = keys
		}
		dl.Class, dl.Many = m.Class && !hasRK, m.Many
		dl.Body, dl.BodyKnown = m.Body, m.BodyKnown
		return dl
	}
	dl := s.recordDeath(m, held, keys, queue, reason, origExp, hasExp)
	dl.Body, dl.BodyKnown = m.Body, m.BodyKnown
	dl.Exchange = dlx
	dl.keys = keys
	if hasRK {
		dl.keys = []string{rk}
	}
	dl.Class, dl.Many = m.Class && !hasRK, m.Many
	return dl
}

// dropCycles takes from r's deliveries of the dead letter dl the queues
// RabbitMQ's cycle detection skips (isDeathCycle), listing them in
// r.Cycles with a problem each. A rejection is never a cycle: the caller
// does not ask.
func (s *Simulator) dropCycles(r *DeadLetterRoute, dl Message) {
	if len(r.Result.Deliveries) == 0 {
		return
	}
	deaths, _ := dl.Headers["x-death"].([]any)
	// Only a queue with an x-death entry can be a cycle: look those up
	// among the deliveries (sorted by queue) rather than every delivery
	// among them, and keep the deliveries (perhaps shared) when none is.
	var cycles map[string]bool
	for _, d := range deaths {
		t, _ := d.(map[string]any)
		q, _ := t["queue"].(string)
		if _, reached := slices.BinarySearchFunc(r.Result.Deliveries, q, func(d Delivery, q string) int { return strings.Compare(d.Queue, q) }); reached && s.isDeathCycle(q, deaths) {
			if cycles == nil {
				cycles = map[string]bool{}
			}
			cycles[q] = true
		}
	}
	if len(cycles) == 0 {
		return
	}
	kept := r.Result.Deliveries[:0:0]
	for _, d := range r.Result.Deliveries {
		if cycles[d.Queue] {
			r.Cycles = append(r.Cycles, d.Queue)
			r.Result.Problems = append(r.Result.Problems, fmt.Sprintf("queue %q: its %s dead letters would reach queue %q, which the message was dead-lettered from before with no rejection since: RabbitMQ drops them there (dead-letter cycle)", r.Queue, r.Reason, d.Queue))
			continue
		}
		kept = append(kept, d)
	}
	r.Result.Deliveries, r.Result.queues = kept, nil
}

// isDeathCycle is RabbitMQ's cycle detection (rabbit_dead_letter:is_cycle
// up to 3.12, mc:is_death_cycle from 3.13): deaths is the dead letter's
// x-death list, this death included. The message cycles into queue when
// queue has an entry and neither it nor any entry ahead of it has reason
// rejected. An entry that is not a table was put there by a client, so the
// cycle is not "fully automatic". In 3.13.0-3.13.2 "ahead" is in the order
// of the entries' (queue, reason) keys (is_cycle_v1 over maps:keys/1).
func (s *Simulator) isDeathCycle(queue string, deaths []any) bool {
	if s.ver.ChecksDeathCyclesInKeyOrder() {
		return isDeathCycleInKeyOrder(queue, deaths)
	}
	return isDeathCycle(queue, deaths)
}

// isDeathCycle is rabbit_dead_letter:is_cycle (and mc.erl is_cycle_v2):
// deaths in the order they are walked, the message cycles into queue when
// queue has an entry and neither it nor any entry ahead of it has reason
// rejected.
func isDeathCycle(queue string, deaths []any) bool {
	for i, d := range deaths {
		t, ok := d.(map[string]any)
		if !ok || t["queue"] != queue {
			continue
		}
		for _, e := range deaths[:i+1] {
			et, ok := e.(map[string]any)
			if !ok || et["reason"] == string(Rejected) {
				return false
			}
		}
		return true
	}
	return false
}

// isDeathCycleInKeyOrder is mc.erl is_cycle_v1 (3.13.0-3.13.2): the death
// records walked in the order of their keys {Queue, Reason}, queue names
// compared as binaries (byte by byte) and reasons as atoms (by name); the
// first rejection ends the walk (no cycle), the first entry of queue with
// another reason is a cycle.
func isDeathCycleInKeyOrder(queue string, deaths []any) bool {
	type key struct{ queue, reason string }
	var keys []key
	for _, d := range deaths {
		if t, ok := d.(map[string]any); ok {
			q, _ := t["queue"].(string)
			r, _ := t["reason"].(string)
			keys = append(keys, key{q, r})
		}
	}
	sort.Slice(keys, func(i, j int) bool {
		if keys[i].queue != keys[j].queue {
			return keys[i].queue < keys[j].queue
		}
		return keys[i].reason < keys[j].reason
	})
	for _, k := range keys {
		if k.reason == string(Rejected) {
			return false
		}
		if k.queue == queue {
			return true
		}
	}
	return false
}

// deathHeaders returns m's headers as they are on the dead letter up to
// RabbitMQ 3.12 (rabbit_dead_letter:make_msg / update_x_death_header at
// v3.10.8): the x-death entry for (queue, reason) is added with count 1,
// or moved to the front with its count raised; the first death sets the
// x-first-death-* headers. Before that, a list of two or more entries is
// regrouped by (queue, reason), which reverses it (see groupDeaths). The
// entry's routing-keys are the message's first key and its CC keys. A
// dead-letter routing key also removes the CC header (dropCC). m is the
// message as the queue holds it (no BCC header); keys are all its routing
// keys. An x-death header the client published counts as history: it is
// updated, and no x-first-death-* headers are set. A new entry records the
// message's expiration as original-expiration (origExp, when hasExp); the
// dead letter has none (a Message without Expiration).
func deathHeaders(m Message, keys []string, queue string, reason Reason, dropCC bool, origExp string, hasExp bool) map[string]any {
	h := make(map[string]any, len(m.Headers)+4)
	for k, v := range m.Headers {
		h[k] = v
	}
	if dropCC {
		delete(h, "CC")
	}
	old, present := h["x-death"]
	if !present {
		h["x-first-death-reason"] = string(reason)
		h["x-first-death-queue"] = queue
		h["x-first-death-exchange"] = m.Exchange
	}
	deaths, _ := old.([]any) // anything but an array is reset
	deaths = groupDeaths(deaths)
	entry, rest := takeDeath(deaths, queue, reason)
	if entry == nil {
		routingKeys := []any{m.RoutingKey}
		if len(keys) > 0 {
			routingKeys[0] = keys[0]
		}
		cc, _ := headerRoutes(m.Headers, "CC")
		for _, k := range cc {
			routingKeys = append(routingKeys, k)
		}
		entry = newDeath(queue, reason, m.Exchange, routingKeys)
		if hasExp {
			entry["original-expiration"] = origExp
		}
	}
	h["x-death"] = append([]any{entry}, rest...)
	return h
}

func newDeath(queue string, reason Reason, exchange string, routingKeys []any) map[string]any {
	return map[string]any{
		"count":        int64(1),
		"reason":       string(reason),
		"queue":        queue,
		"exchange":     exchange,
		"routing-keys": routingKeys,
	}
}

// recordDeath returns the dead letter of m from queue for reason as
// RabbitMQ 3.13+ makes it (mc:record_death, rabbit_dead_letter:publish at
// v4.0.5), its Exchange, RoutingKey and keys left to the caller. held is m
// as the queue holds it (no BCC header), keys all its routing keys.
//   - The broker keeps death records, most recent first: a repeated
//     (queue, reason) counts up and moves to the front, keeping its
//     exchange and routing keys; a new one is put first. x-death is
//     rendered from them.
//   - A new record's routing-keys are the message's keys less its BCC keys
//     (one occurrence each), its exchange the one the message was in.
//   - Without records yet, the death sets x-first-death-*, overriding
//     headers of those names the client sent; every death sets
//     x-last-death-*.
//   - An x-death header the client published is ignored (3.13.0-3.13.2,
//     4.0+: rmqversion IgnoresClientXDeath) or taken as the first records
//     (3.13.3+). What 3.13.3 takes of a malformed header is not simulated
//     here: its tables with a queue and a reason, in their order.
//   - The CC header stays, also with a dead-letter routing key.
//   - A new record keeps the message's expiration (origExp, when hasExp),
//     rendered as original-expiration; the dead letter has none.
func (s *Simulator) recordDeath(m, held Message, keys []string, queue string, reason Reason, origExp string, hasExp bool) Message {
	st := m.mc
	var records []any
	recorded := false
	if st != nil {
		records, _ = m.Headers["x-death"].([]any)
		recorded = true
	} else {
		st = &mcState{}
		st.own, st.hasOwn = m.Headers["x-death"]
		st.bcc, _ = headerRoutes(m.Headers, "BCC")
		if arr, ok := st.own.([]any); ok && !s.ver.IgnoresClientXDeath() {
			for _, d := range arr {
				if t, ok := d.(map[string]any); ok {
					if _, ok := t["queue"].(string); !ok {
						continue
					}
					if _, ok := t["reason"].(string); !ok {
						continue
					}
					records = append(records, t)
				}
			}
			recorded = len(records) > 0
		}
	}
	entry, rest := takeDeath(records, queue, reason)
	if entry == nil {
		rks := listMinus(keys, st.bcc)
		routingKeys := make([]any, len(rks))
		for i, k := range rks {
			routingKeys[i] = k
		}
		entry = newDeath(queue, reason, m.Exchange, routingKeys)
		if hasExp {
			entry["original-expiration"] = origExp
		}
	}
	h := make(map[string]any, len(held.Headers)+7)
	for k, v := range held.Headers {
		h[k] = v
	}
	h["x-death"] = append([]any{entry}, rest...)
	if !recorded {
		h["x-first-death-reason"] = string(reason)
		h["x-first-death-queue"] = queue
		h["x-first-death-exchange"] = m.Exchange
	}
	if s.ver.SetsLastDeathHeaders() {
		h["x-last-death-reason"] = string(reason)
		h["x-last-death-queue"] = queue
		h["x-last-death-exchange"] = m.Exchange
	}
	return Message{Headers: h, mc: &mcState{own: st.own, hasOwn: st.hasOwn, bcc: st.bcc}}
}

// listMinus is Erlang's a -- b: a with the first occurrence of each
// element of b removed.
func listMinus(a, b []string) []string {
	out := append([]string(nil), a...)
	for _, x := range b {
		for i, y := range out {
			if x == y {
				out = append(out[:i], out[i+1:]...)
				break
			}
		}
	}
	return out
}

// groupDeaths is rabbit_dead_letter:group_by_queue_and_reason (RabbitMQ
// 3.10-3.12), which update_x_death_header applies to an x-death list of
// two or more entries before adding the new death: it keeps the first
// entry of each (queue, reason), gives an entry without a count the
// number of entries it stands for, and, folding into an accumulator,
// returns them in reverse order. So every death after the second reverses
// the order of the earlier ones, and with it what cycle detection sees
// first: the broker's x-death after deaths in q1, q2, q3 is [q3, q1, q2],
// not [q3, q2, q1].
func groupDeaths(deaths []any) []any {
	if len(deaths) < 2 {
		return deaths
	}
	type key struct{ queue, reason string }
	keyOf := func(t map[string]any) key {
		return key{fmt.Sprintf("%#v", t["queue"]), fmt.Sprintf("%#v", t["reason"])}
	}
	counts := map[key]int64{}
	for _, d := range deaths {
		if t, ok := d.(map[string]any); ok {
			counts[keyOf(t)]++
		}
	}
	seen := map[key]bool{}
	out := make([]any, 0, len(deaths))
	for _, d := range deaths {
		t, ok := d.(map[string]any)
		if !ok {
			out = append(out, d)
			continue
		}
		k := keyOf(t)
		if seen[k] {
			continue
		}
		seen[k] = true
		if _, has := t["count"]; !has {
			c := make(map[string]any, len(t)+1)
			for f, v := range t {
				c[f] = v
			}
			c["count"] = counts[k]
			t = c
		}
		out = append(out, t)
	}
	for i, j := 0, len(out)-1; i < j; i, j = i+1, j-1 {
		out[i], out[j] = out[j], out[i]
	}
	return out
}

// routingKeyWithoutExchange explains a queue whose own arguments set a
// dead-letter routing key but no dead-letter exchange: RabbitMQ 3.10
// refuses to declare it (checked against 3.10.8, classic and quorum).
func routingKeyWithoutExchange(q *topology.Queue) string {
	if q.Arguments.Has("x-dead-letter-routing-key") && !q.Arguments.Has("x-dead-letter-exchange") {
		return fmt.Sprintf("queue %q: x-dead-letter-routing-key is set without x-dead-letter-exchange: RabbitMQ refuses to declare the queue (routing_key_but_no_dlx_defined); set x-dead-letter-exchange too (\"\" is the default exchange), or set the routing key in a policy", q.Name)
	}
	return ""
}

// takeDeath takes the first x-death entry of (queue, reason) out of deaths,
// as a copy with its count one higher, and returns the other entries in
// their order (entry is nil when there was none: the death is new).
func takeDeath(deaths []any, queue string, reason Reason) (entry map[string]any, rest []any) {
	rest = make([]any, 0, len(deaths)+1)
	for _, d := range deaths {
		t, _ := d.(map[string]any)
		if entry == nil && t["queue"] == queue && t["reason"] == string(reason) {
			entry = make(map[string]any, len(t))
			for k, v := range t {
				entry[k] = v
			}
			n, _ := topology.Args(t).Int("count")
			entry["count"] = n + 1
			continue
		}
		rest = append(rest, d)
	}
	return entry, rest
}

// dropAtStreams takes out of r's deliveries the streams, where the broker
// drops dead letters (rmqversion DeadLettersReachStreams: before 3.12),
// with a problem that says so.
func (s *Simulator) dropAtStreams(r *DeadLetterRoute) {
	if s.ver.DeadLettersReachStreams() {
		return
	}
	kept := r.Result.Deliveries[:0:0]
	for _, d := range r.Result.Deliveries {
		if q := s.v.Queues[d.Queue]; q != nil && queueType(q) == topology.QueueStream {
			r.Result.Problems = append(r.Result.Problems, fmt.Sprintf("queue %q is a stream: RabbitMQ %s drops the dead letters routed to a stream (from 3.12 it writes them); use a classic or quorum queue as the DLQ, or upgrade the broker", d.Queue, s.ver))
			continue
		}
		kept = append(kept, d)
	}
	r.Result.Deliveries = kept
}

// DeadLetterFate is where a queue's dead letters of one reason go: to a
// queue (or kept in the queue until one takes them: at-least-once
// dead-lettering), or dropped.
type DeadLetterFate struct {
	// Dropped: RabbitMQ drops them, Why says why.
	Dropped bool
	Why     string
	// Configured: the queue has a dead-letter exchange, Exchange.
	Configured bool
	Exchange   string
	// Queues are the queues they reach when that does not depend on each
	// message's routing key (a dead-letter routing key, or a dead-letter
	// exchange that routes every message alike); nil otherwise.
	Queues []string
}

// DeadLetterFate is where queue q's dead letters for reason r go. Where
// their routing key is the message's own (no dead-letter routing key),
// the messages' keys are not known: they are dropped only when no key
// reaches a queue (the exchange has no binding and no alternate exchange,
// or for the default exchange, there is no queue).
func (s *Simulator) DeadLetterFate(q string, r Reason) DeadLetterFate {
	d := s.DeadLetter(q, r, Message{RoutingKey: q})
	f := DeadLetterFate{Configured: d.Configured, Exchange: d.Exchange}
	res := d.Result
	if d.Configured && (!d.KeyFromMessage || s.RoutesAlike(d.Exchange)) {
		f.Queues = res.Queues()
	}
	switch {
	case d.Held:
	case !d.Configured:
		f.Dropped, f.Why = true, "no dead-letter exchange"
	case d.ExchangeMissing:
		f.Dropped, f.Why = true, fmt.Sprintf("dead-letter exchange %q is not declared", d.Exchange)
	case len(res.Deliveries) > 0 || len(res.Unsimulated) > 0 || len(res.OneOf) > 0:
	case d.KeyFromMessage && s.routesSomething(d.Exchange):
	case len(d.Cycles) > 0:
		f.Dropped, f.Why = true, fmt.Sprintf("dead-letter exchange %q routes them back to queue %q, where they died before, and RabbitMQ's cycle detection drops them", d.Exchange, d.Cycles[0])
	case d.KeyFromMessage:
		f.Dropped, f.Why = true, fmt.Sprintf("dead-letter exchange %q routes them to no queue", d.Exchange)
	default:
		f.Dropped, f.Why = true, fmt.Sprintf("dead-letter exchange %q routes them, with key %q, to no queue", d.Exchange, d.RoutingKey)
	}
	return f
}

// routesSomething reports whether exchange x can route some message to a
// queue: it has a binding or an alternate exchange, or it is the default
// exchange and the vhost has a queue.
func (s *Simulator) routesSomething(x string) bool {
	if x == "" {
		return len(s.v.Queues) > 0
	}
	if e := s.v.Exchanges[x]; e != nil && e.Arguments.Has("alternate-exchange") {
		return true
	}
	for _, b := range s.v.Bindings {
		if b.Source == x {
			return true
		}
	}
	return false
}
