package cli

import (
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/mqctl/mqctl/pkg/loader"
	"github.com/mqctl/mqctl/pkg/route"
	"github.com/mqctl/mqctl/pkg/topology"
)

// The route command's view: a trace as JSON (pkg/routejson's document,
// route.WriteJSON) or as text for people (writeRouteText), and the values
// the file took from the environment hidden in either.

// writeRoute writes trace tr as output asks: JSON, or the text that text
// writes.
func writeRoute(w io.Writer, output string, tr route.Trace, text func() error) error {
	if output == "json" {
		return route.WriteJSON(w, tr)
	}
	return text()
}

// writeRouteHidden writes out, the route view's output, to w with the
// values the file took from the environment (a binding's key or header,
// ${VAR}, may be a secret) shown as the file wrote them: in their quotes
// in JSON.
func writeRouteHidden(w io.Writer, out, output string, env topology.EnvValues) error {
	hide := env.Written
	if output == "json" {
		hide = env.Quoted
	}
	_, err := io.WriteString(w, hide(out))
	return err
}

// writeRouteText renders a trace for people: the publish, one line per
// queue reached with its path, then each queue's dead-letter hops, indented
// hop by hop, then the problems found on the way.
//
// unsim holds, for each plugin exchange the publish reached that the
// simulation cannot follow, the path that led there (see
// unsimulatedPaths): it is shown like a delivery, ending in "unknown".
// notes say how the queues reached hold the message (see routeNotes).
func writeRouteText(w io.Writer, tr route.Trace, simProblems []string, unsim map[string][]route.Step, notes []string) error {
	p := &routePrinter{w: w}
	m := tr.Publish.Message
	target := fmt.Sprintf("exchange %q", m.Exchange)
	if m.Exchange == "" {
		target = `exchange "" (the default exchange)`
	}
	withHeaders := ""
	if len(m.Headers) > 0 {
		withHeaders = " and headers " + route.FormatTable(m.Headers)
	}
	withExpiration := ""
	if m.Expiration != "" {
		withExpiration = fmt.Sprintf(" and expiration %s ms (its dead letters lose it: x-death records it as original-expiration)", m.Expiration)
	}
	p.line(0, "publish to %s with routing key %q%s%s:", target, m.RoutingKey, withHeaders, withExpiration)
	var problems routeProblemList
	switch {
	case len(tr.Publish.Deliveries) == 0 && len(tr.Publish.Unsimulated) == 0 && len(tr.Publish.DirectReply) == 0:
		reason := "no queue is bound for it"
		if len(tr.Publish.Problems) > 0 {
			reason = tr.Publish.Problems[0]
			problems.add(tr.Publish.Problems[1:]...)
		}
		p.line(1, "unroutable: %s", reason)
	default:
		problems.add(tr.Publish.Problems...)
		for i, d := range tr.Publish.Deliveries {
			p.line(1, "%s%s", routePublishPath(d.Path), routeArrivalSuffix(tr.Hops[i]))
		}
		for _, x := range tr.Publish.Unsimulated {
			if routeChoiceOf(tr.Publish, x) != nil {
				continue // said below, with the destinations it picks from
			}
			path := routeExchangeLabel(x)
			if steps := unsim[x]; len(steps) > 0 {
				path = routePublishPath(steps)
			}
			p.line(1, "%s -> unknown: plugin exchange %q is not simulated", path, x)
		}
		for _, k := range tr.Publish.DirectReply {
			p.line(1, "direct reply-to %q: to the consumer of the channel that sent the request (its reply_to amq.rabbitmq.reply-to), while that channel is open; no queue holds it, and once the channel is gone the reply is dropped", k)
		}
		for _, c := range tr.Publish.OneOf {
			path := routeExchangeLabel(c.Exchange)
			if len(c.Path) > 0 {
				path = routePublishPath(c.Path)
			}
			p.line(1, "%s", routeChoiceLine(path, c))
		}
	}
	if routeHasDeadLetters(tr.Hops) {
		p.line(0, "dead letters:")
		for _, h := range tr.Hops {
			writeRouteHopBlock(p, h, 1, &problems)
		}
	}
	if len(notes) > 0 {
		p.line(0, "notes:")
		for _, n := range notes {
			p.line(1, "- %s", n)
		}
	}
	problems.add(simProblems...)
	if len(problems.list) > 0 {
		p.line(0, "problems:")
		for _, pr := range problems.list {
			p.line(1, "- %s", pr)
		}
	}
	return p.err
}

// routeNotes says, once per queue the trace reaches, in the order reached,
// what happens to a message the queue holds beside dead-lettering: what
// counts towards a quorum queue's delivery limit and the headers that count
// it, how long a returned message waits under delayed retry (4.3).
func routeNotes(sim *route.Simulator, tr route.Trace) []string {
	var notes []string
	limits := "" // what counts towards a delivery limit, said once
	seen := map[string]bool{}
	var visit func(hops []route.Hop)
	visit = func(hops []route.Hop) {
		for _, h := range hops {
			if seen[h.Queue] || h.Loop {
				continue
			}
			if h.DeliveryLimit != nil || h.DelayedRetry != nil {
				seen[h.Queue] = true
			}
			if h.DeliveryLimit != nil {
				when, counts := sim.DeliveryLimitRule(*h.DeliveryLimit, false)
				if limits == "" {
					limits = fmt.Sprintf("delivery limits on RabbitMQ %s: %s; %s", sim.Version(), counts, sim.DeliveryCountHeaders())
				}
				notes = append(notes, fmt.Sprintf("%s: delivery limit %d: it %s (reason delivery_limit)", h.Queue, *h.DeliveryLimit, when))
			}
			if h.DelayedRetry != nil {
				notes = append(notes, routeRetryNote(h.Queue, *h.DelayedRetry, h.DeliveryLimit))
			}
			for _, n := range h.Next {
				visit(n.Hops)
			}
		}
	}
	visit(tr.Hops)
	if limits != "" {
		notes = append(notes, limits)
	}
	if len(tr.Publish.DirectReply) > 0 {
		if sim.Version().DirectReplyRouted() {
			notes = append(notes, fmt.Sprintf("direct reply-to on RabbitMQ %s: the publish counts as routed, so a publisher using mandatory gets no basic.return, even when the requester is gone and the reply is dropped", sim.Version()))
		} else {
			notes = append(notes, fmt.Sprintf("direct reply-to on RabbitMQ %s: the publish counts as unroutable, so a publisher using mandatory gets the reply back (basic.return NO_ROUTE) although the requester received it (4.2 counts it as routed)", sim.Version()))
		}
	}
	return notes
}

// routeRetryNote explains queue q's delayed retry d (rabbit_fifo
// should_delay0/4 and calculate_ready_at/4 at v4.3.5). limit is the
// queue's delivery limit (nil: none): a failed delivery beyond it
// dead-letters the message instead of making it wait (return_one/8), so
// the waits of a failed delivery stop there.
func routeRetryNote(q string, d route.DelayedRetry, limit *int64) string {
	var which, rest string
	switch d.Type {
	case route.RetryAll:
		which = "a message returned to it"
	case route.RetryFailed:
		which = "a message whose delivery failed (basic.reject with requeue, or its consumer's channel gone with it unacknowledged)"
		rest = "; other returns (basic.nack with requeue, a consumer timeout) are available again at once"
	case route.RetryReturned:
		which = "a message returned without a failed delivery (basic.nack with requeue, basic.recover, a consumer timeout)"
		rest = fmt.Sprintf("; such returns do not raise n, so it waits %d ms each time unless deliveries failed too; a failed delivery (basic.reject with requeue) is available again at once", d.Delay(1))
	}
	bounds := fmt.Sprintf("min %d ms, max %d ms", d.MinMS, d.MaxMS)
	switch {
	case d.MaxIsMin:
		bounds = fmt.Sprintf("min %d ms, and max the same: no usable x-delayed-retry-max", d.MinMS)
	case d.MaxMS < d.MinMS:
		bounds += ", below min: every retry waits max"
	}
	// The waits after the 1st, 2nd, 3rd failed delivery, and on; with a
	// delivery limit below 4, the failed delivery after the limit
	// dead-letters the message, and the list ends there.
	steps, end := int64(3), ", …"
	if limit != nil && *limit >= 0 && *limit <= 3 && d.Type != route.RetryReturned {
		steps = *limit
		end = fmt.Sprintf(", and no more: its %s failed delivery dead-letters it (delivery limit %d)", loader.Ordinal(*limit+1), *limit)
	}
	var waits []string
	for n := int64(1); n <= steps; n++ {
		waits = append(waits, fmt.Sprintf("%d ms", d.Delay(n)))
	}
	list := strings.Join(waits, ", ") + end
	if steps == 0 {
		list = fmt.Sprintf("none after a failed delivery: its 1st failed delivery dead-letters it (delivery limit %d)", *limit)
	}
	return fmt.Sprintf("%s: delayed retry %s (%s): %s waits min(%d × n, %d) ms before it is delivered again, n being its failed deliveries so far (x-delivery-count, at least 1): %s%s",
		q, d.Type, bounds, which, d.MinMS, d.MaxMS, list, rest)
}

func routeHasDeadLetters(hops []route.Hop) bool {
	for _, h := range hops {
		if len(h.Next) > 0 || h.Truncated {
			return true
		}
	}
	return false
}

// writeRouteHopBlock writes queue h's name and, under it, where each of its
// dead letters goes; a queue that cannot dead-letter writes nothing.
func writeRouteHopBlock(p *routePrinter, h route.Hop, depth int, problems *routeProblemList) {
	if h.Truncated {
		p.line(depth, "%s (depth limit reached: raise --depth to follow it)", h.Queue)
		return
	}
	if len(h.Next) == 0 {
		return
	}
	p.line(depth, "%s", h.Queue)
	for _, n := range h.Next {
		r := n.Route
		problems.add(r.Result.Problems...)
		reason := string(r.Reason)
		switch {
		case h.Arrival != nil && !h.Arrival.Keeps():
			reason += " on arrival"
		case n.ExpiresAfterMS != nil:
			reason = fmt.Sprintf("%s after %d ms", reason, *n.ExpiresAfterMS)
		}
		switch {
		case !r.Configured:
			why := "no dead-letter exchange"
			if len(r.Result.Problems) > 0 {
				why = r.Result.Problems[0]
			}
			p.line(depth+1, "%s -> dropped: %s", reason, why)
			continue
		case r.ExchangeMissing && r.Held:
			p.line(depth+1, "%s -> held in %s: dead-letter exchange %q is not declared (at-least-once dead-lettering keeps it there and tries again)", reason, h.Queue, r.Exchange)
			continue
		case r.ExchangeMissing:
			p.line(depth+1, "%s -> dropped: dead-letter exchange %q is not declared", reason, r.Exchange)
			continue
		}
		head := fmt.Sprintf("%s -> %s [%s] -> ", reason, routeExchangeLabel(r.Exchange), r.RoutingKey)
		var unknown []string // unsimulated exchanges that pick no known destination
		for _, x := range r.Result.Unsimulated {
			if routeChoiceOf(r.Result, x) == nil {
				unknown = append(unknown, x)
			}
		}
		if len(n.Hops) == 0 && len(r.Cycles) == 0 && len(r.Result.OneOf) == 0 && len(unknown) == 0 {
			if r.Held {
				p.line(depth+1, "%sheld in %s: unroutable (at-least-once dead-lettering keeps it there and tries again until a route exists)", head, h.Queue)
			} else {
				p.line(depth+1, "%sdropped: unroutable", head)
			}
			continue
		}
		if len(unknown) > 0 {
			p.line(depth+1, "%sunknown: plugin exchange %s is not simulated", head, routeQuoteList(unknown))
		}
		for _, c := range r.Result.OneOf {
			p.line(depth+1, "%s", routeChoiceLine(strings.TrimSuffix(head, " -> ")+routeDeadLetterPathTo(c), c))
		}
		for _, hop := range n.Hops {
			suffix := ""
			switch {
			case hop.Loop:
				suffix = fmt.Sprintf(" (loop: back to %s)", hop.Queue)
			case hop.Truncated:
				suffix = " (depth limit reached: raise --depth to follow it)"
			}
			if suffix == "" {
				suffix = routeArrivalSuffix(hop)
			}
			p.line(depth+1, "%s%s%s", head, routeDeadLetterPath(hop.Path), suffix)
			if !hop.Loop && !hop.Truncated {
				writeRouteHopBlock(p, hop, depth+2, problems)
			}
		}
		for _, q := range r.Cycles {
			p.line(depth+1, "%s%s (loop: back to %s; dropped: RabbitMQ drops a dead letter that cycles without a rejection)", head, q, q)
		}
	}
}

// routeArrivalSuffix says, after the path to queue h, what the queue does
// with the message on arrival where it is not simply kept (a message TTL
// or a length limit of 0): " (expires on arrival: …)"; "" otherwise.
func routeArrivalSuffix(h route.Hop) string {
	if h.Arrival == nil {
		return ""
	}
	return " (" + route.ArrivalText(*h.Arrival) + ")"
}

// routePublishPath renders the path of a publish:
// orders --[order.created]--> orders.shipping.
func routePublishPath(path []route.Step) string {
	if len(path) == 0 {
		return ""
	}
	var sb strings.Builder
	sb.WriteString(routeExchangeLabel(path[0].Exchange))
	for _, st := range path {
		sb.WriteString(" --")
		sb.WriteString(routeEdgeLabel(st))
		sb.WriteString("--> ")
		sb.WriteString(st.To)
	}
	return sb.String()
}

// routeChoiceOf returns the choice r made at exchange x, if x picks one
// of its destinations (x-modulus-hash).
func routeChoiceOf(r route.Result, x string) *route.Choice {
	for i := range r.OneOf {
		if r.OneOf[i].Exchange == x {
			return &r.OneOf[i]
		}
	}
	return nil
}

// routeChoiceLine renders a choice reached by path (which ends at the
// choosing exchange): the destinations it picks one of, and which one
// when the simulation knows. It never reads as if all of them received
// the message.
func routeChoiceLine(path string, c route.Choice) string {
	among := routeTargets(c.Among)
	if c.Random {
		if c.Picked == nil {
			return fmt.Sprintf("%s -> one of %s: x-local-random delivers the message to one of them, picked at random among those on the node the publisher is connected to (a queue on another node gets nothing from that publisher)", path, among)
		}
		return fmt.Sprintf("%s -> %s, the one queue bound to it (x-local-random: when it is on the node the publisher is connected to; from another node the message goes nowhere)", path, among)
	}
	if c.Picked == nil {
		return fmt.Sprintf("%s -> one of %s: x-modulus-hash delivers the message to exactly one of them, picked by a hash of its routing keys; which one, mqctl cannot tell before RabbitMQ 4.3", path, among)
	}
	return fmt.Sprintf("%s picks one of %s by a hash of the routing keys: %s, and only it (x-modulus-hash)", path, among, routeTargets([]route.Target{{Name: c.Picked.Name, Type: c.Picked.Type, Bindings: 1}}))
}

// routeTargets renders destinations as {a, b (2 bindings), exchange x}
// ({a} for one).
func routeTargets(ts []route.Target) string {
	parts := make([]string, len(ts))
	for i, t := range ts {
		s := t.Name
		if t.Type == topology.DestExchange {
			s = "exchange " + routeExchangeLabel(t.Name)
		}
		if t.Bindings > 1 {
			s += fmt.Sprintf(" (%d bindings)", t.Bindings)
		}
		parts[i] = s
	}
	if len(parts) == 1 {
		return parts[0]
	}
	return "{" + strings.Join(parts, ", ") + "}"
}

// routeDeadLetterPathTo renders, after a dead letter's exchange, the
// exchanges it passed to reach choice c's exchange ("" when it is the
// dead-letter exchange itself).
func routeDeadLetterPathTo(c route.Choice) string {
	if len(c.Path) == 0 {
		return ""
	}
	return " -> " + routeDeadLetterPath(c.Path)
}

func routeEdgeLabel(st route.Step) string {
	switch {
	case st.Via == route.ViaAlternate:
		return "(alternate-exchange)"
	case st.ExchangeType == "fanout":
		return "(fanout)"
	case st.ExchangeType == "x-modulus-hash":
		return "(hash)"
	case st.ExchangeType == "headers":
		return route.FormatTable(st.BindingArgs)
	}
	return "[" + st.BindingKey + "]"
}

// routeDeadLetterPath renders the part of a dead letter's path after its
// exchange: the exchanges it passes through, then the queue.
func routeDeadLetterPath(path []route.Step) string {
	parts := make([]string, 0, len(path))
	for _, st := range path {
		if st.Via == route.ViaAlternate {
			parts = append(parts, st.To+" (alternate)")
		} else {
			parts = append(parts, st.To)
		}
	}
	return strings.Join(parts, " -> ")
}

func routeExchangeLabel(name string) string {
	if name == "" {
		return "(default)"
	}
	return name
}

func routeQuoteList(names []string) string {
	if len(names) == 0 {
		return "none"
	}
	q := make([]string, len(names))
	for i, n := range names {
		q[i] = strconv.Quote(n)
	}
	return strings.Join(q, ", ")
}

// routeProblemList keeps problems unique, in the order first seen.
type routeProblemList struct {
	list []string
	seen map[string]bool
}

func (l *routeProblemList) add(ps ...string) {
	for _, p := range ps {
		if l.seen == nil {
			l.seen = map[string]bool{}
		}
		if !l.seen[p] {
			l.seen[p] = true
			l.list = append(l.list, p)
		}
	}
}

// routePrinter writes indented lines and keeps the first write error.
type routePrinter struct {
	w   io.Writer
	err error
}

func (p *routePrinter) line(depth int, format string, a ...any) {
	if p.err != nil {
		return
	}
	_, p.err = fmt.Fprintf(p.w, "%s%s\n", strings.Repeat("  ", depth), fmt.Sprintf(format, a...))
}
