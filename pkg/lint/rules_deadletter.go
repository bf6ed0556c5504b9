package lint

import (
	"fmt"
	"sort"
	"strings"

	"github.com/mqctl/mqctl/pkg/route"
	"github.com/mqctl/mqctl/pkg/topology"
)

// MQ101: a queue whose failed messages are discarded.
func runNoDLX(p *Pass) []Finding {
	var out []Finding
	for _, name := range p.queueNames {
		q := p.Vhost.Queues[name]
		if p.dl[name] != nil || q.Type == topology.QueueStream || p.dlq[name] || p.isDelay(name) {
			continue
		}
		out = append(out, p.queueFinding(q,
			"queue %q has no dead-letter exchange: a message that is %s is discarded and the failure leaves no trace. "+
				"Add dead_letter: {exchange: <dlx>, queue: %s.dlq} (or a dead-letter-exchange policy) so failed messages are kept for inspection and replay",
			name, reasonPhrase(p.Sim.Reasons(name)), name))
	}
	return out
}

// reasonPhrase renders the ways a queue dead-letters: "rejected by a
// consumer, expires or is dropped by the length limit".
func reasonPhrase(rs []route.Reason) string {
	var parts []string
	for _, r := range rs {
		switch r {
		case route.Rejected:
			parts = append(parts, "rejected by a consumer")
		case route.Expired:
			parts = append(parts, "expires")
		case route.MaxLen:
			parts = append(parts, "pushed out by the length limit")
		case route.DeliveryLimit:
			parts = append(parts, "redelivered past the delivery limit")
		}
	}
	switch len(parts) {
	case 0:
		return "rejected by a consumer"
	case 1:
		return parts[0]
	default:
		return strings.Join(parts[:len(parts)-1], ", ") + " or " + parts[len(parts)-1]
	}
}

// dlxSource says where a queue's dead-letter exchange comes from.
func (p *Pass) dlxSource(q *topology.Queue) string {
	if q.Arguments.Has(argDLX) {
		return "x-dead-letter-exchange"
	}
	if pol, _ := p.Sim.QueuePolicies(q.Name); pol != "" {
		return fmt.Sprintf("dead-letter-exchange of policy %q", pol)
	}
	return "dead-letter-exchange of its policy"
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
		out = append(out, p.queueFinding(q,
			"queue %q dead-letters to exchange %q (%s), which is not declared: RabbitMQ drops every dead letter of this queue silently. "+
				"Declare exchange %q and bind a DLQ to it, or correct the exchange name",
			name, d.Exchange, p.dlxSource(q), d.Exchange))
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
			if len(r.Route.Result.Deliveries) > 0 || len(r.Route.Result.Unsimulated) > 0 {
				fm.routed = true // delivered, or passed through a plugin exchange the simulation cannot follow
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
		switch {
		case d.HasDLRK && d.Exchange == "":
			msg = fmt.Sprintf("dead letters of queue %q go to the default exchange with routing key %q (x-dead-letter-routing-key), and no queue %q is declared: RabbitMQ drops them silently. "+
				"Declare queue %q as the DLQ, or set x-dead-letter-routing-key to the name of an existing queue",
				name, d.DLRK, d.DLRK, d.DLRK)
		case d.HasDLRK:
			msg = fmt.Sprintf("dead letters of queue %q go to %s with routing key %q (x-dead-letter-routing-key), which no binding matches: RabbitMQ drops them silently. "+
				"Bind a DLQ to %s for %q (dead_letter.queue does this), or set x-dead-letter-routing-key to a key that is bound",
				name, exchangeLabel(d.Exchange), d.DLRK, exchangeLabel(d.Exchange), d.DLRK)
		case d.Exchange == "":
			msg = fmt.Sprintf("dead letters of queue %q go to the default exchange with the routing key they were published with (no x-dead-letter-routing-key is set), which delivers them to the queue named by that key, and for %s no such queue exists: RabbitMQ drops them silently. "+
				"Set x-dead-letter-routing-key to the name of a DLQ (dead_letter.queue does this)",
				name, joinOr(bad))
		default:
			msg = fmt.Sprintf("dead letters of queue %q go to %s with the routing key they were published with (no x-dead-letter-routing-key is set), and for %s no binding matches: RabbitMQ drops them silently. "+
				"Set x-dead-letter-routing-key to %q and bind a DLQ to %s with that key (dead_letter.queue does both)",
				name, exchangeLabel(d.Exchange), joinOr(bad), name, exchangeLabel(d.Exchange))
		}
		out = append(out, p.queueFinding(q, "%s", msg))
	}
	return out
}

func joinOr(items []string) string {
	const show = 4
	if len(items) > show {
		return strings.Join(items[:show], ", ") + fmt.Sprintf(" and %d more", len(items)-show)
	}
	if len(items) == 1 {
		return items[0]
	}
	return strings.Join(items[:len(items)-1], ", ") + " and " + items[len(items)-1]
}

// settledTargets is where q's dead letters come to rest: the queues its
// dead letters reach, with each delay queue replaced by the queues it
// returns messages to. q itself is left out (a loop is MQ105's business).
func (p *Pass) settledTargets(q string) []string {
	seen := map[string]bool{}
	var out []string
	add := func(t string) {
		if t != q && !seen[t] {
			seen[t] = true
			out = append(out, t)
		}
	}
	for _, t := range p.dl[q].Targets {
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
	sort.Strings(out)
	return out
}

// MQ104: dead letters of one queue landing where they do not belong.
func runDLCrossDelivered(p *Pass) []Finding {
	var out []Finding
	for _, name := range p.queueNames {
		d := p.dl[name]
		if d == nil || d.Missing || p.isDelay(name) {
			continue
		}
		settled := p.settledTargets(name)
		var foreign, working []string
		for _, t := range settled {
			tq := p.Vhost.Queues[t]
			if tq == nil {
				continue
			}
			if tq.Role == topology.RoleDeadLetter && tq.Origin != "" && tq.Origin != name {
				foreign = append(foreign, t)
			}
			if p.publishedTo(t) && !p.isDelay(t) {
				working = append(working, t)
			}
		}
		if len(settled) < 2 && len(foreign) == 0 && len(working) == 0 {
			continue
		}
		q := p.Vhost.Queues[name]
		fix := fmt.Sprintf("Give the queue its own dead-letter routing key (x-dead-letter-routing-key: %s) and bind only its DLQ with that key — dead_letter.queue does this", name)
		var msg string
		switch {
		case len(settled) > 1:
			msg = fmt.Sprintf("dead letters of queue %q reach %d queues (%s)%s. A failure in one consumer shows up beside other queues' failures, and replaying a DLQ delivers messages to consumers that never saw them. %s",
				name, len(settled), queuesList(settled), p.exampleRoute(d), fix)
		case len(foreign) > 0:
			msg = fmt.Sprintf("dead letters of queue %q land in %s, the DLQ of queue %q%s. They are mixed with another queue's failures and a replay sends them to the wrong consumers. %s",
				name, foreign[0], p.Vhost.Queues[foreign[0]].Origin, p.exampleRoute(d), fix)
		default:
			msg = fmt.Sprintf("dead letters of queue %q land in queue %s, which also receives regular traffic%s. Its consumers process another queue's failures as new work. "+
				"Send dead letters to a DLQ of their own — dead_letter: {exchange: <dlx>, queue: %s.dlq}",
				name, working[0], p.exampleRoute(d), name)
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
	return fmt.Sprintf(": %s delivers key %q to %s", exchangeLabel(best.Route.Exchange), best.Route.RoutingKey, queuesList(best.Route.Result.Queues()))
}

// MQ105: dead-letter cycles with no delay on the way.
func runDLLoop(p *Pass) []Finding {
	// Graph of dead-letter edges between queues without a queue TTL.
	fast := func(q string) bool { return !p.hasTTL(q) }
	edges := map[string][]string{}
	for _, q := range p.queueNames {
		d := p.dl[q]
		if d == nil || !fast(q) {
			continue
		}
		for _, t := range d.Targets {
			if fast(t) {
				edges[q] = append(edges[q], t)
			}
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
	return out
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
