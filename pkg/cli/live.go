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
	if note != nil {
		shown := note
		note = func(n string) { shown(g.hideEnv(n)) }
	}
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
// is reported at once. The read of files past earlyReadUpTo is held
// (broker.HoldDefinitions): it fetches the broker's answers while the files
// load, decodes them once they are loaded, and ends before loadAndRead
// returns. The read of smaller files may still be under way on return:
// read waits for it, for the engine's Plan (engine.PlanOptions.Read),
// which checks the file meanwhile; nil when the file's vhosts were not
// known early. stop ends the reads and waits for them; the caller calls
// it once Plan is done, and loadAndRead itself when it fails.
func (g *globals) loadAndRead(ctx context.Context, note func(string)) (desired *topology.Topology, eng *engine.Engine, read func() (*engine.Live, error), stop func(), err error) {
	ctx, cancel := context.WithCancel(ctx)
	var cerr error
	connected := make(chan struct{})
	go func() {
		defer close(connected)
		var c *broker.Client
		if c, cerr = g.connectAPI(ctx); cerr == nil {
			eng = g.newEngine(c, note)
		}
	}()
	type reading struct {
		scope   []string
		l       *engine.Live
		err     error
		cancel  context.CancelFunc
		dropped bool // cancelled: a guess the loader belied
		done    chan struct{}
	}
	guess, large, early := guessVhosts(g.topologyFiles())
	// Files past earlyReadUpTo: the read fetches the broker's answers
	// while the files load, and decodes them once they are loaded.
	loaded := make(chan struct{})
	start := func(scope []string) *reading {
		rctx, rcancel := context.WithCancel(ctx)
		if large {
			rctx = broker.HoldDefinitions(rctx, loaded)
		}
		r := &reading{scope: scope, cancel: rcancel, done: make(chan struct{})}
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
	var reads []*reading
	stop = func() {
		cancel()
		<-connected
		for _, r := range reads {
			<-r.done
		}
	}
	if early {
		reads = append(reads, start(g.inScope(guess)))
	}
	desired, err = g.loadTopologyScoped(func(scope []string) {
		if len(reads) == 1 && slices.Equal(reads[0].scope, scope) {
			return // the guess was right: that read goes on
		}
		for _, r := range reads {
			r.cancel() // a guess the loader belies: not used
			r.dropped = true
		}
		reads = append(reads, start(scope))
	})
	close(loaded)
	if err == nil {
		<-connected
		err = cerr
	}
	if err != nil {
		stop()
		return nil, nil, nil, nil, err
	}
	for _, r := range reads {
		if r.dropped || !slices.Equal(r.scope, desired.VhostNames()) {
			r.cancel()
			continue
		}
		if large {
			// Files past earlyReadUpTo: the read ends before Plan checks
			// the file, so that the check's garbage and the read's state
			// do not peak together (a 50,002-object replace plan went
			// from 97-101 MB to 104-110 MB).
			<-r.done
		}
		read = func() (*engine.Live, error) {
			<-r.done
			// Handed over: Plan lets go of what it no longer needs of
			// the read (the ownership records, some 9 MB at 50,000
			// objects) before its peak, which a reference here would keep.
			l := r.l
			r.l = nil
			return l, r.err
		}
	}
	return desired, eng, read, stop, nil
}

// textNotes prints each note on w as the text views do, and keeps it in
// *keep when keep is not nil (for the JSON plan).
func (g *globals) textNotes(w io.Writer, keep *[]string) func(string) {
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
