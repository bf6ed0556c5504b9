package dlq

import (
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
			pub, notes := Republish(m, tt.t, tt.retry, tt.user)
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
	pub, notes := Republish(&Message{Properties: Properties{Expiration: "60000"}}, Target{RoutingKey: "q"}, []string{DefaultRetryHeader}, "u")
	if pub.Expiration != "60000" || pub.Headers != nil || len(notes) != 0 {
		t.Errorf("publishing %+v, notes %q", pub, notes)
	}
}
