package kind

import (
	"fmt"
	"maps"
	"net/url"
	"slices"
	"strings"
)

// shovelItem is a dynamic shovel (SPEC §9: shovels: {name: {src-uri: …}}),
// the runtime parameter of component "shovel". Its fields are every key
// RabbitMQ's shovel validation accepts, on the newest version mqctl knows
// (4.3.6; the validation lists of rabbit_amqp091_shovel,
// rabbit_amqp10_shovel and rabbit_local_shovel at v4.3.5, measured):
// the amqp091, amqp10 and local source and destination keys, and the
// deprecated pre-3.7 names (delete-after, prefetch-count,
// add-forward-headers, add-timestamp-header, publish-properties). What an
// older version refuses of them is the version table's
// (rmqversion.Version.RefusesSetting).
var shovelItem = &ItemSpec{Shape: Named, Fields: shovelFields, Validate: validateShovel,
	Doc: "The vhost's dynamic shovels (SPEC §9) by name, set in place: runtime parameters of the shovel plugin, keys as the broker names them. " +
		"src-protocol and dest-protocol, amqp091 (the default), amqp10 or local (RabbitMQ 4.2), decide which keys apply; src-predeclared and dest-predeclared need RabbitMQ 4.0 (4.3 for amqp10). " +
		"URIs may hold credentials: take them from ${VARIABLE}s."}

// shovelRequired are the settings without which the broker refuses a
// shovel (Spec.Required).
var shovelRequired = []string{"src-uri", "dest-uri"}

var ackModes = []string{"on-confirm", "on-publish", "no-ack"}

// deleteAfterModes are the words src-delete-after takes besides a number
// of messages.
var deleteAfterModes = []string{"never", "queue-length"}

// DeletesItself says which setting of a shovel with settings s makes it
// delete itself once done, and its value: src-delete-after (or its
// pre-3.7 name delete-after) other than never, or
// src-delete-after-duration; key is "" for a shovel that runs until it is
// deleted. The broker deletes such a shovel's parameter when it is done,
// so that it is gone from a later read.
func DeletesItself(s map[string]any) (key string, value any) {
	for _, f := range []string{"src-delete-after", "delete-after", "src-delete-after-duration"} {
		if v, ok := s[f]; ok && v != "never" {
			return f, v
		}
	}
	return "", nil
}

// shovelFields: the keys of rabbit_shovel_parameters, in the order its
// validation lists them (common, source, destination).
var shovelFields = []Field{
	{Name: "src-protocol", Type: FieldString, Enum: ShovelProtocols(), Help: protocolHelp},
	{Name: "dest-protocol", Type: FieldString, Enum: ShovelProtocols(), Help: protocolHelp},
	{Name: "ack-mode", Type: FieldString, Enum: ackModes, Help: "on-confirm (the default), on-publish or no-ack"},
	{Name: "reconnect-delay", Type: FieldNumber, Help: "seconds to wait before reconnecting after a failure (default 1)"},

	{Name: "src-uri", Type: FieldStrings, Help: "the source broker's URI, or a list of URIs tried in turn (amqp:// is this broker's default vhost, amqp:///v its vhost v)"},
	{Name: "src-queue", Type: FieldString, Help: "the queue to consume from (amqp091, local; declared by the shovel unless src-predeclared)"},
	{Name: "src-exchange", Type: FieldString, Help: "the exchange to consume from through a queue of the shovel's own (amqp091, local; instead of src-queue)"},
	{Name: "src-exchange-key", Type: FieldString, Help: "the routing key that queue is bound with (amqp091, local; with src-exchange)"},
	{Name: "src-queue-args", Type: FieldTable, Help: "the arguments src-queue is declared with (amqp091, local)"},
	{Name: "src-consumer-args", Type: FieldTable, Help: "the arguments of the shovel's consumer (amqp091, local; amqp10 from RabbitMQ 4.3.3)"},
	{Name: "src-prefetch-count", Type: FieldInt, Help: "the most unacknowledged messages in flight (amqp091, amqp10; default 1000)"},
	{Name: "prefetch-count", Type: FieldInt, Help: "the pre-3.7 name of src-prefetch-count (amqp091)"},
	{Name: "src-delete-after", Type: FieldStringOrInt, Enum: deleteAfterModes, Help: "never (the default), queue-length (stop after the messages in the queue when it starts) or a number of messages"},
	{Name: "delete-after", Type: FieldStringOrInt, Enum: deleteAfterModes, Help: "the pre-3.7 name of src-delete-after (amqp091)"},
	{Name: "src-predeclared", Type: FieldBool, Help: "the source queue exists already: check it, do not declare it (amqp091 from RabbitMQ 4.0, local, amqp10 from 4.3)"},
	{Name: "src-consumer-name", Type: FieldString, Help: "the consumer tag (amqp091, local) or link name (amqp10) of the shovel's consumer (RabbitMQ 4.3, refused before)"},
	{Name: "src-delete-after-duration", Type: FieldInt, Min: 1, Help: "seconds after which the shovel deletes itself (RabbitMQ 4.3.5, refused before)"},
	{Name: "src-address", Type: FieldString, Help: "the AMQP 1.0 address to consume from (amqp10, required there)"},

	{Name: "dest-uri", Type: FieldStrings, Help: "the destination broker's URI, or a list of URIs tried in turn"},
	{Name: "dest-queue", Type: FieldString, Help: "the queue to publish to (amqp091, local; declared by the shovel unless dest-predeclared)"},
	{Name: "dest-exchange", Type: FieldString, Help: "the exchange to publish to (amqp091, local; instead of dest-queue)"},
	{Name: "dest-exchange-key", Type: FieldString, Help: "the routing key to publish with (amqp091, local; default: the message's own)"},
	{Name: "dest-queue-args", Type: FieldTable, Help: "the arguments dest-queue is declared with (amqp091, local)"},
	{Name: "dest-add-forward-headers", Type: FieldBool, Help: "add x-shovelled headers saying where the message came from"},
	{Name: "dest-add-timestamp-header", Type: FieldBool, Help: "add an x-shovelled-timestamp header"},
	{Name: "add-forward-headers", Type: FieldBool, Help: "the pre-3.7 name of dest-add-forward-headers (amqp091)"},
	{Name: "add-timestamp-header", Type: FieldBool, Help: "the pre-3.7 name of dest-add-timestamp-header (amqp091)"},
	{Name: "dest-publish-properties", Type: FieldTable, Help: "message properties to set on publish (amqp091: delivery_mode, …)"},
	{Name: "publish-properties", Type: FieldTable, Help: "the pre-3.7 name of dest-publish-properties (amqp091)"},
	{Name: "dest-predeclared", Type: FieldBool, Help: "the destination queue exists already: check it, do not declare it (amqp091 from RabbitMQ 4.0, local, amqp10 from 4.3)"},
	{Name: "dest-address", Type: FieldString, Help: "the AMQP 1.0 address to publish to (amqp10, required there)"},
	{Name: "dest-application-properties", Type: FieldTable, Help: "application properties to set on publish (amqp10)"},
	{Name: "dest-message-annotations", Type: FieldTable, Help: "message annotations to set on publish (amqp10)"},
	{Name: "dest-properties", Type: FieldTable, Help: "message properties to set on publish (amqp10)"},
}

// protocolHelp is the help of src-protocol and dest-protocol.
const protocolHelp = "amqp091 (the default), amqp10, or local (RabbitMQ 4.2: within this cluster, with no connection; a URI gives only its user and vhost)"

// shovelProtocol is a protocol a shovel's source or destination speaks,
// with the keys its validation accepts besides the common ones
// (RabbitMQ 4.3.5: validate_src_funs and validate_dest_funs of
// rabbit_amqp091_shovel, rabbit_amqp10_shovel and rabbit_local_shovel).
type shovelProtocol struct {
	name      string
	src, dest []string
}

// shovelProtocols are the protocols of a shovel's ends, the default
// (amqp091) first.
var shovelProtocols = []shovelProtocol{
	{name: "amqp091",
		src:  []string{"src-uri", "src-queue", "src-exchange", "src-exchange-key", "src-queue-args", "src-consumer-args", "src-prefetch-count", "prefetch-count", "src-delete-after", "delete-after", "src-predeclared", "src-consumer-name", "src-delete-after-duration"},
		dest: []string{"dest-uri", "dest-queue", "dest-exchange", "dest-exchange-key", "dest-queue-args", "dest-add-forward-headers", "dest-add-timestamp-header", "add-forward-headers", "add-timestamp-header", "dest-publish-properties", "publish-properties", "dest-predeclared"}},
	{name: "amqp10",
		src:  []string{"src-uri", "src-address", "src-prefetch-count", "src-delete-after", "src-consumer-name", "src-delete-after-duration", "src-predeclared", "src-consumer-args"},
		dest: []string{"dest-uri", "dest-address", "dest-add-forward-headers", "dest-add-timestamp-header", "dest-application-properties", "dest-message-annotations", "dest-properties", "dest-predeclared"}},
	{name: "local",
		src:  []string{"src-uri", "src-queue", "src-exchange", "src-exchange-key", "src-queue-args", "src-consumer-args", "src-consumer-name", "src-delete-after", "src-delete-after-duration", "src-predeclared"},
		dest: []string{"dest-uri", "dest-queue", "dest-exchange", "dest-exchange-key", "dest-queue-args", "dest-add-forward-headers", "dest-add-timestamp-header", "dest-predeclared"}},
}

// ShovelProtocols are the names of the protocols a shovel's ends speak,
// the default first.
func ShovelProtocols() []string {
	out := make([]string, len(shovelProtocols))
	for i, p := range shovelProtocols {
		out[i] = p.name
	}
	return out
}

// ShovelProtocol is the protocol of a shovel's source (end "src") or
// destination ("dest"): its src-protocol or dest-protocol, amqp091 when
// it is left out.
func ShovelProtocol(s map[string]any, end string) string {
	p, _ := str(s, end+"-protocol")
	return orDefault(p)
}

// protocolKeys are the keys protocol accepts at end "src" or "dest" (nil
// for a protocol mqctl does not know).
func protocolKeys(protocol, end string) []string {
	for _, p := range shovelProtocols {
		if p.name == protocol {
			if end == "src" {
				return p.src
			}
			return p.dest
		}
	}
	return nil
}

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
	out = append(out, oneOf(s, "src-protocol", ShovelProtocols()...)...)
	out = append(out, oneOf(s, "dest-protocol", ShovelProtocols()...)...)
	out = append(out, oneOf(s, "ack-mode", ackModes...)...)
	for _, f := range []string{"src-delete-after", "delete-after"} {
		if v, ok := s[f].(string); ok && !slices.Contains(deleteAfterModes, v) {
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
	src, dest := ShovelProtocol(s, "src"), ShovelProtocol(s, "dest")
	if src == "amqp10" {
		if !has(s, "src-address") {
			out = append(out, Problem{Field: "src-protocol", Msg: "an amqp10 source needs src-address", Hint: "add src-address: the AMQP 1.0 address to consume from"})
		}
		out = append(out, amqp10AddressProblems(s, "src-address")...)
	} else {
		switch n := count(s, "src-queue", "src-exchange"); {
		case n == 0:
			out = append(out, Problem{Msg: "a shovel needs src-queue or src-exchange", Hint: "add src-queue: the queue to move messages from"})
		case n == 2:
			out = append(out, Problem{Field: "src-exchange", Msg: "src-queue and src-exchange exclude each other", Hint: "keep one of them"})
		}
	}
	if dest == "amqp10" {
		if !has(s, "dest-address") {
			out = append(out, Problem{Field: "dest-protocol", Msg: "an amqp10 destination needs dest-address", Hint: "add dest-address: the AMQP 1.0 address to publish to"})
		}
		out = append(out, amqp10AddressProblems(s, "dest-address")...)
	} else if count(s, "dest-queue", "dest-exchange") == 2 {
		out = append(out, Problem{Field: "dest-exchange", Msg: "dest-queue and dest-exchange exclude each other", Hint: "keep one of them"})
	}
	for _, f := range shovelFields {
		k := f.Name
		if !has(s, k) || slices.Contains([]string{"src-protocol", "dest-protocol", "ack-mode", "reconnect-delay"}, k) {
			continue
		}
		end, protocol := "dest", dest
		if strings.HasPrefix(k, "src-") || k == "prefetch-count" || k == "delete-after" {
			end, protocol = "src", src
		}
		if keys := protocolKeys(protocol, end); keys != nil && !slices.Contains(keys, k) {
			out = append(out, protocolProblem(k, end, protocol))
		}
	}
	for _, f := range []string{"src-uri", "dest-uri"} {
		out = append(out, uriProblems(s, f)...)
		if ShovelProtocol(s, strings.TrimSuffix(f, "-uri")) == "amqp10" {
			out = append(out, amqp10URIProblems(s, f)...)
		}
		if uri, ok := emptyVhostURI(s[f]); ok {
			out = append(out, Problem{Field: f, Msg: fmt.Sprintf("%s names vhost \"\" (a URI without a host whose path is only \"/\"), which no broker has: RabbitMQ refuses the shovel (user may not connect to vhost \"\")", MaskURI(uri)),
				Hint: "write amqp:// for the default vhost \"/\", or amqp:///VHOST for vhost VHOST (%2F for \"/\")"})
		}
	}
	for _, f := range []string{"dest-publish-properties", "publish-properties"} {
		out = append(out, publishPropertyProblems(s, f)...)
	}
	ack, _ := str(s, "ack-mode")
	for _, f := range []string{"src-delete-after", "delete-after"} {
		if _, ok := integer(s, f); ok && ack == "no-ack" {
			out = append(out, Problem{Field: f, Msg: "a number of messages to move cannot be counted with ack-mode no-ack", Hint: "use ack-mode on-confirm or on-publish, or src-delete-after: queue-length"})
		}
	}
	return out
}

// publishProperties are the message properties an amqp091 shovel's
// dest-publish-properties (and its pre-3.7 name, publish-properties) may
// set, each true for a number and false for a string: the list of
// rabbit_shovel_parameters:validate_properties/2, the same from 3.10 to
// 4.3 (measured on 4.3.6: another key is "Unrecognised terms", headers
// among them; a value of the other type "should be binary" or "should be
// a number", HTTP 400).
var publishProperties = map[string]bool{
	"content_type": false, "content_encoding": false, "delivery_mode": true, "priority": true,
	"correlation_id": false, "reply_to": false, "expiration": false, "message_id": false,
	"timestamp": true, "type": false, "user_id": false, "app_id": false, "cluster_id": false,
}

// publishPropertyProblems are the problems of the message properties in
// setting key of s that RabbitMQ refuses, in key order.
func publishPropertyProblems(s map[string]any, key string) []Problem {
	props, ok := s[key].(map[string]any)
	if !ok {
		return nil
	}
	var out []Problem
	for _, k := range slices.Sorted(maps.Keys(props)) {
		number, known := publishProperties[k]
		switch v := props[k]; {
		case !known:
			hint := "a shovel cannot set headers; remove it"
			if k != "headers" {
				hint = "use one of " + strings.Join(slices.Sorted(maps.Keys(publishProperties)), ", ")
			}
			out = append(out, Problem{Field: key, Msg: fmt.Sprintf("%q is not a message property RabbitMQ lets a shovel set (Unrecognised terms)", k), Hint: hint})
		case number && !isNumber(v):
			out = append(out, Problem{Field: key, Msg: fmt.Sprintf("%s: expected a number, got %s; RabbitMQ refuses it", k, describeValue(v)), Hint: fmt.Sprintf("write %s as a number, without quotes (%s: 2)", k, k)})
		case !number && !isString(v):
			out = append(out, Problem{Field: key, Msg: fmt.Sprintf("%s: expected a string, got %s; RabbitMQ refuses it", k, describeValue(v)), Hint: fmt.Sprintf("quote it (%s: \"…\"): AMQP 0-9-1 properties other than delivery_mode, priority and timestamp are strings", k)})
		}
	}
	return out
}

func isNumber(v any) bool {
	switch v.(type) {
	case int, int64, float64:
		return true
	}
	return false
}

func isString(v any) bool {
	_, ok := v.(string)
	return ok
}

// describeValue names v's type for a problem: "string \"2\"", "true", "a
// mapping".
func describeValue(v any) string {
	switch x := v.(type) {
	case string:
		return fmt.Sprintf("string %q", x)
	case bool:
		return fmt.Sprint(x)
	case map[string]any:
		return "a mapping"
	case []any:
		return "a list"
	case nil:
		return "null"
	}
	return fmt.Sprint(v)
}

func orDefault(protocol string) string {
	if protocol == "" {
		return "amqp091"
	}
	return protocol
}

// protocolProblem is the problem of key, which the protocol of its end
// ("src" or "dest") does not take: the fix names the protocols that do.
func protocolProblem(key, end, protocol string) Problem {
	var takers []string
	for _, p := range shovelProtocols {
		if p.name != protocol && slices.Contains(protocolKeys(p.name, end), key) {
			takers = append(takers, p.name)
		}
	}
	field := end + "-protocol"
	hint := "remove it"
	if len(takers) > 0 {
		hint = fmt.Sprintf("remove it, or set %s: %s", field, strings.Join(takers, " or "))
	}
	return Problem{Field: key, Msg: fmt.Sprintf("%s is not a setting of %s %s shovel (%s %s)", key, article(protocol), protocol, field, protocol), Hint: hint}
}

// article is the indefinite article before a protocol's name.
func article(protocol string) string {
	if strings.HasPrefix(protocol, "a") {
		return "an"
	}
	return "a"
}

// emptyVhostURI reports a URI of v (a string, or a list of them) that
// names vhost "" on this broker: amqp:/// with nothing after the slash.
func emptyVhostURI(v any) (string, bool) {
	for _, u := range URIs(v) {
		if vhost, host, ok := URIVhost(u); ok && host == "" && vhost == "" {
			return u, true
		}
	}
	return "", false
}

// URIs are the URIs of a shovel's src-uri or dest-uri setting v: one, or
// a list of them (entries that are not strings left out).
func URIs(v any) []string {
	switch x := v.(type) {
	case string:
		return []string{x}
	case []any:
		var out []string
		for _, e := range x {
			if s, ok := e.(string); ok {
				out = append(out, s)
			}
		}
		return out
	}
	return nil
}

// URIVhost reads an AMQP URI as RabbitMQ's amqp_uri does: its host ("" for
// a URI without one, a direct connection to this broker, which a shovel's
// validation checks the vhost of) and its vhost, the path's rest
// unescaped, or the default vhost "/" when there is no path (amqp://h,
// amqp://; amqp:/// is vhost ""). ok is false for what is not an amqp or
// amqps URI with at most one path segment.
func URIVhost(uri string) (vhost, host string, ok bool) {
	rest, found := strings.CutPrefix(uri, "amqp://")
	if !found {
		if rest, found = strings.CutPrefix(uri, "amqps://"); !found {
			return "", "", false
		}
	}
	rest, _, _ = strings.Cut(rest, "?")
	authority, path, hasPath := strings.Cut(rest, "/")
	if i := strings.LastIndex(authority, "@"); i >= 0 {
		authority = authority[i+1:]
	}
	if !hasPath {
		return "/", authority, true
	}
	if strings.Contains(path, "/") {
		return "", "", false
	}
	v, err := url.PathUnescape(path)
	if err != nil {
		return "", "", false
	}
	return v, authority, true
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

// LocalVhost reports the vhost a shovel URI names when it is this broker,
// false otherwise. For an amqp091 or amqp10 end that is a URI without a
// host (a direct connection): amqp:// is the default vhost "/", and
// amqp:///v vhost v. A local end (RabbitMQ 4.2+) is always this broker:
// its URI gives only the user and the vhost, whatever its host says.
// As RabbitMQ's amqp_uri reads it, the path's rest is the vhost, and the
// default vhost is only for a URI without a path.
func LocalVhost(uri string, local bool) (string, bool) {
	vhost, host, ok := URIVhost(uri)
	if !ok || (host != "" && !local) {
		return "", false
	}
	return vhost, true
}

// ShovelLocalVhost reports the vhost that setting key (src-uri or
// dest-uri) of a shovel with settings s names when every URI of it (one,
// or a list) is this broker's and names that one vhost.
func ShovelLocalVhost(s map[string]any, key string) (string, bool) {
	uris := URIs(s[key])
	if len(uris) == 0 {
		return "", false
	}
	end, _, _ := strings.Cut(key, "-")
	local := ShovelProtocol(s, end) == "local"
	vhost := ""
	for i, u := range uris {
		v, ok := LocalVhost(u, local)
		if !ok || (i > 0 && v != vhost) {
			return "", false
		}
		vhost = v
	}
	return vhost, true
}
