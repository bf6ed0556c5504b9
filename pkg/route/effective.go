package route

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/mqctl/mqctl/pkg/kind"
	"github.com/mqctl/mqctl/pkg/pattern"
	"github.com/mqctl/mqctl/pkg/rmqversion"
	"github.com/mqctl/mqctl/pkg/topology"
)

// Effective settings: a queue's or exchange's own arguments combined with
// the one policy and the one operator policy that apply to it, as RabbitMQ
// 3.10 combines them (rabbit_policy, rabbit_amqqueue_process,
// rabbit_quorum_queue). Checked against RabbitMQ 3.10.8: a policy with
// ha-mode does not apply to a quorum queue (a lower-priority one does), and
// a quorum queue takes overflow from its policy over its own x-overflow.
// Where later versions combine differently (operator policies' overflow
// from 3.12.7, negative delivery limits from 4.0), the simulator's version
// decides (see operatorKey and mergeDeliveryLimit).

// Override says how a policy's value for a setting combines with an
// object's own argument for it, when both are set.
type Override int

const (
	// ArgumentWins (res_arg): the object's own argument applies; a policy
	// cannot change it.
	ArgumentWins Override = iota
	// SmallerWins (res_min): the smaller value applies; a policy can lower
	// it.
	SmallerWins
	// PolicyWins: the policy's value applies.
	PolicyWins
)

// policySetting maps a policy key onto the argument it stands for.
type policySetting struct {
	arg                    string
	classic, quorum, strem Override
}

// rule is how the setting combines on a queue of type qtype.
func (set policySetting) rule(qtype string) Override {
	switch qtype {
	case topology.QueueQuorum:
		return set.quorum
	case topology.QueueStream:
		return set.strem
	}
	return set.classic
}

// queueSettings lists the policy keys that stand for queue arguments.
// Classic queues: rabbit_amqqueue_process:process_args_policy. Quorum
// queues: rabbit_quorum_queue, where overflow is the one setting in which
// the policy beats the queue's own argument. Streams: rabbit_stream_queue,
// where a policy's retention and segment size beat the stream's own
// arguments (policy_precedence/2 at v3.10.8, v4.0.5 and v4.3.5; measured
// on 4.3.6: a policy's max-age 10s cut a stream with x-max-age 7D to its
// last segment).
var queueSettings = map[string]policySetting{
	"dead-letter-exchange":          {"x-dead-letter-exchange", ArgumentWins, ArgumentWins, ArgumentWins},
	"dead-letter-routing-key":       {"x-dead-letter-routing-key", ArgumentWins, ArgumentWins, ArgumentWins},
	"dead-letter-strategy":          {"x-dead-letter-strategy", ArgumentWins, ArgumentWins, ArgumentWins},
	"message-ttl":                   {"x-message-ttl", SmallerWins, SmallerWins, SmallerWins},
	"expires":                       {"x-expires", SmallerWins, SmallerWins, SmallerWins},
	"max-length":                    {"x-max-length", SmallerWins, SmallerWins, SmallerWins},
	"max-length-bytes":              {"x-max-length-bytes", SmallerWins, SmallerWins, PolicyWins},
	"max-in-memory-length":          {"x-max-in-memory-length", SmallerWins, SmallerWins, SmallerWins},
	"max-in-memory-bytes":           {"x-max-in-memory-bytes", SmallerWins, SmallerWins, SmallerWins},
	"overflow":                      {"x-overflow", ArgumentWins, PolicyWins, ArgumentWins},
	"delivery-limit":                {"x-delivery-limit", SmallerWins, SmallerWins, SmallerWins},
	"queue-mode":                    {"x-queue-mode", ArgumentWins, ArgumentWins, ArgumentWins},
	"queue-version":                 {"x-queue-version", ArgumentWins, ArgumentWins, ArgumentWins},
	"queue-master-locator":          {"x-queue-master-locator", ArgumentWins, ArgumentWins, ArgumentWins},
	"queue-leader-locator":          {"x-queue-leader-locator", ArgumentWins, ArgumentWins, ArgumentWins},
	"max-age":                       {"x-max-age", ArgumentWins, ArgumentWins, PolicyWins},
	"stream-max-segment-size-bytes": {"x-stream-max-segment-size-bytes", ArgumentWins, ArgumentWins, PolicyWins},
	"initial-cluster-size":          {"x-initial-cluster-size", ArgumentWins, ArgumentWins, ArgumentWins},
	// Consumer timeouts: the smaller applies (rabbit_queue_type
	// get_consumer_timeout/2 at v4.3.5, quorum queues; rabbit_channel at
	// v4.2.9, every type). 4.3's classic queues and streams ignore them.
	"consumer-timeout":              {"x-consumer-timeout", SmallerWins, SmallerWins, SmallerWins},
	"consumer-disconnected-timeout": {"x-consumer-disconnected-timeout", SmallerWins, SmallerWins, SmallerWins},
	// Delayed retry (4.3, quorum queues): the policy's type beats the
	// queue's own, the smaller min and the smaller max apply
	// (rabbit_quorum_queue get_delayed_retry_config/1 at v4.3.5).
	"delayed-retry-type": {"x-delayed-retry-type", ArgumentWins, PolicyWins, ArgumentWins},
	"delayed-retry-min":  {"x-delayed-retry-min", ArgumentWins, SmallerWins, ArgumentWins},
	"delayed-retry-max":  {"x-delayed-retry-max", ArgumentWins, SmallerWins, ArgumentWins},
}

// PolicyOverride says which policy key stands for argument arg of an
// object of kind (a queue of type qtype, or an exchange), and how the
// policy's value combines with the argument's: the rules the simulator
// applies (queueSettings; an exchange's alternate-exchange is its own
// argument's). key is "" for an argument no policy key stands for.
func PolicyOverride(kind, qtype, arg string) (key string, how Override) {
	if kind == "exchange" {
		if arg == "alternate-exchange" {
			return arg, ArgumentWins
		}
		return "", ArgumentWins
	}
	for k, set := range queueSettings {
		if set.arg == arg {
			return k, set.rule(qtype)
		}
	}
	return "", ArgumentWins
}

// operatorKey reports whether an operator policy may set key k
// (rmqversion OperatorPolicyKey): where a policy sets the same key, the
// smaller value applies (merge_policy_value), but for overflow and
// queue-version (3.12.7+) and delayed-retry-type (4.3.1+), whose operator
// value wins, and delayed-retry-min, whose larger value applies
// (rabbit_quorum_queue merge_policy_value/3 at v4.3.5).
func (s *Simulator) operatorKey(k string) bool {
	return s.ver.OperatorPolicyKey(k)
}

// mergeDeliveryLimit combines two delivery limits (policy and operator
// policy, or queue argument and policy): the smaller one; from 4.0, when
// either is negative (no limit), the larger.
func (s *Simulator) mergeDeliveryLimit(a, b any) any {
	if s.ver.NegativeDeliveryLimitDisables() {
		fa, okA := topology.Number(a)
		fb, okB := topology.Number(b)
		if okA && okB && (fa < 0 || fb < 0) {
			if fb > fa {
				return b
			}
			return a
		}
	}
	return minValue(a, b)
}

// unsupportedKeys returns, per queue type, the policy keys that type does
// not support in the simulator's version (rmqversion
// UnsupportedPolicyKeys): a policy that contains any of them does not
// apply to a queue of that type at all, so a lower-priority policy may
// apply instead. A policy with delivery-limit, say, applies to quorum
// queues only.
func unsupportedKeys(ver rmqversion.Version) map[string]map[string]bool {
	out := map[string]map[string]bool{}
	for _, typ := range []string{topology.QueueClassic, topology.QueueQuorum, topology.QueueStream} {
		out[typ] = map[string]bool{}
		for _, k := range ver.UnsupportedPolicyKeys(typ) {
			out[typ][k] = true
		}
	}
	return out
}

type compiledPolicy struct {
	p  *topology.Policy
	re *pattern.Pattern
}

// compilePolicies compiles the patterns, ordered by priority (highest
// first) and then by name. RabbitMQ leaves the choice between equal
// priorities undefined; mqctl takes the first name and reports the tie.
// A pattern Go cannot compile (PCRE-only syntax) is reported and skipped.
// So is a policy with a value or a key ver refuses (a max-length that is
// no number, delayed-retry-* keys before 4.3.1, an operator policy's
// dead-letter-exchange): the broker refuses the whole policy (rmqversion
// RefusesPolicy; validate, plan and lint report it), so none of its
// settings are in force.
func compilePolicies(k kind.Kind, ps map[string]*topology.Policy, ver rmqversion.Version, problems *[]string) []compiledPolicy {
	var out []compiledPolicy
	for _, name := range sortedNames(ps) {
		p := ps[name]
		if ver.RefusesPolicy(k, p.Definition) {
			continue
		}
		re, err := pattern.Compile(p.Pattern)
		if err != nil {
			*problems = append(*problems, fmt.Sprintf("%s %q: pattern %q cannot be evaluated (%v): mqctl ignores it; RabbitMQ refuses a pattern PCRE cannot read, so fix it", k.Label(), name, p.Pattern, err))
			continue
		}
		out = append(out, compiledPolicy{p: p, re: re})
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].p.Priority > out[j].p.Priority })
	return out
}

// appliesTo reports whether policy p can apply to an object of kind
// ("queue" or "exchange") and, for queues, queue type qtype, whose
// unsupported policy keys are unsupported.
func appliesTo(p *topology.Policy, kind, qtype string, unsupported map[string]bool) bool {
	switch p.ApplyTo {
	case "", "all":
	case "exchanges":
		if kind != "exchange" {
			return false
		}
	case "queues":
		if kind != "queue" {
			return false
		}
	case "classic_queues":
		if kind != "queue" || qtype != topology.QueueClassic {
			return false
		}
	case "quorum_queues":
		if kind != "queue" || qtype != topology.QueueQuorum {
			return false
		}
	case "streams":
		if kind != "queue" || qtype != topology.QueueStream {
			return false
		}
	default:
		return false
	}
	if kind == "queue" {
		for k := range p.Definition {
			if unsupported[k] {
				return false
			}
		}
	}
	return true
}

// matchPolicy returns the policy that applies to the object, and the
// name of another policy with the same priority that matches too, if any.
// unsupported are the policy keys of the queue type (nil for exchanges).
func matchPolicy(ps []compiledPolicy, kind, qtype, name string, unsupported map[string]bool) (*topology.Policy, string) {
	var won *topology.Policy
	for _, cp := range ps {
		if won != nil && cp.p.Priority < won.Priority {
			break
		}
		if !appliesTo(cp.p, kind, qtype, unsupported) || !cp.re.MatchString(name) {
			continue
		}
		if won != nil {
			return won, cp.p.Name
		}
		won = cp.p
	}
	return won, ""
}

// effectiveQueue holds what New computed for one queue.
type effectiveQueue struct {
	args             topology.Args
	policy, opPolicy *topology.Policy
}

func (s *Simulator) computeQueue(q *topology.Queue) effectiveQueue {
	qtype := queueType(q)
	e := effectiveQueue{}
	var tie string
	e.policy, tie = matchPolicy(s.policies, "queue", qtype, q.Name, s.unsupported[qtype])
	if tie != "" {
		s.problems = append(s.problems, fmt.Sprintf("queue %q: policies %q and %q both match with priority %d; RabbitMQ applies one of them arbitrarily (mqctl assumes %q); give them different priorities", q.Name, e.policy.Name, tie, e.policy.Priority, e.policy.Name))
		s.ties = append(s.ties, PolicyTie{Object: q.Name, Queue: true, Assumed: e.policy, Other: s.v.Policies[tie]})
	}
	e.opPolicy, tie = matchPolicy(s.opPolicies, "queue", qtype, q.Name, s.unsupported[qtype])
	if tie != "" {
		s.problems = append(s.problems, fmt.Sprintf("queue %q: operator policies %q and %q both match with priority %d; RabbitMQ applies one of them arbitrarily (mqctl assumes %q); give them different priorities", q.Name, e.opPolicy.Name, tie, e.opPolicy.Priority, e.opPolicy.Name))
		s.ties = append(s.ties, PolicyTie{Object: q.Name, Queue: true, Operator: true, Assumed: e.opPolicy, Other: s.v.OperatorPolicies[tie]})
	}
	pol := s.policyValues(e.policy, e.opPolicy)
	// Without a policy in force the queue's own table is its effective
	// one, shared (the simulator never changes it, and QueueArgs returns
	// a copy): a vhost of 25,000 queues is not copied for each simulator.
	e.args = q.Arguments
	if len(pol) == 0 {
		return e
	}
	e.args = q.Arguments.Clone()
	if e.args == nil {
		e.args = topology.Args{}
	}
	for k, pv := range pol {
		set, ok := queueSettings[k]
		if !ok {
			continue
		}
		if _, list := pv.([]any); list && k == "max-age" {
			// A policy's max-age written as a list (["7", "D"]), which the
			// policy's check takes: a stream reads an age only from one
			// string and hands the list to its retention, which trims
			// nothing by it (rmqversion.ListMaxAgeStopsNode: before
			// 3.13.1 it takes the node down, and plan refuses it). The
			// policy's value beats the stream's own x-max-age all the
			// same (policy_precedence/2), so the stream has no age.
			if set.rule(qtype) == PolicyWins {
				delete(e.args, set.arg)
			}
			continue
		}
		av, has := e.args[set.arg]
		if !has {
			e.args[set.arg] = pv
			continue
		}
		rule := set.rule(qtype)
		switch {
		case rule == SmallerWins && k == "delivery-limit":
			e.args[set.arg] = s.mergeDeliveryLimit(pv, av)
		case rule == SmallerWins:
			e.args[set.arg] = minValue(pv, av)
		case rule == PolicyWins:
			e.args[set.arg] = pv
		}
	}
	return e
}

// policyValues is the value of each key of a queue's policy and operator
// policy (either nil), merged (rabbit_policy:get/2): the keys an operator
// policy may set, with the smaller value winning, but for the keys whose
// operator value wins, the larger delayed-retry-min and the delivery
// limits' own rule. nil for no policy.
func (s *Simulator) policyValues(policy, opPolicy *topology.Policy) map[string]any {
	if policy == nil && opPolicy == nil {
		return nil
	}
	pol := map[string]any{}
	if policy != nil {
		for k, v := range policy.Definition {
			pol[k] = topology.Normalize(v)
		}
	}
	if opPolicy == nil {
		return pol
	}
	for k, v := range opPolicy.Definition {
		if !s.operatorKey(k) {
			continue
		}
		v = topology.Normalize(v)
		if old, ok := pol[k]; ok {
			switch {
			case rmqversion.OperatorPolicyKeyWins(k), k == "delayed-retry-type":
			case k == "delayed-retry-min":
				v = maxValue(old, v)
			case k == "delivery-limit":
				v = s.mergeDeliveryLimit(old, v)
			default:
				v = minValue(old, v)
			}
		}
		pol[k] = v
	}
	return pol
}

func (s *Simulator) computeExchange(x *topology.Exchange) (topology.Args, *topology.Policy) {
	p, tie := matchPolicy(s.policies, "exchange", "", x.Name, nil)
	if tie != "" {
		s.problems = append(s.problems, fmt.Sprintf("exchange %q: policies %q and %q both match with priority %d; RabbitMQ applies one of them arbitrarily (mqctl assumes %q); give them different priorities", x.Name, p.Name, tie, p.Priority, p.Name))
		s.ties = append(s.ties, PolicyTie{Object: x.Name, Assumed: p, Other: s.v.Policies[tie]})
	}
	args := x.Arguments.Clone()
	if p != nil {
		// rabbit_policy:get_arg: the exchange's own argument wins.
		if ae, ok := p.Definition["alternate-exchange"]; ok && !args.Has("alternate-exchange") {
			if args == nil {
				args = topology.Args{}
			}
			args["alternate-exchange"] = topology.Normalize(ae)
		}
	}
	return args, p
}

// maxValue returns the larger of two numbers; when either is not a
// number (an invalid setting), the first.
func maxValue(a, b any) any {
	fa, okA := topology.Number(a)
	fb, okB := topology.Number(b)
	if okA && okB && fb > fa {
		return b
	}
	return a
}

// minValue returns the smaller of two numbers; when either is not a
// number (an invalid setting), the first.
func minValue(a, b any) any {
	fa, okA := topology.Number(a)
	fb, okB := topology.Number(b)
	if !okA || !okB {
		return a
	}
	if fb < fa {
		return b
	}
	return a
}

func queueType(q *topology.Queue) string {
	if q.Type == "" {
		return topology.QueueClassic
	}
	return q.Type
}

// QueueArgs returns the effective arguments of queue name: its own
// arguments merged with the policy and operator policy that apply to it,
// policy keys mapped to argument names (dead-letter-exchange ->
// x-dead-letter-exchange, message-ttl -> x-message-ttl, …). Where both the
// queue and a policy set a value, dead-letter settings come from the queue,
// numeric limits take the smaller value, and overflow comes from the queue
// for classic queues but from the policy for quorum queues. nil for an
// undeclared queue. The result is a copy.
func (s *Simulator) QueueArgs(name string) topology.Args {
	e, ok := s.queues[name]
	if !ok {
		return nil
	}
	return e.args.Clone()
}

// QueueArg returns the effective argument key of queue name (see
// QueueArgs) without copying the table: the value must not be changed.
// false when the queue is not declared or the argument not in force.
func (s *Simulator) QueueArg(name, key string) (any, bool) {
	v, ok := s.queues[name].args[key]
	return v, ok
}

// DropsHead reports whether queue name, over a length limit, drops (or
// dead-letters) its oldest messages: its effective overflow is drop-head
// (the default), or reject-publish-dlx on a quorum queue, which does not
// know it and falls back to drop-head (rabbit_quorum_queue:overflow/3 at
// v3.10.8, v4.0.5 and v4.3.5). false for a queue that is not declared.
func (s *Simulator) DropsHead(name string) bool {
	q, ok := s.v.Queues[name]
	if !ok || q == nil {
		return false
	}
	overflow, _ := s.queues[name].args.String("x-overflow")
	return overflow == "" || overflow == "drop-head" || (overflow == "reject-publish-dlx" && queueType(q) == topology.QueueQuorum)
}

// QueueArgSource says where the effective argument arg of queue name (see
// QueueArgs) comes from: the queue's own argument (arg itself), or the
// policy or operator policy whose key stands for it (`policy "limits"'s
// max-length`). "" when the argument is not in force.
func (s *Simulator) QueueArgSource(name, arg string) string {
	if _, set := s.queues[name].args[arg]; !set {
		return ""
	}
	pol, operator := s.QueueArgPolicy(name, arg)
	if pol == nil {
		return arg
	}
	what := "policy"
	if operator {
		what = "operator policy"
	}
	key, _ := PolicyOverride("queue", queueType(s.v.Queues[name]), arg)
	return fmt.Sprintf("%s %q's %s", what, pol.Name, key)
}

// QueueArgPolicy returns the policy or operator policy (operator true)
// whose value of the key that stands for argument arg is the effective
// one of queue name (see QueueArgs); nil when the queue's own argument
// is, or the argument is not in force. Where a policy and the queue's own
// argument hold the same value, the queue's own is named.
func (s *Simulator) QueueArgPolicy(name, arg string) (pol *topology.Policy, operator bool) {
	e, ok := s.queues[name]
	v, set := e.args[arg]
	if !ok || !set {
		return nil, false
	}
	if q := s.v.Queues[name]; q != nil && q.Arguments.Has(arg) && topology.ValueEqual(q.Arguments[arg], v) {
		return nil, false
	}
	key, _ := PolicyOverride("queue", queueType(s.v.Queues[name]), arg)
	if key == "" {
		return nil, false
	}
	if p := e.opPolicy; p != nil && s.operatorKey(key) {
		if pv, has := p.Definition[key]; has && topology.ValueEqual(pv, v) {
			return p, true
		}
	}
	if p := e.policy; p != nil {
		if pv, has := p.Definition[key]; has && topology.ValueEqual(pv, v) {
			return p, false
		}
	}
	return nil, false
}

// QueuePolicyObjects returns the policy and the operator policy that
// apply to queue name (nil when none).
func (s *Simulator) QueuePolicyObjects(name string) (policy, operatorPolicy *topology.Policy) {
	e := s.queues[name]
	return e.policy, e.opPolicy
}

// QueuePolicies returns the names of the policy and of the operator policy
// that apply to queue name ("" when none).
func (s *Simulator) QueuePolicies(name string) (policy, operatorPolicy string) {
	e := s.queues[name]
	if e.policy != nil {
		policy = e.policy.Name
	}
	if e.opPolicy != nil {
		operatorPolicy = e.opPolicy.Name
	}
	return policy, operatorPolicy
}

// ExchangeArgs returns the effective arguments of exchange name: its own
// arguments plus the policy's alternate-exchange when it has none. nil for
// an undeclared exchange. The result is a copy.
func (s *Simulator) ExchangeArgs(name string) topology.Args {
	if _, ok := s.exchanges[name]; !ok {
		return nil
	}
	return s.exchangeArgs[name].Clone()
}

// ExchangePolicy returns the name of the policy that applies to exchange
// name ("" when none).
func (s *Simulator) ExchangePolicy(name string) string {
	if p := s.exchangePolicy[name]; p != nil {
		return p.Name
	}
	return ""
}

// Reasons returns the ways queue name can dead-letter a message, in the
// order rejected, expired, maxlen, delivery_limit:
//   - rejected: always (basic.reject / basic.nack without requeue);
//   - expired: when a queue-level message TTL is in force (a per-message
//     expiration can expire a message in any queue; it is not listed);
//   - maxlen: when a length limit is in force and overflow is drop-head
//     (the default) or reject-publish-dlx;
//   - delivery_limit: quorum queues with a delivery limit (see
//     DeliveryLimit): from 4.0 every quorum queue has one unless it is
//     negative.
//
// Streams never dead-letter: nil. nil for an undeclared queue too.
func (s *Simulator) Reasons(name string) []Reason { return s.ReasonsFor(name, Message{}) }

// ReasonsFor is Reasons for message m: expired also when m has an
// expiration (see ExpiresAfter).
func (s *Simulator) ReasonsFor(name string, m Message) []Reason {
	q, ok := s.v.Queues[name]
	if !ok || q == nil || queueType(q) == topology.QueueStream {
		return nil
	}
	args := s.queues[name].args
	out := []Reason{Rejected}
	if _, expires := s.ExpiresAfter(name, m); expires {
		out = append(out, Expired)
	}
	if args.Has("x-max-length") || args.Has("x-max-length-bytes") {
		overflow, _ := args.String("x-overflow")
		switch overflow {
		case "", "drop-head", "reject-publish-dlx":
			// Quorum queues do not know reject-publish-dlx: set by a
			// policy it falls back to drop-head, which dead-letters too.
			out = append(out, MaxLen)
		}
	}
	if _, ok := s.DeliveryLimit(name); ok {
		out = append(out, DeliveryLimit)
	}
	return out
}

// DeliveryLimit returns the delivery limit of queue name and true when it
// is a quorum queue that has one: past it a message is dead-lettered with
// reason delivery_limit, or dropped without a dead-letter exchange. Before
// 4.3 every return counts towards it; 4.3 counts failed deliveries only
// (a basic.reject with requeue counts, a basic.nack with requeue does not;
// see DeliveryLimitRule). The limit is the effective x-delivery-limit
// (argument or policy); without one it is the version's default
// (rmqversion QuorumDeliveryLimit: 20 from 4.0, none before). From 4.0 a
// negative limit means none; before, a negative limit (which only an
// argument can set) dead-letters a message at its first return.
func (s *Simulator) DeliveryLimit(name string) (int64, bool) {
	q, ok := s.v.Queues[name]
	if !ok || q == nil || queueType(q) != topology.QueueQuorum {
		return 0, false
	}
	limit, ok := s.queues[name].args.Int("x-delivery-limit")
	if !ok {
		if d := s.ver.QuorumDeliveryLimit(); d > 0 {
			return int64(d), true
		}
		return 0, false
	}
	if limit < 0 && s.ver.NegativeDeliveryLimitDisables() {
		return 0, false
	}
	return limit, true
}

// PolicyTie is a queue or exchange that two policies (or operator
// policies) of the highest priority among those matching it both match:
// RabbitMQ applies one of them, which is not defined (rabbit_policy sorts
// by priority alone); the simulator assumes Assumed, the first by name.
type PolicyTie struct {
	Object          string // the queue's or exchange's name
	Queue, Operator bool   // a queue (else an exchange); operator policies
	Assumed, Other  *topology.Policy
}

// Ties returns the policy ties New found, in the order met.
func (s *Simulator) Ties() []PolicyTie { return slices.Clone(s.ties) }

// Problems returns what New found questionable about the vhost's policies:
// patterns mqctl cannot evaluate, operator policies with keys the broker
// refuses, ties between equal-priority policies.
func (s *Simulator) Problems() []string {
	return append([]string(nil), s.problems...)
}

func (s *Simulator) checkOperatorPolicies(ps map[string]*topology.Policy) {
	problems := &s.problems
	for _, name := range sortedNames(ps) {
		var bad []string
		for _, k := range ps[name].Definition.Keys() {
			if !s.operatorKey(k) {
				bad = append(bad, k)
			}
		}
		if len(bad) > 0 {
			*problems = append(*problems, fmt.Sprintf("operator policy %q sets %s, which operator policies cannot set: RabbitMQ refuses the whole operator policy, so none of its settings apply (nor here); move them to a policy", name, strings.Join(bad, ", ")))
		}
	}
}

func sortedNames[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// PolicyMatcher tells which of a vhost's policies (not operator policies)
// applies to a queue, as New does, without a whole simulation: for a
// caller that needs it for a few queues of a large vhost.
type PolicyMatcher struct {
	policies    []compiledPolicy
	unsupported map[string]map[string]bool
}

// NewPolicyMatcher compiles v's policies for version ver.
func NewPolicyMatcher(v *topology.Vhost, ver rmqversion.Version) *PolicyMatcher {
	var problems []string
	return &PolicyMatcher{policies: compilePolicies(kind.Policy, v.Policies, ver, &problems), unsupported: unsupportedKeys(ver)}
}

// QueuePolicy returns the policy that applies to queue q, nil for none.
func (m *PolicyMatcher) QueuePolicy(q *topology.Queue) *topology.Policy {
	qtype := queueType(q)
	p, _ := matchPolicy(m.policies, "queue", qtype, q.Name, m.unsupported[qtype])
	return p
}
