package cli

import (
	"context"
	"fmt"
	"io"
	"slices"

	"github.com/mqctl/mqctl/pkg/broker"
	"github.com/mqctl/mqctl/pkg/engine"
	"github.com/mqctl/mqctl/pkg/topology"
)

// newEngine is the plan and apply engine for the broker behind c: its notes
// go to stderr, and it reconnects as any command connects.
func (g *globals) newEngine(c *broker.Client, stderr io.Writer) *engine.Engine {
	return engine.New(c, engine.Options{
		Note:      func(n string) { fmt.Fprintf(stderr, "mqctl: note: %s\n", n) },
		Reconnect: g.connectAPI,
		LookupEnv: g.env.LookupEnv,
	})
}

// loadAndRead loads the file while it connects to the management API and,
// once the file's vhost names are known (before its objects are built and
// checked), reads those vhosts: loading is CPU work, the rest waits on the
// network. A file that does not load is reported at once. The read is for
// the engine's Plan (engine.PlanOptions.Live); nil when the file's vhosts
// were not known early.
func (g *globals) loadAndRead(ctx context.Context, stderr io.Writer) (*topology.Topology, *engine.Engine, *engine.Live, error) {
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
			eng = g.newEngine(c, stderr)
		}
	}()
	type read struct {
		scope []string
		l     *engine.Live
		err   error
	}
	var early chan read
	desired, err := g.loadTopologyScoped(func(scope []string) {
		early = make(chan read, 1)
		go func() {
			<-connected
			if cerr != nil {
				early <- read{err: cerr}
				return
			}
			l, err := eng.ReadLive(ctx, scope)
			early <- read{scope, l, err}
		}()
	})
	if err != nil {
		cancel()
		<-connected
		if early != nil {
			<-early
		}
		return nil, nil, nil, err
	}
	<-connected
	if cerr != nil {
		return nil, nil, nil, cerr
	}
	var l *engine.Live
	if early != nil {
		r := <-early
		if slices.Equal(r.scope, desired.VhostNames()) {
			if r.err != nil {
				return nil, nil, nil, r.err
			}
			l = r.l
		}
	}
	return desired, eng, l, nil
}

// useColor reports whether output should be coloured: on a terminal,
// unless NO_COLOR is set (https://no-color.org).
func (g *globals) useColor() bool {
	if v, ok := g.env.LookupEnv("NO_COLOR"); ok && v != "" {
		return false
	}
	return g.env.IsTerminal
}
