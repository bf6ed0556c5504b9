package dlq_test

import (
	"context"
	"net"
	"net/url"
	"strconv"
	"sync"
	"testing"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/mqctl/mqctl/internal/faultproxy"
	"github.com/mqctl/mqctl/pkg/broker"
	"github.com/mqctl/mqctl/pkg/dlq"
)

// Replays whose AMQP connection goes through a faulty TCP proxy: cut on
// both sides at an arbitrary byte, or stalled (a network that silently
// drops everything) until the heartbeat gives up. Every message ends up
// in the DLQ or at its origin, at most one in both, and a second replay
// finishes the job.
func TestReplayThroughFaultyNetwork(t *testing.T) {
	t.Parallel()
	const n = 120
	cases := []struct {
		name string
		// arm breaks the proxy during the replay.
		arm     func(p *faultproxy.TCP, opts *dlq.ReplayOptions)
		stalled bool
	}{
		{"cut both ways after 20 KB", func(p *faultproxy.TCP, _ *dlq.ReplayOptions) { p.CutAfterBytes(20 << 10) }, false},
		{"cut both ways after 9 KB", func(p *faultproxy.TCP, _ *dlq.ReplayOptions) { p.CutAfterBytes(9 << 10) }, false},
		{"stalled: the broker falls silent", func(p *faultproxy.TCP, opts *dlq.ReplayOptions) {
			var once sync.Once
			opts.Progress = func(o dlq.Outcome) {
				if o.Index == 40 {
					once.Do(p.Stall)
				}
			}
		}, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t)
			all := seq("f", n)
			f.deadLetter(all, func(p *amqp.Publishing) { p.Body = make([]byte, 100) })

			p, err := faultproxy.NewTCP(net.JoinHostPort(f.b.AMQPHost, strconv.Itoa(f.b.AMQPPort)))
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(p.Close)
			u, err := url.Parse(f.b.AMQPURL(f.vhost))
			if err != nil {
				t.Fatal(err)
			}
			u.Host = p.Addr
			var conn *amqp.Connection
			if tc.stalled {
				// mqctl's own heartbeat (10s, broker.DialAMQP) notices a silent
				// network after about 15s; the same path, sooner.
				u.Path = "/" + f.vhost
				conn, err = amqp.DialConfig(u.String(), amqp.Config{Heartbeat: time.Second})
			} else {
				conn, err = broker.DialAMQP(context.Background(), broker.AMQPDial{URL: u.String(), Vhost: f.vhost, Name: "mqctl fault test"})
			}
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { conn.Close() })
			// An exclusive queue on the replay's connection: gone once the
			// broker closed that connection (returning its unacked messages).
			probe, err := conn.Channel()
			f.must(err)
			pq, err := probe.QueueDeclare("", false, true, true, false, nil)
			f.must(err)

			opts := dlq.ReplayOptions{Queue: "work.dlq", User: f.b.Username, ConfirmTimeout: time.Second}
			tc.arm(p, &opts)
			start := time.Now()
			rep, err := dlq.Replay(context.Background(), conn, opts)
			took := time.Since(start)
			if err != nil {
				t.Fatal(err)
			}
			if rep.Interrupted == nil {
				t.Fatalf("the replay was not interrupted: replayed %d", rep.Replayed)
			}
			t.Logf("interrupted after %d replayed, in %s: %v", rep.Replayed, took.Round(time.Millisecond), rep.Interrupted)
			if tc.stalled {
				p.Cut() // the network comes back only to drop the connection
			}
			f.waitGone(pq.Name)

			origin := ids(f.drain("work"))
			peek, err := dlq.Peek(context.Background(), f.dial(), "work.dlq", n+1)
			f.must(err)
			var inDLQ []string
			for _, m := range peek.Messages {
				inDLQ = append(inDLQ, m.Properties.MessageID)
			}
			if len(origin) == 0 || len(inDLQ) == 0 {
				t.Fatalf("the break was not in the middle: %d at the origin, %d in the DLQ", len(origin), len(inDLQ))
			}
			dup := partition(t, all, origin, inDLQ)
			if dup > 1 {
				t.Errorf("%d messages in both the DLQ and work, want at most 1", dup)
			}
			if len(origin) < rep.Replayed || len(origin) > rep.Replayed+1 {
				t.Errorf("work holds %d messages; the report says %d replayed", len(origin), rep.Replayed)
			}

			// The peek returned its messages with a nack, which the broker
			// requeues asynchronously: the second replay counts the DLQ
			// once they are back (a CI run counted 103 of the 109).
			f.waitDepth("work.dlq", len(inDLQ))
			rep2 := f.replay(dlq.ReplayOptions{})
			if rep2.Interrupted != nil || rep2.Replayed != len(inDLQ) {
				t.Fatalf("second replay: replayed %d of %d, interrupted %v", rep2.Replayed, len(inDLQ), rep2.Interrupted)
			}
			final := append(origin, ids(f.drain("work"))...)
			if twice := partition(t, all, final, nil); twice != dup || len(final) != n+dup {
				t.Errorf("work received %d messages (%d twice), want %d (+%d)", len(final), twice, n, dup)
			}
		})
	}
}
