package lint

import (
	"slices"
	"sort"

	"github.com/mqctl/mqctl/pkg/route"
	"github.com/mqctl/mqctl/pkg/topology"
)

// QueueRole is what the analysis concludes a queue is for. Lint, graph and
// status all read queues through this one classification.
type QueueRole struct {
	// Role is working, dead-letter (a DLQ) or delay (a delay tier).
	Role topology.QueueRole
	// PerMessage marks a delay queue without a queue-level TTL (it relies
	// on per-message expiration).
	PerMessage bool
	// From lists, for a DLQ, the queues whose dead letters reach it.
	From []string
	// ReturnsTo lists, for a delay queue, where its expired messages go.
	ReturnsTo []string
	// DelayMS is a delay queue's message TTL in milliseconds (0: unknown
	// or per-message).
	DelayMS int64
	// Collects lists, for a queue fed only through alternate exchanges,
	// the exchanges whose unroutable messages it collects (its Role stays
	// working).
	Collects []string
	// NamedDLQ is true for a queue no dead letters reach but named as a DLQ
	// (orders.dlq), and NamedDLQOf is the declared queue its name makes it
	// the DLQ of ("" when none). Its Role stays working: only a client puts
	// messages there (and an alternate exchange, when one is bound to it
	// beside other exchanges; a queue fed only through alternate exchanges
	// is no DLQ by name but a collector, see Collects).
	NamedDLQ   bool
	NamedDLQOf string
}

// Roles classifies every queue of v. Sugar decides first (dead_letter.queue
// declares a DLQ, retry.delays a delay tier); other queues are read from
// the routing simulation: a queue with a TTL whose dead-letter route points
// back towards work (expired messages reach a queue consumers work from,
// or its dead-letter exchange is the default exchange or one that feeds
// working queues) is a delay tier, and a queue that other queues' dead
// letters reach is a DLQ.
func Roles(v *topology.Vhost) map[string]QueueRole { return RolesWith(v, route.New(v)) }

// RolesWith is Roles with a simulator already built for v.
func RolesWith(v *topology.Vhost, sim *route.Simulator) map[string]QueueRole {
	return newFacts(v, sim).roles()
}

func (f *facts) roles() map[string]QueueRole {
	out := make(map[string]QueueRole, len(f.queueNames))
	for _, q := range f.queueNames {
		r := QueueRole{Role: topology.RoleWorking}
		switch {
		case f.isDelay(q):
			r.Role = topology.RoleDelay
			r.PerMessage = f.perMsgDelay[q]
			if ttl, ok := f.qargs[q].Int(argTTL); ok {
				r.DelayMS = ttl
			} else {
				r.DelayMS = f.v.Queues[q].Delay
			}
			if d := f.dl[q]; d != nil {
				for _, t := range d.Targets {
					if t != q {
						r.ReturnsTo = append(r.ReturnsTo, t)
					}
				}
			}
		case f.dlq[q]:
			r.Role = topology.RoleDeadLetter
			if o := f.v.Queues[q].Origin; o != "" {
				r.From = append(r.From, o)
			}
		}
		r.Collects = f.collects[q]
		r.NamedDLQOf, r.NamedDLQ = f.namedDLQ[q]
		out[q] = r
	}
	// The DLQs' From lists, kept apart from the roles while they grow.
	// Each queue comes once, and reaches each target once: q is already
	// among t's From only as the queue t is declared for, which comes
	// first. A look through From for each was the cube of the queues where
	// one fanout exchange takes every queue's dead letters to every DLQ
	// (12 s at 1,000 queues).
	from := map[string][]string{}
	for q, r := range out {
		if r.Role == topology.RoleDeadLetter {
			from[q] = r.From
		}
	}
	for _, q := range f.queueNames {
		d := f.dl[q]
		if d == nil || f.isDelay(q) {
			continue
		}
		for _, t := range d.Targets {
			if fs, ok := from[t]; ok && t != q && (len(fs) == 0 || fs[0] != q) {
				from[t] = append(fs, q)
			}
		}
	}
	for q, fs := range from {
		r := out[q]
		r.From = fs
		sort.Strings(r.From)
		out[q] = r
	}
	return out
}

func contains(list []string, s string) bool {
	for _, e := range list {
		if e == s {
			return true
		}
	}
	return false
}

// sortedContains is contains for a sorted list (dlInfo.Targets): the DLQs
// of a fanout dead-letter exchange looked through theirs, thousands each.
func sortedContains(list []string, s string) bool {
	_, found := slices.BinarySearch(list, s)
	return found
}
