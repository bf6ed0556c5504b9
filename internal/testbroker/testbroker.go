// Package testbroker gives tests a real RabbitMQ broker: it finds the one
// started by scripts/broker (or named by MQCTL_TEST_SERVER), creates a
// uniquely named vhost per test and deletes it when the test ends.
//
// Without a broker a test is skipped, except in CI (CI non-empty) or with
// MQCTL_REQUIRE_BROKER=1, where it fails.
//
// Environment: MQCTL_TEST_SERVER (management API, default
// http://127.0.0.1:15672), MQCTL_TEST_USERNAME / MQCTL_TEST_PASSWORD
// (default guest/guest; the user needs the administrator tag).
package testbroker

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

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
	// RH is a rabbit-hole client logged in as Username (an administrator).
	RH *rabbithole.Client
}

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

	probe := *rh
	probe.SetTimeout(5 * time.Second)
	ov, err := probe.Overview()
	if err != nil {
		var rerr rabbithole.ErrorResponse
		if errors.As(err, &rerr) || strings.Contains(err.Error(), "401") {
			t.Fatalf("the broker at %s refused user %q: %v (set MQCTL_TEST_USERNAME/MQCTL_TEST_PASSWORD)", server, user, err)
		}
		msg := fmt.Sprintf("no RabbitMQ broker at %s (%v); run scripts/broker start", server, err)
		if Required() {
			t.Fatal(msg + " — a broker is required here (CI or MQCTL_REQUIRE_BROKER=1)")
		}
		t.Skip(msg)
	}
	b := &Broker{URL: strings.TrimRight(server, "/"), Username: user, Password: pass, AMQPHost: u.Hostname(), AMQPPort: 5672, RH: rh}
	for _, l := range ov.Listeners {
		if l.Protocol == "amqp" && l.Port > 0 {
			b.AMQPPort = int(l.Port)
		}
	}
	return b
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
		resp, err := b.RH.DeleteVhost(name)
		closeBody(resp)
		if err != nil {
			t.Errorf("delete test vhost %s: %v", name, err)
		}
	})
	b.Permit(t, b.Username, name)
	return name
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
