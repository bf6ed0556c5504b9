package parallel

import (
	"sync/atomic"
	"testing"
	"time"
)

// TestGroupRunsAllAtMostLimitAtOnce: every function runs, never more than
// the limit at the same moment, and Wait returns after the last.
func TestGroupRunsAllAtMostLimitAtOnce(t *testing.T) {
	var running, most, done atomic.Int32
	g := New(3)
	for range 20 {
		g.Go(func() {
			n := running.Add(1)
			for {
				m := most.Load()
				if n <= m || most.CompareAndSwap(m, n) {
					break
				}
			}
			time.Sleep(2 * time.Millisecond)
			running.Add(-1)
			done.Add(1)
		})
	}
	g.Wait()
	if done.Load() != 20 {
		t.Errorf("%d of 20 functions ran before Wait returned", done.Load())
	}
	if m := most.Load(); m > 3 || m < 2 {
		t.Errorf("at most %d ran at once, want 3 (the limit)", m)
	}
}
