package route

import "sort"

// DefaultDepth is a sensible maxDepth for Trace.
const DefaultDepth = 10

// hopReasons notes on hop what its queue does with msg on arrival and,
// where it keeps it, its delayed retry and delivery limit, and returns the
// reasons it can dead-letter msg for: only the one it dead-letters it for
// at once when it keeps nothing (see OnArrival).
func (s *Simulator) hopReasons(hop *Hop, msg Message) []Reason {
	a := s.OnArrival(hop.Queue, msg)
	if a.Why != "" {
		hop.Arrival = &a
	}
	if !a.Keeps() {
		if a.Reason == "" {
			return nil
		}
		return []Reason{a.Reason}
	}
	if d, ok := s.DelayedRetry(hop.Queue); ok {
		hop.DelayedRetry = &d
	}
	if n, ok := s.DeliveryLimit(hop.Queue); ok {
		hop.DeliveryLimit = &n
	}
	return s.ReasonsFor(hop.Queue, msg)
}

// traceBudget caps the number of queue visits one trace records, so that a
// topology where every queue dead-letters to many others cannot make a
// trace explode; queues beyond it are marked Truncated.
const traceBudget = 10000

// Trace publishes m and follows every dead-letter hop after it,
// breadth-first, at most maxDepth hops deep (0: the publish only). For each
// queue reached it lists each reason the queue can dead-letter the message
// it holds (see ReasonsFor: m's expiration counts in the queues m reaches,
// never after, since dead letters have none) and where that dead letter
// goes, carrying the x-death header the
// broker would add, so RabbitMQ's cycle detection applies along the way.
//
// A hop back to a queue already on the path is marked Loop and not
// followed again; it is Dropped when RabbitMQ drops it (a cycle without a
// rejection, e.g. a queue whose expired messages return to itself), and
// delivered when RabbitMQ's cycle detection lets it through, usually
// because a rejection is part of the cycle (a retry loop: rejected into a
// delay queue, expired back to the work queue). See
// DeadLetterRoute.Cycles for where RabbitMQ 3.10-3.12 and 3.13.0-3.13.2
// depart from that rule.
func (s *Simulator) Trace(m Message, maxDepth int) Trace {
	t := Trace{Vhost: s.v.Name, Publish: s.Publish(m)}
	t.Hops = make([]Hop, len(t.Publish.Deliveries))
	type item struct {
		hop   *Hop
		msg   Message
		path  map[string]bool
		depth int
	}
	var work []item
	for i, d := range t.Publish.Deliveries {
		t.Hops[i] = Hop{Delivery: d}
		work = append(work, item{hop: &t.Hops[i], msg: m, path: map[string]bool{d.Queue: true}})
	}
	visits := len(work)
	for len(work) > 0 {
		it := work[0]
		work = work[1:]
		reasons := s.hopReasons(it.hop, it.msg)
		if len(reasons) == 0 {
			continue
		}
		if it.depth >= maxDepth || visits >= traceBudget {
			it.hop.Truncated = true
			continue
		}
		it.hop.Next = make([]DeadLetterHop, len(reasons))
		for i, reason := range reasons {
			r := s.DeadLetter(it.hop.Queue, reason, it.msg)
			dh := &it.hop.Next[i]
			dh.Route = r
			if reason == Expired {
				if ms, ok := s.ExpiresAfter(it.hop.Queue, it.msg); ok {
					dh.ExpiresAfterMS = &ms
				}
			}
			// Dropped unless an unsimulated plugin exchange may have taken it.
			dh.Dropped = len(r.Result.Deliveries) == 0 && len(r.Result.Unsimulated) == 0
			loops := append([]string(nil), r.Cycles...)
			dh.Hops = make([]Hop, len(r.Result.Deliveries))
			for j, d := range r.Result.Deliveries {
				dh.Hops[j] = Hop{Delivery: d}
				if it.path[d.Queue] {
					dh.Hops[j].Loop = true
					loops = append(loops, d.Queue)
					continue
				}
				path := make(map[string]bool, len(it.path)+1)
				for q := range it.path {
					path[q] = true
				}
				path[d.Queue] = true
				visits++
				work = append(work, item{hop: &dh.Hops[j], msg: r.Result.Message, path: path, depth: it.depth + 1})
			}
			if len(dh.Hops) == 0 {
				dh.Hops = nil
			}
			if len(loops) > 0 {
				sort.Strings(loops)
				dh.Loop = loops[0]
			}
		}
	}
	return t
}
