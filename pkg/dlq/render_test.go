package dlq

import (
	"bytes"
	"errors"
	"math"
	"path/filepath"
	"strings"
	"testing"

	gold "github.com/mqctl/mqctl/internal/golden"

	amqp "github.com/rabbitmq/amqp091-go"
)

func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	gold.Check(t, filepath.Join("testdata", name), got)
}

func peekFixture() *PeekResult {
	dead := headers([]string{"orders.shipping", "rejected", "orders"},
		death("orders.shipping", "rejected", "orders", 2, t0, "order.created", "order.audit"))
	dead["x-retry-count"] = int32(3)
	dead["tenant"] = "acme"
	dead["trace"] = amqp.Table{"span": []byte{0xde, 0xad}, "sampled": true, "at": t1, "price": amqp.Decimal{Scale: 2, Value: 1999}}
	chain := headers([]string{"orders.shipping", "rejected", "orders"},
		death("orders.park", "expired", "orders.dlx", 1, t1, "orders.shipping"),
		death("orders.shipping", "rejected", "orders", 1, t0, "order.paid"))
	chain["x-death"].([]any)[0].(amqp.Table)["original-expiration"] = "5000"
	chain[HeaderAcquiredCount] = int64(3) // two peeks and the delivery it died in
	binary := make([]byte, 60)
	for i := range binary {
		binary[i] = byte(i * 7)
	}
	msgs := []Message{
		{Index: 1, Exchange: "orders.dlx", RoutingKey: "orders.shipping", Headers: dead,
			Properties: Properties{MessageID: "m-1", CorrelationID: "c-1", Timestamp: t0, ContentType: "application/json", DeliveryMode: 2, Priority: 5},
			Body:       []byte("{\"order\": 1,\n \"note\": \"ünïcode\"}\n")},
		{Index: 2, Exchange: "orders.dlx", RoutingKey: "orders.shipping", Redelivered: true, Headers: chain,
			Properties: Properties{MessageID: "m-2", Expiration: "60000", UserID: "shop", AppID: "checkout", Type: "order.paid", ReplyTo: "rpc"},
			Body:       binary},
		{Index: 3, Exchange: "", RoutingKey: "orders.shipping.dlq",
			Properties: Properties{ContentEncoding: "identity"},
			Body:       []byte(strings.Repeat("0123456789", 5) + "é")},
		{Index: 4, Exchange: "orders.dlx", RoutingKey: "orders.shipping", Headers: amqp.Table{"x-death": "rewritten by a client"}},
	}
	for i := range msgs {
		msgs[i].Deaths = DecodeDeaths(msgs[i].Headers)
	}
	return &PeekResult{Queue: "orders.shipping.dlq", InQueue: 12, Messages: msgs}
}

func TestWritePeekText(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		o    PeekRender
	}{
		{"peek.txt", PeekRender{Vhost: "/", MaxBody: 51}},
		{"peek-raw.txt", PeekRender{Vhost: "/", MaxBody: 0, Raw: true}},
	} {
		var buf bytes.Buffer
		if err := WritePeekText(&buf, peekFixture(), tc.o); err != nil {
			t.Fatal(err)
		}
		golden(t, tc.name, buf.Bytes())
	}
	var buf bytes.Buffer
	if err := WritePeekText(&buf, &PeekResult{Queue: "q"}, PeekRender{Vhost: "v"}); err != nil {
		t.Fatal(err)
	}
	if got := buf.String(); got != "Queue \"q\" (vhost \"v\") is empty.\n" {
		t.Errorf("empty queue: %q", got)
	}
}

func TestWritePeekJSON(t *testing.T) {
	t.Parallel()
	var buf bytes.Buffer
	if err := WritePeekJSON(&buf, peekFixture(), PeekRender{Vhost: "/", MaxBody: 45}); err != nil {
		t.Fatal(err)
	}
	golden(t, "peek.json", buf.Bytes())
}

func replayFixture(dry bool) *Report {
	origin := &Target{Exchange: "orders", RoutingKey: "order.created", From: FromDeath, OriginQueue: "orders.shipping"}
	paid := &Target{Exchange: "orders", RoutingKey: "order.paid", CC: []string{"order.audit"}, From: FromDeath, OriginQueue: "orders.shipping"}
	done := ActionReplayed
	if dry {
		done = ActionWouldReplay
	}
	rep := &Report{Queue: "orders.shipping.dlq", InQueue: 30, Limit: 6, DryRun: dry}
	for _, o := range []Outcome{
		{Index: 1, MessageID: "m-1", Action: done, Target: origin, Queues: []string{"orders.shipping"}, Routed: true},
		{Index: 2, MessageID: "m-2", Action: done, Target: paid, Queues: []string{"orders.audit", "orders.shipping"}, Routed: true,
			Notes: []string{`user-id "shop" dropped: the broker accepts only the publishing user's own ("ops")`}},
		{Index: 3, Action: ActionSkipped, Kind: SkipNoDeath, Reason: "no x-death header: …"},
		{Index: 4, MessageID: "m-4", Action: ActionFailed, Target: origin, Kind: FailUnroutable, Reason: "the broker returned it (312 NO_ROUTE)"},
		{Index: 5, MessageID: "m-5", Action: done, Target: origin, Queues: []string{"orders.shipping"}, Routed: true},
		{Index: 6, MessageID: "m-6", Action: ActionFailed, Target: &Target{Exchange: "gone", RoutingKey: "k", From: FromFlags}, Kind: FailNoExchange, Reason: `exchange "gone" does not exist`},
	} {
		rep.add(o, nil)
	}
	return rep
}

func TestWriteReplayText(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		rep  *Report
	}{
		{"replay.txt", replayFixture(false)},
		{"replay-dry-run.txt", replayFixture(true)},
		{"replay-interrupted.txt", func() *Report {
			r := replayFixture(false)
			r.Limit = 30
			r.Interrupted = errors.New("message #7 was republished but could not be removed from the DLQ (connection closed): it is in both")
			r.add(Outcome{Index: 7, MessageID: "m-7", Action: ActionFailed, Target: r.Outcomes[0].Target, Kind: FailInterrupted, Reason: r.Interrupted.Error()}, nil)
			return r
		}()},
		{"replay-empty.txt", &Report{Queue: "orders.shipping.dlq"}},
		// Messages left in the DLQ whose publishes went out: the queues
		// that took a copy of each are named.
		{"replay-copies.txt", func() *Report {
			r := &Report{Queue: "work.dlq", InQueue: 3, Limit: 3}
			t := &Target{Exchange: "orders", RoutingKey: "order.created", From: FromDeath, OriginQueue: "work"}
			r.add(Outcome{Index: 1, Action: ActionFailed, Kind: FailUnavailable, Target: t, Routed: true, Queues: []string{"audit", "other", "work"}, Copies: []string{"audit", "other"},
				Reason: sentReason(*t, []*Unavailable{{Queue: "work", Why: "no longer exists (deleted since the replay read the bindings)", Fix: `declare "work" again, with its bindings`, Missed: true}}, "the publish missed it", []string{"audit", "other"}, false)}, nil)
			r.add(Outcome{Index: 2, Action: ActionFailed, Kind: FailNacked, Target: t, Routed: true, Queues: []string{"other", "work"}, Copies: []string{"other", "work"},
				Reason: nackedReason([]string{"other", "work"}, "work")}, nil)
			r.add(Outcome{Index: 3, Action: ActionFailed, Kind: FailUnavailable, Target: t, Routed: true, Queues: []string{"audit", "other", "work"}, Reason: "(refused before publishing)"}, nil)
			return r
		}()},
	} {
		var buf bytes.Buffer
		if err := WriteReplayText(&buf, tc.rep, ReplayRender{Vhost: "/", MaxLines: 1}); err != nil {
			t.Fatal(err)
		}
		golden(t, tc.name, buf.Bytes())
	}
}

// A destination --to-exchange and --routing-key name together is the
// user's choice: no advice to send the messages to the queue they died in
// instead, and no guess that the bindings changed. With one of them, the
// route that misses that queue is the flag's doing.
func TestWriteReplayTextGivenDestination(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		from       string
		want, nots []string
	}{
		{FromFlags, []string{`→ empty`}, []string{"did not die", "no longer reaches", "bindings changed"}},
		{FromDeathByFlags, []string{`note: this also delivers a copy to "empty"`, `no longer reaches "jobs", where these messages died (the --to-exchange or --routing-key given changed the route)`}, []string{"bindings changed"}},
		{FromDeath, []string{`note: this also delivers a copy to "empty"`, `(the bindings changed?)`}, nil},
	} {
		rep := &Report{Queue: "jobs.dlq", InQueue: 1}
		rep.add(Outcome{Index: 1, Action: ActionReplayed, Routed: true, Queues: []string{"empty"},
			Target: &Target{Exchange: "", RoutingKey: "empty", From: tc.from, OriginQueue: "jobs"}}, nil)
		var buf bytes.Buffer
		if err := WriteReplayText(&buf, rep, ReplayRender{Vhost: "v"}); err != nil {
			t.Fatal(err)
		}
		got := buf.String()
		for _, w := range tc.want {
			if !strings.Contains(got, w) {
				t.Errorf("%s: replay text:\n%s\nwant %q", tc.from, got, w)
			}
		}
		for _, n := range tc.nots {
			if strings.Contains(got, n) {
				t.Errorf("%s: replay text:\n%s\nholds %q", tc.from, got, n)
			}
		}
	}
}

func TestWriteReplayJSON(t *testing.T) {
	t.Parallel()
	var buf bytes.Buffer
	if err := WriteReplayJSON(&buf, replayFixture(false), ReplayRender{Vhost: "/"}); err != nil {
		t.Fatal(err)
	}
	golden(t, "replay.json", buf.Bytes())
}

// A replay on a queue with delayed retry says that the messages it left
// wait before they can be read again, and an empty read with messages on
// hold is not "empty".
func TestWriteReplayTextDelayedRetry(t *testing.T) {
	t.Parallel()
	const retry = "delayed retry type returned, 30s"
	tests := []struct {
		name string
		rep  *Report
		want string
	}{
		{"one message left", func() *Report {
			rep := &Report{Queue: "w1.dlq", InQueue: 2, Limit: 2, DelayedRetry: retry, Delayed: 1}
			rep.add(Outcome{Index: 1, Action: ActionSkipped, Kind: SkipNoDeath, Reason: "no x-death header"}, nil)
			rep.add(Outcome{Index: 2, Action: ActionReplayed, Target: &Target{Exchange: "", RoutingKey: "w1", From: FromFlags}}, nil)
			return rep
		}(), `The message left in "w1.dlq" went back with a nack and waits for a delayed retry (delayed retry type returned, 30s) before it can be read again (the broker counts 1 held back); run the replay again once it is over.`},
		{"two messages left", func() *Report {
			rep := &Report{Queue: "w1.dlq", InQueue: 2, Limit: 2, DelayedRetry: retry, Delayed: 2}
			rep.add(Outcome{Index: 1, Action: ActionSkipped, Kind: SkipNoDeath, Reason: "no x-death header"}, nil)
			rep.add(Outcome{Index: 2, Action: ActionFailed, Kind: FailUnroutable, Reason: "unroutable"}, nil)
			return rep
		}(), `The 2 messages left in "w1.dlq" went back with a nack and wait for a delayed retry (delayed retry type returned, 30s) before they can be read again (the broker counts 2 held back); run the replay again once it is over.`},
		{"all six wait", &Report{Queue: "w1.dlq", Delayed: 6, DelayedRetry: retry},
			`Queue "w1.dlq" (vhost "v") has no message ready to replay: 6 messages wait for a delayed retry (delayed retry type returned, 30s); run the replay again once it is over.`},
		{"the one waits", &Report{Queue: "w1.dlq", Delayed: 1, DelayedRetry: retry},
			`Queue "w1.dlq" (vhost "v") has no message ready to replay: 1 message waits for a delayed retry (delayed retry type returned, 30s); run the replay again once it is over.`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var buf bytes.Buffer
			if err := WriteReplayText(&buf, tt.rep, ReplayRender{Vhost: "v"}); err != nil {
				t.Fatal(err)
			}
			if got := buf.String(); !strings.Contains(got, tt.want) || strings.Contains(got, "empty") {
				t.Errorf("replay text:\n%s\nwant the line %q", got, tt.want)
			}
		})
	}
}

func TestWritePeekTextDelayedRetry(t *testing.T) {
	t.Parallel()
	for n, want := range map[int]string{
		1: `has no message ready to read: 1 message waits for a delayed retry (delayed retry type returned, 30s); peek again once it is over.`,
		3: `has no message ready to read: 3 messages wait for a delayed retry (delayed retry type returned, 30s); peek again once it is over.`,
	} {
		var buf bytes.Buffer
		if err := WritePeekText(&buf, &PeekResult{Queue: "w1.dlq", Delayed: n, DelayedRetry: "delayed retry type returned, 30s"}, PeekRender{Vhost: "v"}); err != nil {
			t.Fatal(err)
		}
		if got := buf.String(); !strings.Contains(got, want) {
			t.Errorf("peek text for %d waiting:\n%s\nwant %q", n, got, want)
		}
	}
}

// A queue whose count came back 0 yet a read found messages (a quorum
// queue's leader that did not answer its count in time) is never said to
// be empty, in text or JSON: peek shows what it read, replay says it
// replays what the queue holds.
func TestUncountedIsNotEmpty(t *testing.T) {
	t.Parallel()
	res := &PeekResult{Queue: "q", InQueue: 1, Uncounted: true, Messages: []Message{{Index: 1, Body: []byte("kept")}}}
	rep := &Report{Queue: "q", Uncounted: true, Limit: math.MaxInt}
	limited := &Report{Queue: "q", Uncounted: true, Limit: 5}
	for _, tc := range []struct {
		name  string
		write func(*bytes.Buffer) error
		want  string
	}{
		{"peek text", func(b *bytes.Buffer) error { return WritePeekText(b, res, PeekRender{Vhost: "v"}) }, `Queue "q" (vhost "v"): its count came back 0, yet it holds messages`},
		{"peek JSON", func(b *bytes.Buffer) error { return WritePeekJSON(b, res, PeekRender{Vhost: "v"}) }, `"uncounted":true`},
		{"replay text", func(b *bytes.Buffer) error { return WriteReplayText(b, rep, ReplayRender{Vhost: "v"}) }, "yet it holds messages (RabbitMQ answers 0 for a quorum queue whose leader does not answer within 250 ms, whatever it holds; or they arrived since); replaying what it holds."},
		{"replay text, a limit", func(b *bytes.Buffer) error { return WriteReplayText(b, limited, ReplayRender{Vhost: "v"}) }, "replaying up to the first 5 (--limit)."},
		{"replay JSON", func(b *bytes.Buffer) error { return WriteReplayJSON(b, rep, ReplayRender{Vhost: "v"}) }, `"uncounted":true,"limit":0`},
	} {
		var buf bytes.Buffer
		if err := tc.write(&buf); err != nil {
			t.Fatal(err)
		}
		got := strings.Join(strings.Fields(strings.ReplaceAll(buf.String(), `": `, `":`)), "")
		want := strings.Join(strings.Fields(strings.ReplaceAll(tc.want, `": `, `":`)), "")
		if !strings.Contains(got, want) || strings.Contains(buf.String(), "empty") {
			t.Errorf("%s: want %q, never \"empty\":\n%s", tc.name, tc.want, buf.String())
		}
	}
}

// A replay of a queue counted 0 that holds messages takes --limit's
// messages, or in a dry run each once; without --limit it is refused
// (the message that dies again would be taken again), saying why and
// what to pass.
func TestUncountedReplayLimit(t *testing.T) {
	for _, c := range []struct {
		opts  ReplayOptions
		limit int
		ok    bool
	}{
		{ReplayOptions{Limit: 5}, 5, true},
		{ReplayOptions{Limit: 5, DryRun: true}, 5, true},
		{ReplayOptions{DryRun: true}, math.MaxInt, true},
		{ReplayOptions{}, 0, false},
	} {
		if limit, ok := uncountedLimit(c.opts); limit != c.limit || ok != c.ok {
			t.Errorf("uncountedLimit(%+v) = %d, %v; want %d, %v", c.opts, limit, ok, c.limit, c.ok)
		}
	}
	err := uncountedReplayError("q.dlq")
	if !errors.Is(err, ErrUncounted) {
		t.Errorf("the refusal is not ErrUncounted: %v", err)
	}
	for _, want := range []string{`queue "q.dlq": its count came back 0, yet a read found a message in it`, "nothing was replayed and the message read is back in the queue", "--limit N"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("the refusal does not say %q:\n%v", want, err)
		}
	}
}
