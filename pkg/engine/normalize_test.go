package engine

import (
	"testing"

	"github.com/mqctl/mqctl/pkg/rmqversion"
	"github.com/mqctl/mqctl/pkg/topology"
)

// TestNormalizeLeavesDesired: before 3.11 the broker ignores a vhost's
// default queue type, and the plan diffs the file without it; the
// caller's topology keeps it (a plan never changes its input), and a
// version that stores it diffs the file as it is.
func TestNormalizeLeavesDesired(t *testing.T) {
	t.Parallel()
	desired := topology.New()
	q := topology.NewVhost("q")
	q.DefaultQueueType = topology.QueueQuorum
	q.Queues["a"] = &topology.Queue{Name: "a", Type: topology.QueueQuorum, Durable: true}
	desired.Vhosts["q"] = q
	desired.Vhosts["plain"] = topology.NewVhost("plain")

	got := normalize(desired, rmqversion.MustParse("3.10"))
	if got == desired || got.Vhosts["q"] == q {
		t.Fatal("3.10: the desired topology itself was handed on, not a copy")
	}
	if got.Vhosts["q"].DefaultQueueType != "" {
		t.Errorf("3.10: the copy keeps default_queue_type %q", got.Vhosts["q"].DefaultQueueType)
	}
	if q.DefaultQueueType != topology.QueueQuorum || desired.Vhosts["q"] != q {
		t.Errorf("3.10: the caller's topology was changed (default_queue_type %q)", q.DefaultQueueType)
	}
	if got.Vhosts["q"].Queues["a"] != q.Queues["a"] || got.Vhosts["plain"] != desired.Vhosts["plain"] {
		t.Error("3.10: the objects were copied, not shared")
	}
	if got := normalize(desired, rmqversion.MustParse("4.3")); got != desired {
		t.Error("4.3 stores default_queue_type: the desired topology should be diffed as it is")
	}
}
