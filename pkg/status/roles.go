package status

import (
	"sort"

	"github.com/mqctl/mqctl/pkg/route"
	"github.com/mqctl/mqctl/pkg/topology"
)

// roleInfo is why a queue exists, as far as status needs to know.
type roleInfo struct {
	role topology.QueueRole
	// from lists the queues whose dead letters reach a DLQ.
	from []string
	// returnsTo lists the queues a delay tier's expired messages go back to.
	returnsTo []string
	// delay is a delay tier's queue TTL in milliseconds (0: unknown).
	delay int64
}

// classify gives every queue of v a role. Sugar decides first (a queue
// declared by dead_letter.queue is a DLQ, one declared by retry.delays a
// delay tier); other queues are classified from the routing simulation the
// way lint reads them: a queue with a TTL whose dead letters go back to a
// queue consumers work from is a delay tier, and a queue other queues'
// dead letters reach is a DLQ.
func classify(v *topology.Vhost) map[string]*roleInfo {
	sim := route.New(v)
	names := v.QueueNames()
	args := make(map[string]topology.Args, len(names))
	into := map[string][]*topology.Binding{}
	for _, b := range v.Bindings {
		if b.DestinationType == topology.DestQueue {
			into[b.Destination] = append(into[b.Destination], b)
		}
	}
	dlx := map[string]bool{} // exchanges that are some queue's dead-letter exchange
	for _, q := range names {
		args[q] = sim.QueueArgs(q)
		if x, ok := args[q].String("x-dead-letter-exchange"); ok {
			dlx[x] = true
		}
	}
	targets := make(map[string][]string, len(names))
	for _, q := range names {
		targets[q] = deadLetterTargets(sim, q, args[q], into[q])
	}
	// workingLooking: a queue with its own dead-letter exchange, or one
	// that a binding from a regular (non dead-letter) exchange feeds.
	workingLooking := func(q string) bool {
		queue := v.Queues[q]
		if queue == nil || queue.Role == topology.RoleDeadLetter || queue.Role == topology.RoleDelay {
			return false
		}
		if args[q].Has("x-dead-letter-exchange") {
			return true
		}
		for _, b := range into[q] {
			if !dlx[b.Source] {
				return true
			}
		}
		return false
	}

	out := make(map[string]*roleInfo, len(names))
	for _, q := range names {
		queue := v.Queues[q]
		ri := &roleInfo{role: topology.RoleWorking}
		out[q] = ri
		ttl, hasTTL := args[q].Int("x-message-ttl")
		switch {
		case queue.Role == topology.RoleDelay:
			ri.role = topology.RoleDelay
		case queue.Role == topology.RoleDeadLetter || queue.Type == topology.QueueStream || !hasTTL || len(targets[q]) == 0:
			continue
		default:
			returns := false
			for _, t := range targets[q] {
				if workingLooking(t) {
					returns = true
				}
			}
			if !returns {
				continue
			}
			ri.role = topology.RoleDelay
		}
		ri.returnsTo = targets[q]
		ri.delay = queue.Delay
		if ri.delay == 0 && hasTTL {
			ri.delay = ttl
		}
	}
	for _, q := range names {
		if v.Queues[q].Role == topology.RoleDeadLetter {
			out[q].role = topology.RoleDeadLetter
			if o := v.Queues[q].Origin; o != "" {
				out[q].from = append(out[q].from, o)
			}
		}
	}
	for _, q := range names {
		if out[q].role == topology.RoleDelay {
			continue
		}
		for _, t := range targets[q] {
			if ti := out[t]; ti != nil && ti.role != topology.RoleDelay {
				ti.role = topology.RoleDeadLetter
				ti.from = appendUnique(ti.from, q)
			}
		}
	}
	for _, ri := range out {
		sort.Strings(ri.from)
	}
	return out
}

// deadLetterTargets lists the queues other than q that q's rejected
// messages reach. Without a dead-letter routing key a dead letter keeps
// the key it was published with: the key of each binding into q is tried,
// and q's own name (a publish through the default exchange).
func deadLetterTargets(sim *route.Simulator, q string, args topology.Args, into []*topology.Binding) []string {
	if !args.Has("x-dead-letter-exchange") {
		return nil
	}
	msgs := []route.Message{{RoutingKey: q}}
	if !args.Has("x-dead-letter-routing-key") {
		for _, b := range into {
			msgs = append(msgs, route.Message{Exchange: b.Source, RoutingKey: b.RoutingKey, Headers: bindingHeaders(b.Arguments)})
		}
	}
	var out []string
	for _, m := range msgs {
		for _, t := range sim.DeadLetter(q, route.Rejected, m).Result.Queues() {
			if t != q {
				out = appendUnique(out, t)
			}
		}
	}
	sort.Strings(out)
	return out
}

// bindingHeaders is a message's headers that a headers binding matches.
func bindingHeaders(a topology.Args) map[string]any {
	if len(a) == 0 {
		return nil
	}
	h := make(map[string]any, len(a))
	for k, v := range a {
		if k != "x-match" {
			h[k] = v
		}
	}
	return h
}

func appendUnique(list []string, s string) []string {
	for _, e := range list {
		if e == s {
			return list
		}
	}
	return append(list, s)
}
