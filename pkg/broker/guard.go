package broker

import (
	"context"
	"net/http/httptrace"
	"time"
)

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

// writeTimesKey carries a WithWriteTimes recorder in a context.
type writeTimesKey struct{}

// WriteTimes are the times of one write request (WithWriteTimes).
type WriteTimes struct {
	// Guarded is when the write guard was asked, right before the request
	// went out (its answer counts from then: a lock checked then was held
	// then).
	Guarded time.Time
	// Sent is when the request had gone out at the latest: once it was
	// written whole (the management API), or once its answer came (a
	// Declarer's declaration, whose sending is not seen).
	Sent time.Time
}

// WithWriteTimes returns a copy of ctx under which every write the Client
// makes — as WithWriteGuard's — is told to record once it has gone out,
// each try of it: apply tells a write sent at once after the guard let it
// through from one sent long after (the process paused in between).
func WithWriteTimes(ctx context.Context, record func(WriteTimes)) context.Context {
	if record == nil {
		return ctx
	}
	return context.WithValue(ctx, writeTimesKey{}, record)
}

// guardWrite asks the write guard of ctx, if any, and returns the context
// the write goes out under: one that tells the WithWriteTimes recorder of
// ctx, if any, when an HTTP request of it was written whole.
func guardWrite(ctx context.Context) (context.Context, error) {
	asked := time.Now()
	if err := checkWrite(ctx); err != nil {
		return ctx, err
	}
	record, ok := ctx.Value(writeTimesKey{}).(func(WriteTimes))
	if !ok {
		return ctx, nil
	}
	return httptrace.WithClientTrace(ctx, &httptrace.ClientTrace{WroteRequest: func(info httptrace.WroteRequestInfo) {
		if info.Err == nil {
			record(WriteTimes{Guarded: asked, Sent: time.Now()})
		}
	}}), nil
}

// sentBy tells the WithWriteTimes recorder of ctx, if any, that a write
// whose guard was asked at asked had gone out by now (its answer came).
func sentBy(ctx context.Context, asked time.Time) {
	if record, ok := ctx.Value(writeTimesKey{}).(func(WriteTimes)); ok {
		record(WriteTimes{Guarded: asked, Sent: time.Now()})
	}
}
