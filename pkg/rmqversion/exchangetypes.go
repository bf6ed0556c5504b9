package rmqversion

import (
	"fmt"
	"slices"
)

// ModulusHashExchangeType is the exchange type that delivers each message
// to one of its bound destinations, picked by a hash of its routing keys:
// a core type from 4.3, the rabbitmq_sharding plugin's before.
const ModulusHashExchangeType = "x-modulus-hash"

// coreExchangeType is an exchange type RabbitMQ's core gained after 3.10:
// the release line it arrived in, and the plugin that provided it before
// ("" for none).
type coreExchangeType struct {
	typ          string
	major, minor int
	plugin       string
}

// coreExchangeTypes is the table of the exchange types the core gained in
// the supported range (the modules rabbit_exchange_type_local_random and
// rabbit_exchange_type_modulus_hash in deps/rabbit/src first at v4.0.0
// and v4.3.0). A version before a type's line refuses it, HTTP 400
// "unknown exchange type", unless a plugin provides it there (which only
// a live broker tells: Facts.ExchangeTypes).
var coreExchangeTypes = []coreExchangeType{
	{typ: LocalRandomExchangeType, major: 4, minor: 0},
	{typ: ModulusHashExchangeType, major: 4, minor: 3, plugin: "rabbitmq_sharding"},
}

// coreExchangeTypeOf is typ's entry in coreExchangeTypes.
func coreExchangeTypeOf(typ string) (coreExchangeType, bool) {
	i := slices.IndexFunc(coreExchangeTypes, func(c coreExchangeType) bool { return c.typ == typ })
	if i < 0 {
		return coreExchangeType{}, false
	}
	return coreExchangeTypes[i], true
}

// HasCoreExchangeType reports whether exchange type typ, one the core
// gained after 3.10, is a core type of v (false for any other type).
func (v Version) HasCoreExchangeType(typ string) bool {
	c, ok := coreExchangeTypeOf(typ)
	return ok && v.AtLeast(c.major, c.minor)
}

// LacksExchangeType says, from the table, why v has no exchange type typ:
// a type the core gained after v that no plugin provides on v, which the
// broker refuses (HTTP 400 "unknown exchange type"); "" for any other.
// A live broker's own list (OffersExchangeType) wins over it.
func (v Version) LacksExchangeType(typ string) string {
	c, ok := coreExchangeTypeOf(typ)
	if !ok || c.plugin != "" || v.AtLeast(c.major, c.minor) {
		return ""
	}
	return fmt.Sprintf("RabbitMQ %s has no exchange type %s (a core type from %d.%d)", v.Line(), typ, c.major, c.minor)
}
