package lint

import (
	"fmt"
	"maps"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/mqctl/mqctl/pkg/route"
	"github.com/mqctl/mqctl/pkg/topology"
)

// needsDLX reports whether MQ101 asks queue name for a dead-letter
// exchange: it has none and consumers work from it (no stream, no DLQ, no
// delay tier, no collector of unroutable messages).
func (p *Pass) needsDLX(name string) bool {
	q := p.Vhost.Queues[name]
	return p.dl[name] == nil && q.Type != topology.QueueStream && !p.dlq[name] && !p.isDelay(name) &&
		!p.isNamedDLQ(name) && len(p.collects[name]) == 0
}

// MQ101: a queue whose failed messages are discarded.
func runNoDLX(p *Pass) []Finding {
	var out []Finding
	for _, name := range p.queueNames {
		if !p.needsDLX(name) {
			continue
		}
		q := p.Vhost.Queues[name]
		reasons := p.Sim.Reasons(name)
		limit, limited := p.Sim.DeliveryLimit(name)
		what := fmt.Sprintf("queue %q has no dead-letter exchange: a message that %s is discarded and the failure leaves no trace", name, reasonPhrase(reasons))
		if limited {
			when, counts := p.Sim.DeliveryLimitRule(limit, true)
			what = fmt.Sprintf("quorum queue %q has no dead-letter exchange: %s it %s (%s): %s. So a message its consumers keep failing on is lost without a trace, as is one that %s",
				name, p.onVersion(), when, p.deliveryLimitSource(q), counts, reasonPhrase(withoutReason(reasons, route.DeliveryLimit)))
		}
		fix := fmt.Sprintf("Add dead_letter: {exchange: %s, queue: %s.dlq} (or %s) so failed messages are kept for inspection and replay", p.dlxToShare(), name, p.policyHint(name, "dead-letter-exchange", "a dead-letter-exchange policy"))
		if s := p.sharedDLQ(); s != nil {
			fix = fmt.Sprintf("Add dead_letter: {exchange: %s, routing_key: %s}, as %s %s do, so that its failed messages are kept with theirs in DLQ %q for inspection and replay (or %s; or dead_letter: {exchange: %s, queue: %s.dlq} for a DLQ of its own)",
				yamlString(s.exchange), yamlString(s.key), pluralQueues(len(s.from)), queuesList(s.from), s.dlq, p.policyHint(name, "dead-letter-exchange", "a dead-letter-exchange policy"), p.dlxToShare(), name)
		}
		if d := p.namedDLQFor(name); d != "" {
			fix = fmt.Sprintf("Queue %q looks like its DLQ (by its name) but nothing dead-letters into it: point this queue at it with %s", d, p.deadLetterTo(d))
		}
		if hasReason(reasons, route.MaxLen) {
			fix += ", or set overflow: reject-publish so that a full queue refuses new messages (publishers get a nack with publisher confirms) instead of dropping its oldest"
		}
		if !limited && p.Sim.OnArrival(name, route.Message{}).Reason == route.Expired {
			// A message TTL of 0: a live feed, where a dead-letter
			// exchange would collect every message no consumer waited for.
			what = fmt.Sprintf("queue %q has a message TTL of 0 (%s) and no dead-letter exchange: it discards every message no consumer takes at once (a live feed, what AMQP's immediate flag once did), and one a consumer rejects, without a trace", name, p.argSource(q, "x-message-ttl"))
			fix = fmt.Sprintf("If only the consumers ready when a message arrives should get it, that is what the queue does: silence this with `# mqctl:ignore MQ101` (a dead-letter exchange would collect every message published while no consumer waits). Otherwise give it a message_ttl above 0, and dead_letter: {exchange: %s, queue: %s.dlq} to keep what expires", p.dlxToShare(), name)
		}
		f := p.queueFinding(q, "%s. %s", what, fix)
		switch {
		case limited:
			f = p.raised(f)
		case q.Type == topology.QueueQuorum:
			f = p.judged(f) // no delivery limit on this version
		}
		out = append(out, f)
	}
	return out
}

// sharedWiring is how several queues of a vhost dead-letter into one DLQ:
// through exchange (`""` the default one) with routing key key.
type sharedWiring struct {
	exchange, key, dlq string
	from               []string // the queues, sorted
}

// sharedDLQ is the DLQ a queue without a dead-letter exchange can join,
// when the vhost has one that other queues share: the DLQ that most
// queues (at least two; the first DLQ by name on a tie) dead-letter into
// with the same exchange and routing key (their x-dead-letter-routing-key,
// or a policy's), reaching it and nothing else, where it holds dead
// letters only (no binding brings it regular traffic). nil when none: a
// queue with a DLQ of its own is no model for another's.
func (p *Pass) sharedDLQ() *sharedWiring {
	if p.sharedDLQWiring != nil {
		return *p.sharedDLQWiring
	}
	type wiring struct{ exchange, key, dlq string }
	groups := map[wiring][]string{}
	for _, q := range p.queueNames {
		d := p.dl[q]
		if d == nil || d.Missing || !d.HasDLRK || d.HeadersDLX || len(d.Targets) != 1 || p.isDelay(q) || p.dlq[q] {
			continue
		}
		t := d.Targets[0]
		if t == q || !p.dlq[t] || p.publishedTo(t) {
			continue
		}
		w := wiring{d.Exchange, d.DLRK, t}
		groups[w] = append(groups[w], q)
	}
	var best *sharedWiring
	for w, qs := range groups {
		if len(qs) < 2 {
			continue
		}
		if best == nil || len(qs) > len(best.from) || (len(qs) == len(best.from) && (w.dlq < best.dlq || (w.dlq == best.dlq && w.exchange+"\x00"+w.key < best.exchange+"\x00"+best.key))) {
			best = &sharedWiring{exchange: w.exchange, key: w.key, dlq: w.dlq, from: qs}
		}
	}
	p.sharedDLQWiring = &best
	return best
}

// pluralQueues is "queue" or "queues", by n, to name n queues after.
func pluralQueues(n int) string {
	if n == 1 {
		return "queue"
	}
	return "queues"
}

// exchangeKindLabel names exchange x of type t for a message: `the fanout
// exchange "dlx"`.
func (p *Pass) exchangeKindLabel(x, t string) string {
	if t == "" {
		return exchangeLabel(x)
	}
	return fmt.Sprintf("the %s %s", t, exchangeLabel(x))
}

// dlxToShare names the exchange a fix's dead_letter should use: the
// vhost's dead-letter exchange, when it has one that others share, so
// that dead_letter.queue binds one more DLQ to it with the queue's own
// key; otherwise "" (as YAML), the default exchange, which needs nothing
// declared: dead_letter.queue then routes the dead letters to the DLQ by
// its name. The shared one is the declared direct or topic exchange
// that most queues dead-letter to (the first by name on a tie) among
// those that are dead-letter exchanges alone: no delay tier returns
// messages through it, and it delivers to DLQs only. A fanout or headers
// exchange is not shared: every DLQ bound to it would receive every
// queue's dead letters; nor is an exchange that carries regular traffic.
func (p *Pass) dlxToShare() string {
	if p.sharedDLX != nil {
		return *p.sharedDLX
	}
	best, n := `""`, 0
	for _, x := range p.exchangeNames {
		if t := p.exchangeType(x); (t != "direct" && t != "topic") || len(p.dlxOf[x]) <= n || !p.onlyDeadLetters(x) {
			continue
		}
		best, n = yamlString(x), len(p.dlxOf[x])
	}
	p.sharedDLX = &best
	return best
}

// onlyDeadLetters reports whether exchange x is a dead-letter exchange
// alone: no delay queue dead-letters to it, and it is bound to DLQs only.
func (p *Pass) onlyDeadLetters(x string) bool {
	for _, q := range p.dlxOf[x] {
		if p.isDelay(q) {
			return false
		}
	}
	for _, b := range p.from[x] {
		if b.DestinationType != topology.DestQueue || !p.dlq[b.Destination] {
			return false
		}
	}
	return true
}

// deliveryLimitSource says where a delivery limit comes from.
func (p *Pass) deliveryLimitSource(q *topology.Queue) string {
	switch {
	case q.Arguments.Has("x-delivery-limit"):
		return "its " + argField(q.Meta, "x-delivery-limit")
	case p.qargs[q.Name].Has("x-delivery-limit"):
		return "the delivery-limit of its policy"
	}
	return "the default limit quorum queues have from RabbitMQ 4.0"
}

// namedDLQFor returns the queue named as the DLQ of queue q that no dead
// letters reach, or "".
func (p *Pass) namedDLQFor(q string) string { return p.dlqNamedFor[q] }

// deadLetterTo renders the dead_letter setting that sends dead letters to
// queue d: through its binding when it has exactly one on a direct or
// topic exchange, else through the default exchange.
func (p *Pass) deadLetterTo(d string) string {
	if bs := p.into[d]; len(bs) == 1 {
		switch b := bs[0]; p.exchangeType(b.Source) {
		case "direct", "topic", "fanout":
			if !hasWildcard(b.RoutingKey) {
				return fmt.Sprintf("dead_letter: {exchange: %s, routing_key: %s}", yamlString(b.Source), yamlString(b.RoutingKey))
			}
		}
	}
	return fmt.Sprintf(`dead_letter: {exchange: "", routing_key: %s}`, yamlString(d))
}

// yamlString renders s as a YAML flow scalar, quoted when it must be.
func yamlString(s string) string {
	if s == "" || strings.ContainsAny(s, ":{}[],&*#?|<>=!%@`'\"\\\t\n") || strings.TrimSpace(s) != s {
		return strconv.Quote(s)
	}
	return s
}

func hasReason(rs []route.Reason, r route.Reason) bool {
	for _, x := range rs {
		if x == r {
			return true
		}
	}
	return false
}

func withoutReason(rs []route.Reason, r route.Reason) []route.Reason {
	var out []route.Reason
	for _, x := range rs {
		if x != r {
			out = append(out, x)
		}
	}
	return out
}

// reasonPhrase renders the ways a queue dead-letters, to follow "a message
// that": "is rejected by a consumer, expires or is pushed out by the length
// limit".
func reasonPhrase(rs []route.Reason) string {
	var parts []string
	for _, r := range rs {
		switch r {
		case route.Rejected:
			parts = append(parts, "is rejected by a consumer")
		case route.Expired:
			parts = append(parts, "expires")
		case route.MaxLen:
			parts = append(parts, "is pushed out by the length limit")
		case route.DeliveryLimit:
			parts = append(parts, "is redelivered past the delivery limit")
		}
	}
	switch len(parts) {
	case 0:
		return "is rejected by a consumer"
	case 1:
		return parts[0]
	default:
		return strings.Join(parts[:len(parts)-1], ", ") + " or " + parts[len(parts)-1]
	}
}

// ownArg is arg, as the arguments Finding.at takes, where queue q's own
// argument arg is the one in force (a policy does not give it another
// value); else none, and a finding stays at the queue.
func (p *Pass) ownArg(q *topology.Queue, arg string) []string {
	own, ok := q.Arguments[arg]
	if !ok {
		return nil
	}
	if eff, ok := p.qargs[q.Name][arg]; ok && !topology.ValueEqual(own, eff) {
		return nil
	}
	return []string{arg}
}

// dlxSource says where a queue's dead-letter exchange comes from.
func (p *Pass) dlxSource(q *topology.Queue) string {
	if q.Arguments.Has(argDLX) {
		return argField(q.Meta, argDLX)
	}
	if pol, _ := p.Sim.QueuePolicies(q.Name); pol != "" {
		return fmt.Sprintf("dead-letter-exchange of policy %q", pol)
	}
	return "dead-letter-exchange of its policy"
}

// ownKeyFix is advice, which gives queue q a dead-letter routing key of
// its own on its dead-letter exchange dlx, where q sets that exchange
// itself (x-dead-letter-exchange). Where a policy sets it, the policy's
// one dead-letter-routing-key would be shared by every queue it matches,
// and RabbitMQ refuses a queue with x-dead-letter-routing-key but no
// x-dead-letter-exchange of its own: the queue sets both.
func (p *Pass) ownKeyFix(q *topology.Queue, dlx, advice string) string {
	if q.Arguments.Has(argDLX) {
		return advice
	}
	return fmt.Sprintf("Give the queue its own dead-letter routing key, and a DLQ bound with it: its dead-letter exchange comes from %s, whose one dead-letter-routing-key every queue it matches would share, and RabbitMQ refuses a queue with x-dead-letter-routing-key but no x-dead-letter-exchange of its own, so set both on the queue — dead_letter: {exchange: %s, queue: %s.dlq} declares the DLQ and %s",
		p.dlxSource(q), yamlString(dlx), q.Name, ownKeyRoute(dlx, q.Name))
}

// ownKeyRoute says how dead_letter.queue routes the dead letters of
// queue name to its DLQ through exchange dlx.
func ownKeyRoute(dlx, name string) string {
	if dlx == "" {
		return "routes them there through the default exchange, by its name"
	}
	return fmt.Sprintf("binds it with the key %q", name)
}

// MQ102: a dead-letter exchange that does not exist.
func runDLXMissing(p *Pass) []Finding {
	var out []Finding
	for _, name := range p.queueNames {
		d := p.dl[name]
		if d == nil || !d.Missing {
			continue
		}
		q := p.Vhost.Queues[name]
		if p.isDelay(name) {
			out = append(out, p.queueFinding(q,
				"delay queue %q sends expired messages to exchange %q (%s), which is not declared: RabbitMQ drops every retry silently. "+
					"Declare exchange %q%s, or %s",
				name, d.Exchange, p.dlxSource(q), d.Exchange, p.exchangeHint(d.Exchange), lowerFirst(p.delayAdvice(name))).at(p.ownArg(q, argDLX)...))
			continue
		}
		fate := "RabbitMQ drops every dead letter of this queue silently"
		if p.Sim.AtLeastOnce(name) {
			fate = "RabbitMQ keeps every dead letter of this queue in it (at-least-once dead-lettering) and tries again until the exchange exists: they pile up there, counted in its messages, and reach no consumer"
		}
		out = append(out, p.queueFinding(q,
			"queue %q dead-letters to exchange %q (%s), which is not declared: %s. "+
				"Declare exchange %q and bind a DLQ to it, or correct the exchange name%s",
			name, d.Exchange, p.dlxSource(q), fate, d.Exchange, p.exchangeHint(d.Exchange)).at(p.ownArg(q, argDLX)...))
	}
	return out
}

// exchangeLabel names an exchange for a message.
func exchangeLabel(x string) string {
	if x == "" {
		return "the default exchange"
	}
	return fmt.Sprintf("exchange %q", x)
}

// familyLabel describes a key family for a message.
func familyLabel(k msgKey) string {
	switch k.Kind {
	case keyPattern:
		return fmt.Sprintf("keys matching %q (its binding on %s)", k.Key, exchangeLabel(k.Exchange))
	case keyAny:
		return fmt.Sprintf("any key (its binding on %s)", exchangeLabel(k.Exchange))
	}
	return fmt.Sprintf("key %q", k.Key)
}

// MQ103: dead letters that reach no queue.
func runDLUnrouted(p *Pass) []Finding {
	var out []Finding
	for _, name := range p.queueNames {
		d := p.dl[name]
		if d == nil || d.Missing || p.isDelay(name) {
			continue
		}
		if d.HeadersDLX && len(p.from[d.Exchange]) > 0 {
			continue // a headers DLX routes on headers this simulation cannot know
		}
		// A key family is unrouted when none of its sample keys reaches a queue.
		type family struct {
			key    msgKey
			routed bool
			sample keyRoute
		}
		var fams []*family
		byKey := map[msgKey]*family{}
		for _, r := range d.Routes {
			id := msgKey{Key: r.In.Key, Kind: r.In.Kind}
			fm := byKey[id]
			if fm == nil {
				fm = &family{key: r.In, sample: r}
				byKey[id] = fm
				fams = append(fams, fm)
			}
			if len(r.Route.Result.Deliveries) > 0 || openRoute(r.Route) {
				fm.routed = true // delivered, or passed through an exchange whose pick lint cannot tell
			}
		}
		var bad []string
		for _, fm := range fams {
			if !fm.routed {
				bad = append(bad, familyLabel(fm.key))
			}
		}
		if len(bad) == 0 {
			continue
		}
		q := p.Vhost.Queues[name]
		var msg string
		named := ""
		if nd := p.namedDLQFor(name); nd != "" {
			named = fmt.Sprintf(". Queue %q looks like its DLQ (by its name) but nothing dead-letters into it: %s on queue %q sends them there", nd, p.deadLetterTo(nd), name)
		}
		t := p.exchangeType(d.Exchange)
		fate := "RabbitMQ drops them silently"
		if p.Sim.AtLeastOnce(name) {
			fate = fmt.Sprintf("RabbitMQ keeps them in queue %q (at-least-once dead-lettering) and tries again until a binding matches: they pile up there, counted in its messages, and reach no consumer", name)
		}
		switch {
		case named != "":
			msg = fmt.Sprintf("dead letters of queue %q go to %s with %s, which no binding matches: %s%s",
				name, exchangeLabel(d.Exchange), deadLetterKeys(d, bad), fate, named)
		case d.Exchange != "" && t != "direct" && t != "topic" && len(p.from[d.Exchange]) == 0:
			msg = fmt.Sprintf("dead letters of queue %q go to %s, which has no binding: %s. %s",
				name, p.exchangeKindLabel(d.Exchange, t), fate, bindToKeyless(t, d.Exchange, name, p.dlxToShare()))
		case d.HasDLRK && d.Exchange == "":
			msg = fmt.Sprintf("dead letters of queue %q go to the default exchange with routing key %q (%s), and no queue %q is declared: %s. "+
				"Declare queue %q as the DLQ, or set %s to the name of an existing queue%s",
				name, d.DLRK, p.dlrkSource(name, "of"), d.DLRK, fate, d.DLRK, p.dlrkSource(name, "in"), p.queueHint(d.DLRK))
		case d.HasDLRK:
			msg = fmt.Sprintf("dead letters of queue %q go to %s with routing key %q (%s), which no binding matches: %s. "+
				"Bind a DLQ to %s for %q (dead_letter.queue does this), or set %s to a key that is bound",
				name, exchangeLabel(d.Exchange), d.DLRK, p.dlrkSource(name, "of"), fate, exchangeLabel(d.Exchange), d.DLRK, p.dlrkSource(name, "in"))
		case d.Exchange == "":
			msg = fmt.Sprintf("dead letters of queue %q go to the default exchange with the routing key they were published with (no x-dead-letter-routing-key is set), which delivers them to the queue named by that key, and for %s no such queue exists: %s. %s",
				name, joinOr(bad), fate, p.ownKeyFix(q, d.Exchange, "Set x-dead-letter-routing-key to the name of a DLQ (dead_letter.queue does this)"))
		default:
			msg = fmt.Sprintf("dead letters of queue %q go to %s with the routing key they were published with (no x-dead-letter-routing-key is set), and for %s no binding matches: %s. %s",
				name, exchangeLabel(d.Exchange), joinOr(bad), fate,
				p.ownKeyFix(q, d.Exchange, fmt.Sprintf("Set x-dead-letter-routing-key to %q and bind a DLQ to %s with that key (dead_letter.queue does both)", name, exchangeLabel(d.Exchange))))
		}
		out = append(out, p.queueFinding(q, "%s", msg))
	}
	return out
}

// bindToKeyless is the fix for queue q's dead letters sent to exchange x
// of type t, which routes by no key, that has no binding: what to bind
// there.
func bindToKeyless(t, x, q, dlx string) string {
	other := fmt.Sprintf("Or dead-letter to a direct exchange: dead_letter: {exchange: %s, queue: %s.dlq}", dlx, q)
	if dlx == `""` {
		other = fmt.Sprintf("Or dead-letter through the default exchange, which delivers by queue name: dead_letter: {exchange: \"\", queue: %s.dlq}", q)
	}
	switch t {
	case "fanout":
		return fmt.Sprintf("Bind a DLQ to it (dead_letter: {exchange: %s, queue: %s.dlq} does): a fanout exchange delivers every dead letter to each queue bound to it, whatever its key, so a dead-letter routing key would not help; give each queue whose dead letters must stay apart an exchange of its own", yamlString(x), q)
	case "headers":
		return fmt.Sprintf("Bind a DLQ to it without criteria, which takes every dead letter, or with criteria its dead letters carry: a headers exchange routes by headers, not by key, so a dead-letter routing key would not help. %s", other)
	}
	return fmt.Sprintf("Bind a DLQ to it: it routes by no key, so a dead-letter routing key would not help. %s", other)
}

// deadLetterKeys says which keys a queue's unrouted dead letters carry.
func deadLetterKeys(d *dlInfo, bad []string) string {
	if d.HasDLRK {
		return fmt.Sprintf("routing key %q (x-dead-letter-routing-key)", d.DLRK)
	}
	return "the routing key they were published with (" + joinOr(bad) + ")"
}

// joinOrShows is how many items joinOr names before "and N more".
const joinOrShows = 4

// joinOr joins items as a sentence lists them (a, b and c), past
// joinOrShows the first of them and how many more.
func joinOr(items []string) string {
	if len(items) > joinOrShows {
		return strings.Join(items[:joinOrShows], ", ") + fmt.Sprintf(" and %d more", len(items)-joinOrShows)
	}
	if len(items) == 1 {
		return items[0]
	}
	return strings.Join(items[:len(items)-1], ", ") + " and " + items[len(items)-1]
}

// joinOrQuoted is joinOr of items quoted, quoting only those it names: a
// binding of a fanout DLX takes the dead letters of thousands of queues,
// each with its own key.
func joinOrQuoted(items []string) string { return joinOrQuotedOf(items, len(items)) }

// joinOrQuotedOf is joinOrQuoted of total items, first being the first of
// them (at least as many as it names).
func joinOrQuotedOf(first []string, total int) string {
	if total > joinOrShows {
		return strings.Join(quoteAll(first[:joinOrShows]), ", ") + fmt.Sprintf(" and %d more", total-joinOrShows)
	}
	return joinOr(quoteAll(first[:total]))
}

// settledTargets is where q's dead letters come to rest: the queues its
// dead letters reach, with each delay queue replaced by the queues it
// returns messages to. q itself is left out (a loop is MQ105's business).
//
// Queues that share their targets (collectTargets) share the list, but
// for a queue among its own targets: the list is not to be changed.
func (p *Pass) settledTargets(q string) []string {
	s := p.settledOf(p.dl[q].Targets)
	i, found := slices.BinarySearch(s.all, q)
	if !found {
		return s.all
	}
	return slices.Concat(s.all[:i], s.all[i+1:])
}

// settled is where the dead letters that reach a list of targets come to
// rest (settledTargets, but for the queue they come from), found once for
// every queue that shares the list; with the queues among them that
// runDLCrossDelivered names.
type settled struct {
	all []string
	// foreign are the DLQs declared for a queue, working the queues that
	// receive regular traffic and hold no delay.
	foreign, working []string
}

func (p *Pass) settledOf(targets []string) *settled {
	k := keyOfTargets(targets)
	if s := p.settledMemo[k]; s != nil && k.first != nil {
		return s
	}
	seen := map[string]bool{}
	s := &settled{}
	add := func(t string) {
		if !seen[t] {
			seen[t] = true
			s.all = append(s.all, t)
		}
	}
	for _, t := range targets {
		if p.isDelay(t) && p.dl[t] != nil {
			for _, u := range p.dl[t].Targets {
				if u != t {
					add(u)
				}
			}
			continue
		}
		add(t)
	}
	sort.Strings(s.all)
	s.all = slices.Clip(s.all)
	for _, t := range s.all {
		tq := p.Vhost.Queues[t]
		if tq == nil {
			continue
		}
		if tq.Role == topology.RoleDeadLetter && tq.Origin != "" {
			s.foreign = append(s.foreign, t)
		}
		if p.publishedTo(t) && !p.isDelay(t) {
			s.working = append(s.working, t)
		}
	}
	if k.first != nil {
		p.settledMemo[k] = s
	}
	return s
}

// firstForeign returns the first of s's DLQs declared for a queue other
// than q, but q: where q's dead letters land beside another queue's.
func (s *settled) firstForeign(p *Pass, q string) (string, bool) {
	for _, t := range s.foreign {
		if t != q && p.Vhost.Queues[t].Origin != q {
			return t, true
		}
	}
	return "", false
}

// firstWorking returns the first of s's queues with regular traffic, but q.
func (s *settled) firstWorking(q string) (string, bool) {
	for _, t := range s.working {
		if t != q {
			return t, true
		}
	}
	return "", false
}

// MQ104: dead letters of one queue landing where they do not belong.
// A binding that takes the dead letters of several queues, each sent with
// its own key to its own DLQ, is one cause: one finding on the binding
// names the queues (caughtGroups), and each queue's own finding names only
// the bindings that take its dead letters alone.
func runDLCrossDelivered(p *Pass) []Finding {
	groups := p.caughtGroups()
	out := groups.findings(p)
	for _, name := range p.queueNames {
		d := p.dl[name]
		if d == nil || d.Missing || p.isDelay(name) {
			continue
		}
		settled := p.settledTargets(name)
		st := p.settledOf(d.Targets)
		foreign, isForeign := st.firstForeign(p, name)
		working, isWorking := st.firstWorking(name)
		if len(settled) < 2 && !isForeign && !isWorking {
			continue
		}
		q := p.Vhost.Queues[name]
		fix := p.ownKeyFix(q, d.Exchange, fmt.Sprintf("Give the queue its own dead-letter routing key (x-dead-letter-routing-key: %s) and bind only its DLQ with that key — dead_letter.queue does this", name))
		if t := p.exchangeType(d.Exchange); d.Exchange != "" && t != "direct" && t != "topic" {
			fix = fmt.Sprintf("%s routes by no key: a key of the queue's own would not keep its dead letters apart. Send them to an exchange that does — dead_letter: {exchange: %s, queue: %s.dlq} declares its DLQ and binds it there with the key %q",
				upperFirst(p.exchangeKindLabel(d.Exchange, t)), p.dlxToShare(), name, name)
			if p.dlxToShare() == `""` {
				fix = fmt.Sprintf("%s routes by no key: a key of the queue's own would not keep its dead letters apart. Send them to a DLQ of their own — dead_letter: {exchange: \"\", queue: %s.dlq} declares it and routes them there through the default exchange, by its name",
					upperFirst(p.exchangeKindLabel(d.Exchange, t)), name)
			}
		}
		var msg string
		cs, ownRoute := p.catchers(name, d)
		var alone []*topology.Binding
		if ownRoute {
			alone = groups.alone(cs)
		}
		switch {
		case len(settled) > 1 && ownRoute && len(alone) == 0:
			continue // only collectors by intent, or bindings a finding of their own names, take them too
		case len(settled) > 1 && ownRoute:
			msg = p.caughtMessage(name, d, settled, alone)
		case len(settled) > 1:
			msg = fmt.Sprintf("dead letters of queue %q reach %d queues (%s)%s. A failure in one consumer shows up beside other queues' failures, and replaying a DLQ delivers messages to consumers that never saw them. %s",
				name, len(settled), queuesList(settled), p.exampleRoute(d), fix)
		case isForeign:
			msg = fmt.Sprintf("dead letters of queue %q land in %s, the DLQ of queue %q%s. They are mixed with another queue's failures and a replay sends them to the wrong consumers. %s",
				name, foreign, p.Vhost.Queues[foreign].Origin, p.exampleRoute(d), fix)
		default:
			msg = fmt.Sprintf("dead letters of queue %q land in queue %s, which also receives regular traffic%s. Its consumers process another queue's failures as new work. "+
				"Send dead letters to a DLQ of their own — dead_letter: {exchange: %s, queue: %s.dlq}",
				name, working, p.exampleRoute(d), p.dlxToShare(), name)
		}
		out = append(out, p.queueFinding(q, "%s", msg))
	}
	return out
}

// exampleRoute describes the dead-letter route that reaches the most
// queues: `: exchange "orders.dlx" delivers key "order.created" to a and b`.
func (p *Pass) exampleRoute(d *dlInfo) string {
	var best *keyRoute
	for i := range d.Routes {
		r := &d.Routes[i]
		if best == nil || len(r.Route.Result.Deliveries) > len(best.Route.Result.Deliveries) {
			best = r
		}
	}
	if best == nil || len(best.Route.Result.Deliveries) == 0 {
		return ""
	}
	if t := p.exchangeType(best.Route.Exchange); t == "fanout" {
		return fmt.Sprintf(": %s delivers every dead letter to %s", p.exchangeKindLabel(best.Route.Exchange, t), queuesList(best.Route.Result.Queues()))
	}
	return fmt.Sprintf(": %s delivers key %q to %s", exchangeLabel(best.Route.Exchange), best.Route.RoutingKey, queuesList(best.Route.Result.Queues()))
}

// MQ105: dead-letter cycles with no delay on the way.
func runDLLoop(p *Pass) []Finding {
	// Graph of dead-letter edges between queues without a queue TTL. An
	// edge into a queue with no edge out (a DLQ) is on no cycle, and is
	// left out: where one fanout exchange takes every queue's dead letters
	// to every DLQ, those edges were the square of the queues. Queues that
	// share their targets (collectTargets) share their edges.
	fast := func(q string) bool { return !p.hasTTL(q) }
	leads := map[string]bool{}
	leadsOn := func(q string) bool {
		l, ok := leads[q]
		if !ok {
			d := p.dl[q]
			l = d != nil && fast(q) && slices.ContainsFunc(d.Targets, fast)
			leads[q] = l
		}
		return l
	}
	edges := map[string][]string{}
	shared := map[targetsKey][]string{}
	for _, q := range p.queueNames {
		d := p.dl[q]
		if d == nil || !fast(q) {
			continue
		}
		k := keyOfTargets(d.Targets)
		es, ok := shared[k]
		if !ok || k.first == nil {
			es = nil
			for _, t := range d.Targets {
				if fast(t) && leadsOn(t) {
					es = append(es, t)
				}
			}
			shared[k] = es
		}
		if len(es) > 0 {
			edges[q] = es
		}
	}
	var out []Finding
	for _, scc := range stronglyConnected(p.queueNames, edges) {
		start := scc[0] // components are sorted
		cyclic := len(scc) > 1
		if !cyclic {
			for _, t := range edges[start] {
				if t == start {
					cyclic = true
				}
			}
		}
		if !cyclic {
			continue
		}
		path := shortestCycle(start, edges, scc)
		q := p.Vhost.Queues[start]
		out = append(out, p.queueFinding(q,
			"dead letters of queue %q come back to it with no delay on the way (%s): a message a consumer rejects is redelivered at once, in a tight loop that burns CPU and floods logs, "+
				"and messages that expire or overflow on the way are dropped by RabbitMQ's cycle detection. "+
				"Put a delay queue (with x-message-ttl) on the path — retry.delays does this — or dead-letter into a DLQ that does not send them back",
			start, strings.Join(path, " -> ")))
	}
	return append(out, p.delayedCycles()...)
}

// delayedCycles is MQ105's other loop: a queue whose dead letters go to a
// delay queue that returns them to it once they expire. A message a
// consumer rejected makes the round trip; one that died for another
// reason (it expired, overflowed, or passed the delivery limit) comes back
// to a queue it died in with no rejection on the way, a cycle, and
// RabbitMQ drops it there (mc:is_death_cycle/2): lost without a trace.
func (p *Pass) delayedCycles() []Finding {
	var out []Finding
	for _, name := range p.queueNames {
		d := p.dl[name]
		if d == nil || p.dlq[name] || p.Vhost.Queues[name].Role == topology.RoleDelay {
			continue
		}
		var lost []string
		tiers := map[string]bool{}
		for _, r := range p.Sim.Reasons(name) {
			if r == route.Rejected {
				continue
			}
			if via := p.cycleDrops(name, d, r); len(via) > 0 {
				lost = append(lost, p.deathCause(name, r))
				for _, t := range via {
					tiers[t] = true
				}
			}
		}
		if len(lost) == 0 {
			continue
		}
		q := p.Vhost.Queues[name]
		out = append(out, p.queueFinding(q,
			"dead letters of queue %q return to it through delay queue %s once they expire, and only those a consumer rejected make the round trip: %s come back to a queue they died in with no rejection on the way, and RabbitMQ drops them there as a dead-letter cycle, without a trace. "+
				"%s",
			name, strings.Join(quoteAll(slices.Sorted(maps.Keys(tiers))), ", "), strings.Join(lost, "; "), p.cycleFix(q)))
	}
	return out
}

// cycleDrops returns the delay queues through which queue q's dead
// letters for reason r come back to q and are dropped there.
func (p *Pass) cycleDrops(q string, d *dlInfo, r route.Reason) []string {
	var via []string
	for _, kr := range d.Routes {
		first := p.Sim.DeadLetter(q, r, route.Message{Exchange: kr.In.Exchange, RoutingKey: kr.Sample})
		for _, t := range first.Result.Queues() {
			if t == q || !p.hasTTL(t) || slices.Contains(via, t) || !p.moreTierThan(t, q) {
				continue
			}
			back := p.Sim.DeadLetter(t, route.Expired, first.Result.Message)
			if slices.Contains(back.Cycles, q) {
				via = append(via, t)
			}
		}
	}
	return via
}

// moreTierThan reports whether queue t, in a dead-letter loop with queue
// q, is the loop's delay queue rather than q: declared as a delay tier, or
// a TTL of its own where q's comes from a policy or is longer. Both have
// a TTL and a dead-letter exchange, and routes alone do not tell which
// one is waited in; the loop is reported once, on the other.
func (p *Pass) moreTierThan(t, q string) bool {
	tierness := func(name string) int {
		switch {
		case p.Vhost.Queues[name].Role == topology.RoleDelay:
			return 2
		case p.Vhost.Queues[name].Arguments.Has(argTTL):
			return 1
		}
		return 0
	}
	if !p.hasTTL(q) {
		return true
	}
	if a, b := tierness(t), tierness(q); a != b {
		return a > b
	}
	tt, _ := p.qargs[t].Int(argTTL)
	qt, _ := p.qargs[q].Int(argTTL)
	return tt < qt || (tt == qt && t > q)
}

// deathCause says which messages queue q dead-letters for reason r, and
// what makes it.
func (p *Pass) deathCause(q string, r route.Reason) string {
	switch r {
	case route.Expired:
		return fmt.Sprintf("messages that expire in it (%s)", p.settingSource(q, argTTL, "message-ttl"))
	case route.MaxLen:
		if p.qargs[q].Has(argMaxLen) {
			return fmt.Sprintf("messages it drops when full (%s)", p.settingSource(q, argMaxLen, "max-length"))
		}
		return fmt.Sprintf("messages it drops when full (%s)", p.settingSource(q, argMaxBytes, "max-length-bytes"))
	case route.DeliveryLimit:
		n, _ := p.Sim.DeliveryLimit(q)
		return fmt.Sprintf("messages whose deliveries fail past its delivery limit (%d, %s)", n, p.deliveryLimitSource(p.Vhost.Queues[q]))
	}
	return fmt.Sprintf("its %s dead letters", r)
}

// dlrkPolicy names the policy that gives queue q its dead-letter routing
// key, "" when its own x-dead-letter-routing-key does (or nothing).
func (p *Pass) dlrkPolicy(q string) string {
	if p.Vhost.Queues[q].Arguments.Has(argDLRK) {
		return ""
	}
	pol, _ := p.Sim.QueuePolicies(q)
	return pol
}

// dlrkSource names what sets queue q's dead-letter routing key, with prep
// before the policy's name ("in" for a fix, "of" in a sentence).
func (p *Pass) dlrkSource(q, prep string) string {
	if pol := p.dlrkPolicy(q); pol != "" {
		return fmt.Sprintf("dead-letter-routing-key %s policy %q", prep, pol)
	}
	if queue := p.Vhost.Queues[q]; queue != nil {
		return argField(queue.Meta, "x-dead-letter-routing-key")
	}
	return "x-dead-letter-routing-key"
}

// settingSource names where queue q's effective argument arg (policy key
// key) comes from, with its value: "x-message-ttl 60000" for its own,
// "message-ttl 60000 of operator policy \"cap\"" for a policy's.
func (p *Pass) settingSource(q, arg, key string) string {
	v, _ := p.qargs[q][arg]
	if own, ok := p.Vhost.Queues[q].Arguments[arg]; ok && topology.ValueEqual(own, v) {
		return fmt.Sprintf("its %s %v", argField(p.Vhost.Queues[q].Meta, arg), topology.Quoted(v))
	}
	pol, op := p.Sim.QueuePolicies(q)
	if o := p.Vhost.OperatorPolicies[op]; o != nil {
		if ov, ok := o.Definition[key]; ok && topology.ValueEqual(ov, v) {
			return fmt.Sprintf("%s %v of operator policy %q", key, topology.Quoted(v), op)
		}
	}
	return fmt.Sprintf("%s %v of policy %q", key, topology.Quoted(v), pol)
}

// cycleFix says how to keep queue q's other dead letters.
func (p *Pass) cycleFix(q *topology.Queue) string {
	fix := fmt.Sprintf("Dead-letter %q into a DLQ instead (dead_letter.queue), and have its consumer retry a failed message by publishing it to the delay queue and acknowledging it (retry.delays declares such tiers)", q.Name)
	if q.TypeOrClassic() == topology.QueueQuorum && p.Version.DelayedRetry() {
		fix += fmt.Sprintf(", or let RabbitMQ %s make retries wait itself (retry: {backoff: {min: …}, attempts: N}, no delay queue)", p.Version.Line())
	}
	return fix + "; or remove what dead-letters them"
}

// stronglyConnected returns the strongly connected components of the
// graph (Tarjan's algorithm, iterative), each sorted, in order of their
// smallest node.
func stronglyConnected(nodes []string, edges map[string][]string) [][]string {
	index := map[string]int{}
	low := map[string]int{}
	onStack := map[string]bool{}
	var stack []string
	var out [][]string
	next := 0
	type frame struct {
		node string
		edge int
	}
	for _, root := range nodes {
		if _, seen := index[root]; seen || len(edges[root]) == 0 {
			continue
		}
		work := []frame{{node: root}}
		index[root], low[root] = next, next
		next++
		stack = append(stack, root)
		onStack[root] = true
		for len(work) > 0 {
			top := &work[len(work)-1]
			if top.edge < len(edges[top.node]) {
				w := edges[top.node][top.edge]
				top.edge++
				if _, seen := index[w]; !seen {
					index[w], low[w] = next, next
					next++
					stack = append(stack, w)
					onStack[w] = true
					work = append(work, frame{node: w})
				} else if onStack[w] && index[w] < low[top.node] {
					low[top.node] = index[w]
				}
				continue
			}
			v := top.node
			work = work[:len(work)-1]
			if len(work) > 0 {
				parent := work[len(work)-1].node
				if low[v] < low[parent] {
					low[parent] = low[v]
				}
			}
			if low[v] == index[v] {
				var comp []string
				for {
					w := stack[len(stack)-1]
					stack = stack[:len(stack)-1]
					onStack[w] = false
					comp = append(comp, w)
					if w == v {
						break
					}
				}
				sort.Strings(comp)
				out = append(out, comp)
			}
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i][0] < out[j][0] })
	return out
}

// shortestCycle finds the shortest path start -> … -> start inside scc.
func shortestCycle(start string, edges map[string][]string, scc []string) []string {
	in := map[string]bool{}
	for _, n := range scc {
		in[n] = true
	}
	prev := map[string]string{}
	queue := []string{start}
	visited := map[string]bool{}
	for len(queue) > 0 {
		n := queue[0]
		queue = queue[1:]
		for _, w := range edges[n] {
			if w == start {
				path := []string{start}
				for c := n; c != start; c = prev[c] {
					path = append(path, c)
				}
				path = append(path, start)
				// path is start, n, …, start reversed in the middle.
				for i, j := 1, len(path)-2; i < j; i, j = i+1, j-1 {
					path[i], path[j] = path[j], path[i]
				}
				return path
			}
			if in[w] && !visited[w] {
				visited[w] = true
				prev[w] = n
				queue = append(queue, w)
			}
		}
	}
	return []string{start, start}
}

// MQ106: a DLQ that no dead letters reach: declared with dead_letter.queue,
// or named as the DLQ of a queue (orders.dlq). Where the cause is reported
// on the origin queue (no dead-letter exchange: MQ101; a missing one:
// MQ102; dead letters that go nowhere: MQ103), that finding names the DLQ
// and this rule stays silent. A queue named as a DLQ of no declared queue
// that an alternate exchange delivers to is a catch-all that the broker
// fills with unroutable messages, not a DLQ only clients fill: silent too
// (one fed only through alternate exchanges is no DLQ by name at all).
func runDLQUnreached(p *Pass) []Finding {
	var out []Finding
	for _, name := range p.queueNames {
		q := p.Vhost.Queues[name]
		var origin, label string
		switch {
		case q.Role == topology.RoleDeadLetter && q.Origin != "":
			origin = q.Origin
			label = fmt.Sprintf("queue %q is declared as the DLQ of queue %q (dead_letter.queue)", name, origin)
			if d := p.dl[origin]; d != nil && sortedContains(d.Targets, name) {
				continue
			}
		case p.isNamedDLQ(name) && p.namedDLQ[name] == "":
			if p.aeFed[name] {
				continue
			}
			idle := p.idleAlternate(name)
			if idle != "" {
				idle = " " + idle + "."
			}
			out = append(out, p.queueFinding(q,
				"queue %q is named as a DLQ, but no queue dead-letters into it: only a client that publishes here fills it.%s "+
					"If that is the plan (a parking lot), silence this with `# mqctl:ignore MQ106`; otherwise set %s on the queues whose failures belong here",
				name, idle, p.deadLetterTo(name)))
			continue
		case p.isNamedDLQ(name):
			origin = p.namedDLQ[name]
			label = fmt.Sprintf("queue %q is named as the DLQ of queue %q", name, origin)
		default:
			continue
		}
		o := p.Vhost.Queues[origin]
		if o == nil {
			continue
		}
		d := p.dl[origin]
		var why, fix string
		switch {
		case o.Type == topology.QueueStream:
			why = fmt.Sprintf("queue %q is a stream, and streams never dead-letter", origin)
			fix = "A consumer of the stream that gives up on a message must publish it here itself"
		case d == nil:
			if p.enabled("MQ101") && p.needsDLX(origin) {
				continue // MQ101 on the origin names this queue
			}
			why = fmt.Sprintf("queue %q has no dead-letter exchange", origin)
			fix = fmt.Sprintf("Point it here: %s on queue %q", p.deadLetterTo(name), origin)
		case d.Missing:
			continue // MQ102
		case p.unrouted(d) && p.enabled("MQ103"):
			continue // MQ103 on the origin names this queue
		default:
			settled := p.settledTargets(origin)
			if len(settled) == 0 {
				why = fmt.Sprintf("queue %q dead-letters into %s, which returns every message to %q, so a message that keeps failing is retried for ever and never lands here",
					origin, queuesList(d.Targets), origin)
				fix = fmt.Sprintf("If the consumer of %q moves a message here itself after its last retry (counting its x-death entries), nothing is lost: silence this with `# mqctl:ignore MQ106` on queue %q. "+
					"If it does not, make it publish such a message %s, or give up by dead-lettering elsewhere than the delay queue", origin, name, p.publishHere(name))
			} else {
				why = fmt.Sprintf("the dead letters of queue %q go to %s instead", origin, queuesList(settled))
				fix = fmt.Sprintf("If this queue should hold them, set %s on queue %q; if a client moves messages here itself, silence this with `# mqctl:ignore MQ106`, or remove the queue", p.deadLetterTo(name), origin)
			}
		}
		if idle := p.idleAlternate(name); idle != "" {
			fix += ". " + idle
		}
		out = append(out, p.queueFinding(q, "%s, but no dead letters reach it: %s. %s", label, why, fix))
	}
	return out
}

// idleAlternate says, for MQ106 on queue q, why an alternate exchange that
// a policy (or an operator policy) names, and that delivers to q, sends
// it nothing: it is the alternate exchange of no exchange (as the
// simulator computes them, see findAlternates). "" when no such policy
// names one; otherwise a sentence without its full stop.
func (p *Pass) idleAlternate(q string) string {
	for _, set := range p.policySets() {
		for _, name := range set.names() {
			pol := set.policies[name]
			ae, ok := pol.Definition.String(argAlternate)
			if !ok || len(p.aeOf[ae]) > 0 || !p.exchangeDeclared(ae) || !contains(p.reachableQueues(ae), q) {
				continue
			}
			var why, fix string
			switch {
			case set.kind == KindOperatorPolicy:
				why = "operator policies cannot set alternate-exchange (RabbitMQ refuses the operator policy)"
				fix = fmt.Sprintf("move alternate-exchange: %s to a policy that applies to the exchanges whose unroutable messages belong here", yamlString(ae))
			case pol.AppliesTo() != "all" && pol.ApplyTo != "exchanges":
				why = fmt.Sprintf("it applies to queues only (apply_to: %s)", pol.ApplyTo)
				fix = fmt.Sprintf("set apply_to: exchanges on %s %q", set.label, name)
			default:
				re := p.policyRegexp(pol.Pattern)
				if re == nil {
					continue // the simulator reports the pattern it cannot read
				}
				var elsewhere, fixes []string
				own, other := false, false
				for _, x := range p.exchangeNames {
					if x == ae || !re.MatchString(x) {
						continue
					}
					if w := p.Sim.ExchangePolicy(x); w != name {
						elsewhere = append(elsewhere, fmt.Sprintf("%s (policy %q applies to it instead: RabbitMQ applies one policy per exchange)", x, w))
						other = true
					} else {
						elsewhere = append(elsewhere, fmt.Sprintf("%s (its own alternate-exchange argument wins over the policy)", x))
						own = true
					}
				}
				if other {
					fixes = append(fixes, fmt.Sprintf("put alternate-exchange: %s in the policy that applies instead", yamlString(ae)))
				}
				if own {
					fixes = append(fixes, "remove the exchange's own alternate-exchange argument")
				}
				if len(elsewhere) == 0 {
					why = fmt.Sprintf("its pattern %q matches no other exchange", pol.Pattern)
					fix = fmt.Sprintf("make the pattern of %s %q match the exchanges whose unroutable messages belong here", set.label, name)
				} else {
					why = "the exchanges it matches take their alternate exchange elsewhere: " + joinOr(elsewhere)
					fix = strings.Join(fixes, ", or ")
				}
			}
			return fmt.Sprintf("%s %q names exchange %q, which delivers to this queue, as alternate exchange, but %s, so no exchange sends its unroutable messages there: to collect them here, %s",
				upperFirst(set.label), name, ae, why, fix)
		}
	}
	return ""
}

// unrouted reports whether some of a queue's dead letters reach no queue
// (what MQ103 reports).
func (p *Pass) unrouted(d *dlInfo) bool {
	for _, r := range d.Routes {
		if len(r.Route.Result.Deliveries) == 0 && !openRoute(r.Route) {
			return true
		}
	}
	return false
}

// MQ107: a quorum queue that asks for at-least-once dead-lettering and
// does not get it. RabbitMQ gives it only with overflow reject-publish;
// with drop-head, the default, it logs a warning and dead-letters at most
// once (rabbit_quorum_queue:dlh/5 on 3.10.8, 4.0.5 and 4.3.5): a dead
// letter its dead-letter exchange cannot route is dropped, where at least
// once keeps it in the queue until it can (measured on 4.3.6).
func runAtLeastOnceFallback(p *Pass) []Finding {
	var out []Finding
	for _, name := range p.queueNames {
		q := p.Vhost.Queues[name]
		a := p.qargs[name]
		if q.TypeOrClassic() != topology.QueueQuorum || p.dl[name] == nil {
			continue
		}
		if s, _ := a.String("x-dead-letter-strategy"); s != "at-least-once" {
			continue
		}
		overflow, set := a.String(argOverflow)
		if overflow == "reject-publish" {
			continue
		}
		how, fix := "it sets no overflow, so drop-head, the default, applies", "Set limits.overflow: reject-publish on the queue"
		if set {
			how = fmt.Sprintf("its overflow is %s (%s)", overflow, p.settingSource(name, argOverflow, "overflow"))
			if !q.Arguments.Has(argOverflow) || !topology.ValueEqual(q.Arguments[argOverflow], overflow) {
				fix = fmt.Sprintf("Make overflow reject-publish in %s, which gives the queue its overflow", p.overflowSource(name))
			}
		}
		from := ""
		if !q.Arguments.Has("x-dead-letter-strategy") {
			if pol, _ := p.Sim.QueuePolicies(name); pol != "" {
				from = fmt.Sprintf(" (by policy %q)", pol)
			}
		}
		out = append(out, p.queueFinding(q,
			"quorum queue %q asks for dead-letter-strategy at-least-once%s, but %s: RabbitMQ dead-letters at least once only with overflow reject-publish, and otherwise falls back to at most once, with a warning in its log alone. A dead letter its dead-letter exchange cannot route is then dropped, where at least once would keep it in the queue until it can. "+
				"%s (with a length limit, publishers then get a nack when the queue is full), or drop the strategy if at most once will do",
			name, from, how, fix).at(p.ownArg(q, "x-dead-letter-strategy")...))
	}
	return out
}

// MQ108: a queue that by design has no consumer — a DLQ, read by hand or
// by a replay, or a delay tier, whose messages only expire — and an
// expiry. RabbitMQ deletes a queue once it has been unused that long: no
// consumer, no basic.get, not declared again; publishes and dead letters
// arriving do not count (measured on 4.3.6: a queue holding messages went
// 2 s after a policy with expires 2000, and one with x-expires 3000 went
// while a message was published to it every 0.5 s). A delay tier then goes, with the
// retries waiting in it, however busy it is; a DLQ, with its dead letters,
// whenever nobody reads it for that long.
func runUnconsumedExpires(p *Pass) []Finding {
	var out []Finding
	for _, name := range p.queueNames {
		q := p.Vhost.Queues[name]
		delay := p.isDelay(name)
		if !delay && !p.dlq[name] {
			continue
		}
		// A queue found to be a DLQ or a delay tier that also takes
		// regular traffic may have consumers: only what the file declares
		// as one (dead_letter.queue, retry.delays) is sure to have none.
		if p.publishedTo(name) && q.Role != topology.RoleDelay && q.Role != topology.RoleDeadLetter {
			continue
		}
		ms, ok := p.qargs[name].Int("x-expires")
		if !ok {
			continue
		}
		what, who := "DLQ", "its dead letters, whenever nobody reads it for that long"
		if delay {
			what, who = "delay queue", "the retries waiting in it: nothing consumes a delay queue, so its expiry always runs out, however many messages pass through"
		}
		fix := fmt.Sprintf("Remove %s from queue %q", argWritten(q.Meta, "x-expires"), name)
		if !q.Arguments.Has("x-expires") {
			pol, op := p.Sim.QueuePolicies(name)
			if o := p.Vhost.OperatorPolicies[op]; o != nil && o.Definition.Has("expires") {
				fix = fmt.Sprintf("Keep queue %q out of operator policy %q (its pattern %q), which gives it the expiry", name, op, o.Pattern)
			} else if pol != "" {
				fix = fmt.Sprintf("Keep queue %q out of policy %q (its pattern %q), which gives it the expiry", name, pol, p.Vhost.Policies[pol].Pattern)
			}
		}
		f := p.queueFinding(q, "%s %q expires after %s unused (%s): RabbitMQ deletes it, with %s. %s",
			what, name, time.Duration(ms)*time.Millisecond, p.settingSource(name, "x-expires", "expires"), who, fix).at(p.ownArg(q, "x-expires")...)
		if delay {
			f.raise = Error
		}
		out = append(out, f)
	}
	return out
}

// publishHere says where a client publishes a message for queue name to
// land in it: the bindings to it (the first three), else the default
// exchange with its name as the routing key.
func (p *Pass) publishHere(name string) string {
	var ways []string
	for _, b := range p.Vhost.Bindings {
		if b.DestinationType != topology.DestQueue || b.Destination != name || b.Source == "" {
			continue
		}
		if x := p.Vhost.Exchanges[b.Source]; x != nil && x.Type == "headers" {
			ways = append(ways, fmt.Sprintf("to exchange %q with the headers its binding matches", b.Source))
			continue
		}
		if x := p.Vhost.Exchanges[b.Source]; x != nil && x.Type == "fanout" {
			ways = append(ways, fmt.Sprintf("to exchange %q", b.Source))
			continue
		}
		if x := p.Vhost.Exchanges[b.Source]; x != nil && x.Type == "topic" && strings.ContainsAny(b.RoutingKey, "*#") {
			ways = append(ways, fmt.Sprintf("to exchange %q with a routing key that matches %q", b.Source, b.RoutingKey))
			continue
		}
		ways = append(ways, fmt.Sprintf("to exchange %q with routing key %q", b.Source, b.RoutingKey))
	}
	switch {
	case len(ways) == 0:
		return fmt.Sprintf("to the default exchange (\"\") with routing key %q", name)
	case len(ways) > 3:
		ways = append(ways[:3], "…")
	}
	return strings.Join(ways, " or ") + ", where this queue is bound"
}
