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
			// A quorum queue whose Raft server does not run (its
			// declaration cut off) never ticks, while the others do:
			// said so, not "run the apply again".
			name: "one queue that never ticks among others that do",
			queues: map[string][]row{
				"a": {`"messages":0,"reductions":1`, `"messages":0,"reductions":2`, `"messages":0,"reductions":3`},
				"q": {`"messages":0,"reductions":5`},
			},
			timeout: time.Second,
			err:     ErrNotRunning,
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
			c := fakeAdmin(t, func(w http.ResponseWriter, r *http.Request) bool {
				mu.Lock()
				defer mu.Unlock()
				switch {
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
					row, ok := rowAt(name, n)
					if !ok {
						return false
					}
					fmt.Fprint(w, row)
				default:
					return false
				}
				return true
			})
			var names []string
			for n := range tc.queues {
				names = append(names, n)
			}
			timeout := tc.timeout
			if timeout == 0 {
				timeout = 10 * time.Second
			}
			got, err := c.CountAfterRefresh(context.Background(), "v", names, timeout)
			if !wantError(t, err, tc.err) {
				return
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

// TestReadyCaughtUp: the bytes returned are those read once settle has
// passed since the call (a count of the queue made since: see
// ReadyCaughtUp), and once the statistics count the ready messages asked
// for, with their bytes; not those of the reads before.
func TestReadyCaughtUp(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		rows    []string // each read's row, the last repeated
		timeout time.Duration
		want    QueueCount
		reads   int
		err     error
	}{
		{
			// The reads before settle are not made: the first one made
			// already counts the messages and their bytes.
			name: "read once settled",
			rows: []string{
				`"messages_ready":30,"message_bytes_ready":30000`,
			},
			want:  QueueCount{Ready: 30, ReadyBytes: 30000},
			reads: 1,
		},
		{
			name: "the count before its bytes, then the bytes",
			rows: []string{
				``,
				`"messages_ready":30`,
				`"messages_ready":30,"message_bytes_ready":30000`,
			},
			want:  QueueCount{Ready: 30, ReadyBytes: 30000},
			reads: 3,
		},
		{
			name:  "a queue that is gone",
			rows:  []string{`-`},
			want:  QueueCount{Gone: true},
			reads: 1,
		},
		{
			name:    "statistics that never count the messages",
			rows:    []string{`"messages_ready":3,"message_bytes_ready":3000`},
			timeout: time.Second,
			err:     ErrNotRefreshed,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var (
				mu    sync.Mutex
				reads int
			)
			c := fakeAdmin(t, func(w http.ResponseWriter, r *http.Request) bool {
				mu.Lock()
				defer mu.Unlock()
				if r.URL.Path != "/api/queues/v/q" {
					return false
				}
				row := tc.rows[min(reads, len(tc.rows)-1)]
				reads++
				switch row {
				case "-":
					return false
				case "":
					fmt.Fprint(w, `{"name":"q"}`)
				default:
					fmt.Fprintf(w, `{"name":"q",%s}`, row)
				}
				return true
			})
			timeout := tc.timeout
			if timeout == 0 {
				timeout = 10 * time.Second
			}
			start := time.Now()
			got, err := c.ReadyCaughtUp(context.Background(), "v", "q", 30, 600*time.Millisecond, timeout)
			if took := time.Since(start); took < 600*time.Millisecond {
				t.Errorf("returned after %s, before settle", took)
			}
			if !wantError(t, err, tc.err) {
				return
			}
			if d := cmp.Diff(tc.want, got); d != "" {
				t.Errorf("count (-want +got):\n%s", d)
			}
			mu.Lock()
			defer mu.Unlock()
			if reads != tc.reads {
				t.Errorf("%d reads, want %d", reads, tc.reads)
			}
		})
	}
}

// fakeAdmin is a client of a fake management API that answers each request
// with handle first; what handle leaves (false) is a login as an
// administrator, a RabbitMQ 4.3.6 overview, or else a 404 (no such queue).
func fakeAdmin(t *testing.T, handle func(w http.ResponseWriter, r *http.Request) bool) *Client {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		switch {
		case handle(w, r):
		case r.URL.Path == "/api/whoami":
			fmt.Fprint(w, `{"name":"bob","tags":["administrator"]}`)
		case r.URL.Path == "/api/overview":
			fmt.Fprint(w, `{"rabbitmq_version":"4.3.6","cluster_name":"fake"}`)
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
	return c
}

// wantError checks err against want (nil: no error), an error that names
// queue "q" of vhost "v"; it reports whether the call succeeded as wanted
// and its result is for the caller to check.
func wantError(t *testing.T, err, want error) bool {
	t.Helper()
	if want != nil {
		if !errors.Is(err, want) || !strings.Contains(err.Error(), `queue "q" in vhost "v"`) {
			t.Fatalf("err = %v, want %v naming the queue", err, want)
		}
		return false
	}
	if err != nil {
		t.Fatal(err)
	}
	return true
}
