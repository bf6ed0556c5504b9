package broker

import (
	"context"
	"errors"
	"testing"

	"github.com/mqctl/mqctl/pkg/topology"
)

// A write made under a write guard asks it right before its request goes
// out, and does not go out when the guard says no: the write returns the
// guard's error as it is. Reads do not ask it, and a context without a
// guard writes as before.
func TestWriteGuard(t *testing.T) {
	t.Parallel()
	no := errors.New("the apply lock was lost")
	const put, del = "PUT /api/queues/v/q", "DELETE /api/queues/v/q"
	for _, tc := range []struct {
		name  string
		guard func() error
		// sent: whether the writes reach the broker.
		sent bool
	}{
		{"no guard", nil, true},
		{"a guard that lets them go", func() error { return nil }, true},
		{"a guard that says no", func() error { return no }, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newScript(nil)
			c, err := Connect(context.Background(), Config{Server: serve(t, s), Retry: fastRetry})
			if err != nil {
				t.Fatal(err)
			}
			asked := 0
			var guard func() error
			if tc.guard != nil {
				guard = func() error { asked++; return tc.guard() }
			}
			ctx := WithWriteGuard(context.Background(), guard)
			werr := c.DeclareQueue(ctx, "v", &topology.Queue{Name: "q", Durable: true})
			derr := c.DeleteQueue(ctx, "v", "q", DeleteQueueOptions{})
			if _, err := c.VhostNames(ctx); err != nil {
				t.Errorf("a read under the guard: %v", err)
			}
			if tc.guard != nil && asked != 2 {
				t.Errorf("the guard was asked %d times, want once for each write (2), never for the read", asked)
			}
			if tc.sent {
				if werr != nil || derr != nil || s.count(put) != 1 || s.count(del) != 1 {
					t.Errorf("declare %v, delete %v, sent %d and %d: want both sent once", werr, derr, s.count(put), s.count(del))
				}
				return
			}
			if !errors.Is(werr, no) || !errors.Is(derr, no) || s.count(put) != 0 || s.count(del) != 0 {
				t.Errorf("declare %v, delete %v, sent %d and %d: want the guard's error and nothing sent", werr, derr, s.count(put), s.count(del))
			}
		})
	}
}
