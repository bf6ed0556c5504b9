package testbroker

import (
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"testing"

	rabbithole "github.com/michaelklishin/rabbit-hole/v2"
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

// Ctl addresses the node scripts/broker env was printed for, even when
// the variables that chose it were given only to that command
// (MQCTL_PORT_OFFSET=3000 scripts/broker env): it ran the script for the
// default node, which it could not reach, and TestProtectedUser left its
// user behind on a node started with a port offset.
func TestCtlAddressesTheNodeOfEnv(t *testing.T) {
	_, here, _, _ := runtime.Caller(0)
	script := filepath.Join(filepath.Dir(here), "..", "..", "scripts", "broker")
	for _, tc := range []struct {
		version, offset, want string
	}{
		{"4.3", "3000", "version=4.3 offset=3000 epmd=7370 dir=.broker"},
		{"4.0", "1000", "version=4.0 offset=1000 epmd=5371 dir=.broker-4.0"},
		{"3.10", "", "version=3.10 offset=0 epmd=4369 dir=.broker-3.10"},
	} {
		cmd := exec.Command(script, "env")
		cmd.Env = append(os.Environ(), "MQCTL_RABBITMQ_VERSION="+tc.version, "MQCTL_PORT_OFFSET="+tc.offset,
			"MQCTL_BROKER_DIR=", "MQCTL_EPMD_PORT=", "MQCTL_NODENAME=", "MQCTL_ROOTFS=")
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("scripts/broker env: %v", err)
		}
		// What eval of the env's output leaves in the tests' environment.
		t.Setenv("MQCTL_PORT_OFFSET", "")
		t.Setenv("MQCTL_RABBITMQ_VERSION", "4.3")
		for _, l := range strings.Split(string(out), "\n") {
			if k, v, ok := strings.Cut(strings.TrimPrefix(l, "export "), "="); ok && strings.HasPrefix(l, "export ") {
				t.Setenv(k, strings.Trim(v, `"`))
			}
		}
		// A stand-in for the script, saying which node it would address.
		fake := filepath.Join(t.TempDir(), "broker")
		if err := os.WriteFile(fake, []byte("#!/bin/sh\necho \"version=$MQCTL_RABBITMQ_VERSION offset=${MQCTL_PORT_OFFSET:-0} epmd=$MQCTL_EPMD_PORT dir=$(basename \"$MQCTL_BROKER_DIR\")\"\nexit 1\n"), 0o755); err != nil {
			t.Fatal(err)
		}
		t.Setenv("MQCTL_TEST_BROKER_SCRIPT", fake)
		err = (&Broker{}).Ctl("status")
		if err == nil || !strings.HasSuffix(err.Error(), ": "+tc.want) {
			t.Errorf("MQCTL_RABBITMQ_VERSION=%s MQCTL_PORT_OFFSET=%s scripts/broker env, then Ctl: %v; want the script run for %s", tc.version, tc.offset, err, tc.want)
		}
	}
}

// DeleteUser deletes a user tagged protected, which RabbitMQ 4.2+ refuses
// to change or delete through the management API, without rabbitmqctl
// (the script here cannot reach the node); on 3.10 and 4.0 the tag
// protects nothing.
func TestDeleteProtectedUser(t *testing.T) {
	b := New(t)
	name := Name(t, "mqctl-test-user")
	check(t, "create user "+name)(b.RH.PutUser(name, rabbithole.UserSettings{Password: "pw-" + randomHex(12), Tags: rabbithole.UserTags{"management", "protected"}}))
	status, _, err := b.API(http.MethodDelete, "users/"+url.PathEscape(name), nil)
	if err != nil {
		t.Fatal(err)
	}
	if refused := status == http.StatusBadRequest; refused != b.Version().AtLeast(4, 2) {
		t.Errorf("RabbitMQ %s: DELETE of a protected user answered %d: want it refused (400) = %v", b.Version(), status, b.Version().AtLeast(4, 2))
	}
	if status != http.StatusNoContent {
		t.Setenv("MQCTL_TEST_BROKER_SCRIPT", "/bin/false")
		if err := b.DeleteUser(name); err != nil {
			t.Fatalf("RabbitMQ %s: %v", b.Version(), err)
		}
	}
	if _, err := b.RH.GetUser(name); err == nil {
		t.Errorf("RabbitMQ %s: user %s is still there", b.Version(), name)
		_ = b.Ctl("delete_user", name)
	}
	if err := b.DeleteUser(name); err != nil {
		t.Errorf("DeleteUser of a user that is gone: %v", err)
	}
}
