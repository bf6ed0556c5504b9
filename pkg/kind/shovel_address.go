package kind

import (
	"fmt"
	"strings"
)

// AMQP 1.0 addresses of an amqp10 shovel's ends, as RabbitMQ reads them
// (address v2: rabbit_amqp_session at v4.3.5, parse_target_v2_string and
// ensure_source; the same parse in 4.0.5): a source is /queues/:queue, a
// destination /queues/:queue, /exchanges/:exchange or
// /exchanges/:exchange/:routing-key, each name percent-encoded and decoded
// by cow_uri:urldecode, which takes only the characters of a URI path
// segment (letters, digits, - . _ ~ ! $ & ' ( ) * + , ; = : @) and %XX,
// and fails on anything else, "/" and space included. Measured on 4.3.6
// and 4.0.5 by creating the shovel and reading its state: every address
// amqp10AddressProblems refuses leaves the shovel terminated (4.3.6) or
// starting again and again (4.0.5), with bad_address, bad_address_string,
// not-found or unknown_destination. The broker takes any string when the
// shovel is written, so only the shovel's state would tell.
//
// Other addresses are left alone: address v1 (/queue/q, /exchange/x/k,
// /topic/k, a bare name), which RabbitMQ 4.0-4.2 take and 4.3 denies
// unless its deprecated feature amqp_address_v1 is permitted, and which
// another AMQP 1.0 broker may read as its own.

// pathSegmentChar reports whether cow_uri:urldecode takes byte c as it is.
func pathSegmentChar(c byte) bool {
	switch {
	case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9':
		return true
	}
	return strings.IndexByte("-._~!$&'()*+,;=:@", c) >= 0
}

// decodeSegment decodes s as cow_uri:urldecode does; bad is "" when it
// can, else what it fails on.
func decodeSegment(s string) (decoded, bad string) {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '%':
			if i+2 >= len(s) || !isHex(s[i+1]) || !isHex(s[i+2]) {
				end := min(i+3, len(s))
				return "", fmt.Sprintf("%q, which starts no two-digit hex escape", s[i:end])
			}
			b.WriteByte(unhex(s[i+1])<<4 | unhex(s[i+2]))
			i += 2
		case pathSegmentChar(c):
			b.WriteByte(c)
		default:
			return "", fmt.Sprintf("%q, which must be percent-encoded", charAt(s, i))
		}
	}
	return b.String(), ""
}

// charAt is the (UTF-8) character of s at byte i.
func charAt(s string, i int) string {
	for j, r := range s[i:] {
		if j == 0 {
			return string(r)
		}
	}
	return s[i:]
}

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

func unhex(c byte) byte {
	switch {
	case c <= '9':
		return c - '0'
	case c <= 'F':
		return c - 'A' + 10
	}
	return c - 'a' + 10
}

// encodeSegment percent-encodes name for an address, as
// rabbitmq_amqp_address does (uri_string:quote): what decodeSegment
// takes back.
func encodeSegment(name string) string {
	var b strings.Builder
	for i := 0; i < len(name); i++ {
		if c := name[i]; pathSegmentChar(c) {
			b.WriteByte(c)
		} else {
			fmt.Fprintf(&b, "%%%02X", c)
		}
	}
	return b.String()
}

// looseDecode is s with its valid %XX escapes decoded and anything else
// kept: the name a writer of s most likely meant.
func looseDecode(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '%' && i+2 < len(s) && isHex(s[i+1]) && isHex(s[i+2]) {
			b.WriteByte(unhex(s[i+1])<<4 | unhex(s[i+2]))
			i += 2
			continue
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// amqp10AddressProblems are the problems of the address (key
// src-address or dest-address) of an amqp10 end of shovel s.
func amqp10AddressProblems(s map[string]any, key string) []Problem {
	addr, ok := str(s, key)
	if !ok {
		return nil
	}
	src := key == "src-address"
	bad := func(msg, hint string) []Problem {
		return []Problem{{Field: key, Msg: fmt.Sprintf("AMQP 1.0 address %q %s", addr, msg), Hint: hint}}
	}
	queueHint := func(name string) string {
		return fmt.Sprintf("write %q: RabbitMQ decodes a queue's name from its address's percent escapes", "/queues/"+encodeSegment(name))
	}
	switch {
	case strings.HasPrefix(addr, "/queues/"):
		rest := strings.TrimPrefix(addr, "/queues/")
		if rest == "" {
			return bad("names no queue: RabbitMQ 4.3 refuses it (no queue ''), and 4.0 moves messages of a queue named ''", "add the queue's name: /queues/NAME")
		}
		if _, why := decodeSegment(rest); why != "" {
			also := ""
			if src && !ascii(rest) {
				// Measured: GET /api/shovels answered 500 while such a shovel existed.
				also = "; RabbitMQ 4.3.6's management API then answers 500 to every read of the shovels' status while the shovel exists"
			}
			return bad(fmt.Sprintf("holds %s: RabbitMQ refuses the address (bad_address) and the shovel never starts%s", why, also), queueHint(looseDecode(rest)))
		}
	case strings.HasPrefix(addr, "/exchanges/") && src:
		return bad("is an exchange: an amqp10 shovel consumes from a queue, and RabbitMQ takes only /queues/NAME as a source address (4.3 refuses the address, 4.0 calls it an unknown destination)",
			"bind a queue to the exchange and consume from it: src-address: /queues/NAME")
	case strings.HasPrefix(addr, "/exchanges/"):
		parts := strings.Split(strings.TrimPrefix(addr, "/exchanges/"), "/")
		if len(parts) > 2 {
			key := strings.Join(parts[1:], "/")
			return bad("has more than an exchange and a routing key: RabbitMQ refuses it (bad_address_string) and the shovel never starts",
				fmt.Sprintf("percent-encode each / of the routing key as %%2F: %q", "/exchanges/"+parts[0]+"/"+encodeSegment(looseDecode(key))))
		}
		if parts[0] == "" || parts[0] == "amq.default" {
			return bad("names the default exchange, which has no exchange address: RabbitMQ refuses it (bad_address_string)",
				"to send to a queue through the default exchange, write /queues/NAME")
		}
		for i, p := range parts {
			if _, why := decodeSegment(p); why != "" {
				what := "exchange name"
				fixed := "/exchanges/" + encodeSegment(looseDecode(p))
				if i == 1 {
					what = "routing key"
					fixed = "/exchanges/" + parts[0] + "/" + encodeSegment(looseDecode(p))
				}
				return bad(fmt.Sprintf("holds in its %s %s: RabbitMQ refuses the address (bad_address_string) and the shovel never starts", what, why),
					fmt.Sprintf("write %q", fixed))
			}
		}
	}
	return nil
}

func ascii(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return false
		}
	}
	return true
}

// ShovelDestQueue is the queue a shovel with settings s publishes to in
// its destination vhost: its dest-queue, or an amqp10 end's /queues/NAME
// address; "" where it names none (an exchange, the messages' own
// exchange, or an address mqctl does not read).
func ShovelDestQueue(s map[string]any) string { return ShovelQueue(s, "dest") }

// ShovelQueue is the queue a shovel with settings s consumes from (end
// "src") or publishes to ("dest") in that end's vhost: its src-queue or
// dest-queue, or an amqp10 end's /queues/NAME address, decoded as
// RabbitMQ decodes it; "" where it names none.
func ShovelQueue(s map[string]any, end string) string {
	if ShovelProtocol(s, end) != "amqp10" {
		q, _ := str(s, end+"-queue")
		return q
	}
	addr, _ := str(s, end+"-address")
	if rest, ok := strings.CutPrefix(addr, "/queues/"); ok {
		q, _ := decodeSegment(rest)
		return q
	}
	return ""
}
