package dlq

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	amqp "github.com/rabbitmq/amqp091-go"
)

var (
	t0 = time.Date(2024, 5, 1, 10, 0, 0, 0, time.UTC)
	t1 = t0.Add(time.Minute)
	t2 = t0.Add(2 * time.Minute)
)

// death builds an x-death table the way the broker writes it.
func death(queue, reason, exchange string, count int64, at time.Time, keys ...string) amqp.Table {
	rk := make([]any, len(keys))
	for i, k := range keys {
		rk[i] = k
	}
	return amqp.Table{"queue": queue, "reason": reason, "exchange": exchange, "count": count, "time": at, "routing-keys": rk}
}

func headers(first []string, entries ...amqp.Table) amqp.Table {
	h := amqp.Table{}
	if len(entries) > 0 {
		list := make([]any, len(entries))
		for i, e := range entries {
			list[i] = e
		}
		h[HeaderDeath] = list
	}
	if first != nil {
		h[HeaderFirstDeathQueue], h[HeaderFirstDeathReason], h[HeaderFirstDeathExchange] = first[0], first[1], first[2]
	}
	return h
}

func TestDecodeDeaths(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		h    amqp.Table
		want Deaths
	}{
		{"no headers", nil, Deaths{}},
		{"one rejection", headers([]string{"work", "rejected", "orders"}, death("work", "rejected", "orders", 1, t0, "order.created")), Deaths{
			Entries: []Death{{Queue: "work", Reason: "rejected", Exchange: "orders", RoutingKeys: []string{"order.created"}, Count: 1, Time: t0}},
			First:   FirstDeath{Queue: "work", Reason: "rejected", Exchange: "orders", Known: true},
		}},
		{"CC keys and original expiration", headers(nil, func() amqp.Table {
			d := death("work", "expired", "orders", int64(2), t0, "a", "b", "c")
			d["original-expiration"] = "60000"
			d["count"] = int32(2) // any integer width
			return d
		}()), Deaths{
			Entries: []Death{{Queue: "work", Reason: "expired", Exchange: "orders", RoutingKeys: []string{"a", "b", "c"}, Count: 2, Time: t0, OriginalExpiration: "60000"}},
		}},
		{"x-death rewritten as a string", amqp.Table{HeaderDeath: "[{queue: work}]"}, Deaths{
			Problems: []string{"header x-death is a string, not an array of tables"},
		}},
		{"an entry that is not a table", amqp.Table{HeaderDeath: []any{"work"}}, Deaths{
			Problems: []string{"x-death entry 1 is a string, not a table"},
		}},
		{"fields of the wrong type", headers(nil, amqp.Table{"queue": "work", "reason": "rejected", "exchange": []byte("orders"), "routing-keys": "order.created", "count": "1", "time": "now"}), Deaths{
			Entries: []Death{{Queue: "work", Reason: "rejected", incomplete: true}},
			Problems: []string{
				`x-death entry 1: field "exchange" is a byte array, not a string`,
				`x-death entry 1: field "routing-keys" is a string, not an array`,
				`x-death entry 1: field "count" is a string, not an integer`,
				`x-death entry 1: field "time" is a string, not a timestamp`,
			},
		}},
		{"missing fields", headers(nil, amqp.Table{"count": int64(1)}), Deaths{
			Entries: []Death{{Count: 1, incomplete: true}},
			Problems: []string{
				`x-death entry 1: no "queue" field`, `x-death entry 1: no "reason" field`,
				`x-death entry 1: no "exchange" field`, `x-death entry 1: no "routing-keys" field`,
			},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := DecodeDeaths(tt.h)
			if diff := cmp.Diff(tt.want, got, cmp.AllowUnexported(Death{}), cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("DecodeDeaths (-want +got):\n%s", diff)
			}
		})
	}
}

func TestOrigin(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name      string
		h         amqp.Table
		wantQueue string // "" = no origin
		wantX     string
	}{
		{"no x-death", nil, "", ""},
		{"one entry", headers([]string{"work", "rejected", "orders"}, death("work", "rejected", "orders", 1, t0, "k")), "work", "orders"},
		// Rejected from work, then expired from a parking queue behind
		// work's DLX: the broker lists the parking queue first.
		{"two hops", headers([]string{"work", "rejected", "orders"},
			death("park", "expired", "dlx1", 1, t1, "parked"),
			death("work", "rejected", "orders", 1, t0, "order.created")), "work", "orders"},
		// The first event repeated later: the broker moved its entry to the
		// front (count 2) and kept its first exchange and time.
		{"first event repeated, moved to the front", headers([]string{"work", "rejected", "orders"},
			death("work", "rejected", "orders", 2, t0, "order.created"),
			death("park", "expired", "dlx1", 1, t1, "parked")), "work", "orders"},
		{"same queue, other reason first", headers([]string{"work", "expired", "orders"},
			death("work", "rejected", "retry", 1, t1, "x"),
			death("work", "expired", "orders", 1, t0, "order.created")), "work", "orders"},
		{"first-death headers, no times, first event moved to the front", headers([]string{"work", "rejected", "orders"},
			amqp.Table{"queue": "work", "reason": "rejected", "exchange": "orders", "routing-keys": []any{"k"}, "count": int64(2)},
			amqp.Table{"queue": "park", "reason": "expired", "exchange": "dlx1", "routing-keys": []any{"p"}}), "work", "orders"},
		{"no first-death headers: oldest time", headers(nil,
			death("work", "rejected", "orders", 2, t0, "order.created"),
			death("park", "expired", "dlx1", 1, t1, "parked")), "work", "orders"},
		{"no first-death headers, equal times: the later entry", headers(nil,
			death("park", "expired", "dlx1", 1, t2, "parked"),
			death("work", "rejected", "orders", 1, t2, "order.created")), "work", "orders"},
		{"no times: the last entry", headers(nil,
			amqp.Table{"queue": "park", "reason": "expired", "exchange": "dlx1", "routing-keys": []any{"p"}},
			amqp.Table{"queue": "work", "reason": "rejected", "exchange": "orders", "routing-keys": []any{"k"}}), "work", "orders"},
		{"first-death headers naming no entry: oldest time", headers([]string{"gone", "rejected", "x"},
			death("park", "expired", "dlx1", 1, t1, "parked"),
			death("work", "rejected", "orders", 1, t0, "order.created")), "work", "orders"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := DecodeDeaths(tt.h).Origin()
			if ok != (tt.wantQueue != "") || got.Queue != tt.wantQueue || got.Exchange != tt.wantX {
				t.Errorf("Origin() = %q via %q (%v), want %q via %q", got.Queue, got.Exchange, ok, tt.wantQueue, tt.wantX)
			}
		})
	}
}
