package cli_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mqctl/mqctl/pkg/ownership"
)

// examples/worker, applied to a fresh vhost, gives the 38 job queues, each
// with its .dlq (76 queues), each bound once (76 bindings), with the
// arguments the file asks for as the broker itself reports them.
func TestApplyWorkerExample(t *testing.T) {
	t.Parallel()
	src, err := os.ReadFile(filepath.Join("..", "..", "examples", "worker", "topology.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	h := newHarnessNoVhost(t)
	const root = "\n  /:\n"
	if strings.Count(string(src), root) != 1 {
		t.Fatalf("examples/worker/topology.yaml no longer declares vhost / exactly once")
	}
	file := strings.Replace(string(src), root, "\n  ${VHOST}:\n", 1)

	r := h.mustApply(file)
	if !strings.Contains(r.stdout, "Apply complete: 155 created") {
		t.Errorf("want 155 objects created (vhost, 2 exchanges, 76 queues, 76 bindings):\n%s", r)
	}
	h.assertNoChanges(file)

	defs := definitionsOf(t, h.b, h.vhost)
	list := func(key string) []map[string]any {
		var out []map[string]any
		for _, e := range defs[key].([]any) {
			out = append(out, e.(map[string]any))
		}
		return out
	}
	var exchanges []string
	for _, x := range list("exchanges") {
		if name := x["name"].(string); !ownership.IsRecord(name) {
			exchanges = append(exchanges, name)
		}
	}
	if got := strings.Join(sortedStrings(exchanges), ","); got != "line_exchange,line_exchange_dlq" {
		t.Errorf("exchanges = %s", got)
	}
	queues := list("queues")
	bindings := list("bindings")
	if len(queues) != 76 || len(bindings) != 76 {
		t.Fatalf("the broker holds %d queues and %d bindings, want 76 and 76", len(queues), len(bindings))
	}
	bound := map[string]string{} // queue -> "exchange/key"
	for _, b := range bindings {
		bound[b["destination"].(string)] = b["source"].(string) + "/" + b["routing_key"].(string)
	}
	jobs := 0
	for _, q := range queues {
		name := q["name"].(string)
		args, _ := q["arguments"].(map[string]any)
		if job, ok := strings.CutSuffix(name, ".dlq"); ok {
			if bound[name] != "line_exchange_dlq/"+job {
				t.Errorf("%s is bound as %q, want line_exchange_dlq/%s", name, bound[name], job)
			}
			continue
		}
		jobs++
		prio, isNumber := args["x-max-priority"].(json.Number)
		if !isNumber || prio.String() != "10" {
			t.Errorf("%s: x-max-priority = %#v, want the integer 10", name, args["x-max-priority"])
		}
		if args["x-dead-letter-exchange"] != "line_exchange_dlq" || args["x-dead-letter-routing-key"] != name {
			t.Errorf("%s: dead-lettering = %v / %v, want line_exchange_dlq / %s", name, args["x-dead-letter-exchange"], args["x-dead-letter-routing-key"], name)
		}
		if q["durable"] != true {
			t.Errorf("%s is not durable", name)
		}
		if bound[name] != "line_exchange/"+name {
			t.Errorf("%s is bound as %q, want line_exchange/%s", name, bound[name], name)
		}
	}
	if jobs != 38 {
		t.Errorf("%d job queues, want 38", jobs)
	}
}
