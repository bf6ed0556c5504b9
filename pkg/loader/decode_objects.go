package loader

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/mqctl/mqctl/pkg/kind"
	"github.com/mqctl/mqctl/pkg/pattern"
	"github.com/mqctl/mqctl/pkg/suggest"
	"github.com/mqctl/mqctl/pkg/topology"
)

var (
	queueTypes    = []string{topology.QueueClassic, topology.QueueQuorum, topology.QueueStream}
	exchangeTypes = []string{"direct", "fanout", "topic", "headers"}
	overflows     = []string{"drop-head", "reject-publish", "reject-publish-dlx"}
	dlStrategies  = []string{"at-most-once", "at-least-once"}
	destTypes     = []string{topology.DestQueue, topology.DestExchange}

	// An object's fields: its settings (its topology.Definition's), its
	// arguments and the sugar read beside them.
	exchangeFields   = append(settingKeys(topology.ExchangeDefinition), "alternate_exchange", topology.ExchangeDefinition.ArgsKey)
	queueFields      = append(settingKeys(topology.QueueDefinition), topology.QueueDefinition.ArgsKey, "limits", "max_priority", "single_active_consumer", "delivery_limit", "dead_letter", "retry", "bindings", "alert")
	dlQueueFields    = append([]string{"name"}, queueFields...)
	limitsFields     = []string{"max_length", "max_length_bytes", "overflow", "message_ttl", "expires"}
	deadLetterFields = []string{"exchange", "routing_key", "strategy", "queue"}
	retryFields      = []string{"delays", "backoff", "when", "attempts"}
	backoffFields    = []string{"min", "max"}
	// backoffMisplaced: what a user may write inside retry.backoff that
	// is retry's, or that RabbitMQ's delayed retry does not have.
	backoffMisplaced = map[string]string{
		"attempts": "attempts is a field of retry, beside backoff: retry: {backoff: {min: 10s, max: 10m}, attempts: 5}",
		"when":     "when is a field of retry, beside backoff: retry: {backoff: {min: 10s, max: 10m}, when: failed}",
		"type": "RabbitMQ's delayed retry has no kinds of growth: a message waits min × its failed deliveries, at most max; " +
			"which returns wait (x-delayed-retry-type) is retry's when: failed (the default), returned or all, beside backoff",
	}
	retryWhens         = []string{"failed", "returned", "all"}
	alertFields        = []string{"max_depth"}
	queueBindingFields = []string{"exchange", "routing_key", "routing_keys", "arguments"}
	bindingFields      = []string{"source", "destination", "destination_type", "routing_key", "arguments"}
	policyFields       = append(settingKeys(topology.PolicyDefinition), topology.PolicyDefinition.ArgsKey)
)

// queueDecl is a decoded queue with the sugar it declares.
type queueDecl struct {
	q        *topology.Queue
	bindings []*topology.Binding
	// dlq is declared by dead_letter.queue; dlqFull says it was given as a
	// mapping, so that all its settings are specified (a bare name specifies
	// only the type and durability it inherits).
	dlq        *queueDecl
	dlqFull    bool
	dlqBinding *topology.Binding // nil when dead letters use the default exchange
	delays     []*topology.Queue
}

// queueOpts is what a queue inherits from where it is declared.
type queueOpts struct {
	fallbackType    string
	fallbackDurable bool
	// vhostDefault: fallbackType is the vhost's default_queue_type, which
	// the broker gives only a queue it suits (topology.ImpliedQueueType).
	vhostDefault bool
	// typeFromVhost: fallbackType is an origin's type that came from the
	// vhost's default (topology.Queue.TypeFromVhost).
	typeFromVhost bool
	role          topology.QueueRole
	origin        string
	nameField     bool // the body names the queue (dead_letter.queue as a mapping)
	// label names the queue in messages instead of `queue "<name>"`.
	label string
	// inherited are the fields the body takes from its vhost's
	// defaults.queue (withDefaults), for Queue.FromDefaults.
	inherited map[string]bool
}

// typedArg is an argument set through a typed field such as max_priority.
type typedArg struct {
	key   string
	value any
	pos   topology.Pos
	field string // as written in the file, e.g. "limits.max_length"
}

// written is the field the file writes for t, one of
// topology.WrittenFields: the defaults that dead_letter.queue and
// retry.backoff set are theirs.
func (t typedArg) written() string {
	switch t.field {
	case "dead_letter.queue (default exchange)", "dead_letter.routing_key (default)":
		return "dead_letter.queue"
	}
	return t.field
}

func render(v any) string {
	if s, ok := v.(string); ok {
		return strconv.Quote(s)
	}
	if m, ok := v.(map[string]any); ok {
		return topology.Args(m).Canonical()
	}
	return fmt.Sprint(v)
}

// argPositions is where the file writes each argument: the raw ones (at:
// their values' nodes), and the typed ones not written raw too (a raw
// argument wins over a typed one, as mergeArgs merges them); nil when none.
func argPositions(at map[string]*node, typed []typedArg) *topology.ArgPositions {
	if len(at) == 0 && len(typed) == 0 {
		return nil
	}
	out := topology.NewArgPositions(len(at) + len(typed))
	for _, t := range typed {
		if _, raw := at[t.key]; !raw && !t.pos.IsZero() {
			out.SetWritten(t.key, t.pos, t.written())
		}
	}
	for k, n := range at {
		if n != nil {
			out.Set(k, n.pos)
		}
	}
	return out
}

// mergeArgs adds the typed settings to the raw arguments; a raw argument of
// the same name with another value is an error naming both places. args
// (as d.args decoded it: nothing else holds it) is normalised in place and
// returned: a copy of each queue's was a map of garbage per queue.
func (d *decoder) mergeArgs(what string, args topology.Args, rawAt map[string]*node, typed []typedArg) topology.Args {
	for _, t := range typed {
		if raw, ok := args[t.key]; ok {
			if !topology.ValueEqual(raw, t.value) {
				d.errs.addf(t.pos, fmt.Sprintf("set it once: remove %s or arguments.%s", t.field, t.key),
					"%s: %s %s conflicts with arguments.%s %s at %s", what, t.field, render(t.value), t.key, render(raw), rawAt[t.key].pos)
			}
			continue
		}
		if args == nil {
			args = make(topology.Args, len(typed))
		}
		args[t.key] = t.value
	}
	return args.NormalizedInPlace()
}

// checkName reports empty and reserved object names.
func (d *decoder) checkName(name string, pos topology.Pos, what, kind string) bool {
	if goodName(name) {
		return true
	}
	if name == "" {
		d.errs.addf(pos, "give the "+kind+" a name", "%s name must not be empty", kind)
		return false
	}
	if topology.IsReservedName(name) {
		d.errs.addf(pos, `choose a name that does not start with "amq."`, "%s: the amq. prefix is reserved by RabbitMQ; the broker refuses to declare it", what)
		return false
	}
	if len(name) > topology.MaxNameBytes {
		d.errs.addf(pos, fmt.Sprintf("RabbitMQ takes %s names of at most %d bytes; choose a shorter one", kind, topology.MaxNameBytes),
			"%s name is %d bytes long", kind, len(name))
		return false
	}
	return true
}

// goodName reports whether checkName finds nothing wrong with name, for
// a caller that builds what only for an error.
func goodName(name string) bool {
	return name != "" && !topology.IsReservedName(name) && len(name) <= topology.MaxNameBytes
}

// checkGeneratedName reports a queue name that sugar makes longer than
// RabbitMQ takes (the rule checkName applies to a written name): what
// says where the file asks for the queue, noun what queue it is, fix how
// to get a shorter name.
func (d *decoder) checkGeneratedName(name string, pos topology.Pos, what, noun, fix string) bool {
	if len(name) <= topology.MaxNameBytes {
		return true
	}
	d.errs.addf(pos, fmt.Sprintf("RabbitMQ takes queue names of at most %d bytes; %s", topology.MaxNameBytes, fix),
		"%s: declares the %s %q, whose name is %d bytes long", what, noun, name, len(name))
	return false
}

// settingKeys are the keys of def's settings in the file, in order.
func settingKeys[T any](def topology.Definition[T]) []string {
	out := make([]string, len(def.Settings))
	for i, s := range def.Settings {
		out[i] = s.Key
	}
	return out
}

// settings decodes into o, an object named what whose fields are f (of
// the mapping body), each of its Definition's settings (def) that has a
// form (topology.SettingForm) and is written: a flag, one of its values,
// an integer or free text; a required one (no default) not written is
// refused with its example. decoded, when not nil, is told the key of
// each setting decoded (set in o). A setting of no form (an
// exchange's or a queue's type) is the caller's to decode.
func settings[T any](d *decoder, f fieldSet, body *node, what string, def topology.Definition[T], o T, decoded func(key string)) {
	for _, s := range def.Settings {
		form := s.Form()
		if form == topology.FormNone {
			continue
		}
		n := f.value(s.Key)
		if n == nil {
			if s.Default == nil {
				d.require(f, body, what, s.Key, s.Key+": "+s.Example)
			}
			continue
		}
		w := label(what, s.Key)
		var v any
		ok := false
		switch form {
		case topology.FormFlag:
			v, ok = d.boolean(n, w)
		case topology.FormEnum:
			v, ok = d.enum(n, w, s.Values...)
		case topology.FormText:
			v, ok = d.str(n, w)
		case topology.FormInt:
			// The Definitions' integers (a policy's priority) are
			// RabbitMQ's 32-bit ones.
			var i int64
			if i, ok = d.integer(n, w, -maxInt32-1, maxInt32); ok {
				v = int(i)
			}
		}
		if !ok {
			continue
		}
		s.Set(o, v)
		if decoded != nil {
			decoded(s.Key)
		}
	}
}

func (d *decoder) exchange(key, body *node) *topology.Exchange {
	what := fmt.Sprintf("exchange %q", key.value)
	d.checkName(key.value, key.pos, what, "exchange")
	return d.exchangeAs(key, body, what)
}

// exchangeAs decodes an exchange named key.value, named what in messages.
func (d *decoder) exchangeAs(key, body *node, what string) *topology.Exchange {
	name := key.value
	x := &topology.Exchange{Name: name, Type: "direct", Meta: topology.Meta{Pos: key.pos, Ignore: ignoresOf(key, body)}}
	for _, fl := range topology.ExchangeFlags {
		*fl.Of(x) = fl.Default
	}
	f, ok := d.fields(body, what, exchangeFields)
	if !ok {
		return x
	}
	if n := f.value("type"); n != nil {
		if t, ok := d.exchangeType(n, label(what, "type")); ok {
			x.Type = t
		}
	}
	settings(d, f, body, what, topology.ExchangeDefinition, x, nil)
	args, at, _ := d.args(f.value("arguments"), label(what, "arguments"), "{alternate-exchange: orders.unrouted}")
	var typed []typedArg
	if n := f.value("alternate_exchange"); n != nil {
		if s, ok := d.name(n, label(what, "alternate_exchange"), "name the exchange that receives unroutable messages, or remove the field"); ok {
			typed = append(typed, typedArg{"alternate-exchange", s, n.pos, "alternate_exchange"})
		}
	}
	x.Arguments = d.mergeArgs(what, args, at, typed)
	x.ArgPos = argPositions(at, typed)
	return x
}

func (d *decoder) exchangeType(n *node, what string) (string, bool) {
	const hint = "expected direct, fanout, topic, headers, or a plugin type starting with x- such as x-delayed-message"
	if n.bad {
		return "", false
	}
	if !textual(n) {
		d.errs.addf(n.pos, hint, "%s: expected a string, got %s", what, describe(n))
		return "", false
	}
	if slices.Contains(exchangeTypes, n.value) || (strings.HasPrefix(n.value, "x-") && len(n.value) > 2) {
		return n.value, true
	}
	h := hint
	if s := suggest.Closest(n.value, exchangeTypes); s != "" {
		h = fmt.Sprintf("did you mean %q?; %s", s, hint)
	}
	d.errs.addf(n.pos, h, "%s: invalid value %q", what, n.value)
	return "", false
}

// queueIgnores collects the ignore comments that belong to a queue itself:
// not those on its bindings, its retry tiers or its dead-letter queue.
func queueIgnores(key, body *node) []string {
	if body == nil || body.kind != mapNode {
		return ignoresOf(key, body)
	}
	var ids ignoreIDs
	ids.below(key)
	ids.of(body)
	for _, e := range body.entries {
		switch e.key.value {
		case "bindings", "retry":
		case "dead_letter":
			ids.below(e.key)
			ids.of(e.value)
			for _, de := range e.value.entries {
				if de.key.value != "queue" {
					ids.below(de.key)
					ids.below(de.value)
				}
			}
		default:
			ids.below(e.key)
			ids.below(e.value)
		}
	}
	return ids
}

// queue decodes one queue body. Errors are reported; the returned
// declaration holds whatever could be read.
func (d *decoder) queue(name string, pos topology.Pos, ignore []string, body *node, o queueOpts) *queueDecl {
	what := o.label
	if what == "" {
		what = "queue " + strconv.Quote(name) // as %q, without fmt: one per queue
		d.checkName(name, pos, what, "queue")
	}
	q := &topology.Queue{Name: name, Type: o.fallbackType, Durable: o.fallbackDurable, Role: o.role, Origin: o.origin,
		Meta: topology.Meta{Pos: pos, Ignore: ignore}}
	decl := &queueDecl{q: q}
	known := queueFields
	if o.nameField {
		known = dlQueueFields
	}
	f, ok := d.fieldsHinted(body, what, known, limitsMisplaced)
	if !ok {
		return decl
	}
	settings(d, f, body, what, topology.QueueDefinition, q, nil)
	var args topology.Args
	var at map[string]*node
	if n := f.value("arguments"); n != nil {
		args, at, _ = d.args(n, label(what, "arguments"), "{x-max-length: 1000}")
	}
	typ, args := d.queueType(f, what, args, at)
	switch {
	case typ != "":
		q.Type = typ
	case o.vhostDefault:
		q.Type = topology.ImpliedQueueType(o.fallbackType, q.Durable, q.AutoDelete)
		q.TypeFromVhost = q.Type == o.fallbackType
	default:
		q.TypeFromVhost = o.typeFromVhost
	}

	typed := d.queueSettings(f, what, decl)
	if e, ok := f.get("dead_letter"); ok {
		typed = d.deadLetter(decl, e, what, args, typed)
	}
	if e, ok := f.get("retry"); ok {
		typed = append(typed, d.retry(decl, e, what, retryContext{isDefault: o.label != "", typed: typed, args: args, at: at})...)
	}
	if n := f.value("bindings"); n != nil {
		decl.bindings = d.queueBindings(n, name, what)
	}
	q.Arguments = d.mergeArgs(what, args, at, typed)
	q.ArgPos = argPositions(at, typed)
	for _, fl := range topology.QueueFlags {
		if f.has(fl.Key) {
			if q.ArgPos == nil {
				q.ArgPos = topology.NewArgPositions(1)
			}
			q.ArgPos.Set(fl.Key, f.valuePos(fl.Key))
		}
	}
	q.FromDefaults = inheritedArgs(o.inherited, args, at, typed)
	// (A typed dead_letter without an exchange is reported by deadLetter.)
	if n := at["x-dead-letter-routing-key"]; n != nil && !q.Arguments.Has("x-dead-letter-exchange") {
		d.errs.addf(n.pos, `add x-dead-letter-exchange ("" for the default exchange), or use dead_letter: {exchange: …, routing_key: …}`,
			"%s: x-dead-letter-routing-key without x-dead-letter-exchange: RabbitMQ refuses to declare such a queue", what)
	}
	return decl
}

// inheritedArgs are the arguments a queue takes from the fields of its
// vhost's defaults.queue it does not set itself (inherited): each typed
// one from its field, the raw ones (args, at: where each is) from
// arguments, which win over a typed one as mergeArgs merges them. nil
// when none.
func inheritedArgs(inherited map[string]bool, args topology.Args, at map[string]*node, typed []typedArg) map[string]topology.Inherited {
	if len(inherited) == 0 {
		return nil
	}
	out := map[string]topology.Inherited{}
	for _, t := range typed {
		field, _, _ := strings.Cut(t.field, " (") // "dead_letter.routing_key (default)"
		if in := (topology.Inherited{Field: field, Pos: t.pos}); inherited[in.TopField()] {
			out[t.key] = in
		}
	}
	if inherited["arguments"] {
		for k := range args {
			if n := at[k]; n != nil {
				out[k] = topology.Inherited{Field: "arguments." + k, Pos: n.pos}
			}
		}
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

// queueType is the queue type the fields f set ("" when none): type:, or
// arguments.x-queue-type, which it takes from args (at: where each
// argument is).
func (d *decoder) queueType(f fieldSet, what string, args topology.Args, at map[string]*node) (string, topology.Args) {
	typ := ""
	var typeAt topology.Pos
	if n := f.value("type"); n != nil {
		if t, ok := d.enum(n, label(what, "type"), queueTypes...); ok {
			typ, typeAt = t, n.pos
		}
	}
	args, raw, lifted := topology.LiftQueueType(args)
	if !lifted {
		return typ, args
	}
	n := at[topology.QueueTypeArgument]
	s, isStr := raw.(string)
	switch {
	case !isStr || !slices.Contains(queueTypes, s):
		bad := describe(n)
		if isStr {
			bad = strconv.Quote(s)
		}
		d.errs.addf(n.pos, "expected one of classic, quorum, stream; or set type: instead", "%s: arguments.x-queue-type: invalid value %s", what, bad)
	case typ != "" && typ != s:
		d.errs.addf(n.pos, "set it once: remove type or arguments.x-queue-type", "%s: arguments.x-queue-type %q conflicts with type %q at %s", what, s, typ, typeAt)
	default:
		typ = s
	}
	return typ, args
}

// Unlimited is the delivery_limit that turns a quorum queue's delivery
// limit off: x-delivery-limit -1, which RabbitMQ 4.0+ reads as no limit
// (rabbit_quorum_queue resolve_delivery_limit/2 at v4.0.5: a negative
// value is max). Before 4.0 a negative limit dead-letters a message at its
// first return (lint's MQ203 says so for such a target).
const Unlimited = "unlimited"

// unlimitedFix is the fix of a delivery_limit out of range.
const unlimitedFix = "a non-negative integer; to turn the delivery limit off on RabbitMQ 4.0+, write delivery_limit: unlimited (x-delivery-limit -1; before 4.0 leave it out, which means no limit there, since a negative limit dead-letters a message at its first return)"

// deliveryLimit decodes delivery_limit: a non-negative integer, or
// unlimited (or -1), which is x-delivery-limit -1.
func (d *decoder) deliveryLimit(n *node, what string) (int64, bool) {
	if n.bad {
		return 0, false
	}
	if isString(n) && n.value == Unlimited {
		return -1, true
	}
	if n.kind == scalarNode && typedTag(n) == tagInt {
		if i, err := parseInt(n.value); err == nil && i == -1 {
			return -1, true
		}
		if i, err := parseInt(n.value); err == nil && i < 0 {
			d.errs.addf(n.pos, unlimitedFix, "%s: %s is out of range", what, n.value)
			return 0, false
		}
	}
	if isString(n) {
		if _, err := parseInt(n.value); err != nil {
			d.errs.addf(n.pos, unlimitedFix, "%s: expected a non-negative integer or %s, got %s", what, Unlimited, describe(n))
			return 0, false
		}
	}
	return d.integer(n, what, 0, maxInt)
}

// queueSettings decodes the queue fields that stand for arguments
// (limits, max_priority, single_active_consumer, delivery_limit), and its
// alert, which declares nothing.
func (d *decoder) queueSettings(f fieldSet, what string, decl *queueDecl) []typedArg {
	// Room for the queue's typed arguments: each function that reads
	// some appends them (a slice each, then appended, was four
	// allocations a queue).
	typed := make([]typedArg, 0, 8)
	if n := f.value("limits"); n != nil {
		typed = d.limits(n, what, typed)
	}
	if n := f.value("max_priority"); n != nil {
		if v, ok := d.integer(n, label(what, "max_priority"), 0, 255); ok {
			typed = append(typed, typedArg{"x-max-priority", v, n.pos, "max_priority"})
		}
	}
	if n := f.value("single_active_consumer"); n != nil {
		if v, ok := d.boolean(n, label(what, "single_active_consumer")); ok {
			typed = append(typed, typedArg{"x-single-active-consumer", v, n.pos, "single_active_consumer"})
		}
	}
	if n := f.value("delivery_limit"); n != nil {
		if v, ok := d.deliveryLimit(n, label(what, "delivery_limit")); ok {
			typed = append(typed, typedArg{"x-delivery-limit", v, n.pos, "delivery_limit"})
		}
	}
	if n := f.value("alert"); n != nil {
		// Accepted for `mqctl status`; it declares nothing on the broker.
		af, _ := d.fields(n, label(what, "alert"), alertFields)
		if m := af.value("max_depth"); m != nil {
			if v, ok := d.integer(m, label(what, "alert.max_depth"), 0, maxInt); ok {
				decl.q.Alert = &topology.Alert{MaxDepth: v}
			}
		}
	}
	return typed
}

func (d *decoder) limits(n *node, what string, typed []typedArg) []typedArg {
	lw := label(what, "limits")
	f, ok := d.fields(n, lw, limitsFields)
	if !ok {
		return typed
	}
	field := func(name string) (*node, string) {
		n := f.value(name)
		if n == nil {
			return nil, "" // no label built for a field not written
		}
		return n, lw + "." + name
	}
	if n, w := field("max_length"); n != nil {
		if v, ok := d.integer(n, w, 0, maxInt); ok {
			typed = append(typed, typedArg{"x-max-length", v, n.pos, "limits.max_length"})
		}
	}
	if n, w := field("max_length_bytes"); n != nil {
		if v, ok := d.size(n, w); ok {
			typed = append(typed, typedArg{"x-max-length-bytes", v, n.pos, "limits.max_length_bytes"})
		}
	}
	if n, w := field("overflow"); n != nil {
		if v, ok := d.enum(n, w, overflows...); ok {
			typed = append(typed, typedArg{"x-overflow", v, n.pos, "limits.overflow"})
		}
	}
	if n, w := field("message_ttl"); n != nil {
		if v, ok := d.duration(n, w, 0); ok {
			typed = append(typed, typedArg{"x-message-ttl", v, n.pos, "limits.message_ttl"})
		}
	}
	if n, w := field("expires"); n != nil {
		if v, ok := d.duration(n, w, 1); ok {
			typed = append(typed, typedArg{"x-expires", v, n.pos, "limits.expires"})
		}
	}
	return typed
}

// deadLetter decodes dead_letter into typed arguments, which it appends
// to typed, and, with dead_letter.queue, the DLQ and its binding. args are
// the queue's raw arguments: a raw dead-letter exchange or routing key
// counts as set.
func (d *decoder) deadLetter(decl *queueDecl, e entry, what string, args topology.Args, typed []typedArg) []typedArg {
	dw := label(what, "dead_letter")
	f, ok := d.fields(e.value, dw, deadLetterFields)
	if !ok {
		return typed
	}
	origin := decl.q.Name
	exch, exchSet := "", false
	if n := f.value("exchange"); n != nil {
		s, ok := d.str(n, dw+".exchange")
		if !ok {
			return typed
		}
		exch, exchSet = s, true
		typed = append(typed, typedArg{"x-dead-letter-exchange", s, n.pos, "dead_letter.exchange"})
	}
	rk, rkSet := "", false
	if n := f.value("routing_key"); n != nil {
		s, ok := d.str(n, dw+".routing_key")
		if !ok {
			return typed
		}
		rk, rkSet = s, true
		typed = append(typed, typedArg{"x-dead-letter-routing-key", s, n.pos, "dead_letter.routing_key"})
	}
	if n := f.value("strategy"); n != nil {
		if s, ok := d.enum(n, dw+".strategy", dlStrategies...); ok {
			typed = append(typed, typedArg{"x-dead-letter-strategy", s, n.pos, "dead_letter.strategy"})
		}
	}
	qe, hasQueue := f.get("queue")
	if !hasQueue {
		if !exchSet {
			d.errs.addf(e.key.pos, "set dead_letter.exchange, where dead letters are published, and usually dead_letter.queue, the queue that keeps them",
				"%s: names neither an exchange nor a queue", dw)
		}
		return typed
	}
	qn := qe.value
	dlqName, namePos, ok := d.deadLetterQueueName(qn, dw)
	if !ok {
		return typed
	}

	// The exchange and routing key dead letters will carry, as the broker
	// will see them: typed, else raw arguments, else the defaults.
	if !exchSet {
		if s, ok := args["x-dead-letter-exchange"].(string); ok {
			exch = s
		} else {
			typed = append(typed, typedArg{"x-dead-letter-exchange", "", qn.pos, "dead_letter.queue (default exchange)"})
		}
	}
	if !rkSet {
		if s, ok := args["x-dead-letter-routing-key"].(string); ok {
			rk = s
		} else {
			// Each queue's dead letters reach its own DLQ and no other.
			rk = origin
			if exch == "" {
				rk = dlqName // the default exchange routes by queue name
			}
			typed = append(typed, typedArg{"x-dead-letter-routing-key", rk, qn.pos, "dead_letter.routing_key (default)"})
		}
	}
	if exch == "" && rk != dlqName {
		d.errs.addf(qn.pos, "the default exchange routes by queue name: remove routing_key, or set dead_letter.exchange",
			"%s: dead letters go to the default exchange with routing key %q, which does not reach queue %q", dw, rk, dlqName)
		return typed
	}
	d.declareDLQ(decl, qe, dlqName, namePos, exch, rk)
	return typed
}

// dlqNameFix says how to shorten the name of a DLQ that dead_letter.queue
// of a vhost's defaults declares from a template ({queue}.dlq), which
// grows with the queue's name.
const dlqNameFix = "shorten the queue's name, or name the DLQ explicitly with a shorter name (dead_letter.queue: <name> on this queue)"

// deadLetterQueueName is the name dead_letter.queue (qn, under dw) gives
// the DLQ, written as a name or as a mapping with one, and where the name
// is written; false, with the error added, when it gives none.
func (d *decoder) deadLetterQueueName(qn *node, dw string) (string, topology.Pos, bool) {
	switch {
	case textual(qn):
		if (qn.templated && !d.checkGeneratedName(qn.value, qn.pos, dw+".queue", "DLQ", dlqNameFix)) ||
			!goodName(qn.value) && !d.checkName(qn.value, qn.pos, dw+".queue "+strconv.Quote(qn.value), "queue") {
			return "", qn.pos, false
		}
		return qn.value, qn.pos, true
	case qn.kind == mapNode:
		nf := qn.get("name")
		if nf == nil {
			d.errs.addf(qn.pos, "add name: <queue name>", "%s.queue: missing required field \"name\"", dw)
			return "", qn.pos, false
		}
		s, ok := d.str(nf, dw+".queue.name")
		if ok && nf.templated && !d.checkGeneratedName(s, nf.pos, dw+".queue.name", "DLQ", dlqNameFix) {
			return "", nf.pos, false
		}
		return s, nf.pos, ok
	default:
		d.errs.addf(qn.pos, "write a queue name, or a mapping {name: …, <queue settings>}", "%s.queue: expected a queue name, got %s", dw, describe(qn))
		return "", qn.pos, false
	}
}

// declareDLQ declares into decl the DLQ that dead_letter.queue (qe) names
// dlqName (written at namePos): with the queue's own type, durable (a DLQ
// keeps dead letters until someone looks at them, across a restart, even
// those of a transient queue) unless its mapping says otherwise, and, when
// dead letters go through an exchange (exch), bound to it by rk.
func (d *decoder) declareDLQ(decl *queueDecl, qe entry, dlqName string, namePos topology.Pos, exch, rk string) {
	qn := qe.value
	origin := decl.q.Name
	ignore := ignoresOf(qe.key, qn)
	if qn.kind == mapNode {
		decl.dlq = d.queue(dlqName, namePos, ignore, qn, queueOpts{
			fallbackType: decl.q.Type, fallbackDurable: true, typeFromVhost: decl.q.TypeFromVhost,
			role: topology.RoleDeadLetter, origin: origin, nameField: true,
		})
		decl.dlqFull = true
	} else {
		decl.dlq = &queueDecl{q: &topology.Queue{
			Name: dlqName, Type: decl.q.Type, Durable: true, TypeFromVhost: decl.q.TypeFromVhost,
			Role: topology.RoleDeadLetter, Origin: origin,
			Meta: topology.Meta{Pos: namePos, Ignore: ignore},
		}}
	}
	if exch != "" {
		decl.dlqBinding = &topology.Binding{
			Source: exch, Destination: dlqName, DestinationType: topology.DestQueue, RoutingKey: rk,
			Meta: topology.Meta{Pos: namePos, Ignore: ignore},
		}
	}
}

// retryContext is what retry needs to know of the queue around it.
type retryContext struct {
	isDefault bool // decoding a vhost's defaults.queue, not a queue
	typed     []typedArg
	args      topology.Args
	at        map[string]*node
}

// retry decodes a queue's retry section: retry.delays into one delay queue
// per tier, or retry.backoff (with when and attempts) into the queue's own
// arguments, which it returns.
func (d *decoder) retry(decl *queueDecl, e entry, what string, rc retryContext) []typedArg {
	rw := label(what, "retry")
	f, ok := d.fields(e.value, rw, retryFields)
	if !ok {
		return nil
	}
	if f.has("delays") && f.has("backoff") {
		first, second := f.entry("delays").key, f.entry("backoff").key
		if d.errs.before(second.pos, first.pos) {
			first, second = second, first
		}
		d.errs.addf(second.pos, "keep one: delays: [10s, 1m, …] declares a delay queue per tier that the consumer republishes to, for any queue type on any RabbitMQ version; backoff: {min: …, max: …} makes a quorum queue delay its own returned messages, with no extra queues, from RabbitMQ 4.3",
			"%s: sets both delays and backoff (%s at %s): they are two ways to make a retry wait, and a queue uses one", rw, first.value, first.pos)
		return nil
	}
	if f.has("backoff") {
		return d.backoff(decl, e, f, rw, rc)
	}
	for _, k := range []string{"when", "attempts"} {
		if f.has(k) {
			hint := "add backoff: {min: 1s, max: 1m} to have the broker delay returned messages, on a quorum queue from RabbitMQ 4.3, or remove " + k
			if k == "attempts" && f.has("delays") {
				hint = "with delays, the consumer republishes each retry and decides when to give up, from the x-death count of the tier; to bound redeliveries of a quorum queue itself, set delivery_limit"
			}
			d.errs.addf(f.entry(k).key.pos, hint, "%s.%s belongs to retry.backoff, which is not set", rw, k)
		}
	}
	delays := f.value("delays")
	if delays.isNull() {
		return nil
	}
	if delays.kind != seqNode {
		d.errs.addf(delays.pos, "write a list such as [10s, 1m, 10m]", "%s.delays: expected a list of durations, got %s", rw, describe(delays))
		return nil
	}
	origin := decl.q
	ignore := ignoresOf(e.key, e.value)
	seen := map[int64]*node{}
	for i, it := range delays.items {
		ms, ok := d.duration(it, fmt.Sprintf("%s.delays[%d]", rw, i), 1)
		if !ok {
			continue
		}
		if first, dup := seen[ms]; dup {
			d.errs.addf(it.pos, "list each delay once", "%s.delays[%d]: %s repeats the delay %s at %s", rw, i, it.value, first.value, first.pos)
			continue
		}
		seen[ms] = it
		name := origin.Name + ".retry." + FormatDuration(ms)
		if !rc.isDefault && !d.checkGeneratedName(name, it.pos, fmt.Sprintf("%s.delays[%d]", rw, i), "delay queue",
			fmt.Sprintf("shorten the queue's name to at most %d bytes: its delay queues are named <queue>.retry.<delay>", topology.MaxNameBytes-(len(name)-len(origin.Name)))) {
			continue
		}
		decl.delays = append(decl.delays, &topology.Queue{
			Name:          name,
			Type:          origin.Type,
			TypeFromVhost: origin.TypeFromVhost,
			Durable:       origin.Durable,
			Arguments: topology.Args{
				"x-message-ttl":             ms,
				"x-dead-letter-exchange":    "",
				"x-dead-letter-routing-key": origin.Name,
			},
			Role: topology.RoleDelay, Origin: origin.Name, Delay: ms,
			Meta: topology.Meta{Pos: it.pos, Ignore: ignore},
		})
	}
	return nil
}

// backoff decodes retry.backoff, retry.when and retry.attempts: quorum
// queues' delayed retry (RabbitMQ 4.3). A returned message waits
// min(min × its failed deliveries, max) before it is delivered again, and
// the attempts-th failed delivery dead-letters it. It declares no queue:
// it returns the queue's arguments x-delayed-retry-type (when, failed by
// default), x-delayed-retry-min, x-delayed-retry-max (when max is given)
// and x-delivery-limit (attempts - 1: RabbitMQ dead-letters a message once
// more than x-delivery-limit of its deliveries have failed). Whether the
// target version has delayed retry is the version table's to say
// (rmqversion Check), from the queue's Backoff.
func (d *decoder) backoff(decl *queueDecl, e entry, f fieldSet, rw string, rc retryContext) []typedArg {
	q := decl.q
	bk := f.entry("backoff").key
	bw := rw + ".backoff"
	bf, ok := d.fieldsHinted(f.value("backoff"), bw, backoffFields, hintsOf(backoffMisplaced))
	if !ok {
		return nil
	}
	if !d.require(bf, f.value("backoff"), bw, "min", "min: <the first wait, e.g. 1s>") {
		return nil
	}
	b := &topology.Backoff{Pos: bk.pos, On: "failed"}
	var typed []typedArg
	bad := false
	minN := bf.value("min")
	if v, ok := d.duration(minN, bw+".min", 1); ok {
		b.MinMS = v
		typed = append(typed, typedArg{"x-delayed-retry-min", v, minN.pos, "retry.backoff.min"})
	} else {
		bad = true
	}
	if maxN := bf.value("max"); maxN != nil {
		if v, ok := d.duration(maxN, bw+".max", 1); ok {
			if b.MinMS > 0 && v < b.MinMS {
				d.errs.addf(maxN.pos, "make max at least min, or leave it out for a fixed wait of min",
					"%s.max %s is below min %s: every retry would wait %s and never grow", bw, FormatDuration(v), FormatDuration(b.MinMS), FormatDuration(v))
				bad = true
			} else {
				b.MaxMS = v
				typed = append(typed, typedArg{"x-delayed-retry-max", v, maxN.pos, "retry.backoff.max"})
			}
		} else {
			bad = true
		}
	}
	if n := f.value("when"); n != nil {
		if v, ok := d.enum(n, rw+".when", retryWhens...); ok {
			b.On = v
			typed = append(typed, typedArg{"x-delayed-retry-type", v, n.pos, "retry.when"})
		} else {
			bad = true
		}
	} else if raw, has := rc.args["x-delayed-retry-type"]; has && !topology.ValueEqual(raw, b.On) {
		d.errs.addf(bk.pos, "write the type you mean as retry.when (failed, returned or all) and remove arguments.x-delayed-retry-type",
			"%s delays failed deliveries (when: failed, the default), but arguments.x-delayed-retry-type is %s at %s", bw, render(raw), rc.at["x-delayed-retry-type"].pos)
		bad = true
	} else {
		typed = append(typed, typedArg{"x-delayed-retry-type", b.On, bk.pos, "retry.backoff"})
	}
	if n := f.value("attempts"); n != nil {
		if v, ok := d.integer(n, rw+".attempts", 1, maxInt); ok {
			b.Attempts = v
			if t, ok := d.attemptsAgree(v, n.pos, rw, rc); ok {
				typed = append(typed, t)
			} else {
				bad = true
			}
		} else {
			bad = true
		}
	}
	if !rc.isDefault && q.Type != topology.QueueQuorum {
		d.errs.addf(bk.pos, "declare the queue with type: quorum, or use retry.delays: [10s, 1m, …], delay queues, which work for every queue type and RabbitMQ version",
			"%s: the broker's delayed retry is quorum queues' own, and this is a %s queue: RabbitMQ 4.3 refuses x-delayed-retry-* on it, earlier versions store them and never delay a retry", bw, q.Type)
		return nil
	}
	if bad {
		return nil
	}
	q.Backoff = b
	// The queue itself waits, so an ignore comment on retry is the queue's.
	q.Ignore = append(q.Ignore, ignoresOf(e.key, e.value)...)
	return typed
}

// attemptsAgree checks retry.attempts against the queue's delivery limit
// set elsewhere (delivery_limit, arguments.x-delivery-limit): attempts N is
// x-delivery-limit N-1. It returns the typed argument when they agree (or
// no other is set).
func (d *decoder) attemptsAgree(attempts int64, pos topology.Pos, rw string, rc retryContext) (typedArg, bool) {
	limit := attempts - 1
	ok := true
	conflict := func(other string, v any, at topology.Pos, fix string) {
		ok = false
		d.errs.addf(pos, fix, "%s.attempts %d dead-letters a message at its %s failed delivery, which is x-delivery-limit %d, but %s is %s at %s",
			rw, attempts, Ordinal(attempts), limit, other, render(v), at)
	}
	for _, t := range rc.typed {
		if t.key == "x-delivery-limit" && !topology.ValueEqual(t.value, limit) {
			conflict(t.field, t.value, t.pos, fmt.Sprintf("set it once: remove %s, which retry.attempts sets, or make it attempts - 1 = %d", t.field, limit))
		}
	}
	if raw, has := rc.args["x-delivery-limit"]; has && !topology.ValueEqual(raw, limit) {
		conflict("arguments.x-delivery-limit", raw, rc.at["x-delivery-limit"].pos, fmt.Sprintf("set it once: remove arguments.x-delivery-limit, which retry.attempts sets, or make it attempts - 1 = %d", limit))
	}
	return typedArg{"x-delivery-limit", limit, pos, "retry.attempts"}, ok
}

// Ordinal renders 1 as "1st", 2 as "2nd", 11 as "11th" (lint's advice
// counts deliveries with it too).
func Ordinal(n int64) string {
	suffix := "th"
	switch n % 100 {
	case 11, 12, 13:
	default:
		switch n % 10 {
		case 1:
			suffix = "st"
		case 2:
			suffix = "nd"
		case 3:
			suffix = "rd"
		}
	}
	return strconv.FormatInt(n, 10) + suffix
}

// queueBindings decodes a queue's bindings list.
func (d *decoder) queueBindings(n *node, queue, what string) []*topology.Binding {
	bw := label(what, "bindings")
	if n.isNull() {
		return nil
	}
	if n.kind != seqNode {
		d.errs.addf(n.pos, "write a list such as [{exchange: orders, routing_key: order.created}]", "%s: expected a list, got %s", bw, describe(n))
		return nil
	}
	var out []*topology.Binding
	for i, it := range n.items {
		iw := bw + "[" + strconv.Itoa(i) + "]"
		f, ok := d.fields(it, iw, queueBindingFields)
		if !ok || !d.require(f, it, iw, "exchange", "exchange: <exchange name>") {
			continue
		}
		exch, ok := d.name(f.value("exchange"), iw+".exchange", "the default exchange is bound implicitly: it routes by queue name")
		if !ok {
			continue
		}
		var args topology.Args
		var at map[string]*node
		if n := f.value("arguments"); n != nil {
			args, at, _ = d.args(n, iw+".arguments", bindingArgsExample)
		}
		type keyAt struct {
			key string
			pos topology.Pos
		}
		keys := []keyAt{{"", it.pos}}
		switch {
		case f.has("routing_key") && f.has("routing_keys"):
			d.errs.addf(f.entry("routing_keys").key.pos, "use routing_key for one key or routing_keys for several", "%s: sets both routing_key and routing_keys", iw)
			continue
		case f.has("routing_key"):
			s, ok := d.str(f.value("routing_key"), iw+".routing_key")
			if !ok {
				continue
			}
			keys[0].key = s
		case f.has("routing_keys"):
			rks := f.value("routing_keys")
			if rks.kind != seqNode {
				d.errs.addf(rks.pos, "write a list such as [order.created, order.paid], or use routing_key", "%s.routing_keys: expected a list of routing keys, got %s", iw, describe(rks))
				continue
			}
			if len(rks.items) == 0 {
				d.errs.addf(rks.pos, "list at least one key, or remove routing_keys to bind with the empty key", "%s.routing_keys: is empty, so it binds nothing", iw)
				continue
			}
			keys = keys[:0]
			for j, k := range rks.items {
				if s, ok := d.str(k, fmt.Sprintf("%s.routing_keys[%d]", iw, j)); ok {
					keys = append(keys, keyAt{s, k.pos})
				}
			}
		}
		ignore := ignoresOf(it)
		for _, k := range keys {
			out = append(out, &topology.Binding{
				Source: exch, Destination: queue, DestinationType: topology.DestQueue,
				RoutingKey: k.key, Arguments: args.Normalized(),
				Meta: topology.Meta{Pos: k.pos, Ignore: ignore, ArgPos: argPositions(at, nil)},
			})
		}
	}
	return out
}

// binding decodes one entry of a vhost's bindings list.
func (d *decoder) binding(n *node, what string) *topology.Binding {
	f, ok := d.fields(n, what, bindingFields)
	if !ok {
		return nil
	}
	okAll := d.require(f, n, what, "source", "source: <exchange name>")
	okAll = d.require(f, n, what, "destination", "destination: <queue or exchange name>") && okAll
	if !okAll {
		return nil
	}
	b := &topology.Binding{DestinationType: topology.DestQueue, Meta: topology.Meta{Pos: n.pos, Ignore: ignoresOf(n)}}
	src, ok1 := d.name(f.value("source"), what+".source", "the default exchange cannot be bound explicitly: it routes by queue name")
	dst, ok2 := d.name(f.value("destination"), what+".destination", "name the queue or exchange to bind")
	b.Source, b.Destination = src, dst
	if v := f.value("destination_type"); v != nil {
		if s, ok := d.enum(v, what+".destination_type", destTypes...); ok {
			b.DestinationType = s
		}
	}
	if v := f.value("routing_key"); v != nil {
		if s, ok := d.str(v, what+".routing_key"); ok {
			b.RoutingKey = s
		}
	}
	args, at, _ := d.args(f.value("arguments"), what+".arguments", bindingArgsExample)
	b.Arguments = args.Normalized()
	b.ArgPos = argPositions(at, nil)
	if !ok1 || !ok2 {
		return nil
	}
	return b
}

// namedDecoder is the decoder of a kind of namedKinds that reads more
// than its Definition: a kind of policy (its pattern's check, a
// definition it must have); nil for a kind read from its Definition alone
// (decoder.defined).
func namedDecoder(k kind.Kind) func(d *decoder, key, body *node, k kind.Kind) topology.Named {
	if k.Policy() {
		return (*decoder).policy
	}
	return nil
}

// defined decodes an object of kind k, a kind with a type of its own (t)
// read from its Definition alone: each setting (settings; a setting of no
// form with a Set, as a word) and its arguments under the Definition's
// key.
func (d *decoder) defined(key, body *node, k kind.Kind, t topology.Typed) topology.Named {
	what := fmt.Sprintf("%s %q", k.Label(), key.value)
	if key.value == "" {
		d.errs.addf(key.pos, "give the "+k.Label()+" a name", "%s name must not be empty", k.Label())
	}
	x := topology.NewNamed(t, key.value)
	m := t.MetaOf(x)
	m.Pos, m.Ignore = key.pos, ignoresOf(key, body)
	def := t.Def()
	f, ok := d.fields(body, what, append(settingKeys(def), def.ArgsKey))
	if !ok {
		return x
	}
	settings(d, f, body, what, def, x, nil)
	for _, s := range def.Settings {
		if n := f.value(s.Key); n != nil && s.Form() == topology.FormNone && s.Set != nil {
			if v, ok := d.str(n, label(what, s.Key)); ok {
				s.Set(x, v)
			}
		}
	}
	if n := f.value(def.ArgsKey); n != nil {
		if args, at, ok := d.args(n, label(what, def.ArgsKey), "{x-example: 1}"); ok {
			def.SetArgs(x, args.Normalized())
			m.ArgPos = argPositions(at, nil)
		}
	}
	return x
}

// policy decodes a policy or operator policy of kind k.
func (d *decoder) policy(key, body *node, k kind.Kind) topology.Named {
	kind := k.Label()
	what := fmt.Sprintf("%s %q", kind, key.value)
	if key.value == "" {
		d.errs.addf(key.pos, "give the "+kind+" a name", "%s name must not be empty", kind)
	}
	p := &topology.Policy{Name: key.value, ApplyTo: "all", Meta: topology.Meta{Pos: key.pos, Ignore: ignoresOf(key, body)}}
	f, ok := d.fields(body, what, policyFields)
	if !ok {
		return p
	}
	if body.isNull() {
		d.errs.addf(key.pos, `write {pattern: "^name\\.", definition: {…}}`, "%s: needs a pattern and a definition", what)
		return p
	}
	settings(d, f, body, what, topology.PolicyDefinition, p, func(set string) {
		if set != "pattern" {
			return
		}
		if why, fix, refused := pattern.Refused(p.Pattern); refused {
			d.errs.addf(f.valuePos("pattern"), fix, "%s: pattern %q: %s: RabbitMQ refuses the %s", what, p.Pattern, why, kind)
		}
	})
	if d.require(f, body, what, "definition", "definition: {max-length: 100000}") {
		def := f.value("definition")
		args, at, ok := d.args(def, label(what, "definition"), "{max-length: 100000}")
		switch {
		case !ok:
		case len(args) == 0:
			d.errs.addf(f.valuePos("definition"), "a policy sets at least one key, e.g. {max-length: 100000}", "%s: definition is empty", what)
		default:
			p.Definition = args.Normalized()
			p.ArgPos = argPositions(at, nil)
		}
	}
	return p
}

// bindingArgsExample is a binding's arguments as a headers exchange reads
// them.
const bindingArgsExample = "{x-match: all, format: pdf}"

// limitsMisplaced is the hint for a queue's limit written on the queue
// itself, as the broker's arguments and policy keys are (max-length): the
// same field and value in the queue's limits, the user's own value where
// it is one (an example where it is not).
func limitsMisplaced(key string, value *node) (string, bool) {
	example, ok := limitExamples[key]
	if !ok {
		return "", false
	}
	if value != nil && value.kind == scalarNode && value.value != "" {
		example = value.value
	}
	return fmt.Sprintf("%s is a field of the queue's limits: limits: {%s: %s}", key, key, example), true
}

// limitExamples are the values limitsMisplaced shows for a limit written
// with no value of its own.
var limitExamples = map[string]string{
	"max_length":       "10000",
	"max_length_bytes": "100MB",
	"overflow":         "reject-publish",
	"message_ttl":      "1h",
	"expires":          "30m",
}
