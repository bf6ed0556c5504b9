package apply_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/mqctl/mqctl/pkg/apply"
	"github.com/mqctl/mqctl/pkg/plan"
)

// keysFile is a topic exchange and n queues, each bound to it when bound.
func keysFile(n int, bound bool) string {
	var sb strings.Builder
	sb.WriteString("version: 1\nvhosts:\n  ${VHOST}:\n    exchanges:\n      ex: { type: topic }\n    queues:\n")
	for i := range n {
		if bound {
			fmt.Fprintf(&sb, "      q%02d: { bindings: [{ exchange: ex, routing_key: \"k.%02d.#\" }, { exchange: ex, routing_key: \"k.%02d.*\", arguments: { n: %d } }] }\n", i, i, i, i)
		} else {
			fmt.Fprintf(&sb, "      q%02d: {}\n", i)
		}
	}
	return sb.String()
}

// TestUnbindKeysFromOneListing: an apply that deletes many bindings of a
// vhost whose properties_key the state read does not hold (a read from
// the definitions export: broker.SourceDefinitions) lists the vhost's
// bindings once and deletes each by its key, instead of asking for each
// binding's; a few such bindings are asked for one by one.
func TestUnbindKeysFromOneListing(t *testing.T) {
	t.Parallel()
	for _, n := range []int{20, 2} {
		t.Run(fmt.Sprintf("%d bindings", 2*n), func(t *testing.T) {
			e := newFaultEnv(t)
			if res := e.apply(keysFile(n, true)); !res.OK() {
				t.Fatalf("apply: %+v", res)
			}
			p, recs, live := e.plan(keysFile(n, false))
			before := len(e.proxy.Log())
			res := apply.Execute(context.Background(), e.faulty, p, apply.Options{
				Parallelism: 4, Records: recs,
				Current: func(k plan.Kind, vh, name string) plan.Object { return plan.ObjectOf(live.State, k, vh, name) },
			})
			if !res.OK() {
				t.Fatalf("apply dropping the bindings: %+v", res)
			}
			unbound := 0
			for _, s := range res.Done {
				if s.Op() == apply.OpUnbind {
					unbound++
				}
			}
			if unbound != 2*n {
				t.Errorf("%d bindings deleted, want %d", unbound, 2*n)
			}
			lookups, listings := 0, 0
			for _, en := range e.proxy.Log()[before:] {
				switch {
				case en.Method == "GET" && strings.HasPrefix(en.Path, "bindings/"+e.vhost+"/e/"):
					lookups++
				case en.Method == "GET" && en.Path == "exchanges/"+e.vhost+"/ex/bindings/source":
					listings++
				}
			}
			want := [2]int{0, 1} // lookups, listings
			if 2*n < 16 {
				want = [2]int{2 * n, 0}
			}
			if got := [2]int{lookups, listings}; got != want {
				t.Errorf("%d bindings deleted after %d lookups of one binding and %d listings of the exchange's bindings, want %d and %d",
					2*n, lookups, listings, want[0], want[1])
			}
			e.converged(keysFile(n, false))
		})
	}
}
