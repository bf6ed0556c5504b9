package broker

import (
	"context"
	"crypto/tls"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

const secret = "Sup3r-Secret-Pw!"

func TestMaskURL(t *testing.T) {
	t.Parallel()
	tests := []struct{ in, want string }{
		{"http://user:" + secret + "@host:15672/api", "http://user:***@host:15672/api"},
		{"amqp://guest:guest@127.0.0.1:5672/%2F", "amqp://guest:***@127.0.0.1:5672/%2F"},
		{"dial amqps://a:b@h:5671/v failed; also http://c:d@e/", "dial amqps://a:***@h:5671/v failed; also http://c:***@e/"},
		{"http://user@host/", "http://user@host/"},
		{"http://host:15672", "http://host:15672"},
		{"no url here", "no url here"},
		{"shovel failed: amqp://bob:" + secret + "@/v is down", "shovel failed: amqp://bob:***@/v is down"},
		{`{error,"amqp://bob:` + secret + `@/"}`, `{error,"amqp://bob:***@/"}`},
		{"amqp://u:p@" + secret + "@h/v refused", "amqp://u:***@h/v refused"},
		{"amqps://u:" + secret + "/x@h/v", "amqps://u:***@h/v"},
		{"amqp://bob@/v", "amqp://bob@/v"},
		{`parse "amqp://u:` + secret + `@h": invalid`, `parse "amqp://u:***@h": invalid`},
		{`dial "amqp://u:p\"` + secret + `@h/v"`, `dial "amqp://u:***@h/v"`},
		{`<<"amqp://u:` + secret + `@/v">>`, `<<"amqp://u:***@/v">>`},
		// A quoted URL ending in its query's password keeps its closing quote.
		{`{bad, "amqps://h/v?verify=x&password=` + secret + `"}`, `{bad, "amqps://h/v?verify=x&password=***"}`},
		// ... unless more than punctuation follows it: the password may hold a quote.
		{`"amqps://h/v?password=a"` + secret + `"}`, `"amqps://h/v?password=***`},
		{`"amqp://u:a"` + secret + `@h/v"`, `"amqp://u:***@h/v"`},
	}
	for _, tt := range tests {
		if got := MaskURL(tt.in); got != tt.want {
			t.Errorf("MaskURL(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

// fakeAPI answers /api/whoami and /api/overview like RabbitMQ 3.10, or with
// the given status and body for whoami.
func fakeAPI(status int, body string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		switch r.URL.Path {
		case "/api/whoami":
			if status != http.StatusOK {
				w.WriteHeader(status)
				fmt.Fprint(w, body)
				return
			}
			fmt.Fprint(w, `{"name":"bob","tags":["administrator"]}`)
		case "/api/overview":
			fmt.Fprint(w, `{"rabbitmq_version":"3.10.8","cluster_name":"fake"}`)
		default:
			w.WriteHeader(http.StatusNotFound)
			fmt.Fprint(w, `{"error":"Object Not Found","reason":"Not Found"}`)
		}
	})
}

func closedPort(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	return addr
}

func TestConnectClassifiesErrors(t *testing.T) {
	t.Parallel()
	loginFailed := httptest.NewServer(fakeAPI(http.StatusUnauthorized, `{"error":"not_authorized","reason":"Login failed"}`))
	defer loginFailed.Close()
	notMgmt := httptest.NewServer(fakeAPI(http.StatusUnauthorized, `{"error":"not_authorised","reason":"Not management user"}`))
	defer notMgmt.Close()
	proxy := httptest.NewServer(fakeAPI(http.StatusBadGateway, "<html><body><h1>502 Bad Gateway</h1></body></html>"))
	defer proxy.Close()
	static := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusNotAcceptable)
	}))
	defer static.Close()
	slow := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-time.After(2 * time.Second):
		case <-r.Context().Done():
		}
	}))
	defer slow.Close()
	down := "http://" + closedPort(t)

	tests := []struct {
		name    string
		cfg     Config
		want    error
		message string // the whole error text, with %s for the server
		server  string
	}{
		{"wrong password", Config{Server: loginFailed.URL, Username: "bob", Password: secret}, ErrUnauthorized,
			`authentication failed for user "bob" at %s: check --username/--password`, loginFailed.URL},
		{"password in URL", Config{Server: strings.Replace(loginFailed.URL, "http://", "http://bob:"+secret+"@", 1)}, ErrUnauthorized,
			`authentication failed for user "bob" at %s: check --username/--password`, loginFailed.URL},
		{"no management tag", Config{Server: notMgmt.URL, Username: "bob", Password: secret}, ErrForbidden,
			`log in: user "bob" may not do this at %s: Not management user (an administrator gives the user the management tag, adding any tags it has: rabbitmqctl set_user_tags bob management)`, notMgmt.URL},
		{"unreachable", Config{Server: down, Username: "bob", Password: secret}, ErrUnreachable,
			"cannot reach the management API at %s: ", down},
		{"unreachable, password in URL", Config{Server: strings.Replace(down, "http://", "http://bob:"+secret+"@", 1)}, ErrUnreachable,
			"cannot reach the management API at %s: ", down},
		{"timeout", Config{Server: slow.URL, Username: "bob", Password: secret, Timeout: 200 * time.Millisecond}, ErrUnreachable,
			"cannot reach the management API at %s: no answer within 200ms", slow.URL},
		{"proxy error page", Config{Server: proxy.URL, Username: "bob", Password: secret}, ErrRejected,
			"log in: the broker at %s refused (502): <html><body><h1>502 Bad Gateway</h1></body></html>", proxy.URL},
		// A path the API is not under: the management plugin answers its
		// static files' 406 (RabbitMQ 4.3.6, 4.0.5, 3.10.8 for
		// /rabbitmq/api/whoami without management.path_prefix), another
		// server 404. The fix is the URL, not "log in … refused (406)".
		{"path prefix the broker does not serve", Config{Server: static.URL + "/rabbitmq", Username: "bob", Password: secret}, ErrRejected,
			"no management API at %s/rabbitmq: GET %[1]s/rabbitmq/api/whoami answered 406 Not Acceptable; give --server the URL the management UI opens at (http://HOST:15672, or https://HOST:15671), with a path only when the broker serves the API under one (management.path_prefix in rabbitmq.conf)", static.URL},
		{"path no API is under", Config{Server: loginFailed.URL + "/mq/", Username: "bob", Password: secret}, ErrNotFound,
			"no management API at %s/mq: GET %[1]s/mq/api/whoami answered 404 Not Found; give --server", loginFailed.URL},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := Connect(context.Background(), tt.cfg)
			if err == nil {
				t.Fatalf("Connect succeeded (%v), want an error", c.Server())
			}
			if !errors.Is(err, tt.want) {
				t.Errorf("error %q does not wrap %v", err, tt.want)
			}
			want := fmt.Sprintf(tt.message, tt.server)
			if !strings.HasPrefix(err.Error(), want) {
				t.Errorf("error\n  %s\nwant it to start with\n  %s", err, want)
			}
			if strings.Contains(err.Error(), secret) {
				t.Errorf("error text shows the password: %s", err)
			}
		})
	}
}

func TestConnectRejectsBadConfig(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	notPEM := filepath.Join(dir, "ca.pem")
	if err := os.WriteFile(notPEM, []byte("not a certificate"), 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		cfg  Config
		want string
		is   error
	}{
		{"bad scheme", Config{Server: "ftp://u:" + secret + "@host/"}, `invalid management API URL "ftp://u:***@host/"`, nil},
		// MaskURL stops at a space: the whole URL is masked.
		{"a space in the password", Config{Server: "http://u:" + secret + " x@host:15672"}, `invalid management API URL "http://u:***@host:15672"`, nil},
		{"a space in a password without a scheme", Config{Server: "u:" + secret + " x@host:15672"}, `invalid management API URL "u:***@host:15672"`, nil},
		// A , splits the list: http://u:SECRET and x@host:15672.
		{"a comma in the password", Config{Server: "http://u:" + secret + ",x@host:15672"}, `invalid management API URL "http://u:***": want http://HOST:PORT or https://HOST:PORT (--server / MQCTL_SERVER; a , separates URLs`, nil},
		{"a comma in the password of a list", Config{Servers: []string{"http://h:1", "u:" + secret}}, `invalid management API URL "u:***"`, nil},
		// The AMQP URL given to --server, and an IPv6 address without its
		// brackets, say what to write instead (the address is masked as
		// a password would be: "http://u:PW" reads the same way).
		{"AMQP URL", Config{Server: "amqp://u:" + secret + "@host:5672"}, `invalid management API URL "amqp://u:***@host:5672": want http://HOST:PORT or https://HOST:PORT (--server / MQCTL_SERVER; a , separates URLs: write a , or a space in a password as %2C or %20); that is an AMQP URL, for --amqp-url (MQCTL_AMQP_URL): --server takes the management API's, http://HOST:15672 (https://HOST:15671 with TLS)`, nil},
		{"IPv6 without brackets", Config{Server: "http://::1:15672"}, `invalid management API URL "http://:***": want http://HOST:PORT or https://HOST:PORT (--server / MQCTL_SERVER; a , separates URLs: write a , or a space in a password as %2C or %20); an IPv6 address goes in brackets: http://[::1]:15672`, nil},
		{"missing CA file", Config{Server: "https://h", CACert: filepath.Join(dir, "nope.pem")}, "read CA certificate (--ca-cert)", ErrTLS},
		{"CA file without PEM", Config{Server: "https://h", CACert: notPEM}, "holds no PEM certificate", ErrTLS},
		{"cert without key", Config{Server: "https://h", ClientCert: notPEM}, "--client-cert and --client-key go together", ErrTLS},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Connect(context.Background(), tt.cfg)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("error = %v, want one containing %q", err, tt.want)
			}
			if tt.is != nil && !errors.Is(err, tt.is) {
				t.Errorf("error %q does not wrap %v", err, tt.is)
			}
			if strings.Contains(err.Error(), secret) {
				t.Errorf("error text shows the password: %s", err)
			}
		})
	}
}

func TestConnectTLS(t *testing.T) {
	t.Parallel()
	srv := httptest.NewTLSServer(fakeAPI(http.StatusOK, ""))
	defer srv.Close()
	plain := httptest.NewServer(fakeAPI(http.StatusOK, ""))
	defer plain.Close()
	ca := filepath.Join(t.TempDir(), "ca.pem")
	pemBytes := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw})
	if err := os.WriteFile(ca, pemBytes, 0o600); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()

	_, err := Connect(ctx, Config{Server: srv.URL, Password: secret, Username: "bob"})
	if !errors.Is(err, ErrTLS) || !strings.Contains(err.Error(), "--ca-cert") {
		t.Errorf("unknown CA: error = %v, want ErrTLS naming --ca-cert", err)
	}
	c, err := Connect(ctx, Config{Server: srv.URL, CACert: ca})
	if err != nil {
		t.Fatalf("with --ca-cert: %v", err)
	}
	if c.Version() != "3.10.8" || !c.IsAdmin() {
		t.Errorf("version %q admin %v, want 3.10.8 and true", c.Version(), c.IsAdmin())
	}
	if _, err := Connect(ctx, Config{Server: srv.URL, InsecureSkipVerify: true}); err != nil {
		t.Errorf("with --insecure-skip-verify: %v", err)
	}
	_, err = Connect(ctx, Config{Server: strings.Replace(plain.URL, "http://", "https://", 1)})
	if !errors.Is(err, ErrTLS) || !strings.Contains(err.Error(), "does not speak TLS") {
		t.Errorf("https to a plain listener: error = %v, want ErrTLS saying it does not speak TLS", err)
	}
}

func TestConnectHonoursContext(t *testing.T) {
	t.Parallel()
	slow := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		<-r.Context().Done()
	}))
	defer slow.Close()
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(50*time.Millisecond, cancel)
	_, err := Connect(ctx, Config{Server: slow.URL})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("error = %v, want context.Canceled", err)
	}
	// Ctrl-C while the management API does not answer says so, and where
	// (it said "log in: context canceled").
	if want := "log in: interrupted while waiting for the management API at " + slow.URL + " to answer"; err.Error() != want {
		t.Errorf("error %q, want %q", err, want)
	}
}

func TestServerURLForms(t *testing.T) {
	t.Parallel()
	tests := []struct{ in, base, user string }{
		{"", "http://localhost:15672", "guest"},
		{"localhost:15672", "http://localhost:15672", "guest"},
		{"https://rabbit.example:15671/", "https://rabbit.example:15671", "guest"},
		{"https://rabbit.example/mgmt/api/", "https://rabbit.example/mgmt", "guest"},
		{"http://alice:pw@rabbit:15672", "http://rabbit:15672", "alice"},
	}
	for _, tt := range tests {
		c, err := newClient(Config{Server: tt.in})
		if err != nil {
			t.Errorf("newClient(%q): %v", tt.in, err)
			continue
		}
		if c.Server() != tt.base || c.user != tt.user {
			t.Errorf("newClient(%q): base %q user %q, want %q %q", tt.in, c.Server(), c.user, tt.base, tt.user)
		}
	}
}

// TestConnectToAnAMQPPort: --server given the broker's AMQP port gets an
// error that says so and which port to give, at once: an AMQP listener
// answers an HTTP request with its protocol header (as RabbitMQ does), and
// trying again cannot help.
func TestConnectToAnAMQPPort(t *testing.T) {
	t.Parallel()
	for _, scheme := range []string{"http", "https"} {
		// A listener of its own for each: a connection of one case that
		// the client leaves open is never counted in the other.
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		var accepted atomic.Int32
		go func() {
			for {
				conn, err := l.Accept()
				if err != nil {
					return
				}
				accepted.Add(1)
				// Each connection apart, as a broker serves them: the
				// overview's, asked beside the login and cancelled when
				// the login fails, may stay open and silent in the
				// client's pool, and a server that waited on it would
				// answer no other (CI's 3.10 leg on c44a78b: the https
				// case found no answer).
				go func(conn net.Conn) {
					defer conn.Close()
					// RabbitMQ reads a protocol header's 8 bytes before
					// it answers one it does not speak; answering before
					// the request is written lets Go's transport call the
					// connection idle and try again, which no broker does.
					io.ReadFull(conn, make([]byte, 8))
					conn.Write([]byte("AMQP\x00\x00\x09\x01"))
				}(conn)
			}
		}()
		server := scheme + "://" + l.Addr().String()
		_, err = Connect(context.Background(), Config{Server: server, Username: "bob", Password: secret})
		want := server + " answers in AMQP, not HTTP: that is the broker's AMQP port; give --server the management API's (15672 by default, 15671 with TLS)"
		if err == nil || !strings.HasPrefix(err.Error(), want) || !errors.Is(err, ErrUnreachable) {
			t.Errorf("%s: error %v, want one starting %q", scheme, err, want)
		}
		// The login's, and the overview's asked beside it (loginBeside)
		// unless the login's failure cancelled it first: neither tried
		// again.
		if n := accepted.Load(); n < 1 || n > 2 {
			t.Errorf("%s: %d connections, want 1 or 2 (the login and the overview beside it; an AMQP answer is not tried again)", scheme, n)
		}
		l.Close()
	}
}

// TestDialAMQPToAnHTTPPort: --amqp-url given an HTTP port says so and
// which port to give, whether the listener answers in HTTP or closes
// without a word (RabbitMQ's management listener does, once its request
// timeout passes); the password never shows.
func TestDialAMQPToAnHTTPPort(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name, answer, want string
	}{
		{"answers in HTTP", "HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n", "it answers in HTTP, not AMQP (is it the management API's port?); give --amqp-url the broker's AMQP port (5672 by default, 5671 with TLS)"},
		{"closes without a word", "", "it closed the connection without answering the AMQP handshake, as the management API's port does; give --amqp-url the broker's AMQP port (5672 by default, 5671 with TLS)"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			l, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			defer l.Close()
			go func() {
				conn, err := l.Accept()
				if err != nil {
					return
				}
				_, _ = io.ReadFull(conn, make([]byte, 8))
				_, _ = conn.Write([]byte(tt.answer))
				conn.Close()
			}()
			_, err = DialAMQP(context.Background(), AMQPDial{URL: "amqp://bob:" + secret + "@" + l.Addr().String(), Vhost: "v"})
			want := "cannot open an AMQP connection to " + l.Addr().String() + ": " + tt.want
			if err == nil || err.Error() != want {
				t.Errorf("error %v\nwant %s", err, want)
			}
		})
	}
}

// TestDefaultCredentials: each setting falls back on its own, and the
// user guest without a password logs in with guest's default password
// (scripts/broker env sets MQCTL_USERNAME alone: a plan then failed with
// "authentication failed for user guest"); another user without one has
// none.
func TestDefaultCredentials(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		cfg        Config
		user, pass string
	}{
		{Config{}, "guest", "guest"},
		{Config{Username: "guest"}, "guest", "guest"},
		{Config{Password: "pw"}, "guest", "pw"},
		{Config{Username: "alice"}, "alice", ""},
		{Config{Server: "http://alice:pw@h:15672"}, "alice", "pw"},
		{Config{Server: "http://guest@h:15672"}, "guest", "guest"},
	} {
		c, err := newClient(tc.cfg)
		if err != nil {
			t.Fatal(err)
		}
		if c.user != tc.user || c.pass != tc.pass {
			t.Errorf("%+v: logs in as %q with password %q, want %q and %q", tc.cfg, c.user, c.pass, tc.user, tc.pass)
		}
	}
}

// TestDialAMQPMistakes: an --amqp-url whose port nothing listens on, or
// amqps:// to a plain listener, says what to give instead; the broker's
// words and the dialer's alone named no fix. The password never shows.
func TestDialAMQPMistakes(t *testing.T) {
	t.Parallel()
	// A plain AMQP listener answers a TLS ClientHello with its protocol
	// header and closes, as RabbitMQ's does.
	plain, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer plain.Close()
	go func() {
		for {
			conn, err := plain.Accept()
			if err != nil {
				return
			}
			_, _ = io.ReadFull(conn, make([]byte, 8))
			_, _ = conn.Write([]byte("AMQP\x00\x00\x09\x01"))
			conn.Close()
		}
	}()
	down := closedPort(t)
	plainAddr := plain.Addr().String()
	for _, tt := range []struct {
		name, url, want string
	}{
		{"nothing listens", "amqp://bob:" + secret + "@" + down, `cannot open an AMQP connection to ` + down + ` for vhost "v": dial tcp ` + down + `: connect: connection refused: nothing listens there; give --amqp-url the broker's AMQP port (5672 by default, 5671 with TLS)`},
		{"amqps to a plain listener", "amqps://bob:" + secret + "@" + plainAddr, `cannot open an AMQP connection to ` + plainAddr + ` for vhost "v": tls: first record does not look like a TLS handshake: that port does not speak TLS; use amqp:// for a plain listener (5672 by default), or the TLS listener's port (5671 by default)`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := DialAMQP(context.Background(), AMQPDial{URL: tt.url, Vhost: "v", TLS: &tls.Config{InsecureSkipVerify: true}}) //nolint:gosec // test
			if err == nil || err.Error() != tt.want {
				t.Errorf("error %v\nwant %s", err, tt.want)
			}
			if err != nil && strings.Contains(err.Error(), secret) {
				t.Errorf("error shows the password: %v", err)
			}
		})
	}
	for _, tt := range []struct{ raw, want string }{
		{"http://u:" + secret + "@h:15672", `invalid AMQP URL "http://u:***@h:15672": want amqp://HOST:PORT or amqps://HOST:PORT (--amqp-url / MQCTL_AMQP_URL); that is the management API's URL, for --server: --amqp-url takes the broker's AMQP listener, amqp://HOST:5672 (amqps://HOST:5671 with TLS)`},
		{"h:5672", `invalid AMQP URL "h:5672": want amqp://HOST:PORT or amqps://HOST:PORT (--amqp-url / MQCTL_AMQP_URL); write the scheme: amqp://h:5672`},
	} {
		if _, err := parseAMQPURL(tt.raw); err == nil || err.Error() != tt.want {
			t.Errorf("parseAMQPURL(%q): error %v\nwant %s", tt.raw, err, tt.want)
		}
	}
}

// TestConnectOverviewBesideLogin: with one endpoint, the overview is asked
// while the login is still out (one round trip before the first read, not
// two); the login's failure is still the one reported.
func TestConnectOverviewBesideLogin(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name  string
		login int // the login's status
		want  error
	}{
		{"logged in", http.StatusOK, nil},
		{"login refused", http.StatusUnauthorized, ErrUnauthorized},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			asked := make(chan struct{})
			var once sync.Once
			var beside atomic.Bool
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				switch r.URL.Path {
				case "/api/whoami":
					select {
					case <-asked:
						beside.Store(true)
					case <-time.After(20 * time.Second): // asked after the login: the test fails below
					}
					if tc.login != http.StatusOK {
						w.WriteHeader(tc.login)
						_, _ = io.WriteString(w, `{"error":"not_authorized","reason":"Login failed"}`)
						return
					}
					_, _ = io.WriteString(w, `{"name":"bob","tags":["administrator"]}`)
				case "/api/overview":
					once.Do(func() { close(asked) })
					_, _ = io.WriteString(w, `{"rabbitmq_version":"4.3.6","cluster_name":"c"}`)
				default:
					w.WriteHeader(http.StatusNotFound)
				}
			}))
			defer srv.Close()
			c, err := Connect(context.Background(), Config{Server: srv.URL, Username: "bob", Password: secret})
			if !beside.Load() {
				t.Error("the overview was not asked until the login had answered")
			}
			if tc.want != nil {
				if !errors.Is(err, tc.want) {
					t.Fatalf("Connect = %v, want %v", err, tc.want)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if c.Version() != "4.3.6" || c.ClusterName() != "c" || !c.IsAdmin() {
				t.Errorf("Connect read version %q, cluster %q, admin %v; want 4.3.6, c, true", c.Version(), c.ClusterName(), c.IsAdmin())
			}
		})
	}
}
