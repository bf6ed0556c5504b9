package graph

import (
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/mqctl/mqctl/pkg/lint"
	"github.com/mqctl/mqctl/pkg/loader"
	"github.com/mqctl/mqctl/pkg/rmqversion"
	"github.com/mqctl/mqctl/pkg/route"
	"github.com/mqctl/mqctl/pkg/topology"
)

// The graph is first built as a small format-neutral model, then written
// out by writeMermaid or writeDOT.

type nodeKind int

const (
	nodeExchange         nodeKind = iota
	nodeInternalExchange          // declared internal: clients cannot publish to it
	nodeBuiltinExchange           // the default exchange, or an amq.* exchange the broker predeclares
	nodeQueue                     // a working queue
	nodeDLQ                       // a dead-letter queue
	nodeDelay                     // a delay-tier queue
	nodeMissing                   // referenced but not declared
)

type node struct {
	id string
	// lines are the label: the object's name first, then details.
	lines []string
	kind  nodeKind
}

type edgeKind int

const (
	edgeBinding    edgeKind = iota // exchange -> queue or exchange, labelled with keys
	edgeAlternate                  // exchange -> its alternate exchange
	edgeDeadLetter                 // queue -> its dead-letter exchange (or the queue its DLRK names)
	edgeDelay                      // delay tier -> the queue its expired messages return to
)

type edge struct {
	from, to string
	labels   []string
	kind     edgeKind
}

type cluster struct {
	id    string // subgraph / cluster identifier
	title string
	nodes []*node
	edges []edge
}

type model struct {
	clusters []*cluster
}

// queueRole is what a queue is drawn as.
type queueRole int

const (
	roleWorking queueRole = iota
	roleDLQ
	roleDelay
)

// Argument names the graph reads from effective (argument + policy) tables.
const (
	argDLX        = "x-dead-letter-exchange"
	argDLRK       = "x-dead-letter-routing-key"
	argTTL        = "x-message-ttl"
	argAlternate  = "alternate-exchange"
	argDelayedTyp = "x-delayed-type"
)

func build(t *topology.Topology, ver rmqversion.Version) *model {
	m := &model{}
	ids := newIDAllocator()
	for vi, name := range t.VhostNames() {
		v := t.Vhosts[name]
		if v == nil {
			continue
		}
		m.clusters = append(m.clusters, buildVhost(vi, v, ids, ver))
	}
	return m
}

// vhostBuilder draws one vhost.
type vhostBuilder struct {
	v     *topology.Vhost
	vi    string // the vhost's index, part of every node ID
	sim   *route.Simulator
	ids   *idAllocator
	c     *cluster
	nodes map[string]*node // by namespace + "\x00" + name
	extra []*node          // nodes created for references (default, built-in, missing)
	qargs map[string]topology.Args
	roles map[string]queueRole
}

func buildVhost(vi int, v *topology.Vhost, ids *idAllocator, ver rmqversion.Version) *cluster {
	b := &vhostBuilder{
		v:     v,
		vi:    strconv.Itoa(vi),
		sim:   route.NewWith(v, route.Options{Version: ver}),
		ids:   ids,
		c:     &cluster{id: "V" + strconv.Itoa(vi), title: "vhost " + v.Name},
		nodes: map[string]*node{},
		qargs: make(map[string]topology.Args, len(v.Queues)),
		roles: make(map[string]queueRole, len(v.Queues)),
	}
	bindings := sortedBindings(v.Bindings)
	queueNames := v.QueueNames()
	for _, q := range queueNames {
		b.qargs[q] = b.sim.QueueArgs(q)
	}
	b.classifyQueues()

	for _, name := range v.ExchangeNames() {
		if name == "" {
			continue // the default exchange is drawn only where something points at it
		}
		b.declareExchange(name, v.Exchanges[name])
	}
	for _, name := range queueNames {
		b.declareQueue(name, v.Queues[name])
	}
	for _, name := range v.ExchangeNames() {
		b.alternateEdge(name)
	}
	b.bindingEdges(bindings)
	for _, name := range queueNames {
		b.deadLetterEdge(name, v.Queues[name])
	}
	sort.Slice(b.extra, func(i, j int) bool { return b.extra[i].id < b.extra[j].id })
	b.c.nodes = append(b.c.nodes, b.extra...)
	return b.c
}

func sortedBindings(in []*topology.Binding) []*topology.Binding {
	out := make([]*topology.Binding, 0, len(in))
	keys := make(map[*topology.Binding]string, len(in))
	for _, bd := range in {
		if bd == nil {
			continue
		}
		out = append(out, bd)
		keys[bd] = bd.Key()
	}
	sort.SliceStable(out, func(i, j int) bool { return keys[out[i]] < keys[out[j]] })
	return out
}

// classifyQueues takes each queue's role from lint's classification (sugar
// roles first, then the routing simulation), so that graph, lint and status
// always agree on which queues are DLQs and delay tiers.
func (b *vhostBuilder) classifyQueues() {
	for name, r := range lint.RolesWith(b.v, b.sim) {
		switch r.Role {
		case topology.RoleDelay:
			b.roles[name] = roleDelay
		case topology.RoleDeadLetter:
			b.roles[name] = roleDLQ
		}
	}
}

func (b *vhostBuilder) add(n *node, ns, name string) *node {
	b.nodes[ns+"\x00"+name] = n
	b.c.nodes = append(b.c.nodes, n)
	return n
}

func (b *vhostBuilder) declareExchange(name string, x *topology.Exchange) {
	n := &node{id: b.ids.id("E"+b.vi, name), kind: nodeExchange}
	detail := "exchange"
	if x != nil {
		detail = exchangeTypeLabel(x)
		if x.Internal {
			n.kind = nodeInternalExchange
			detail += ", internal"
		}
	}
	switch b.routingType(name) {
	case typeModulusHash:
		detail += ", " + b.modulusHashLabel(name)
	case typeLocalRandom:
		detail += ", " + b.localRandomLabel(name)
	}
	n.lines = []string{name, detail}
	b.add(n, "E", name)
}

// typeModulusHash delivers each message to exactly one of its bound
// destinations, picked by a hash of the routing keys: a core type from
// RabbitMQ 4.3, the rabbitmq_sharding plugin's before.
const typeModulusHash = "x-modulus-hash"

// modulusHashLabel says how an x-modulus-hash exchange routes, so that a
// reader never takes its edges for copies: "1 of 3 (hash)". Every binding
// is one entry of the list the hash picks from, whatever its key.
func (b *vhostBuilder) modulusHashLabel(name string) string {
	dests := map[string]bool{}
	for _, bd := range b.v.Bindings {
		if bd != nil && bd.Source == name {
			dests[bd.DestinationType+"\x00"+bd.Destination] = true
		}
	}
	return fmt.Sprintf("1 of %d (hash)", len(dests))
}

// typeLocalRandom delivers each message to one classic queue bound to it
// without a key, at random among those on the publisher's node (RabbitMQ
// 4.0+).
const typeLocalRandom = "x-local-random"

// localRandomLabel says how an x-local-random exchange routes: "1 of 2
// (random, local)".
func (b *vhostBuilder) localRandomLabel(name string) string {
	dests := map[string]bool{}
	for _, bd := range b.v.Bindings {
		if bd != nil && bd.Source == name && bd.RoutingKey == "" && bd.DestinationType == topology.DestQueue {
			dests[bd.Destination] = true
		}
	}
	return fmt.Sprintf("1 of %d (random, local)", len(dests))
}

// modulusHashShares counts the bindings of each x-modulus-hash exchange:
// a destination bound k times of n gets k/n of the messages.
func (b *vhostBuilder) modulusHashShares() map[string]int {
	out := map[string]int{}
	for _, bd := range b.v.Bindings {
		if bd != nil && b.routingType(bd.Source) == typeModulusHash {
			out[bd.Source]++
		}
	}
	return out
}

func exchangeTypeLabel(x *topology.Exchange) string {
	t := x.Type
	if t == "" {
		t = "direct"
	}
	if dt, ok := x.Arguments.String(argDelayedTyp); ok && dt != "" {
		t += " (" + dt + ")"
	}
	return t
}

// routingType is the type that decides how bindings route: a delayed-message
// exchange routes like its x-delayed-type.
func (b *vhostBuilder) routingType(exchange string) string {
	if x := b.v.Exchanges[exchange]; x != nil {
		if dt, ok := x.Arguments.String(argDelayedTyp); ok && dt != "" {
			return dt
		}
		return x.Type
	}
	if t, _, ok := builtinExchange(exchange); ok {
		return t
	}
	return ""
}

func (b *vhostBuilder) declareQueue(name string, q *topology.Queue) {
	n := &node{id: b.ids.id("Q"+b.vi, name), kind: nodeQueue}
	var details []string
	if q != nil && q.Type != "" && q.Type != topology.QueueClassic {
		details = append(details, q.Type)
	}
	switch b.roles[name] {
	case roleDLQ:
		n.kind = nodeDLQ
		details = append(details, "DLQ")
	case roleDelay:
		n.kind = nodeDelay
		if d, ok := b.delayOf(name, q); ok {
			details = append(details, "delay "+loader.FormatDuration(d))
		} else {
			details = append(details, "delay tier")
		}
	}
	if r, ok := b.sim.DelayedRetry(name); ok {
		// The broker's own delayed retry (4.3): a returned message waits
		// min × its failed deliveries, at most max, in the queue itself.
		wait := "retry after " + loader.FormatDuration(r.MinMS)
		if r.MaxMS != r.MinMS {
			wait += "…" + loader.FormatDuration(r.MaxMS)
		}
		if r.Type != route.RetryFailed {
			wait += " (" + r.Type + ")"
		}
		details = append(details, wait)
	}
	n.lines = []string{name}
	if len(details) > 0 {
		n.lines = append(n.lines, strings.Join(details, ", "))
	}
	b.add(n, "Q", name)
}

func (b *vhostBuilder) delayOf(name string, q *topology.Queue) (int64, bool) {
	if ttl, ok := b.qargs[name].Int(argTTL); ok {
		return ttl, true
	}
	if q != nil && q.Delay > 0 {
		return q.Delay, true
	}
	return 0, false
}

// exchangeRef returns the node an edge to exchange name points at: the
// declared exchange, the default exchange, a broker-predeclared amq.*
// exchange, or a node marking it as not declared.
func (b *vhostBuilder) exchangeRef(name string) string {
	if n, ok := b.nodes["E\x00"+name]; ok {
		return n.id
	}
	if n, ok := b.nodes["X\x00"+name]; ok {
		return n.id
	}
	n := &node{}
	switch typ, internal, builtin := builtinExchange(name); {
	case name == "":
		n.id = b.ids.id("D"+b.vi, "default")
		n.kind = nodeBuiltinExchange
		n.lines = []string{"(default exchange)", "direct, built-in"}
	case builtin:
		n.id = b.ids.id("E"+b.vi, name)
		n.kind = nodeBuiltinExchange
		detail := typ + ", built-in"
		if internal {
			detail = typ + ", internal, built-in"
		}
		n.lines = []string{name, detail}
	default:
		n.id = b.ids.id("M"+b.vi, "x_"+name)
		n.kind = nodeMissing
		n.lines = []string{name, "exchange not declared"}
	}
	b.nodes["X\x00"+name] = n
	b.extra = append(b.extra, n)
	return n.id
}

// queueRef returns the node of queue name, or one marking it as not declared.
func (b *vhostBuilder) queueRef(name string) string {
	if n, ok := b.nodes["Q\x00"+name]; ok {
		return n.id
	}
	if n, ok := b.nodes["Y\x00"+name]; ok {
		return n.id
	}
	n := &node{id: b.ids.id("M"+b.vi, "q_"+name), kind: nodeMissing, lines: []string{name, "queue not declared"}}
	b.nodes["Y\x00"+name] = n
	b.extra = append(b.extra, n)
	return n.id
}

func (b *vhostBuilder) alternateEdge(name string) {
	ae, ok := b.sim.ExchangeArgs(name).String(argAlternate)
	if !ok || name == "" {
		return
	}
	from := b.exchangeRef(name)
	b.c.edges = append(b.c.edges, edge{from: from, to: b.exchangeRef(ae), kind: edgeAlternate, labels: []string{"alternate"}})
}

// bindingEdges draws one edge per (source, destination) pair, labelled with
// every binding's key, in binding order.
// An x-modulus-hash exchange's edge is labelled with the destination's
// share instead: its keys do not matter.
func (b *vhostBuilder) bindingEdges(bindings []*topology.Binding) {
	shares := b.modulusHashShares()
	for i := 0; i < len(bindings); {
		first := bindings[i]
		j := i
		var labels []string
		seen := map[string]bool{}
		for ; j < len(bindings); j++ {
			bd := bindings[j]
			if bd.Source != first.Source || bd.DestinationType != first.DestinationType || bd.Destination != first.Destination {
				break
			}
			if l, ok := b.bindingLabel(bd); ok && !seen[l] {
				seen[l] = true
				labels = append(labels, l)
			}
		}
		if n := shares[first.Source]; n > 0 {
			labels = []string{fmt.Sprintf("share %d/%d", j-i, n)}
		}
		from := b.exchangeRef(first.Source)
		var to string
		if first.DestinationType == topology.DestExchange {
			to = b.exchangeRef(first.Destination)
		} else {
			to = b.queueRef(first.Destination)
		}
		b.c.edges = append(b.c.edges, edge{from: from, to: to, kind: edgeBinding, labels: labels})
		i = j
	}
}

// bindingLabel is what a binding matches on: nothing for fanout, x-match
// and the headers for headers exchanges, the routing key otherwise.
func (b *vhostBuilder) bindingLabel(bd *topology.Binding) (string, bool) {
	switch b.routingType(bd.Source) {
	case "fanout":
		return "", false
	case "headers":
		match, ok := bd.Arguments.String("x-match")
		if !ok {
			match = "all"
		}
		parts := []string{"x-match=" + match}
		for _, k := range bd.Arguments.Keys() {
			if k != "x-match" {
				parts = append(parts, k+"="+argValue(bd.Arguments[k]))
			}
		}
		return strings.Join(parts, ", "), true
	default:
		if bd.RoutingKey == "" {
			return `""`, true
		}
		return bd.RoutingKey, true
	}
}

func argValue(v any) string {
	switch x := topology.Normalize(v).(type) {
	case string:
		return x
	default:
		out, err := json.Marshal(x)
		if err != nil {
			return fmt.Sprint(x)
		}
		return string(out)
	}
}

// deadLetterEdge draws where a queue's dead letters go: a delay tier's
// expired messages return (dotted, "after 10s"); any other queue's dead
// letters go to its dead-letter exchange (dashed, "dead-letter"), or, when
// that is the default exchange, straight to the queue the DLRK names.
func (b *vhostBuilder) deadLetterEdge(name string, q *topology.Queue) {
	a := b.qargs[name]
	dlx, hasDLX := a.String(argDLX)
	if !hasDLX {
		return
	}
	rk, hasRK := a.String(argDLRK)
	from := b.nodes["Q\x00"+name].id
	var to string
	if dlx == "" && hasRK {
		to = b.queueRef(rk)
	} else {
		to = b.exchangeRef(dlx)
	}
	if b.roles[name] == roleDelay {
		label := "after (no queue TTL)"
		if d, ok := b.delayOf(name, q); ok {
			label = "after " + loader.FormatDuration(d)
		}
		b.c.edges = append(b.c.edges, edge{from: from, to: to, kind: edgeDelay, labels: []string{label}})
		return
	}
	label := "dead-letter"
	if hasRK {
		k := rk
		if k == "" {
			k = `""`
		}
		label += ": " + k
	}
	b.c.edges = append(b.c.edges, edge{from: from, to: to, kind: edgeDeadLetter, labels: []string{label}})
}

// builtinExchange reports the exchanges every vhost has without declaring
// them.
func builtinExchange(name string) (typ string, internal, ok bool) {
	x, ok := topology.BuiltinExchange(name)
	return x.Type, x.Internal, ok
}

// idAllocator hands out node IDs that are safe in both formats (ASCII
// letters, digits and underscores, starting with a letter) and unique in
// one render. IDs keep the name readable: "Q0_orders_shipping".
type idAllocator struct {
	used map[string]bool
	sb   strings.Builder
}

func newIDAllocator() *idAllocator { return &idAllocator{used: map[string]bool{}} }

func (a *idAllocator) id(prefix, name string) string {
	sb := &a.sb
	sb.Reset()
	sb.WriteString(prefix)
	sb.WriteByte('_')
	for i := 0; i < len(name); {
		r, size := utf8.DecodeRuneInString(name[i:])
		i += size
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9':
			sb.WriteRune(r)
		case r < utf8.RuneSelf || r == utf8.RuneError:
			sb.WriteByte('_')
		default:
			sb.WriteByte('u')
			sb.WriteString(strconv.FormatInt(int64(r), 16))
		}
	}
	base := sb.String()
	id := base
	for n := 2; a.used[id]; n++ {
		id = base + "_" + strconv.Itoa(n)
	}
	a.used[id] = true
	return id
}
