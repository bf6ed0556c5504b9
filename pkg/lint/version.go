package lint

import (
	"github.com/mqctl/mqctl/pkg/rmqversion"
	"github.com/mqctl/mqctl/pkg/route"
	"github.com/mqctl/mqctl/pkg/topology"
)

// newSimulator builds the routing simulator the rules reason over for vhost
// v, following RabbitMQ version ver where versions differ (dead-lettering,
// delivery limits, which policy applies).
func newSimulator(v *topology.Vhost, ver rmqversion.Version) *route.Simulator {
	return route.NewWith(v, route.Options{Version: ver})
}

// judged marks f as judged for the pass's RabbitMQ version: the verdict or
// its advice depends on it.
func (p *Pass) judged(f Finding) Finding {
	f.RabbitMQVersion = p.Version.String()
	return f
}

// raised is judged, with f an error on this version whatever the rule's
// default severity (unless the file or the options set one for the rule).
func (p *Pass) raised(f Finding) Finding {
	f = p.judged(f)
	f.raise = Error
	return f
}

// onVersion names the target version in a message: "on RabbitMQ 4.0".
func (p *Pass) onVersion() string { return "on RabbitMQ " + p.Version.String() }
