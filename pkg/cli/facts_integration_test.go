package cli_test

import (
	"strings"
	"testing"
)

const hashRing = `version: 1
vhosts:
  ${VHOST}:
    exchanges:
      ring: { type: x-consistent-hash }
      plain: { type: topic }
    queues:
      a: {}
`

// An exchange type the broker does not offer (a plugin that is not
// enabled: scripts/broker enables management, shovel and federation only)
// is refused by plan and apply before anything changes, naming the type,
// what the broker offers and the plugin to enable: the broker's own list
// (GET /api/overview), not a table, says so, on every version.
func TestExchangeTypeTheBrokerLacks(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	f := h.write("ring.yaml", hashRing)
	for _, cmd := range [][]string{{"plan", "-f", f}, {"apply", "-f", f, "--auto-approve"}} {
		r := h.run(cmd...)
		for _, s := range []string{"nothing was changed", `exchange "ring"`, "type: x-consistent-hash", "this broker offers no exchange type",
			"rabbitmq-plugins enable rabbitmq_consistent_hash_exchange"} {
			if r.code != 1 || !strings.Contains(r.stderr, s) {
				t.Errorf("%s: want exit 1 saying %q:\n%s", cmd[0], s, r)
			}
		}
	}
	if v, _ := h.state(); len(v.Exchanges) != 0 || len(v.Queues) != 0 {
		t.Errorf("the refused apply changed the broker: exchanges %v, queues %v", v.ExchangeNames(), v.QueueNames())
	}
	// Offline, the table cannot know the broker's plugins: validate takes it.
	if r := h.run("validate", "-f", f); r.code != 0 {
		t.Errorf("validate refuses a plugin's exchange type offline:\n%s", r)
	}
}
