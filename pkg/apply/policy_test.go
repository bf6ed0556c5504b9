package apply_test

import (
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mqctl/mqctl/internal/faultproxy"
)

// Policies of one vhost are written one at a time, whatever the
// parallelism: RabbitMQ 4.0 can leave a queue under the policies only one
// of two concurrent puts saw (the difftest met it as dead letters a
// policy's DLX should have routed). Each policy put is held back by the
// proxy for hold; had two been in flight together, the second would have
// arrived less than hold after the first.
func TestPolicyWritesOneAtATime(t *testing.T) {
	t.Parallel()
	e := newFaultEnv(t)
	const hold = 150 * time.Millisecond
	var mu sync.Mutex
	var arrivals []time.Time
	e.proxy.Add(faultproxy.Rule{
		Match: func(r *http.Request) bool {
			if r.Method != http.MethodPut || !strings.HasPrefix(strings.TrimPrefix(r.URL.Path, "/api/"), "policies/") {
				return false
			}
			mu.Lock()
			arrivals = append(arrivals, time.Now())
			mu.Unlock()
			return true
		},
		Fault: faultproxy.Delay, Delay: hold,
	})
	var b strings.Builder
	b.WriteString("version: 1\nvhosts:\n  ${VHOST}:\n    queues:\n")
	for i := range 4 {
		fmt.Fprintf(&b, "      q%d: {}\n", i)
	}
	b.WriteString("    policies:\n")
	for i := range 4 {
		fmt.Fprintf(&b, "      p%d: { pattern: \"^q%d$\", apply_to: queues, definition: { max-length: %d } }\n", i, i, 10+i)
	}
	if res := e.apply(b.String()); !res.OK() {
		t.Fatalf("apply: %+v", res)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(arrivals) != 4 {
		t.Fatalf("%d policy puts reached the broker, want 4", len(arrivals))
	}
	for i := 1; i < len(arrivals); i++ {
		if gap := arrivals[i].Sub(arrivals[i-1]); gap < hold {
			t.Errorf("policy put %d arrived %s after put %d, which was still held for %s: two policy writes were in flight at once", i+1, gap, i, hold)
		}
	}
	e.converged(b.String())
}
