package kind

import (
	"fmt"
	"slices"
	"strings"
)

// shovelItem is a dynamic shovel (SPEC §9: shovels: {name: {src-uri: …}}),
// the runtime parameter of component "shovel". Its fields are every key
// rabbit_shovel_parameters accepts on 3.10.8 and 4.0.5 (the beams'
// validation lists, measured): the amqp091 and amqp10 source and
// destination keys, the deprecated pre-3.7 names (delete-after,
// prefetch-count, add-forward-headers, add-timestamp-header,
// publish-properties), and src-predeclared and dest-predeclared, which
// 4.0 accepts and 3.10 refuses ("Unrecognised terms").
var shovelItem = &ItemSpec{Shape: Named, Fields: shovelFields, Validate: validateShovel}

// shovelRequired are the settings without which the broker refuses a
// shovel (Spec.Required).
var shovelRequired = []string{"src-uri", "dest-uri"}

var ackModes = []string{"on-confirm", "on-publish", "no-ack"}

// shovelFields: the keys of rabbit_shovel_parameters, in the order its
// validation lists them (common, source, destination).
var shovelFields = []Field{
	{Name: "src-protocol", Type: FieldString, Help: "amqp091 (the default) or amqp10"},
	{Name: "dest-protocol", Type: FieldString, Help: "amqp091 (the default) or amqp10"},
	{Name: "ack-mode", Type: FieldString, Help: "on-confirm (the default), on-publish or no-ack"},
	{Name: "reconnect-delay", Type: FieldNumber, Help: "seconds to wait before reconnecting after a failure (default 1)"},

	{Name: "src-uri", Type: FieldStrings, Help: "the source broker's URI, or a list of URIs tried in turn (amqp:// is this broker's default vhost, amqp:///v its vhost v)"},
	{Name: "src-queue", Type: FieldString, Help: "the queue to consume from (amqp091; declared by the shovel unless src-predeclared)"},
	{Name: "src-exchange", Type: FieldString, Help: "the exchange to consume from through a queue of the shovel's own (amqp091; instead of src-queue)"},
	{Name: "src-exchange-key", Type: FieldString, Help: "the routing key that queue is bound with (amqp091, with src-exchange)"},
	{Name: "src-queue-args", Type: FieldTable, Help: "the arguments src-queue is declared with (amqp091)"},
	{Name: "src-consumer-args", Type: FieldTable, Help: "the arguments of the shovel's consumer (amqp091)"},
	{Name: "src-prefetch-count", Type: FieldInt, Help: "the most unacknowledged messages in flight (default 1000)"},
	{Name: "prefetch-count", Type: FieldInt, Help: "the pre-3.7 name of src-prefetch-count (amqp091)"},
	{Name: "src-delete-after", Type: FieldStringOrInt, Help: "never (the default), queue-length (stop after the messages in the queue when it starts) or a number of messages"},
	{Name: "delete-after", Type: FieldStringOrInt, Help: "the pre-3.7 name of src-delete-after (amqp091)"},
	{Name: "src-predeclared", Type: FieldBool, Help: "the source queue exists already: check it, do not declare it (amqp091; RabbitMQ 4.0, refused by 3.10)"},
	{Name: "src-consumer-name", Type: FieldString, Help: "the consumer tag (amqp091) or link name (amqp10) of the shovel's consumer (RabbitMQ 4.3, refused before)"},
	{Name: "src-delete-after-duration", Type: FieldInt, Help: "seconds after which the shovel deletes itself (RabbitMQ 4.3.5, refused before)"},
	{Name: "src-address", Type: FieldString, Help: "the AMQP 1.0 address to consume from (amqp10, required there)"},

	{Name: "dest-uri", Type: FieldStrings, Help: "the destination broker's URI, or a list of URIs tried in turn"},
	{Name: "dest-queue", Type: FieldString, Help: "the queue to publish to (amqp091; declared by the shovel unless dest-predeclared)"},
	{Name: "dest-exchange", Type: FieldString, Help: "the exchange to publish to (amqp091; instead of dest-queue)"},
	{Name: "dest-exchange-key", Type: FieldString, Help: "the routing key to publish with (amqp091; default: the message's own)"},
	{Name: "dest-queue-args", Type: FieldTable, Help: "the arguments dest-queue is declared with (amqp091)"},
	{Name: "dest-add-forward-headers", Type: FieldBool, Help: "add x-shovelled headers saying where the message came from"},
	{Name: "dest-add-timestamp-header", Type: FieldBool, Help: "add an x-shovelled-timestamp header"},
	{Name: "add-forward-headers", Type: FieldBool, Help: "the pre-3.7 name of dest-add-forward-headers (amqp091)"},
	{Name: "add-timestamp-header", Type: FieldBool, Help: "the pre-3.7 name of dest-add-timestamp-header (amqp091)"},
	{Name: "dest-publish-properties", Type: FieldTable, Help: "message properties to set on publish (amqp091: delivery_mode, …)"},
	{Name: "publish-properties", Type: FieldTable, Help: "the pre-3.7 name of dest-publish-properties (amqp091)"},
	{Name: "dest-predeclared", Type: FieldBool, Help: "the destination queue exists already: check it, do not declare it (amqp091; RabbitMQ 4.0, refused by 3.10)"},
	{Name: "dest-address", Type: FieldString, Help: "the AMQP 1.0 address to publish to (amqp10, required there)"},
	{Name: "dest-application-properties", Type: FieldTable, Help: "application properties to set on publish (amqp10)"},
	{Name: "dest-message-annotations", Type: FieldTable, Help: "message annotations to set on publish (amqp10)"},
	{Name: "dest-properties", Type: FieldTable, Help: "message properties to set on publish (amqp10)"},
}

// The keys each protocol's validation accepts besides the common ones
// (rabbit_shovel_parameters: amqp091_src_validation and the others).
var (
	amqp091Src  = []string{"src-uri", "src-queue", "src-exchange", "src-exchange-key", "src-queue-args", "src-consumer-args", "src-prefetch-count", "prefetch-count", "src-delete-after", "delete-after", "src-predeclared", "src-consumer-name", "src-delete-after-duration"}
	amqp10Src   = []string{"src-uri", "src-address", "src-prefetch-count", "src-delete-after", "src-consumer-name", "src-delete-after-duration"}
	amqp091Dest = []string{"dest-uri", "dest-queue", "dest-exchange", "dest-exchange-key", "dest-queue-args", "dest-add-forward-headers", "dest-add-timestamp-header", "add-forward-headers", "add-timestamp-header", "dest-publish-properties", "publish-properties", "dest-predeclared"}
	amqp10Dest  = []string{"dest-uri", "dest-address", "dest-add-forward-headers", "dest-add-timestamp-header", "dest-application-properties", "dest-message-annotations", "dest-properties"}
)

// missing lists the settings of required that s lacks.
func missing(required []string, s map[string]any) []string {
	var out []string
	for _, f := range required {
		if !has(s, f) {
			out = append(out, f)
		}
	}
	return out
}

// validateShovel checks what rabbit_shovel_parameters checks beyond each
// key's type (ItemSpec.Validate).
func validateShovel(s map[string]any) []Problem {
	var out []Problem
	for _, f := range missing(shovelRequired, s) {
		out = append(out, Problem{Msg: fmt.Sprintf("missing required field %q", f), Hint: fmt.Sprintf("add %s: \"amqp:///vhost\" (this broker) or \"${VARIABLE}\" (one with credentials)", f)})
	}
	for _, f := range []string{"src-uri", "dest-uri"} {
		if l, ok := s[f].([]any); ok && len(l) == 0 {
			out = append(out, Problem{Field: f, Msg: "the list of URIs is empty", Hint: "give at least one URI"})
		}
	}
	out = append(out, oneOf(s, "src-protocol", "amqp091", "amqp10")...)
	out = append(out, oneOf(s, "dest-protocol", "amqp091", "amqp10")...)
	out = append(out, oneOf(s, "ack-mode", ackModes...)...)
	for _, f := range []string{"src-delete-after", "delete-after"} {
		if v, ok := s[f].(string); ok && v != "never" && v != "queue-length" {
			out = append(out, Problem{Field: f, Msg: fmt.Sprintf("invalid value %q", v), Hint: "expected never, queue-length or a number of messages"})
		}
		if n, ok := integer(s, f); ok && n < 0 {
			out = append(out, Problem{Field: f, Msg: fmt.Sprintf("%d is negative", n), Hint: "expected never, queue-length or a number of messages"})
		}
	}
	if n, ok := integer(s, "src-delete-after-duration"); ok && n <= 0 {
		out = append(out, Problem{Field: "src-delete-after-duration", Msg: fmt.Sprintf("%d is not a positive number of seconds", n), Hint: "give the seconds after which the shovel deletes itself, at least 1"})
	}
	for _, f := range []string{"reconnect-delay", "src-prefetch-count", "prefetch-count"} {
		if n, ok := s[f].(float64); ok && n < 0 {
			out = append(out, Problem{Field: f, Msg: fmt.Sprintf("%v is negative", n), Hint: "expected a number of at least 0"})
		}
		if n, ok := integer(s, f); ok && n < 0 {
			out = append(out, Problem{Field: f, Msg: fmt.Sprintf("%d is negative", n), Hint: "expected a number of at least 0"})
		}
	}
	src, _ := str(s, "src-protocol")
	dest, _ := str(s, "dest-protocol")
	srcKeys, destKeys := amqp091Src, amqp091Dest
	if src == "amqp10" {
		srcKeys = amqp10Src
		if !has(s, "src-address") {
			out = append(out, Problem{Field: "src-protocol", Msg: "an amqp10 source needs src-address", Hint: "add src-address: the AMQP 1.0 address to consume from"})
		}
	} else {
		switch n := count(s, "src-queue", "src-exchange"); {
		case n == 0:
			out = append(out, Problem{Msg: "a shovel needs src-queue or src-exchange", Hint: "add src-queue: the queue to move messages from"})
		case n == 2:
			out = append(out, Problem{Field: "src-exchange", Msg: "src-queue and src-exchange exclude each other", Hint: "keep one of them"})
		}
	}
	if dest == "amqp10" {
		destKeys = amqp10Dest
		if !has(s, "dest-address") {
			out = append(out, Problem{Field: "dest-protocol", Msg: "an amqp10 destination needs dest-address", Hint: "add dest-address: the AMQP 1.0 address to publish to"})
		}
	} else if count(s, "dest-queue", "dest-exchange") == 2 {
		out = append(out, Problem{Field: "dest-exchange", Msg: "dest-queue and dest-exchange exclude each other", Hint: "keep one of them"})
	}
	for _, f := range shovelFields {
		k := f.Name
		if !has(s, k) || slices.Contains([]string{"src-protocol", "dest-protocol", "ack-mode", "reconnect-delay"}, k) {
			continue
		}
		switch {
		case strings.HasPrefix(k, "src-") || k == "prefetch-count" || k == "delete-after":
			if !slices.Contains(srcKeys, k) {
				out = append(out, protocolProblem(k, "src-protocol", orDefault(src)))
			}
		default:
			if !slices.Contains(destKeys, k) {
				out = append(out, protocolProblem(k, "dest-protocol", orDefault(dest)))
			}
		}
	}
	ack, _ := str(s, "ack-mode")
	for _, f := range []string{"src-delete-after", "delete-after"} {
		if _, ok := integer(s, f); ok && ack == "no-ack" {
			out = append(out, Problem{Field: f, Msg: "a number of messages to move cannot be counted with ack-mode no-ack", Hint: "use ack-mode on-confirm or on-publish, or src-delete-after: queue-length"})
		}
	}
	return out
}

func orDefault(protocol string) string {
	if protocol == "" {
		return "amqp091"
	}
	return protocol
}

func protocolProblem(key, protoField, protocol string) Problem {
	other := "amqp10"
	if protocol == "amqp10" {
		other = "amqp091"
	}
	return Problem{Field: key, Msg: fmt.Sprintf("%s is not a setting of an %s shovel (%s %s)", key, protocol, protoField, protocol), Hint: fmt.Sprintf("remove it, or set %s: %s", protoField, other)}
}

func count(s map[string]any, keys ...string) int {
	n := 0
	for _, k := range keys {
		if has(s, k) {
			n++
		}
	}
	return n
}

// oneOf checks that string setting key, when set, is one of allowed.
func oneOf(s map[string]any, key string, allowed ...string) []Problem {
	v, ok := str(s, key)
	if !ok || slices.Contains(allowed, v) {
		return nil
	}
	return []Problem{{Field: key, Msg: fmt.Sprintf("invalid value %q", v), Hint: "expected one of " + strings.Join(allowed, ", ")}}
}
