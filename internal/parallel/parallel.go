// Package parallel runs functions concurrently, at most a given number at
// once: the broker's reads of many vhosts, exchanges or queues, which
// would otherwise open as many requests at the same moment.
package parallel

import "sync"

// Group runs the functions given to Go, each in its own goroutine, at
// most its limit of them at once.
type Group struct {
	wg  sync.WaitGroup
	sem chan struct{}
}

// New returns a Group that runs at most limit functions at once.
func New(limit int) *Group { return &Group{sem: make(chan struct{}, limit)} }

// Go runs f in a goroutine once fewer than the limit are running; it
// does not wait for that.
func (g *Group) Go(f func()) {
	g.wg.Add(1)
	go func() {
		defer g.wg.Done()
		g.sem <- struct{}{}
		defer func() { <-g.sem }()
		f()
	}()
}

// Wait waits until every function given to Go has returned.
func (g *Group) Wait() { g.wg.Wait() }
