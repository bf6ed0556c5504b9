package broker

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestListQueueActivity decodes answers shaped like RabbitMQ 3.10's (taken
// from the local broker): a queue without statistics yet has no messages
// fields, one never published to has no message_stats.
func TestListQueueActivity(t *testing.T) {
	t.Parallel()
	var columns string
	api := fakeAPI(http.StatusOK, "")
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.EscapedPath() != "/api/queues/%2F" {
			api.ServeHTTP(w, r)
			return
		}
		columns = r.URL.Query().Get("columns")
		fmt.Fprint(w, `[
 {"consumers":1,"message_stats":{"publish_details":{"rate":12.5},"deliver_get_details":{"rate":3.2}},"messages":7,"messages_ready":5,"messages_unacknowledged":2,"name":"busy","state":"running","type":"quorum"},
 {"consumers":0,"messages":0,"messages_ready":0,"messages_unacknowledged":0,"name":"quiet","state":"running","type":"classic"},
 {"message_stats":{"publish_details":{"rate":0.0}},"name":"new","type":"classic"}
]`)
	}))
	defer srv.Close()
	c, err := Connect(context.Background(), Config{Server: srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	got, err := c.ListQueueActivity(context.Background(), "/")
	if err != nil {
		t.Fatal(err)
	}
	want := []QueueActivity{
		{Name: "busy", Type: "quorum", State: "running", Known: true, Messages: 7, Ready: 5, Unacked: 2, Consumers: 1, PublishRate: 12.5, DeliverRate: 3.2},
		{Name: "quiet", Type: "classic", State: "running", Known: true},
		{Name: "new", Type: "classic"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("activity (-want +got):\n%s", diff)
	}
	if columns != activityColumns {
		t.Errorf("columns = %q, want %q", columns, activityColumns)
	}
}
