package plan

import (
	"fmt"
	"reflect"
	"testing"

	"github.com/mqctl/mqctl/internal/randtopo"
	"github.com/mqctl/mqctl/pkg/loader"
	"github.com/mqctl/mqctl/pkg/rmqversion"
	"github.com/mqctl/mqctl/pkg/topology"
)

// inputSides are the two sides of each input case: the desired topology
// and the broker's, each made twice from the same source, so that one of
// each pair is a deep copy the diff never sees.
var inputYAML = [][2]string{{`
version: 1
users:
  svc:
    password_hash: "kI3GCqW5JLMJa4iX1lo7X4D6XbYqlLgxIs30+P6tENUV2POR"
    tags: [management]
    limits: { max-connections: 10 }
    permissions:
      v: { configure: "^$", write: "^orders$", read: "^q$" }
    topic_permissions:
      v: [{ exchange: orders, write: "^order\\.", read: ".*" }]
vhosts:
  v:
    default_queue_type: quorum
    exchanges:
      orders: { type: topic }
      orders.dlx: { type: topic }
    queues:
      q:
        bindings: [{ exchange: orders, routing_keys: [a, b] }]
        dead_letter: { exchange: orders.dlx, queue: q.dlq }
        retry: { delays: [10s, 1m] }
        limits: { max_length: 10 }
      kept: { type: classic }
    policies:
      cap: { pattern: "^q", apply_to: queues, definition: { max-length: 100 } }
    operator_policies:
      ttl: { pattern: ".*", apply_to: queues, definition: { message-ttl: 60000 } }
    limits: { max-queues: 100 }
    shovels:
      s: { src-uri: "amqp:///v", src-queue: q, dest-uri: "amqp:///v", dest-queue: kept }
    federation_upstreams:
      up: { uri: "amqp://other" }
`, `
version: 1
users:
  svc:
    password_hash: "kI3GCqW5JLMJa4iX1lo7X4D6XbYqlLgxIs30+P6tENUV2POR"
    tags: [administrator]
    permissions:
      v: { configure: ".*", write: ".*", read: ".*" }
  gone:
    password_hash: "kI3GCqW5JLMJa4iX1lo7X4D6XbYqlLgxIs30+P6tENUV2POR"
vhosts:
  v:
    exchanges:
      orders: { type: direct }
      old: { type: fanout }
    queues:
      q:
        type: classic
        bindings: [{ exchange: orders, routing_keys: [a, c] }]
        limits: { max_length: 20 }
      kept: { type: classic }
      drop: { type: quorum }
    policies:
      cap: { pattern: "^x", apply_to: queues, definition: { max-length: 1 } }
      old: { pattern: ".*", definition: { expires: 1000 } }
    limits: { max-queues: 10, max-connections: 5 }
    shovels:
      s: { src-uri: "amqp:///v", src-queue: kept, dest-uri: "amqp:///v", dest-queue: q }
  other:
    queues:
      a: {}
`}}

// TestDiffLeavesItsInputs: the diff, and the flows a plan adds, read the
// desired topology and the broker's state and never change either (issue
// 21: the plan holds every decision; nothing is decided by editing what
// the caller passed). Each side is made twice; the diff gets one, and the
// other must still equal it after.
func TestDiffLeavesItsInputs(t *testing.T) {
	t.Parallel()
	type sides struct{ desired, current func() *topology.Topology }
	cases := map[string]sides{}
	for i, pair := range inputYAML {
		load := func(src string) func() *topology.Topology {
			return func() *topology.Topology {
				top, err := loader.LoadBytes("t.yaml", []byte(src), loader.Options{})
				if err != nil {
					t.Fatal(err)
				}
				return top
			}
		}
		cases[fmt.Sprintf("yaml %d", i)] = sides{load(pair[0]), load(pair[1])}
	}
	for seed := uint64(1); seed <= 40; seed++ {
		gen := func(s uint64) func() *topology.Topology {
			return func() *topology.Topology { return randtopo.Generate(s, "/", 0).Topology() }
		}
		cases[fmt.Sprintf("seed %d", seed)] = sides{gen(seed), gen(seed + 1000)}
	}
	for name, c := range cases {
		for _, mine := range []bool{false, true} {
			desired, desiredCopy := c.desired(), c.desired()
			state, stateCopy := c.current(), c.current()
			if !reflect.DeepEqual(desired, desiredCopy) || !reflect.DeepEqual(state, stateCopy) {
				t.Fatalf("%s: a side made twice differs: the test cannot tell a change", name)
			}
			cur := Current{Live: topology.Live{State: state}}
			if mine {
				// Every object of the broker's side is mqctl's: the plan
				// deletes what the file dropped, replaces what it changed.
				cur = OldSide(state, desired)
			}
			p := DiffWith(desired, cur, Options{Version: rmqversion.MustParse("3.10")})
			if len(p.Changes) == 0 {
				t.Fatalf("%s: no change planned: the case tests nothing", name)
			}
			p.SetFlows(cur, rmqversion.MustParse("4.3"))
			if !reflect.DeepEqual(desired, desiredCopy) {
				t.Errorf("%s (all mqctl's: %v): the diff changed the desired topology", name, mine)
			}
			if !reflect.DeepEqual(state, stateCopy) {
				t.Errorf("%s (all mqctl's: %v): the diff changed the broker's state", name, mine)
			}
		}
	}
}
