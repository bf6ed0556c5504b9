package broker

import (
	"context"

	"github.com/mqctl/mqctl/pkg/definitions"
	"github.com/mqctl/mqctl/pkg/topology"
)

// listedKey is the context key of WithListedExchanges.
type listedKey struct{}

// listedHook is what WithListedExchanges keeps.
type listedHook struct {
	want func(name string) bool
	got  func(vhost string, e *topology.Exchange)
}

// WithListedExchanges returns ctx for reads (ReadState, ReadTopology,
// InspectState) that hand got each exchange want picks of a vhost's
// exchange listing as soon as the listing is read, mapped as the state
// read maps it: a read's exchange listing answers long before the rest of
// the vhost (its definitions export of 50,002 objects streams for some
// 0.4 s), so that work on those exchanges alone can be done meanwhile
// (ownership.Predecode: mqctl's ownership records). got may be called from
// several goroutines, and again for a vhost read again; what the read
// returns is the state, which the caller checks the exchanges against.
func WithListedExchanges(ctx context.Context, want func(name string) bool, got func(vhost string, e *topology.Exchange)) context.Context {
	return context.WithValue(ctx, listedKey{}, listedHook{want: want, got: got})
}

// listed hands the exchanges of vhost the hook of ctx wants to it.
func listed(ctx context.Context, vhost string, exchanges []exchangeJSON) {
	h, ok := ctx.Value(listedKey{}).(listedHook)
	if !ok {
		return
	}
	for _, e := range exchanges {
		if h.want(e.Name) && !definitions.SkipExchange(e.Name) {
			h.got(vhost, definitions.MapExchange(e))
		}
	}
}
