package rmqversion_test

import (
	"encoding/json"
	"net/http"
	"net/url"
	"reflect"
	"testing"
	"time"

	"github.com/mqctl/mqctl/internal/testbroker"
	"github.com/mqctl/mqctl/pkg/rmqversion"
	"github.com/mqctl/mqctl/pkg/topology"
)

// TestListMaxAgeAppliesAgainstBroker: on a version whose stream retention
// survives a max-age written as a list (4.0.5, 4.3.6), a policy with one
// is in force on an empty stream, its own x-max-age 1D kept beside it, so
// the list is what the stream's retention gets (policy_precedence/2), and
// trims nothing by (measured with messages on 4.0.5 and 4.3.6: all kept).
// The table accepts it there; lint's MQ507 warns of it. 3.10.8 takes the policy too
// (TestPolicyMaxAgeAgainstBroker) but is not asked to apply it to a
// stream, even an empty one: once such a stream rolls a segment, the
// node shuts down (ListMaxAgeStopsNode).
func TestListMaxAgeAppliesAgainstBroker(t *testing.T) {
	b := testbroker.New(t)
	v := b.Version()
	if v.ListMaxAgeStopsNode() {
		t.Skipf("RabbitMQ %s: a stream under a max-age written as a list takes the node down; the table refuses the policy (TestCheckPolicyValues)", v)
	}
	vh := b.Vhost(t)
	esc := url.PathEscape(vh)
	list := []any{"7", "D"}
	if !rmqversion.ListMaxAge(list) {
		t.Fatalf("ListMaxAge(%v) = false", list)
	}
	if status, body := send(t, b, http.MethodPut, "/api/queues/"+esc+"/s", `{"durable": true, "arguments": {"x-queue-type": "stream", "x-max-age": "1D"}}`); status != http.StatusCreated && status != http.StatusNoContent {
		t.Fatalf("declare stream: HTTP %d %s", status, body)
	}
	if status, body := send(t, b, http.MethodPut, "/api/policies/"+esc+"/age", `{"pattern": "^s$", "apply-to": "streams", "definition": {"max-age": ["7", "D"]}}`); status != http.StatusCreated && status != http.StatusNoContent {
		t.Fatalf("RabbitMQ %s: policy with max-age [\"7\", \"D\"]: HTTP %d %s, want it taken", v, status, body)
	}
	var q struct {
		Policy    string         `json:"policy"`
		Effective map[string]any `json:"effective_policy_definition"`
		Arguments map[string]any `json:"arguments"`
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		status, body := send(t, b, http.MethodGet, "/api/queues/"+esc+"/s", "")
		if status != http.StatusOK {
			t.Fatalf("GET stream: HTTP %d %s", status, body)
		}
		if err := json.Unmarshal([]byte(body), &q); err != nil {
			t.Fatal(err)
		}
		if q.Policy == "age" || time.Now().After(deadline) {
			break
		}
		time.Sleep(200 * time.Millisecond)
	}
	if q.Policy != "age" || !reflect.DeepEqual(q.Effective["max-age"], list) {
		t.Errorf("RabbitMQ %s: the stream's policy is %q with %v, want policy age in force with max-age %v", v, q.Policy, q.Effective, list)
	}
	if q.Arguments["x-max-age"] != "1D" {
		t.Errorf("RabbitMQ %s: the stream's own arguments are %v, want x-max-age 1D kept", v, q.Arguments)
	}
	top := topology.New()
	top.Vhost(vh).Queues["s"] = &topology.Queue{Name: "s", Type: topology.QueueStream, Durable: true, Arguments: topology.Args{"x-max-age": "1D"}}
	top.Vhost(vh).Policies["age"] = &topology.Policy{Name: "age", Pattern: "^s$", ApplyTo: "streams", Definition: topology.Args{"max-age": list}}
	if err := v.Check(top); err != nil {
		t.Errorf("RabbitMQ %s takes the policy and applies it, and the table refuses it: %v", v, err)
	}
}
