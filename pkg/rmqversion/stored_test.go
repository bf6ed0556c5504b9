package rmqversion_test

import (
	"errors"
	"testing"

	"github.com/mqctl/mqctl/pkg/rmqversion"
	"github.com/mqctl/mqctl/pkg/topology"
)

// TestNormalizeLeavesDesired: before 3.11 the broker ignores a vhost's
// default queue type, and plan and diff compare the file without it; the
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

	got := rmqversion.MustParse("3.10").Normalize(desired)
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
	if got := rmqversion.MustParse("4.3").Normalize(desired); got != desired {
		t.Error("4.3 stores default_queue_type: the desired topology should be diffed as it is")
	}
}

// TestPrepare: what plan and diff compare with a broker is the file
// checked for the version and as the version stores it: a refusal is
// Check's, with no topology; otherwise the file as Normalize makes it.
func TestPrepare(t *testing.T) {
	t.Parallel()
	file := func(key string) *topology.Topology {
		desired := topology.New()
		v := topology.NewVhost("jobs")
		v.DefaultQueueType = topology.QueueQuorum
		v.Exchanges["orders"] = &topology.Exchange{Name: "orders", Type: "topic", Durable: true}
		v.Queues["work"] = &topology.Queue{Name: "work", Type: topology.QueueQuorum, Durable: true}
		v.Bindings = append(v.Bindings, &topology.Binding{Source: "orders", Destination: "work", DestinationType: topology.DestQueue, RoutingKey: key})
		desired.Vhosts["jobs"] = v
		return desired
	}

	refused := file("#.order.#.x.#")
	got, err := rmqversion.MustParse("4.3").Prepare(refused)
	var re *rmqversion.RefusalsError
	if !errors.As(err, &re) || got != nil {
		t.Fatalf("4.3, a topic key with three '#' words: Prepare = %v, %v; want no topology and Check's refusals", got, err)
	}
	if want := rmqversion.MustParse("4.3").Check(refused); err.Error() != want.Error() {
		t.Errorf("4.3: Prepare refuses with\n%v\nwant Check's words\n%v", err, want)
	}

	accepted := file("order.#")
	got, err = rmqversion.MustParse("3.10").Prepare(accepted)
	if err != nil {
		t.Fatalf("3.10: %v", err)
	}
	if got.Vhosts["jobs"].DefaultQueueType != "" || accepted.Vhosts["jobs"].DefaultQueueType != topology.QueueQuorum {
		t.Errorf("3.10: default_queue_type %q prepared (want none, as the broker stores it), %q left in the file (want quorum)",
			got.Vhosts["jobs"].DefaultQueueType, accepted.Vhosts["jobs"].DefaultQueueType)
	}
	if got, err := rmqversion.MustParse("4.3").Prepare(accepted); err != nil || got != accepted {
		t.Errorf("4.3: Prepare = %p, %v; want the file itself, which the version stores as it is", got, err)
	}
}
