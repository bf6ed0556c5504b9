package engine

// WithoutTable turns e's version table off, so that a test shows what the
// preflight catches by itself.
func WithoutTable(e *Engine) { e.noTable = true }
