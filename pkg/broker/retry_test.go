package broker

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mqctl/mqctl/pkg/topology"
)

// fastRetry keeps offline tests quick: the schedule, not the pauses, is
// under test.
var fastRetry = Retry{Attempts: 4, Backoff: time.Millisecond, MaxBackoff: 4 * time.Millisecond, Budget: 10 * time.Second}

// script is a fake management API whose answers to one path follow a
// script: each entry answers one request, and the last one repeats.
type script struct {
	mu    sync.Mutex
	steps map[string][]string // "METHOD /api/path" -> "ok", "500", "502", "stall", "reset"
	seen  map[string]int
}

func newScript(steps map[string][]string) *script {
	return &script{steps: steps, seen: map[string]int{}}
}

func (s *script) count(key string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.seen[key]
}

func (s *script) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	key := r.Method + " " + r.URL.Path
	s.mu.Lock()
	n := s.seen[key]
	s.seen[key]++
	step := "ok"
	if list := s.steps[key]; len(list) > 0 {
		step = list[min(n, len(list)-1)]
	}
	s.mu.Unlock()
	// The server notices a client that gave up only once the body is read.
	_, _ = io.Copy(io.Discard, r.Body)
	switch step {
	case "stall":
		<-r.Context().Done()
		return
	case "reset":
		conn, _, err := w.(http.Hijacker).Hijack()
		if err == nil {
			conn.(*net.TCPConn).SetLinger(0)
			conn.Close()
		}
		return
	case "ok":
	default:
		var code int
		fmt.Sscan(step, &code)
		w.WriteHeader(code)
		fmt.Fprintf(w, `{"error":"scripted","reason":"scripted %d"}`, code)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	switch r.URL.Path {
	case "/api/whoami":
		fmt.Fprint(w, `{"name":"bob","tags":["administrator"]}`)
	case "/api/overview":
		fmt.Fprint(w, `{"rabbitmq_version":"3.10.8","cluster_name":"fake","node":"b@h",
			"listeners":[{"node":"a@h","protocol":"amqp","port":5672},{"node":"b@h","protocol":"amqp","port":5682}]}`)
	case "/api/vhosts":
		fmt.Fprint(w, `[{"name":"v"}]`)
	case "/api/vhosts/v":
		fmt.Fprint(w, `{"name":"v"}`)
	default:
		if r.Method == http.MethodGet {
			w.WriteHeader(http.StatusNotFound)
			fmt.Fprint(w, `{"error":"Object Not Found","reason":"Not Found"}`)
			return
		}
		w.WriteHeader(http.StatusCreated)
	}
}

func serve(t *testing.T, h http.Handler) string {
	t.Helper()
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return srv.URL
}

const whoami = "GET /api/whoami"

// Reads survive transient 5xx answers, resets and timeouts.
func TestReadsAreRetried(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		steps []string
	}{
		{"two 500s", []string{"500", "500", "ok"}},
		{"502, 503, 504", []string{"502", "503", "504", "ok"}},
		{"a reset", []string{"reset", "ok"}},
		{"a timeout", []string{"stall", "ok"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newScript(map[string][]string{whoami: tt.steps})
			c, err := Connect(context.Background(), Config{Server: serve(t, s), Timeout: 200 * time.Millisecond, Retry: fastRetry})
			if err != nil {
				t.Fatalf("Connect: %v", err)
			}
			if got := s.count(whoami); got != len(tt.steps) {
				t.Errorf("whoami asked %d times, want %d", got, len(tt.steps))
			}
			if c.Version() != "3.10.8" {
				t.Errorf("version %q", c.Version())
			}
		})
	}
}

// A read that keeps failing stops after the configured attempts (or the
// budget) with one line that says how often it was tried.
func TestReadsGiveUp(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		step    string
		retry   Retry
		tries   int
		want    error
		message string
	}{
		{"500 until the last attempt", "500", fastRetry, 4, ErrRejected, "log in: the broker at %s refused (500): scripted 500 (tried 4 times in "},
		{"no retry", "500", Retry{Attempts: 1}, 1, ErrRejected, "log in: the broker at %s refused (500): scripted 500"},
		// Each try stalls for the 200 ms timeout: the second starts at
		// about 200 ms, within the budget however late a loaded machine
		// ends the first (up to 180 ms late: it asked once, under CI's
		// load, with a budget of 250 ms), and a third would start past it.
		{"timeouts until the budget is spent", "stall", Retry{Attempts: 10, Backoff: time.Millisecond, Budget: 380 * time.Millisecond}, 2, ErrUnreachable,
			"cannot reach the management API at %s: no answer within 200ms: management API unreachable (tried 2 times in "},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newScript(map[string][]string{whoami: {tt.step}})
			url := serve(t, s)
			_, err := Connect(context.Background(), Config{Server: url, Timeout: 200 * time.Millisecond, Retry: tt.retry})
			if !errors.Is(err, tt.want) {
				t.Fatalf("error %v does not wrap %v", err, tt.want)
			}
			if want := fmt.Sprintf(tt.message, url); !strings.HasPrefix(err.Error(), want) {
				t.Errorf("error\n  %s\nwant it to start with\n  %s", err, want)
			}
			if strings.Contains(err.Error(), "\n") {
				t.Errorf("error spans several lines: %q", err)
			}
			if got := s.count(whoami); got != tt.tries {
				t.Errorf("whoami asked %d times, want %d", got, tt.tries)
			}
		})
	}
}

// A write that was sent and got no answer, or a 5xx, is not sent again:
// its error says the outcome is unknown.
func TestWritesWithUnknownOutcomeAreNotRetried(t *testing.T) {
	t.Parallel()
	const put = "PUT /api/queues/v/q"
	tests := []struct {
		name    string
		step    string
		also    error
		unknown bool
		message string
	}{
		{"connection reset", "reset", ErrUnreachable, true, `no answer from the management API at %s (`},
		{"timeout", "stall", ErrUnreachable, true, `no answer from the management API at %s (no answer within 200ms): the broker may or may not have done it`},
		{"500", "500", ErrRejected, true, `the management API at %s answered 500 (scripted 500): the broker may or may not have done it`},
		{"503", "503", ErrRejected, true, `the management API at %s answered 503`},
		{"400 is the broker's answer", "400", ErrRejected, false, `declare classic queue "q" in vhost "v": the broker at %s refused (400): scripted 400`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newScript(map[string][]string{put: {tt.step}})
			url := serve(t, s)
			c, err := Connect(context.Background(), Config{Server: url, Timeout: 200 * time.Millisecond, Retry: fastRetry})
			if err != nil {
				t.Fatal(err)
			}
			err = c.DeclareQueue(context.Background(), "v", &topology.Queue{Name: "q", Type: "classic", Durable: true})
			if errors.Is(err, ErrOutcomeUnknown) != tt.unknown || !errors.Is(err, tt.also) {
				t.Errorf("error %v: wraps ErrOutcomeUnknown %v (want %v), wraps %v %v", err, errors.Is(err, ErrOutcomeUnknown), tt.unknown, tt.also, errors.Is(err, tt.also))
			}
			if want := fmt.Sprintf(tt.message, url); err == nil || !strings.HasPrefix(err.Error(), want) {
				t.Errorf("error\n  %v\nwant it to start with\n  %s", err, want)
			}
			if got := s.count(put); got != 1 {
				t.Errorf("the PUT was sent %d times, want once", got)
			}
		})
	}
}

// A declaration answered 404 while its vhost exists (a node shutting
// down) did nothing: it is tried again. In a vhost that does not exist,
// the 404 is the answer.
func TestDeclarationAnswered404(t *testing.T) {
	t.Parallel()
	s := newScript(map[string][]string{"PUT /api/queues/v/q": {"404", "ok"}, "PUT /api/queues/w/q": {"404"}})
	c, err := Connect(context.Background(), Config{Server: serve(t, s), Retry: fastRetry})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.DeclareQueue(context.Background(), "v", &topology.Queue{Name: "q"}); err != nil {
		t.Errorf("declaration answered 404, then 201: %v", err)
	}
	if got := s.count("PUT /api/queues/v/q"); got != 2 {
		t.Errorf("the PUT was sent %d times, want twice", got)
	}
	err = c.DeclareQueue(context.Background(), "w", &topology.Queue{Name: "q"})
	if !errors.Is(err, ErrVhostNotFound) || errors.Is(err, ErrOutcomeUnknown) {
		t.Errorf("declaration in a missing vhost: %v, want ErrVhostNotFound", err)
	}
	if got := s.count("PUT /api/queues/w/q"); got != 1 {
		t.Errorf("the PUT into a missing vhost was sent %d times, want once", got)
	}
}

func closedURL(t *testing.T) string {
	t.Helper()
	return "http://" + closedPort(t)
}

// Several endpoints: a dead one (connection refused) or one that answers
// 5xx is skipped, and the one that answers becomes the current endpoint.
func TestFailover(t *testing.T) {
	t.Parallel()
	t.Run("first endpoint down", func(t *testing.T) {
		s := newScript(nil)
		live, dead := serve(t, s), closedURL(t)
		c, err := Connect(context.Background(), Config{Servers: []string{dead, live}, Retry: fastRetry})
		if err != nil {
			t.Fatalf("Connect: %v", err)
		}
		if c.Server() != live {
			t.Errorf("Server() = %s, want the live endpoint %s", c.Server(), live)
		}
		// A write that never left (connection refused) is safe to send to
		// the next endpoint.
		c.cur.Store(0)
		if err := c.DeclareQueue(context.Background(), "v", &topology.Queue{Name: "q", Type: "classic"}); err != nil {
			t.Errorf("declare after the current endpoint died: %v", err)
		}
		if got := s.count("PUT /api/queues/v/q"); got != 1 {
			t.Errorf("the PUT reached the live endpoint %d times, want once", got)
		}
	})
	t.Run("first endpoint answers 500", func(t *testing.T) {
		bad := newScript(map[string][]string{whoami: {"500"}, "GET /api/vhosts": {"500"}})
		good := newScript(nil)
		badURL, goodURL := serve(t, bad), serve(t, good)
		c, err := Connect(context.Background(), Config{Server: badURL + ", " + goodURL, Retry: fastRetry})
		if err != nil {
			t.Fatalf("Connect: %v", err)
		}
		for range 3 {
			if _, err := c.VhostNames(context.Background()); err != nil {
				t.Fatal(err)
			}
		}
		if c.Server() != goodURL {
			t.Errorf("Server() = %s, want %s", c.Server(), goodURL)
		}
		if got := bad.count(whoami) + bad.count("GET /api/vhosts"); got != 1 {
			t.Errorf("the failing endpoint was asked %d times, want once (the client stays on the one that answers)", got)
		}
		// The listeners of the node that answered.
		if u, _ := c.AMQPURL(context.Background(), ""); !strings.HasSuffix(u, ":5682") {
			t.Errorf("AMQP URL %s, want the answering node's port 5682", MaskURL(u))
		}
	})
	t.Run("concurrent requests agree on the endpoint", func(t *testing.T) {
		bad := newScript(map[string][]string{"GET /api/vhosts": {"503"}})
		good := newScript(nil)
		goodURL := serve(t, good)
		c, err := Connect(context.Background(), Config{Servers: []string{serve(t, bad), goodURL}, Retry: fastRetry})
		if err != nil {
			t.Fatal(err)
		}
		var wg sync.WaitGroup
		errs := make(chan error, 16)
		for range 16 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				_, err := c.VhostNames(context.Background())
				errs <- err
			}()
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			if err != nil {
				t.Error(err)
			}
		}
		if c.Server() != goodURL {
			t.Errorf("Server() = %s, want %s", c.Server(), goodURL)
		}
	})
	t.Run("a write with unknown outcome moves on too", func(t *testing.T) {
		bad := newScript(map[string][]string{"PUT /api/queues/v/q": {"reset"}})
		good := newScript(nil)
		badURL, goodURL := serve(t, bad), serve(t, good)
		c, err := Connect(context.Background(), Config{Servers: []string{badURL, goodURL}, Retry: fastRetry})
		if err != nil {
			t.Fatal(err)
		}
		err = c.DeclareQueue(context.Background(), "v", &topology.Queue{Name: "q"})
		if !errors.Is(err, ErrOutcomeUnknown) {
			t.Fatalf("error %v, want ErrOutcomeUnknown", err)
		}
		if good.count("PUT /api/queues/v/q") != 0 {
			t.Error("the write was sent again to the next endpoint")
		}
		if c.Server() != goodURL {
			t.Errorf("Server() = %s after the failed write, want the next endpoint %s (for the read back)", c.Server(), goodURL)
		}
	})
}

// Every endpoint dead: one line naming each, credentials masked.
func TestAllEndpointsDown(t *testing.T) {
	t.Parallel()
	a, b := closedURL(t), closedURL(t)
	withPass := strings.Replace(a, "http://", "http://bob:"+secret+"@", 1)
	_, err := Connect(context.Background(), Config{Servers: []string{withPass, b}, Retry: Retry{Attempts: 2, Backoff: time.Millisecond}})
	if !errors.Is(err, ErrUnreachable) {
		t.Fatalf("error %v, want ErrUnreachable", err)
	}
	msg := err.Error()
	if !strings.HasPrefix(msg, "no management API endpoint answered (4 tries in ") {
		t.Errorf("error %q", msg)
	}
	for _, ep := range []string{a + ": dial: connection refused", b + ": dial: connection refused"} {
		if !strings.Contains(msg, ep) {
			t.Errorf("error %q does not name %s", msg, ep)
		}
	}
	if strings.Contains(msg, secret) || strings.Contains(msg, "\n") {
		t.Errorf("error shows the password or spans lines: %q", msg)
	}
}

func TestServersConfig(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		cfg     Config
		want    []string
		user    string
		wantErr string
	}{
		{"default", Config{}, []string{"http://localhost:15672"}, "guest", ""},
		{"comma-separated Server", Config{Server: "a:15672, http://b:15672/"}, []string{"http://a:15672", "http://b:15672"}, "guest", ""},
		{"Servers win over Server", Config{Server: "x:1", Servers: []string{"a:1", "b:2", "a:1"}}, []string{"http://a:1", "http://b:2"}, "guest", ""},
		{"credentials of the first URL with some", Config{Servers: []string{"a:1", "http://alice:pw@b:2"}}, []string{"http://a:1", "http://b:2"}, "alice", ""},
		{"a password alone is guest's", Config{Password: "pw"}, []string{"http://localhost:15672"}, "guest", ""},
		{"a user and no password", Config{Username: "alice"}, []string{"http://localhost:15672"}, "alice", ""},
		{"the URL's user with the given password", Config{Password: "pw", Servers: []string{"http://alice@b:2"}}, []string{"http://b:2"}, "alice", ""},
		{"the given user wins over the URL's", Config{Username: "bob", Servers: []string{"http://alice:pw@b:2"}}, []string{"http://b:2"}, "bob", ""},
		{"a bad one is named", Config{Servers: []string{"a:1", "ftp://u:" + secret + "@b"}}, nil, "", `invalid management API URL "ftp://u:***@b"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := newClient(tt.cfg)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("error %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := c.Servers(); strings.Join(got, " ") != strings.Join(tt.want, " ") || c.user != tt.user {
				t.Errorf("servers %v user %q, want %v %q", got, c.user, tt.want, tt.user)
			}
		})
	}
}

// Cancelling stops the pauses between tries.
func TestRetryHonoursContext(t *testing.T) {
	t.Parallel()
	s := newScript(map[string][]string{whoami: {"500"}})
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(100*time.Millisecond, cancel)
	_, err := Connect(ctx, Config{Server: serve(t, s), Retry: Retry{Attempts: 100, Backoff: 20 * time.Millisecond, MaxBackoff: 20 * time.Millisecond, Budget: time.Minute}})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("error %v, want context.Canceled", err)
	}
	if msg := err.Error(); !strings.HasPrefix(msg, "log in: interrupted while waiting ") || strings.Contains(msg, "context canceled") {
		t.Errorf("error %q does not say the login was interrupted", msg)
	}
}

func TestPause(t *testing.T) {
	t.Parallel()
	r := DefaultRetry
	var got []time.Duration
	for round := range 5 {
		got = append(got, r.pause(round))
	}
	want := []time.Duration{250 * time.Millisecond, 500 * time.Millisecond, time.Second, 2 * time.Second, 2 * time.Second}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("pauses %v, want %v", got, want)
	}
}
