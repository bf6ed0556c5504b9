package dlq

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	amqp "github.com/rabbitmq/amqp091-go"
)

func TestRepublish(t *testing.T) {
	t.Parallel()
	h := headers([]string{"work", "rejected", "orders"}, death("work", "rejected", "orders", 1, t0, "order.created", "order.audit"))
	h["x-retry-count"] = int32(4)
	h["x-retries"] = int64(4)
	h["x-delivery-count"] = int64(2)
	h["x-acquired-count"] = int64(3)
	h["x-last-death-queue"] = "work"
	h["CC"] = []any{"stale"}
	h["tenant"] = "acme"
	m := &Message{Headers: h, Body: []byte("b"), Properties: Properties{
		MessageID: "m-1", CorrelationID: "c-1", Timestamp: t0, ContentType: "application/json", ContentEncoding: "gzip",
		DeliveryMode: 2, Priority: 7, Expiration: "0", ReplyTo: "replies", Type: "order", UserID: "app", AppID: "shop",
	}}
	tests := []struct {
		name      string
		t         Target
		retry     []string
		user      string
		wantH     amqp.Table
		wantUser  string
		wantNotes int
	}{
		{"CC restored, default retry header", Target{Exchange: "orders", RoutingKey: "order.created", CC: []string{"order.audit"}}, []string{DefaultRetryHeader}, "app",
			amqp.Table{"tenant": "acme", "x-retries": int64(4), "CC": []any{"order.audit"}}, "app", 1},
		{"no CC, two retry headers, other user", Target{Exchange: "", RoutingKey: "work"}, []string{"x-retry-count", "x-retries"}, "ops",
			amqp.Table{"tenant": "acme"}, "", 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pub, notes := Republish(m, tt.t, RepublishOptions{RetryHeaders: tt.retry, User: tt.user})
			if diff := cmp.Diff(tt.wantH, pub.Headers); diff != "" {
				t.Errorf("headers (-want +got):\n%s", diff)
			}
			want := amqp.Publishing{Headers: pub.Headers, ContentType: "application/json", ContentEncoding: "gzip", DeliveryMode: 2, Priority: 7,
				CorrelationId: "c-1", ReplyTo: "replies", MessageId: "m-1", Timestamp: t0, Type: "order", UserId: tt.wantUser, AppId: "shop", Body: []byte("b")}
			if diff := cmp.Diff(want, pub); diff != "" {
				t.Errorf("publishing (-want +got):\n%s", diff)
			}
			if len(notes) != tt.wantNotes {
				t.Errorf("notes %q, want %d", notes, tt.wantNotes)
			}
		})
	}
	if _, ok := m.Headers["x-death"]; !ok {
		t.Error("Republish changed the message's own headers")
	}
}

func TestRepublishKeepsExpirationAndNoHeaders(t *testing.T) {
	t.Parallel()
	pub, notes := Republish(&Message{Properties: Properties{Expiration: "60000"}}, Target{RoutingKey: "q"}, RepublishOptions{RetryHeaders: []string{DefaultRetryHeader}, User: "u"})
	if pub.Expiration != "60000" || pub.Headers != nil || len(notes) != 0 {
		t.Errorf("publishing %+v, notes %q", pub, notes)
	}
}

// TestRepublishRestoresExpiration: the broker removes a message's
// expiration when it dead-letters it and keeps it in the x-death entry as
// original-expiration; replay restores the one of the first death (the
// publisher's), which counts again from the replay.
func TestRepublishRestoresExpiration(t *testing.T) {
	t.Parallel()
	withExp := func(d amqp.Table, exp string) amqp.Table {
		d["original-expiration"] = exp
		return d
	}
	tests := []struct {
		name     string
		h        amqp.Table
		now      string // the message's expiration as read from the DLQ
		drop     bool
		want     string
		wantNote string // a note containing this; "" wants none
	}{
		{"rejected: restored", headers([]string{"work", "rejected", "orders"}, withExp(death("work", "rejected", "orders", 1, t0, "k"), "60000")), "", false,
			"60000", "expiration 60000 ms restored from x-death (the broker removed it when it dead-lettered the message); its TTL counts again from the replay"},
		{"expired: restored, and said to expire again", headers([]string{"work", "expired", "orders"}, withExp(death("work", "expired", "orders", 1, t0, "k"), "1500")), "", false,
			"1500", "expiration 1500 ms restored from x-death: it died because it expired, and expires again, back into the DLQ, unless a consumer takes it within 1500 ms of the replay (or the queue's message TTL, where that is shorter); --drop-expiration replays it without one"},
		{"--drop-expiration", headers([]string{"work", "expired", "orders"}, withExp(death("work", "expired", "orders", 1, t0, "k"), "1500")), "", true, "", ""},
		{"--drop-expiration drops one set after", headers([]string{"work", "rejected", "orders"}, death("work", "rejected", "orders", 1, t0, "k")), "9000", true, "", ""},
		{"set after it died: kept", headers([]string{"work", "rejected", "orders"}, withExp(death("work", "rejected", "orders", 1, t0, "k"), "60000")), "5000", false, "5000", ""},
		{"none", headers([]string{"work", "rejected", "orders"}, death("work", "rejected", "orders", 1, t0, "k")), "", false, "", ""},
		{"zero: dropped", headers([]string{"work", "rejected", "orders"}, withExp(death("work", "rejected", "orders", 1, t0, "k"), "0")), "", false,
			"", `expiration "0" dropped: the message would expire at once`},
		{"unreadable: not restored", headers([]string{"work", "rejected", "orders"}, withExp(death("work", "rejected", "orders", 1, t0, "k"), "soon")), "", false,
			"", `original expiration "soon" from x-death not restored`},
		{"over ten years: not restored", headers([]string{"work", "rejected", "orders"}, withExp(death("work", "rejected", "orders", 1, t0, "k"), "315360000001")), "", false,
			"", `original expiration "315360000001" from x-death not restored`},
		// A later death's expiration was set after the first (a retry
		// queue's per-message delay, say): not the publisher's.
		{"only a later death's", headers([]string{"work", "rejected", "orders"},
			withExp(death("work.retry", "expired", "", 1, t1, "work.retry"), "10000"),
			death("work", "rejected", "orders", 1, t0, "k")), "", false, "", ""},
		{"the first death's, not a later one's", headers([]string{"work", "rejected", "orders"},
			withExp(death("work.retry", "expired", "", 1, t1, "work.retry"), "10000"),
			withExp(death("work", "rejected", "orders", 1, t0, "k"), "60000")), "", false, "60000", "expiration 60000 ms restored"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := &Message{Headers: tt.h, Deaths: DecodeDeaths(tt.h), Properties: Properties{Expiration: tt.now}}
			o, _ := m.Deaths.Origin()
			target := Target{Exchange: o.Exchange, RoutingKey: "k", From: FromDeath}
			pub, notes := Republish(m, target, RepublishOptions{User: "u", DropExpiration: tt.drop})
			if pub.Expiration != tt.want {
				t.Errorf("expiration %q, want %q", pub.Expiration, tt.want)
			}
			found := false
			for _, n := range notes {
				found = found || (tt.wantNote != "" && strings.Contains(n, tt.wantNote))
			}
			if (tt.wantNote == "") != (len(notes) == 0) || (tt.wantNote != "" && !found) {
				t.Errorf("notes %q, want one containing %q", notes, tt.wantNote)
			}
		})
	}
}
