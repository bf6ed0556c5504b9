package lint

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/mqctl/mqctl/pkg/kind"
	"github.com/mqctl/mqctl/pkg/rmqversion"
	"github.com/mqctl/mqctl/pkg/topology"
)

// MQ401: a binding with an end that does not exist.
func runBindingEnds(p *Pass) []Finding {
	var out []Finding
	for _, b := range p.Vhost.Bindings {
		switch {
		case b.Source == "":
			out = append(out, p.bindingFinding(b,
				"binding from the default exchange to %s %q: the default exchange cannot be bound, RabbitMQ refuses the binding (ACCESS_REFUSED). "+
					"Every queue already receives messages published to the default exchange with its name as the routing key; bind to a declared exchange instead",
				b.DestinationType, b.Destination))
		case !p.exchangeDeclared(b.Source):
			fix := fmt.Sprintf("Declare exchange %q or correct the source name%s", b.Source, p.exchangeHint(b.Source))
			if _, isQueue := p.Vhost.Queues[b.Source]; isQueue {
				fix = rmqversion.OtherKindEndFix(b, true, rmqversion.OfTheFile)
			}
			out = append(out, p.bindingFinding(b,
				"binding to %s %q comes from exchange %q, which is not declared: RabbitMQ refuses the binding (NOT_FOUND) and nothing published there reaches %q. %s",
				b.DestinationType, b.Destination, b.Source, b.Destination, fix))
		}
		switch b.DestinationType {
		case topology.DestQueue:
			if _, ok := p.Vhost.Queues[b.Destination]; !ok {
				out = append(out, p.bindingFinding(b,
					"binding from %s goes to queue %q, which is not declared: RabbitMQ refuses the binding (NOT_FOUND) and the messages it should carry are dropped. %s",
					exchangeLabel(b.Source), b.Destination, p.undeclaredQueueFix(b)))
			}
		case topology.DestExchange:
			if b.Destination == "" {
				out = append(out, p.bindingFinding(b,
					"binding from %s goes to the default exchange, which cannot be bound: RabbitMQ refuses the binding (ACCESS_REFUSED). Bind to a declared exchange instead",
					exchangeLabel(b.Source)))
			} else if !p.exchangeDeclared(b.Destination) {
				fix := fmt.Sprintf("Declare exchange %q or correct the destination name%s", b.Destination, p.exchangeHint(b.Destination))
				if _, isQueue := p.Vhost.Queues[b.Destination]; isQueue {
					fix = rmqversion.OtherKindEndFix(b, false, rmqversion.OfTheFile)
				}
				out = append(out, p.bindingFinding(b,
					"binding from %s goes to exchange %q, which is not declared: RabbitMQ refuses the binding (NOT_FOUND) and the messages it should carry are dropped. %s",
					exchangeLabel(b.Source), b.Destination, fix))
			}
		}
	}
	return append(out, p.alternatesMissing()...)
}

// alternatesMissing reports exchanges whose alternate exchange (by
// argument, or by the policy that applies to them) is not declared:
// RabbitMQ then drops what no binding matches, where the file meant to
// keep it (rabbit_exchange:route/3 at v4.3.5 looks the alternate exchange
// up with the other destinations, and one that is missing is skipped).
// An exchange's own argument is reported on it; a policy's, once on the
// policy, naming the exchanges it applies to.
func (p *Pass) alternatesMissing() []Finding {
	var out []Finding
	byPolicy := map[string][]string{}
	for _, name := range p.exchangeNames {
		ae, ok := p.Sim.ExchangeArgs(name).String(argAlternate)
		if !ok || p.exchangeDeclared(ae) {
			continue
		}
		x := p.Vhost.Exchanges[name]
		if _, own := x.Arguments[argAlternate]; !own {
			pol := p.Sim.ExchangePolicy(name)
			byPolicy[pol] = append(byPolicy[pol], name)
			continue
		}
		out = append(out, p.exchangeFinding(x,
			"exchange %q sends what no binding matches to alternate exchange %q (its alternate_exchange), which is not declared: RabbitMQ drops those messages without a trace, though the file means to keep them. "+
				"Declare exchange %q and bind a queue to it, or correct the name%s",
			name, ae, ae, p.exchangeHint(ae)).at("alternate-exchange"))
	}
	for _, pn := range slices.Sorted(maps.Keys(byPolicy)) {
		pol := p.Vhost.Policies[pn]
		xs := byPolicy[pn]
		ae, _ := pol.Definition.String(argAlternate)
		out = append(out, p.policyFinding(KindPolicy, pol,
			"policy %q gives %s alternate exchange %q, which is not declared: RabbitMQ drops what no binding of %s matches without a trace, though the policy means to keep it. "+
				"Declare exchange %q and bind a queue to it, or correct the name%s",
			pn, exchangesLabel(xs), ae, pluralThem(len(xs)), ae, p.exchangeHint(ae)).at("alternate-exchange"))
	}
	return out
}

// exchangesLabel names exchanges for a message: `exchange "a"`,
// `2 exchanges (a and b)`.
func exchangesLabel(xs []string) string {
	if len(xs) == 1 {
		return fmt.Sprintf("exchange %q", xs[0])
	}
	return fmt.Sprintf("%d exchanges (%s)", len(xs), queuesList(xs))
}

// pluralThem is "it" for one, "them" for more.
func pluralThem(n int) string {
	if n == 1 {
		return "it"
	}
	return "them"
}

// MQ402: an exchange that drops everything published to it.
func runExchangeUnbound(p *Pass) []Finding {
	routedInto := map[string]bool{} // exchanges another exchange is bound to
	for _, b := range p.Vhost.Bindings {
		if b.DestinationType == topology.DestExchange {
			routedInto[b.Destination] = true
		}
	}
	shoveled := p.shoveledExchanges()
	var out []Finding
	for _, name := range p.exchangeNames {
		if topology.IsBrokerExchange(name) {
			continue // declared by the broker itself
		}
		x := p.Vhost.Exchanges[name]
		if len(p.from[name]) > 0 || p.Sim.ExchangeArgs(name).Has(argAlternate) {
			continue
		}
		if shoveled[name] {
			continue // a shovel of the file binds a queue of its own to it
		}
		if len(p.dlxOf[name]) > 0 {
			continue // a dead-letter exchange with nothing bound is reported by MQ103
		}
		if x.Internal && !routedInto[name] {
			continue // nothing can reach it, so nothing is lost through it
		}
		out = append(out, p.exchangeFinding(x,
			"exchange %q has no bindings and no alternate exchange: every message that reaches it while no queue is bound is dropped (or returned, when published as mandatory). "+
				"Bind a queue or exchange to it, or set alternate_exchange; if consumers bind queues of their own to it at run time (server-named queues for pub/sub), silence this with `# mqctl:ignore MQ402`; if nothing uses it, remove it",
			name))
	}
	return out
}

// MQ405: a topic binding key RabbitMQ 4.3.5+ refuses (more than two '#'
// words), on every target: a file that holds one does not apply there.
func runTopicHashes(p *Pass) []Finding {
	var out []Finding
	for _, b := range p.Vhost.Bindings {
		n := rmqversion.TopicHashWords(b.RoutingKey)
		if n <= rmqversion.MaxTopicHashWords || p.Vhost.ExchangeType(b.Source) != "topic" {
			continue
		}
		judged := "RabbitMQ 4.3.5 and later refuse it"
		if p.Version.TopicHashLimit() {
			judged = fmt.Sprintf("RabbitMQ %s refuses it", p.Version.Line())
		}
		out = append(out, p.bindingFinding(b,
			"topic binding from %s to %s %q has routing key %q with %d '#' words: %s (\"at most 2 are allowed\"), so the file does not apply there. %s",
			exchangeLabel(b.Source), b.DestinationType, b.Destination, b.RoutingKey, n, judged, upperFirst(rmqversion.TopicHashFix(b.RoutingKey, p.Env.WrittenFor(b.RoutingKey)))))
	}
	return out
}

// MQ406: a binding an x-local-random exchange refuses, on every target (the
// type exists from 4.0, and takes only bindings without a key to classic
// queues): the apply would stop at it.
func runLocalRandomBindings(p *Pass) []Finding {
	var out []Finding
	for _, b := range p.Vhost.Bindings {
		reason, fix := p.Version.LocalRandomRefusal(p.Vhost.Name, p.Vhost, b)
		if reason == "" {
			continue
		}
		out = append(out, p.bindingFinding(b,
			"binding from exchange %q (x-local-random) to %s %q: RabbitMQ refuses it, %s, so the file does not apply. %s",
			b.Source, b.DestinationType, b.Destination, reason, upperFirst(fix)))
	}
	return out
}

// undeclaredQueueFix is the fix for binding b to a queue the file does not
// declare. A name of the reserved amq. prefix cannot be declared:
// amq.rabbitmq.reply-to is direct reply-to's pseudo-queue, which no
// binding reaches (404 on 3.10.8, 4.0.5 and 4.3.6; AMQP refuses a bind to
// it from 4.2.6), amq.direct and the like are exchanges of every vhost,
// and amq.gen-* names are the broker's, given to server-named queues. A
// name that is an exchange gets plan's fix (rmqversion.OtherKindEndFix).
func (p *Pass) undeclaredQueueFix(b *topology.Binding) string {
	q := b.Destination
	_, builtin := topology.BuiltinExchange(q)
	switch {
	case builtin:
		return rmqversion.OtherKindEndFix(b, false, rmqversion.OnTheBroker)
	case q == "amq.rabbitmq.reply-to" || strings.HasPrefix(q, "amq.rabbitmq.reply-to."):
		return "It is direct reply-to's pseudo-queue, which cannot be bound: a reply reaches the requester when the responder publishes it to the default exchange with the request's reply_to as the routing key. Remove the binding"
	case topology.IsReservedName(q):
		return fmt.Sprintf("Names starting with amq. are RabbitMQ's: a client cannot declare queue %q, and a server-named queue's name changes with each connection. Bind a queue the file declares, or let the application that declares the server-named queue bind it", q)
	}
	if p.exchangeDeclared(q) {
		return rmqversion.OtherKindEndFix(b, false, rmqversion.OfTheFile)
	}
	return fmt.Sprintf("Declare queue %q or correct the destination name%s", q, p.queueHint(q))
}

// shoveledExchanges are the exchanges of the pass's vhost that a shovel of
// the file (in any vhost) consumes from with src-exchange on this broker:
// the shovel declares a queue of its own and binds it to the exchange with
// src-exchange-key (rabbit_amqp091_shovel), so what reaches the exchange is
// not dropped for want of a binding.
func (p *Pass) shoveledExchanges() map[string]bool {
	out := map[string]bool{}
	for _, vh := range p.Vhosts {
		for _, name := range vh.Items.Names(kind.Shovel) {
			it := vh.Items.Get(kind.Shovel, name)
			x, ok := it.Settings.String("src-exchange")
			if !ok || x == "" {
				continue
			}
			if vn, local := kind.ShovelLocalVhost(it.Settings, "src-uri"); local && vn == p.Vhost.Name {
				out[x] = true
			}
		}
	}
	return out
}
