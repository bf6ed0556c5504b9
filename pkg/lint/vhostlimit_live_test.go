package lint

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/mqctl/mqctl/internal/testbroker"
	"github.com/mqctl/mqctl/pkg/kind"
	"github.com/mqctl/mqctl/pkg/topology"
)

// TestVhostQueueLimitAgainstBroker shows what MQ304 says, on the broker of
// the run: a vhost holding three queues takes max-queues 2, and then
// refuses a new queue, and one of its queues deleted and declared again
// (a replace). Measured the same on 4.3.6, 4.0.5 and 3.10.8.
func TestVhostQueueLimitAgainstBroker(t *testing.T) {
	b := testbroker.New(t)
	vh := url.PathEscape(b.Vhost(t))
	call := apiOf(t, b)
	for _, q := range []string{"a", "b", "c"} {
		if status, msg := call(http.MethodPut, "queues/"+vh+"/"+q, `{"durable":true}`); status >= 300 {
			t.Fatalf("declare %s: %d %s", q, status, msg)
		}
	}
	if status, msg := call(http.MethodPut, "vhost-limits/"+vh+"/max-queues", `{"value":2}`); status >= 300 {
		t.Fatalf("RabbitMQ %s refused max-queues 2 on a vhost of 3 queues: %d %s; MQ304 says it takes it", b.Version(), status, msg)
	}
	if status, msg := call(http.MethodPut, "queues/"+vh+"/d", `{"durable":true}`); status < 300 || !strings.Contains(msg, "limit") {
		t.Errorf("RabbitMQ %s, a new queue over the limit: %d %s; want it refused", b.Version(), status, msg)
	}
	if status, msg := call(http.MethodDelete, "queues/"+vh+"/a", ""); status >= 300 {
		t.Fatalf("delete a: %d %s", status, msg)
	}
	if status, msg := call(http.MethodPut, "queues/"+vh+"/a", `{"durable":true,"arguments":{"x-max-length":10}}`); status < 300 || !strings.Contains(msg, "limit") {
		t.Errorf("RabbitMQ %s, queue a declared again after its delete (a replace), 2 queues left of a limit of 2: %d %s; want it refused", b.Version(), status, msg)
	}

	lb := newBuilder()
	for _, q := range []string{"a", "b", "c"} {
		lb.queue(q, nil)
	}
	lb.item(kind.VhostLimits, "/", topology.Args{"max-queues": 2})
	var found bool
	for _, f := range lb.run(t, Options{Version: b.Version()}) {
		found = found || f.ID == "MQ304"
	}
	if !found {
		t.Errorf("MQ304 does not flag the file on %s", b.Version())
	}
}
