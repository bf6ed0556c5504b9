package lint

import (
	"testing"

	"github.com/mqctl/mqctl/pkg/topology"
)

// TestNeverPolicyKeys: a policy that sets what only a queue's declaration
// sets (x-queue-type, max-priority, an x- argument) is refused whole by
// every version (HTTP 400 "not recognised policy settings", measured on
// 4.3.6, 4.0.5 and 3.10.8), so lint says so with the fix for that key, and
// counts none of its settings: the corpus file adrienKoumgangT__distriqueue
// was told to narrow a max-priority policy's pattern or move the setting to
// another policy, which no policy can hold, and on 3.10 to raise the
// priority of a policy that was refused too.
func TestNeverPolicyKeys(t *testing.T) {
	for _, ver := range []string{"4.3", "4.0", "3.10"} {
		for _, tc := range []objectCase{
			{name: "x-queue-type", look: []string{"MQ501"}, version: ver, object: "typed",
				build: func(b *builder) {
					b.typed("job.low", topology.QueueClassic, topology.Args{argDLX: "", argDLRK: "job.dlq"})
					b.policy("typed", "^job\\.", topology.Args{"x-queue-type": "classic", "max-length": 10})
				},
				ids: []string{"MQ501"}, severity: Error,
				contains: []string{`x-queue-type is no policy key on any version, so none of its settings take effect`, "a queue's type is chosen only when the queue is declared"}},
			{name: "max-priority on quorum queues", look: []string{"MQ501"}, version: ver, object: "prio",
				build: func(b *builder) {
					b.typed("job.high", topology.QueueQuorum, topology.Args{argDLX: "", argDLRK: "job.dlq"})
					b.policy("prio", "^job\\.high$", topology.Args{"max-priority": 10, "max-length": 10})
				},
				ids: []string{"MQ501"}, severity: Error,
				contains: []string{"max-priority is no policy key on any version", "priorities are set only by a classic queue's own x-max-priority argument"},
				lacks:    []string{"Narrow the policy's pattern", "move the setting to a policy"}},
			{name: "x- spelling of a policy key", look: []string{"MQ501"}, version: ver, object: "mem",
				build: func(b *builder) {
					b.typed("job.high", topology.QueueQuorum, topology.Args{argDLX: "", argDLRK: "job.dlq"})
					b.policy("mem", "^job\\.high$", topology.Args{"x-max-in-memory-length": 1000})
				},
				ids: []string{"MQ501"}, severity: Error,
				contains: []string{"Write it as max-in-memory-length"}},
			// The refused policy is not in force: the queue has no limit,
			// and the advice names what to fix in the policy that matches
			// it rather than a policy to add beside it.
			{name: "settings of a refused policy are not in force", look: []string{"MQ301"}, version: ver, object: "job.low",
				build: func(b *builder) {
					b.queue("job.low", topology.Args{argDLX: "", argDLRK: "job.dlq"})
					b.policy("typed", "^job\\.", topology.Args{"x-queue-type": "classic", "max-length": 10})
				},
				ids: []string{"MQ301"}, severity: Info,
				contains: []string{`fix policy "typed", which sets max-length: it matches the queue, but as it stands RabbitMQ ` + ver + ` refuses it, so it applies to no queue`}},
		} {
			t.Run(ver+"/"+tc.name, tc.run)
		}
	}
}

// TestPolicyHintRefusedPolicy: MQ101 and MQ301 advise adding a setting to
// the policy that applies to the queue. A policy with ha-* keys is refused
// from 4.0 (and one with queue-master-locator on 4.3), so on those targets
// it applies to nothing and the advice must say to fix it first; on 3.10 it
// applies. Before, 4.x advised adding dead-letter-exchange to the refused
// policy "2-queue-replicas" of the corpus file case3.json "which applies to
// it" (so did case4.json's "abc" on 4.3), a change that leaves the queue
// without one. And a policy a queue's type does not take (queue-mode on a
// quorum queue) is named with the key to remove.
func TestPolicyHintRefusedPolicy(t *testing.T) {
	ha := func(b *builder) {
		b.queue("work", nil)
		b.policy("2-queue-replicas", ".*", topology.Args{"ha-mode": "exactly", "ha-params": 2})
	}
	qml := func(b *builder) {
		b.queue("abc.def", nil)
		b.policy("abc", "^abc\\.", topology.Args{"queue-master-locator": "client-local"})
	}
	for _, tc := range []objectCase{
		{name: "ha on 3.10 applies", look: []string{"MQ101"}, version: "3.10", object: "work", build: ha,
			ids: []string{"MQ101"}, severity: Warning,
			contains: []string{`add dead-letter-exchange to policy "2-queue-replicas", which applies to it`}},
		{name: "ha on 4.0 refused", look: []string{"MQ101"}, version: "4.0", object: "work", build: ha,
			ids: []string{"MQ101"}, severity: Warning,
			contains: []string{`add dead-letter-exchange to policy "2-queue-replicas": it matches the queue, but as it stands RabbitMQ 4.0 refuses it, so it applies to no queue`},
			lacks:    []string{"which applies to it"}},
		{name: "ha on 4.3 refused", look: []string{"MQ301"}, version: "4.3", object: "work", build: ha,
			ids: []string{"MQ301"}, severity: Info,
			contains: []string{`add max-length to policy "2-queue-replicas": it matches the queue, but as it stands RabbitMQ 4.3 refuses it`},
			lacks:    []string{"which applies to it"}},
		{name: "queue-master-locator on 4.0 applies", look: []string{"MQ101"}, version: "4.0", object: "abc.def", build: qml,
			ids: []string{"MQ101"}, severity: Warning,
			contains: []string{`add dead-letter-exchange to policy "abc", which applies to it`}},
		{name: "queue-master-locator on 4.3 refused", look: []string{"MQ101"}, version: "4.3", object: "abc.def", build: qml,
			ids: []string{"MQ101"}, severity: Warning,
			contains: []string{`add dead-letter-exchange to policy "abc": it matches the queue, but as it stands RabbitMQ 4.3 refuses it`}},
		{name: "queue-mode keeps a policy off a quorum queue", look: []string{"MQ101"}, version: "4.3", object: "job.status",
			build: func(b *builder) {
				b.typed("job.status", topology.QueueQuorum, nil)
				b.policy("jobs", "^job\\.", topology.Args{"dead-letter-exchange": "", "dead-letter-routing-key": "job.dlq", "queue-mode": "default"})
			},
			ids: []string{"MQ101"}, severity: Error,
			contains: []string{`fix policy "jobs", which sets dead-letter-exchange: it matches the queue, but remove queue-mode from it, which quorum queues do not support`}},
	} {
		t.Run(tc.name, tc.run)
	}
}
