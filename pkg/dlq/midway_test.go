package dlq_test

import (
	"context"
	"slices"
	"strings"
	"testing"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/mqctl/mqctl/pkg/broker"
	"github.com/mqctl/mqctl/pkg/dlq"
)

// A queue of the route that goes away, or refuses, during a replay, after
// the replay checked it (ReplayOptions.Reach, once per queue): the publish
// that finds it so, and no other, goes out. A publish that missed a
// deleted queue, confirmed, is found out by a look at the route's queues
// after the confirm: the message stays in the DLQ unless it reached the
// queue it died in, and the queues that took a copy are named (Copies);
// a nacked one has Reach asked again, and when no cause is found the
// messages after it bound for the same destination are held back. The
// messages after it stay in the DLQ, nothing published. Every version
// answers alike: the deleted queue's bindings go with it, and a classic
// queue over its max-length-bytes with reject-publish nacks the publish
// while the route's other queues keep their copy (4.3.6, 4.0.5, 3.10.8).
func TestReplayDestinationGoneMidway(t *testing.T) {
	t.Parallel()
	type want struct {
		action, kind string
		copies       []string
		reason       string // a part of it
	}
	for _, tc := range []struct {
		name string
		// setup runs once the dead letters are made, before the router
		// reads the bindings; midway, once message #1 is confirmed.
		setup  func(f *fixture)
		midway func(f *fixture)
		want   [3]want
		// depths after the replay: work.dlq, then the route's queues.
		depths map[string]int
	}{
		{
			name:   "the queue it died in deleted",
			midway: func(f *fixture) { f.mustDelete("work") },
			want: [3]want{
				{dlq.ActionReplayed, "", nil, ""},
				{dlq.ActionFailed, dlq.FailUnavailable, []string{"other"},
					`since the replay checked it, queue "work" no longer exists (deleted since the replay read the bindings): the publish missed it, and "other", which the route reaches too, took a copy; the messages after it bound there are not published; left in the DLQ: declare "work" again, with its bindings, and run the replay again with --from-queue work --to-exchange "" --routing-key work to send it to "work" alone, where it died (running it again as it is delivers another copy to "other")`},
				{dlq.ActionFailed, dlq.FailUnavailable, nil,
					`queue "work" no longer exists (deleted since the replay read the bindings), so it cannot take messages now: the publish would miss it, and "other", which the route reaches too, would take a copy regardless; nothing was published`},
			},
			depths: map[string]int{"work.dlq": 2, "other": 2},
		},
		{
			name:   "another queue of the route deleted",
			midway: func(f *fixture) { f.mustDelete("other") },
			want: [3]want{
				{dlq.ActionReplayed, "", nil, ""},
				// It reached work, where it died: replayed, with a note.
				{dlq.ActionReplayed, "", nil, ""},
				{dlq.ActionFailed, dlq.FailUnavailable, nil,
					`queue "other" no longer exists (deleted since the replay read the bindings), so it cannot take messages now: the publish would miss it, and "work", which the route reaches too, would take a copy regardless; nothing was published`},
			},
			depths: map[string]int{"work.dlq": 1, "work": 2},
		},
		{
			name: "another queue of the route over its byte limit",
			setup: func(f *fixture) {
				f.mustDelete("other")
				f.declare("other", amqp.Table{"x-max-length-bytes": int64(20), "x-overflow": "reject-publish"})
				f.must(f.ch.QueueBind("other", "order.*", "orders", false, nil))
			},
			midway: func(f *fixture) {
				// At its limit (20 bytes: #1 holds 13): it refuses the next
				// publishes.
				ch, err := f.conn.Channel()
				f.must(err)
				defer ch.Close()
				f.must(ch.Confirm(false))
				dc, err := ch.PublishWithDeferredConfirm("", "other", false, false, amqp.Publishing{Body: make([]byte, 7)})
				f.must(err)
				if !dc.Wait() {
					f.t.Fatal("the filler was nacked")
				}
			},
			want: [3]want{
				{dlq.ActionReplayed, "", nil, ""},
				{dlq.ActionFailed, dlq.FailNacked, []string{"other", "work"},
					`the broker nacked the publish: one of the queues the route reaches ("other", "work") refused it (full with overflow reject-publish, or unavailable), and the others may each have taken a copy: running the replay again delivers another copy to those; find the queue that refuses, and make room in it or bring it back, or send it to "work" alone, where it died, with --from-queue work --to-exchange "" --routing-key work; the messages after it bound for the same exchange and routing key are not published`},
				{dlq.ActionFailed, dlq.FailHeldBack, nil,
					`not published: the broker nacked message #2, bound for the same exchange "orders" and routing key "order.created", earlier in this replay`},
			},
			depths: map[string]int{"work.dlq": 2, "work": 2},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := newFixture(t)
			f.must(f.ch.QueueBind("other", "order.*", "orders", false, nil))
			f.deadLetter(seq("m", 3), nil)
			f.drain("other")
			if tc.setup != nil {
				tc.setup(f)
			}
			c, err := broker.Connect(context.Background(), broker.Config{Server: f.b.URL, Username: f.b.Username, Password: f.b.Password})
			f.must(err)
			opts := dlq.ReplayOptions{Router: f.router(), Reach: dlq.BrokerReach(context.Background(), c, f.vhost)}
			dlq.SetAfterConfirm(&opts, func(i int) {
				if i == 1 {
					tc.midway(f)
				}
			})
			rep := f.replay(opts)
			if rep.Interrupted != nil || len(rep.Outcomes) != 3 {
				t.Fatalf("interrupted %v, outcomes %+v", rep.Interrupted, rep.Outcomes)
			}
			for i, o := range rep.Outcomes {
				w := tc.want[i]
				if o.Action != w.action || o.Kind != w.kind || !slices.Equal(o.Copies, w.copies) || !strings.Contains(o.Reason, w.reason) {
					t.Errorf("#%d: %s (%s), copies %q: %s\nwant %s (%s), copies %q: %s", o.Index, o.Action, o.Kind, o.Copies, o.Reason, w.action, w.kind, w.copies, w.reason)
				}
			}
			f.waitSettled(tc.depths["work.dlq"], "work.dlq")
			for q, n := range tc.depths {
				if got := f.depth(q); got != n {
					t.Errorf("queue %s holds %d messages, want %d", q, got, n)
				}
			}
		})
	}
}

func (f *fixture) mustDelete(queue string) {
	f.t.Helper()
	_, err := f.ch.QueueDelete(queue, false, false, false)
	f.must(err)
}
