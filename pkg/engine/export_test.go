package engine

import (
	"time"

	"github.com/mqctl/mqctl/pkg/rmqversion"
)

// WithoutTable turns e's version table off, so that a test shows what the
// preflight catches by itself.
func WithoutTable(e *Engine) { e.noTable = true }

// WithClock makes now the clock e's preflight reads (its throwaway
// vhost's name and the age of the leftovers it sweeps), and lets its sweep
// take only the leftovers sweepable accepts: on a clock moved past the
// grace, every other apply's throwaway vhost looks left behind.
func WithClock(e *Engine, now func() time.Time, sweepable func(string) bool) {
	e.now, e.sweepable = now, sweepable
}

// AsVersion makes e's plans judge the file for version v (with the
// broker's own facts) in place of the broker's version: a broker of an
// earlier version holds what v would refuse, as one upgraded to v would.
func AsVersion(e *Engine, v rmqversion.Version) { e.asVersion = &v }

// WithBeforeFlows has e's plans call f just before their flows.
func WithBeforeFlows(e *Engine, f func()) { e.beforeFlows = f }
