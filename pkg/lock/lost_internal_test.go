package lock

import (
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestLostLockNamesTheNode: when the node an apply holds its lock on goes
// down mid-apply (a cluster node stopped during a 2,000-queue apply), the
// error says which AMQP endpoint closed, never its credentials; and the
// lock stays lost.
func TestLostLockNamesTheNode(t *testing.T) {
	for _, tc := range []struct{ url, want string }{
		{"amqp://deploy:s3cret@rabbit-2.prod:5672/", "its AMQP connection to rabbit-2.prod:5672 closed: that node may be down or restarting"},
		{"amqps://127.0.0.1:5681", "its AMQP connection to 127.0.0.1:5681 closed"},
		{"%zz", "its AMQP connection to the broker closed"},
	} {
		l := newLock("v", Options{URL: tc.url}, nil)
		err := l.Check()
		if !errors.Is(err, ErrLost) || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), `vhost "v"`) || strings.Contains(err.Error(), "s3cret") {
			t.Errorf("lost lock through %s: %v; want ErrLost, saying %q, without the password", tc.url, err, tc.want)
		}
		if again := l.Check(); again != err {
			t.Errorf("a lost lock checked again: %v, want the same error", again)
		}
	}
}

// A lock found lost after a long silence of the apply (no Check for 40 s:
// a process stopped with Ctrl-Z, woken up after the broker closed its
// connection) says so, rather than blaming the node; after a short one it
// names the other causes.
func TestLostLockAfterAPause(t *testing.T) {
	for _, tc := range []struct {
		silent    time.Duration
		want, not string
	}{
		{40 * time.Second, "closed while this apply made no request for 40s (was it stopped, with Ctrl-Z or SIGSTOP", "node may be down"},
		{time.Second, "closed: that node may be down or restarting, or the connection was closed by hand", "Ctrl-Z"},
	} {
		l := newLock("v", Options{URL: "amqp://h:5672"}, nil)
		l.checked = time.Now().Add(-tc.silent)
		err := l.Check()
		if !errors.Is(err, ErrLost) || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), tc.not) {
			t.Errorf("lost after %s of silence: %v; want it to say %q, not %q", tc.silent, err, tc.want, tc.not)
		}
	}
}

// A passive declare on a connection the broker reset fails writing to
// the socket before the client's reader marks the connection closed:
// that is the connection closed, as Check says (connBroken), not an error
// of its own ("write tcp …: connection reset by peer", once in CI).
func TestConnBroken(t *testing.T) {
	for _, tc := range []struct {
		err  error
		want bool
	}{
		{&net.OpError{Op: "write", Net: "tcp", Err: syscall.ECONNRESET}, true},
		{fmt.Errorf("declare: %w", &net.OpError{Op: "read", Net: "tcp", Err: syscall.EPIPE}), true},
		{io.EOF, true},
		{io.ErrUnexpectedEOF, true},
		{errors.New("PRECONDITION_FAILED - inequivalent arg"), false},
		{nil, false},
	} {
		if got := connBroken(tc.err); got != tc.want {
			t.Errorf("connBroken(%v) = %v, want %v", tc.err, got, tc.want)
		}
	}
}
