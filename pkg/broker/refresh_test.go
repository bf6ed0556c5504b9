package broker

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// TestCountAfterRefresh: the count returned is the one read once a
// queue's statistics changed twice after the call began (its reductions,
// which a quorum queue reports with every tick), whatever the reads before
// said; a queue that is gone is reported so; statistics that do not move
// are an error; five queues or more are listed in one request.
func TestCountAfterRefresh(t *testing.T) {
	t.Parallel()
	// A row of the fake broker's statistics: "" is a queue without
	// statistics yet, "-" one that does not exist.
	type row = string
	tests := []struct {
		name    string
		queues  map[string][]row // each read's row, the last repeated
		timeout time.Duration
		want    map[string]QueueCount
		reads   int // reads until the answer (per queue, or listings)
		list    bool
		err     error
	}{
		{
			name: "two refreshes, the messages counted at the second",
			queues: map[string][]row{"q": {
				`"messages":0,"messages_delayed":0,"consumers":0,"reductions":100`,
				`"messages":0,"messages_delayed":0,"consumers":0,"reductions":100`,
				`"messages":0,"messages_delayed":0,"consumers":0,"reductions":150`,
				`"messages":0,"messages_delayed":0,"consumers":0,"reductions":150`,
				`"messages":2,"messages_delayed":2,"consumers":0,"reductions":190`,
				`"messages":0,"messages_delayed":0,"consumers":0,"reductions":250`,
			}},
			want:  map[string]QueueCount{"q": {Messages: 2, Delayed: 2}},
			reads: 5,
		},
		{
			name: "statistics that appear count as a refresh",
			queues: map[string][]row{"q": {
				``,
				`"messages":1,"consumers":1,"reductions":10`,
				`"messages":3,"messages_delayed":1,"messages_dlx":2,"consumers":0,"reductions":20`,
			}},
			want:  map[string]QueueCount{"q": {Messages: 3, Delayed: 1, DeadLettering: 2}},
			reads: 3,
		},
		{
			name:   "a queue that is gone",
			queues: map[string][]row{"q": {`-`}},
			want:   map[string]QueueCount{"q": {Gone: true}},
			reads:  1,
		},
		{
			name:    "statistics that never move",
			queues:  map[string][]row{"q": {`"messages":0,"reductions":5`}},
			timeout: time.Second,
			err:     ErrNotRefreshed,
		},
		{
			name: "five queues are listed",
			queues: map[string][]row{
				"a": {`"messages":0,"reductions":1`, `"messages":0,"reductions":2`, `"messages":4,"messages_delayed":4,"reductions":3`},
				"b": {`"messages":0,"reductions":1`, `"messages":0,"reductions":2`, `"messages":0,"reductions":3`},
				"c": {`-`},
				"d": {`"messages":0,"reductions":1`, `"messages":0,"reductions":2`, `"messages":1,"reductions":3`},
				"e": {`"messages":0,"reductions":1`, `"messages":0,"reductions":2`, `"messages":0,"reductions":3`},
			},
			want: map[string]QueueCount{
				"a": {Messages: 4, Delayed: 4}, "b": {}, "c": {Gone: true}, "d": {Messages: 1}, "e": {},
			},
			reads: 3,
			list:  true,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var (
				mu      sync.Mutex
				reads   = map[string]int{} // by path
				columns = map[string]bool{}
			)
			rowAt := func(name string, n int) (string, bool) {
				rows := tc.queues[name]
				r := rows[min(n, len(rows)-1)]
				if r == "-" {
					return "", false
				}
				if r == "" {
					return fmt.Sprintf(`{"name":%q}`, name), true
				}
				return fmt.Sprintf(`{"name":%q,%s}`, name, r), true
			}
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "application/json")
				mu.Lock()
				defer mu.Unlock()
				switch {
				case r.URL.Path == "/api/whoami":
					fmt.Fprint(w, `{"name":"bob","tags":["administrator"]}`)
				case r.URL.Path == "/api/overview":
					fmt.Fprint(w, `{"rabbitmq_version":"4.3.6","cluster_name":"fake"}`)
				case r.URL.Path == "/api/queues/v":
					n := reads[r.URL.Path]
					reads[r.URL.Path]++
					columns[r.URL.Query().Get("columns")] = true
					var rows []string
					for name := range tc.queues {
						if row, ok := rowAt(name, n); ok {
							rows = append(rows, row)
						}
					}
					fmt.Fprintf(w, "[%s]", strings.Join(rows, ","))
				case strings.HasPrefix(r.URL.Path, "/api/queues/v/"):
					name := strings.TrimPrefix(r.URL.Path, "/api/queues/v/")
					n := reads[r.URL.Path]
					reads[r.URL.Path]++
					columns[r.URL.Query().Get("columns")] = true
					if row, ok := rowAt(name, n); ok {
						fmt.Fprint(w, row)
						return
					}
					w.WriteHeader(http.StatusNotFound)
					fmt.Fprint(w, `{"error":"Object Not Found","reason":"Not Found"}`)
				default:
					w.WriteHeader(http.StatusNotFound)
					fmt.Fprint(w, `{"error":"Object Not Found","reason":"Not Found"}`)
				}
			}))
			t.Cleanup(srv.Close)
			c, err := Connect(context.Background(), Config{Server: srv.URL, Username: "u", Password: "p"})
			if err != nil {
				t.Fatal(err)
			}
			var names []string
			for n := range tc.queues {
				names = append(names, n)
			}
			timeout := tc.timeout
			if timeout == 0 {
				timeout = 10 * time.Second
			}
			got, err := c.CountAfterRefresh(context.Background(), "v", names, timeout)
			if tc.err != nil {
				if !errors.Is(err, tc.err) || !strings.Contains(err.Error(), `queue "q" in vhost "v"`) {
					t.Fatalf("err = %v, want %v naming the queue", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(tc.want, got); d != "" {
				t.Errorf("counts (-want +got):\n%s", d)
			}
			mu.Lock()
			defer mu.Unlock()
			if want := map[string]bool{refreshColumns: true}; !cmp.Equal(columns, want) {
				t.Errorf("columns asked %v, want %v", columns, want)
			}
			if tc.list {
				if d := cmp.Diff(map[string]int{"/api/queues/v": tc.reads}, reads); d != "" {
					t.Errorf("requests (-want +got):\n%s", d)
				}
				return
			}
			if got := reads["/api/queues/v/q"]; got != tc.reads || len(reads) != 1 {
				t.Errorf("reads %v, want %d of queue q alone", reads, tc.reads)
			}
		})
	}
}
