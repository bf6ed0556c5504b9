package kinds

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/mqctl/mqctl/pkg/broker"
	"github.com/mqctl/mqctl/pkg/kind"
	"github.com/mqctl/mqctl/pkg/topology"
)

// Shovels and federation objects are runtime parameters of their plugins:
// PUT and DELETE /api/parameters/{component}/{vhost}/{name} ({"value": …}),
// GET /api/parameters/{component}/{vhost} → [{"name", "value", "component",
// "vhost"}]. Measured on 3.10.8 and 4.0.5: both store the value exactly as
// it was written and give it back so (keys, a URI with its credentials, a
// string or a list of URIs as written, numbers as written: 1.5 stays 1.5),
// add no default (no ack-mode, no prefetch-count), and answer a write
// with 201 (new) or 204 (changed); so Read gives back what the file
// declared and a second plan is empty. Both answer an invalid URI with an
// error that quotes it whole, credentials included (`"amqp://u:pw@h:x" not
// a valid URI`): every write's error goes through scrub.

// Problem is what a Validator finds wrong with an item's settings: Field
// names the setting it concerns ("" for the item), Msg says what is wrong
// and Hint how to fix it.
type Problem struct {
	Field, Msg, Hint string
}

// Validator is implemented by a handler whose items need more than each
// field's type: required settings, settings that exclude each other, the
// values a string may take. The loader reports each problem at the
// setting's position in the file.
type Validator interface {
	Validate(settings topology.Args) []Problem
}

// parameter is a runtime parameter component's reading and writing, shared
// by the shovel and federation kinds. list names the setting that holds
// the value of a component whose value is a list (an upstream set), ""
// when the value is a mapping of the settings.
type parameter struct {
	k         kind.Kind
	component string
	list      string
}

func (p parameter) Read(ctx context.Context, api API, vhost string) ([]*topology.Item, error) {
	var list []struct {
		Name  string `json:"name"`
		Value any    `json:"value"`
	}
	label := spec(p.k).Plural
	if err := api.GetJSON(ctx, &list, fmt.Sprintf("read the %s of vhost %q", label, vhost), vhost, "parameters", p.component, vhost); err != nil {
		return nil, err
	}
	var out []*topology.Item
	for _, e := range list {
		var settings topology.Args
		switch v := e.Value.(type) {
		case map[string]any:
			if p.list != "" {
				return nil, fmt.Errorf("read the %s of vhost %q: %s %q is a mapping, not a list: mqctl does not know this form", label, vhost, spec(p.k).Label, e.Name)
			}
			settings = topology.Args(v).Normalized()
			if settings == nil {
				settings = topology.Args{}
			}
		case []any:
			if p.list == "" {
				return nil, fmt.Errorf("read the %s of vhost %q: %s %q is a list, not a mapping: mqctl does not know this form", label, vhost, spec(p.k).Label, e.Name)
			}
			settings = topology.Args{p.list: topology.Normalize(v)}
		default:
			return nil, fmt.Errorf("read the %s of vhost %q: %s %q has a value mqctl does not know (%T)", label, vhost, spec(p.k).Label, e.Name, e.Value)
		}
		out = append(out, &topology.Item{Kind: p.k, Name: e.Name, Settings: settings})
	}
	return out, nil
}

func (p parameter) Write(ctx context.Context, api API, vhost string, _, want *topology.Item) error {
	var value any = map[string]any(want.Settings)
	if want.Settings == nil {
		value = map[string]any{}
	}
	if p.list != "" {
		l := want.Settings[p.list]
		if l == nil {
			l = []any{}
		}
		value = l
	}
	body := map[string]any{"value": value}
	err := api.PutJSON(ctx, body, fmt.Sprintf("set %s %q in vhost %q", spec(p.k).Label, want.Name, vhost), vhost, "parameters", p.component, vhost, want.Name)
	return scrub(err, want, spec(p.k).Secret)
}

func (p parameter) Delete(ctx context.Context, api API, vhost string, have *topology.Item) error {
	err := api.DeleteJSON(ctx, fmt.Sprintf("delete %s %q in vhost %q", spec(p.k).Label, have.Name, vhost), vhost, "parameters", p.component, vhost, have.Name)
	if errors.Is(err, broker.ErrNotFound) && !errors.Is(err, broker.ErrVhostNotFound) {
		return nil // gone already: what the delete wanted
	}
	return scrub(err, have, spec(p.k).Secret)
}

// scrubbed is an error whose message had its secrets masked; it wraps the
// sentinel errors of the original (errors.Is still tells a refusal from a
// lost answer), not the original, whose message holds the secrets.
type scrubbed struct {
	msg  string
	kind []error
}

func (e *scrubbed) Error() string   { return e.msg }
func (e *scrubbed) Unwrap() []error { return e.kind }

var sentinels = []error{broker.ErrUnauthorized, broker.ErrForbidden, broker.ErrUnreachable, broker.ErrTLS,
	broker.ErrVhostNotFound, broker.ErrNotFound, broker.ErrRejected, broker.ErrOutcomeUnknown}

// scrub masks every secret of it in err's message: the broker quotes a
// URI it refuses whole, credentials included.
func scrub(err error, it *topology.Item, keys []string) error {
	if err == nil {
		return nil
	}
	msg := err.Error()
	var secrets []string
	for _, key := range append(slices.Clone(keys), it.Secret...) {
		collectStrings(it.Settings[key], &secrets)
	}
	// The longest first, so that a URI is masked whole before its password.
	slices.SortFunc(secrets, func(a, b string) int { return len(b) - len(a) })
	for _, s := range secrets {
		if m := fmt.Sprint(topology.MaskSecret(s)); m != s {
			msg = strings.ReplaceAll(msg, s, m)
		}
	}
	msg = broker.MaskURL(msg)
	for _, s := range secrets {
		if pw := uriPassword(s); len(pw) >= 3 {
			msg = strings.ReplaceAll(msg, pw, topology.Mask)
		}
	}
	out := &scrubbed{msg: msg}
	for _, s := range sentinels {
		if errors.Is(err, s) {
			out.kind = append(out.kind, s)
		}
	}
	return out
}

func collectStrings(v any, out *[]string) {
	switch x := v.(type) {
	case string:
		*out = append(*out, x)
	case []any:
		for _, e := range x {
			collectStrings(e, out)
		}
	}
}

// uriPassword is the password of a URI with credentials, "" when it has
// none.
func uriPassword(s string) string {
	_, rest, ok := strings.Cut(s, "://")
	if !ok {
		return ""
	}
	i := strings.LastIndex(rest, "@")
	if i < 0 {
		return ""
	}
	auth := rest[:i]
	if j := strings.Index(auth, "/"); j >= 0 {
		return ""
	}
	_, pw, _ := strings.Cut(auth, ":")
	return pw
}

// shovel is a dynamic shovel (SPEC §9: shovels: {name: {src-uri: …}}),
// the runtime parameter of component "shovel". Its fields are every key
// rabbit_shovel_parameters accepts on 3.10.8 and 4.0.5 (the beams'
// validation lists, measured): the amqp091 and amqp10 source and
// destination keys, the deprecated pre-3.7 names (delete-after,
// prefetch-count, add-forward-headers, add-timestamp-header,
// publish-properties), and src-predeclared and dest-predeclared, which
// 4.0 accepts and 3.10 refuses ("Unrecognised terms").
type shovel struct{}

var shovelParam = parameter{k: kind.Shovel, component: "shovel"}

func (shovel) Spec() kind.Spec { return spec(kind.Shovel) }
func (shovel) Shape() Shape    { return Named }

func (shovel) Read(ctx context.Context, api API, vhost string) ([]*topology.Item, error) {
	return shovelParam.Read(ctx, api, vhost)
}
func (shovel) Write(ctx context.Context, api API, vhost string, have, want *topology.Item) error {
	return shovelParam.Write(ctx, api, vhost, have, want)
}
func (shovel) Delete(ctx context.Context, api API, vhost string, have *topology.Item) error {
	return shovelParam.Delete(ctx, api, vhost, have)
}

var ackModes = []string{"on-confirm", "on-publish", "no-ack"}

// shovelFields: the keys of rabbit_shovel_parameters, in the order its
// validation lists them (common, source, destination).
var shovelFields = []Field{
	{Name: "src-protocol", Type: String, Help: "amqp091 (the default) or amqp10"},
	{Name: "dest-protocol", Type: String, Help: "amqp091 (the default) or amqp10"},
	{Name: "ack-mode", Type: String, Help: "on-confirm (the default), on-publish or no-ack"},
	{Name: "reconnect-delay", Type: Number, Help: "seconds to wait before reconnecting after a failure (default 1)"},

	{Name: "src-uri", Type: Strings, Help: "the source broker's URI, or a list of URIs tried in turn (amqp:// is this broker's default vhost, amqp:///v its vhost v)"},
	{Name: "src-queue", Type: String, Help: "the queue to consume from (amqp091; declared by the shovel unless src-predeclared)"},
	{Name: "src-exchange", Type: String, Help: "the exchange to consume from through a queue of the shovel's own (amqp091; instead of src-queue)"},
	{Name: "src-exchange-key", Type: String, Help: "the routing key that queue is bound with (amqp091, with src-exchange)"},
	{Name: "src-queue-args", Type: Table, Help: "the arguments src-queue is declared with (amqp091)"},
	{Name: "src-consumer-args", Type: Table, Help: "the arguments of the shovel's consumer (amqp091)"},
	{Name: "src-prefetch-count", Type: Int, Help: "the most unacknowledged messages in flight (default 1000)"},
	{Name: "prefetch-count", Type: Int, Help: "the pre-3.7 name of src-prefetch-count (amqp091)"},
	{Name: "src-delete-after", Type: StringOrInt, Help: "never (the default), queue-length (stop after the messages in the queue when it starts) or a number of messages"},
	{Name: "delete-after", Type: StringOrInt, Help: "the pre-3.7 name of src-delete-after (amqp091)"},
	{Name: "src-predeclared", Type: Bool, Help: "the source queue exists already: check it, do not declare it (amqp091; RabbitMQ 4.0, refused by 3.10)"},
	{Name: "src-address", Type: String, Help: "the AMQP 1.0 address to consume from (amqp10, required there)"},

	{Name: "dest-uri", Type: Strings, Help: "the destination broker's URI, or a list of URIs tried in turn"},
	{Name: "dest-queue", Type: String, Help: "the queue to publish to (amqp091; declared by the shovel unless dest-predeclared)"},
	{Name: "dest-exchange", Type: String, Help: "the exchange to publish to (amqp091; instead of dest-queue)"},
	{Name: "dest-exchange-key", Type: String, Help: "the routing key to publish with (amqp091; default: the message's own)"},
	{Name: "dest-queue-args", Type: Table, Help: "the arguments dest-queue is declared with (amqp091)"},
	{Name: "dest-add-forward-headers", Type: Bool, Help: "add x-shovelled headers saying where the message came from"},
	{Name: "dest-add-timestamp-header", Type: Bool, Help: "add an x-shovelled-timestamp header"},
	{Name: "add-forward-headers", Type: Bool, Help: "the pre-3.7 name of dest-add-forward-headers (amqp091)"},
	{Name: "add-timestamp-header", Type: Bool, Help: "the pre-3.7 name of dest-add-timestamp-header (amqp091)"},
	{Name: "dest-publish-properties", Type: Table, Help: "message properties to set on publish (amqp091: delivery_mode, …)"},
	{Name: "publish-properties", Type: Table, Help: "the pre-3.7 name of dest-publish-properties (amqp091)"},
	{Name: "dest-predeclared", Type: Bool, Help: "the destination queue exists already: check it, do not declare it (amqp091; RabbitMQ 4.0, refused by 3.10)"},
	{Name: "dest-address", Type: String, Help: "the AMQP 1.0 address to publish to (amqp10, required there)"},
	{Name: "dest-application-properties", Type: Table, Help: "application properties to set on publish (amqp10)"},
	{Name: "dest-message-annotations", Type: Table, Help: "message annotations to set on publish (amqp10)"},
	{Name: "dest-properties", Type: Table, Help: "message properties to set on publish (amqp10)"},
}

func (shovel) Fields() []Field { return shovelFields }

// The keys each protocol's validation accepts besides the common ones
// (rabbit_shovel_parameters: amqp091_src_validation and the others).
var (
	amqp091Src  = []string{"src-uri", "src-queue", "src-exchange", "src-exchange-key", "src-queue-args", "src-consumer-args", "src-prefetch-count", "prefetch-count", "src-delete-after", "delete-after", "src-predeclared"}
	amqp10Src   = []string{"src-uri", "src-address", "src-prefetch-count", "src-delete-after"}
	amqp091Dest = []string{"dest-uri", "dest-queue", "dest-exchange", "dest-exchange-key", "dest-queue-args", "dest-add-forward-headers", "dest-add-timestamp-header", "add-forward-headers", "add-timestamp-header", "dest-publish-properties", "publish-properties", "dest-predeclared"}
	amqp10Dest  = []string{"dest-uri", "dest-address", "dest-add-forward-headers", "dest-add-timestamp-header", "dest-application-properties", "dest-message-annotations", "dest-properties"}
)

// missing lists the settings kind k requires (kind.Spec.Required) that s
// lacks.
func missing(k kind.Kind, s topology.Args) []string {
	sp, _ := kind.Of(k)
	var out []string
	for _, f := range sp.Required {
		if !s.Has(f) {
			out = append(out, f)
		}
	}
	return out
}

// Validate checks what the broker's validation checks beyond each key's
// type, so that a file it would refuse fails at validate, not halfway
// through an apply.
func (shovel) Validate(s topology.Args) []Problem {
	var out []Problem
	for _, f := range missing(kind.Shovel, s) {
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
		if n, ok := s.Int(f); ok && n < 0 {
			out = append(out, Problem{Field: f, Msg: fmt.Sprintf("%d is negative", n), Hint: "expected never, queue-length or a number of messages"})
		}
	}
	for _, f := range []string{"reconnect-delay", "src-prefetch-count", "prefetch-count"} {
		if n, ok := s[f].(float64); ok && n < 0 {
			out = append(out, Problem{Field: f, Msg: fmt.Sprintf("%v is negative", n), Hint: "expected a number of at least 0"})
		}
		if n, ok := s.Int(f); ok && n < 0 {
			out = append(out, Problem{Field: f, Msg: fmt.Sprintf("%d is negative", n), Hint: "expected a number of at least 0"})
		}
	}
	src, _ := s.String("src-protocol")
	dest, _ := s.String("dest-protocol")
	srcKeys, destKeys := amqp091Src, amqp091Dest
	if src == "amqp10" {
		srcKeys = amqp10Src
		if !s.Has("src-address") {
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
		if !s.Has("dest-address") {
			out = append(out, Problem{Field: "dest-protocol", Msg: "an amqp10 destination needs dest-address", Hint: "add dest-address: the AMQP 1.0 address to publish to"})
		}
	} else if count(s, "dest-queue", "dest-exchange") == 2 {
		out = append(out, Problem{Field: "dest-exchange", Msg: "dest-queue and dest-exchange exclude each other", Hint: "keep one of them"})
	}
	for _, f := range shovelFields {
		k := f.Name
		if !s.Has(k) || slices.Contains([]string{"src-protocol", "dest-protocol", "ack-mode", "reconnect-delay"}, k) {
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
	ack, _ := s.String("ack-mode")
	for _, f := range []string{"src-delete-after", "delete-after"} {
		if _, ok := s.Int(f); ok && ack == "no-ack" {
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

func count(s topology.Args, keys ...string) int {
	n := 0
	for _, k := range keys {
		if s.Has(k) {
			n++
		}
	}
	return n
}

// oneOf checks that string setting key, when set, is one of allowed.
func oneOf(s topology.Args, key string, allowed ...string) []Problem {
	v, ok := s.String(key)
	if !ok || slices.Contains(allowed, v) {
		return nil
	}
	return []Problem{{Field: key, Msg: fmt.Sprintf("invalid value %q", v), Hint: "expected one of " + strings.Join(allowed, ", ")}}
}
