package loader

import (
	"slices"
	"testing"

	"github.com/mqctl/mqctl/pkg/topology"
)

// TestWrittenFields: each argument a typed field sets is recorded with the
// field the file writes (lint names it so: limits.max_length, not
// x-max-length), the defaults of dead_letter.queue and retry.backoff as
// theirs; a raw argument as itself. Every field is one of
// topology.WrittenFields.
func TestWrittenFields(t *testing.T) {
	top, err := LoadBytes("topology.yaml", []byte(`version: 1
vhosts:
  /:
    exchanges:
      x: {type: direct, alternate_exchange: ae}
      ae: {type: fanout}
      dlx: {type: direct}
    queues:
      c:
        max_priority: 5
        single_active_consumer: true
        limits: {max_length: 7, max_length_bytes: 1MB, overflow: reject-publish, message_ttl: 1m, expires: 1h}
        dead_letter: {exchange: dlx, routing_key: c.dead, strategy: at-most-once}
        arguments: {x-queue-mode: lazy}
      q:
        type: quorum
        delivery_limit: 3
        dead_letter: {queue: q.dlq}
      r:
        type: quorum
        dead_letter: {exchange: dlx, queue: r.dlq}
        retry: {backoff: {min: 1s, max: 1m}, when: all, attempts: 4}
      s:
        type: quorum
        dead_letter: {exchange: dlx, queue: s.dlq}
        retry: {backoff: {min: 1s}}
`), Options{})
	if err != nil {
		t.Fatal(err)
	}
	v := top.Vhosts["/"]
	want := map[string]map[string]string{
		"c": {"x-max-priority": "max_priority", "x-single-active-consumer": "single_active_consumer",
			"x-max-length": "limits.max_length", "x-max-length-bytes": "limits.max_length_bytes", "x-overflow": "limits.overflow",
			"x-message-ttl": "limits.message_ttl", "x-expires": "limits.expires",
			"x-dead-letter-exchange": "dead_letter.exchange", "x-dead-letter-routing-key": "dead_letter.routing_key", "x-dead-letter-strategy": "dead_letter.strategy",
			"x-queue-mode": ""},
		"q": {"x-delivery-limit": "delivery_limit", "x-dead-letter-exchange": "dead_letter.queue", "x-dead-letter-routing-key": "dead_letter.queue"},
		"r": {"x-delayed-retry-min": "retry.backoff.min", "x-delayed-retry-max": "retry.backoff.max", "x-delayed-retry-type": "retry.when", "x-delivery-limit": "retry.attempts"},
		"s": {"x-delayed-retry-type": "retry.backoff"},
	}
	for q, args := range want {
		for arg, field := range args {
			got, ok := v.Queues[q].ArgPos.Written(arg)
			if got != field || ok != (field != "") {
				t.Errorf("queue %s: %s written as %q (%v); want %q", q, arg, got, ok, field)
			}
			if field != "" && !slices.Contains(topology.WrittenFields[:], field) {
				t.Errorf("%q is not in topology.WrittenFields", field)
			}
		}
	}
	if got, _ := v.Exchanges["x"].ArgPos.Written("alternate-exchange"); got != "alternate_exchange" {
		t.Errorf("exchange x: alternate-exchange written as %q; want alternate_exchange", got)
	}
}
