package engine

import (
	"testing"

	"github.com/mqctl/mqctl/pkg/topology"
)

// TestDeadLettersAtLeastOnce: a quorum queue holds dead letters where a
// passive declare does not count them only when it dead-letters at least
// once in effect: the strategy, a dead-letter exchange and overflow
// reject-publish, each from its arguments or a policy (for a quorum
// queue, a policy's overflow wins over its own).
func TestDeadLettersAtLeastOnce(t *testing.T) {
	v := topology.NewVhost("v")
	qq := func(name string, args topology.Args) {
		v.Queues[name] = &topology.Queue{Name: name, Type: topology.QueueQuorum, Durable: true, Arguments: args}
	}
	all := topology.Args{"x-dead-letter-exchange": "dlx", "x-dead-letter-strategy": "at-least-once", "x-overflow": "reject-publish"}
	qq("args", all)
	qq("no-overflow", topology.Args{"x-dead-letter-exchange": "dlx", "x-dead-letter-strategy": "at-least-once"})
	qq("drop-head", topology.Args{"x-dead-letter-exchange": "dlx", "x-dead-letter-strategy": "at-least-once", "x-overflow": "drop-head"})
	qq("no-dlx", topology.Args{"x-dead-letter-strategy": "at-least-once", "x-overflow": "reject-publish"})
	qq("at-most-once", topology.Args{"x-dead-letter-exchange": "dlx", "x-dead-letter-strategy": "at-most-once", "x-overflow": "reject-publish"})
	qq("plain", nil)
	qq("pol.strategy", topology.Args{"x-dead-letter-exchange": "dlx", "x-overflow": "reject-publish"})
	qq("pol.overflow", topology.Args{"x-dead-letter-exchange": "dlx", "x-dead-letter-strategy": "at-least-once", "x-overflow": "drop-head"})
	v.Policies["strategy"] = &topology.Policy{Name: "strategy", Pattern: `^pol\.strategy$`, ApplyTo: "queues",
		Definition: topology.Args{"dead-letter-strategy": "at-least-once"}}
	v.Policies["overflow"] = &topology.Policy{Name: "overflow", Pattern: `^pol\.overflow$`, ApplyTo: "queues",
		Definition: topology.Args{"overflow": "reject-publish"}}
	want := map[string]bool{
		"args": true, "no-overflow": false, "drop-head": false, "no-dlx": false, "at-most-once": false, "plain": false,
		"pol.strategy": true, "pol.overflow": true, "missing": false,
	}
	held := deadLettersAtLeastOnce(v)
	for q, w := range want {
		if got := held(q); got != w {
			t.Errorf("queue %s: holds dead letters = %v, want %v", q, got, w)
		}
	}
	if deadLettersAtLeastOnce(nil)("args") {
		t.Error("a vhost the broker does not have holds no queue")
	}
}
