package engine

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/mqctl/mqctl/pkg/kind"
	"github.com/mqctl/mqctl/pkg/plan"
	"github.com/mqctl/mqctl/pkg/topology"
)

// transientQueues lists the transient (non-durable) queues the plan
// declares: every queue mqctl declares is non-exclusive, and RabbitMQ 4.x
// deprecates such queues (transient_nonexcl_queues).
func transientQueues(p *plan.Plan) []plan.Change {
	var out []plan.Change
	for _, c := range p.Changes {
		if c.Kind != kind.Queue || (c.Action != plan.Create && c.Action != plan.Replace) {
			continue
		}
		if q, ok := plan.As[topology.Queue](c.After); ok && !q.Durable && q.Type != topology.QueueQuorum && q.Type != topology.QueueStream {
			out = append(out, c)
		}
	}
	return out
}

func queueList(cs []plan.Change) string {
	names := make([]string, len(cs))
	for i, c := range cs {
		names[i] = fmt.Sprintf("%q in vhost %q", c.Name, c.Vhost)
	}
	return strings.Join(names, ", ")
}

// noteTransientQueues tells plan's reader about transient queues on a
// broker that deprecates them: plan reads only, so whether this broker
// denies them is learnt by apply, before it changes anything.
func (e *Engine) noteTransientQueues(p *plan.Plan) {
	v := e.c.RabbitMQVersion()
	qs := transientQueues(p)
	if !v.DeprecatesTransientQueues() || len(qs) == 0 {
		return
	}
	switch denied, known := v.DeniesTransientQueues(); {
	case known && denied:
		e.note("transient (durable: false) queue %s: this RabbitMQ %s denies transient non-exclusive queues (deprecated feature transient_nonexcl_queues), so apply refuses the file before it changes anything. Declare them durable: true, or permit the feature on the broker (deprecated_features.permit.transient_nonexcl_queues = true)",
			queueList(qs), e.c.Version())
	case known:
		e.note("transient (durable: false) queue %s: RabbitMQ %s deprecates transient non-exclusive queues (deprecated feature transient_nonexcl_queues); this broker permits them, but upstream RabbitMQ denies them by default from 4.3 (Debian's 4.3.6 permits them again). Declare them durable: true to be safe.",
			queueList(qs), e.c.Version())
	default:
		e.note("transient (durable: false) queue %s: RabbitMQ %s deprecates transient non-exclusive queues (deprecated feature transient_nonexcl_queues), and a broker that denies the feature refuses them (upstream RabbitMQ's default from 4.3; Debian's 4.3.6 permits them); apply checks this broker before it changes anything. Declare them durable: true to be safe.",
			queueList(qs), v.Line())
	}
}

// checkTransientQueues refuses, before anything changes, a plan that
// declares transient queues on a broker that denies them. It probes in one
// of the existing vhosts (the setting is the node's); with none to probe
// in, or when the probe is not allowed, the declarations themselves will
// say.
func (e *Engine) checkTransientQueues(ctx context.Context, p *plan.Plan, existing []string) error {
	v := e.c.RabbitMQVersion()
	qs := transientQueues(p)
	if !v.DeprecatesTransientQueues() || len(qs) == 0 {
		return nil
	}
	// The broker's own word, where it gives one (4.3); a probe otherwise.
	denied, known := v.DeniesTransientQueues()
	if !known {
		probeIn := ""
		for _, ch := range qs {
			if slices.Contains(existing, ch.Vhost) {
				probeIn = ch.Vhost
				break
			}
		}
		if probeIn == "" {
			for _, vh := range p.Vhosts {
				if slices.Contains(existing, vh) {
					probeIn = vh
					break
				}
			}
		}
		if probeIn == "" {
			return nil
		}
		var err error
		if denied, _, err = e.c.TransientQueuesDenied(ctx, probeIn); err != nil {
			e.note("could not learn whether this broker denies transient queues (%v); applying them as planned", err)
			return nil
		}
	}
	if !denied {
		return nil
	}
	return fmt.Errorf("apply refused, nothing was changed: transient (durable: false) queue %s: this RabbitMQ %s denies transient non-exclusive queues (deprecated feature transient_nonexcl_queues). Declare them durable: true, or permit the feature on the broker (deprecated_features.permit.transient_nonexcl_queues = true)",
		queueList(qs), e.c.Version())
}
