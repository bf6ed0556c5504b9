package loader

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/mqctl/mqctl/pkg/kind"
	"github.com/mqctl/mqctl/pkg/topology"
)

// maxDefaultsWork bounds (nodes in a defaults block) × (objects it applies
// to), so that a small hostile file cannot make the loader copy gigabytes.
const maxDefaultsWork = 20_000_000

// vhostBuilder expands one vhost's declarations into a topology.Vhost.
type vhostBuilder struct {
	d *decoder
	v *topology.Vhost
	// bindings are v's bindings by what tells them apart.
	bindings map[bindingKey]bound
	// queues says how each of v's queues was declared.
	queues map[string]queueBy
}

// bindingKey tells bindings apart as topology.Binding.Key does, without
// building a string of it for each binding.
type bindingKey struct{ source, destType, dest, routingKey, args string }

func keyOf(bd *topology.Binding) bindingKey {
	return bindingKey{bd.Source, bd.DestinationType, bd.Destination, bd.RoutingKey, bd.Arguments.Canonical()}
}

// bound is a binding of the vhost, and whether sugar declared it.
type bound struct {
	b         *topology.Binding
	generated bool
}

// queueBy is how a queue was declared (for messages), and whether only by
// a bare dead_letter.queue name (partial): then its type and durability
// are known, nothing else.
type queueBy struct {
	by      declaredBy
	partial bool
}

// declaredBy is how a queue was declared: in the file (field empty), or
// by field (dead_letter.queue, retry.delays) of queue. It is worded only
// for an error: a large file generates a queue for each of its many.
type declaredBy struct{ field, queue string }

func (b declaredBy) String() string {
	if b.field == "" {
		return "declared"
	}
	return fmt.Sprintf("declared by %s", b.by())
}

// by is what declared the queue, as "FIELD of queue NAME".
func (b declaredBy) by() string { return fmt.Sprintf("%s of queue %q", b.field, b.queue) }

// namedSections decodes rv's sections of namedKinds (the kinds of policy)
// into v: each object by its kind's decoder, or from its Definition alone
// (decoder.defined).
func (d *decoder) namedSections(rv *rawVhost, v *topology.Vhost) {
	for _, k := range namedKinds() {
		t, _ := topology.TypedOf(k)
		decode := namedDecoder(k)
		if decode == nil {
			decode = func(d *decoder, key, body *node, k kind.Kind) topology.Named { return d.defined(key, body, k, t) }
		}
		objs := rv.named[k]
		for _, name := range objs.order {
			o := objs.byKey[name]
			t.In(v, k).Set(name, decode(d, o.key, o.value, k))
		}
	}
}

func (l *load) buildVhost(rv *rawVhost) *topology.Vhost {
	d := l.d
	v := topology.NewVhost(rv.name)
	v.Pos, v.Ignore = rv.pos, rv.ignore
	if rv.description != nil {
		v.Description = rv.description.value
	}
	if rv.tags != nil {
		v.Tags = rv.tagsList
	}
	fallbackType := topology.QueueClassic
	if rv.defaultQueueType != nil {
		v.DefaultQueueType = rv.defaultQueueType.value
		fallbackType = v.DefaultQueueType
	}
	b := &vhostBuilder{d: d, v: v}
	what := fmt.Sprintf("vhost %q", rv.name)
	l.buildItems(rv, v)

	xdef := l.usableDefault(rv, "exchange", len(rv.exchanges.order), func(n named) {
		d.exchangeAs(&node{kind: scalarNode, tag: tagStr, value: "{exchange}", pos: n.key.pos}, n.value, label(what, "defaults.exchange"))
	})
	for _, name := range rv.exchanges.order {
		o := rv.exchanges.byKey[name]
		body, _ := withDefaults(o.value, xdef, "{exchange}", name, o.key.pos)
		v.Exchanges[name] = d.exchange(o.key, body)
		rv.exchanges.release(name)
	}

	opts := queueOpts{fallbackType: fallbackType, fallbackDurable: true, role: topology.RoleWorking, vhostDefault: rv.defaultQueueType != nil}
	qdef := l.usableDefault(rv, "queue", len(rv.queues.order), func(n named) {
		o := opts
		o.label = label(what, "defaults.queue")
		d.queue("{queue}", n.key.pos, nil, n.value, o)
	})
	decls := make([]*queueDecl, 0, len(rv.queues.order))
	for _, name := range rv.queues.order {
		o := rv.queues.byKey[name]
		body, inherited := withDefaults(o.value, qdef, "{queue}", name, o.key.pos)
		qo := opts
		qo.inherited = inherited
		decls = append(decls, d.queue(name, o.key.pos, queueIgnores(o.key, body), body, qo))
		rv.queues.release(name)
	}
	// The maps are made the size they will grow to: the queues sugar
	// declares (a DLQ for each queue of make bench's file) made them grow
	// step by step.
	queues, bindings := len(decls), len(rv.bindings)
	for _, decl := range decls {
		q, bd := decl.generated()
		queues, bindings = queues+q, bindings+len(decl.bindings)+bd
	}
	v.Queues = make(map[string]*topology.Queue, queues)
	b.queues = make(map[string]queueBy, queues)
	b.bindings = make(map[bindingKey]bound, bindings)
	for _, decl := range decls {
		v.Queues[decl.q.Name] = decl.q
		b.queues[decl.q.Name] = queueBy{}
	}

	d.namedSections(rv, v)

	// Explicit bindings first, in file order, so that a duplicate names the
	// earlier declaration; then the bindings that sugar declares.
	var explicit []*topology.Binding
	for i, it := range rv.bindings {
		if bd := d.binding(it.n, it.what); bd != nil {
			explicit = append(explicit, bd)
		}
		rv.bindings[i].n = nil
	}
	for _, decl := range decls {
		explicit = append(explicit, decl.bindings...)
	}
	sort.SliceStable(explicit, func(i, j int) bool { return l.errs.before(explicit[i].Pos, explicit[j].Pos) })
	for _, bd := range explicit {
		b.addBinding(bd, false)
	}
	for _, decl := range decls {
		b.sugar(decl)
	}
	v.SortBindings()
	return v
}

// usableDefault returns the vhost's defaults.<kind> when it is valid and
// small enough to apply, checking it once (as an object named {queue} or
// {exchange}) so that its errors are reported once, not per object.
func (l *load) usableDefault(rv *rawVhost, kind string, objects int, check func(named)) *node {
	o, ok := rv.defaults.byKey[kind]
	if !ok || o.value.isNull() {
		return nil
	}
	before := l.errs.count()
	check(o)
	if l.errs.count() > before {
		return nil
	}
	if size := countTree(o.value); size*objects > maxDefaultsWork {
		l.errs.addf(o.key.pos, "write the settings on the objects, or split the vhost across files with smaller defaults",
			"vhost %q: defaults.%s (%d YAML nodes) applied to %d %ss exceeds the loader's expansion limit", rv.name, kind, size, objects, kind)
		return nil
	}
	return o.value
}

func countTree(n *node) int {
	c := 1
	for _, e := range n.entries {
		c += countTree(e.key) + countTree(e.value)
	}
	for _, it := range n.items {
		c += countTree(it)
	}
	return c
}

// withDefaults returns body plus each field of def that body does not set
// (a set field replaces the default's field as a whole), with placeholder
// replaced by name in the default's string values, and the names of the
// fields it took from def (nil when none).
func withDefaults(body, def *node, placeholder, name string, keyPos topology.Pos) (*node, map[string]bool) {
	if def == nil || def.kind != mapNode || (!body.isNull() && body.kind != mapNode) {
		return body, nil
	}
	out := &node{kind: mapNode, pos: keyPos, ignore: body.ignore}
	if body.kind == mapNode {
		out.pos = body.pos
		out.entries = slices.Clone(body.entries)
	}
	var inherited map[string]bool
	for _, e := range def.entries {
		if body.get(e.key.value) != nil {
			continue
		}
		out.entries = append(out.entries, entry{key: e.key, value: substitute(e.value, placeholder, name)})
		if inherited == nil {
			inherited = map[string]bool{}
		}
		inherited[e.key.value] = true
	}
	return out, inherited
}

// substitute replaces placeholder in the string scalars below n, copying
// only the nodes that change.
func substitute(n *node, placeholder, name string) *node {
	switch n.kind {
	case scalarNode:
		if n.tag == tagStr && strings.Contains(n.value, placeholder) {
			c := *n
			c.value = strings.ReplaceAll(n.value, placeholder, name)
			c.templated = true
			return &c
		}
	case mapNode:
		var out *node
		for i, e := range n.entries {
			if v := substitute(e.value, placeholder, name); v != e.value {
				if out == nil {
					c := *n
					c.entries = slices.Clone(n.entries)
					out = &c
				}
				out.entries[i].value = v
			}
		}
		if out != nil {
			return out
		}
	case seqNode:
		var out *node
		for i, it := range n.items {
			if v := substitute(it, placeholder, name); v != it {
				if out == nil {
					c := *n
					c.items = slices.Clone(n.items)
					out = &c
				}
				out.items[i] = v
			}
		}
		if out != nil {
			return out
		}
	}
	return n
}

// addBinding adds bd unless the same binding exists. Two explicit
// declarations of one binding are an error naming both; a binding that
// sugar declares may repeat one written out.
func (b *vhostBuilder) addBinding(bd *topology.Binding, generated bool) {
	k := keyOf(bd)
	prev, dup := b.bindings[k]
	switch {
	case !dup:
		b.bindings[k] = bound{bd, generated}
		b.v.Bindings = append(b.v.Bindings, bd)
	case prev.generated && !generated:
		*prev.b = *bd
		b.bindings[k] = bound{prev.b, false}
	case !generated:
		dest := "queue"
		if bd.DestinationType == topology.DestExchange {
			dest = "exchange"
		}
		b.d.errs.addf(bd.Pos, "declare each binding once; remove one",
			"binding from exchange %q to %s %q with routing key %q is already declared at %s", bd.Source, dest, bd.Destination, bd.RoutingKey, prev.b.Pos)
	}
}

// generated counts the queues and bindings that decl's sugar declares
// (sugar adds them, but for those declared twice).
func (decl *queueDecl) generated() (queues, bindings int) {
	if d := decl.dlq; d != nil {
		q, bd := d.generated()
		queues, bindings = 1+q, len(d.bindings)+bd
		if decl.dlqBinding != nil {
			bindings++
		}
	}
	return queues + len(decl.delays), bindings
}

// sugar adds what a queue's dead_letter.queue and retry.delays declare.
func (b *vhostBuilder) sugar(decl *queueDecl) {
	if decl.dlq != nil {
		if b.addGenerated(decl.dlq.q, !decl.dlqFull, declaredBy{"dead_letter.queue", decl.q.Name}) {
			for _, bd := range decl.dlq.bindings {
				b.addBinding(bd, false)
			}
			b.sugar(decl.dlq)
		}
		if decl.dlqBinding != nil {
			b.addBinding(decl.dlqBinding, true)
		}
	}
	for _, t := range decl.delays {
		b.addGenerated(t, false, declaredBy{"retry.delays", decl.q.Name})
	}
}

// addGenerated adds a queue that sugar declares. A queue of the same name
// must have the same settings (only type and durability when either is a
// bare dead_letter.queue name). It reports whether q was newly added, so
// that its own sugar is expanded once.
func (b *vhostBuilder) addGenerated(q *topology.Queue, partial bool, by declaredBy) bool {
	ex, ok := b.v.Queues[q.Name]
	if !ok {
		b.v.Queues[q.Name] = q
		b.queues[q.Name] = queueBy{by, partial}
		return true
	}
	was := b.queues[q.Name]
	if diff := queueDiff(q, ex, partial || was.partial); diff != "" {
		hint := "give the queues different names, or the same settings"
		if partial && q.Role == topology.RoleDeadLetter && q.Type == ex.Type && q.Durable && !ex.Durable {
			// A bare dead_letter.queue name declares a durable DLQ.
			hint = fmt.Sprintf("a DLQ named by dead_letter.queue is durable, so that it keeps dead letters across a restart: remove durable: false from queue %q, or write dead_letter.queue as {name: %q, durable: false} to keep it transient", q.Name, q.Name)
		}
		b.d.errs.addf(q.Pos, hint,
			"queue %q declared by %s differs from the queue of that name %s at %s: %s", q.Name, by.by(), was.by, ex.Pos, diff)
		return false
	}
	if was.partial && !partial {
		b.v.Queues[q.Name] = q
		b.queues[q.Name] = queueBy{by, false}
		return true
	}
	if ex.Role == topology.RoleWorking {
		ex.Role, ex.Origin, ex.Delay = q.Role, q.Origin, q.Delay
	}
	return false
}

// queueDiff describes how a differs from b; with partial, only in type and
// durability.
func queueDiff(a, b *topology.Queue, partial bool) string {
	var diffs []string
	if a.Type != b.Type {
		diffs = append(diffs, fmt.Sprintf("type %s here, %s there", a.Type, b.Type))
	}
	if a.Durable != b.Durable {
		diffs = append(diffs, fmt.Sprintf("durable %t here, %t there", a.Durable, b.Durable))
	}
	if !partial {
		if a.AutoDelete != b.AutoDelete {
			diffs = append(diffs, fmt.Sprintf("auto_delete %t here, %t there", a.AutoDelete, b.AutoDelete))
		}
		if !a.Arguments.Equal(b.Arguments) {
			diffs = append(diffs, fmt.Sprintf("arguments %s here, %s there", argsText(a.Arguments), argsText(b.Arguments)))
		}
	}
	return strings.Join(diffs, "; ")
}

func argsText(a topology.Args) string {
	if len(a) == 0 {
		return "{}"
	}
	return a.Canonical()
}
