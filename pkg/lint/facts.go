package lint

import (
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/mqctl/mqctl/pkg/pattern"
	"github.com/mqctl/mqctl/pkg/route"
	"github.com/mqctl/mqctl/pkg/topology"
)

// Argument names the rules read from effective queue arguments.
const (
	argDLX       = "x-dead-letter-exchange"
	argDLRK      = "x-dead-letter-routing-key"
	argTTL       = "x-message-ttl"
	argMaxLen    = "x-max-length"
	argMaxBytes  = "x-max-length-bytes"
	argOverflow  = "x-overflow"
	argMaxAge    = "x-max-age"
	argPriority  = "x-max-priority"
	argAlternate = "alternate-exchange"
)

// keyKind says how much is known about the routing key a message carries
// into a queue.
type keyKind int

const (
	keyExact   keyKind = iota // a direct binding key, the default exchange, a dead-letter routing key
	keyPattern                // a topic binding pattern with * or #: any key it matches
	keyAny                    // a fanout or headers binding: any key at all
)

// msgKey is one routing key (or family of keys) a message can carry while
// it sits in a queue.
type msgKey struct {
	Key      string // the exact key, or the binding pattern
	Kind     keyKind
	Exchange string // the exchange the message came through
}

// keyRoute is where a queue's dead letters go for one routing key.
type keyRoute struct {
	In msgKey // the key family the message had in the queue
	// Sample is the concrete key the dead letter carries in this route.
	Sample string
	Route  route.DeadLetterRoute
}

// dlInfo is the dead-letter wiring of one queue that has a dead-letter
// exchange.
type dlInfo struct {
	Exchange string // "" is the default exchange
	DLRK     string
	HasDLRK  bool
	// Missing is true when Exchange is not declared (MQ102).
	Missing bool
	// HeadersDLX is true when the DLX routes on headers: routing keys say
	// nothing about where the dead letters go.
	HeadersDLX bool
	Routes     []keyRoute
	// Targets is every queue the dead letters reach, sorted.
	Targets []string
}

// arrival is a dead letter of queue From that lands in a queue with key Key.
type arrival struct {
	From     string
	Key      string
	Exchange string
}

// facts are computed once per vhost and shared by every analyzer.
type facts struct {
	v   *topology.Vhost
	sim *route.Simulator

	queueNames    []string
	exchangeNames []string
	qargs         map[string]topology.Args
	into          map[string][]*topology.Binding // bindings whose destination is a queue, by queue
	from          map[string][]*topology.Binding // bindings by source exchange
	dlxOf         map[string][]string            // exchange -> queues whose DLX it is (sorted)
	dl            map[string]*dlInfo             // queue -> dead-letter wiring (queues with a DLX only)
	dlrkSenders   map[[2]string]int              // (dead-letter exchange, routing key) -> queues that send with that key
	arrivals      map[string][]arrival           // queue -> dead letters arriving in it
	delay         map[string]bool                // delay queues with a queue TTL
	perMsgDelay   map[string]bool                // delay queues relying on per-message expiration
	dlq           map[string]bool                // dead-letter queues
	namedDLQ      map[string]string              // queue no dead letters reach -> the queue it is named the DLQ of
	dlqNamedFor   map[string]string              // the other way round: queue -> the first queue named as its DLQ
	aeOf          map[string][]string            // declared alternate exchange -> the exchanges whose alternate exchange it is
	aeFed         map[string]bool                // queues an alternate exchange delivers to (directly or through exchanges)
	aeSrcs        map[string][]string            // exchange carrying only unroutable messages -> the exchanges they come from
	collects      map[string][]string            // queue fed only through alternate exchanges -> those exchanges' sources
	candidates    map[string]bool                // queues with a TTL and a dead-letter exchange (maybe delay tiers)
	reachedByWork map[string]bool                // queues reached by dead letters of a queue that is no candidate
	exchangeMemo  map[string][]string            // answers of classify per exchange (see memoWorkQueues)
	samplesCache  map[string][]string            // DLX -> candidate keys for key families
	regexps       map[string]*pattern.Pattern    // policy pattern -> compiled (nil: unreadable)
	catchIx       map[catchKey]*catchIndex       // see catchIndexOf
	settledMemo   map[targetsKey]*settled        // see settledOf
	sharedDLX     *string                        // see dlxToShare
	// sharedDLQWiring caches sharedDLQ (a nil inside when none).
	sharedDLQWiring **sharedWiring
}

func newFacts(v *topology.Vhost, sim *route.Simulator) *facts {
	f := &facts{
		v:             v,
		sim:           sim,
		queueNames:    v.QueueNames(),
		exchangeNames: v.ExchangeNames(),
		qargs:         make(map[string]topology.Args, len(v.Queues)),
		into:          map[string][]*topology.Binding{},
		from:          map[string][]*topology.Binding{},
		dlxOf:         map[string][]string{},
		dl:            map[string]*dlInfo{},
		dlrkSenders:   map[[2]string]int{},
		arrivals:      map[string][]arrival{},
		delay:         map[string]bool{},
		perMsgDelay:   map[string]bool{},
		dlq:           map[string]bool{},
		namedDLQ:      map[string]string{},
		dlqNamedFor:   map[string]string{},
		aeOf:          map[string][]string{},
		aeFed:         map[string]bool{},
		collects:      map[string][]string{},
		exchangeMemo:  map[string][]string{},
		samplesCache:  map[string][]string{},
		regexps:       map[string]*pattern.Pattern{},
		catchIx:       map[catchKey]*catchIndex{},
		settledMemo:   map[targetsKey]*settled{},
	}
	f.index()
	f.routeDeadLetters()
	f.collectArrivals()
	f.collectTargets()
	f.classify()
	return f
}

// index lists the bindings from and into each object, and each queue's
// effective arguments and dead-letter settings.
func (f *facts) index() {
	v, sim := f.v, f.sim
	for _, b := range v.Bindings {
		f.from[b.Source] = append(f.from[b.Source], b)
		if b.DestinationType == topology.DestQueue {
			f.into[b.Destination] = append(f.into[b.Destination], b)
		}
	}
	for _, q := range f.queueNames {
		args := sim.QueueArgs(q)
		f.qargs[q] = args
		x, ok := args.String(argDLX)
		if !ok || v.Queues[q].Type == topology.QueueStream {
			continue
		}
		d := &dlInfo{Exchange: x, Missing: !f.exchangeDeclared(x), HeadersDLX: f.exchangeType(x) == "headers"}
		d.DLRK, d.HasDLRK = args.String(argDLRK)
		f.dl[q] = d
		if d.HasDLRK {
			f.dlrkSenders[[2]string{x, d.DLRK}]++
		}
		f.dlxOf[x] = append(f.dlxOf[x], q)
	}
}

// routeDeadLetters simulates where each queue's dead letters go: first
// for the keys messages get from bindings (or the dead-letter routing
// key), then once more for the keys that dead letters of other queues
// arrive with.
func (f *facts) routeDeadLetters() {
	for _, q := range f.queueNames {
		if d := f.dl[q]; d != nil && !d.Missing {
			if d.HasDLRK {
				f.addRoute(q, d, msgKey{Key: d.DLRK, Kind: keyExact}, d.DLRK)
				continue
			}
			for _, k := range f.inboundKeys(q) {
				for _, s := range f.samples(k, d.Exchange) {
					f.addRoute(q, d, k, s)
				}
			}
		}
	}
	f.collectArrivals()
	for _, q := range f.queueNames {
		d := f.dl[q]
		if d == nil || d.Missing || d.HasDLRK || len(f.arrivals[q]) == 0 {
			continue
		}
		tried := map[string]bool{}
		for _, r := range d.Routes {
			tried[r.Sample] = true
		}
		for _, a := range f.arrivals[q] {
			if !tried[a.Key] {
				tried[a.Key] = true
				f.addRoute(q, d, msgKey{Key: a.Key, Kind: keyExact, Exchange: a.Exchange}, a.Key)
			}
		}
	}
}

// collectTargets lists, sorted, the queues each queue's dead letters can
// reach. Queues whose dead letters take one route that a message-blind
// exchange shares (route.fixedRoute) share its list: where one fanout
// exchange takes every queue's dead letters to every DLQ, a list per
// queue was the square of the queues (6.25 million names at 2,500).
func (f *facts) collectTargets() {
	shared := map[catchKey][]string{}
	for _, d := range f.dl {
		var k catchKey
		if len(d.Routes) == 1 && !openRoute(d.Routes[0].Route) && len(d.Routes[0].Route.Result.Unsimulated) == 0 {
			if ds := d.Routes[0].Route.Result.Deliveries; len(ds) > sharedFrom {
				k = catchKey{&ds[0], len(ds)}
				if ts, ok := shared[k]; ok {
					d.Targets = ts
					continue
				}
			}
		}
		seen := map[string]bool{}
		add := func(t string) {
			if !seen[t] {
				seen[t] = true
				d.Targets = append(d.Targets, t)
			}
		}
		for _, r := range d.Routes {
			for _, t := range r.Route.Result.Queues() {
				add(t)
			}
			// A plugin exchange the simulation cannot follow may deliver
			// to any queue bound to it, and so may an x-modulus-hash
			// exchange whose pick depends on keys lint does not know.
			for _, x := range r.Route.Result.Unsimulated {
				for _, b := range f.from[x] {
					if b.DestinationType == topology.DestQueue {
						add(b.Destination)
					}
				}
			}
			if openRoute(r.Route) {
				for _, c := range r.Route.Result.OneOf {
					for _, q := range c.Queues() {
						add(q)
					}
				}
			}
		}
		sort.Strings(d.Targets)
		if k.first != nil {
			d.Targets = slices.Clip(d.Targets)
			shared[k] = d.Targets
		}
	}
}

// sharedFrom is how long a list of targets must be for lint to look for
// the queues that share it: a short one is gone through again sooner.
const sharedFrom = 8

// targetsKey identifies a list of targets (dlInfo.Targets), which queues
// share (collectTargets); the zero key, a list shorter than sharedFrom,
// is not shared.
type targetsKey struct {
	first *string
	n     int
}

func keyOfTargets(ts []string) targetsKey {
	if len(ts) <= sharedFrom {
		return targetsKey{}
	}
	return targetsKey{&ts[0], len(ts)}
}

// markTargets sets set[t] for every queue t that the dead letters of
// queue q reach, but q itself; done remembers the shared lists already
// marked (by the first queue that had them) so that each is gone through
// once.
func markTargets(set map[string]bool, q string, ts []string, done map[targetsKey]string) {
	k := keyOfTargets(ts)
	if by, ok := done[k]; ok && k.first != nil {
		// Every target but by is marked: by is a target of q's unless it
		// is q.
		if by != q && by != "" {
			if _, found := slices.BinarySearch(ts, by); found {
				set[by] = true
			}
			done[k] = "" // all marked
		}
		return
	}
	for _, t := range ts {
		if t != q {
			set[t] = true
		}
	}
	if k.first != nil {
		done[k] = q
	}
}

func (f *facts) addRoute(q string, d *dlInfo, in msgKey, sample string) {
	m := route.Message{Exchange: in.Exchange, RoutingKey: sample}
	r := f.sim.DeadLetter(q, route.Rejected, m)
	// The rules read where dead letters go, never their x-death headers:
	// dropping them saves a map per route (10 MB at 50,000 objects).
	r.Result.Message.Headers = nil
	d.Routes = append(d.Routes, keyRoute{In: in, Sample: sample, Route: r})
}

// openRoute reports whether lint cannot tell where dead letters routed as r
// go, only where they may: they pass an exchange the simulation does not
// follow (Unsimulated), or an x-modulus-hash exchange while they keep the
// message's own routing keys. Its pick hashes all of them, the CC and BCC
// keys of each message included, which a rule does not know; only a
// dead-letter routing key fixes the keys and with them the pick. Such a
// dead letter reaches one of the choice's destinations, never all of them.
func openRoute(r route.DeadLetterRoute) bool {
	return len(r.Result.Unsimulated) > 0 || (r.KeyFromMessage && len(r.Result.OneOf) > 0)
}

// collectArrivals records, for every queue whose dead letters keep their
// routing key (routeDeadLetters routes them once more with the keys they
// arrive with), the dead letters that reach it with a known routing key.
// A queue without a dead-letter exchange of its own gets none: nothing
// reads them, and where one fanout exchange takes every queue's dead
// letters to every DLQ they were every pair of queues (6.25 million at
// 2,500 queues).
//
// Those queues are found once for the queues a message-blind exchange
// shares (route.fixedRoute): the DLQs of a fanout one were looked up for
// every queue that dead-letters to it, the square of the queues.
func (f *facts) collectArrivals() {
	f.arrivals = map[string][]arrival{}
	keeping := map[targetsKey][]string{}
	for _, q := range f.queueNames {
		d := f.dl[q]
		if d == nil {
			continue
		}
		for _, r := range d.Routes {
			if r.In.Kind != keyExact {
				continue
			}
			qs := r.Route.Result.Queues()
			k := keyOfTargets(qs)
			ts, ok := keeping[k]
			if !ok || k.first == nil {
				ts = nil
				for _, t := range qs {
					if td := f.dl[t]; td != nil && !td.Missing && !td.HasDLRK {
						ts = append(ts, t)
					}
				}
				if k.first != nil {
					keeping[k] = ts
				}
			}
			for _, t := range ts {
				f.arrivals[t] = append(f.arrivals[t], arrival{From: q, Key: r.Route.RoutingKey, Exchange: r.Route.Exchange})
			}
		}
	}
}

// isDelay reports whether q holds messages for a while and then sends
// them back (with a queue TTL or per-message expiration).
func (f *facts) isDelay(q string) bool { return f.delay[q] || f.perMsgDelay[q] }

// hasTTL reports whether q has a queue-level message TTL (argument or policy).
func (f *facts) hasTTL(q string) bool { return f.qargs[q].Has(argTTL) }

// publishedTo reports whether some binding into q comes from an exchange
// that is nobody's dead-letter exchange, nor carries only what dead-letter
// exchanges cannot route (deadLetterOnly): q receives regular traffic.
func (f *facts) publishedTo(q string) bool {
	for _, b := range f.into[q] {
		if len(f.dlxOf[b.Source]) == 0 && !f.deadLetterOnly(b.Source) {
			return true
		}
	}
	return false
}

// deadLetterOnly reports whether exchange x carries nothing but the
// unroutable messages of dead-letter exchanges: it is their alternate
// exchange (or only such exchanges are bound to it), so what reaches it
// is dead letters (f.aeSrcs, known once findAlternates has run).
func (f *facts) deadLetterOnly(x string) bool {
	srcs, ok := f.aeSrcs[x]
	if !ok {
		return false
	}
	for _, s := range srcs {
		if len(f.dlxOf[s]) == 0 {
			return false
		}
	}
	return true
}

// workingLooking reports whether q looks like a queue consumers work from:
// it has its own dead-letter exchange, or receives regular traffic.
func (f *facts) workingLooking(q string) bool {
	queue := f.v.Queues[q]
	if queue == nil || queue.Role == topology.RoleDeadLetter || queue.Role == topology.RoleDelay {
		return false
	}
	return f.dl[q] != nil || f.publishedTo(q)
}

// exchangeDeclared reports whether an exchange exists in the vhost: the
// default exchange and the broker's amq.* exchanges always do.
func (f *facts) exchangeDeclared(name string) bool {
	if name == "" || topology.IsReservedName(name) {
		return true
	}
	_, ok := f.v.Exchanges[name]
	return ok
}

// exchangeType returns the routing type of an exchange ("" when unknown):
// a delayed-message exchange routes as its x-delayed-type.
func (f *facts) exchangeType(name string) string {
	if x, ok := f.v.Exchanges[name]; ok && x.Type == "x-delayed-message" {
		if t, ok := x.Arguments.String("x-delayed-type"); ok {
			return t
		}
	}
	return f.v.ExchangeType(name)
}

// inboundKeys returns the routing keys a message can carry while it sits in
// queue q: the keys of the bindings that deliver into it (a family of keys
// for topic patterns, fanout and headers bindings), or q's own name when
// nothing is bound to it (it is published to through the default exchange).
func (f *facts) inboundKeys(q string) []msgKey {
	bs := f.into[q]
	if len(bs) == 0 {
		return []msgKey{{Key: q, Kind: keyExact, Exchange: ""}}
	}
	seen := map[msgKey]bool{}
	var out []msgKey
	for _, b := range bs {
		k := msgKey{Key: b.RoutingKey, Kind: keyExact, Exchange: b.Source}
		switch f.exchangeType(b.Source) {
		case "direct":
		case "topic":
			if hasWildcard(b.RoutingKey) {
				k.Kind = keyPattern
			}
		default:
			k.Kind, k.Key = keyAny, ""
		}
		id := msgKey{Key: k.Key, Kind: k.Kind}
		if !seen[id] {
			seen[id] = true
			out = append(out, k)
		}
	}
	return out
}

// maxSamples bounds how many concrete keys stand for a key family.
const maxSamples = 6

// samples returns concrete keys to simulate for key family k dead-lettered
// to exchange dlx: the key itself when exact; otherwise keys the DLX is
// bound for and names of the queues behind it that fall in the family, and
// one key built from the pattern.
func (f *facts) samples(k msgKey, dlx string) []string {
	if k.Kind == keyExact {
		return []string{k.Key}
	}
	var out []string
	seen := map[string]bool{}
	add := func(s string) {
		if !seen[s] && len(out) < maxSamples {
			seen[s] = true
			out = append(out, s)
		}
	}
	for _, c := range f.candidateKeys(dlx) {
		if k.Kind == keyAny || route.TopicMatch(k.Key, c) {
			add(c)
		}
	}
	if k.Kind == keyPattern {
		add(instantiate(k.Key))
	} else if len(out) == 0 {
		add("")
	}
	return out
}

// maxCandidates bounds how many bindings of a DLX are looked at to find
// sample keys.
const maxCandidates = 256

// candidateKeys lists keys worth trying on exchange x: its binding keys
// (topic patterns turned into a matching key) and the names of the queues
// bound to it.
func (f *facts) candidateKeys(x string) []string {
	if c, ok := f.samplesCache[x]; ok {
		return c
	}
	var keys, names []string
	seen := map[string]bool{}
	bs := f.from[x]
	if x == "" {
		for _, q := range f.queueNames {
			if len(names) == maxCandidates {
				break
			}
			names = append(names, q)
		}
	}
	topic := f.exchangeType(x) == "topic"
	for i, b := range bs {
		if i == maxCandidates {
			break
		}
		k := b.RoutingKey
		if topic {
			k = instantiate(k)
		}
		if !seen[k] {
			seen[k] = true
			keys = append(keys, k)
		}
		if b.DestinationType == topology.DestQueue && !seen[b.Destination] {
			seen[b.Destination] = true
			names = append(names, b.Destination)
		}
	}
	out := append(keys, names...)
	f.samplesCache[x] = out
	return out
}

func hasWildcard(pattern string) bool {
	for _, w := range strings.Split(pattern, ".") {
		if w == "*" || w == "#" {
			return true
		}
	}
	return false
}

// instantiate turns a topic pattern into one key it matches: * becomes the
// word "x" and # matches no word.
func instantiate(pattern string) string {
	words := strings.Split(pattern, ".")
	out := words[:0:0]
	for _, w := range words {
		switch w {
		case "#":
		case "*":
			out = append(out, "x")
		default:
			out = append(out, w)
		}
	}
	return strings.Join(out, ".")
}

// queuesList renders queue names for a message: a, b and c (at most five,
// then "and N more").
func queuesList(names []string) string { return queuesListOf(names, len(names)) }

// queuesListShows is how many names queuesList shows before "and N more".
const queuesListShows = 5

// queuesListOf is queuesList of total names, first being the first of
// them (at least as many as it shows).
func queuesListOf(first []string, total int) string {
	if total == 0 {
		return "no queue"
	}
	if total > queuesListShows {
		return strings.Join(first[:queuesListShows], ", ") + " and " + strconv.Itoa(total-queuesListShows) + " more"
	}
	if total == 1 {
		return first[0]
	}
	return strings.Join(first[:total-1], ", ") + " and " + first[total-1]
}
