package status

import (
	"bytes"
	"encoding/json"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	gold "github.com/mqctl/mqctl/internal/golden"

	"github.com/mqctl/mqctl/pkg/broker"
)

func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	gold.Check(t, filepath.Join("testdata", name), got)
}

// sampleReport has a DLQ holding dead letters, a queue over its
// max_depth, an idle queue with messages, a queue without statistics yet
// and a queue missing on the broker.
func sampleReport(t *testing.T) *Report {
	t.Helper()
	top := load(t, sampleFile+"  fresh: {}\n  gone: {}\n")
	live := map[string][]broker.QueueActivity{"/": {
		{Name: "orders.shipping", Type: "quorum", State: "running", Known: true, Messages: 20000, Ready: 19990, Unacked: 10, Consumers: 2, PublishRate: 812.4, DeliverRate: 35.25},
		{Name: "orders.shipping.dlq", Type: "quorum", State: "running", Known: true, Messages: 3, Ready: 3},
		{Name: "orders.shipping.retry.10s", Type: "quorum", State: "running", Known: true, Messages: 4, Ready: 4, PublishRate: 0.4, DeliverRate: 0},
		{Name: "events", Type: "stream", State: "running", Known: true, Messages: 5000, Ready: 5000, PublishRate: 2},
		{Name: "idle", Type: "classic", State: "running", Known: true, Messages: 12, Ready: 12},
		{Name: "fresh", Type: "classic", State: "running"},
		{Name: "not-declared", Type: "classic", State: "running", Known: true, Messages: 99},
	}}
	r := Build(top, live, Options{})
	r.Server, r.Version = "http://127.0.0.1:15672", "3.10.8"
	return r
}

func TestWriteText(t *testing.T) {
	var buf bytes.Buffer
	if err := WriteText(&buf, sampleReport(t), TextOptions{}); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(buf.String(), "\x1b[") {
		t.Error("colour codes without TextOptions.Color")
	}
	if strings.Contains(buf.String(), "not-declared") {
		t.Error("a queue the file does not declare is listed")
	}
	golden(t, "status.txt", buf.Bytes())
}

func TestWriteTextColour(t *testing.T) {
	var buf bytes.Buffer
	if err := WriteText(&buf, sampleReport(t), TextOptions{Color: true}); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		ansiRed + "! orders.shipping.dlq ",
		ansiYellow + "! idle ",
	} {
		if !strings.Contains(buf.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, buf.String())
		}
	}
	if strings.Contains(buf.String(), ansiRed+"  ") || strings.Contains(buf.String(), ansiYellow+"  ") {
		t.Errorf("a row needing no attention is coloured:\n%s", buf.String())
	}
}

func TestWriteTextAllQuiet(t *testing.T) {
	top := load(t, "queues:\n  q: {}\n")
	r := Build(top, map[string][]broker.QueueActivity{"/": {running("q", 0, 1)}}, Options{})
	var buf bytes.Buffer
	if err := WriteText(&buf, r, TextOptions{}); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(buf.String(), "!") || !strings.HasSuffix(buf.String(), "Status: 1 queue in 1 vhost: nothing needs attention.\n") {
		t.Errorf("quiet status:\n%s", buf.String())
	}
}

func TestWriteJSON(t *testing.T) {
	var buf bytes.Buffer
	if err := WriteJSON(&buf, sampleReport(t)); err != nil {
		t.Fatal(err)
	}
	golden(t, "status.json", buf.Bytes())

	var doc struct {
		FormatVersion string `json:"format_version"`
		OK            *bool  `json:"ok"`
		Vhosts        []struct {
			Queues []struct {
				Name     string            `json:"name"`
				Problems []json.RawMessage `json:"problems"`
			} `json:"queues"`
		} `json:"vhosts"`
	}
	if err := json.Unmarshal(buf.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	if doc.FormatVersion != "1" || doc.OK == nil || *doc.OK {
		t.Errorf("format_version %q, ok %v: want \"1\" and false", doc.FormatVersion, doc.OK)
	}
	for _, q := range doc.Vhosts[0].Queues {
		if q.Problems == nil {
			t.Errorf("queue %s: problems is null, want a list", q.Name)
		}
	}
}

// TestWriteTextDelayed: where a queue holds messages back for a delayed
// retry (RabbitMQ 4.3's messages_delayed), the vhost's table has a DELAYED
// column (a queue that does not report it shows "-") and the JSON gives the
// figure where the broker reported one, 0 included; a report without
// delayed messages keeps the usual columns (TestWriteText's golden file).
func TestWriteTextDelayed(t *testing.T) {
	top := load(t, sampleFile)
	n := func(v int64) *int64 { return &v }
	live := map[string][]broker.QueueActivity{"/": {
		{Name: "orders.shipping", Type: "quorum", State: "running", Known: true, Messages: 12, Ready: 3, Unacked: 2, Delayed: n(7), Consumers: 1},
		{Name: "orders.shipping.dlq", Type: "quorum", State: "running", Known: true, Delayed: n(0)},
		{Name: "idle", Type: "classic", State: "running", Known: true},
	}}
	r := Build(top, live, Options{})
	var buf bytes.Buffer
	if err := WriteText(&buf, r, TextOptions{}); err != nil {
		t.Fatal(err)
	}
	for _, want := range []*regexp.Regexp{
		regexp.MustCompile(`(?m)^  QUEUE +ROLE +MESSAGES +READY +UNACKED +DELAYED +CONSUMERS +PUBLISH/s +DELIVER/s +NOTE$`),
		regexp.MustCompile(`(?m)^  orders\.shipping +working +12 +3 +2 +7 +1 `),
		regexp.MustCompile(`(?m)^  orders\.shipping\.dlq +dlq +0 +0 +0 +0 +0 `),
		regexp.MustCompile(`(?m)^  idle +working +0 +0 +0 +- +0 `),
	} {
		if !want.MatchString(buf.String()) {
			t.Errorf("text lacks %s:\n%s", want, buf.String())
		}
	}
	buf.Reset()
	if err := WriteJSON(&buf, r); err != nil {
		t.Fatal(err)
	}
	var doc jsonReport
	if err := json.Unmarshal(buf.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	got := map[string]*int64{}
	for _, q := range doc.Vhosts[0].Queues {
		got[q.Name] = q.Delayed
	}
	if d := got["orders.shipping"]; d == nil || *d != 7 {
		t.Errorf("orders.shipping messages_delayed %v, want 7", d)
	}
	if d := got["orders.shipping.dlq"]; d == nil || *d != 0 {
		t.Errorf("orders.shipping.dlq messages_delayed %v, want 0 (reported)", d)
	}
	if d, ok := got["idle"]; !ok || d != nil {
		t.Errorf("idle messages_delayed %v (listed %v), want absent: not reported", d, ok)
	}
}

// TestWriteTextDeadLettering: where a quorum queue holds dead letters its
// dead-letter exchange has not taken (at-least-once dead-lettering,
// messages_dlx), the vhost's table has a DEAD-LETTERING column, after
// DELAYED when both are there; the queue is marked with a warning that
// says why; the JSON gives messages_dlx where the broker reports it.
func TestWriteTextDeadLettering(t *testing.T) {
	top := load(t, sampleFile)
	n := func(v int64) *int64 { return &v }
	live := map[string][]broker.QueueActivity{"/": {
		{Name: "orders.shipping", Type: "quorum", State: "running", Known: true, Messages: 12, Ready: 3, Unacked: 2, Delayed: n(5), DeadLettering: n(2), Consumers: 1},
		{Name: "orders.shipping.dlq", Type: "quorum", State: "running", Known: true, Delayed: n(0), DeadLettering: n(0)},
		{Name: "idle", Type: "classic", State: "running", Known: true},
	}}
	r := Build(top, live, Options{})
	var buf bytes.Buffer
	if err := WriteText(&buf, r, TextOptions{}); err != nil {
		t.Fatal(err)
	}
	for _, want := range []*regexp.Regexp{
		regexp.MustCompile(`(?m)^  QUEUE +ROLE +MESSAGES +READY +UNACKED +DELAYED +DEAD-LETTERING +CONSUMERS +PUBLISH/s +DELIVER/s +NOTE$`),
		regexp.MustCompile(`(?m)^! orders\.shipping +working +12 +3 +2 +5 +2 +1 .*2 dead letters waiting for its dead-letter exchange to take them`),
		regexp.MustCompile(`(?m)^  orders\.shipping\.dlq +dlq +0 +0 +0 +0 +0 +0 `),
		regexp.MustCompile(`(?m)^  idle +working +0 +0 +0 +- +- +0 `),
	} {
		if !want.MatchString(buf.String()) {
			t.Errorf("text lacks %s:\n%s", want, buf.String())
		}
	}
	buf.Reset()
	if err := WriteJSON(&buf, r); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(buf.String(), `"messages_dlx": 2`) || strings.Count(buf.String(), `"messages_dlx"`) != 2 {
		t.Errorf("JSON messages_dlx: want 2 for orders.shipping, 0 for its DLQ, none for idle:\n%s", buf.String())
	}
}

// TestWriteDeadLettersRoutedNowhere: a tester's quorum queue holding 3
// dead letters its dead-letter exchange routes to no queue is an alert,
// with the fix in its note and in the JSON problem, and no "messages, no
// consumers" warning; the check fails ("ok": false). A queue whose dead
// letters are on their way to its DLQ keeps a warning.
func TestWriteDeadLettersRoutedNowhere(t *testing.T) {
	live := map[string][]broker.QueueActivity{"/": {
		held("work-alo", 3), held("lost-dlx", 0), held("routed", 1), running("routed.dlq", 0, 0),
	}}
	r := Build(load(t, heldFile), live, Options{})
	r.Server, r.Version = "http://127.0.0.1:15672", "4.3.6"
	var buf bytes.Buffer
	if err := WriteText(&buf, r, TextOptions{}); err != nil {
		t.Fatal(err)
	}
	golden(t, "status_unrouted.txt", buf.Bytes())
	buf.Reset()
	if err := WriteJSON(&buf, r); err != nil {
		t.Fatal(err)
	}
	golden(t, "status_unrouted.json", buf.Bytes())
}

// TestWriteTextWithoutQueues: a vhost whose file declares no queue shows
// no empty queue table: its links alone, or a line that says so.
func TestWriteTextWithoutQueues(t *testing.T) {
	for _, c := range []struct {
		name, file string
		links      []Link
		want       string
	}{
		{"links only", "federation_upstreams:\n  dc2: { uri: \"amqp://dc2\" }\n",
			[]Link{{Kind: "federation upstream", Name: "dc2", Problems: []Problem{{KindMissing, Alert, "missing on the broker (run mqctl apply)"}}}},
			"vhost /\n  LINK                       STATE  NOTE\n! federation upstream \"dc2\"  -      missing on the broker (run mqctl apply)\n\n"},
		{"nothing", "exchanges:\n  x: { type: fanout }\n", nil, "vhost /\n  (the file declares no queue here)\n\n"},
	} {
		r := Build(load(t, c.file), map[string][]broker.QueueActivity{"/": nil}, Options{})
		r.Vhosts[0].Links = c.links
		var buf bytes.Buffer
		if err := WriteText(&buf, r, TextOptions{}); err != nil {
			t.Fatal(err)
		}
		if out := buf.String(); !strings.HasPrefix(out, c.want) || strings.Contains(out, "QUEUE") {
			t.Errorf("%s:\n%s\nwant it to start\n%s", c.name, out, c.want)
		}
	}
}
