package dlq

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/mqctl/mqctl/pkg/rmqversion"
	"github.com/mqctl/mqctl/pkg/route"
)

// TestOverflows: what a replay's messages, all of them together, push out
// of a queue whose overflow is drop-head, by what it holds ready.
func TestOverflows(t *testing.T) {
	t.Parallel()
	lost := route.DeadLetterFate{Dropped: true, Why: "no dead-letter exchange"}
	kept := route.DeadLetterFate{Configured: true, Exchange: "dlx", Queues: []string{"a.dlq"}}
	count := HeadDrop{MaxLength: 3, HasLength: true, Fate: lost}
	both := HeadDrop{MaxLength: 3, HasLength: true, MaxBytes: 100, HasBytes: true, Fate: kept}
	tests := []struct {
		name string
		h    HeadDrop
		held ready
		add  load
		want []Overflow
	}{
		{"room for all", count, ready{messages: 1, bytes: -1}, load{messages: 2}, nil},
		{"room for one of two: the batch counts", count, ready{messages: 2, bytes: -1}, load{messages: 2, origins: []string{"b"}},
			[]Overflow{{Queue: "a", Unit: UnitMessages, Held: 2, Added: 2, Limit: 3, PushedOut: 1, Lost: true, Why: "no dead-letter exchange", Origins: []string{"b"}}}},
		{"full already", count, ready{messages: 3, bytes: -1}, load{messages: 1},
			[]Overflow{{Queue: "a", Unit: UnitMessages, Held: 3, Added: 1, Limit: 3, PushedOut: 1, Lost: true, Why: "no dead-letter exchange"}}},
		{"more than the limit: some replayed ones too", count, ready{messages: 0, bytes: -1}, load{messages: 5},
			[]Overflow{{Queue: "a", Unit: UnitMessages, Held: 0, Added: 5, Limit: 3, PushedOut: 2, Lost: true, Why: "no dead-letter exchange"}}},
		{"nothing added", count, ready{messages: 9, bytes: -1}, load{}, nil},
		{"bytes not read: the count alone", both, ready{messages: 0, bytes: -1}, load{messages: 1, bytes: 500}, nil},
		{"over in bytes, dead-lettered", both, ready{messages: 1, bytes: 90}, load{messages: 1, bytes: 20},
			[]Overflow{{Queue: "a", Unit: UnitBytes, Held: 90, Added: 20, Limit: 100, PushedOut: 10, Exchange: "dlx", DeadLetterQueues: []string{"a.dlq"}}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := overflows("a", tt.h, tt.held, tt.add)
			if d := cmp.Diff(tt.want, got); d != "" {
				t.Errorf("overflows (-want +got):\n%s", d)
			}
		})
	}
}

// TestLoadsOf: copies count in every queue of a message's route; messages
// not sent, or whose route is not known, count nowhere.
func TestLoadsOf(t *testing.T) {
	t.Parallel()
	fromB := &Target{OriginQueue: "b"}
	batch := []pending{
		{m: Message{Body: []byte("12345")}, send: true, o: Outcome{Routed: true, Queues: []string{"a", "b"}, Target: fromB}},
		{m: Message{Body: []byte("123")}, send: true, o: Outcome{Routed: true, Queues: []string{"a"}, Target: &Target{OriginQueue: "c"}}},
		{m: Message{Body: []byte("skipped")}, send: false, o: Outcome{Routed: true, Queues: []string{"a"}, Target: fromB}},
		{m: Message{Body: []byte("unknown")}, send: true, o: Outcome{Target: fromB}},
	}
	got := loadsOf(batch)
	want := map[string]*load{
		"a": {messages: 2, bytes: 8, origins: []string{"b", "c"}},
		"b": {messages: 1, bytes: 5, origins: []string{"b"}},
	}
	if d := cmp.Diff(want, got, cmp.AllowUnexported(load{})); d != "" {
		t.Errorf("loads (-want +got):\n%s", d)
	}
}

// TestDataLossErrorText: the refusal names the queue, what is pushed out,
// and the ways out.
func TestDataLossErrorText(t *testing.T) {
	t.Parallel()
	e := &DataLossError{Queue: "b.dlq", Overflows: []Overflow{
		{Queue: "a", Unit: UnitMessages, Held: 2, Added: 2, Limit: 3, PushedOut: 1, Lost: true, Why: "no dead-letter exchange", Origins: []string{"b"}},
		{Queue: "x", Unit: UnitBytes, Held: 900, Added: 300, Limit: 1000, PushedOut: 200, Lost: true, Why: `dead-letter exchange "void" routes them to no queue`, Origins: []string{"b", "x"}},
	}}
	want := `replay of "b.dlq" refused, nothing published: ` +
		`queue "a" holds 2 messages, its max-length is 3 (overflow drop-head), and the replay adds 2: the broker pushes out the oldest message, which is lost (no dead-letter exchange); ` +
		`queue "x" holds 900 bytes of ready messages, its max-length-bytes is 1000 (overflow drop-head), and the replay adds 300 bytes: the broker pushes out its oldest messages, 200 bytes or more, which are lost (dead-letter exchange "void" routes them to no queue); ` +
		`make room in "a" and "x" first (let its consumers catch up), raise its max-length and max-length-bytes, or replay fewer messages (--limit, --from-queue), or those that died in "b" only there (--from-queue b --to-exchange "" --routing-key b); --allow-data-loss replays anyway`
	if got := e.Error(); got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
	e.Overflows[1].Origins = []string{"c"}
	if got := e.Error(); !strings.Contains(got, `, or those that died in "b", "c" each only there (--from-queue Q --to-exchange "" --routing-key Q);`) {
		t.Errorf("several origins: %s", got)
	}
	e.Overflows = e.Overflows[:1]
	e.Overflows[0].Origins = []string{"b"}
	if got := e.Error(); !strings.Contains(got, `, or only to "b", where they died (--to-exchange "" --routing-key b);`) {
		t.Errorf("one origin: %s", got)
	}
	e.Overflows[0].Origins = []string{"a"}
	if got := e.Error(); strings.Contains(got, "--routing-key") {
		t.Errorf("the messages died in the full queue itself: no advice to send them there: %s", got)
	}
}

// TestTopologyRouterDropsHead: the effective limits and overflow, and the
// fate of what is pushed out.
func TestTopologyRouterDropsHead(t *testing.T) {
	t.Parallel()
	r := NewTopologyRouter(loadVhost(t, `version: 1
vhosts:
  /:
    exchanges:
      dlx: { type: direct }
    queues:
      plain: {}
      capped: { limits: { max_length: 2 } }
      kept: { limits: { max_length_bytes: 100 }, dead_letter: { exchange: dlx, queue: kept.dlq } }
      refuses: { limits: { max_length: 2, overflow: reject-publish } }
      byPolicy: {}
      stream: { type: stream }
    policies:
      cap: { pattern: "^byPolicy$", apply_to: queues, definition: { max-length: 7 } }
`), rmqversion.Default)
	for _, q := range []string{"plain", "refuses", "stream", "missing"} {
		if h, ok := r.DropsHead(q); ok {
			t.Errorf("DropsHead(%s) = %+v, want none", q, h)
		}
	}
	if h, ok := r.DropsHead("capped"); !ok || h.MaxLength != 2 || !h.HasLength || h.HasBytes || !h.Fate.Dropped {
		t.Errorf("DropsHead(capped) = %+v, %v", h, ok)
	}
	if h, ok := r.DropsHead("kept"); !ok || h.MaxBytes != 100 || h.HasLength || h.Fate.Dropped || !cmp.Equal(h.Fate.Queues, []string{"kept.dlq"}) {
		t.Errorf("DropsHead(kept) = %+v, %v", h, ok)
	}
	if h, ok := r.DropsHead("byPolicy"); !ok || h.MaxLength != 7 {
		t.Errorf("DropsHead(byPolicy) = %+v, %v", h, ok)
	}
	if !r.MayPushOut() {
		t.Error("MayPushOut = false")
	}
}

// TestNackedReasonNamesFromQueue: the fix for a nacked publish whose route
// reaches several queues sends the message to the queue it died in alone
// with --from-queue: --routing-key alone, in a DLQ several queues share,
// would send every message there, those that died elsewhere too.
func TestNackedReasonNamesFromQueue(t *testing.T) {
	got := nackedReason([]string{"billing", "audit"}, "billing")
	for _, w := range []string{`("billing", "audit")`, `send it to "billing" alone, where it died, with --from-queue billing --to-exchange "" --routing-key billing`} {
		if !strings.Contains(got, w) {
			t.Errorf("reason %q lacks %q", got, w)
		}
	}
	if got := nackedReason([]string{"a", "b"}, ""); strings.Contains(got, "--routing-key") {
		t.Errorf("with no queue it died in known, the reason names a routing key: %q", got)
	}
}
