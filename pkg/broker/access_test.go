package broker

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"
)

func TestAMQPURL(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		base     string
		amqp     int
		amqps    int
		override string
		want     string
		wantErr  bool
	}{
		{name: "reported listener port", base: "http://rabbit:15672", amqp: 5673, want: "amqp://u:p@rabbit:5673"},
		{name: "no listener reported: 5672", base: "http://rabbit:15672", want: "amqp://u:p@rabbit:5672"},
		{name: "https management: amqps on the TLS listener", base: "https://rabbit:15671", amqp: 5672, amqps: 5676, want: "amqps://u:p@rabbit:5676"},
		{name: "IPv6 host", base: "http://[::1]:15672", amqp: 5672, want: "amqp://u:p@[::1]:5672"},
		{name: "override keeps its own credentials", base: "http://rabbit:15672", override: "amqp://other:secret@mq:5999", want: "amqp://other:secret@mq:5999"},
		{name: "override without credentials gets the client's", base: "http://rabbit:15672", override: "amqp://mq:5999/", want: "amqp://u:p@mq:5999"},
		{name: "override that is not AMQP", base: "http://rabbit:15672", override: "http://mq:5999", wantErr: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := &Client{endpoints: []string{tc.base}, user: "u", pass: "p", listenersRead: true, amqpPort: tc.amqp, amqpsPort: tc.amqps,
				listensOnDefault: map[bool]bool{false: false, true: false}}
			got, err := c.AMQPURL(context.Background(), tc.override)
			if (err != nil) != tc.wantErr {
				t.Fatalf("err = %v", err)
			}
			if got != tc.want {
				t.Errorf("AMQPURL = %q, want %q", got, tc.want)
			}
		})
	}
}

// TestInvalidAMQPURLHidesItsPassword: an --amqp-url that does not parse
// is quoted with its password masked, whatever the password holds (a
// space ends the URL MaskURL finds in a text).
func TestInvalidAMQPURLHidesItsPassword(t *testing.T) {
	t.Parallel()
	tests := []struct{ name, override, want string }{
		{"a space", "amqp://guest:" + secret + " x@rabbit:5672", `invalid AMQP URL "amqp://guest:***@rabbit:5672"`},
		{"a space and a bad escape", "amqp://guest:" + secret + " %zz@rabbit:5672", `invalid AMQP URL "amqp://guest:***@rabbit:5672"`},
		{"no port but a password without its @", "amqp://guest:" + secret, `invalid AMQP URL "amqp://guest:***"`},
		{"a bad port", "amqp://guest:" + secret + "@rabbit:x", `invalid AMQP URL "amqp://guest:***@rabbit:x"`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := &Client{endpoints: []string{"http://rabbit:15672"}, user: "u", pass: "p", listenersRead: true}
			_, err := c.AMQPURL(context.Background(), tc.override)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want one containing %s", err, tc.want)
			}
			if strings.Contains(err.Error(), secret) {
				t.Errorf("the error shows the password: %v", err)
			}
		})
	}
}

// TestAMQPURLAsksTheDefaultPortFirst: the AMQP port comes from the node's
// port-listener health check when the node listens on the protocol's own
// port (5672, or 5671 for amqps), without the overview, which sums up the
// broker's statistics; where it does not (the check answers 503, once: not
// a node in trouble) or the check fails, from the overview's listeners of
// the node that answered. Each is asked once per client.
func TestAMQPURLAsksTheDefaultPortFirst(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name      string
		tls       bool
		check     int // the check's status
		want      string
		wantErr   string // the beginning of the error, and --amqp-url in it
		hidden    bool   // the overview shows no listeners (a user without the monitoring tag)
		overviews int    // overview listener reads
	}{
		{name: "node listens on 5672", check: http.StatusOK, want: ":5672"},
		{name: "node listens elsewhere", check: http.StatusServiceUnavailable, want: ":5673", overviews: 1},
		{name: "check refused (no such endpoint)", check: http.StatusNotFound, want: ":5673", overviews: 1},
		{name: "amqps: node listens on 5671", tls: true, check: http.StatusOK, want: ":5671"},
		{name: "amqps: node listens elsewhere", tls: true, check: http.StatusServiceUnavailable, want: ":5676", overviews: 1},
		// A user without the monitoring or administrator tag is shown no
		// listeners ([]): where the node said it does not listen on
		// 5672, 5672 is another broker's (mqctl applied to the 4.3.6
		// broker on 5672 what it planned on the 4.0.5 one on 5872), and
		// the AMQP URL must be given; where the check failed, 5672 is
		// still the best guess.
		{name: "not shown the listeners, node listens elsewhere", hidden: true, check: http.StatusServiceUnavailable, wantErr: `the node at http://127.0.0.1:`, overviews: 1},
		{name: "not shown the listeners, check refused", hidden: true, check: http.StatusNotFound, want: ":5672", overviews: 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var (
				mu     sync.Mutex
				asked  []string
				checks = map[string]int{}
			)
			c := fakeAdmin(t, func(w http.ResponseWriter, r *http.Request) bool {
				mu.Lock()
				asked = append(asked, r.URL.Path+"?"+r.URL.RawQuery)
				mu.Unlock()
				switch {
				case r.URL.Path == "/api/overview" && strings.Contains(r.URL.Query().Get("columns"), "listeners") && tc.hidden:
					fmt.Fprint(w, `[]`)
				case r.URL.Path == "/api/overview" && strings.Contains(r.URL.Query().Get("columns"), "listeners"):
					fmt.Fprint(w, `{"node":"b@h","listeners":[{"node":"a@h","protocol":"amqp","port":5672},{"node":"b@h","protocol":"amqp","port":5673},{"node":"b@h","protocol":"amqp/ssl","port":5676}]}`)
				case strings.HasPrefix(r.URL.Path, "/api/health/checks/port-listener/"):
					mu.Lock()
					checks[strings.TrimPrefix(r.URL.Path, "/api/health/checks/port-listener/")]++
					mu.Unlock()
					w.WriteHeader(tc.check)
					fmt.Fprint(w, `{"status":"failed","reason":"No active listener","missing":5672,"ports":[5673]}`)
				default:
					return false
				}
				return true
			})
			for range 2 {
				var got string
				if tc.tls {
					// (AMQPURL asks for amqps when the management API is
					// https; this server is not.)
					port, err := c.listenerPort(context.Background(), true)
					if err != nil {
						t.Fatal(err)
					}
					got = fmt.Sprintf(":%d", port)
				} else {
					raw, err := c.AMQPURL(context.Background(), "")
					if tc.wantErr != "" {
						if err == nil || !strings.HasPrefix(err.Error(), tc.wantErr) || !strings.Contains(err.Error(), "--amqp-url") {
							t.Fatalf("AMQPURL = %q, %v; want an error beginning %q that names --amqp-url", raw, err, tc.wantErr)
						}
						continue
					}
					if err != nil {
						t.Fatal(err)
					}
					u, _ := url.Parse(raw)
					got = ":" + u.Port()
				}
				if got != tc.want {
					t.Fatalf("port %s, want %s (asked %v)", got, tc.want, asked)
				}
			}
			mu.Lock()
			defer mu.Unlock()
			overviews := 0
			for _, a := range asked {
				if strings.Contains(a, "listeners") {
					overviews++
				}
			}
			wantCheck := "5672"
			if tc.tls {
				wantCheck = "5671"
			}
			if overviews != tc.overviews || checks[wantCheck] != 1 || len(checks) != 1 {
				t.Errorf("overview listener reads %d (want %d), checks %v (want %s once); asked %v", overviews, tc.overviews, checks, wantCheck, slices.Clone(asked))
			}
		})
	}
}
