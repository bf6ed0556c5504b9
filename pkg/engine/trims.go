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
	"github.com/mqctl/mqctl/pkg/route"
	"github.com/mqctl/mqctl/pkg/topology"
)

// trim is a queue to which a plan's policy changes give a length limit
// below what it may hold: RabbitMQ drops (or dead-letters) the oldest
// messages over the limit at once, when the policy is applied, where the
// queue's overflow is drop-head (the default) — on every version, for
// classic and quorum queues alike. A classic queue also does so where the
// same policy change brings another overflow with the limit: it applies a
// policy's length limit before its overflow, while it still drops its head
// (rabbit_amqqueue_process:process_args_policy at v3.10.8, v4.0.5 and
// v4.3.5); a quorum queue takes both at once.
type trim struct {
	vhost, queue string
	// key is the limit's policy key (max-length, max-length-bytes), limit
	// its value in force after the plan, by the plan's policy changes that
	// make it so (changedPolicies).
	key, unit string
	limit     int64
	by        string
	// fate is where what is over the limit goes after the plan, dead
	// letters of reason maxlen: dropped, without a dead-letter exchange or
	// with one that routes them to no queue, or dead-lettered.
	fate dlFate
	// held is what the queue holds ready (messages or bytes, as key
	// counts), as read.
	held int64
	// between: the limit is in force while the apply runs, not (or not
	// as low) after it: apply writes policies before it deletes those the
	// plan drops, and until then one of those outranks the policy that
	// keeps the limit off (a priority lowered beside a policy dropped).
	between bool
	// late is the overflow (reject-publish, reject-publish-dlx) that the
	// plan's policy changes give a classic queue with its limit, and that
	// comes into force only after the limit ("" when the queue drops its
	// head after the plan too).
	late string
}

// limitKeys are the length limits a policy may give a queue, with the
// queue argument that stands for each.
var limitKeys = []struct{ policy, arg, unit string }{
	{"max-length", "x-max-length", "messages"},
	{"max-length-bytes", "x-max-length-bytes", "bytes"},
}

// effect is one queue that a plan leaves in place (neither deletes nor
// replaces: their messages are the safety check's), and is no stream, in a
// vhost the plan changes: its vhost before the plan (before, simulated by
// was) and after it (after, will), and by, the plan's policy changes in
// force on the queue on either side (changedPolicies).
type effect struct {
	vhost, queue  string
	before, after *topology.Vhost
	was, will     *route.Simulator
	by            string
	// between simulates the vhost while the apply runs, when which asked
	// for it (effects.between): its writes of policies made, its deletes
	// of policies not yet (policyWrites): both in force, the higher
	// priority winning.
	between *route.Simulator
	// betweenBy names the plan's policy changes in force on the queue
	// while the apply runs first, then those of by.
	betweenBy string
}

// policyEffects calls f for each queue of cur, in a vhost where p
// changes policies (or operator policies), that p leaves in place
// (effect).
func policyEffects(p *plan.Plan, cur *topology.Topology, f func(effect)) {
	planEffects(p, cur, effects{onlyPolicies: true}, f)
}

// effects says which queues planEffects visits.
type effects struct {
	// onlyPolicies: in the vhosts where the plan changes policies (or
	// operator policies); otherwise where it changes anything.
	onlyPolicies bool
	// streams: the streams alone; otherwise every queue but the streams.
	streams bool
	// worth, when set, leaves out, before simulating it, a vhost (as the
	// broker holds it, before) where it is false.
	worth func(vhost string, before *topology.Vhost) bool
	// between: simulate each vhost while the apply runs too
	// (effect.between).
	between bool
}

// planEffects calls f for each queue of cur that p leaves in place, in the
// vhosts and of the sort which says.
func planEffects(p *plan.Plan, cur *topology.Topology, which effects, f func(effect)) {
	onlyPolicies, streams := which.onlyPolicies, which.streams
	touched := map[string]bool{}
	changed := map[plan.ObjectRef]bool{}
	for i := range p.Changes {
		c := &p.Changes[i]
		if c.Kind.Policy() {
			touched[c.Vhost] = true
			changed[c.Ref()] = true
		} else if !onlyPolicies && c.Vhost != "" {
			touched[c.Vhost] = true
		}
	}
	// The queues p deletes or replaces, listed once a vhost has a queue
	// left in place: a plan that deletes every queue (a teardown) visits
	// none, and five callers each listed its 25,000 queues at 50,002
	// objects for nothing.
	var gone map[plan.ObjectRef]bool
	isGone := func(ref plan.ObjectRef) bool {
		if gone == nil {
			gone = map[plan.ObjectRef]bool{}
			for i := range p.Changes {
				if c := &p.Changes[i]; c.Kind == kind.Queue && (c.Action == plan.Delete || c.Action == plan.Replace) {
					gone[c.Ref()] = true
				}
			}
		}
		return gone[ref]
	}
	for _, vh := range slices.Sorted(maps.Keys(touched)) {
		before := cur.Vhosts[vh]
		if before == nil {
			continue // a vhost the plan creates holds no message
		}
		if which.worth != nil && !which.worth(vh, before) {
			continue
		}
		one := topology.New()
		one.Vhosts[vh] = before
		after := p.Project(one).Vhosts[vh]
		if after == nil {
			continue
		}
		was, will := route.New(before), route.New(after)
		var between *route.Simulator
		if which.between {
			between = route.New(policyWrites(p).Project(one).Vhosts[vh])
		}
		// The queues on both sides, in order: those of after that before
		// holds (after holds none of those p deletes).
		for _, q := range slices.Sorted(maps.Keys(after.Queues)) {
			if before.Queues[q] == nil || isGone(plan.ObjectRef{Kind: kind.Queue, Vhost: vh, Name: q}) || (before.Queues[q].Type == topology.QueueStream) != streams {
				continue
			}
			e := effect{vhost: vh, queue: q, before: before, after: after, was: was, will: will, between: between, by: changedPolicies(changed, vh, q, will, was)}
			if between != nil {
				e.betweenBy = changedPolicies(changed, vh, q, between, will, was)
			}
			f(e)
		}
	}
}

// policyWrites is the plan of p's writes of policies and operator
// policies alone, their deletes left out: what apply has done of p when it
// deletes policies (it writes them in the last phase of writes, and
// deletes the ones the plan drops after every write, kind.LatePhase; a
// vhost it deletes has no queue left to simulate).
func policyWrites(p *plan.Plan) *plan.Plan {
	out := &plan.Plan{}
	for _, c := range p.Changes {
		if c.Action != plan.Delete && c.Kind.Policy() {
			out.Changes = append(out.Changes, c)
		}
	}
	return out
}

// limitTrims lists the queues of cur that the policy changes of p give a
// length limit they did not have, or a lower one, with overflow drop-head
// after p (or drop-head where they refused publishes over the same limit):
// those whose messages over the limit RabbitMQ drops at once (streams,
// whose max-length-bytes is retention, are left out: policyEffects). It
// does so while the apply runs too: apply writes policies before it
// deletes the ones the plan drops (policyWrites), and a policy it keeps
// until then that outranks the plan's on a queue trims it as well
// (trim.between) where that is a lower limit than the plan's. held is for the caller to
// read.
func limitTrims(p *plan.Plan, cur *topology.Topology) []trim {
	var out []trim
	planEffects(p, cur, effects{onlyPolicies: true, between: true}, func(e effect) {
		ts := trimsIn(e, e.will)
		for _, b := range trimsIn(e, e.between) {
			i := slices.IndexFunc(ts, func(t trim) bool { return t.key == b.key })
			switch {
			case i < 0:
				b.between, b.by = true, e.betweenBy
				ts = append(ts, b)
			case b.limit < ts[i].limit:
				b.between, b.by = true, e.betweenBy
				ts[i] = b
			}
		}
		slices.SortStableFunc(ts, func(a, b trim) int { return strings.Compare(a.key, b.key) })
		out = append(out, ts...)
	})
	return out
}

// trimsIn is the trims of e's queue where sim is the vhost with the plan's
// policy changes (all of them, or those apply has made at some point).
func trimsIn(e effect, sim *route.Simulator) []trim {
	q := e.queue
	late := ""
	if !sim.DropsHead(q) {
		if e.before.Queues[q].TypeOrClassic() != topology.QueueClassic || !e.was.DropsHead(q) {
			return nil
		}
		overflow, _ := sim.QueueArg(q, "x-overflow")
		late = fmt.Sprint(overflow)
	}
	var out []trim
	for _, k := range limitKeys {
		limit, ok := intArg(sim, q, k.arg)
		if !ok {
			continue
		}
		// A queue that refused publishes over a limit may hold more
		// than it: drop-head now drops that at once.
		if old, had := intArg(e.was, q, k.arg); had && old <= limit && e.was.DropsHead(q) {
			continue
		}
		out = append(out, trim{vhost: e.vhost, queue: q, key: k.policy, unit: k.unit, limit: limit, by: e.by,
			fate: deadLetterFate(sim, q, route.MaxLen), late: late})
	}
	return out
}

func intArg(sim *route.Simulator, queue, key string) (int64, bool) {
	v, ok := sim.QueueArg(queue, key)
	if !ok {
		return 0, false
	}
	return topology.Args{key: v}.Int(key)
}

// changedPolicies names the policies of the plan's changes (changed) that
// are in force on queue of vhost after the plan or were before it: what
// gives it its new limit or overflow, or took its old one away.
func changedPolicies(changed map[plan.ObjectRef]bool, vhost, queue string, sims ...*route.Simulator) string {
	var by []string
	for _, sim := range sims {
		pol, op := sim.QueuePolicies(queue)
		for _, ref := range []plan.ObjectRef{{Kind: kind.Policy, Vhost: vhost, Name: pol}, {Kind: kind.OperatorPolicy, Vhost: vhost, Name: op}} {
			name := fmt.Sprintf("%s %q", ref.Kind.Label(), ref.Name)
			if ref.Name != "" && changed[ref] && !slices.Contains(by, name) {
				by = append(by, name)
			}
		}
	}
	if len(by) == 0 {
		return "the plan's policy changes"
	}
	return strings.Join(by, " and ")
}

// over is how much of what t's queue holds is over its new limit.
func (t trim) over() int64 { return max(0, t.held-t.limit) }

// String says what applying t does, for a note or a refusal.
func (t trim) String() string {
	what := fmt.Sprintf("the oldest %d", t.over())
	if t.unit == "bytes" {
		what = fmt.Sprintf("its oldest messages, %d bytes or more,", t.over())
	}
	fate := fmt.Sprintf("dead-letters %s at once to exchange %q", what, t.fate.exchange)
	switch {
	case t.fate.dropped && t.fate.configured:
		fate = fmt.Sprintf("dead-letters %s at once, and they are lost: %s", what, t.fate.why)
	case t.fate.dropped:
		fate = "drops " + what + " at once (" + t.fate.why + ")"
	}
	if t.late != "" {
		return fmt.Sprintf("%s: classic queue %q in vhost %q gets a length limit of %d %s (%s) with overflow %s, and it holds %d: "+
			"a classic queue applies a policy's length limit before its overflow, while it still drops its head, so RabbitMQ %s; "+
			"to keep them, bring the overflow in first: apply the policy with overflow %s and without %s, then add the limit",
			t.by, t.queue, t.vhost, t.limit, t.unit, t.key, t.late, t.held, fate, t.late, t.key)
	}
	if t.between {
		return fmt.Sprintf("%s: queue %q in vhost %q gets a length limit of %d %s (%s, overflow drop-head) while the apply runs (apply writes policies before it deletes those the plan drops, and until then a policy the plan drops is in force on it), and it holds %d: RabbitMQ %s; "+
			"to avoid it, drop that policy in an apply of its own first, then make the rest of the change",
			t.by, t.queue, t.vhost, t.limit, t.unit, t.key, t.held, fate)
	}
	return fmt.Sprintf("%s: queue %q in vhost %q gets a length limit of %d %s (%s, overflow drop-head), and it holds %d: RabbitMQ %s",
		t.by, t.queue, t.vhost, t.limit, t.unit, t.key, t.held, fate)
}

// readTrims reads what the queues of trims hold ready (readHeld; the count
// of messages the larger of the statistics' and the exact one; the bytes
// the statistics', in apply once they count what the exact read counted:
// broker ReadyCaughtUp) and returns those over their new limit.
func (e *Engine) readTrims(ctx context.Context, trims []trim, inspect inspectFunc) ([]trim, error) {
	vhosts, queues := make([]string, len(trims)), make([]string, len(trims))
	for i, t := range trims {
		vhosts[i], queues[i] = t.vhost, t.queue
	}
	hs, err := e.readHeld(ctx, vhosts, queues, inspect)
	if err != nil {
		return nil, err
	}
	var out []trim
	for i, t := range trims {
		t.held = max(hs[i].stats.Ready, hs[i].exact.Ready)
		if t.unit == "bytes" {
			// Only the statistics count bytes, and they lag: apply reads
			// them once they count what its exact read counted.
			st := hs[i].stats
			if inspect != nil && hs[i].exact.Ready > 0 {
				if st, err = e.c.ReadyCaughtUp(ctx, t.vhost, t.queue, hs[i].exact.Ready, broker.ReadySettle, broker.ReadyTimeout); err != nil {
					return nil, err
				}
			}
			t.held = st.ReadyBytes
		}
		if t.over() > 0 {
			out = append(out, t)
		}
	}
	return out, nil
}

// readTrimLosses is the trims of p's policy changes as losses: those whose
// dead letters reach a queue are told, the others (dropped, without a
// dead-letter exchange or by one that routes them nowhere) refused.
func (e *Engine) readTrimLosses(ctx context.Context, p *plan.Plan, cur *topology.Topology, inspect inspectFunc) (refused, told []string, err error) {
	trims, err := e.readTrims(ctx, limitTrims(p, cur), inspect)
	for _, t := range trims {
		if t.fate.dropped {
			refused = append(refused, t.String())
		} else {
			told = append(told, t.String())
		}
	}
	return refused, told, err
}
