package engine

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/mqctl/mqctl/internal/parallel"
	"github.com/mqctl/mqctl/pkg/apply"
	"github.com/mqctl/mqctl/pkg/broker"
	"github.com/mqctl/mqctl/pkg/lock"
	"github.com/mqctl/mqctl/pkg/plan"
	"github.com/mqctl/mqctl/pkg/topology"
)

// policyLoss is one way a plan makes RabbitMQ lose messages that queues
// it leaves in place hold, at once or soon after: mostly through its
// policy changes; the safety check covers the queues the plan itself
// deletes or replaces.
type policyLoss struct {
	// what the check is about, for a read that failed.
	what string
	// fix is the advice for a queue at risk.
	fix string
	// read finds the queues at risk (with inspect, counted exactly over
	// AMQP): those apply refuses, and those it only tells of.
	read func(e *Engine, ctx context.Context, p *plan.Plan, cur *topology.Topology, inspect inspectFunc) (refused, told []string, err error)
}

// policyLosses are the changes that lose messages queues hold: a length
// limit below what a queue holds (trim), an expiry for a queue that holds
// messages and has no consumer (expiry), the end of a quorum queue's
// at-least-once dead-lettering while it holds dead letters (ending), and
// expired messages that reached a queue before and are dropped after
// (expiring), a replaced exchange's bindings that apply cannot restore,
// to clients' own queues (unrestored), a deleted exchange's bindings and
// senders mqctl did not make (deletedWith), and a retention that removes a
// stream's oldest segments (retention).
var policyLosses = []policyLoss{
	{what: "whether the plan's length limits drop messages that queues hold", fix: "Drain the queue below the limit first, raise the limit, or give the queue a dead-letter exchange that routes its dead letters to a queue", read: (*Engine).readTrimLosses},
	{what: "whether the plan's queue expiries delete queues that hold messages", fix: "Attach a consumer or drain the queue first, or raise the expiry", read: (*Engine).readExpiryLosses},
	{what: "whether the plan ends at-least-once dead-lettering in quorum queues that hold dead letters", fix: "Bind a queue to the dead-letter exchange for those dead letters first (the queue then hands them over), or keep the queue's at-least-once settings; to rename a policy, add the new one in an apply of its own (with a higher priority), then remove the old one", read: (*Engine).readEndingLosses},
	{what: "whether the plan drops messages as they expire from queues that hold them", fix: "Let the queue empty first (or move its messages, e.g. with a shovel), or keep where its expired messages go until it is empty", read: (*Engine).readExpiringLosses},
	{what: "whether the plan's exchange replaces take down bindings of clients' own queues", fix: "Declare the new exchange under a new name and move publishers and subscribers over, or have those clients bind again right after the apply (a client binds its queues when it reconnects)", read: (*Engine).readUnrestoredLosses},
	{what: "whether the plan's exchange deletes take down bindings, or dead-letter and alternate exchanges, of objects mqctl did not make", fix: "Keep the exchange in the file, or first take what is named off it (delete those bindings by hand, or bind their queues to another exchange; give those queues, exchanges and policies another dead-letter or alternate exchange), then apply", read: (*Engine).readDeletedWithLosses},
	{what: "whether the plan's stream retentions remove what streams hold", fix: "Keep the stream's retention as it was, or raise the new one to what the stream must keep", read: (*Engine).readRetentionLosses},
}

// notePolicyLosses tells plan's reader what its policy changes lose.
func (e *Engine) notePolicyLosses(ctx context.Context, p *plan.Plan, l *Live) {
	for _, pl := range policyLosses {
		refused, told, err := pl.read(e, ctx, p, l.current.State, nil)
		if err != nil {
			e.note("could not read %s (%v); apply checks again before it changes anything", pl.what, err)
			continue
		}
		for _, r := range refused {
			e.note("%s. %s; apply refuses this without --allow-data-loss", r, pl.fix)
		}
		for _, t := range told {
			e.note("%s", t)
		}
	}
}

// checkPolicyLosses refuses, before anything changes, a plan whose policy
// changes lose messages that queues hold, unless AllowDataLoss (then, and
// for what is only told, it says what they do).
func (e *Engine) checkPolicyLosses(ctx context.Context, p *plan.Plan, l *Live, o ApplyOptions, inspect inspectFunc) error {
	var refusals []string
	for _, pl := range policyLosses {
		refused, told, err := pl.read(e, ctx, p, l.current.State, inspect)
		if err != nil {
			return fmt.Errorf("nothing was changed: mqctl could not read %s: %w", pl.what, err)
		}
		if o.AllowDataLoss {
			told = append(refused, told...)
			refused = nil
		}
		for _, t := range told {
			e.note("%s", t)
		}
		if len(refused) > 0 {
			refusals = append(refusals, strings.Join(refused, "; ")+". "+pl.fix)
		}
	}
	if len(refusals) == 0 {
		return nil
	}
	return fmt.Errorf("nothing was changed: %s; or pass --allow-data-loss to lose them: %w", strings.Join(refusals, ". "), apply.ErrRefused)
}

// held is what a queue a policy change puts at risk holds: its statistics,
// and with an inspect func its state read exactly over AMQP (exact; the
// zero state without one).
type held struct {
	stats broker.QueueCount
	exact lock.QueueState
}

// consumers is how many consumers the queue has: exactly where it was
// read exactly (the statistics may still count one that left).
func (h held) consumers(exact bool) int64 {
	if exact {
		return h.exact.Consumers
	}
	return h.stats.Consumers
}

// readHeld reads what queue queues[i] of vhost vhosts[i] holds: the
// statistics of each vhost's queues in one read (broker QueueCounts), and
// with inspect each queue exactly, 16 at a time.
func (e *Engine) readHeld(ctx context.Context, vhosts, queues []string, inspect inspectFunc) ([]held, error) {
	counts, err := countByVhost(ctx, vhosts, queues, e.c.QueueCounts)
	if err != nil {
		return nil, err
	}
	out := make([]held, len(queues))
	errs := make([]error, len(queues))
	if inspect != nil {
		g := parallel.New(16)
		for i := range queues {
			g.Go(func() { out[i].exact, errs[i] = inspect(ctx, vhosts[i], queues[i], "") })
		}
		g.Wait()
	}
	for i := range queues {
		if errs[i] != nil {
			return nil, errs[i]
		}
		out[i].stats = counts[vhosts[i]][queues[i]]
	}
	return out, nil
}

// countByVhost reads, with count, the statistics of queue queues[i] of
// vhost vhosts[i]: one read per vhost, of its queues named, each once.
func countByVhost(ctx context.Context, vhosts, queues []string, count func(ctx context.Context, vhost string, names []string) (map[string]broker.QueueCount, error)) (map[string]map[string]broker.QueueCount, error) {
	byVhost := map[string][]string{}
	for i, vh := range vhosts {
		if !slices.Contains(byVhost[vh], queues[i]) {
			byVhost[vh] = append(byVhost[vh], queues[i])
		}
	}
	counts := map[string]map[string]broker.QueueCount{}
	for _, vh := range slices.Sorted(maps.Keys(byVhost)) {
		c, err := count(ctx, vh, byVhost[vh])
		if err != nil {
			return nil, err
		}
		counts[vh] = c
	}
	return counts, nil
}
