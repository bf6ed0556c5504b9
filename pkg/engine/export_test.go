package engine

import "time"

// WithoutTable turns e's version table off, so that a test shows what the
// preflight catches by itself.
func WithoutTable(e *Engine) { e.noTable = true }

// WithClock makes now the clock e's preflight reads: its throwaway
// vhost's name and the age of the leftovers it sweeps.
func WithClock(e *Engine, now func() time.Time) { e.now = now }
