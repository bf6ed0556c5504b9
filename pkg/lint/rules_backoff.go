package lint

import (
	"fmt"
	"sort"
	"strings"

	"github.com/mqctl/mqctl/pkg/loader"
	"github.com/mqctl/mqctl/pkg/route"
	"github.com/mqctl/mqctl/pkg/topology"
)

// MQ203: how a queue's retries wait, delay tiers (retry.delays) or the
// broker's own delayed retry (retry.backoff, quorum queues, RabbitMQ 4.3),
// and the trade-off, with the advice that fits the target version:
//
//   - on 4.3, a quorum queue whose retries wait in delay tiers could let the
//     broker delay them (info);
//   - retry.backoff on a version without delayed retry, where the broker
//     takes the arguments and ignores them (error: tiers are the only way
//     there; validate and plan refuse it too, rmqversion Check);
//   - delayed retry without an explicit delivery limit, where the default
//     limit (20 from 4.0) ends the retries, or without a dead-letter
//     exchange when MQ101 is off (warning);
//   - delayed retry of type returned, whose waits never grow and whose
//     delayed returns never count towards the limit (warning).
//
// A classic queue with tiers gets nothing: tiers are its only way.
func runRetryForm(p *Pass) []Finding {
	var tiers map[string][]tier
	if p.Version.DelayedRetry() {
		tiers = p.tiersByQueue() // advice only where backoff could replace them
	}
	var out []Finding
	for _, name := range p.queueNames {
		q := p.Vhost.Queues[name]
		if q.Type != topology.QueueQuorum {
			continue
		}
		if f, ok := p.negativeDeliveryLimit(q); ok {
			out = append(out, f)
		}
		if q.Backoff != nil && !p.Version.DelayedRetry() {
			out = append(out, p.raised(p.queueFinding(q, "%s", p.backoffWithout(q))))
			continue
		}
		if dr, ok := p.Sim.DelayedRetry(name); ok {
			if f, ok := p.delayedRetryAdvice(q, dr); ok {
				out = append(out, f)
			}
			continue
		}
		if ts := tiers[name]; len(ts) > 0 {
			out = append(out, p.judged(p.queueFinding(q, "%s", p.tiersCouldBackoff(name, ts))))
		}
	}
	return out
}

// negativeDeliveryLimit is the warning for quorum queue q whose delivery
// limit is negative (delivery_limit: unlimited, or -1) on a target before
// 4.0, where it ends every retry: 4.0+ reads it as no limit
// (rmqversion NegativeDeliveryLimitDisables), 3.10 dead-letters the
// message at its first return (route.Simulator.DeliveryLimit).
func (p *Pass) negativeDeliveryLimit(q *topology.Queue) (Finding, bool) {
	limit, limited := p.Sim.DeliveryLimit(q.Name)
	if !limited || limit >= 0 {
		return Finding{}, false
	}
	when, _ := p.Sim.DeliveryLimitRule(limit, !p.qargs[q.Name].Has(argDLX))
	source := fmt.Sprintf("%s %d: delivery_limit unlimited, or -1", p.deliveryLimitSource(q), limit)
	if field, ok := q.ArgPos.Written("x-delivery-limit"); ok && q.Arguments.Has("x-delivery-limit") {
		source = fmt.Sprintf("its %s unlimited, or -1: x-delivery-limit %d", field, limit) // the one negative value a typed field writes
	}
	return p.warned(p.queueFinding(q, "quorum queue %q has a negative delivery limit (%s), which RabbitMQ 4.0+ reads as no limit, but %s it %s: a message is never retried. "+
		"Leave the delivery limit out on this version (quorum queues have no default limit before 4.0), or target RabbitMQ 4.0+",
		q.Name, source, p.onVersion(), when).at(p.ownArg(q, "x-delivery-limit")...)), true
}

// warned is judged, with f a warning on this version whatever the rule's
// default severity (unless the file or the options set one for the rule).
func (p *Pass) warned(f Finding) Finding {
	f = p.judged(f)
	f.raise = Warning
	return f
}

// tier is a delay queue whose expired messages return to one queue.
type tier struct {
	name string
	ttl  int64
}

// tiersByQueue finds the delay tiers of each queue, by what they do (a
// queue TTL and a dead-letter route that brings every expired message back
// to that one queue alone), however they are written. Tiers that MQ201
// reports, or that return nowhere in particular, are left out.
func (p *Pass) tiersByQueue() map[string][]tier {
	out := map[string][]tier{}
	for _, name := range p.queueNames {
		d := p.dl[name]
		if d == nil || d.Missing || !p.delay[name] || len(d.Targets) != 1 || d.Targets[0] == name {
			continue
		}
		if d.HeadersDLX || p.delayProblem(name, d, "") != "" {
			continue
		}
		ttl, ok := p.qargs[name].Int(argTTL)
		if !ok || ttl <= 0 {
			continue
		}
		origin := d.Targets[0]
		out[origin] = append(out[origin], tier{name, ttl})
	}
	for _, ts := range out {
		sort.Slice(ts, func(i, j int) bool { return ts[i].ttl < ts[j].ttl || ts[i].ttl == ts[j].ttl && ts[i].name < ts[j].name })
	}
	return out
}

// tiersCouldBackoff is the advice for quorum queue name, whose retries wait
// in delay tiers ts, on a version with delayed retry.
func (p *Pass) tiersCouldBackoff(name string, ts []tier) string {
	names := make([]string, len(ts))
	for i, t := range ts {
		names[i] = t.name
	}
	lo, hi := ts[0].ttl, ts[len(ts)-1].ttl
	sugar := fmt.Sprintf("backoff: {min: %s, max: %s}", loader.FormatDuration(lo), loader.FormatDuration(hi))
	if lo == hi {
		sugar = fmt.Sprintf("backoff: {min: %s}", loader.FormatDuration(lo))
	}
	// attempts sets the queue's x-delivery-limit: with a limit of its own,
	// the attempts that keep it, in place of it (the loader refuses both
	// when they differ).
	attempts, inPlace := "attempts: <tries before dead-lettering>", "delays"
	if q := p.Vhost.Queues[name]; q != nil {
		if n, ok := q.Arguments.Int("x-delivery-limit"); ok && n >= 0 {
			attempts, inPlace = fmt.Sprintf("attempts: %d", n+1), fmt.Sprintf("delays and of its delivery limit %d, which attempts sets (x-delivery-limit = attempts - 1)", n)
		}
	}
	return fmt.Sprintf("quorum queue %q makes its retries wait in delay queues (%s). %s the broker can make them wait itself: retry: {%s, %s} in place of %s. "+
		"It needs no delay queues to declare and watch, and the consumer rejects a failed message (basic.reject with requeue) instead of publishing it to a tier and acknowledging it. "+
		"The trade-off: the wait grows linearly, min × the message's failed deliveries up to max (%s), not in the steps of the tiers; a message waits only when it comes back to this queue (with when: failed, on a basic.reject with requeue or its consumer gone, never on a basic.nack), inside the queue (messages_delayed); "+
		"and quorum queues delay retries only once every node of the cluster runs 4.3. Keep the delays for exact steps, for consumers that nack, or while a node may run an older version",
		name, queuesList(names), upperFirst(p.onVersion()), sugar, attempts, inPlace, waitSteps(lo, hi, 3))
}

// backoffWithout explains retry.backoff on a version without delayed
// retry: RabbitMQ 4.0.5 and 3.10.8 declare the quorum queue with the
// arguments and ignore them, redelivering a rejected message at once
// (TestBackoffAgainstBroker in pkg/cli).
func (p *Pass) backoffWithout(q *topology.Queue) string {
	b := q.Backoff
	burst := "redelivers a message its consumer rejects at once, again and again"
	if limit, limited := p.Sim.DeliveryLimit(q.Name); limited {
		burst = fmt.Sprintf("redelivers a message its consumer rejects at once, so its %d attempts are spent in a burst", limit+1)
	}
	steps := []string{loader.FormatDuration(b.MinMS)}
	if b.MaxMS > b.MinMS {
		steps = append(steps, loader.FormatDuration(b.MaxMS))
	}
	return fmt.Sprintf("quorum queue %q asks for the broker's delayed retry (retry.backoff), which %s does not have: delayed retry arrived in 4.3, and this version declares the queue with the x-delayed-retry-* arguments, ignores them and %s. "+
		"Here delay queues are the only way to make a retry wait: write retry: {delays: [%s]} instead (one delay queue per tier, %s.retry.<delay>; the consumer publishes a failed message to one and acknowledges it, and it comes back when its TTL expires), or target RabbitMQ 4.3",
		q.Name, "RabbitMQ "+p.Version.String(), burst, strings.Join(steps, ", "), q.Name)
}

// delayedRetryAdvice is the finding, if any, for quorum queue q whose
// delayed retry dr is active on the target version.
func (p *Pass) delayedRetryAdvice(q *topology.Queue, dr route.DelayedRetry) (Finding, bool) {
	what := "delays its retries (x-delayed-retry-*)"
	if q.Backoff != nil {
		what = "delays its retries (retry.backoff)"
	}
	var issues []string
	if dr.Type == route.RetryReturned {
		// The fix goes where the type is set: the sugar, the queue's
		// argument, or the policy whose type beats it.
		typeFrom, fix := "when: returned (x-delayed-retry-type returned)", "Use when: failed"
		switch src := p.Sim.QueueArgSource(q.Name, "x-delayed-retry-type"); {
		case q.Backoff != nil && src == "x-delayed-retry-type":
		case src == "x-delayed-retry-type":
			typeFrom, fix = "x-delayed-retry-type returned", "Set x-delayed-retry-type to failed"
		default:
			typeFrom, fix = src+" returned", "Set "+strings.Replace(src, "'s delayed-retry-type", "'s delayed-retry-type to failed", 1)
		}
		issues = append(issues, "with "+typeFrom+" only the returns that are not failed deliveries wait: a basic.nack with requeue, basic.recover, a consumer timeout. "+
			"A failed delivery (basic.reject with requeue, its consumer gone) is redelivered at once; the waits never grow, since they are min × the failed deliveries, which those returns do not count; and those returns never count towards the delivery limit, so a message a consumer keeps nacking is retried every "+
			loader.FormatDuration(dr.MinMS)+" for ever. "+fix+" for a wait that grows with each failure and ends at the limit")
	}
	explicit := q.Arguments.Has("x-delivery-limit") || p.qargs[q.Name].Has("x-delivery-limit")
	limit, limited := p.Sim.DeliveryLimit(q.Name)
	hasDLX := p.qargs[q.Name].Has(argDLX)
	end := ""
	switch {
	case !limited:
	case hasDLX && p.dl[q.Name] != nil:
		end = fmt.Sprintf("dead-letters the message to %s", exchangeLabel(p.dl[q.Name].Exchange))
	case hasDLX:
		end = "dead-letters the message"
	default:
		end = "drops the message: the queue has no dead-letter exchange"
	}
	if limited && !explicit && dr.Type != route.RetryReturned {
		fix := "Set retry.attempts to the number of tries you mean"
		if q.Backoff == nil {
			fix = "Set delivery_limit to the number of tries you mean, less one (x-delivery-limit N dead-letters at the failed delivery N+1)"
		}
		if !hasDLX {
			fix += ", and give the queue a dead-letter exchange to keep what fails"
		}
		issues = append(issues, fmt.Sprintf("it sets no attempts (no delivery limit): %s quorum queues' default delivery limit of %d applies, so the %s failed delivery %s, after %s of waiting in all (%s). %s",
			p.onVersion(), limit, loader.Ordinal(limit+1), end, loader.FormatDuration(totalWait(dr, limit)), waitSteps(dr.MinMS, dr.MaxMS, 3), fix))
	} else if limited && !hasDLX && !p.enabled("MQ101") {
		issues = append(issues, fmt.Sprintf("the %s failed delivery %s, so it is lost", loader.Ordinal(limit+1), end))
	}
	if len(issues) == 0 {
		return Finding{}, false
	}
	return p.warned(p.queueFinding(q, "quorum queue %q %s, but %s", q.Name, what, strings.Join(issues, "; and "))), true
}

// totalWait is how long a message waits in all before the failed delivery
// that ends it: one wait after each of the first limit failed deliveries.
func totalWait(dr route.DelayedRetry, limit int64) int64 {
	var total int64
	for n := int64(1); n <= limit; n++ {
		total += dr.Delay(n)
	}
	return total
}

// waitSteps renders the first waits of a linear backoff: "1s, 2s, 3s, …
// up to 1m", or "10s each time" when there is no max (hi 0) or min is
// max, or max is below min (each wait is then max: min(min × n, max)).
func waitSteps(lo, hi int64, n int) string {
	switch {
	case hi <= 0 || hi == lo:
		return loader.FormatDuration(lo) + " each time"
	case hi < lo:
		return loader.FormatDuration(hi) + " each time"
	}
	var steps []string
	for k := int64(1); k <= int64(n); k++ {
		d := min(lo*k, hi)
		steps = append(steps, loader.FormatDuration(d))
		if d == hi {
			return strings.Join(steps, ", ")
		}
	}
	return strings.Join(steps, ", ") + ", … up to " + loader.FormatDuration(hi)
}
