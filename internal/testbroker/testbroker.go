// Package testbroker gives tests a real RabbitMQ broker: it finds the one
// started by scripts/broker (or named by MQCTL_TEST_SERVER), creates a
// uniquely named vhost per test and deletes it when the test ends.
//
// Without a broker a test is skipped, except in CI (CI non-empty) or with
// MQCTL_REQUIRE_BROKER=1, where it fails.
//
// Environment: MQCTL_TEST_SERVER (management API, default
// http://127.0.0.1:15672), MQCTL_TEST_USERNAME / MQCTL_TEST_PASSWORD
// (default guest/guest; the user needs the administrator tag),
// MQCTL_TEST_TLS_DIR (the certificates of the TLS listeners; default
// $MQCTL_BROKER_DIR/tls, else .broker/tls in the repository, where
// scripts/broker makes them).
package testbroker

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/mqctl/mqctl/pkg/rmqversion"

	rabbithole "github.com/michaelklishin/rabbit-hole/v2"
)

// DefaultServer is the management API scripts/broker starts.
const DefaultServer = "http://127.0.0.1:15672"

// Broker is a reachable broker and the credentials tests use on it.
type Broker struct {
	URL      string // management API URL, e.g. http://127.0.0.1:15672
	Username string
	Password string
	AMQPHost string
	AMQPPort int
	// TLS listener ports the broker reports (0: none).
	AMQPSPort, HTTPSPort int
	// RH is a rabbit-hole client logged in as Username (an administrator).
	RH *rabbithole.Client
	// RabbitMQ is the version the broker reports, e.g. 4.0.5.
	RabbitMQ rmqversion.Version
}

// Version is the broker's RabbitMQ version; tests that assert behaviour
// which differs between versions branch on its Line() ("3.10", "4.0") and
// state every answer.
func (b *Broker) Version() rmqversion.Version { return b.RabbitMQ }

// New returns the test broker, or skips (fails in CI) the test when none
// answers.
func New(t testing.TB) *Broker {
	t.Helper()
	server := envOr("MQCTL_TEST_SERVER", DefaultServer)
	user := envOr("MQCTL_TEST_USERNAME", "guest")
	pass := envOr("MQCTL_TEST_PASSWORD", "guest")
	u, err := url.Parse(server)
	if err != nil || u.Host == "" {
		t.Fatalf("MQCTL_TEST_SERVER=%q is not a URL like http://127.0.0.1:15672", server)
	}
	rh, err := rabbithole.NewClient(strings.TrimRight(server, "/"), user, pass)
	if err != nil {
		t.Fatalf("rabbit-hole client for %s: %v", server, err)
	}
	rh.SetTimeout(30 * time.Second)

	// A broker that is not there refuses the connection at once; one that
	// is there but busy (a whole suite's tests at once: 4.0.5 and 4.3.6
	// each once took over 5 s for this overview in a CI run) gets time.
	probe := *rh
	probe.SetTimeout(30 * time.Second)
	ov, err := probe.Overview()
	if err != nil {
		var rerr rabbithole.ErrorResponse
		// rabbit-hole reports an answer with a JSON body as ErrorResponse
		// and one without as "Error 401 from RabbitMQ: …" (not a bare
		// "401": a refused connection's random port may contain it).
		if errors.As(err, &rerr) || strings.Contains(err.Error(), "Error 401 ") {
			t.Fatalf("the broker at %s refused user %q: %v (set MQCTL_TEST_USERNAME/MQCTL_TEST_PASSWORD)", server, user, err)
		}
		msg := fmt.Sprintf("no RabbitMQ broker at %s (%v); run scripts/broker start", server, err)
		if Required() {
			t.Fatal(msg + " — a broker is required here (CI or MQCTL_REQUIRE_BROKER=1)")
		}
		t.Skip(msg)
	}
	b := &Broker{URL: strings.TrimRight(server, "/"), Username: user, Password: pass, AMQPHost: u.Hostname(), AMQPPort: 5672, RH: rh}
	if b.RabbitMQ, err = rmqversion.Parse(ov.RabbitMQVersion); err != nil {
		t.Fatalf("the broker at %s reports version %q: %v", server, ov.RabbitMQVersion, err)
	}
	for _, l := range ov.Listeners {
		switch {
		case l.Port <= 0:
		case l.Protocol == "amqp":
			b.AMQPPort = int(l.Port)
		case l.Protocol == "amqp/ssl":
			b.AMQPSPort = int(l.Port)
		case l.Protocol == "https":
			b.HTTPSPort = int(l.Port)
		}
	}
	return b
}

// TLS describes the broker's TLS listeners and the certificates
// scripts/broker made for them.
type TLS struct {
	// Host is the name the server certificate is checked against
	// ("localhost"; 127.0.0.1 is in the certificate too).
	Host string
	// ManagementURL is the management API over HTTPS, e.g.
	// https://localhost:15671.
	ManagementURL string
	AMQPSPort     int
	// CACert signs the server and client certificates; ClientCert and
	// ClientKey are a client certificate (CN mqctl-test-client) for mutual TLS.
	CACert, ClientCert, ClientKey string
	// Dir holds all of them.
	Dir string
}

// ClientCertSubject is the subject of TLS.ClientCert as RabbitMQ prints it.
const ClientCertSubject = "CN=mqctl-test-client,O=mqctl test"

// AMQPSURL returns the amqps URL of vhost for user/password (Host and the
// AMQPS port).
func (x *TLS) AMQPSURL(user, password, vhost string) string {
	u := url.URL{Scheme: "amqps", User: url.UserPassword(user, password), Host: net.JoinHostPort(x.Host, strconv.Itoa(x.AMQPSPort))}
	return u.String() + "/" + url.PathEscape(vhost)
}

// TLS returns the broker's TLS endpoints and certificate files, or skips
// (fails in CI) the test when the broker has no TLS listeners or the
// certificates are not found.
func (b *Broker) TLS(t testing.TB) *TLS {
	t.Helper()
	dir, err := tlsDir()
	if err == nil && (b.AMQPSPort == 0 || b.HTTPSPort == 0) {
		err = fmt.Errorf("the broker at %s reports no TLS listeners (amqp/ssl port %d, https port %d); restart it with TLS: scripts/broker stop && scripts/broker start", b.URL, b.AMQPSPort, b.HTTPSPort)
	}
	x := &TLS{Host: "localhost", AMQPSPort: b.AMQPSPort, Dir: dir,
		CACert: filepath.Join(dir, "ca.pem"), ClientCert: filepath.Join(dir, "client.pem"), ClientKey: filepath.Join(dir, "client.key")}
	x.ManagementURL = "https://" + net.JoinHostPort(x.Host, strconv.Itoa(b.HTTPSPort))
	for _, f := range []string{x.CACert, x.ClientCert, x.ClientKey} {
		if err != nil {
			break
		}
		if _, serr := os.Stat(f); serr != nil {
			err = fmt.Errorf("TLS certificate file missing: %w (scripts/broker start makes them; set MQCTL_TEST_TLS_DIR for a broker of your own)", serr)
		}
	}
	if err != nil {
		if Required() {
			t.Fatal(err.Error() + " — TLS is required here (CI or MQCTL_REQUIRE_BROKER=1)")
		}
		t.Skip(err.Error())
	}
	return x
}

// tlsDir is MQCTL_TEST_TLS_DIR, else $MQCTL_BROKER_DIR/tls, else .broker/tls
// in the repository holding the working directory.
func tlsDir() (string, error) {
	if d := os.Getenv("MQCTL_TEST_TLS_DIR"); d != "" {
		return d, nil
	}
	if d := os.Getenv("MQCTL_BROKER_DIR"); d != "" {
		return filepath.Join(d, "tls"), nil
	}
	dir, err := os.Getwd()
	if err != nil {
		return "", fmt.Errorf("find the repository for .broker/tls: %w", err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return filepath.Join(dir, ".broker", "tls"), nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("no go.mod above the working directory to find .broker/tls from; set MQCTL_TEST_TLS_DIR")
		}
		dir = parent
	}
}

// Required reports whether a missing broker fails tests instead of skipping them.
func Required() bool {
	return os.Getenv("CI") != "" || os.Getenv("MQCTL_REQUIRE_BROKER") == "1"
}

func envOr(key, def string) string {
	if v := os.Getenv(key); v != "" {
		return v
	}
	return def
}

var unsafeChars = regexp.MustCompile(`[^A-Za-z0-9._-]+`)

// Name returns a unique object name for this test: PREFIX-<test name>-<random>.
func Name(t testing.TB, prefix string) string {
	s := strings.Trim(unsafeChars.ReplaceAllString(t.Name(), "-"), "-")
	if len(s) > 60 {
		s = s[:60]
	}
	return prefix + "-" + s + "-" + randomHex(4)
}

func randomHex(n int) string {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		// crypto/rand does not fail on supported platforms.
		return strconv.FormatInt(time.Now().UnixNano(), 16)
	}
	return hex.EncodeToString(b)
}

// Vhost creates a vhost named mqctl-test-<test name>-<random>, gives the
// broker user full permissions on it, and deletes it when the test ends.
func (b *Broker) Vhost(t testing.TB) string {
	t.Helper()
	name := Name(t, "mqctl-test")
	check(t, "create vhost "+name)(b.RH.PutVhost(name, rabbithole.VhostSettings{Description: "mqctl test " + t.Name()}))
	t.Cleanup(func() {
		if err := b.DeleteVhost(name); err != nil {
			t.Errorf("delete test vhost %s: %v", name, err)
		}
	})
	b.Permit(t, b.Username, name)
	return name
}

// DeleteVhost deletes vhost name, a test's, and waits until it is gone;
// one that does not exist is no error. Deleting a vhost with its queues
// can take RabbitMQ 4.0 longer than the 30 s other requests get on a busy
// machine, and RabbitMQ 4.3.6 may close the connection without an answer
// (EOF) while the deletion goes on: then the vhost is asked for until it
// is gone, for up to 2 minutes.
func (b *Broker) DeleteVhost(name string) error {
	rh := *b.RH
	rh.SetTimeout(2 * time.Minute)
	var err error
	for try := 1; ; try++ {
		resp, derr := rh.DeleteVhost(name)
		closeBody(resp)
		err = derr
		var answered rabbithole.ErrorResponse
		switch {
		case err == nil:
			return nil
		case errors.As(err, &answered) && answered.StatusCode == http.StatusNotFound:
			return nil
		case errors.As(err, &answered) && answered.StatusCode == http.StatusInternalServerError && try < 3:
			// RabbitMQ 4.3.6's federation plugin can crash the
			// deletion (rabbit_federation_link_sup:stop/3's badmatch
			// on {error,not_found}, from clear_vhost's adjust) when
			// another vhost's federation link stops at that moment:
			// asked again, it deletes what is left.
			time.Sleep(500 * time.Millisecond)
			continue
		case errors.As(err, &answered):
			return err
		}
		break
	}
	for deadline := time.Now().Add(2 * time.Minute); time.Now().Before(deadline); time.Sleep(500 * time.Millisecond) {
		status, _, gerr := b.API(http.MethodGet, "vhosts/"+url.PathEscape(name), nil)
		if gerr == nil && status == http.StatusNotFound {
			return nil
		}
	}
	return fmt.Errorf("%w, and the vhost was still there 2 minutes later", err)
}

// Permit gives user full configure/write/read permissions on vhost.
func (b *Broker) Permit(t testing.TB, user, vhost string) {
	t.Helper()
	check(t, fmt.Sprintf("grant %s permissions on %s", user, vhost))(
		b.RH.UpdatePermissionsIn(vhost, user, rabbithole.Permissions{Configure: ".*", Write: ".*", Read: ".*"}))
}

// User creates a user with the given tags (e.g. "management") and a random
// password, deletes it when the test ends, and returns its name and password.
func (b *Broker) User(t testing.TB, tags ...string) (name, password string) {
	t.Helper()
	name = Name(t, "mqctl-test-user")
	password = "pw-" + randomHex(12)
	check(t, "create user "+name)(b.RH.PutUser(name, rabbithole.UserSettings{Password: password, Tags: rabbithole.UserTags(tags)}))
	t.Cleanup(func() {
		resp, err := b.RH.DeleteUser(name)
		closeBody(resp)
		if err != nil {
			t.Errorf("delete test user %s: %v", name, err)
		}
	})
	return name, password
}

// AMQPURL returns the AMQP URL of vhost for the broker user.
func (b *Broker) AMQPURL(vhost string) string {
	return b.AMQPURLFor(b.Username, b.Password, vhost)
}

// AMQPURLFor returns the AMQP URL of vhost for user/password.
func (b *Broker) AMQPURLFor(user, password, vhost string) string {
	u := url.URL{Scheme: "amqp", User: url.UserPassword(user, password), Host: fmt.Sprintf("%s:%d", b.AMQPHost, b.AMQPPort)}
	return u.String() + "/" + url.PathEscape(vhost)
}

// Channel opens an AMQP channel in publisher-confirm mode on vhost; its
// connection closes when the test ends.
func (b *Broker) Channel(t testing.TB, vhost string) *amqp.Channel {
	t.Helper()
	conn, err := amqp.Dial(b.AMQPURL(vhost))
	if err != nil {
		t.Fatalf("AMQP dial: %s", strings.ReplaceAll(err.Error(), b.Password, "xxxxx"))
	}
	t.Cleanup(func() { conn.Close() })
	ch, err := conn.Channel()
	if err != nil {
		t.Fatal(err)
	}
	if err := ch.Confirm(false); err != nil {
		t.Fatal(err)
	}
	return ch
}

// GetAPI reads GET /api/{path} (path escaped by the caller, query
// included) as the test's administrator, failing the test on anything
// but 200, and returns the answer.
func (b *Broker) GetAPI(t testing.TB, path string) []byte {
	t.Helper()
	status, raw, err := b.API(http.MethodGet, path, nil)
	if err != nil {
		t.Fatalf("GET /api/%s: %v", path, err)
	}
	if status != http.StatusOK {
		t.Fatalf("GET /api/%s: %d %s", path, status, http.StatusText(status))
	}
	return raw
}

// API sends one request to /api/{path} (path escaped by the caller, query
// included) as the test's administrator, with body as JSON when it is not
// nil, and returns the answer's status and body.
func (b *Broker) API(method, path string, body []byte) (status int, answer []byte, err error) {
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequest(method, b.URL+"/api/"+path, rd)
	if err != nil {
		return 0, nil, err
	}
	req.SetBasicAuth(b.Username, b.Password)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	answer, err = io.ReadAll(resp.Body)
	return resp.StatusCode, answer, err
}

func check(t testing.TB, what string) func(*http.Response, error) {
	return func(resp *http.Response, err error) {
		t.Helper()
		closeBody(resp)
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
	}
}

func closeBody(resp *http.Response) {
	if resp != nil && resp.Body != nil {
		resp.Body.Close()
	}
}

// Connections lists the broker's AMQP connections. RabbitMQ 3.10 answers
// 500 when a connection closes while it lists them (tests run in
// parallel), so a failed listing is tried again for up to 10 s.
func (b *Broker) Connections(t testing.TB) []rabbithole.ConnectionInfo {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		conns, err := b.RH.ListConnections()
		if err == nil {
			return conns
		}
		if time.Now().After(deadline) {
			t.Fatalf("list connections: %v", err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// WaitConnection returns the broker's record of the AMQP connection whose
// client named it name (connection_name), waiting for the broker to
// report it (it emits connection statistics every few seconds).
func (b *Broker) WaitConnection(t testing.TB, name string) rabbithole.ConnectionInfo {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for {
		for _, c := range b.Connections(t) {
			if n, _ := c.ClientProperties["connection_name"].(string); n == name {
				return c
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("the broker does not list a connection named %q", name)
		}
		time.Sleep(250 * time.Millisecond)
	}
}

// CloseConnection closes the AMQP connection whose client named it name
// as an operator would, with DELETE /api/connections/{name}, and returns
// once the broker no longer lists it.
func (b *Broker) CloseConnection(t testing.TB, name string) {
	t.Helper()
	c := b.WaitConnection(t, name)
	status, answer, err := b.API(http.MethodDelete, "connections/"+url.PathEscape(c.Name), nil)
	if err != nil || status != http.StatusNoContent {
		t.Fatalf("DELETE /api/connections/%s: %d %s %v", c.Name, status, answer, err)
	}
	deadline := time.Now().Add(15 * time.Second)
	for {
		status, _, err := b.API(http.MethodGet, "connections/"+url.PathEscape(c.Name), nil)
		if err == nil && status == http.StatusNotFound {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the broker still lists connection %q after its DELETE: %d %v", c.Name, status, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// Check fails t when a rabbit-hole call (Broker.RH) answers an error,
// and closes the answer's body: testbroker.Check(t)(b.RH.UpdatePermissionsIn(…)).
func Check(t testing.TB) func(*http.Response, error) {
	t.Helper()
	return func(resp *http.Response, err error) {
		t.Helper()
		if resp != nil && resp.Body != nil {
			resp.Body.Close()
		}
		if err != nil {
			t.Fatal(err)
		}
	}
}

// Ctl runs rabbitmqctl ARGS against the broker's node through the
// scripts/broker that runs it: MQCTL_TEST_BROKER_SCRIPT (scripts/broker
// env names itself there), else this checkout's. From another checkout
// of the repository (a clone testing against a broker started elsewhere)
// this checkout's script addresses no running node, and what a test
// could only undo with rabbitmqctl (a protected user) stayed behind.
// The script runs with the variables of MQCTL_TEST_BROKER_ENV (scripts/broker
// env pins the node there: version, port offset, folder, name, epmd): a
// node started with MQCTL_PORT_OFFSET given on the command line was
// otherwise addressed as the default node, which the script cannot reach
// (another cookie), or reached another broker.
func (b *Broker) Ctl(args ...string) error {
	script := os.Getenv("MQCTL_TEST_BROKER_SCRIPT")
	if script == "" {
		_, here, _, _ := runtime.Caller(0)
		script = filepath.Join(filepath.Dir(here), "..", "..", "scripts", "broker")
	}
	cmd := exec.Command(script, append([]string{"ctl"}, args...)...)
	cmd.Env = append(os.Environ(), strings.Fields(os.Getenv("MQCTL_TEST_BROKER_ENV"))...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		return fmt.Errorf("%s ctl %s: %w: %s", script, strings.Join(args, " "), err, bytes.TrimSpace(out))
	}
	return nil
}

// SuspendLeader suspends the leader of quorum queue queue in vhost
// (sys:suspend of its Raft server, through the broker's own eval): its
// passive declare then answers 0 messages whatever it holds, after 250 ms
// (rabbit_quorum_queue:stat/1), and a read (basic.get) gets no answer
// until RabbitMQ's own timeout. The returned resume resumes it, once
// (also at the test's end).
func (b *Broker) SuspendLeader(t testing.TB, vhost, queue string) (resume func()) {
	t.Helper()
	leader := fmt.Sprintf(`{ok,Q}=rabbit_amqqueue:lookup(rabbit_misc:r(<<"%s"/utf8>>,queue,<<"%s"/utf8>>)), {N,_}=amqqueue:get_pid(Q), sys:%%s(whereis(N)).`, vhost, queue)
	resumed := false
	resume = func() {
		if !resumed {
			resumed = true
			if err := b.Ctl("eval", fmt.Sprintf(leader, "resume")); err != nil {
				t.Errorf("resume the leader of queue %q: %v", queue, err)
			}
		}
	}
	t.Cleanup(resume)
	if err := b.Ctl("eval", fmt.Sprintf(leader, "suspend")); err != nil {
		t.Fatal(err)
	}
	return resume
}

// DeleteUser deletes user name, which a test made, and tells why when
// it stays. A user tagged protected (RabbitMQ 4.2+), which the management
// API neither changes nor deletes, first loses its tags through a
// definitions import, which RabbitMQ applies to it (4.3.6), and where
// that fails through rabbitmqctl (Ctl). A user that is not there is
// deleted.
func (b *Broker) DeleteUser(name string) error {
	path := "users/" + url.PathEscape(name)
	status, answer, err := b.API(http.MethodDelete, path, nil)
	if err == nil && (status == http.StatusNoContent || status == http.StatusNotFound) {
		return nil
	}
	why := []string{fmt.Sprintf("DELETE /api/%s: %d %s %v", path, status, bytes.TrimSpace(answer), err)}
	untag, _ := json.Marshal(map[string]any{"users": []map[string]any{{"name": name, "password": "pw-" + randomHex(12), "tags": []string{}}}})
	if status, answer, err := b.API(http.MethodPost, "definitions", untag); err != nil || status >= 300 {
		why = append(why, fmt.Sprintf("take its tags off by a definitions import: %d %s %v", status, bytes.TrimSpace(answer), err))
		if err := b.Ctl("set_user_tags", name); err != nil {
			why = append(why, err.Error())
		}
	}
	status, answer, err = b.API(http.MethodDelete, path, nil)
	if err == nil && (status == http.StatusNoContent || status == http.StatusNotFound) {
		return nil
	}
	why = append(why, fmt.Sprintf("DELETE /api/%s again: %d %s %v", path, status, bytes.TrimSpace(answer), err))
	return fmt.Errorf("user %s stays on the broker: %s", name, strings.Join(why, "; "))
}

// UsersSection serialises, across every test process on this machine,
// the tests whose files have a users section: such a file speaks for
// every user mqctl made on the broker, so two at once would delete each
// other's users. It holds an exclusive lock on a file named after the
// broker's management port until the test ends.
func (b *Broker) UsersSection(t testing.TB) {
	t.Helper()
	u, err := url.Parse(b.URL)
	if err != nil {
		t.Fatalf("users lock: %v", err)
	}
	path := filepath.Join(os.TempDir(), "mqctl-test-users-"+strings.ReplaceAll(u.Host, ":", "-")+".lock")
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		t.Fatalf("users lock: %v", err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		f.Close()
		t.Fatalf("users lock %s: %v", path, err)
	}
	t.Cleanup(func() {
		_ = syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
		f.Close()
	})
}
