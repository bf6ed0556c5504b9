package route

import (
	"slices"
	"sync"

	"github.com/mqctl/mqctl/pkg/topology"
)

// InboundKeys are the routing keys by which a message can reach a queue:
// those the last binding on its way matches (a message published without
// CC and BCC headers, or a dead letter, whose routing keys are its own).
type InboundKeys struct {
	// Any is true when some exchange that does not route by key binds the
	// queue (fanout, headers, a plugin type): a message of any key can
	// reach it. Patterns and Literals are then not set.
	Any bool
	// Patterns are the topic binding keys into the queue, Literals the
	// direct ones and the queue's name (the default exchange), each
	// once, sorted.
	Patterns, Literals []string
}

// Admits reports whether a message with routing key key can reach the
// queue.
func (k InboundKeys) Admits(key string) bool {
	if k.Any {
		return true
	}
	if _, found := slices.BinarySearch(k.Literals, key); found {
		return true
	}
	return slices.ContainsFunc(k.Patterns, func(p string) bool { return TopicMatch(p, key) })
}

// InboundKeys returns the routing keys by which a message can reach
// queue: the keys of the bindings into it from exchanges that route by
// key, and its name, by which the default exchange routes to it; or
// Any, when an exchange that routes otherwise binds it. The bindings
// before the last (exchange to exchange, alternate exchanges) are not
// asked: a key they keep from the queue still counts.
func (s *Simulator) InboundKeys(queue string) InboundKeys {
	s.inbound.once.Do(s.indexInbound)
	var k InboundKeys
	k.Literals = []string{queue}
	for _, b := range s.inbound.byQueue[queue] {
		switch s.exchanges[b.Source].routingType {
		case typeTopic:
			k.Patterns = append(k.Patterns, b.RoutingKey)
		case typeDirect:
			k.Literals = append(k.Literals, b.RoutingKey)
		default:
			return InboundKeys{Any: true}
		}
	}
	slices.Sort(k.Patterns)
	slices.Sort(k.Literals)
	k.Patterns, k.Literals = slices.Compact(k.Patterns), slices.Compact(k.Literals)
	return k
}

// inboundIndex is the bindings into each queue, made when first asked
// for: most simulations never ask.
type inboundIndex struct {
	once    sync.Once
	byQueue map[string][]*topology.Binding
}

// indexInbound indexes the bindings every exchange routes by (valid, to
// a declared queue) by the queue they lead to.
func (s *Simulator) indexInbound() {
	s.inbound.byQueue = map[string][]*topology.Binding{}
	for _, ix := range s.exchanges {
		for _, b := range ix.bindings {
			if b.DestinationType == topology.DestQueue && s.v.Queues[b.Destination] != nil {
				s.inbound.byQueue[b.Destination] = append(s.inbound.byQueue[b.Destination], b)
			}
		}
	}
}
