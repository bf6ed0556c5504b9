package cli_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/mqctl/mqctl/internal/faultproxy"
	"github.com/mqctl/mqctl/pkg/cli"
	"github.com/mqctl/mqctl/pkg/kind"
	"github.com/mqctl/mqctl/pkg/plan"
)

// Unknown is not empty: when the broker will not let mqctl list a vhost's
// operator policies, the plan neither creates the file's operator policies
// nor deletes those mqctl recorded, and says which kinds it could not read
// and why; with them read, the plan of the same files does both.
//
// A management user lists policies and operator policies on 3.10.8 and
// 4.0.5 alike (measured), so the refusal comes from a proxy in front of
// the real broker answering 403 to the definitions export and to the
// operator-policy list, as an authorisation backend that denies them does.
func TestUnreadOperatorPoliciesArePlannedNotAtAll(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	proxy := newProxy(t, h.b.URL)
	for _, path := range []string{"definitions/", "operator-policies/"} {
		proxy.Add(faultproxy.Rule{Match: faultproxy.Method(path, http.MethodGet), Fault: faultproxy.Status, Status: http.StatusForbidden})
	}
	asUser := func(_ map[string]string, args ...string) result { return h.through([]string{proxy.URL}, args...) }
	user := h.b.Username
	const withPolicy = `version: 1
vhosts:
  ${VHOST}:
    queues:
      work: {}
    operator_policies:
      cap: { pattern: "^work$", apply_to: queues, definition: { max-length: 10 } }
`
	h.mustApply(withPolicy)
	withoutPolicy := strings.Replace(withPolicy, "    operator_policies:\n      cap: { pattern: \"^work$\", apply_to: queues, definition: { max-length: 10 } }\n", "", 1)
	withTwo := withPolicy + "      cap2: { pattern: \"^other$\", apply_to: queues, definition: { max-length: 5 } }\n"
	without := h.write("without.yaml", withoutPolicy)
	two := h.write("two.yaml", withTwo)
	env := map[string]string{"VHOST": h.vhost}
	reason := fmt.Sprintf("list operator policies of vhost %q: user %q may not do this at %s: injected 403", h.vhost, user, proxy.URL)

	// Read, the operator policies are planned: dropping one deletes it,
	// adding one creates it.
	if r := h.run("plan", "-f", without, "--detailed-exitcode"); r.code != cli.ExitChanges || !strings.Contains(r.stdout, `- operator_policy "cap"`) {
		t.Errorf("plan without the policy should delete it:\n%s", r)
	}
	if r := h.run("plan", "-f", two, "--detailed-exitcode"); r.code != cli.ExitChanges || !strings.Contains(r.stdout, `+ operator_policy "cap2"`) {
		t.Errorf("plan with a second policy should create it:\n%s", r)
	}

	// Unread, neither plan touches one.
	for _, f := range []struct {
		name, file string
		declared   int
	}{{"without", without, 0}, {"two", two, 2}} {
		r := asUser(env, "plan", "-f", f.file, "--detailed-exitcode")
		wantLine := fmt.Sprintf("operator policies in vhost %q: %s", h.vhost, reason)
		if f.declared > 0 {
			wantLine = fmt.Sprintf("operator policies in vhost %q (%d in the file left out): %s", h.vhost, f.declared, reason)
		}
		if r.code != 0 || strings.Contains(r.stdout, "operator_policy \"cap") || !strings.Contains(r.stdout, "Not read, so not planned:") ||
			!strings.Contains(r.stdout, wantLine) || strings.Contains(r.stdout, "The broker matches the file") {
			t.Errorf("%s: the plan should change nothing and say that operator policies were not read (%q):\n%s", f.name, wantLine, r)
		}
		r = asUser(env, "plan", "-f", f.file, "-o", "json")
		var doc struct {
			Unread []plan.Unread `json:"unread"`
		}
		if err := json.Unmarshal([]byte(r.stdout), &doc); err != nil || r.code != 0 {
			t.Fatalf("%s: plan -o json: %v\n%s", f.name, err, r)
		}
		want := []plan.Unread{{Vhost: h.vhost, Kind: kind.OperatorPolicy, Reason: reason, Declared: f.declared}}
		if fmt.Sprint(doc.Unread) != fmt.Sprint(want) {
			t.Errorf("%s: JSON plan unread = %+v, want %+v", f.name, doc.Unread, want)
		}
	}
	// apply leaves it alone.
	if r := asUser(env, "apply", "-f", without, "--auto-approve"); r.code != 0 {
		t.Fatalf("apply with operator policies unread:\n%s", r)
	}
	if v, _ := h.state(); v.OperatorPolicies["cap"] == nil {
		t.Errorf("apply with operator policies unread deleted operator policy cap")
	}
	if r := h.run("plan", "-f", h.write("with.yaml", withPolicy), "--detailed-exitcode"); r.code != 0 {
		t.Errorf("the plan of the original file, all read, is not empty after that apply:\n%s", r)
	}
}
