package cli

import (
	"context"
	"fmt"
	"io"
	"slices"
	"sync"

	"github.com/mqctl/mqctl/pkg/broker"
	"github.com/mqctl/mqctl/pkg/engine"
	"github.com/mqctl/mqctl/pkg/topology"
)

// newEngine is the plan and apply engine for the broker behind c: it tells
// note what the user should know, and reconnects as any command connects.
func (g *globals) newEngine(c *broker.Client, note func(string)) *engine.Engine {
	return engine.New(c, engine.Options{
		Note:      note,
		Reconnect: g.connectAPI,
		LookupEnv: g.env.LookupEnv,
	})
}

// loadAndRead loads the file while it connects to the management API and
// reads the file's vhosts meanwhile: loading is CPU work, the rest waits
// on the network. The read starts at once for the vhosts the files' text
// names (guessVhosts), or else once the loader knows their names (before
// the objects are built and checked); a guess the loader's names belie is
// dropped and the read starts again for those. A file that does not load
// is reported at once. The read is for the engine's Plan
// (engine.PlanOptions.Live); nil when the file's vhosts were not known
// early.
func (g *globals) loadAndRead(ctx context.Context, note func(string)) (*topology.Topology, *engine.Engine, *engine.Live, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var (
		eng  *engine.Engine
		cerr error
	)
	connected := make(chan struct{})
	go func() {
		defer close(connected)
		var c *broker.Client
		if c, cerr = g.connectAPI(ctx); cerr == nil {
			eng = g.newEngine(c, note)
		}
	}()
	type read struct {
		scope   []string
		l       *engine.Live
		err     error
		cancel  context.CancelFunc
		dropped bool // cancelled: a guess the loader belied
		done    chan struct{}
	}
	start := func(scope []string) *read {
		rctx, rcancel := context.WithCancel(ctx)
		r := &read{scope: scope, cancel: rcancel, done: make(chan struct{})}
		go func() {
			defer close(r.done)
			<-connected
			if cerr != nil {
				r.err = cerr
				return
			}
			r.l, r.err = eng.ReadLive(rctx, scope)
		}()
		return r
	}
	var reads []*read
	defer func() {
		// Those not used, and all of them after an error, stop at once.
		cancel()
		<-connected
		for _, r := range reads {
			<-r.done
		}
	}()
	if guess, ok := guessVhosts(g.topologyFiles()); ok {
		reads = append(reads, start(g.inScope(guess)))
	}
	desired, err := g.loadTopologyScoped(func(scope []string) {
		if len(reads) == 1 && slices.Equal(reads[0].scope, scope) {
			return // the guess was right: that read goes on
		}
		for _, r := range reads {
			r.cancel() // a guess the loader belies: not used
			r.dropped = true
		}
		reads = append(reads, start(scope))
	})
	if err != nil {
		return nil, nil, nil, err
	}
	<-connected
	if cerr != nil {
		return nil, nil, nil, cerr
	}
	var l *engine.Live
	for _, r := range reads {
		if r.dropped || !slices.Equal(r.scope, desired.VhostNames()) {
			continue
		}
		<-r.done
		if r.err != nil {
			return nil, nil, nil, r.err
		}
		l = r.l
		break
	}
	return desired, eng, l, nil
}

// textNotes prints each note on w as the text views do, and keeps it in
// *keep when keep is not nil (for the JSON plan).
func textNotes(w io.Writer, keep *[]string) func(string) {
	var mu sync.Mutex // the engine notes from several goroutines
	return func(n string) {
		mu.Lock()
		defer mu.Unlock()
		fmt.Fprintf(w, "mqctl: note: %s\n", n)
		if keep != nil {
			*keep = append(*keep, n)
		}
	}
}

// useColor reports whether output should be coloured: on a terminal,
// unless NO_COLOR is set (https://no-color.org).
func (g *globals) useColor() bool {
	if v, ok := g.env.LookupEnv("NO_COLOR"); ok && v != "" {
		return false
	}
	return g.env.IsTerminal
}
