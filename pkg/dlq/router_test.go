package dlq

import (
	"github.com/mqctl/mqctl/pkg/rmqversion"
	"slices"
	"strings"
	"testing"

	"github.com/mqctl/mqctl/pkg/loader"
	"github.com/mqctl/mqctl/pkg/topology"
)

func loadVhost(t *testing.T, src string) *topology.Vhost {
	t.Helper()
	top, err := loader.LoadBytes("t.yaml", []byte(src), loader.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return top.Vhosts["/"]
}

const routerTopology = `version: 1
vhosts:
  /:
    exchanges:
      orders: { type: topic }
      orders.dlx: { type: direct }
      hash: { type: x-consistent-hash }
      inner: { type: fanout, internal: true }
    queues:
      work:
        type: quorum
        delivery_limit: 5
        bindings: [{ exchange: orders, routing_key: "order.*" }]
        dead_letter: { exchange: orders.dlx, queue: work.dlq }
      audit:
        bindings: [{ exchange: orders, routing_key: "order.audit" }]
`

func TestTopologyRouter(t *testing.T) {
	t.Parallel()
	r := NewTopologyRouter(loadVhost(t, routerTopology), rmqversion.Default)
	tests := []struct {
		t      Target
		want   []string
		routed bool
	}{
		{Target{Exchange: "orders", RoutingKey: "order.created"}, []string{"work"}, true},
		{Target{Exchange: "orders", RoutingKey: "order.created", CC: []string{"order.audit"}}, []string{"audit", "work"}, true},
		{Target{Exchange: "orders", RoutingKey: "nothing"}, nil, true},
		{Target{Exchange: "orders.dlx", RoutingKey: "work"}, []string{"work.dlq"}, true},
		{Target{Exchange: "", RoutingKey: "work"}, []string{"work"}, true},
		{Target{Exchange: "missing", RoutingKey: "k"}, nil, false},
		{Target{Exchange: "hash", RoutingKey: "k"}, nil, false},
	}
	for _, tt := range tests {
		got := r.Route(tt.t, nil)
		if got.Known != tt.routed || !slices.Equal(got.Queues, tt.want) || got.Refused != "" {
			t.Errorf("Route(%+v) = %+v; want %v, %v", tt.t, got, tt.want, tt.routed)
		}
	}
	if got := r.Route(Target{Exchange: "inner"}, nil); !got.Known || !strings.Contains(got.Refused, `exchange "inner" is internal`) {
		t.Errorf("Route(internal exchange) = %+v", got)
	}
}

// The quorum DLQ work.dlq sets no limit: 3.10 has none, 4.0 gives every
// quorum queue 20 (so peeking it 20 times drops what it holds).
func TestDeliveryLimit(t *testing.T) {
	t.Parallel()
	v := loadVhost(t, routerTopology)
	for _, c := range []struct {
		version string
		want    map[string]int64
	}{
		{"3.10", map[string]int64{"work": 5, "work.dlq": 0, "audit": 0, "missing": 0}},
		{"4.0", map[string]int64{"work": 5, "work.dlq": 20, "audit": 0, "missing": 0}},
	} {
		for q, want := range c.want {
			if got := DeliveryLimit(v, q, rmqversion.MustParse(c.version)); got != want {
				t.Errorf("RabbitMQ %s: DeliveryLimit(%s) = %d, want %d", c.version, q, got, want)
			}
		}
	}
}

// A replay with CC keys is one publish: an x-modulus-hash exchange picks
// one destination by a hash of all its keys together (4.3), never one per
// key; before 4.3 its pick is unknown.
func TestTopologyRouterModulusHash(t *testing.T) {
	t.Parallel()
	v := loadVhost(t, `version: 1
vhosts:
  /:
    exchanges:
      spread: { type: x-modulus-hash }
    queues:
      w1: { bindings: [{ exchange: spread, routing_key: "" }] }
      w2: { bindings: [{ exchange: spread, routing_key: "" }] }
      w3: { bindings: [{ exchange: spread, routing_key: "" }] }
`)
	r43 := NewTopologyRouter(v, rmqversion.MustParse("4.3"))
	// Among a few CC lists, each lands in exactly one queue; and the keys
	// together pick differently from the first key alone at least once.
	differs := false
	for _, cc := range [][]string{{"b"}, {"c", "d"}, {"e"}, {"f", "g", "h"}, {"x"}} {
		got := r43.Route(Target{Exchange: "spread", RoutingKey: "a", CC: cc}, nil)
		if !got.Known || len(got.Queues) != 1 {
			t.Fatalf("4.3: Route(a, CC %v) = %+v; want exactly one queue", cc, got)
		}
		if alone := r43.Route(Target{Exchange: "spread", RoutingKey: "a"}, nil); alone.Queues[0] != got.Queues[0] {
			differs = true
		}
	}
	if !differs {
		t.Error("4.3: the CC keys never changed the pick; the hash is not taken over all keys")
	}
	if got := NewTopologyRouter(v, rmqversion.MustParse("4.0")).Route(Target{Exchange: "spread", RoutingKey: "a", CC: []string{"b"}}, nil); got.Known {
		t.Errorf("4.0: Route = %+v; the pick before 4.3 cannot be known", got)
	}
}
