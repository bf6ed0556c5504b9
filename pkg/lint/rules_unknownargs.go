package lint

import "github.com/mqctl/mqctl/pkg/rmqversion"

// MQ506: a queue or exchange argument that no RabbitMQ version reads,
// spelled like one that is: the broker takes the object and stores the
// argument unread, so what it was meant to set never applies.
func runMisspelledArgs(p *Pass) []Finding {
	var out []Finding
	for _, name := range p.exchangeNames {
		x := p.Vhost.Exchanges[name]
		for _, arg := range x.Arguments.Keys() {
			if meant := rmqversion.MisspelledExchangeArgument(arg); meant != "" {
				out = append(out, p.exchangeFinding(x,
					"exchange %q sets argument %s, which RabbitMQ does not read: it stores it with the exchange and applies nothing. Write %s if that is what it means",
					name, arg, meant).at(arg))
			}
		}
	}
	for _, name := range p.queueNames {
		q := p.Vhost.Queues[name]
		for _, arg := range q.Arguments.Keys() {
			if meant := rmqversion.MisspelledQueueArgument(arg); meant != "" {
				out = append(out, p.queueFinding(q,
					"queue %q sets argument %s, which no RabbitMQ queue type reads: the broker declares the queue, stores it and applies nothing. Write %s if that is what it means",
					name, arg, meant).at(arg))
			}
		}
	}
	return out
}
