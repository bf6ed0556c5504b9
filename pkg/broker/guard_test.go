package broker

import (
	"context"
	"errors"
	"net/http"
	"testing"
	"time"

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

// A write made under WithWriteTimes tells when its guard was asked and
// when its request had gone out: written whole, before its answer came
// (the fake API answers only once the recorder has heard of the request),
// and after the guard's yes (the guard's own time counts: it is asked
// first). Reads tell nothing.
func TestWriteTimes(t *testing.T) {
	t.Parallel()
	told := make(chan WriteTimes, 4)
	s := newScript(nil)
	c, err := Connect(context.Background(), Config{Server: serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPut {
			select {
			case <-told:
			case <-r.Context().Done():
				return
			}
		}
		s.ServeHTTP(w, r)
	})), Retry: fastRetry, Timeout: 30 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	var guardedFrom time.Time
	ctx := WithWriteGuard(context.Background(), func() error {
		guardedFrom = time.Now()
		return nil
	})
	var got []WriteTimes
	ctx = WithWriteTimes(ctx, func(wt WriteTimes) {
		got = append(got, wt)
		told <- wt
	})
	if err := c.DeclareQueue(ctx, "v", &topology.Queue{Name: "q", Durable: true}); err != nil {
		t.Fatalf("declare: %v (no answer until the request is told as sent)", err)
	}
	if _, err := c.VhostNames(ctx); err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 {
		t.Fatalf("told %d writes, want the declaration alone", len(got))
	}
	if wt := got[0]; wt.Guarded.After(guardedFrom) || wt.Sent.Before(guardedFrom) {
		t.Errorf("guarded at %v, sent at %v; the guard said yes at %v: want it between", wt.Guarded, wt.Sent, guardedFrom)
	}
}
