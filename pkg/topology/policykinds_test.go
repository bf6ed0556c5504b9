package topology

import (
	"testing"

	"github.com/mqctl/mqctl/pkg/kind"
)

// Every kind of policy has a map of its own in a vhost, which NewVhost
// makes and SetPoliciesOf replaces: a kind of policy added to pkg/kind
// without a place here fails this test, not a user's apply.
func TestEveryKindOfPolicyHasAMap(t *testing.T) {
	v := NewVhost("v")
	for _, k := range kind.PolicyKinds() {
		ps := v.PoliciesOf(k)
		if ps == nil {
			t.Fatalf("NewVhost: PoliciesOf(%s) is nil", k)
		}
		ps["p"] = &Policy{Name: "p"}
		for _, other := range kind.PolicyKinds() {
			if other != k && len(v.PoliciesOf(other)) != 0 {
				t.Errorf("a %s put among %s shows among %s", k.Label(), k.Plural(), other.Plural())
			}
		}
		if got := v.PolicyNamesOf(k); len(got) != 1 || got[0] != "p" {
			t.Errorf("PolicyNamesOf(%s) = %v, want [p]", k, got)
		}
		m := map[string]*Policy{}
		v.SetPoliciesOf(k, m)
		m["q"] = &Policy{Name: "q"}
		if v.PoliciesOf(k)["q"] == nil {
			t.Errorf("SetPoliciesOf(%s) did not make the map the vhost's", k)
		}
		v.SetPoliciesOf(k, map[string]*Policy{})
	}
	if v.PoliciesOf(kind.Queue) != nil {
		t.Errorf("PoliciesOf(queue) is not nil")
	}
}
