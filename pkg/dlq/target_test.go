package dlq

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	amqp "github.com/rabbitmq/amqp091-go"
)

func msgWith(exchange, key string, h amqp.Table) *Message {
	return &Message{Index: 1, Exchange: exchange, RoutingKey: key, Headers: h, Deaths: DecodeDeaths(h)}
}

func TestChoose(t *testing.T) {
	t.Parallel()
	str := func(s string) *string { return &s }
	dead := headers([]string{"work", "rejected", "orders"}, death("work", "rejected", "orders", 1, t0, "order.created", "order.audit"))
	tests := []struct {
		name     string
		m        *Message
		o        Override
		want     Target
		wantSkip string
	}{
		{"from x-death, CC kept", msgWith("dlx", "work", dead), Override{},
			Target{Exchange: "orders", RoutingKey: "order.created", CC: []string{"order.audit"}, From: FromDeath, OriginQueue: "work"}, ""},
		{"both flags", msgWith("dlx", "work", dead), Override{Exchange: str(""), RoutingKey: str("work")},
			Target{Exchange: "", RoutingKey: "work", From: FromFlags, OriginQueue: "work"}, ""},
		{"exchange flag keeps the original keys", msgWith("dlx", "work", dead), Override{Exchange: str("orders.v2")},
			Target{Exchange: "orders.v2", RoutingKey: "order.created", CC: []string{"order.audit"}, From: FromDeathByFlags, OriginQueue: "work"}, ""},
		{"routing key flag drops CC", msgWith("dlx", "work", dead), Override{RoutingKey: str("order.retried")},
			Target{Exchange: "orders", RoutingKey: "order.retried", From: FromDeathByFlags, OriginQueue: "work"}, ""},
		{"no x-death: skipped", msgWith("", "work.dlq", nil), Override{}, Target{}, SkipNoDeath},
		{"no x-death, routing key only: skipped", msgWith("", "work.dlq", nil), Override{RoutingKey: str("k")}, Target{}, SkipNoDeath},
		{"no x-death, exchange flag: the key it arrived with", msgWith("", "work.dlq", nil), Override{Exchange: str("orders")},
			Target{Exchange: "orders", RoutingKey: "work.dlq", From: FromFlags}, ""},
		{"unreadable x-death: skipped", msgWith("dlx", "work", amqp.Table{HeaderDeath: "garbage"}), Override{}, Target{}, SkipUnreadableDeath},
		{"x-death without routing keys: skipped", msgWith("dlx", "work", headers(nil, amqp.Table{"queue": "work", "reason": "rejected", "exchange": "orders"})), Override{}, Target{}, SkipUnreadableDeath},
		{"unreadable x-death, both flags", msgWith("dlx", "work", amqp.Table{HeaderDeath: "garbage"}), Override{Exchange: str("x"), RoutingKey: str("k")},
			Target{Exchange: "x", RoutingKey: "k", From: FromFlags}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, skip := Choose(tt.m, tt.o)
			if tt.wantSkip != "" {
				if skip == nil || skip.Kind != tt.wantSkip {
					t.Fatalf("Choose() = %+v, %v; want skip %q", got, skip, tt.wantSkip)
				}
				return
			}
			if skip != nil {
				t.Fatalf("Choose() skipped: %v", skip)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Choose() (-want +got):\n%s", diff)
			}
		})
	}
}

func TestLoopsBack(t *testing.T) {
	t.Parallel()
	m := msgWith("dlx", "work", nil)
	tests := []struct {
		t    Target
		want bool
	}{
		{Target{Exchange: "dlx", RoutingKey: "work"}, true},  // the way it came in
		{Target{Exchange: "", RoutingKey: "work.dlq"}, true}, // the DLQ by name
		{Target{Exchange: "", RoutingKey: "x", CC: []string{"work.dlq"}}, true},
		{Target{Exchange: "dlx", RoutingKey: "other"}, false},
		{Target{Exchange: "orders", RoutingKey: "work"}, false},
		{Target{Exchange: "", RoutingKey: "work"}, false},
	}
	for _, tt := range tests {
		if got := LoopsBack(tt.t, m, "work.dlq"); got != tt.want {
			t.Errorf("LoopsBack(%+v) = %v, want %v", tt.t, got, tt.want)
		}
	}
}
