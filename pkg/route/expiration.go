package route

import (
	"fmt"
	"strconv"
	"strings"
)

// MaxExpiration is the largest per-message expiration RabbitMQ takes:
// ten years in milliseconds (rabbit_misc:check_expiry/1 at v3.10.8 and
// v4.3.5).
const MaxExpiration = 315_360_000_000

// ParseExpiration reads an expiration property as RabbitMQ does
// (rabbit_basic:parse_expiration/1 at v3.10.8 and v4.3.5, over Erlang's
// string:to_integer/1): a whole number of milliseconds, with an optional
// sign, from 0 to MaxExpiration. Anything else makes the broker refuse the
// publish (PRECONDITION_FAILED "invalid expiration"), with the reason the
// error gives.
func ParseExpiration(s string) (int64, error) {
	digits := strings.TrimLeft(s, "+-")
	if len(s)-len(digits) > 1 || digits == "" || strings.TrimLeft(digits, "0123456789") == digits {
		return 0, fmt.Errorf("no_integer: it must be a whole number of milliseconds")
	}
	if rest := strings.TrimLeft(digits, "0123456789"); rest != "" {
		return 0, fmt.Errorf("leftover_string %q: it must be a whole number of milliseconds", rest)
	}
	n, err := strconv.ParseInt(s, 10, 64)
	switch {
	case err != nil && strings.HasPrefix(s, "-"), err == nil && n < 0:
		return 0, fmt.Errorf("value_negative: it cannot be negative")
	case err != nil, n > MaxExpiration:
		return 0, fmt.Errorf("value_too_large: at most %d ms (ten years)", int64(MaxExpiration))
	}
	return n, nil
}

// expiration returns m's per-message TTL in milliseconds, if it has a
// valid one.
func (m Message) expiration() (int64, bool) {
	if m.Expiration == "" {
		return 0, false
	}
	n, err := ParseExpiration(m.Expiration)
	return n, err == nil
}

// originalExpiration is what RabbitMQ writes into the x-death entry of a
// message dead-lettered with an expiration (every reason, the first
// death of the message; later deaths find none): up to 3.12 the property
// as the client sent it (rabbit_dead_letter per_msg_ttl_header/1 at
// v3.10.8), from 3.13 the number it was read as (mc_amqpl death_table/7 at
// v4.3.5: integer_to_binary of the ttl annotation).
func (s *Simulator) originalExpiration(m Message) (string, bool) {
	n, ok := m.expiration()
	if !ok {
		return "", false
	}
	if s.ver.RegroupsXDeath() { // before message containers (3.13)
		return m.Expiration, true
	}
	return strconv.FormatInt(n, 10), true
}

// ExpiresAfter returns how long message m stays in queue name before it
// expires, and true when it does: the smaller of m's expiration and the
// queue's effective message TTL (x-message-ttl, by argument or policy),
// whichever are set. Classic and quorum queues both honour both (quorum
// queues from 3.10). A stream never expires messages. Classic queues
// expire a message only once it reaches the head of the queue, so behind
// messages that live longer it waits longer (see MQ202).
func (s *Simulator) ExpiresAfter(name string, m Message) (int64, bool) {
	q, ok := s.v.Queues[name]
	if !ok || q == nil || queueType(q) == "stream" {
		return 0, false
	}
	ttl, hasTTL := s.queues[name].args.Int("x-message-ttl")
	exp, hasExp := m.expiration()
	switch {
	case hasTTL && hasExp:
		return min(ttl, exp), true
	case hasTTL:
		return ttl, true
	case hasExp:
		return exp, true
	}
	return 0, false
}
