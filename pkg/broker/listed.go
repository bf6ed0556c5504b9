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

// listed hands the exchanges of vhost the hook of ctx wants to it. The
// exchange listing beside a definitions export (held) waits until the
// hold ends first (or ctx does): what the hook makes of them (a record of
// 50,000 entries decoded, some 6 MB) is then not held beside the file's
// node tree, as the export's decoding is not (the peak of a 50,002-object
// no-op plan went from 85-92 MB to 89-96 MB without the wait), and the
// read waits for that listing only once the export is decoded. The lists
// (readVhost), whose decoding is not held, hand them over at once.
func listed(ctx context.Context, vhost string, exchanges []exchangeJSON, held bool) {
	h, ok := ctx.Value(listedKey{}).(listedHook)
	if !ok {
		return
	}
	if ready, _ := ctx.Value(holdKey{}).(<-chan struct{}); held && ready != nil {
		select {
		case <-ready:
		case <-ctx.Done():
			return
		}
	}
	for _, e := range exchanges {
		if h.want(e.Name) && !definitions.SkipExchange(e.Name) {
			h.got(vhost, definitions.MapExchange(e))
		}
	}
}
