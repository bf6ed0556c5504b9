package cli_test

import (
	"strings"
	"testing"
)

// TestLiveOutputsHideEnvValues: plan (text and -o json) and apply (text
// and -o json) refuse an argument taken from the environment before any
// change without showing its value: any value from the environment may be
// a secret, and each output names ${OVF} instead. RabbitMQ 4.3.6, 4.0.5
// and 3.10.8 all refuse the value (invalid_overflow), and so does the
// plan, before anything changes.
func TestLiveOutputsHideEnvValues(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	const secret = "tokenvalue-secret1"
	h.env["OVF"] = secret
	f := h.write("topology.yaml", "version: 1\nvhosts:\n  ${VHOST}:\n    queues:\n      q: { arguments: { x-overflow: \"${OVF}\" } }\n")
	for _, args := range [][]string{
		{"plan", "-f", f},
		{"plan", "-f", f, "-o", "json"},
		{"apply", "-f", f, "--auto-approve"},
		{"apply", "-f", f, "--auto-approve", "-o", "json"},
	} {
		r := runMqctl(h.b, h.env, args...)
		out := r.stdout + r.stderr
		if r.code != 1 || strings.Contains(out, secret) || !strings.Contains(out, "${OVF} (its value not shown)") || !strings.Contains(out, "nothing was changed") {
			t.Errorf("want a refusal naming ${OVF} (its value not shown), never %s:\n%s", secret, r)
		}
	}
}
