package engine

import (
	"context"
	"fmt"
	"strings"

	"github.com/mqctl/mqctl/pkg/apply"
	"github.com/mqctl/mqctl/pkg/plan"
	"github.com/mqctl/mqctl/pkg/topology"
)

// policyLoss is one way a plan's policy changes make RabbitMQ lose
// messages that queues hold, at once or soon after, where no queue is
// deleted or replaced by the plan itself.
type policyLoss struct {
	// what the check is about, for a read that failed.
	what string
	// fix is the advice for a queue at risk.
	fix string
	// read finds the queues at risk (with inspect, counted exactly over
	// AMQP): those apply refuses, and those it only tells of.
	read func(e *Engine, ctx context.Context, p *plan.Plan, cur *topology.Topology, inspect inspectFunc) (refused, told []string, err error)
}

// policyLosses are the policy changes that lose messages: a length limit
// below what a queue holds (trim), an expiry for a queue that holds
// messages and has no consumer (expiry).
var policyLosses = []policyLoss{
	{what: "whether the plan's length limits drop messages that queues hold", fix: "Drain the queue below the limit first, raise the limit, or give the queue a dead-letter exchange", read: (*Engine).readTrimLosses},
	{what: "whether the plan's queue expiries delete queues that hold messages", fix: "Attach a consumer or drain the queue first, or raise the expiry", read: (*Engine).readExpiryLosses},
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
