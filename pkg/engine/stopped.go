package engine

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/mqctl/mqctl/pkg/broker"
	"github.com/mqctl/mqctl/pkg/kind"
	"github.com/mqctl/mqctl/pkg/plan"
	"github.com/mqctl/mqctl/pkg/topology"
)

// noteStoppedQuorumQueues notes each quorum queue desired declares, the
// broker has and p leaves in place (neither deletes nor replaces), for
// which no Raft server runs (broker.StoppedQuorumQueues): the broker lists
// it as running, it nacks every publish, and the diff finds it as the file
// says, so apply does nothing for it. The note says how to check it and
// the fix that loses nothing. A vhost whose queues the broker will not
// tell about gets a note saying so: the plan does not depend on it.
//
// Only where the broker has the leader health check (4.1+): one request
// a vhost, and a Raft status only for the queues it flags. Before it,
// telling such a queue takes the queue listing with its statistics and
// (4.0) one Raft status a quorum queue, seconds more for a plan of
// thousands that changes nothing; mqctl status checks them there.
func (e *Engine) noteStoppedQuorumQueues(ctx context.Context, desired *topology.Topology, p *plan.Plan, l *Live) {
	if !e.c.RabbitMQVersion().LeaderHealthCheck() {
		return
	}
	replaced := map[queueRef]bool{}
	for _, ch := range p.Changes {
		if ch.Kind == kind.Queue && ch.RisksMessages() {
			replaced[queueRef{ch.Vhost, ch.Name}] = true
		}
	}
	for _, vh := range desired.VhostNames() {
		// The broker's quorum queues that the file declares, picked from
		// the broker's queues by their type and sorted once picked: a
		// no-op plan of 50,002 objects without one quorum queue sorted
		// every name of the file (QueueNames) and looked each up in the
		// state read, 9-11 ms on its way to the flows.
		var names []string
		var have map[string]*topology.Queue
		if l != nil && l.current.State != nil && l.current.State.Vhosts[vh] != nil {
			have = l.current.State.Vhosts[vh].Queues
		}
		want := desired.Vhosts[vh].Queues
		for name, q := range have {
			if q == nil || q.Type != topology.QueueQuorum || replaced[queueRef{vh, name}] {
				continue
			}
			if _, declared := want[name]; declared {
				names = append(names, name)
			}
		}
		if len(names) == 0 {
			continue
		}
		slices.Sort(names)
		rows, err := e.stoppedRows(ctx, vh, names)
		if err == nil {
			var stopped map[string]broker.Stopped
			if stopped, err = e.c.StoppedQuorumQueues(ctx, vh, rows, names); err == nil {
				for _, name := range names {
					if s, ok := stopped[name]; ok {
						var last *int64
						for _, r := range rows {
							if r.Name == name && r.Known {
								last = &r.Messages
							}
						}
						e.note("queue %q in vhost %q: %s", name, vh, s.Advice(vh, name, last))
					}
				}
				continue
			}
		}
		e.note("mqctl could not check whether the Raft servers of the quorum queues of vhost %q run (%v): one that has none takes no message, and apply does not repair it; mqctl status reports it", vh, err)
	}
}

// stoppedRows are the listing rows StoppedQuorumQueues reads for the
// quorum queues names of vhost: the queue listing where the version needs
// it (before 4.1: its statistics tell a queue that never ran, 3.10 its
// leader), else rows made from names (4.1+ asks its health check).
func (e *Engine) stoppedRows(ctx context.Context, vhost string, names []string) ([]broker.QueueActivity, error) {
	if !e.c.RabbitMQVersion().LeaderHealthCheck() {
		return e.c.ListQueueActivity(ctx, vhost)
	}
	rows := make([]broker.QueueActivity, 0, len(names))
	for _, n := range slices.Sorted(slices.Values(names)) {
		rows = append(rows, broker.QueueActivity{Name: n, Type: topology.QueueQuorum})
	}
	return rows, nil
}

// stoppedAdvice is, for the quorum queues names of vhost that no Raft
// server runs for, what each holds and the fix that loses nothing
// ("; queue "q": …" each), "" where the broker tells none.
func (e *Engine) stoppedAdvice(ctx context.Context, vhost string, names []string) string {
	rows, err := e.stoppedRows(ctx, vhost, names)
	if err != nil {
		return ""
	}
	stopped, err := e.c.StoppedQuorumQueues(ctx, vhost, rows, names)
	if err != nil {
		return ""
	}
	var b strings.Builder
	for _, name := range slices.Sorted(maps.Keys(stopped)) {
		fmt.Fprintf(&b, "; queue %q: %s", name, stopped[name].Advice(vhost, name, nil))
	}
	return b.String()
}

// stoppedAtStake finds, among the quorum queues p deletes or replaces with
// messages or consumers at stake, those no Raft server runs for
// (broker.StoppedQuorumQueues, every version): they deliver nothing, so
// "drain it first" is no fix, and the advice says the one that keeps what
// they hold. Nil when there are none, or the broker will not tell (a
// failure leaves the refusal as it is).
func (e *Engine) stoppedAtStake(ctx context.Context, p *plan.Plan) map[queueRef]string {
	perVhost := map[string][]string{}
	messages := map[queueRef]int64{}
	for _, c := range p.Changes {
		if c.Kind == kind.Queue && c.RisksMessages() && (c.Messages > 0 || c.Consumers > 0) && plan.QueueType(c.Before) == topology.QueueQuorum {
			perVhost[c.Vhost] = append(perVhost[c.Vhost], c.Name)
			messages[queueRef{c.Vhost, c.Name}] = c.Messages
		}
	}
	var out map[queueRef]string
	for _, vh := range slices.Sorted(maps.Keys(perVhost)) {
		names := perVhost[vh]
		// The listing on every version: its statistics tell a queue that
		// never ran, and 4.1+'s health check needs no more than names.
		rows, err := e.stoppedRows(ctx, vh, names)
		if err != nil {
			continue
		}
		stopped, err := e.c.StoppedQuorumQueues(ctx, vh, rows, names)
		if err != nil {
			continue
		}
		for name, s := range stopped {
			if out == nil {
				out = map[queueRef]string{}
			}
			n := messages[queueRef{vh, name}]
			out[queueRef{vh, name}] = s.Advice(vh, name, &n)
		}
	}
	return out
}

// noteStoppedAtStake notes each queue of stoppedAtStake: the plan shows
// its messages at stake, and apply refuses to lose them; neither drains
// it.
func (e *Engine) noteStoppedAtStake(ctx context.Context, p *plan.Plan) {
	at := e.stoppedAtStake(ctx, p)
	refs := slices.SortedFunc(maps.Keys(at), func(a, b queueRef) int {
		return strings.Compare(a.vhost+"\x00"+a.name, b.vhost+"\x00"+b.name)
	})
	for _, r := range refs {
		e.note("queue %q in vhost %q, which this plan deletes or replaces, cannot be drained: %s", r.name, r.vhost, at[r])
	}
}
