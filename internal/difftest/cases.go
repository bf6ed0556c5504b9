// Package difftest proves the routing simulator (pkg/route) against a real
// RabbitMQ broker. Generate builds a random topology and random messages
// from a seed (internal/randtopo); Apply declares the topology in a vhost;
// Run publishes the messages, rejects some of the copies that arrive, lets
// queue TTLs expire others, and compares where every copy ends up (queue,
// exchange, routing key and x-death history) with what the simulator
// predicts.
package difftest

import "github.com/mqctl/mqctl/internal/randtopo"

// The cases this package runs are internal/randtopo's random topologies
// and messages.
type (
	Case    = randtopo.Case
	Message = randtopo.Message
)

// Generate is randtopo.Generate.
func Generate(seed uint64, vhost string, messages int) *Case {
	return randtopo.Generate(seed, vhost, messages)
}
