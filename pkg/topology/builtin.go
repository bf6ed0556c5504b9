package topology

// builtinExchanges are the exchanges the broker declares in every vhost: a
// file never declares them, and may bind to them and publish to them. The
// default exchange ("") is not among them.
var builtinExchanges = map[string]Exchange{
	"amq.direct":         {Name: "amq.direct", Type: "direct", Durable: true},
	"amq.fanout":         {Name: "amq.fanout", Type: "fanout", Durable: true},
	"amq.topic":          {Name: "amq.topic", Type: "topic", Durable: true},
	"amq.headers":        {Name: "amq.headers", Type: "headers", Durable: true},
	"amq.match":          {Name: "amq.match", Type: "headers", Durable: true},
	"amq.rabbitmq.trace": {Name: "amq.rabbitmq.trace", Type: "topic", Durable: true, Internal: true},
}

// someVhostsExchanges are the broker's own exchanges of some vhosts only:
// amq.rabbitmq.log in the default vhost, amq.rabbitmq.event with the event
// exchange plugin.
var someVhostsExchanges = map[string]Exchange{
	"amq.rabbitmq.log":   {Name: "amq.rabbitmq.log", Type: "topic", Durable: true, Internal: true},
	"amq.rabbitmq.event": {Name: "amq.rabbitmq.event", Type: "topic", Durable: true, Internal: true},
}

// BuiltinExchange returns the exchange name the broker declares by itself
// in every vhost (amq.direct, amq.topic, …), false for any other name (the
// default exchange included).
func BuiltinExchange(name string) (Exchange, bool) {
	x, ok := builtinExchanges[name]
	return x, ok
}

// BuiltinExchangeNames lists the exchanges the broker declares by itself
// in every vhost.
func BuiltinExchangeNames() []string { return sortedKeys(builtinExchanges) }

// IsBrokerExchange reports whether the broker declares exchange name
// itself, in every vhost or in some (amq.rabbitmq.log,
// amq.rabbitmq.event): never one of the file's.
func IsBrokerExchange(name string) bool {
	_, every := builtinExchanges[name]
	_, some := someVhostsExchanges[name]
	return every || some
}

// ExchangeType is the type of exchange name in v: the declared one's, the
// broker's own one's, "direct" for the default exchange, "" when v has
// none of that name.
func (v *Vhost) ExchangeType(name string) string {
	if name == "" {
		return "direct"
	}
	if x := v.Exchanges[name]; x != nil {
		return x.Type
	}
	if x, ok := builtinExchanges[name]; ok {
		return x.Type
	}
	return someVhostsExchanges[name].Type
}
