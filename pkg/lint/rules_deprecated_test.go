package lint

import (
	"testing"

	"github.com/mqctl/mqctl/pkg/topology"
)

// TestQueueMasterLocatorOneFinding: x-queue-master-locator on a classic
// queue is the deprecated feature queue_master_locator, one cause: MQ503
// alone reports it, with the leader locator as the fix, never MQ501's
// "use a queue type that supports it" (no type takes it on 4.3). 4.3
// refuses the queue, and refuses a policy with the key itself (HTTP 400
// "use of deprecated queue-master-locator argument is not permitted");
// 4.0 takes both and logs a deprecation warning; 3.10 takes both, its
// classic queues' own locator.
func TestQueueMasterLocatorOneFinding(t *testing.T) {
	queue := func(b *builder) {
		b.queue("a", topology.Args{"x-queue-master-locator": "min-masters", argDLX: "", argDLRK: "a.dlq"})
	}
	// policy matches a classic queue and a quorum queue, which does not
	// take the key: where the broker takes the policy, it skips a.q.
	policy := func(b *builder) {
		b.queue("a", nil)
		b.typed("a.q", topology.QueueQuorum, nil)
		b.policy("p", "^a", topology.Args{"queue-master-locator": "min-masters"})
	}
	skips := "does not apply the policy at all to the ones it matches (a.q)"
	for _, tc := range []objectCase{
		{name: "queue 4.3: refused, MQ503 only", version: "4.3", build: queue, object: "a",
			ids: []string{"MQ503"}, severity: Error,
			contains: []string{"denies the deprecated feature queue_master_locator", "refuses to declare a queue with it", "x-queue-leader-locator: balanced"},
			lacks:    []string{"use a queue type that supports it"}},
		{name: "queue 4.3, MQ503 off: MQ501 with the leader locator", version: "4.3", rules: map[string]string{"MQ503": "off"}, build: queue, object: "a",
			ids: []string{"MQ501"}, severity: Error,
			contains: []string{"x-queue-leader-locator (client-local or balanced)", "deprecated_features.permit.queue_master_locator = true"},
			lacks:    []string{"use a queue type that supports it"}},
		{name: "queue 4.0: accepted, deprecated", version: "4.0", build: queue, object: "a",
			ids: []string{"MQ503"}, severity: Warning,
			contains: []string{"RabbitMQ 4.0 logs a deprecation warning", "4.3 refuses it"}},
		{name: "queue 3.10: accepted", version: "3.10", build: queue, object: "a"},
		{name: "policy 4.3: the policy is refused", version: "4.3", build: policy, object: "p",
			ids: []string{"MQ503"}, severity: Error,
			contains: []string{`refuses the policy itself (HTTP 400 "use of deprecated queue-master-locator argument is not permitted")`, "queue-leader-locator: balanced"},
			lacks:    []string{"refuses to declare a queue", skips}},
		{name: "policy 4.0: accepted, deprecated", version: "4.0", build: policy, object: "p",
			ids: []string{"MQ503"}, severity: Warning,
			contains: []string{"RabbitMQ 4.0 logs a deprecation warning", "4.3 refuses it", skips}},
		{name: "policy 3.10: accepted, not applied to the quorum queue", version: "3.10", build: policy, object: "p",
			ids: []string{"MQ501"}, severity: Error,
			contains: []string{"sets queue-master-locator, which quorum queues do not support on RabbitMQ 3.10", "(a.q)"}},
	} {
		tc.look = []string{"MQ501", "MQ503"}
		t.Run(tc.name, tc.run)
	}
}

// TestClassicQueueV1: RabbitMQ 4.3 removed classic queues v1. It refuses
// x-queue-version 1 ("unsupported queue version '1'"): MQ501, an error,
// with version 2 as the fix; it takes the policy key queue-version 1 and
// ignores it: MQ503, a warning. Version 2 is fine on 4.3. 4.0 and 3.10
// take version 1 both ways: no finding.
func TestClassicQueueV1(t *testing.T) {
	queue := func(version any) func(b *builder) {
		return func(b *builder) { b.queue("a", topology.Args{"x-queue-version": version, argMaxLen: 10}) }
	}
	policy := func(version any) func(b *builder) {
		return func(b *builder) {
			b.queue("a", nil)
			b.policy("p", "^a$", topology.Args{"queue-version": version})
		}
	}
	for _, tc := range []objectCase{
		{name: "argument 1 on 4.3: refused", version: "4.3", build: queue(1), object: "a",
			ids: []string{"MQ501"}, severity: Error,
			contains: []string{"unsupported queue version '1'", "Remove it, or write x-queue-version: 2 (version 2 is the only classic queue storage RabbitMQ 4.3 has)"}},
		{name: "argument 2 on 4.3", version: "4.3", build: queue(2), object: "a"},
		{name: "argument 1 on 4.0: accepted", version: "4.0", build: queue(1), object: "a"},
		{name: "argument 1 on 3.10: accepted", version: "3.10", build: queue(1), object: "a"},
		{name: "policy key 1 on 4.3: ignored", version: "4.3", build: policy(1), object: "p",
			ids: []string{"MQ503"}, severity: Warning,
			contains: []string{"RabbitMQ 4.3 accepts it and ignores it", "Remove it from the policy"}},
		{name: "policy key 2 on 4.3", version: "4.3", build: policy(2), object: "p"},
		{name: "policy key 1 on 4.0: in force", version: "4.0", build: policy(1), object: "p"},
		{name: "policy key 1 on 3.10: in force", version: "3.10", build: policy(1), object: "p"},
	} {
		tc.look = []string{"MQ501", "MQ503"}
		t.Run(tc.name, tc.run)
	}
}

// TestInMemoryLimitsIgnored: from 4.0 quorum queues keep no messages in
// memory, and RabbitMQ takes x-max-in-memory-length and -bytes (and the
// policy keys) and ignores them: MQ503 says so on 4.0 and 4.3, at the
// argument; 3.10 still applies them, and nothing is said. On 4.x the
// policy key also keeps the policy off the classic queues it matches
// (which do not support it), and MQ503 names them.
func TestInMemoryLimitsIgnored(t *testing.T) {
	queue := func(b *builder) {
		b.typed("q", topology.QueueQuorum, topology.Args{"x-max-in-memory-length": int64(1000), argDLX: "", argDLRK: "q.dlq", "x-max-length": int64(10)})
	}
	policy := func(b *builder) {
		b.typed("a.q", topology.QueueQuorum, nil)
		b.queue("a.c", nil)
		b.policy("p", "^a", topology.Args{"max-in-memory-bytes": int64(1 << 20)})
	}
	for _, tc := range []objectCase{
		{name: "queue 4.3: ignored", version: "4.3", build: queue, object: "q",
			ids: []string{"MQ503"}, severity: Warning,
			contains: []string{`quorum queue "q" sets x-max-in-memory-length 1000: RabbitMQ 4.3 accepts it and ignores it`, "limits.max_length"}},
		{name: "queue 4.0: ignored", version: "4.0", build: queue, object: "q",
			ids: []string{"MQ503"}, severity: Warning,
			contains: []string{"RabbitMQ 4.0 accepts it and ignores it"}},
		{name: "queue 3.10: applied", version: "3.10", build: queue, object: "q"},
		{name: "policy 4.3: ignored, and not applied to the classic queue", version: "4.3", build: policy, object: "p",
			ids: []string{"MQ503"}, severity: Warning,
			contains: []string{"sets max-in-memory-bytes: 1048576: RabbitMQ 4.3 accepts it and ignores it", "(a.c)", "Remove it from the policy"}},
		{name: "policy 3.10: applied", version: "3.10", build: policy, object: "p"},
	} {
		tc.look = []string{"MQ503"}
		t.Run(tc.name, tc.run)
	}
}
