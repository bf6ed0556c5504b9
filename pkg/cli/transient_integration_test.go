package cli_test

import (
	"strings"
	"testing"

	"github.com/mqctl/mqctl/internal/testbroker"
)

const transientFile = `version: 1
vhosts:
  ${VHOST}:
    queues:
      scratch: { durable: false }
      keep: {}
`

// Transient non-exclusive queues: 3.10 declares them as any other; 4.0
// deprecates them (plan says so) and declares them while the broker permits
// the deprecated feature (its default); a 4.0 broker that denies it makes
// apply refuse the file before it changes anything, naming the queue and
// both fixes.
func TestTransientQueuesByVersion(t *testing.T) {
	h := newHarness(t)
	b := h.b
	file := h.write("topology.yaml", transientFile)
	r := h.run("plan", "-f", file)
	note := strings.Contains(r.stderr, "deprecated feature transient_nonexcl_queues")
	v := b.Version()
	if want := v.AtLeast(4, 0); note != want || r.code != 0 {
		t.Errorf("RabbitMQ %s: plan notes the deprecation = %v, want %v (3.10 has no such deprecation, 4.0 has):\n%s", v, note, want, r)
	}
	// 4.3 says whether it denies the feature (GET /api/deprecated-features
	// "state"): the note tells this broker's answer, not a default.
	if permits := strings.Contains(r.stderr, "this broker permits them"); permits != v.AtLeast(4, 3) {
		t.Errorf("RabbitMQ %s: the plan's note says the broker permits them = %v, want %v (only 4.3 reports the feature's state):\n%s", v, permits, v.AtLeast(4, 3), r)
	}
	if r := h.run("apply", "-f", file, "--auto-approve"); r.code != 0 {
		t.Fatalf("RabbitMQ %s permits transient queues by default, yet apply failed:\n%s", v, r)
	}
	if q, err := b.RH.GetQueue(h.vhost, "scratch"); err != nil || q.Durable {
		t.Errorf("queue scratch: %+v, %v; want a transient queue", q, err)
	}
	qs, err := b.RH.ListQueuesIn(h.vhost)
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range qs {
		if strings.HasPrefix(q.Name, "mqctl.probe.") {
			t.Errorf("the probe queue %s was left behind", q.Name)
		}
	}
	if !v.AtLeast(4, 0) {
		return
	}

	// A node of this test's own, of the same version, that denies the
	// feature.
	node := startPrivateNode(t, "MQCTL_BROKER_CONF=deprecated_features.permit.transient_nonexcl_queues = false")
	const vhost = "transient"
	rh, amqpPort := node.vhost(vhost)
	private := &testbroker.Broker{URL: node.mgmt, Username: "guest", Password: "guest", AMQPHost: "127.0.0.1", AMQPPort: amqpPort}
	r = runMqctl(private, map[string]string{"VHOST": vhost}, "apply", "-f", file, "--auto-approve")
	want := `apply refused, nothing was changed: transient (durable: false) queue "scratch" in vhost "transient": this RabbitMQ ` + v.Line()
	if r.code != 1 || !strings.Contains(r.stderr, want) || !strings.Contains(r.stderr, "durable: true") ||
		!strings.Contains(r.stderr, "deprecated_features.permit.transient_nonexcl_queues = true") {
		t.Errorf("apply on a broker that denies transient queues: want exit 1 saying %q and both fixes:\n%s", want, r)
	}
	left, err := rh.ListQueuesIn(vhost)
	if err != nil {
		t.Fatal(err)
	}
	if len(left) != 0 {
		t.Errorf("the refused apply left queues behind: %+v", left)
	}
}
