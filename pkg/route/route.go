package route

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/mqctl/mqctl/pkg/kind"
	"github.com/mqctl/mqctl/pkg/rmqversion"
	"github.com/mqctl/mqctl/pkg/topology"
)

// Via values of a Step.
const (
	ViaBinding   = "binding"
	ViaDefault   = "default"
	ViaAlternate = "alternate-exchange"
)

// Routing types.
const (
	typeDirect  = "direct"
	typeFanout  = "fanout"
	typeTopic   = "topic"
	typeHeaders = "headers"
	typeDelayed = "x-delayed-message"
	// typeModulusHash delivers each message to exactly one of its bound
	// destinations (see Choice).
	typeModulusHash = "x-modulus-hash"
	// typeLocalRandom delivers each message to one classic queue bound
	// to it without a key, at random among those on the node the
	// publisher is connected to (RabbitMQ 4.0+; see Choice).
	typeLocalRandom = rmqversion.LocalRandomExchangeType
)

// picksOne reports whether an exchange of routing type typ delivers each
// message to exactly one of its bound destinations, never to all.
func picksOne(typ string) bool { return typ == typeModulusHash || typ == typeLocalRandom }

// Simulator routes messages through one vhost. New precomputes every index
// it needs; afterwards a Simulator is read-only and safe for concurrent
// use.
type Simulator struct {
	v   *topology.Vhost
	ver rmqversion.Version

	exchanges      map[string]*exchangeIndex // declared and built-in exchanges
	queues         map[string]effectiveQueue
	exchangeArgs   map[string]topology.Args
	exchangePolicy map[string]*topology.Policy
	policies       []compiledPolicy
	opPolicies     []compiledPolicy
	// unsupported are, per queue type, the policy keys that keep a
	// policy from applying (see unsupportedKeys).
	unsupported map[string]map[string]bool
	problems    []string
	ties        []PolicyTie
	// blind are the message-blind exchanges, whose route is computed
	// once (see findBlind).
	blind map[string]*fixedRoute
	// inbound holds, per queue, the bindings into it (see InboundKeys).
	inbound *inboundIndex
}

// exchangeIndex is one exchange with its outgoing bindings, indexed for
// its routing type.
type exchangeIndex struct {
	x *topology.Exchange
	// routingType is the type the exchange routes by: its type, or for
	// x-delayed-message its x-delayed-type; "" when not simulated.
	routingType string
	// problem explains a type mqctl does not simulate (or only partly).
	problem  string
	bindings []*topology.Binding            // sorted, valid bindings only
	direct   map[string][]*topology.Binding // direct: by routing key
	trie     *topicTrie                     // topic
	headers  []headersBinding               // headers
	// invalid explains bindings the broker would refuse to create.
	invalid []string
}

type headersBinding struct {
	b    *topology.Binding
	mode matchMode
}

// Options tune NewWith.
type Options struct {
	// Version is the RabbitMQ version whose rules the simulator follows
	// where versions differ (dead-letter headers and cycle detection, the
	// headers exchange's comparison of numbers, quorum queues' delivery
	// limit, what operator policies may set; see the predicates of
	// rmqversion). The zero Version is rmqversion.Default (4.3).
	Version rmqversion.Version
}

// New builds a simulator for vhost v (nil is an empty vhost) that follows
// rmqversion.Default; NewWith chooses the version.
func New(v *topology.Vhost) *Simulator { return NewWith(v, Options{}) }

// NewWith builds a simulator for vhost v (nil is an empty vhost) with
// options o.
func NewWith(v *topology.Vhost, o Options) *Simulator {
	if v == nil {
		v = topology.NewVhost("/")
	}
	s := &Simulator{
		v:              v,
		ver:            o.Version.OrDefault(),
		unsupported:    unsupportedKeys(o.Version.OrDefault()),
		exchanges:      map[string]*exchangeIndex{},
		queues:         make(map[string]effectiveQueue, len(v.Queues)),
		exchangeArgs:   make(map[string]topology.Args, len(v.Exchanges)),
		exchangePolicy: map[string]*topology.Policy{},
	}
	s.policies = compilePolicies(kind.Policy, v.Policies, s.ver, &s.problems)
	s.opPolicies = compilePolicies(kind.OperatorPolicy, v.OperatorPolicies, s.ver, &s.problems)
	s.checkOperatorPolicies(v.OperatorPolicies)

	// The exchanges every vhost has: a topology need not declare them to
	// bind to or publish to them.
	for _, name := range topology.BuiltinExchangeNames() {
		if _, declared := v.Exchanges[name]; !declared {
			x, _ := topology.BuiltinExchange(name)
			s.exchanges[name] = &exchangeIndex{x: &x}
		}
	}
	for _, name := range sortedNames(v.Exchanges) {
		x := v.Exchanges[name]
		if name == "" || x == nil {
			continue // the default exchange is never declared
		}
		s.exchanges[name] = &exchangeIndex{x: x}
	}
	for name, ix := range s.exchanges {
		args, p := s.computeExchange(ix.x)
		s.exchangeArgs[name] = args
		if p != nil {
			s.exchangePolicy[name] = p
		}
		ix.routingType, ix.problem = routingType(ix.x, s.ver)
	}
	for _, name := range sortedNames(v.Queues) {
		if q := v.Queues[name]; q != nil {
			s.queues[name] = s.computeQueue(q)
			if msg := routingKeyWithoutExchange(q); msg != "" {
				s.problems = append(s.problems, msg)
			}
		}
	}

	bindings := make([]*topology.Binding, 0, len(v.Bindings))
	for _, b := range v.Bindings {
		if b != nil {
			bindings = append(bindings, b)
		}
	}
	slices.SortStableFunc(bindings, topology.CompareBindings)
	for _, b := range bindings {
		ix := s.exchanges[b.Source]
		if ix == nil || b.Source == "" {
			continue // no such exchange: nothing routes through it
		}
		if why := s.refusesBinding(ix, b); why != "" {
			ix.invalid = append(ix.invalid, why)
			continue
		}
		ix.add(b)
	}
	s.blind = s.findBlind()
	s.inbound = &inboundIndex{}
	return s
}

// Version returns the RabbitMQ version the simulator follows.
func (s *Simulator) Version() rmqversion.Version { return s.ver }

func routingType(x *topology.Exchange, ver rmqversion.Version) (string, string) {
	switch x.Type {
	case typeDirect, typeFanout, typeTopic, typeHeaders:
		return x.Type, ""
	case typeModulusHash:
		if ver.ModulusHashPicksStably() {
			return x.Type, ""
		}
		return x.Type, fmt.Sprintf("exchange %q: before RabbitMQ 4.3, %s is the rabbitmq_sharding plugin's exchange type: it delivers each message to exactly one of its bound destinations, picked by a hash of the routing keys over its bindings in the order the broker's metadata store lists them, which mqctl cannot know: it names the destinations that can receive the message, not the one that does (4.3 sorts them, and mqctl makes the pick there)", x.Name, x.Type)
	case typeLocalRandom:
		if why := ver.LacksExchangeType(x.Type); why != "" {
			return "", fmt.Sprintf("exchange %q: %s: the broker refuses the exchange", x.Name, why)
		}
		return x.Type, ""
	case typeDelayed:
		inner, _ := x.Arguments.String("x-delayed-type")
		switch inner {
		case typeDirect, typeFanout, typeTopic, typeHeaders:
			return inner, fmt.Sprintf("exchange %q: plugin exchange type %s is not simulated: mqctl routes it as its x-delayed-type %q and ignores the delay", x.Name, x.Type, inner)
		}
		return "", fmt.Sprintf("exchange %q: plugin exchange type %s is not simulated, and its x-delayed-type %q is not direct, fanout, topic or headers: mqctl cannot tell where it routes", x.Name, x.Type, inner)
	}
	return "", fmt.Sprintf("exchange %q: plugin exchange type %s is not simulated: mqctl cannot tell which of its bound destinations receive the message", x.Name, x.Type)
}

// refusesBinding says why the broker refuses to create binding b of
// exchange ix (so it does not have it), "" when it does not: a topic
// binding key with too many '#' words (rabbit_exchange_type_topic:
// validate_binding/2 at v4.3.5), an x-local-random binding with a key or
// to anything but a classic queue (rabbit_exchange_type_local_random:
// validate_binding/2 at v4.0.5 and v4.3.5). The headers exchange's
// refusals are add's.
func (s *Simulator) refusesBinding(ix *exchangeIndex, b *topology.Binding) string {
	prefix := fmt.Sprintf("binding from %q to %s %q", b.Source, b.DestinationType, b.Destination)
	switch ix.routingType {
	case typeTopic:
		if n := rmqversion.TopicHashWords(b.RoutingKey); s.ver.TopicHashLimit() && n > rmqversion.MaxTopicHashWords {
			return fmt.Sprintf("%s: RabbitMQ %s refuses its routing key %q (%d '#' words, at most %d are allowed from 4.3.5), so the broker does not have it", prefix, s.ver, b.RoutingKey, n, rmqversion.MaxTopicHashWords)
		}
	case typeLocalRandom:
		switch q := s.v.Queues[b.Destination]; {
		case b.RoutingKey != "":
			return fmt.Sprintf("%s: RabbitMQ refuses a binding with a key (%q) to an x-local-random exchange (\"Non empty binding key not permitted\"), so the broker does not have it", prefix, b.RoutingKey)
		case b.DestinationType != topology.DestQueue:
			return fmt.Sprintf("%s: RabbitMQ refuses to bind an exchange to an x-local-random exchange (\"Destination not found\": it binds classic queues only), so the broker does not have it", prefix)
		case q != nil && queueType(q) != topology.QueueClassic:
			return fmt.Sprintf("%s: RabbitMQ refuses to bind a %s queue to an x-local-random exchange (\"Queue type not valid for this exchange type\": classic queues only), so the broker does not have it", prefix, queueType(q))
		}
	}
	return ""
}

// add indexes binding b of ix.
func (ix *exchangeIndex) add(b *topology.Binding) {
	switch ix.routingType {
	case typeDirect:
		if ix.direct == nil {
			ix.direct = map[string][]*topology.Binding{}
		}
		ix.direct[b.RoutingKey] = append(ix.direct[b.RoutingKey], b)
	case typeTopic:
		if ix.trie == nil {
			ix.trie = &topicTrie{}
		}
		ix.trie.add(b)
	case typeHeaders:
		mode, err := parseXMatch(b.Arguments)
		if err != nil {
			ix.invalid = append(ix.invalid, fmt.Sprintf("binding from %q to %s %q: %v", b.Source, b.DestinationType, b.Destination, err))
			return
		}
		ix.headers = append(ix.headers, headersBinding{b: b, mode: mode})
	}
	ix.bindings = append(ix.bindings, b)
}

// match returns the bindings of ix that match a message with routing
// keys keys and headers headers, in binding order, each once. strict is
// rmqversion's HeadersMatchNumberTypes.
func (ix *exchangeIndex) match(keys []string, headers map[string]any, strict bool) []*topology.Binding {
	switch ix.routingType {
	case typeDirect:
		if len(keys) == 1 {
			return ix.direct[keys[0]]
		}
		seen := map[*topology.Binding]bool{}
		for _, k := range keys {
			for _, b := range ix.direct[k] {
				seen[b] = true
			}
		}
		return ix.inOrder(seen)
	case typeFanout:
		return ix.bindings
	case typeTopic:
		if ix.trie == nil {
			return nil
		}
		seen := map[*topology.Binding]bool{}
		for _, k := range keys {
			ix.trie.match(splitTopicKey(k), func(b *topology.Binding) { seen[b] = true })
		}
		return ix.inOrder(seen)
	case typeHeaders:
		var out []*topology.Binding
		for _, hb := range ix.headers {
			if headersMatch(hb.mode, hb.b.Arguments, headers, strict) {
				out = append(out, hb.b)
			}
		}
		return out
	}
	return nil
}

// inOrder returns the bindings of seen in ix's binding order.
func (ix *exchangeIndex) inOrder(seen map[*topology.Binding]bool) []*topology.Binding {
	if len(seen) == 0 {
		return nil
	}
	out := make([]*topology.Binding, 0, len(seen))
	for _, b := range ix.bindings {
		if seen[b] {
			out = append(out, b)
		}
	}
	return out
}

// routingKeys returns m's keys: the dead letter's own list, or RoutingKey
// followed by the CC and BCC keys (rabbit_basic:header_routes). A CC or
// BCC header that is not an array is an error: RabbitMQ refuses such a
// publish.
func (m Message) routingKeys() ([]string, error) {
	if m.keys != nil {
		return append([]string(nil), m.keys...), nil
	}
	keys := []string{m.RoutingKey}
	for _, h := range []string{"CC", "BCC"} {
		routes, err := headerRoutes(m.Headers, h)
		if err != nil {
			return keys, err
		}
		keys = append(keys, routes...)
	}
	return keys, nil
}

// HeadersRefused says why RabbitMQ refuses a publish with headers h (a CC
// or BCC header that is not an array); nil when it takes them.
func HeadersRefused(h map[string]any) error {
	_, err := Message{Headers: h}.routingKeys()
	return err
}

// headerRoutes returns the strings in array header h; other elements are
// ignored, as RabbitMQ ignores them.
func headerRoutes(headers map[string]any, h string) ([]string, error) {
	v, ok := headers[h]
	if !ok {
		return nil, nil
	}
	arr, ok := v.([]any)
	if !ok {
		return nil, fmt.Errorf("header %s is %s, not an array of routing keys: RabbitMQ refuses the publish (PRECONDITION_FAILED, unacceptable_type_in_header); send %s as an array of strings", h, describeValue(v), h)
	}
	var out []string
	for _, e := range arr {
		if s, ok := e.(string); ok {
			out = append(out, s)
		}
	}
	return out, nil
}

func describeValue(v any) string {
	switch x := v.(type) {
	case string:
		return fmt.Sprintf("the string %q", x)
	case nil:
		return "void"
	}
	return fmt.Sprintf("%v (%T)", v, v)
}

// IsDirectReplyKey reports whether key, published to the default
// exchange, is a Direct Reply-To address: the broker delivers it to the
// requester's channel, not to a queue (rabbit_exchange
// virtual_reply_queue/1 at v3.10.8 and v4.0.5, rabbit_volatile_queue
// from 4.2). "amq.rabbitmq.reply-to" alone is not: a requester gives it
// as its reply_to, and the broker replaces it with a full address.
func IsDirectReplyKey(key string) bool {
	return strings.HasPrefix(key, "amq.rabbitmq.reply-to.")
}

// Publish routes a message published by a client: through exchange
// m.Exchange, its exchange-to-exchange bindings and alternate exchanges.
func (s *Simulator) Publish(m Message) Result { return s.route(m, true) }

type pending struct {
	exchange string
	path     []Step
}

// route is rabbit_exchange:route/2. Starting at the message's exchange it
// visits every exchange reached by exchange-to-exchange bindings, each
// exchange once; an exchange's alternate exchange is visited only when
// none of its own bindings matched (even if those bindings lead to
// exchanges that route nowhere). Every queue reached receives the message
// once; the path reported is the first found breadth-first.
func (s *Simulator) route(m Message, fromClient bool) Result {
	res := Result{Message: m}
	problem := func(format string, a ...any) { res.Problems = append(res.Problems, fmt.Sprintf(format, a...)) }
	// The broker checks the exchange (404), then that it is not internal
	// (403), then the CC and BCC headers (406).
	var start *exchangeIndex
	if m.Exchange != "" {
		if start = s.exchanges[m.Exchange]; start == nil {
			problem("exchange %q is not declared", m.Exchange)
			return res
		}
		if fromClient && start.x.Internal {
			problem("exchange %q is internal: clients cannot publish to it (the broker closes the channel with ACCESS_REFUSED); publish to an exchange bound to it", m.Exchange)
			return res
		}
	}
	keys, err := m.routingKeys()
	if err != nil {
		problem("%v", err)
		return res
	}
	if m.Expiration != "" {
		if _, err := ParseExpiration(m.Expiration); err != nil {
			problem("expiration %q is not valid (%v): RabbitMQ refuses the publish (PRECONDITION_FAILED, invalid expiration)", m.Expiration, err)
			return res
		}
	}
	if m.Exchange == "" {
		seen := map[string]bool{}
		for _, k := range keys {
			if seen[k] {
				continue
			}
			seen[k] = true
			if fromClient && IsDirectReplyKey(k) {
				res.DirectReply = append(res.DirectReply, k)
				continue
			}
			if _, ok := s.queues[k]; ok {
				res.Deliveries = append(res.Deliveries, Delivery{Queue: k, Path: []Step{{Exchange: "", Via: ViaDefault, BindingKey: k, To: k, ToType: topology.DestQueue, ExchangeType: typeDirect}}})
			} else {
				problem("the default exchange routes by queue name and no queue is named %q", k)
			}
		}
		if len(res.Deliveries)+len(res.DirectReply) > 0 {
			res.Problems = nil
		}
		sort.Slice(res.Deliveries, func(i, j int) bool { return res.Deliveries[i].Queue < res.Deliveries[j].Queue })
		return res
	}
	if f := s.blind[start.x.Name]; f != nil {
		var walked *Result
		r, ok := f.result(m, func() Result {
			w := s.walk(m, start, keys)
			walked = &w
			return w
		})
		switch {
		case ok:
			return r
		case walked != nil:
			return *walked
		}
	}
	return s.walk(m, start, keys)
}

// walk routes m (with routing keys keys) from exchange start: the
// breadth-first visit of route.
func (s *Simulator) walk(m Message, start *exchangeIndex, keys []string) Result {
	w := &walker{s: s, m: m, keys: keys, res: Result{Message: m}, strict: s.ver.HeadersMatchNumberTypes(),
		seen: map[string]bool{start.x.Name: true}, delivered: map[string][]Step{}}
	// Values keep their Go types (see typedEqual), but for the top-level
	// timestamps and binaries the broker reads as integers and strings.
	w.headers = routingValues(m.routingHeaders(), s.ver)
	if _, ok := w.headers["BCC"]; ok {
		h := make(map[string]any, len(w.headers))
		for k, v := range w.headers {
			if k != "BCC" { // removed before the message is routed
				h[k] = v
			}
		}
		w.headers = h
	}
	work := []pending{{exchange: start.x.Name}}
	for len(work) > 0 {
		p := work[0]
		work = w.visit(p, work[1:])
	}
	return w.result()
}

// walker is the state of one walk.
type walker struct {
	s         *Simulator
	m         Message
	keys      []string
	headers   map[string]any
	strict    bool
	res       Result
	seen      map[string]bool   // exchanges visited or queued
	delivered map[string][]Step // the path to each queue reached
	unmatched []string          // exchanges where nothing matched and no alternate exchange took over
	shadowed  []string          // problems for alternate exchanges not used because a binding matched
}

func (w *walker) problem(format string, a ...any) {
	w.res.Problems = append(w.res.Problems, fmt.Sprintf(format, a...))
}

// visit routes the message through p's exchange, returning work with the
// exchanges it leads to appended.
func (w *walker) visit(p pending, work []pending) []pending {
	ix := w.s.exchanges[p.exchange]
	if ix.problem != "" {
		w.problem("%s", ix.problem)
	}
	for _, msg := range ix.invalid {
		w.problem("%s", msg)
	}
	if ix.routingType == "" {
		w.res.Unsimulated = append(w.res.Unsimulated, ix.x.Name)
		return work
	}
	matched, simulated := w.match(ix, p)
	if !simulated {
		return work
	}
	if len(matched) == 0 {
		return w.unroutable(ix, p, work)
	}
	if ae, ok := w.s.exchangeArgs[ix.x.Name].String("alternate-exchange"); ok {
		w.shadowed = append(w.shadowed, fmt.Sprintf("alternate exchange %q of exchange %q is not used: a binding of %q matched (to %s %q), and RabbitMQ uses an alternate exchange only when no binding matches", ae, ix.x.Name, ix.x.Name, matched[0].DestinationType, matched[0].Destination))
	}
	for _, b := range matched {
		if ix.routingType == typeHeaders {
			for _, k := range orderedTables(b.Arguments, w.headers) {
				w.problem("header %q matches the binding from %q to %s %q only if the message's client sends the fields of its tables in the binding's order, by name: RabbitMQ compares a table's fields in the order they were sent, and some clients (Go's amqp091, for one) send them in no fixed order", k, b.Source, b.DestinationType, b.Destination)
			}
		}
		step := Step{Exchange: ix.x.Name, ExchangeType: ix.routingType, Via: ViaBinding, BindingKey: b.RoutingKey, To: b.Destination, ToType: b.DestinationType}
		if ix.routingType == typeHeaders {
			step.BindingArgs = b.Arguments.Clone()
		}
		switch b.DestinationType {
		case topology.DestQueue:
			if _, ok := w.delivered[b.Destination]; !ok {
				w.delivered[b.Destination] = extend(p.path, step)
			}
		case topology.DestExchange:
			if !w.seen[b.Destination] {
				w.seen[b.Destination] = true
				work = append(work, pending{exchange: b.Destination, path: extend(p.path, step)})
			}
		}
	}
	return work
}

// match is the bindings of exchange ix that the message matches, to
// declared destinations. A modulus-hash exchange picks one of them, which
// the result lists among its OneOf; simulated is false when the pick
// cannot be told.
func (w *walker) match(ix *exchangeIndex, p pending) (matched []*topology.Binding, simulated bool) {
	if !picksOne(ix.routingType) {
		return w.s.declaredDestinations(ix.match(w.keys, w.headers, w.strict), w.problem), true
	}
	// x-modulus-hash picks among every binding, whatever its key;
	// x-local-random among every one it has (without a key, to a classic
	// queue: refusesBinding).
	cands := w.s.declaredDestinations(ix.bindings, w.problem)
	if len(cands) == 0 {
		return nil, true
	}
	var c Choice
	var picked *topology.Binding
	if ix.routingType == typeModulusHash {
		c, picked = w.s.modulusHash(ix.x.Name, cands, w.keys)
	} else {
		c, picked = localRandom(ix.x.Name, cands)
	}
	c.Path = p.path
	if (w.m.Class || (w.m.Many && c.Random)) && len(c.Among) > 1 {
		// Each message of the class picks one: the class reaches them all.
		c.Picked = nil
		w.res.OneOf = append(w.res.OneOf, c)
		return cands, true
	}
	w.res.OneOf = append(w.res.OneOf, c)
	if picked == nil {
		w.res.Unsimulated = append(w.res.Unsimulated, ix.x.Name)
		return nil, false
	}
	return []*topology.Binding{picked}, true
}

// unroutable follows exchange ix's alternate exchange, where no binding
// of ix matched, returning work with it appended.
func (w *walker) unroutable(ix *exchangeIndex, p pending, work []pending) []pending {
	ae, hasAE := w.s.exchangeArgs[ix.x.Name].String("alternate-exchange")
	switch {
	case !hasAE:
		w.unmatched = append(w.unmatched, ix.x.Name)
	case w.s.exchanges[ae] == nil:
		w.problem("alternate exchange %q of exchange %q is not declared: the broker drops what would go there; declare it", ae, ix.x.Name)
		w.unmatched = append(w.unmatched, ix.x.Name)
	case !w.seen[ae]:
		w.seen[ae] = true
		work = append(work, pending{exchange: ae, path: extend(p.path, Step{Exchange: ix.x.Name, ExchangeType: ix.routingType, Via: ViaAlternate, To: ae, ToType: topology.DestExchange})})
	}
	return work
}

// result is the walk's result: its deliveries sorted by queue, or, when
// none, why nothing matched.
func (w *walker) result() Result {
	res := w.res
	if len(w.delivered) == 0 {
		for _, x := range w.unmatched {
			alternate := "it has no alternate exchange"
			if ae, ok := w.s.exchangeArgs[x].String("alternate-exchange"); ok {
				alternate = fmt.Sprintf("its alternate exchange %q is not declared", ae)
			}
			res.Problems = append(res.Problems, fmt.Sprintf("no binding of exchange %q matches %s and %s", x, w.s.describeMatch(x, w.m, w.keys), alternate))
		}
		res.Problems = append(res.Problems, w.shadowed...)
		return res
	}
	res.Deliveries = make([]Delivery, 0, len(w.delivered))
	for q, path := range w.delivered {
		res.Deliveries = append(res.Deliveries, Delivery{Queue: q, Path: path})
	}
	slices.SortFunc(res.Deliveries, func(a, b Delivery) int { return strings.Compare(a.Queue, b.Queue) })
	return res
}

// declaredDestinations returns the bindings of bs whose destination is
// declared; each other one is a problem: the broker cannot have it.
func (s *Simulator) declaredDestinations(bs []*topology.Binding, problem func(string, ...any)) []*topology.Binding {
	var out []*topology.Binding
	for _, b := range bs {
		if s.destinationExists(b) {
			out = append(out, b)
		} else {
			problem("binding from %q to undeclared %s %q is ignored: the broker cannot have it; declare the %s or remove the binding", b.Source, b.DestinationType, b.Destination, b.DestinationType)
		}
	}
	return out
}

// localRandom is the choice x-local-random exchange x makes among its
// bindings bs (without a key, to declared queues): one queue at random
// among those whose process runs on the node the publisher is connected
// to (rabbit_exchange_type_local_random:route/3 at v4.3.5). mqctl cannot
// know that node: with one queue, the message goes to it (when it is on
// the publisher's node, always on a single node); with more, the pick is
// not told.
func localRandom(x string, bs []*topology.Binding) (Choice, *topology.Binding) {
	c := Choice{Exchange: x, Random: true}
	for _, b := range bs {
		found := false
		for i := range c.Among {
			if c.Among[i].Name == b.Destination {
				c.Among[i].Bindings++
				found = true
			}
		}
		if !found {
			c.Among = append(c.Among, Target{Name: b.Destination, Type: b.DestinationType, Bindings: 1})
		}
	}
	slices.SortFunc(c.Among, func(a, b Target) int { return strings.Compare(a.Name, b.Name) })
	if len(c.Among) != 1 {
		return c, nil
	}
	c.Picked = &c.Among[0]
	return c, bs[0]
}

// modulusHash is the choice x-modulus-hash exchange x makes among its
// bindings bs (all with declared destinations) for a message with routing
// keys keys, and the binding it picks: nil where the version's pick
// cannot be told (see rmqversion ModulusHashPicksStably). RabbitMQ 4.3
// (rabbit_exchange_type_modulus_hash:route/3 at v4.3.5) lists one
// destination per binding (the route_by_source projection holds each
// binding: two keys to one queue are two entries), sorts them as Erlang
// sorts #resource{} records (kind exchange before queue, then the name
// byte by byte), and takes entry erlang:phash2(Keys, 2^27) rem N.
func (s *Simulator) modulusHash(x string, bs []*topology.Binding, keys []string) (Choice, *topology.Binding) {
	sorted := append([]*topology.Binding(nil), bs...)
	slices.SortStableFunc(sorted, func(a, b *topology.Binding) int {
		if c := strings.Compare(a.DestinationType, b.DestinationType); c != 0 {
			return c
		}
		return strings.Compare(a.Destination, b.Destination)
	})
	c := Choice{Exchange: x}
	for _, b := range sorted {
		if n := len(c.Among); n > 0 && c.Among[n-1].Name == b.Destination && c.Among[n-1].Type == b.DestinationType {
			c.Among[n-1].Bindings++
			continue
		}
		c.Among = append(c.Among, Target{Name: b.Destination, Type: b.DestinationType, Bindings: 1})
	}
	if !s.ver.ModulusHashPicksStably() {
		return c, nil
	}
	b := sorted[phash2(keys, modulusHashRange)%uint32(len(sorted))]
	c.Picked = &Target{Name: b.Destination, Type: b.DestinationType}
	for _, t := range c.Among {
		if t.Name == b.Destination && t.Type == b.DestinationType {
			c.Picked.Bindings = t.Bindings
		}
	}
	return c, b
}

func (s *Simulator) describeMatch(x string, m Message, keys []string) string {
	switch s.exchanges[x].routingType {
	case typeFanout:
		return "the message (a fanout exchange without bindings)"
	case typeModulusHash:
		return "the message (an x-modulus-hash exchange without bindings)"
	case typeLocalRandom:
		return "the message (an x-local-random exchange without a queue bound without a key)"
	case typeHeaders:
		if len(m.Headers) == 0 {
			return "a message without headers"
		}
		keys := make([]string, 0, len(m.Headers))
		for k, v := range m.Headers {
			if str, ok := v.(string); ok {
				keys = append(keys, fmt.Sprintf("%s=%q", k, str))
			} else {
				keys = append(keys, fmt.Sprintf("%s=%v", k, v))
			}
		}
		sort.Strings(keys)
		return "headers {" + strings.Join(keys, ", ") + "}"
	}
	if len(keys) > 1 {
		return fmt.Sprintf("routing keys %q (with CC/BCC)", keys)
	}
	return fmt.Sprintf("routing key %q", m.RoutingKey)
}

func (s *Simulator) destinationExists(b *topology.Binding) bool {
	switch b.DestinationType {
	case topology.DestQueue:
		_, ok := s.queues[b.Destination]
		return ok
	case topology.DestExchange:
		_, ok := s.exchanges[b.Destination]
		return ok
	}
	return false
}

func extend(path []Step, s Step) []Step {
	out := make([]Step, len(path), len(path)+1)
	copy(out, path)
	return append(out, s)
}

// RoutingType returns the type exchange name routes by: its type (direct,
// fanout, topic, headers, x-modulus-hash), or for x-delayed-message its
// x-delayed-type; "" for a type the simulator does not simulate and for
// an exchange it does not know (the default exchange included).
func (s *Simulator) RoutingType(name string) string {
	if ix := s.exchanges[name]; ix != nil {
		return ix.routingType
	}
	return ""
}

// Exchange returns exchange name as the simulator sees it: declared in the
// vhost, or one of the amq.* exchanges every vhost has. nil when there is
// no such exchange (and for "", the default exchange, which routes to
// every queue by name).
func (s *Simulator) Exchange(name string) *topology.Exchange {
	if ix := s.exchanges[name]; ix != nil {
		return ix.x
	}
	return nil
}
