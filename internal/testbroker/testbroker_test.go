package testbroker

import (
	"fmt"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"testing"

	amqp "github.com/rabbitmq/amqp091-go"
)

// fakeT records how New ends a test without ending this one.
type fakeT struct {
	testing.TB
	name    string
	skipped string
	failed  string
}

func (f *fakeT) Helper()      {}
func (f *fakeT) Name() string { return f.name }
func (f *fakeT) Skip(args ...any) {
	f.skipped = fmt.Sprint(args...)
	runtime.Goexit()
}
func (f *fakeT) Fatal(args ...any) {
	f.failed = fmt.Sprint(args...)
	runtime.Goexit()
}
func (f *fakeT) Fatalf(format string, args ...any) {
	f.failed = fmt.Sprintf(format, args...)
	runtime.Goexit()
}

func runNew(t *testing.T) *fakeT {
	f := &fakeT{TB: t, name: t.Name()}
	done := make(chan struct{})
	go func() {
		defer close(done)
		New(f)
	}()
	<-done
	return f
}

func TestNewWithoutBroker(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	server := "http://" + l.Addr().String()
	l.Close()
	t.Setenv("MQCTL_TEST_SERVER", server)

	t.Run("developer machine skips", func(t *testing.T) {
		t.Setenv("CI", "")
		t.Setenv("MQCTL_REQUIRE_BROKER", "")
		f := runNew(t)
		if f.failed != "" || !strings.Contains(f.skipped, "no RabbitMQ broker at "+server) || !strings.Contains(f.skipped, "scripts/broker start") {
			t.Errorf("skipped %q failed %q", f.skipped, f.failed)
		}
	})
	t.Run("CI fails", func(t *testing.T) {
		t.Setenv("CI", "true")
		f := runNew(t)
		if f.skipped != "" || !strings.Contains(f.failed, "no RabbitMQ broker at "+server) {
			t.Errorf("skipped %q failed %q", f.skipped, f.failed)
		}
	})
	t.Run("MQCTL_REQUIRE_BROKER fails", func(t *testing.T) {
		t.Setenv("CI", "")
		t.Setenv("MQCTL_REQUIRE_BROKER", "1")
		f := runNew(t)
		if f.skipped != "" || f.failed == "" {
			t.Errorf("skipped %q failed %q", f.skipped, f.failed)
		}
	})
}

func TestName(t *testing.T) {
	t.Run("with spaces/and slashes", func(t *testing.T) {
		a, b := Name(t, "mqctl-test"), Name(t, "mqctl-test")
		re := regexp.MustCompile(`^mqctl-test-TestName-with_spaces-and_slashes-[0-9a-f]{8}$`)
		if !re.MatchString(a) || a == b {
			t.Errorf("Name = %q, %q; want unique names matching %s", a, b, re)
		}
	})
}

func TestVhostLifecycle(t *testing.T) {
	b := New(t)
	var name string
	t.Run("inner", func(t *testing.T) {
		name = b.Vhost(t)
		if !strings.HasPrefix(name, "mqctl-test-TestVhostLifecycle-inner-") {
			t.Errorf("vhost name %q", name)
		}
		perms, err := b.RH.GetPermissionsIn(name, b.Username)
		if err != nil || perms.Configure != ".*" || perms.Write != ".*" || perms.Read != ".*" {
			t.Errorf("permissions of %s on %s: %+v, %v", b.Username, name, perms, err)
		}
		conn, err := amqp.Dial(b.AMQPURL(name))
		if err != nil {
			t.Fatalf("AMQP connection to the test vhost: %v", err)
		}
		conn.Close()
	})
	if _, err := b.RH.GetVhost(name); err == nil {
		t.Errorf("vhost %s still exists after its test ended", name)
	}
}

func TestAMQPURL(t *testing.T) {
	b := &Broker{Username: "guest", Password: "p@ss", AMQPHost: "127.0.0.1", AMQPPort: 5673}
	for vhost, want := range map[string]string{
		"/":        "amqp://guest:p%40ss@127.0.0.1:5673/%2F",
		"orders":   "amqp://guest:p%40ss@127.0.0.1:5673/orders",
		"a b/c#?d": "amqp://guest:p%40ss@127.0.0.1:5673/a%20b%2Fc%23%3Fd",
	} {
		if got := b.AMQPURL(vhost); got != want {
			t.Errorf("AMQPURL(%q) = %q, want %q", vhost, got, want)
		}
		u, err := amqp.ParseURI(b.AMQPURL(vhost))
		if err != nil || u.Vhost != vhost || u.Password != "p@ss" {
			t.Errorf("AMQPURL(%q) parses to vhost %q password ok=%v, err %v", vhost, u.Vhost, u.Password == "p@ss", err)
		}
	}
}

func runTLS(t *testing.T, b *Broker) (*fakeT, *TLS) {
	f := &fakeT{TB: t, name: t.Name()}
	var x *TLS
	done := make(chan struct{})
	go func() {
		defer close(done)
		x = b.TLS(f)
	}()
	<-done
	return f, x
}

func TestTLSWithoutListeners(t *testing.T) {
	t.Setenv("MQCTL_TEST_TLS_DIR", t.TempDir())
	b := &Broker{URL: "http://127.0.0.1:15672"}
	t.Run("developer machine skips", func(t *testing.T) {
		t.Setenv("CI", "")
		t.Setenv("MQCTL_REQUIRE_BROKER", "")
		f, _ := runTLS(t, b)
		if f.failed != "" || !strings.Contains(f.skipped, "reports no TLS listeners") || !strings.Contains(f.skipped, "scripts/broker stop && scripts/broker start") {
			t.Errorf("skipped %q failed %q", f.skipped, f.failed)
		}
	})
	t.Run("CI fails", func(t *testing.T) {
		t.Setenv("CI", "true")
		f, _ := runTLS(t, b)
		if f.skipped != "" || !strings.Contains(f.failed, "reports no TLS listeners") {
			t.Errorf("skipped %q failed %q", f.skipped, f.failed)
		}
	})
	t.Run("certificates missing", func(t *testing.T) {
		t.Setenv("CI", "true")
		f, _ := runTLS(t, &Broker{URL: b.URL, AMQPSPort: 5671, HTTPSPort: 15671})
		if !strings.Contains(f.failed, "TLS certificate file missing") || !strings.Contains(f.failed, "ca.pem") {
			t.Errorf("skipped %q failed %q", f.skipped, f.failed)
		}
	})
}

func TestTLSEndpoints(t *testing.T) {
	dir := t.TempDir()
	for _, f := range []string{"ca.pem", "client.pem", "client.key"} {
		if err := os.WriteFile(filepath.Join(dir, f), []byte("x"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	t.Setenv("MQCTL_TEST_TLS_DIR", dir)
	f, x := runTLS(t, &Broker{URL: "http://127.0.0.1:15672", AMQPSPort: 5676, HTTPSPort: 15676})
	if f.failed != "" || f.skipped != "" {
		t.Fatalf("skipped %q failed %q", f.skipped, f.failed)
	}
	if x.ManagementURL != "https://localhost:15676" || x.CACert != filepath.Join(dir, "ca.pem") || x.ClientKey != filepath.Join(dir, "client.key") {
		t.Errorf("TLS = %+v", x)
	}
	if got, want := x.AMQPSURL("u", "p@ss", "/"), "amqps://u:p%40ss@localhost:5676/%2F"; got != want {
		t.Errorf("AMQPSURL = %q, want %q", got, want)
	}
}
