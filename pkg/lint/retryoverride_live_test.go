package lint

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/mqctl/mqctl/internal/testbroker"
	"github.com/mqctl/mqctl/pkg/loader"
	"github.com/mqctl/mqctl/pkg/route"
)

// TestRetryOverriddenAgainstBroker shows what MQ204 says on the broker of
// the run. RabbitMQ 4.3.6 gives quorum queue w1, declared as retry:
// {backoff: {min: 5s, max: 1m}, attempts: 3} expands it, the delayed
// retry each case's policy and operator policy leave (the queue's
// delayed_retry in the management API), which the simulator must resolve
// the same, and MQ204 flag the file exactly where the queue's own does
// not apply. RabbitMQ 4.0.5 and 3.10.8 refuse every policy with a
// delayed-retry key (400: they do not know the keys), so there is nothing
// to override and MQ204 is silent.
func TestRetryOverriddenAgainstBroker(t *testing.T) {
	b := testbroker.New(t)
	const w1 = "w1: {type: quorum, retry: {backoff: {min: 5s, max: 1m}, attempts: 3}}\n"
	cases := []struct {
		name       string
		policy, op string // definitions, JSON ("" for none)
		broker43   string // delayed_retry as 4.3.6 reports it
		overridden bool
	}{
		{"the brief's policy: disabled", `{"delayed-retry-type":"disabled"}`, "", "disabled", true},
		{"a policy's smaller min and max", `{"delayed-retry-min":1000,"delayed-retry-max":20000}`, "", "failed (min: 1000ms, max: 20000ms)", true},
		{"a policy's larger min and max do not apply", `{"delayed-retry-min":10000,"delayed-retry-max":120000}`, "", "failed (min: 5000ms, max: 60000ms)", false},
		{"an operator policy's type over the policy's; its min raises the policy's", `{"delayed-retry-type":"disabled","delayed-retry-min":1000}`, `{"delayed-retry-type":"all","delayed-retry-min":2000}`, "all (min: 2000ms, max: 60000ms)", true},
		{"an operator policy that sets the queue's own type back", `{"delayed-retry-type":"disabled"}`, `{"delayed-retry-type":"failed","delayed-retry-min":5000}`, "failed (min: 5000ms, max: 60000ms)", false},
		{"of a policy's and an operator policy's max the smaller", `{"delayed-retry-max":30000}`, `{"delayed-retry-max":20000}`, "failed (min: 5000ms, max: 20000ms)", true},
	}
	call := apiOf(t, b)
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			vh := b.Vhost(t)
			ev := url.PathEscape(vh)
			body := fmt.Sprintf("version: 1\nvhosts:\n  %q:\n    queues:\n      %s", vh, w1)
			if status, msg := call(http.MethodPut, "queues/"+ev+"/w1", `{"durable":true,"arguments":{"x-queue-type":"quorum","x-delayed-retry-type":"failed","x-delayed-retry-min":5000,"x-delayed-retry-max":60000,"x-delivery-limit":2}}`); status >= 300 {
				t.Fatalf("declare w1: %d %s", status, msg)
			}
			refused := false
			for _, p := range []struct{ path, name, def, section string }{
				{"policies", "p", tc.policy, "policies"}, {"operator-policies", "op", tc.op, "operator_policies"},
			} {
				if p.def == "" {
					continue
				}
				status, msg := call(http.MethodPut, p.path+"/"+ev+"/"+p.name, `{"pattern":"^w1$","apply-to":"queues","definition":`+p.def+`}`)
				switch {
				case b.Version().DelayedRetryPolicyKeys() && status >= 300:
					t.Fatalf("RabbitMQ %s refused %s %s: %d %s", b.Version(), p.path, p.def, status, msg)
				case !b.Version().DelayedRetryPolicyKeys() && status != http.StatusBadRequest:
					t.Fatalf("RabbitMQ %s answered %s %s with %d %s; want 400, it does not know delayed-retry keys", b.Version(), p.path, p.def, status, msg)
				case status >= 300:
					refused = true
				}
				body += "    " + p.section + ":\n      " + p.name + ": {pattern: \"^w1$\", definition: " + p.def + "}\n"
			}
			top, err := loader.LoadBytes("topology.yaml", []byte(body), loader.Options{})
			if err != nil {
				t.Fatal(err)
			}
			sim := route.NewWith(top.Vhosts[vh], route.Options{Version: b.Version()})
			want := tc.broker43
			if !b.Version().DelayedRetry() {
				want = "" // no delayed retry, and no delayed_retry in the queue's statistics
			}
			if got := simulatedRetry(sim); b.Version().DelayedRetry() && got != want {
				t.Errorf("the simulator resolves w1's delayed retry as %s; RabbitMQ %s: %s", got, b.Version(), want)
			}
			if b.Version().DelayedRetry() {
				got := ""
				for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(500 * time.Millisecond) {
					_, raw := call(http.MethodGet, "queues/"+ev+"/w1", "")
					var q struct {
						DelayedRetry string `json:"delayed_retry"`
						Policy       any    `json:"policy"`
						OpPolicy     any    `json:"operator_policy"`
					}
					if err := json.Unmarshal([]byte(raw), &q); err != nil {
						t.Fatal(err)
					}
					got = q.DelayedRetry
					inForce := (tc.policy == "" || q.Policy == "p") && (tc.op == "" || q.OpPolicy == "op")
					if got == want && inForce {
						break
					}
				}
				if got != want {
					t.Errorf("RabbitMQ %s reports w1's delayed retry as %q; want %q", b.Version(), got, want)
				}
			}
			var mq204 []string
			fs, err := Run(top, Options{Version: b.Version()})
			if err != nil {
				t.Fatal(err)
			}
			for _, f := range only(fs, "MQ204") {
				mq204 = append(mq204, f.Message)
			}
			switch overridden := tc.overridden && !refused && b.Version().DelayedRetry(); {
			case overridden && len(mq204) != 1:
				t.Errorf("RabbitMQ %s: want one MQ204 finding for w1, got %q", b.Version(), mq204)
			case !overridden && len(mq204) != 0:
				t.Errorf("RabbitMQ %s: want no MQ204 finding, got %q", b.Version(), mq204)
			case overridden && !strings.Contains(mq204[0], `quorum queue "w1" asks for delayed retry (retry.backoff: failed`):
				t.Errorf("MQ204 names no queue: %s", mq204[0])
			}
		})
	}
}

// simulatedRetry renders sim's delayed retry of w1 as RabbitMQ 4.3
// reports a queue's (rabbit_quorum_queue fmt_delayed_retry/1).
func simulatedRetry(sim *route.Simulator) string {
	dr, ok := sim.DelayedRetry("w1")
	if !ok {
		return "disabled"
	}
	return fmt.Sprintf("%s (min: %dms, max: %dms)", dr.Type, dr.MinMS, dr.MaxMS)
}
