package broker

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// ReadFacts called while another call reads waits for that read: a plan
// reads the facts beside the state and asks for them again before the
// state is in, and must not ask the broker twice. A read that failed is
// not kept: the next call reads again.
func TestReadFactsReadsOnce(t *testing.T) {
	var flags atomic.Int32
	var fail atomic.Bool
	c := fakeAdmin(t, func(w http.ResponseWriter, r *http.Request) bool {
		switch {
		case r.URL.Path == "/api/overview" && r.URL.Query().Get("columns") == "exchange_types":
			if fail.Load() {
				w.WriteHeader(http.StatusBadRequest)
				fmt.Fprint(w, `{"error":"boom","reason":"boom"}`)
				return true
			}
			fmt.Fprint(w, `{"exchange_types":[{"name":"topic"},{"name":"x-modulus-hash"}]}`)
		case r.URL.Path == "/api/feature-flags":
			flags.Add(1)
			time.Sleep(50 * time.Millisecond) // the two calls overlap
			fmt.Fprint(w, `[]`)
		case r.URL.Path == "/api/deprecated-features" || r.URL.Path == "/api/nodes":
			fmt.Fprint(w, `[]`)
		default:
			return false
		}
		return true
	})
	ctx := context.Background()
	fail.Store(true)
	if _, err := c.ReadFacts(ctx); err == nil {
		t.Fatal("a failed read of the overview: no error")
	}
	fail.Store(false)
	flags.Store(0)
	var wg sync.WaitGroup
	errs := make([]error, 2)
	for i := range errs {
		wg.Go(func() { _, errs[i] = c.ReadFacts(ctx) })
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	if n := flags.Load(); n != 1 {
		t.Errorf("two calls at once, after a failed one, asked for the feature flags %d times, want 1", n)
	}
	if offered, known := c.RabbitMQVersion().OffersExchangeType("x-modulus-hash"); !offered || !known {
		t.Error("the facts read are not the version's")
	}
}

// The plugins a cluster offers are those enabled on every node that
// runs: a plugin enabled on some nodes only is not counted on (a request
// may reach a node without it), whichever node GET /api/nodes lists
// first; a node that is down reports none and is left out.
func TestReadFactsPluginsOfEveryNode(t *testing.T) {
	for _, tc := range []struct {
		name, nodes string
		want        []string
	}{
		{"one node", `[{"name":"a","running":true,"enabled_plugins":["rabbitmq_shovel","rabbitmq_management"]}]`,
			[]string{"rabbitmq_management", "rabbitmq_shovel"}},
		{"a plugin on the first node only", `[{"name":"a","running":true,"enabled_plugins":["rabbitmq_management","rabbitmq_sharding"]},` +
			`{"name":"b","running":true,"enabled_plugins":["rabbitmq_management"]},{"name":"c","running":true,"enabled_plugins":["rabbitmq_management"]}]`,
			[]string{"rabbitmq_management"}},
		{"a plugin on every node but the first", `[{"name":"a","running":true,"enabled_plugins":["rabbitmq_management"]},` +
			`{"name":"b","running":true,"enabled_plugins":["rabbitmq_management","rabbitmq_shovel"]}]`,
			[]string{"rabbitmq_management"}},
		{"a node down", `[{"name":"a","running":false,"enabled_plugins":[]},` +
			`{"name":"b","running":true,"enabled_plugins":["rabbitmq_management","rabbitmq_shovel"]}]`,
			[]string{"rabbitmq_management", "rabbitmq_shovel"}},
		{"the applications that run: the plugins enabled and their dependencies", `[{"name":"a","running":true,"enabled_plugins":["rabbitmq_federation"],` +
			`"applications":[{"name":"rabbit"},{"name":"rabbitmq_federation"},{"name":"rabbitmq_federation_common"},{"name":"rabbitmq_exchange_federation"}]}]`,
			[]string{"rabbitmq_exchange_federation", "rabbitmq_federation", "rabbitmq_federation_common"}},
		{"a plugin enabled on a node that does not run it", `[{"name":"a","running":true,"enabled_plugins":["rabbitmq_shovel"],"applications":[{"name":"rabbit"},{"name":"rabbitmq_management"}]}]`,
			[]string{"rabbitmq_management"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := fakeAdmin(t, func(w http.ResponseWriter, r *http.Request) bool {
				switch r.URL.Path {
				case "/api/overview":
					if r.URL.Query().Get("columns") != "exchange_types" {
						return false
					}
					fmt.Fprint(w, `{"exchange_types":[{"name":"topic"}]}`)
				case "/api/nodes":
					fmt.Fprint(w, tc.nodes)
				case "/api/deprecated-features", "/api/feature-flags":
					fmt.Fprint(w, `[]`)
				default:
					return false
				}
				return true
			})
			f, err := c.ReadFacts(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(f.Plugins, tc.want) {
				t.Errorf("plugins %v, want %v", f.Plugins, tc.want)
			}
		})
	}
}
