package engine

import (
	"fmt"
	"maps"
	"slices"

	"github.com/mqctl/mqctl/pkg/kind"
	"github.com/mqctl/mqctl/pkg/plan"
	"github.com/mqctl/mqctl/pkg/rmqversion"
	"github.com/mqctl/mqctl/pkg/topology"
)

// checkVhostLimits refuses plan p when a vhost's max-queues, as the broker
// holds it, would refuse the apply's queue declarations, or its
// max-connections of 0 the apply's lock connection, and when it writes a
// limit that would refuse the next apply's lock (max-queues without room
// for it, max-connections 0): RabbitMQ checks
// the limit when a queue is declared (queue limit in vhost is reached,
// on every version), and the apply's lock is a queue of the vhost while
// it runs (lock.QueueName). The lock needs a free place before anything
// changes; the queues the plan declares need places after the deletes it
// makes, under the limit the apply writes before them when the file
// raises it (plan.Loosened). The queues counted are those the read
// holds: RabbitMQ 4.3's definitions export leaves exclusive queues out,
// so the check errs on the side of letting an apply through. A vhost
// whose limits mqctl could not read is not checked.
func checkVhostLimits(p *plan.Plan, live *topology.Live, version rmqversion.Version) error {
	t := tallyLimits(p)
	out := t.writtenRefusals(live)
	for _, vh := range slices.Sorted(maps.Keys(t.changed)) {
		if r := t.heldRefusal(vh, live); r != nil {
			out = append(out, *r)
		}
	}
	if len(out) == 0 {
		return nil
	}
	return &rmqversion.RefusalsError{Version: version.OrDefault(), Refusals: out}
}

// limitsTally is what a plan does, vhost by vhost, that the vhosts'
// limits bear on.
type limitsTally struct {
	changed          map[string]bool
	creates, deletes map[string]int           // queues the plan declares and deletes
	loosened         map[string]topology.Args // the limits a loosening change writes first
	written          map[string]int64         // the max-queues the plan writes
	shut             map[string]bool          // the plan writes max-connections: 0
}

func tallyLimits(p *plan.Plan) limitsTally {
	t := limitsTally{changed: map[string]bool{}, creates: map[string]int{}, deletes: map[string]int{},
		loosened: map[string]topology.Args{}, written: map[string]int64{}, shut: map[string]bool{}}
	for _, c := range p.Changes {
		t.changed[c.Vhost] = true
		switch {
		case c.Kind == kind.Queue && c.Action == plan.Create:
			t.creates[c.Vhost]++
		case c.Kind == kind.Queue && c.Action == plan.Delete:
			t.deletes[c.Vhost]++
		case c.Kind == kind.VhostLimits:
			if it := plan.Loosened(&c); it != nil {
				t.loosened[c.Vhost] = it.Settings
			}
			if o, ok := c.After.(plan.ItemObject); ok && o.Item != nil {
				if n, ok := o.Settings.Int("max-queues"); ok && n >= 0 {
					t.written[c.Vhost] = n
				}
				if n, ok := o.Settings.Int("max-connections"); ok && n == 0 {
					t.shut[c.Vhost] = true
				}
			}
		}
	}
	return t
}

// writtenRefusals are the limits the plan writes that would refuse the
// next apply.
func (t limitsTally) writtenRefusals(live *topology.Live) []rmqversion.Refusal {
	var out []rmqversion.Refusal
	// A limit the plan writes that leaves no room for the next apply's
	// lock: every apply after it would be refused (below), and RabbitMQ
	// refuses every queue declaration there (lint MQ304).
	for _, vh := range slices.Sorted(maps.Keys(t.written)) {
		held := 0
		if v := live.State.Vhosts[vh]; v != nil {
			held = len(v.Queues)
		}
		if after := held - t.deletes[vh] + t.creates[vh]; int64(after+1) > t.written[vh] {
			out = append(out, rmqversion.Refusal{Vhost: vh, Object: "vhost limits", Key: "max-queues",
				Reason: fmt.Sprintf("the file limits the vhost to %d queues (max-queues), and it holds %s after the apply: the next apply could not take its lock, a queue of the vhost (mqctl.lock), and RabbitMQ refuses every queue declaration there (queue limit in vhost is reached)", t.written[vh], queues(after)),
				Fix:    fmt.Sprintf("raise max-queues in the file to at least %d, with room for the queues applications declare", after+1)})
		}
	}
	// A connection limit of 0 the plan writes: the apply writes it last,
	// but every apply after it would be refused (below), its lock an AMQP
	// connection, and so would every client of the vhost.
	for _, vh := range slices.Sorted(maps.Keys(t.shut)) {
		out = append(out, rmqversion.Refusal{Vhost: vh, Object: "vhost limits", Key: "max-connections",
			Reason: "the file limits the vhost to 0 connections (max-connections: 0): every client is refused, and so is the next apply, which locks the vhost over an AMQP connection before it changes anything",
			Fix:    "give max-connections a number of connections of at least 1, with room for the applications and mqctl (or leave it out, or -1, for no limit)"})
	}
	return out
}

// heldRefusal is why the limits the broker holds for vhost vh, which the
// plan changes, would refuse this apply: its lock, or its declarations
// past max-queues. Nil when they would not.
func (t limitsTally) heldRefusal(vh string, live *topology.Live) *rmqversion.Refusal {
	v := live.State.Vhosts[vh]
	if v == nil {
		return nil // created by the apply: no limits yet
	}
	if _, unread := live.UnreadKind(vh, kind.VhostLimits); unread {
		return nil
	}
	it := v.Items.Get(kind.VhostLimits, vh)
	if it == nil {
		return nil
	}
	if conns, ok := it.Settings.Int("max-connections"); ok && conns == 0 {
		return &rmqversion.Refusal{Vhost: vh, Object: "vhost limits", Key: "max-connections",
			Reason: "the vhost accepts no connection (max-connections: 0), and apply locks the vhost over an AMQP connection before it changes anything",
			Fix:    "raise max-connections on the broker first (rabbitmqctl set_vhost_limits): a limit the file raises is written after the lock is taken"}
	}
	limit, ok := it.Settings.Int("max-queues")
	if !ok || limit < 0 {
		return nil
	}
	held := len(v.Queues)
	if held+1 > int(limit) {
		return &rmqversion.Refusal{Vhost: vh, Object: "vhost limits", Key: "max-queues",
			Reason: fmt.Sprintf("the vhost holds %s and limits itself to %d (max-queues): the apply's lock is a queue of the vhost (mqctl.lock, held while it runs), and RabbitMQ would refuse it (queue limit in vhost is reached)", queues(held), limit),
			Fix:    fmt.Sprintf("raise max-queues to at least %d (rabbitmqctl set_vhost_limits, or the management API), with room for the queues applications declare", held+1+t.creates[vh])}
	}
	after, limited := t.declareLimit(vh, live)
	if !limited {
		return nil
	}
	if need := held - t.deletes[vh] + t.creates[vh] + 1; t.creates[vh] > 0 && need > after {
		return &rmqversion.Refusal{Vhost: vh, Object: "vhost limits", Key: "max-queues",
			Reason: fmt.Sprintf("the vhost holds %s and limits itself to %d (max-queues) while the queues are declared; the apply deletes %d, declares %d and holds its lock queue (mqctl.lock), %d in all: RabbitMQ would refuse the declarations past the limit (queue limit in vhost is reached)", queues(held), after, t.deletes[vh], t.creates[vh], need),
			Fix:    fmt.Sprintf("raise max-queues to at least %d (limits: {max-queues: %d} in the file: mqctl writes a raised limit before the declarations), with room for the queues applications declare; or declare fewer queues", need, need)}
	}
	return nil
}

// declareLimit is vhost vh's max-queues while the apply declares its
// queues: the one the broker holds, or the one a loosening change of the
// file writes before the declarations (plan.Loosened). limited is false
// without one, or when mqctl could not read the vhost's limits.
func (t limitsTally) declareLimit(vh string, live *topology.Live) (limit int, limited bool) {
	v := live.State.Vhosts[vh]
	if v == nil {
		return 0, false
	}
	if _, unread := live.UnreadKind(vh, kind.VhostLimits); unread {
		return 0, false
	}
	it := v.Items.Get(kind.VhostLimits, vh)
	if it == nil {
		return 0, false
	}
	n, ok := it.Settings.Int("max-queues")
	if l := t.loosened[vh]; l != nil {
		n, ok = l.Int("max-queues")
	}
	if !ok || n < 0 {
		return 0, false
	}
	return int(n), true
}

// deleteQueuesFirst sets p.QueuesDeletedFirst: the vhosts whose queue
// deletes must run before the apply's declarations, not after them as
// make before break has it (kind.Spec.DeleteLate), because their
// max-queues (in live, or as the file loosens it first) has room for the
// queues the plan declares, beside those the vhost holds and the apply's
// lock, only once the queues the plan deletes are gone. Where it has no
// room even then, checkVhostLimits refuses the plan. The user is told of
// each such vhost.
func (e *Engine) deleteQueuesFirst(p *plan.Plan, live *topology.Live) {
	t := tallyLimits(p)
	p.QueuesDeletedFirst = nil
	for _, vh := range slices.Sorted(maps.Keys(t.deletes)) {
		v := live.State.Vhosts[vh]
		limit, limited := t.declareLimit(vh, live)
		if v == nil || !limited || t.creates[vh] == 0 {
			continue
		}
		if need := len(v.Queues) + t.creates[vh] + 1; need > limit {
			p.QueuesDeletedFirst = append(p.QueuesDeletedFirst, vh)
			e.note("vhost %q: apply deletes the queues the plan drops before it declares the new ones, not after: the vhost's max-queues (%d) has no room for both, and a message routed to a deleted queue meanwhile goes nowhere (raise max-queues to at least %d to keep both until the new ones are bound)", vh, limit, need)
		}
	}
}

// queues is "1 queue" or "n queues".
func queues(n int) string {
	if n == 1 {
		return "1 queue"
	}
	return fmt.Sprintf("%d queues", n)
}
