package broker

import (
	"context"
	"fmt"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// ReadFacts called while another call reads waits for that read: a plan
// reads the facts beside the state and asks for them again before the
// state is in, and must not ask the broker twice. A read that failed is
// not kept: the next call reads again.
func TestReadFactsReadsOnce(t *testing.T) {
	var flags atomic.Int32
	var fail atomic.Bool
	c := fakeAdmin(t, func(w http.ResponseWriter, r *http.Request) bool {
		switch {
		case r.URL.Path == "/api/overview" && r.URL.Query().Get("columns") == "exchange_types":
			if fail.Load() {
				w.WriteHeader(http.StatusBadRequest)
				fmt.Fprint(w, `{"error":"boom","reason":"boom"}`)
				return true
			}
			fmt.Fprint(w, `{"exchange_types":[{"name":"topic"},{"name":"x-modulus-hash"}]}`)
		case r.URL.Path == "/api/feature-flags":
			flags.Add(1)
			time.Sleep(50 * time.Millisecond) // the two calls overlap
			fmt.Fprint(w, `[]`)
		case r.URL.Path == "/api/deprecated-features" || r.URL.Path == "/api/nodes":
			fmt.Fprint(w, `[]`)
		default:
			return false
		}
		return true
	})
	ctx := context.Background()
	fail.Store(true)
	if _, err := c.ReadFacts(ctx); err == nil {
		t.Fatal("a failed read of the overview: no error")
	}
	fail.Store(false)
	flags.Store(0)
	var wg sync.WaitGroup
	errs := make([]error, 2)
	for i := range errs {
		wg.Go(func() { _, errs[i] = c.ReadFacts(ctx) })
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	if n := flags.Load(); n != 1 {
		t.Errorf("two calls at once, after a failed one, asked for the feature flags %d times, want 1", n)
	}
	if offered, known := c.RabbitMQVersion().OffersExchangeType("x-modulus-hash"); !offered || !known {
		t.Error("the facts read are not the version's")
	}
}
