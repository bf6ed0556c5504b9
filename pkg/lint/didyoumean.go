package lint

import (
	"fmt"

	"github.com/mqctl/mqctl/pkg/suggest"
	"github.com/mqctl/mqctl/pkg/topology"
)

// closestHint suggests the declared name nearest to name, a name the
// vhost does not declare: ` (did you mean "orders.audit"?)`, or "" when
// none is close (suggest.Name).
func closestHint(name string, declared []string) string {
	if best := suggest.Name(name, declared); best != "" {
		return fmt.Sprintf(" (did you mean %q?)", best)
	}
	return ""
}

// exchangeHint is closestHint for exchange name, which the vhost does not
// declare, among the exchanges it does; "" where name is one of its
// queues: naming a queue where an exchange belongs is another fix than a
// misspelt exchange.
func (p *Pass) exchangeHint(name string) string {
	if _, isQueue := p.Vhost.Queues[name]; isQueue {
		return ""
	}
	return closestHint(name, p.exchangeNames)
}

// queueHint is closestHint for queue name, which the vhost does not
// declare, among the queues it does; "" where name is an exchange.
func (p *Pass) queueHint(name string) string {
	if p.exchangeDeclared(name) {
		return ""
	}
	return closestHint(name, p.queueNames)
}

// endHint is closestHint for a shovel's end obj, a queue or exchange
// (what) that vhost end does not declare, among those of its kind there;
// "" where end declares obj as the other kind.
func endHint(end *topology.Vhost, what, obj string) string {
	if what == "queue" {
		if declares(end, "exchange", obj) {
			return ""
		}
		return closestHint(obj, end.QueueNames())
	}
	if declares(end, "queue", obj) {
		return ""
	}
	return closestHint(obj, end.ExchangeNames())
}
