package plan

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/mqctl/mqctl/pkg/topology"
)

// TestSendersOfEveryKind: the objects that name an exchange to send
// messages to are found in every kind that can: a queue's dead-letter
// exchange, an exchange's alternate exchange, and both keys in every
// kind of policy, sorted by kind and name.
func TestSendersOfEveryKind(t *testing.T) {
	t.Parallel()
	v := vh("v", func(v *topology.Vhost) {
		v.Queues["q"] = q("q", topology.Args{"x-dead-letter-exchange": "dlx"})
		v.Exchanges["x"] = &topology.Exchange{Name: "x", Type: "direct", Arguments: topology.Args{"alternate-exchange": "ae"}}
		v.Policies["p"] = &topology.Policy{Name: "p", Pattern: ".*", Definition: topology.Args{"dead-letter-exchange": "pdlx", "alternate-exchange": "pae"}}
		v.OperatorPolicies["o"] = &topology.Policy{Name: "o", Pattern: ".*", Definition: topology.Args{"dead-letter-exchange": "odlx"}}
	}).Vhosts["v"]
	var got []string
	for _, s := range Senders("v", v) {
		got = append(got, string(s.Ref.Kind)+" "+s.Ref.Name+" -> "+s.To)
	}
	want := []string{"queue q -> dlx", "exchange x -> ae", "policy p -> pdlx", "policy p -> pae", "operator_policy o -> odlx"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("senders (-want +got):\n%s", diff)
	}
}
