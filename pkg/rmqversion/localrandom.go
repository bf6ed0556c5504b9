package rmqversion

import (
	"fmt"

	"github.com/mqctl/mqctl/pkg/topology"
)

// LocalRandomExchangeType is the core exchange type that delivers each
// message to one classic queue, picked at random among those bound to it
// whose process runs on the node the publisher is connected to (4.0+).
const LocalRandomExchangeType = "x-local-random"

// LocalRandomExchange: x-local-random is a core exchange type, behind the
// required feature flag "Local random exchange" (4.0+; rabbit_exchange_
// type_local_random at v4.0.5 and v4.3.5). 3.10 refuses the type
// (HTTP 400 "unknown exchange type 'x-local-random'").
func (v Version) LocalRandomExchange() bool { return v.HasCoreExchangeType(LocalRandomExchangeType) }

// LocalRandomBindingRefusal says why an x-local-random exchange refuses a
// binding b to a destination of queue type qtype ("" for a queue whose
// type the file does not say, or for an exchange), and the fix; "" when it
// takes it. The exchange takes a binding with an empty key to a classic
// queue only (rabbit_exchange_type_local_random:validate_binding/2 at
// v4.3.5; measured on 4.3.6 and 4.0.5, HTTP 400 with these words).
func LocalRandomBindingRefusal(b *topology.Binding, qtype string) (reason, fix string) {
	switch {
	case b.DestinationType == topology.DestExchange:
		return `an x-local-random exchange routes to queues only (HTTP 400 "Destination not found")`,
			"bind a classic queue to it, or bind the exchange to another type of exchange"
	case b.RoutingKey != "":
		return fmt.Sprintf("an x-local-random exchange takes no binding key (HTTP 400 \"Non empty binding '%s' key not permitted\")", b.RoutingKey),
			`bind with an empty routing key (routing_key: ""): the exchange ignores routing keys and picks one of its queues at random`
	case qtype != "" && qtype != topology.QueueClassic:
		return fmt.Sprintf("an x-local-random exchange routes to classic queues only (HTTP 400 \"Queue type rabbit_%s_queue not valid for this exchange type\")", qtype),
			fmt.Sprintf("make queue %q a classic queue (type: classic; RPC reply queues usually are), or bind it to another type of exchange", b.Destination)
	}
	return "", ""
}

// checkLocalRandomBindings appends to out what v refuses of vhost vn's
// bindings from x-local-random exchanges.
func (v Version) checkLocalRandomBindings(out []Refusal, vn string, vh *topology.Vhost) []Refusal {
	if !v.LocalRandomExchange() {
		return out
	}
	for _, b := range vh.Bindings {
		reason, fix := v.LocalRandomRefusal(vn, vh, b)
		if reason == "" {
			continue
		}
		out = append(out, Refusal{Vhost: vn, Object: fmt.Sprintf("binding from %q to %s %q", b.Source, b.DestinationType, b.Destination), Key: fmt.Sprintf("routing key %q", b.RoutingKey), Pos: b.Pos,
			Reason: fmt.Sprintf("RabbitMQ %s refuses it: %s", v.Line(), reason),
			Fix:    fix})
	}
	return out
}

// LocalRandomRefusal is LocalRandomBindingRefusal for binding b of vhost
// vn, vh, with the type of its queue as vh declares it: "" for a binding
// that is not from an x-local-random exchange or that the exchange takes.
// For a queue that is quorum (or a stream) only by vh's default queue
// type, the fix says first to write type: classic.
func (v Version) LocalRandomRefusal(vn string, vh *topology.Vhost, b *topology.Binding) (reason, fix string) {
	if vh.ExchangeType(b.Source) != LocalRandomExchangeType {
		return "", ""
	}
	qtype := ""
	q := vh.Queues[b.Destination]
	if b.DestinationType == topology.DestQueue && q != nil {
		qtype = q.TypeOrClassic()
	}
	reason, fix = LocalRandomBindingRefusal(b, qtype)
	if reason != "" && q != nil && qtype != topology.QueueClassic && b.RoutingKey == "" {
		if keep, ok := v.KeepClassicFix(q, vn, ""); ok {
			fix = keep + "; otherwise " + fix
		}
	}
	return reason, fix
}
