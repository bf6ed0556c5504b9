package broker_test

import (
	"slices"
	"testing"

	"github.com/mqctl/mqctl/internal/testbroker"
)

// ReadFacts states what each version reports about itself: 3.10 has no
// deprecated features to report, 4.0.5 lists them without a state, 4.3.6
// gives each one's state (Debian's 4.3.6 permits transient non-exclusive
// queues, which upstream 4.3.0 denies by default); x-modulus-hash is a
// core exchange type from 4.3 (the sharding plugin's before), and 4.3
// has the feature flag of the empty-key topic fix.
func TestReadFacts(t *testing.T) {
	t.Parallel()
	b := testbroker.New(t)
	c := connect(t, b)
	f, err := c.ReadFacts(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	v := b.Version()
	if !slices.Contains(f.ExchangeTypes, "topic") || !slices.Contains(f.ExchangeTypes, "headers") {
		t.Errorf("exchange types %v lack the core ones", f.ExchangeTypes)
	}
	if got := slices.Contains(f.ExchangeTypes, "x-modulus-hash"); got != v.AtLeast(4, 3) {
		t.Errorf("RabbitMQ %s offers x-modulus-hash: %v, want %v (a core type from 4.3)", v, got, v.AtLeast(4, 3))
	}
	if slices.Contains(f.ExchangeTypes, "x-consistent-hash") {
		t.Errorf("x-consistent-hash offered, but scripts/broker does not enable its plugin: %v", f.ExchangeTypes)
	}
	if !slices.Contains(f.Plugins, "rabbitmq_management") || !slices.Contains(f.Plugins, "rabbitmq_shovel") {
		t.Errorf("plugins %v, want those scripts/broker enables", f.Plugins)
	}
	// The plugins that run, not only those enabled: from 4.2 enabling
	// rabbitmq_federation runs rabbitmq_federation_common, which holds
	// federation's runtime parameters.
	if got := slices.Contains(f.Plugins, "rabbitmq_federation_common"); got != v.AtLeast(4, 2) {
		t.Errorf("RabbitMQ %s: rabbitmq_federation_common among the plugins %v: %v, want %v (a dependency of rabbitmq_federation from 4.2)", v, f.Plugins, got, v.AtLeast(4, 2))
	}
	if f.FeatureFlags == nil {
		t.Error("feature flags unknown to an administrator")
	}
	switch v.Line() {
	case "3.10", "4.0":
		if f.Denied != nil {
			t.Errorf("RabbitMQ %s reports deprecated features' states %v: the test says it gives none", v, f.Denied)
		}
		if denied, known := c.RabbitMQVersion().DeniesTransientQueues(); known {
			t.Errorf("RabbitMQ %s: transient queues denied=%v known, want unknown (a probe tells)", v, denied)
		}
	case "4.3":
		if denied, ok := f.Denied["queue_master_locator"]; !ok || !denied {
			t.Errorf("RabbitMQ %s: queue_master_locator %v (known %v), want denied", v, denied, ok)
		}
		if denied, ok := f.Denied["transient_nonexcl_queues"]; !ok || denied {
			t.Errorf("RabbitMQ %s (Debian's): transient_nonexcl_queues denied=%v (known %v), want permitted", v, denied, ok)
		}
		if on, known := c.RabbitMQVersion().FeatureFlag("topic_binding_projection_v5"); !known || !on {
			t.Errorf("RabbitMQ %s: topic_binding_projection_v5 enabled=%v known=%v, want enabled", v, on, known)
		}
	default:
		t.Fatalf("the test states no answer for RabbitMQ %s", v.Line())
	}
	if c.RabbitMQVersion().Facts() != f {
		t.Error("RabbitMQVersion does not carry the facts read")
	}
}
