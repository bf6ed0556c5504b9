package export

import (
	"math"
	"sort"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/mqctl/mqctl/pkg/loader"
	"github.com/mqctl/mqctl/pkg/topology"
)

// sugarPlan says which queues of a vhost are written as sugar on another.
type sugarPlan struct {
	dlq      map[string]*dlqPair // origin queue -> its dead-letter queue
	tiers    map[string][]int64  // origin queue -> delays (ms), ascending
	hidden   map[string]bool     // queues written as sugar, not listed
	consumed map[*topology.Binding]bool
	// backoff holds the queues whose delayed retry is written as
	// retry.backoff (with when and attempts).
	backoff map[string]topology.Backoff
}

type dlqPair struct {
	queue   *topology.Queue
	binding *topology.Binding
}

func newSugarPlan() *sugarPlan {
	return &sugarPlan{
		dlq:      map[string]*dlqPair{},
		tiers:    map[string][]int64{},
		hidden:   map[string]bool{},
		consumed: map[*topology.Binding]bool{},
		backoff:  map[string]topology.Backoff{},
	}
}

// findSugar recognises, in v:
//
//   - dead-letter queue pairs: queue Q dead-letters to exchange X with
//     routing key K, and one queue D alone receives them (see dlqCandidate).
//     dead_letter {exchange: X, routing_key: K, queue: D} declares exactly D
//     and its binding. D must be claimed by one origin only.
//   - delay tiers: a queue named Q.retry.<d> with only x-message-ttl = d,
//     x-dead-letter-exchange = "" and x-dead-letter-routing-key = Q, no
//     bindings, of Q's type and durability: what retry.delays [d] declares.
func findSugar(v *topology.Vhost) *sugarPlan {
	p := newSugarPlan()
	boundTo := map[string][]*topology.Binding{}
	from := map[string][]*topology.Binding{}
	for _, b := range v.Bindings {
		if b.DestinationType == topology.DestQueue {
			boundTo[b.Destination] = append(boundTo[b.Destination], b)
		}
		from[b.Source] = append(from[b.Source], b)
	}

	// Delay tiers first: a tier has a dead-letter exchange, so it is never a DLQ.
	tierOf := map[string]string{}
	for _, name := range v.QueueNames() {
		t := v.Queues[name]
		origin, delay, ok := tierOrigin(v, t)
		if !ok || len(boundTo[name]) > 0 {
			continue
		}
		tierOf[name] = origin
		p.tiers[origin] = append(p.tiers[origin], delay)
	}
	// A tier of a queue that is itself a tier stays explicit.
	for origin := range p.tiers {
		if _, nested := tierOf[origin]; nested {
			delete(p.tiers, origin)
		}
	}
	for tier, origin := range tierOf {
		if len(p.tiers[origin]) > 0 {
			p.hidden[tier] = true
		}
	}
	for _, delays := range p.tiers {
		sort.Slice(delays, func(i, j int) bool { return delays[i] < delays[j] })
	}

	// Dead-letter queue pairs: find each origin's candidate, then keep the
	// candidates that exactly one origin claims.
	claims := map[string][]string{}
	pairs := map[string]*dlqPair{}
	for _, name := range v.QueueNames() {
		q := v.Queues[name]
		if p.hidden[name] {
			continue
		}
		pair := dlqCandidate(v, q, from, boundTo)
		if pair == nil || p.hidden[pair.queue.Name] {
			continue
		}
		pairs[name] = pair
		claims[pair.queue.Name] = append(claims[pair.queue.Name], name)
	}
	for origin, pair := range pairs {
		if len(claims[pair.queue.Name]) != 1 || p.tiers[pair.queue.Name] != nil {
			continue
		}
		if _, isOrigin := pairs[pair.queue.Name]; isOrigin {
			continue
		}
		p.dlq[origin] = pair
		p.hidden[pair.queue.Name] = true
		if pair.binding != nil {
			p.consumed[pair.binding] = true
		}
	}
	return p
}

// tierOrigin reports whether t is exactly a delay tier that retry.delays on
// its origin queue would declare.
func tierOrigin(v *topology.Vhost, t *topology.Queue) (origin string, delay int64, ok bool) {
	if len(t.Arguments) != 3 || t.AutoDelete {
		return "", 0, false
	}
	ttl, ok1 := t.Arguments.Int("x-message-ttl")
	dlx, ok2 := t.Arguments.String("x-dead-letter-exchange")
	origin, ok3 := t.Arguments.String("x-dead-letter-routing-key")
	if !ok1 || !ok2 || !ok3 || ttl <= 0 || dlx != "" || origin == t.Name {
		return "", 0, false
	}
	q := v.Queues[origin]
	if q == nil || q.Type != t.Type || q.Durable != t.Durable || t.Name != origin+".retry."+loader.FormatDuration(ttl) {
		return "", 0, false
	}
	return origin, ttl, true
}

// dlqCandidate returns the queue that alone receives q's dead letters, when
// writing it as dead_letter.queue declares exactly it and its binding: the
// only binding that receives q's dead-letter routing key on its dead-letter
// exchange, with that key and no arguments, to a queue that has no other
// binding and no dead-letter exchange of its own. Through the default
// exchange, the queue named by the routing key, bound nowhere.
func dlqCandidate(v *topology.Vhost, q *topology.Queue, from, boundTo map[string][]*topology.Binding) *dlqPair {
	x, ok := q.Arguments.String("x-dead-letter-exchange")
	if !ok {
		return nil
	}
	key, ok := q.Arguments.String("x-dead-letter-routing-key")
	if !ok {
		return nil
	}
	var d *topology.Queue
	var b *topology.Binding
	if x == "" {
		d = v.Queues[key]
		if d == nil || len(boundTo[d.Name]) != 0 {
			return nil
		}
	} else {
		b = onlyReceiver(v.Exchanges[x], from[x], key)
		if b == nil {
			return nil
		}
		d = v.Queues[b.Destination]
		if d == nil || len(boundTo[d.Name]) != 1 {
			return nil
		}
	}
	if d.Name == q.Name || d.Arguments.Has("x-dead-letter-exchange") {
		return nil
	}
	return &dlqPair{queue: d, binding: b}
}

// onlyReceiver returns the binding of exchange ex that alone receives
// routing key key, when it binds a queue with exactly that key and no
// arguments.
func onlyReceiver(ex *topology.Exchange, bindings []*topology.Binding, key string) *topology.Binding {
	if ex == nil {
		return nil
	}
	var receiving []*topology.Binding
	for _, b := range bindings {
		var match bool
		switch ex.Type {
		case "direct":
			match = b.RoutingKey == key
		case "topic":
			match = topicMatch(b.RoutingKey, key)
		case "fanout":
			match = true
		default:
			return nil
		}
		if match {
			receiving = append(receiving, b)
		}
	}
	if len(receiving) != 1 {
		return nil
	}
	b := receiving[0]
	if b.DestinationType != topology.DestQueue || b.RoutingKey != key || len(b.Arguments) > 0 {
		return nil
	}
	return b
}

// topicMatch reports whether routing key matches topic binding pattern
// ("*" one word, "#" zero or more words).
func topicMatch(pattern, key string) bool {
	p, k := words(pattern), words(key)
	// ok[j]: p[:i] matches k[:j], for the current i.
	ok := make([]bool, len(k)+1)
	ok[0] = true
	for _, w := range p {
		next := make([]bool, len(k)+1)
		for j := 0; j <= len(k); j++ {
			switch w {
			case "#":
				next[j] = ok[j] || (j > 0 && next[j-1])
			case "*":
				next[j] = j > 0 && ok[j-1]
			default:
				next[j] = j > 0 && ok[j-1] && k[j-1] == w
			}
		}
		ok = next
	}
	return ok[len(k)]
}

func words(s string) []string {
	if s == "" {
		return nil
	}
	return strings.Split(s, ".")
}

// findBackoff recognises, in v, the quorum queues whose delayed retry
// arguments are exactly what retry.backoff declares (see backoffOf), and
// that have no delay tiers written as retry.delays (a queue uses one or the
// other).
func (p *sugarPlan) findBackoff(v *topology.Vhost) {
	for _, name := range v.QueueNames() {
		if p.hidden[name] || len(p.tiers[name]) > 0 {
			continue
		}
		if b, ok := backoffOf(v.Queues[name]); ok {
			p.backoff[name] = b
		}
	}
}

// backoffOf reports whether queue q's arguments hold delayed retry exactly
// as retry.backoff writes it, so that the sugar loads back into the same
// arguments: a quorum queue with x-delayed-retry-type failed, returned or
// all, x-delayed-retry-min a positive integer, x-delayed-retry-max absent
// or an integer not below min, and x-delivery-limit absent or not negative
// (attempts = x-delivery-limit + 1).
func backoffOf(q *topology.Queue) (topology.Backoff, bool) {
	if q.Type != topology.QueueQuorum {
		return topology.Backoff{}, false
	}
	typ, ok := q.Arguments.String("x-delayed-retry-type")
	if !ok || (typ != "failed" && typ != "returned" && typ != "all") {
		return topology.Backoff{}, false
	}
	b := topology.Backoff{On: typ}
	if b.MinMS, ok = q.Arguments.Int("x-delayed-retry-min"); !ok || b.MinMS <= 0 {
		return topology.Backoff{}, false
	}
	if q.Arguments.Has("x-delayed-retry-max") {
		if b.MaxMS, ok = q.Arguments.Int("x-delayed-retry-max"); !ok || b.MaxMS < b.MinMS {
			return topology.Backoff{}, false
		}
	}
	if q.Arguments.Has("x-delivery-limit") {
		limit, ok := q.Arguments.Int("x-delivery-limit")
		if !ok || limit < 0 || limit == math.MaxInt64 {
			return topology.Backoff{}, false
		}
		b.Attempts = limit + 1
	}
	return b, true
}

// backoffNode writes q's retry section for backoff b, and takes the
// arguments it declares out of s.
func backoffNode(b topology.Backoff, s *queueSettings) *yaml.Node {
	for _, k := range []string{"x-delayed-retry-type", "x-delayed-retry-min", "x-delayed-retry-max"} {
		delete(s.rest, k)
	}
	if b.Attempts > 0 {
		var top []*yaml.Node
		for i := 0; i+1 < len(s.top); i += 2 {
			if s.top[i].Value != "delivery_limit" {
				top = append(top, s.top[i], s.top[i+1])
			}
		}
		s.top = top
	}
	bo := mapping()
	add(bo, "min", durationNode(b.MinMS))
	if b.MaxMS > 0 {
		add(bo, "max", durationNode(b.MaxMS))
	}
	r := mapping()
	add(r, "backoff", bo)
	if b.On != "failed" {
		add(r, "when", str(b.On))
	}
	if b.Attempts > 0 {
		add(r, "attempts", intNode(b.Attempts))
	}
	return r
}
