package loader

import (
	"strings"
	"testing"

	"github.com/mqctl/mqctl/pkg/topology"
)

// TestDeliveryLimit: the typed delivery_limit says what the raw argument
// can: a non-negative limit, or unlimited (or -1), x-delivery-limit -1,
// which RabbitMQ 4.0+ reads as no limit (before 4.0 it dead-letters a
// message at its first return: lint's MQ203 says so for such a target).
func TestDeliveryLimit(t *testing.T) {
	tests := []struct {
		value string
		want  int64
		err   string
	}{
		{value: "0", want: 0},
		{value: "20", want: 20},
		{value: "-1", want: -1},
		{value: "unlimited", want: -1},
		{value: "-2", err: `t.yaml:5:41: queue "q": delivery_limit: -2 is out of range (a non-negative integer; to turn the delivery limit off on RabbitMQ 4.0+, write delivery_limit: unlimited`},
		{value: "forever", err: `t.yaml:5:41: queue "q": delivery_limit: expected a non-negative integer or unlimited, got string "forever" (a non-negative integer; to turn the delivery limit off on RabbitMQ 4.0+, write delivery_limit: unlimited`},
		{value: `"5"`, err: `t.yaml:5:41: queue "q": delivery_limit: expected a non-negative integer, got string "5" (remove the quotes)`},
	}
	for _, tc := range tests {
		src := "version: 1\nvhosts:\n  /:\n    queues:\n      q: {type: quorum, delivery_limit: " + tc.value + "}\n"
		top, err := LoadBytes("t.yaml", []byte(src), Options{})
		switch {
		case tc.err != "":
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("delivery_limit: %s: err = %v, want %s", tc.value, err, tc.err)
			}
		case err != nil:
			t.Errorf("delivery_limit: %s: %v", tc.value, err)
		default:
			got, ok := topology.Args(top.Vhosts["/"].Queues["q"].Arguments).Int("x-delivery-limit")
			if !ok || got != tc.want {
				t.Errorf("delivery_limit: %s: x-delivery-limit = %d (%v), want %d", tc.value, got, ok, tc.want)
			}
		}
	}
}
