package broker

import "context"

// guardKey carries a write guard in a context (WithWriteGuard).
type guardKey struct{}

// WithWriteGuard returns a copy of ctx under which every write the Client
// makes — a PUT, POST or DELETE of the management API, a Declarer's
// declaration — asks guard first, right before its request goes out (each
// try of it), and does not go out when guard says no: the write returns
// guard's error as it is. apply guards its writes with its locks, so that
// an apply that lost a lock (another apply may hold it now) makes no
// further change, whichever of its goroutines was about to make one.
func WithWriteGuard(ctx context.Context, guard func() error) context.Context {
	if guard == nil {
		return ctx
	}
	return context.WithValue(ctx, guardKey{}, guard)
}

// checkWrite asks the write guard of ctx, if any.
func checkWrite(ctx context.Context) error {
	if g, ok := ctx.Value(guardKey{}).(func() error); ok {
		return g()
	}
	return nil
}
