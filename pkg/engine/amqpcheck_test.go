package engine_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"testing"

	"github.com/mqctl/mqctl/internal/testbroker"
	"github.com/mqctl/mqctl/pkg/broker"
	"github.com/mqctl/mqctl/pkg/engine"
	"github.com/mqctl/mqctl/pkg/loader"
)

// TestApplyChecksAMQPBeforeCreatingAVhost: an apply that creates every
// vhost it writes in takes no lock before its first change (a vhost's
// lock comes right after the vhost), so an AMQP URL that reaches no
// broker, or one that refuses the user, failed it after creating the
// vhost. It is now refused before anything changes, saying why; with the
// right URL the same apply goes through.
func TestApplyChecksAMQPBeforeCreatingAVhost(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	b, c, ctx := f.b, f.c, context.Background()
	vhost := testbroker.Name(t, "mqctl-test")
	t.Cleanup(func() { _ = c.DeleteVhost(context.Background(), vhost) })
	desired, err := loader.LoadBytes("topology.yaml", []byte(fmt.Sprintf("version: 1\nvhosts:\n  %q:\n    queues:\n      q: {}\n", vhost)), loader.Options{})
	if err != nil {
		t.Fatal(err)
	}
	// A listener that reads the AMQP header and closes without a word, as
	// RabbitMQ's management port does after its request timeout.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	go func() {
		for {
			conn, err := l.Accept()
			if err != nil {
				return
			}
			_, _ = io.ReadFull(conn, make([]byte, 8))
			conn.Close()
		}
	}()
	for _, tt := range []struct {
		name, url, want string
	}{
		{"a wrong password", fmt.Sprintf("amqp://%s:wrong-%s@%s:%d", b.Username, b.Password, b.AMQPHost, b.AMQPPort), "username or password not allowed"},
		{"no AMQP listener", fmt.Sprintf("amqp://%s:%s@%s", b.Username, b.Password, l.Addr()), "it closed the connection without answering the AMQP handshake, as the management API's port does; give --amqp-url the broker's AMQP port"},
	} {
		eng := engine.New(c, engine.Options{AMQPURL: tt.url})
		_, err := eng.Apply(ctx, engine.ApplyInput{Desired: desired}, engine.ApplyOptions{})
		want := fmt.Sprintf("apply refused, nothing was changed: mqctl takes the apply lock of vhost %q over AMQP right after creating it, and cannot open an AMQP connection to ", vhost)
		if err == nil || !strings.HasPrefix(err.Error(), want) || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: apply error %v; want one starting %q and saying %q", tt.name, err, want, tt.want)
		}
		if err != nil && strings.Contains(err.Error(), "wrong-"+b.Password) {
			t.Errorf("%s: the error shows the password: %v", tt.name, err)
		}
		if _, err := c.GetVhost(ctx, vhost); !errors.Is(err, broker.ErrNotFound) {
			t.Fatalf("%s: vhost %q after the refused apply: %v; want it never created", tt.name, vhost, err)
		}
	}
	eng := engine.New(c, engine.Options{AMQPURL: fmt.Sprintf("amqp://%s:%s@%s:%d", b.Username, b.Password, b.AMQPHost, b.AMQPPort)})
	if _, err := eng.Apply(ctx, engine.ApplyInput{Desired: desired}, engine.ApplyOptions{}); err != nil {
		t.Fatalf("apply with the broker's AMQP URL: %v", err)
	}
	if _, err := c.GetVhost(ctx, vhost); err != nil {
		t.Errorf("vhost %q after the apply: %v", vhost, err)
	}
}
