package loader

import (
	"strings"
	"testing"
)

// TestQueueLimitsMisplaced: a queue's limit written on the queue itself
// (max_length: 1000, as the broker's max-length policy key reads) is an
// unknown field whose hint shows where it goes, limits: {...}, with the
// user's own value (an example where it wrote none); before, the hint
// only listed the queue's fields. Written in limits, the same
// file loads.
func TestQueueLimitsMisplaced(t *testing.T) {
	tests := []struct {
		name, body, want string
	}{
		{"max_length", "queues:\n  q: {max_length: 5}", `t.yaml:5:11: queue "q": unknown field "max_length" (max_length is a field of the queue's limits: limits: {max_length: 5})`},
		{"max_length_bytes", "queues:\n  q: {max_length_bytes: 1MB}", `t.yaml:5:11: queue "q": unknown field "max_length_bytes" (max_length_bytes is a field of the queue's limits: limits: {max_length_bytes: 1MB})`},
		{"overflow", "queues:\n  q: {overflow: drop-head}", `t.yaml:5:11: queue "q": unknown field "overflow" (overflow is a field of the queue's limits: limits: {overflow: drop-head})`},
		{"message_ttl", "queues:\n  q: {message_ttl: 2h}", `t.yaml:5:11: queue "q": unknown field "message_ttl" (message_ttl is a field of the queue's limits: limits: {message_ttl: 2h})`},
		{"expires", "queues:\n  q: {expires: 45m}", `t.yaml:5:11: queue "q": unknown field "expires" (expires is a field of the queue's limits: limits: {expires: 45m})`},
		{"a value that is not one", "queues:\n  q: {max_length: [5]}", `t.yaml:5:11: queue "q": unknown field "max_length" (max_length is a field of the queue's limits: limits: {max_length: 10000})`},
		{"a dead-letter queue's", "exchanges:\n  dlx: {type: direct}\nqueues:\n  q: {dead_letter: {exchange: dlx, queue: {name: q.dlq, message_ttl: 1h}}}", `message_ttl is a field of the queue's limits: limits: {message_ttl: 1h}`},
		{"another unknown field keeps the list", "queues:\n  q: {max_lenght: 5}", `t.yaml:5:11: queue "q": unknown field "max_lenght" (`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := LoadBytes("t.yaml", []byte(vhostFile(tt.body)), Options{})
			if err == nil || !strings.Contains(errorLines(err), tt.want) {
				t.Errorf("got %v\nwant %s", err, tt.want)
			}
		})
	}
	fixed := "queues:\n  q: {limits: {max_length: 5, max_length_bytes: 1MB, overflow: reject-publish, message_ttl: 1h, expires: 30m}}"
	if _, err := LoadBytes("t.yaml", []byte(vhostFile(fixed)), Options{}); err != nil {
		t.Errorf("the limits in limits: %v", err)
	}
}
