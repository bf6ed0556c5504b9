package difftest

import (
	"encoding/json"
	"net/url"
	"testing"
	"time"

	"github.com/mqctl/mqctl/internal/testbroker"
	"github.com/mqctl/mqctl/pkg/route"
	"github.com/mqctl/mqctl/pkg/topology"
)

// TestPCREPolicyPatternsAgainstBroker: RabbitMQ reads policy patterns as
// PCRE. A lookahead ("every queue but tmp.*", the form of RabbitMQ's own
// "^(?!amq\.).*") and a backreference select the queues the broker
// reports under each policy, and the simulator names the same policy for
// every queue (4.3.6, 4.0.5 and 3.10.8 alike).
func TestPCREPolicyPatternsAgainstBroker(t *testing.T) {
	t.Parallel()
	b := testbroker.New(t)
	vh := b.Vhost(t)
	v := topology.NewVhost(vh)
	for _, q := range []string{"jobs", "tmp.1", "a.a", "a.b"} {
		v.Queues[q] = &topology.Queue{Name: q, Type: topology.QueueClassic, Durable: true}
	}
	v.Policies["all-but-tmp"] = &topology.Policy{Name: "all-but-tmp", Pattern: `^(?!tmp\.).*`, ApplyTo: "queues", Priority: 1, Definition: topology.Args{"max-length": int64(7)}}
	v.Policies["twice"] = &topology.Policy{Name: "twice", Pattern: `^(\w+)\.\1$`, ApplyTo: "queues", Priority: 2, Definition: topology.Args{"max-length": int64(3)}}
	for _, p := range v.Policies {
		body, _ := json.Marshal(map[string]any{"pattern": p.Pattern, "apply-to": p.ApplyTo, "priority": p.Priority, "definition": p.Definition})
		if status, msg, err := b.API("PUT", "policies/"+url.PathEscape(vh)+"/"+p.Name, body); err != nil || status >= 300 {
			t.Fatalf("RabbitMQ %s refused policy %s (%s): %d %s %v", b.Version(), p.Name, p.Pattern, status, msg, err)
		}
	}
	ch := b.Channel(t, vh)
	for name := range v.Queues {
		if _, err := ch.QueueDeclare(name, true, false, false, false, nil); err != nil {
			t.Fatal(err)
		}
	}
	sim := route.NewWith(v, route.Options{Version: b.Version()})
	if len(sim.Problems()) != 0 {
		t.Fatalf("the simulator cannot read the patterns: %q", sim.Problems())
	}
	want := map[string]string{"jobs": "all-but-tmp", "tmp.1": "", "a.a": "twice", "a.b": "all-but-tmp"}
	deadline := time.Now().Add(10 * time.Second)
	for name, w := range want {
		var got string
		for {
			var q struct {
				Policy string `json:"policy"`
			}
			if err := json.Unmarshal(b.GetAPI(t, "queues/"+url.PathEscape(vh)+"/"+url.PathEscape(name)), &q); err != nil {
				t.Fatal(err)
			}
			got = q.Policy
			if got == w || time.Now().After(deadline) {
				break
			}
			time.Sleep(100 * time.Millisecond) // the policy reaches a queue a moment after
		}
		if got != w {
			t.Errorf("RabbitMQ %s applies policy %q to queue %s, want %q", b.Version(), got, name, w)
		}
		if p, _ := sim.QueuePolicies(name); p != got {
			t.Errorf("RabbitMQ %s applies policy %q to queue %s; the simulator says %q", b.Version(), got, name, p)
		}
	}
}
