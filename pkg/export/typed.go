package export

import (
	"go.yaml.in/yaml/v3"

	"github.com/mqctl/mqctl/pkg/loader"
	"github.com/mqctl/mqctl/pkg/topology"
)

// queueSettings is a queue's arguments split into the typed fields of the
// file format and the raw arguments that map onto none exactly.
type queueSettings struct {
	limits     *yaml.Node // limits: {...}, nil when none
	deadLetter *yaml.Node // dead_letter: {...}, nil when none
	top        []*yaml.Node
	rest       topology.Args
}

func (s *queueSettings) empty() bool {
	return s.limits == nil && s.deadLetter == nil && len(s.top) == 0 && len(s.rest) == 0
}

// addTo appends the settings other than dead_letter to queue mapping m.
func (s *queueSettings) addTo(m *yaml.Node) {
	if s.limits != nil {
		add(m, "limits", s.limits)
	}
	m.Content = append(m.Content, s.top...)
	if len(s.rest) > 0 {
		add(m, "arguments", valueNode(map[string]any(s.rest)))
	}
}

var overflowModes = map[string]bool{"drop-head": true, "reject-publish": true, "reject-publish-dlx": true}

var deadLetterStrategies = map[string]bool{"at-most-once": true, "at-least-once": true}

// splitQueueArgs moves each argument whose value maps exactly onto a typed
// field out of the raw arguments.
func splitQueueArgs(q *topology.Queue) *queueSettings {
	s := &queueSettings{rest: q.Arguments.Clone()}
	if s.rest == nil {
		s.rest = topology.Args{}
	}
	take := func(key string) any {
		v := s.rest[key]
		delete(s.rest, key)
		return v
	}
	nonNegInt := func(key string) (int64, bool) {
		i, ok := s.rest.Int(key)
		return i, ok && i >= 0
	}
	limit := func(name string, value *yaml.Node) {
		if s.limits == nil {
			s.limits = mapping()
		}
		add(s.limits, name, value)
	}

	if n, ok := nonNegInt("x-max-length"); ok {
		take("x-max-length")
		limit("max_length", intNode(n))
	}
	if n, ok := nonNegInt("x-max-length-bytes"); ok {
		take("x-max-length-bytes")
		limit("max_length_bytes", sizeNode(n))
	}
	if o, ok := s.rest.String("x-overflow"); ok && overflowModes[o] {
		take("x-overflow")
		limit("overflow", str(o))
	}
	if n, ok := nonNegInt("x-message-ttl"); ok {
		take("x-message-ttl")
		limit("message_ttl", durationNode(n))
	}
	if n, ok := nonNegInt("x-expires"); ok && n > 0 {
		take("x-expires")
		limit("expires", durationNode(n))
	}

	if x, ok := s.rest.String("x-dead-letter-exchange"); ok {
		take("x-dead-letter-exchange")
		s.deadLetter = mapping()
		add(s.deadLetter, "exchange", str(x))
		if k, ok := s.rest.String("x-dead-letter-routing-key"); ok {
			take("x-dead-letter-routing-key")
			add(s.deadLetter, "routing_key", str(k))
		}
		if st, ok := s.rest.String("x-dead-letter-strategy"); ok && deadLetterStrategies[st] {
			take("x-dead-letter-strategy")
			add(s.deadLetter, "strategy", str(st))
		}
	}

	if n, ok := nonNegInt("x-max-priority"); ok && n <= 255 && q.Type == topology.QueueClassic {
		take("x-max-priority")
		s.top = append(s.top, str("max_priority"), intNode(n))
	}
	if b, ok := s.rest["x-single-active-consumer"].(bool); ok {
		take("x-single-active-consumer")
		s.top = append(s.top, str("single_active_consumer"), boolNode(b))
	}
	if n, ok := nonNegInt("x-delivery-limit"); ok && q.Type == topology.QueueQuorum {
		take("x-delivery-limit")
		s.top = append(s.top, str("delivery_limit"), intNode(n))
	}
	return s
}

func durationNode(ms int64) *yaml.Node {
	if ms == 0 {
		return intNode(0)
	}
	return str(loader.FormatDuration(ms))
}

// sizeNode renders a byte count with the largest unit that divides it
// exactly (1073741824 -> "1GiB"), or as an integer.
func sizeNode(n int64) *yaml.Node {
	if s, ok := loader.FormatSize(n); ok {
		return str(s)
	}
	return intNode(n)
}
