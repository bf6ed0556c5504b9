package engine

import (
	"context"
	"strings"

	"github.com/mqctl/mqctl/pkg/plan"
	"github.com/mqctl/mqctl/pkg/preflight"
)

// preflight asks the broker whether it takes p's objects (pkg/preflight)
// and tells the user, in notes, what it could not try. The broker's
// refusals are in the report (also set as p.Preflight); the error is for
// a preflight that could not finish. The throwaway vhost is deleted while
// the caller goes on: done waits until it is, then notes what the sweep of
// leftovers and the cleanup found. Call done before returning.
//
// first is preflight.Options.First: the change apply writes first, alone,
// which is its own trial when it is the plan's only one. skip says how
// the user leaves the preflight out (apply's --no-preflight, plan's
// --preflight left out).
func (e *Engine) preflight(ctx context.Context, p *plan.Plan, l *Live, amqpURL string, first *plan.Change, skip string) (rep *preflight.Report, done func(), err error) {
	rep, wait, err := preflight.Start(ctx, e.c, p, l.State(), preflight.Options{AMQPURL: amqpURL, TLS: e.c.TLSConfig(), Now: e.now, Sweepable: e.sweepable, First: first})
	done = func() {
		wait()
		if rep == nil {
			return
		}
		if len(rep.Swept) > 0 {
			e.note("deleted the throwaway vhosts that killed mqctl applies left behind: %s", strings.Join(rep.Swept, ", "))
		}
		if rep.SweepErr != "" {
			e.note("a throwaway vhost that a killed mqctl apply left behind could not be deleted (%s); the next apply tries again", rep.SweepErr)
		}
		if rep.CleanupErr != "" {
			e.note("the preflight's throwaway vhost %q could not be deleted (%s); the next apply deletes it", rep.Vhost, rep.CleanupErr)
		}
	}
	if err != nil {
		return nil, done, err
	}
	p.Preflight = rep
	if rep.Skipped != "" {
		e.note("the plan was judged from RabbitMQ %s's version table alone: %s. %s", e.c.RabbitMQVersion(), rep.Skipped, skip)
	}
	if len(rep.Untried) > 0 && rep.Skipped == "" {
		kinds := map[string]bool{}
		var names []string
		for _, o := range rep.Untried {
			if l := string(o.Kind); !kinds[l] {
				kinds[l] = true
				names = append(names, strings.ReplaceAll(l, "_", " "))
			}
		}
		e.note("the preflight does not try %s: a throwaway vhost cannot without touching the real broker, so the version table alone judges them", strings.Join(names, ", "))
	}
	return rep, done, nil
}
