package cli_test

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestLivePlanHidesEnvValues: plan (text, -o json, --out) and apply show
// what the file wrote for the values of a queue's arguments, a binding's
// key and a policy's definition taken from the environment, created and
// then changed (the after side of a field change; the broker's value before
// it is the broker's, shown), short values included; the JSON plan marks a
// changed field whose value it does not show (from_env). The second plan
// after apply is empty. RabbitMQ 4.3.6, 4.0.5 and 3.10.8 alike.
func TestLivePlanHidesEnvValues(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	f := h.write("topology.yaml", `version: 1
vhosts:
  ${VHOST}:
    exchanges:
      tp: { type: topic }
    queues:
      q:
        arguments:
          x-max-length: ${N}
          x-tok: ${TOK}
        bindings: [{ exchange: tp, routing_key: "${KEY}" }]
    policies:
      p:
        pattern: "^q$"
        definition:
          message-ttl: ${TTL}
`)
	check := func(step string, secrets []string, args ...string) result {
		r := runMqctl(h.b, h.env, args...)
		for _, s := range secrets {
			if strings.Contains(r.stdout+r.stderr, s) {
				t.Errorf("%s: %v shows %q:\n%s", step, args, s, r)
			}
		}
		return r
	}
	set := func(n, tok, key, ttl string) []string {
		h.env["N"], h.env["TOK"], h.env["KEY"], h.env["TTL"] = n, tok, key, ttl
		// The short values as the plan would show them.
		return []string{tok, key, "x-max-length: " + n + "\n", "→ " + n + " ", `"x-max-length": ` + n, "message-ttl: " + ttl + "\n", "→ " + ttl + "\n", `"message-ttl": ` + ttl}
	}
	secrets := append(set("1234567", "tok-secret-value", "rk-secret-9", "60000"), "1234567", "60000")
	saved := filepath.Join(t.TempDir(), "plan.saved")
	for _, args := range [][]string{{"plan", "-f", f}, {"plan", "-f", f, "-o", "json"}, {"plan", "-f", f, "--out", saved}} {
		if r := check("create", secrets, args...); r.code != 0 || !strings.Contains(r.stdout, "${TOK}") {
			t.Errorf("create: %v: want exit 0 and ${TOK}:\n%s", args, r)
		}
	}
	if r := check("apply", secrets, "apply", saved, "--auto-approve"); r.code != 0 {
		t.Fatalf("apply: %s", r)
	}
	if r := runMqctl(h.b, h.env, "plan", "-f", f, "--detailed-exitcode"); r.code != 0 {
		t.Errorf("second plan after apply: %s", r)
	}
	secrets = set("99", "tok-secret-rotated", "rk-secret-10", "5")
	r := check("change", secrets, "plan", "-f", f)
	for _, want := range []string{"~ arguments.x-max-length: 1234567 → ${N} (its value not shown)", "~ definition.message-ttl: 60000 → ${TTL} (its value not shown)"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("change: want %q:\n%s", want, r)
		}
	}
	r = check("change", secrets, "plan", "-f", f, "-o", "json")
	if !strings.Contains(r.stdout, `"from_env": true`) {
		t.Errorf("change: the JSON plan does not mark the changed fields:\n%s", r)
	}
	// apply -f, its plan, steps and report, in both views.
	if r := check("apply -o json", secrets, "apply", "-f", f, "--auto-approve", "--allow-replace", "-o", "json"); r.code != 0 || !strings.Contains(r.stdout, "${KEY}") {
		t.Errorf("apply -o json: want exit 0 and ${KEY}:\n%s", r)
	}
	secrets = set("77", "tok-secret-third", "rk-secret-11", "6")
	if r := check("apply", secrets, "apply", "-f", f, "--auto-approve", "--allow-replace"); r.code != 0 || !strings.Contains(r.stdout, "done: create binding tp -> queue q [${KEY}]") {
		t.Errorf("apply: want exit 0 and a step naming ${KEY}:\n%s", r)
	}
	if r := runMqctl(h.b, h.env, "plan", "-f", f, "--detailed-exitcode"); r.code != 0 {
		t.Errorf("second plan after apply: %s", r)
	}
}
