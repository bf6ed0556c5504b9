package lock_test

import (
	"context"
	"crypto/tls"
	"errors"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mqctl/mqctl/pkg/lock"
)

// These tests need no broker: the peer accepts TCP connections and never
// answers, as a broker that hangs after accepting does, or a firewall that
// lets the connect through and drops what follows.

// silentPeer listens on a local port and accepts every connection without
// ever answering. accepted receives a value per connection accepted.
func silentPeer(t *testing.T) (addr string, accepted <-chan struct{}) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	acc := make(chan struct{}, 16)
	var (
		mu    sync.Mutex
		conns []net.Conn
	)
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, c)
			mu.Unlock()
			select {
			case acc <- struct{}{}:
			default:
			}
		}
	}()
	t.Cleanup(func() {
		_ = ln.Close()
		mu.Lock()
		defer mu.Unlock()
		for _, c := range conns {
			_ = c.Close()
		}
	})
	return ln.Addr().String(), acc
}

// promptly is how soon Acquire and Peek must return once their context
// ends: far below the 10 s the TLS and AMQP handshakes allow a silent peer.
const promptly = 2 * time.Second

func TestDialStopsWithContext(t *testing.T) {
	const vhost = "orders"
	calls := []struct {
		name string
		what string // what the error must say was being attempted
		call func(ctx context.Context, opts lock.Options) (*lock.Lock, error)
	}{
		{"Acquire", `for the apply lock of vhost "orders"`, func(ctx context.Context, opts lock.Options) (*lock.Lock, error) {
			// Waiting for a held lock must not outlive ctx either.
			opts.Wait = time.Minute
			return lock.Acquire(ctx, vhost, opts)
		}},
		{"Peek", `for reading the queues of vhost "orders"`, func(ctx context.Context, opts lock.Options) (*lock.Lock, error) {
			return lock.Peek(ctx, vhost, opts)
		}},
	}
	for _, c := range calls {
		for _, scheme := range []string{"amqp", "amqps"} {
			for _, end := range []struct {
				name string
				want error
				ctx  func(accepted <-chan struct{}) (context.Context, context.CancelFunc)
			}{
				// Ctrl-C while the handshake hangs: cancelled once the
				// peer has accepted the connection.
				{"cancelled", context.Canceled, func(accepted <-chan struct{}) (context.Context, context.CancelFunc) {
					ctx, cancel := context.WithCancel(context.Background())
					go func() {
						select {
						case <-accepted:
							time.Sleep(50 * time.Millisecond)
						case <-time.After(promptly):
						}
						cancel()
					}()
					return ctx, cancel
				}},
				{"deadline", context.DeadlineExceeded, func(<-chan struct{}) (context.Context, context.CancelFunc) {
					return context.WithTimeout(context.Background(), 300*time.Millisecond)
				}},
			} {
				t.Run(c.name+"/"+scheme+"/"+end.name, func(t *testing.T) {
					t.Parallel()
					addr, accepted := silentPeer(t)
					opts := lock.Options{URL: scheme + "://mqctl:s3cret-pass@" + addr, Name: "dial test"}
					if scheme == "amqps" {
						opts.TLS = &tls.Config{ServerName: "localhost"}
					}
					ctx, cancel := end.ctx(accepted)
					defer cancel()
					start := time.Now()
					l, err := c.call(ctx, opts)
					took := time.Since(start)
					if err == nil {
						_ = l.Release()
						t.Fatal("opened a connection to a peer that never answers")
					}
					if !errors.Is(err, end.want) {
						t.Errorf("error = %v, want one that wraps %v", err, end.want)
					}
					if took > promptly {
						t.Errorf("returned %s after it was called, want well under the handshake's 10 s deadline", took.Round(time.Millisecond))
					}
					msg := err.Error()
					wants := []string{"open an AMQP connection to " + addr, c.what}
					if end.want == context.Canceled {
						// Ctrl-C says so (it said "context canceled").
						wants = append(wants, "interrupted before the broker answered")
						if strings.Contains(msg, "context canceled") {
							t.Errorf("error %q says %q", msg, "context canceled")
						}
					}
					for _, want := range wants {
						if !strings.Contains(msg, want) {
							t.Errorf("error %q does not say %q", msg, want)
						}
					}
					if strings.Contains(msg, "s3cret-pass") {
						t.Errorf("error %q holds the password", msg)
					}
				})
			}
		}
	}
}

// A context that has already ended opens no connection at all.
func TestDialEndedContext(t *testing.T) {
	addr, accepted := silentPeer(t)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	opts := lock.Options{URL: "amqp://mqctl:s3cret-pass@" + addr, Name: "dial test", Wait: time.Minute}
	if _, err := lock.Acquire(ctx, "orders", opts); !errors.Is(err, context.Canceled) {
		t.Errorf("Acquire = %v, want context.Canceled", err)
	}
	if _, err := lock.Peek(ctx, "orders", opts); !errors.Is(err, context.Canceled) {
		t.Errorf("Peek = %v, want context.Canceled", err)
	}
	select {
	case <-accepted:
		t.Error("dialled although the context had ended")
	case <-time.After(100 * time.Millisecond):
	}
}
