package engine

import (
	"fmt"
	"strings"

	"github.com/mqctl/mqctl/pkg/topology"
)

// noteEmptyKeyTopicBindings tells plan's reader about the file's bindings
// with the empty key on a topic exchange where the broker routes them
// with the topic binding index of 4.3.0 (rmqversion LeaksEmptyTopicKey):
// their destinations also receive every message published with an empty
// routing key to another topic exchange, which the file does not say.
func (e *Engine) noteEmptyKeyTopicBindings(desired *topology.Topology) {
	v := e.c.RabbitMQVersion()
	if desired == nil || !v.LeaksEmptyTopicKey() {
		return
	}
	var found []string
	for _, vn := range desired.VhostNames() {
		vh := desired.Vhosts[vn]
		for _, b := range vh.Bindings {
			if x := vh.Exchanges[b.Source]; x != nil && x.Type == "topic" && b.RoutingKey == "" {
				found = append(found, fmt.Sprintf("from exchange %q to %s %q in vhost %q", b.Source, b.DestinationType, b.Destination, vn))
			}
		}
	}
	if len(found) == 0 {
		return
	}
	fix := "upgrade to RabbitMQ 4.3.1 or later and enable feature flag topic_binding_projection_v5 (rabbitmqctl enable_feature_flag topic_binding_projection_v5)"
	if _, known := v.FeatureFlag("topic_binding_projection_v5"); known {
		fix = "enable feature flag topic_binding_projection_v5 once every node runs 4.3.1 or later (rabbitmqctl enable_feature_flag topic_binding_projection_v5)"
	}
	what := "topic binding " + found[0] + " has"
	if len(found) > 1 {
		what = "topic bindings " + strings.Join(found, ", ") + " have"
	}
	e.note("%s the empty routing key: this RabbitMQ %s routes topic bindings with the index of 4.3.0 (feature flag topic_binding_projection_v5 not enabled), where a binding with the empty key also receives every message published with an empty routing key to any other topic exchange; %s",
		what, e.c.Version(), fix)
}
