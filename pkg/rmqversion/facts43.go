package rmqversion

// Facts of RabbitMQ 4.3 that the offline simulator (pkg/route) and lint
// follow, beside the ones in rmqversion.go. Sources are named per method:
// the server's source at v4.3.5 (and v4.0.5 for the earlier behaviour), its
// release notes, and the research notes rabbitmq-4.1-4.3.md.

// ModulusHashPicksStably: x-modulus-hash is a core exchange type that sorts
// its bound destinations (one entry per binding, exchanges before queues,
// then by name) and delivers each message to the one at
// erlang:phash2(RoutingKeys, 2^27) rem N, so the pick follows from the
// bindings and the routing keys alone (4.3+; release notes of 4.3.0,
// rabbitmq-server#15849; rabbit_exchange_type_modulus_hash:route/3 at
// v4.3.5). Before, the type is the rabbitmq_sharding plugin's, which picks
// from the bindings in the order the metadata store lists them
// (rabbit_sharding_exchange_type_modulus_hash at v4.0.5), an order mqctl
// cannot know offline. On every version it delivers to exactly one of its
// bound destinations.
func (v Version) ModulusHashPicksStably() bool { return v.AtLeast(4, 3) }
