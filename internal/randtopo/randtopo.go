// Package randtopo makes random topologies and messages from a seed: every
// exchange type, exchange-to-exchange bindings, alternate exchanges, dead
// letters, TTLs, length limits and policies, with messages aimed at the
// bindings. The routing simulator's differential test against the real
// brokers (internal/difftest) and the flow diff's property test
// (pkg/flow) run on them.
package randtopo

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"sort"
	"strings"

	"github.com/mqctl/mqctl/pkg/rmqversion"
	"github.com/mqctl/mqctl/pkg/route"
	"github.com/mqctl/mqctl/pkg/topology"
)

// Case is one generated topology with the messages to publish through it.
type Case struct {
	Seed  uint64
	Vhost *topology.Vhost
	// AMQPOnly are the bindings of Vhost that only AMQP can declare:
	// headers bindings with a void (null) criterion, which the management
	// API refuses.
	AMQPOnly []*topology.Binding
	Messages []Message
}

// Message is one message to publish.
type Message struct {
	// ID is the AMQP message-id, unique within the case; every copy of the
	// message (dead letters included) carries it.
	ID string
	route.Message
	// Expiration is the per-message TTL property ("" or "0").
	Expiration string
}

// Topology returns the case's vhost as a topology, e.g. to write it as YAML.
func (c *Case) Topology() *topology.Topology {
	t := topology.New()
	t.Vhosts[c.Vhost.Name] = c.Vhost
	return t
}

// String describes the message as it is published.
func (m Message) String() string {
	var sb strings.Builder
	ex := m.Exchange
	if ex == "" {
		ex = "(default)"
	}
	fmt.Fprintf(&sb, "%s: exchange %s, routing key %q", m.ID, ex, m.RoutingKey)
	if len(m.Headers) > 0 {
		fmt.Fprintf(&sb, ", headers %s", describeHeaders(m.Headers))
	}
	if m.Expiration != "" {
		fmt.Fprintf(&sb, ", expiration %q", m.Expiration)
	}
	return sb.String()
}

func describeHeaders(h map[string]any) string {
	keys := make([]string, 0, len(h))
	for k := range h {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%s=%s", k, describeValue(h[k]))
	}
	return "{" + strings.Join(parts, ", ") + "}"
}

func describeValue(v any) string {
	switch x := v.(type) {
	case nil:
		return "void"
	case string:
		return fmt.Sprintf("%q", x)
	case []any:
		parts := make([]string, len(x))
		for i, e := range x {
			parts[i] = describeValue(e)
		}
		return "[" + strings.Join(parts, ", ") + "]"
	}
	return fmt.Sprintf("%v(%T)", v, v)
}

// Names the generator uses.
const (
	// MissingExchange is never declared: alternate exchanges, dead-letter
	// exchanges and publishes sometimes name it.
	MissingExchange = "x-missing"
	expiringTTL     = 1       // ms: expires before anyone looks
	longTTL         = 3600000 // ms: never expires during a run
	// maxExpiring bounds the queues that pass every message on at once
	// (TTL or length limit), which bounds the copies an automatic
	// dead-letter cascade can make.
	maxExpiring = 3
)

// BuiltinSources are the broker's own exchanges the cases bind from and
// publish to.
func BuiltinSources() []string { return slices.Clone(builtinSrcs) }

// ExpiresAtOnce bounds the TTLs (ms) treated as "expires before anyone
// looks": the cases' short TTLs are below it, their long ones never expire
// during a run.
const ExpiresAtOnce = 1000

var (
	keyWords    = []string{"a", "b", "c"}
	headerKeys  = []string{"h1", "h2", "h3", "x-h", "x-first-death-reason", "x-first-death-queue"}
	builtinSrcs = []string{"amq.direct", "amq.fanout", "amq.topic", "amq.headers", "amq.match"}
	xMatches    = []string{"", "all", "any", "all-with-x", "any-with-x"}
)

type gen struct {
	r         *rand.Rand
	v         *topology.Vhost
	exchanges []string
	queues    []string
	bindings  map[string]bool
	// expiring holds the queues that may pass every message on at once:
	// a TTL of 0 or 1 ms or a length limit of 0, by argument or policy.
	expiring map[string]bool
	priority int
}

// Generate builds the case for seed: 2–6 exchanges of every type (some
// internal, some with an alternate exchange by argument or policy), 3–10
// classic or quorum queues (some with a dead-letter exchange with or
// without a routing key, by argument or policy, some with a message TTL
// or a length limit, by argument, policy or operator policy), queue and
// exchange-to-exchange bindings (cycles allowed) with topic patterns and
// headers criteria, and the given number of random messages (default
// and built-in exchanges too, CC and BCC keys, headers of mixed AMQP
// types, per-message expiration). The same seed always gives the same
// case.
func Generate(seed uint64, vhost string, messages int) *Case {
	g := &gen{r: rand.New(rand.NewPCG(seed, 0x6d71637463746c)), v: topology.NewVhost(vhost), bindings: map[string]bool{}, expiring: map[string]bool{}}
	c := &Case{Seed: seed, Vhost: g.v}

	nx := 2 + g.r.IntN(5)
	for i := 1; i <= nx; i++ {
		g.exchanges = append(g.exchanges, fmt.Sprintf("x%d", i))
	}
	nq := 3 + g.r.IntN(8)
	for i := 1; i <= nq; i++ {
		g.queues = append(g.queues, fmt.Sprintf("q%d", i))
	}
	for _, name := range g.exchanges {
		g.exchange(name)
	}
	for _, name := range g.queues {
		g.queue(name)
	}
	g.policies()
	for _, q := range g.queues {
		for range g.weighted(10, 45, 30, 15) {
			g.bindQueue(q)
		}
	}
	for range g.r.IntN(5) {
		g.bindExchange()
	}
	for _, b := range g.v.Bindings {
		if HasVoid(b.Arguments) {
			c.AMQPOnly = append(c.AMQPOnly, b)
		}
	}
	for i := range messages {
		c.Messages = append(c.Messages, g.message(fmt.Sprintf("m%04d", i+1)))
	}
	return c
}

// weighted returns i with probability w[i]/sum(w).
func (g *gen) weighted(w ...int) int {
	sum := 0
	for _, x := range w {
		sum += x
	}
	n := g.r.IntN(sum)
	for i, x := range w {
		if n < x {
			return i
		}
		n -= x
	}
	return len(w) - 1
}

func (g *gen) chance(percent int) bool { return g.r.IntN(100) < percent }

func pick[T any](g *gen, xs []T) T { return xs[g.r.IntN(len(xs))] }

func (g *gen) exchange(name string) {
	x := &topology.Exchange{Name: name, Durable: true, Internal: g.chance(12)}
	x.Type = []string{"direct", "fanout", "topic", "headers"}[g.weighted(25, 20, 30, 25)]
	if g.chance(25) {
		x.Arguments = topology.Args{"alternate-exchange": g.exchangeTarget()}
	}
	g.v.Exchanges[name] = x
}

// exchangeTarget names an exchange for an alternate or dead-letter
// exchange: usually a declared one, sometimes a built-in or a missing one.
func (g *gen) exchangeTarget() string {
	switch g.weighted(85, 5, 10) {
	case 0:
		return pick(g, g.exchanges)
	case 1:
		return "amq.fanout"
	}
	return MissingExchange
}

func (g *gen) queue(name string) {
	q := &topology.Queue{Name: name, Type: topology.QueueClassic, Durable: true}
	if g.chance(25) {
		q.Type = topology.QueueQuorum
	}
	args := topology.Args{}
	// A dead-letter routing key without a dead-letter exchange makes the
	// broker refuse the queue (routing_key_but_no_dlx_defined); a policy
	// may still set one alone.
	if g.chance(55) {
		args["x-dead-letter-exchange"] = g.deadLetterExchange()
		if g.chance(50) {
			args["x-dead-letter-routing-key"] = g.deadLetterKey()
		}
	}
	if g.chance(20) {
		args["x-message-ttl"] = g.ttl([]string{name})
	}
	if g.chance(6) {
		args["x-max-length"] = g.maxLength([]string{name})
	}
	q.Arguments = args.Normalized()
	g.v.Queues[name] = q
}

func (g *gen) deadLetterExchange() string {
	switch g.weighted(70, 20, 10) {
	case 0:
		return g.exchangeTarget()
	case 1:
		return "" // the default exchange
	}
	return MissingExchange
}

func (g *gen) deadLetterKey() string {
	if g.chance(50) {
		return pick(g, g.queues) // reaches that queue through the default exchange
	}
	return g.routingKey()
}

// passOn says whether queues may get a setting that passes every message
// on at once (a TTL of 0 or 1 ms, a length limit of 0): usually, while at
// most maxExpiring queues of a case have one.
func (g *gen) passOn(queues []string) bool {
	n := len(g.expiring)
	for _, q := range queues {
		if !g.expiring[q] {
			n++
		}
	}
	if n > maxExpiring || !g.chance(70) {
		return false
	}
	for _, q := range queues {
		g.expiring[q] = true
	}
	return true
}

// ttl returns a message TTL for queues: most expire at once, some never
// during a run.
func (g *gen) ttl(queues []string) int64 {
	if g.passOn(queues) {
		return int64(g.r.IntN(expiringTTL + 1)) // 0 or 1 ms
	}
	return longTTL
}

// maxLength returns a length limit for queues: 0 (every message goes at
// once, dead-lettered as maxlen) or one never reached during a run.
func (g *gen) maxLength(queues []string) int64 {
	if g.passOn(queues) {
		return 0
	}
	return 100000
}

// policies adds up to two queue policies (dead-letter settings and TTLs)
// and sometimes an exchange policy with an alternate exchange, each
// matching a random subset of the names, with distinct priorities.
func (g *gen) policies() {
	for i := range g.r.IntN(3) {
		def := topology.Args{}
		if g.chance(60) {
			def["dead-letter-exchange"] = g.deadLetterExchange()
		}
		if g.chance(40) {
			def["dead-letter-routing-key"] = g.deadLetterKey()
		}
		withTTL, withMaxLen := g.chance(30), g.chance(12)
		if g.chance(15) {
			// Quorum queues do not support queue-mode: the policy does not
			// apply to them at all, a lower-priority one may instead.
			def["queue-mode"] = "default"
		}
		applyTo := "queues"
		if g.chance(25) {
			applyTo = "all"
			def["alternate-exchange"] = g.exchangeTarget()
		}
		if len(def) == 0 && !withTTL {
			def["dead-letter-exchange"] = g.deadLetterExchange()
		}
		names := g.queues
		if applyTo == "all" {
			names = append(append([]string(nil), g.queues...), g.exchanges...)
		}
		chosen := g.subset(names)
		qs := g.onlyQueues(chosen)
		if withTTL {
			def["message-ttl"] = g.ttl(qs)
		}
		if withMaxLen {
			def["max-length"] = g.maxLength(qs)
		}
		g.priority++
		g.v.Policies[fmt.Sprintf("p%d", i+1)] = g.policy(fmt.Sprintf("p%d", i+1), applyTo, chosen, def)
	}
	if g.chance(30) {
		g.priority++
		g.v.Policies["ae"] = g.policy("ae", "exchanges", g.subset(g.exchanges), topology.Args{"alternate-exchange": g.exchangeTarget()})
	}
	// An operator policy's limits combine with a policy's and the queue's
	// own: the smallest applies.
	if g.chance(20) {
		chosen := g.subset(g.queues)
		def := topology.Args{"message-ttl": g.ttl(chosen)}
		if g.chance(30) {
			def = topology.Args{"max-length": g.maxLength(chosen)}
		}
		g.v.OperatorPolicies["op"] = g.policy("op", "queues", chosen, def)
	}
}

func (g *gen) onlyQueues(names []string) []string {
	var qs []string
	for _, n := range names {
		if g.v.Queues[n] != nil {
			qs = append(qs, n)
		}
	}
	return qs
}

// subset returns a random non-empty subset of names.
func (g *gen) subset(names []string) []string {
	var chosen []string
	for _, n := range names {
		if g.chance(40) {
			chosen = append(chosen, n)
		}
	}
	if len(chosen) == 0 {
		chosen = []string{pick(g, names)}
	}
	return chosen
}

func (g *gen) policy(name, applyTo string, chosen []string, def topology.Args) *topology.Policy {
	return &topology.Policy{
		Name:       name,
		Pattern:    "^(" + strings.ReplaceAll(strings.Join(chosen, "|"), ".", `\.`) + ")$",
		ApplyTo:    applyTo,
		Priority:   g.priority,
		Definition: def.Normalized(),
	}
}

// source picks the source exchange of a binding: a declared one, or now
// and then a built-in.
func (g *gen) source() string {
	if g.chance(8) {
		return pick(g, builtinSrcs)
	}
	return pick(g, g.exchanges)
}

func (g *gen) exchangeType(name string) string {
	if x := g.v.Exchanges[name]; x != nil {
		return x.Type
	}
	switch name {
	case "amq.direct":
		return "direct"
	case "amq.fanout":
		return "fanout"
	case "amq.topic":
		return "topic"
	}
	return "headers"
}

func (g *gen) bindQueue(q string) {
	src := g.source()
	g.bind(&topology.Binding{Source: src, Destination: q, DestinationType: topology.DestQueue})
}

func (g *gen) bindExchange() {
	src := g.source()
	dst := pick(g, g.exchanges)
	if g.chance(8) {
		dst = pick(g, builtinSrcs)
	}
	g.bind(&topology.Binding{Source: src, Destination: dst, DestinationType: topology.DestExchange})
}

// bind fills in the key or arguments the source's type routes by and adds
// the binding unless an identical one exists.
func (g *gen) bind(b *topology.Binding) {
	switch g.exchangeType(b.Source) {
	case "direct":
		b.RoutingKey = g.routingKey()
	case "topic":
		b.RoutingKey = g.pattern()
	case "fanout":
		if g.chance(30) {
			b.RoutingKey = g.routingKey() // ignored
		}
	case "headers":
		b.Arguments = g.headersCriteria()
	}
	if g.bindings[b.Key()] {
		return
	}
	g.bindings[b.Key()] = true
	g.v.Bindings = append(g.v.Bindings, b)
}

// routingKey returns 0–3 words, mostly a, b and c, sometimes an empty
// word (a..b, .a, a.) or a literal * or #.
func (g *gen) routingKey() string {
	n := g.weighted(10, 30, 35, 25)
	words := make([]string, n)
	for i := range words {
		switch g.weighted(86, 10, 2, 2) {
		case 0:
			words[i] = pick(g, keyWords)
		case 1:
			words[i] = ""
		case 2:
			words[i] = "*"
		default:
			words[i] = "#"
		}
	}
	return strings.Join(words, ".")
}

// maxHashWords is the most # words a topic binding key may have:
// RabbitMQ 4.3.5 and later refuse more ("Topic binding key '#.a.#.b.#'
// uses 3 '#' wildcards, at most 2 are allowed"; 4.3.5 release notes,
// rabbitmq-server#17039), and mqctl's lint refuses them for every
// version, so that a file stays portable.
const maxHashWords = 2

// pattern returns a topic binding key of 0–4 words with * and #, at most
// maxHashWords of them #. A # drawn past those becomes a *: that draws
// nothing more from the generator, so every seed whose keys had no more
// # words gives the case it gave before (the CI seeds had one such key,
// "#.#.*.#" in seed 26, now "#.#.*.*").
func (g *gen) pattern() string {
	n := g.weighted(8, 30, 32, 20, 10)
	words := make([]string, n)
	hashes := 0
	for i := range words {
		switch g.weighted(55, 20, 20, 5) {
		case 0:
			words[i] = pick(g, keyWords)
		case 1:
			words[i] = "*"
		case 2:
			words[i] = "#"
			if hashes++; hashes > maxHashWords {
				words[i] = "*"
			}
		default:
			words[i] = ""
		}
	}
	return strings.Join(words, ".")
}

// headersCriteria returns a headers binding's arguments: an x-match (or
// none) and 0–3 criteria on a few keys with values of mixed types,
// sometimes void (presence only).
func (g *gen) headersCriteria() topology.Args {
	args := topology.Args{}
	if m := xMatches[g.weighted(15, 25, 25, 15, 20)]; m != "" {
		args["x-match"] = m
	}
	for range g.weighted(10, 40, 35, 15) {
		k := pick(g, headerKeys)
		if g.chance(7) {
			args[k] = nil
			continue
		}
		args[k] = g.criterionValue(k)
	}
	return args.Normalized()
}

func (g *gen) criterionValue(key string) any {
	switch key {
	case "x-first-death-reason":
		return pick(g, []string{"rejected", "expired"})
	case "x-first-death-queue":
		return pick(g, g.queues)
	}
	if g.chance(6) {
		return pick(g, []any{[]any{"v1"}, []any{int64(1)}, []any{1.5}})
	}
	return pick(g, []any{"v1", "v2", "1", int64(1), int64(2), 1.5, true, false})
}

// headerValue returns a message header value: the criteria values with
// various AMQP field types (signed 32- and 64-bit integers, 1.0 as a
// double, float32), void, or an array.
func (g *gen) headerValue(key string) any {
	switch g.weighted(80, 5, 5, 5, 5) {
	case 0:
		return g.criterionValue(key)
	case 1:
		return pick(g, []any{int32(1), int32(2)})
	case 2:
		return pick(g, []any{1.0, float32(1.5)})
	case 3:
		return nil
	}
	// Arrays compare element by element, AMQP types included.
	return pick(g, []any{[]any{"v1"}, []any{int64(1)}, []any{int32(1)}, []any{1.5}, []any{1.0}})
}

func (g *gen) message(id string) Message {
	m := Message{ID: id}
	switch g.weighted(72, 12, 10, 3, 3, 2) {
	case 0:
		m.Exchange = pick(g, g.exchanges)
	case 1:
		m.Exchange = ""
	case 2:
		m.Exchange = pick(g, builtinSrcs)
	case 3:
		m.Exchange = "amq.rabbitmq.trace" // internal
	case 4:
		m.Exchange = MissingExchange
	default:
		m.Exchange = "amq.default"
	}
	m.RoutingKey = g.destinationKey(m.Exchange)
	if g.chance(50) {
		m.Headers = map[string]any{}
		for range 1 + g.r.IntN(3) {
			k := pick(g, headerKeys)
			m.Headers[k] = g.headerValue(k)
		}
	}
	// Half the time, aim at one of the exchange's bindings: a key or
	// headers made to match it, perhaps with one word or value changed.
	if bs := g.v.BindingsFrom(m.Exchange); len(bs) > 0 && g.chance(50) {
		g.aim(&m, pick(g, bs))
	}
	// An x-death header from the client (a republished dead letter, or
	// junk): the broker's cycle detection and x-death updates start from it.
	switch g.weighted(95, 4, 1) {
	case 1:
		var deaths []any
		for range 1 + g.r.IntN(2) {
			deaths = append(deaths, map[string]any{
				"queue": pick(g, g.queues), "reason": pick(g, []string{"rejected", "expired"}),
				"count": int64(1 + g.r.IntN(2)), "exchange": "", "routing-keys": []any{"k"},
			})
		}
		if m.Headers == nil {
			m.Headers = map[string]any{}
		}
		m.Headers["x-death"] = deaths
	case 2:
		if m.Headers == nil {
			m.Headers = map[string]any{}
		}
		m.Headers["x-death"] = "junk" // not an array: reset at the first death
	}
	// Sender-selected distribution: more routing keys in CC and BCC.
	for _, h := range []string{"CC", "BCC"} {
		if !g.chance(map[string]int{"CC": 8, "BCC": 4}[h]) {
			continue
		}
		if m.Headers == nil {
			m.Headers = map[string]any{}
		}
		if g.chance(12) {
			m.Headers[h] = g.routingKey() // not an array: the broker refuses the publish
			continue
		}
		var keys []any
		for range 1 + g.r.IntN(2) {
			if bs := g.v.BindingsFrom(m.Exchange); len(bs) > 0 && g.chance(50) {
				aimed := Message{}
				g.aim(&aimed, pick(g, bs))
				keys = append(keys, aimed.RoutingKey)
			} else {
				keys = append(keys, g.destinationKey(m.Exchange))
			}
		}
		if g.chance(10) {
			keys = append(keys, int64(1)) // not a string: ignored
		}
		m.Headers[h] = keys
	}
	if g.chance(10) && !g.reachesQuorum(m.Message) {
		// Not on quorum queues: RabbitMQ 3.10 expires a per-message TTL of
		// 0 there asynchronously, so basic.get may still take the message
		// out (seen in CI with seed 55) — a race, not routing.
		m.Expiration = "0"
	}
	return m
}

// genVersions are the versions whose routing reachesQuorum consults, so
// that a seed gives the same case whatever broker runs it.
var genVersions = []rmqversion.Version{rmqversion.Oldest, rmqversion.Newest}

// reachesQuorum reports whether a publish of m lands in a quorum queue
// under the routing rules of any version in genVersions (the headers
// exchange compares numbers differently from 3.13).
func (g *gen) reachesQuorum(m route.Message) bool {
	for _, ver := range genVersions {
		for _, q := range route.NewWith(g.v, route.Options{Version: ver}).Publish(m).Queues() {
			if qq := g.v.Queues[q]; qq != nil && qq.Type == topology.QueueQuorum {
				return true
			}
		}
	}
	return false
}

// destinationKey returns a routing key for a publish to exchange: often a
// queue name for the default exchange, else mostly a random key.
func (g *gen) destinationKey(exchange string) string {
	if ((exchange == "" || exchange == "amq.default") && g.chance(60)) || g.chance(8) {
		return pick(g, g.queues)
	}
	return g.routingKey()
}

// aim makes m's routing key or headers match binding b (mostly).
func (g *gen) aim(m *Message, b *topology.Binding) {
	switch g.exchangeType(b.Source) {
	case "direct":
		m.RoutingKey = b.RoutingKey
	case "topic":
		m.RoutingKey = g.instantiate(b.RoutingKey)
	case "headers":
		if m.Headers == nil {
			m.Headers = map[string]any{}
		}
		for _, k := range b.Arguments.Keys() {
			switch v := b.Arguments[k]; {
			case k == "x-match":
			case v == nil || g.chance(15):
				m.Headers[k] = g.headerValue(k)
			default:
				m.Headers[k] = v
			}
		}
	}
}

// instantiate returns a routing key a topic pattern matches: * becomes a
// word, # zero to two words; now and then a word is changed.
func (g *gen) instantiate(pattern string) string {
	var words []string
	for _, w := range splitWords(pattern) {
		switch w {
		case "*":
			words = append(words, g.word())
		case "#":
			for range g.r.IntN(3) {
				words = append(words, g.word())
			}
		default:
			words = append(words, w)
		}
	}
	if len(words) > 0 && g.chance(15) {
		words[g.r.IntN(len(words))] = g.word()
	}
	return strings.Join(words, ".")
}

func (g *gen) word() string {
	if g.chance(8) {
		return ""
	}
	return pick(g, keyWords)
}

// splitWords splits a key into words as the topic exchange does: "" has
// none.
func splitWords(key string) []string {
	if key == "" {
		return nil
	}
	return strings.Split(key, ".")
}

// HasVoid reports whether a binding's arguments hold a void (null)
// criterion, which only AMQP can declare.
func HasVoid(a topology.Args) bool {
	for _, v := range a {
		if v == nil {
			return true
		}
	}
	return false
}
