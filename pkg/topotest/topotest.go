// Package topotest checks a topology file's `tests:` expectations: where a
// probe message lands after it is published, rejected from a queue,
// expired from a queue, or scheduled on a delay tier.
//
// Simulate answers with the routing simulator (pkg/route), offline.
// RunLive applies the file's vhost into a throwaway vhost on a real
// broker, publishes real probe messages there, looks where they land, and
// deletes the vhost.
package topotest

import (
	"fmt"
	"github.com/mqctl/mqctl/pkg/rmqversion"
	"slices"
	"strings"

	"github.com/mqctl/mqctl/pkg/loader"
	"github.com/mqctl/mqctl/pkg/route"
	"github.com/mqctl/mqctl/pkg/topology"
)

// FormatVersion is the version of the JSON report.
const FormatVersion = "1"

// Outcome is the result of one test.
type Outcome struct {
	Name  string       `json:"name"`
	Vhost string       `json:"vhost"`
	Pos   topology.Pos `json:"pos"`
	// Passed is true when the message landed in exactly Expected.
	Passed bool `json:"passed"`
	// Unknown is true when the simulator cannot tell whether the test
	// passes: the message goes through an exchange whose pick it cannot
	// know (an x-modulus-hash exchange before RabbitMQ 4.3, a plugin type
	// it does not simulate), and what it can tell agrees with Expected.
	// Got then holds where the message certainly lands; Message says why
	// the rest is unknown. `mqctl test --live` answers.
	Unknown bool `json:"unknown,omitempty"`
	// Random is set on an Unknown outcome that depends on a random pick
	// (an x-local-random exchange with several queues): a live run cannot
	// decide it either.
	Random   bool     `json:"random,omitempty"`
	Expected []string `json:"expected"`
	// Got is where the message landed (sorted); nil when the test could
	// not get that far (see Message).
	Got []string `json:"got"`
	// Message explains a failure in one line.
	Message string `json:"message,omitempty"`
	// Hops is the route the simulator gives the message, one edge per
	// entry, ending with any problem it found on the way.
	Hops []string `json:"hops,omitempty"`
}

// Report is the answer of one `mqctl test` run.
type Report struct {
	FormatVersion string    `json:"format_version"`
	Live          bool      `json:"live"`
	Tests         []Outcome `json:"tests"`
	Passed        int       `json:"passed"`
	Failed        int       `json:"failed"`
	// Unknown counts the tests the simulator could not decide (Outcome.
	// Unknown): neither passed nor failed.
	Unknown int `json:"unknown"`
	// NotRun names the tests a live run did not get to, in file order:
	// an error stopped it (the throwaway copy of their vhost refused,
	// the broker gone), which the command reports after the report.
	NotRun []string `json:"not_run,omitempty"`
}

func newReport(live bool, outcomes []Outcome) *Report {
	r := &Report{FormatVersion: FormatVersion, Live: live, Tests: outcomes}
	if r.Tests == nil {
		r.Tests = []Outcome{}
	}
	for _, o := range outcomes {
		switch {
		case o.Passed:
			r.Passed++
		case o.Unknown:
			r.Unknown++
		default:
			r.Failed++
		}
	}
	return r
}

// OK reports whether no test failed. A test the simulator could not
// decide does not fail the run: the report counts it, and says why.
func (r *Report) OK() bool { return r.Failed == 0 }

// Simulate checks every test with the routing simulator, following the
// rules of RabbitMQ version ver.
func Simulate(t *topology.Topology, tests []topology.Test, ver rmqversion.Version) *Report {
	sims := map[string]*route.Simulator{}
	out := make([]Outcome, 0, len(tests))
	for _, tc := range tests {
		o := newOutcome(tc)
		v := t.Vhosts[tc.Vhost]
		if v == nil {
			o.Message = fmt.Sprintf("vhost %q is not in the topology", tc.Vhost)
			out = append(out, o)
			continue
		}
		sim, ok := sims[tc.Vhost]
		if !ok {
			sim = route.NewWith(v, route.Options{Version: ver})
			sims[tc.Vhost] = sim
		}
		p := predict(sim, v, tc)
		o.Hops = p.hops
		switch {
		case p.problem != "":
			o.Message = p.problem
		case len(p.unsure) > 0:
			o.Got = p.queues
			o.judgeUnsure(p)
		default:
			o.Got = p.queues
			o.judge("", v, p)
		}
		out = append(out, o)
	}
	return newReport(false, out)
}

func newOutcome(tc topology.Test) Outcome {
	exp := tc.Expect
	if exp == nil {
		exp = []string{}
	}
	return Outcome{Name: tc.Name, Vhost: tc.Vhost, Pos: tc.Pos, Expected: exp}
}

// judge compares Got with Expected and writes the failure message, with
// what to change in v or the test; where says where the result comes from
// (e.g. " on the broker").
func (o *Outcome) judge(where string, v *topology.Vhost, p prediction) {
	if slices.Equal(o.Got, o.Expected) {
		o.Passed = true
		return
	}
	o.Message = fmt.Sprintf("expected %s, got %s%s; %s", list(o.Expected), list(o.Got), where, fixFor(v, o.Expected, o.Got, slices.Concat(p.refused, p.passed), p.later))
}

// fixFor says what to change where a test's message landed in got, not
// in expected: each queue that gets it too (the hops show through what),
// and each that it does not reach, with the bindings that lead there, so
// that the user can tell whether the test or the wiring is wrong. Those
// of keptNothing the message reaches, and they keep nothing (the hops say
// why: a limit or TTL of 0). later says, for an expected queue the
// message reaches only after it dies in one it lands in, the test that
// checks that (prediction.later).
func fixFor(v *topology.Vhost, expected, got, keptNothing []string, later map[string]laterHint) string {
	var parts []string
	// A queue the message dies in on its way to an expected one is no
	// wrong wiring: the advice of later says what to test.
	extra := slices.DeleteFunc(minus(got, expected), func(q string) bool {
		for _, h := range later {
			if h.from == q {
				return true
			}
		}
		return false
	})
	if len(extra) > 0 {
		parts = append(parts, fmt.Sprintf("%s %s it (the hops show how): add %s to expect.queues if that is right, else change the binding or dead-letter wiring that leads there",
			quoted(extra), pick(len(extra), "gets", "get"), pick(len(extra), "it", "them")))
	}
	missing := minus(expected, got)
	if held := intersect(missing, keptNothing); len(held) > 0 {
		missing = minus(missing, held)
		parts = append(parts, fmt.Sprintf("%s %s it but %s nothing (the hops say why): if %s should keep it, change %s limits or message TTL; else take %s out of expect.queues",
			quoted(held), pick(len(held), "gets", "get"), pick(len(held), "keeps", "keep"), pick(len(held), "it", "they"), pick(len(held), "its", "their"), pick(len(held), "it", "them")))
	}
	for _, q := range missing {
		if h, ok := later[q]; ok {
			parts = append(parts, h.advice)
		}
	}
	missing = slices.DeleteFunc(missing, func(q string) bool { _, ok := later[q]; return ok })
	if len(missing) > 0 {
		var how []string
		for _, q := range missing {
			how = append(how, fmt.Sprintf("%q is %s", q, boundFrom(v, q)))
		}
		parts = append(parts, fmt.Sprintf("it does not reach %s (%s): if it should, bind %s to an exchange the message passes, with a key or headers it matches; else take %s out of expect.queues, or fix the test's publish",
			quoted(missing), strings.Join(how, "; "), pick(len(missing), "it", "them"), pick(len(missing), "it", "them")))
	}
	return strings.Join(parts, "; ")
}

// boundFrom names the bindings that lead to queue q of v.
func boundFrom(v *topology.Vhost, q string) string {
	var from []string
	for _, b := range v.Bindings {
		if b.DestinationType == topology.DestExchange || b.Destination != q {
			continue
		}
		switch {
		case len(b.Arguments) > 0 && v.ExchangeType(b.Source) == "headers":
			from = append(from, fmt.Sprintf("%s %s", b.Source, b.Arguments.Canonical()))
		case v.ExchangeType(b.Source) == "fanout":
			from = append(from, b.Source)
		default:
			from = append(from, fmt.Sprintf("%s [%s]", b.Source, b.RoutingKey))
		}
	}
	if len(from) == 0 {
		return fmt.Sprintf("bound to no exchange: only the default exchange reaches it, with the key %q", q)
	}
	slices.Sort(from)
	return "bound from " + strings.Join(slices.Compact(from), ", ")
}

func intersect(a, b []string) []string {
	var out []string
	for _, x := range a {
		if slices.Contains(b, x) {
			out = append(out, x)
		}
	}
	return out
}

func minus(a, b []string) []string {
	var out []string
	for _, x := range a {
		if !slices.Contains(b, x) {
			out = append(out, x)
		}
	}
	return out
}

func quoted(qs []string) string {
	out := make([]string, len(qs))
	for i, q := range qs {
		out[i] = fmt.Sprintf("%q", q)
	}
	return strings.Join(out, ", ")
}

func pick(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// judgeUnsure judges a prediction of which only Got is certain: the
// message may land in more queues through the exchanges unsure names. A
// certain queue that Expected lacks fails the test; anything else is
// unknown.
//
// A queue Expected has that no pick can lead to (p.possible) fails it too;
// a random pick (p.random) means that no run can tell either.
func (o *Outcome) judgeUnsure(p prediction) {
	unsure := p.unsure
	for _, q := range o.Got {
		if !slices.Contains(o.Expected, q) {
			o.Message = fmt.Sprintf("expected %s, got at least %s (%s)", list(o.Expected), list(o.Got), strings.Join(unsure, "; "))
			return
		}
	}
	if p.possible != nil {
		for _, q := range o.Expected {
			if !slices.Contains(p.possible, q) {
				o.Message = fmt.Sprintf("expected %s, but the message can land only in %s (%s)", list(o.Expected), list(p.possible), strings.Join(unsure, "; "))
				return
			}
		}
	}
	o.Unknown = true
	if p.random {
		o.Random = true
		o.Message = fmt.Sprintf("cannot tell whether the message lands in %s: %s; a live run cannot tell either, its answer changes from run to run. Test what the message certainly reaches, or publish to one of the queues by name (the default exchange)", list(o.Expected), strings.Join(unsure, "; "))
		return
	}
	o.Message = fmt.Sprintf("cannot tell offline whether the message lands in %s: %s; run `mqctl test --live` to ask the broker", list(o.Expected), strings.Join(unsure, "; "))
}

func list(qs []string) string { return "[" + strings.Join(qs, " ") + "]" }

// prediction is what the simulator says about one test.
type prediction struct {
	queues []string // where the message lands, sorted, never nil
	hops   []string
	// problem says why the test cannot do what it says (the probe never
	// reaches the queue to reject, the queue never expires messages, …).
	problem string
	// static marks a problem of the file that a live run must report as
	// well (a queue without TTL, a stream), rather than observe.
	static bool
	// unsure says, one clause per exchange, why the message may land in
	// more queues than queues: exchanges whose pick the simulator cannot
	// know. queues are then only where it certainly lands.
	unsure []string
	// random: one of those exchanges picks at random (x-local-random), so
	// no run can tell either: the broker's answer changes from run to run.
	random bool
	// later maps an expected queue the publish does not reach, but a
	// dead letter of a queue it lands in does (a delay tier's return, a
	// reject or an expiry), to the advice to test that instead of the
	// publish alone.
	later map[string]laterHint
	// refused are the queues that refuse the message (a classic queue with
	// a length limit of 0 and overflow reject-publish): a publisher using
	// confirms gets a basic.nack, and the other queues keep their copies.
	refused []string
	// passed are the queues the message reaches (or, for a test that
	// rejects or expires it, the queue it does that in) that keep nothing.
	passed []string
	// possible are all the queues the message may land in, where the
	// simulator knows them (the exchanges in unsure pick among known
	// queues); nil where it cannot tell.
	possible []string
}

// unsureOf names the exchanges of a result whose routing the simulator
// could not follow, and what it knows about each.
func unsureOf(r route.Result, ver string) (out []string, random bool) {
	chose := map[string]bool{}
	for _, c := range r.OneOf {
		if c.Picked != nil {
			continue
		}
		chose[c.Exchange] = true
		among := make([]string, 0, len(c.Among))
		for _, t := range c.Among {
			among = append(among, t.Type+" "+t.Name)
		}
		if c.Random {
			random = true
			out = append(out, fmt.Sprintf("exchange %q (x-local-random) delivers it to one of [%s], picked at random among those on the node the publisher is connected to", c.Exchange, strings.Join(among, ", ")))
			continue
		}
		out = append(out, fmt.Sprintf("exchange %q (x-modulus-hash) delivers it to exactly one of [%s], picked by a hash over the bindings in an order RabbitMQ %s does not fix (4.3 sorts them)", c.Exchange, strings.Join(among, ", "), ver))
	}
	for _, x := range r.Unsimulated {
		if !chose[x] {
			out = append(out, fmt.Sprintf("exchange %q is of a type mqctl does not simulate", x))
		}
	}
	return out, random
}

// possibleOf returns every queue r may deliver to: its deliveries and the
// queues its choices pick among; nil when it passes an exchange that is
// not simulated, or a choice among exchanges (which lead further).
func possibleOf(r route.Result) []string {
	out := slices.Clone(r.Queues())
	chose := map[string]bool{}
	for _, c := range r.OneOf {
		chose[c.Exchange] = true
		for _, t := range c.Among {
			if t.Type != topology.DestQueue {
				return nil
			}
			out = append(out, t.Name)
		}
	}
	for _, x := range r.Unsimulated {
		if !chose[x] {
			return nil
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// ProbeBody is the body of every probe message: a test's message is the
// probe `mqctl test --live` publishes, whose size is known, so a queue's
// length limit in bytes that holds it for certain decides nothing
// (route.SizeBound).
const ProbeBody = "mqctl test probe"

func message(tc topology.Test) route.Message {
	return route.Message{Exchange: tc.Publish.Exchange, RoutingKey: tc.Publish.RoutingKey, Headers: tc.Publish.Headers,
		Body: int64(len(ProbeBody)), BodyKnown: true}
}

func predict(sim *route.Simulator, v *topology.Vhost, tc topology.Test) prediction {
	var p prediction
	msg := message(tc)
	pub := sim.Publish(msg)
	for _, d := range pub.Deliveries {
		p.hops = append(p.hops, pathText(d.Path))
	}
	p.hops = append(p.hops, pub.Problems...)
	p.unsure, p.random = unsureOf(pub, sim.Version().String())
	if tc.Action == topology.ActionNone {
		p.land(sim, pub)
		p.later = laterFor(sim, v, tc, msg, p.queues)
		return p
	}
	verb := map[topology.TestAction]string{topology.ActionReject: "rejected", topology.ActionExpire: "expire"}[tc.Action]
	if q := v.Queues[tc.Queue]; q != nil && q.Type == topology.QueueStream {
		p.problem = fmt.Sprintf("queue %q is a stream: streams never dead-letter, so nothing can be %s there", tc.Queue, verb)
		p.static = true
		return p
	}
	if !slices.Contains(pub.Queues(), tc.Queue) && len(p.unsure) > 0 {
		p.queues = []string{}
		p.unsure = append([]string{fmt.Sprintf("it may not reach queue %q to be %s there", tc.Queue, verb)}, p.unsure...)
		return p
	}
	p.unsure, p.random = nil, false
	if !slices.Contains(pub.Queues(), tc.Queue) {
		p.problem = fmt.Sprintf("the message does not reach queue %q (it reaches %s), so it cannot be %s there; fix the test's publish, or the bindings", tc.Queue, list(pub.Queues()), verb)
		if tc.Retry != nil {
			p.problem = fmt.Sprintf("the default exchange does not route to the delay tier %q", tc.Queue)
		}
		return p
	}
	reason := route.Rejected
	arrival := sim.OnArrival(tc.Queue, msg)
	if arrival.Unsure {
		p.queues = []string{}
		p.unsure = []string{fmt.Sprintf("queue %q may not keep it to be %s there: %s", tc.Queue, verb, arrival.Why)}
		return p
	}
	if !arrival.Keeps() && (tc.Action != topology.ActionExpire || arrival.Reason != route.Expired) {
		p.problem = fmt.Sprintf("queue %q keeps no message (%s), so none can be %s there; test where the publish lands instead", tc.Queue, route.ArrivalText(arrival), verb)
		p.static = true
		return p
	}
	if tc.Action == topology.ActionExpire {
		reason = route.Expired
		if arrival.Keeps() && !slices.Contains(sim.Reasons(tc.Queue), route.Expired) {
			p.problem = fmt.Sprintf("queue %q has no message TTL (x-message-ttl, by argument or policy), so its messages never expire; set limits.message_ttl on it, or test a reject instead", tc.Queue)
			p.static = true
			return p
		}
	}
	dl := sim.DeadLetter(tc.Queue, reason, msg)
	p.hops = append(p.hops, deadLetterText(dl)...)
	p.land(sim, dl.Result)
	if !arrival.Keeps() {
		p.passed = append(p.passed, tc.Queue)
	}
	return p
}

// land sets where the message routed by r ends up (route.Simulator.Land):
// the queues that keep it, after the dead letters of those that keep
// nothing, which the hops explain; what the simulator cannot tell on the
// way; and the queues that refuse it.
func (p *prediction) land(sim *route.Simulator, r route.Result) {
	l := sim.Land(r)
	p.queues = l.Queues
	p.refused = l.Refused()
	for _, ps := range l.Passed {
		p.passed = append(p.passed, ps.Queue)
	}
	p.unsure, p.random = nil, false
	for _, res := range l.Results {
		u, random := unsureOf(res, sim.Version().String())
		p.unsure = append(p.unsure, u...)
		p.random = p.random || random
	}
	for _, ps := range l.Passed {
		p.hops = append(p.hops, fmt.Sprintf("%s %s", ps.Queue, route.ArrivalText(ps.Arrival)))
		if ps.DeadLetter != nil {
			p.hops = append(p.hops, deadLetterText(*ps.DeadLetter)...)
		}
	}
	p.possible = possibleOfLanding(sim, l)
	// A queue that keeps the message only if it fits in its length limit
	// in bytes: the simulator does not know the message's size, so it may
	// land there or, bigger, where the queue's overflow sends it.
	for _, res := range l.Results {
		for _, d := range res.Deliveries {
			if a := sim.OnArrival(d.Queue, res.Message); a.Unsure && slices.Contains(p.queues, d.Queue) {
				p.queues = slices.DeleteFunc(slices.Clone(p.queues), func(q string) bool { return q == d.Queue })
				p.unsure = append(p.unsure, fmt.Sprintf("queue %q: %s", d.Queue, a.Why))
				p.possible = nil
			}
		}
	}
	if l.Endless {
		p.problem = "the message is dead-lettered from queue to queue without end, each keeping nothing; give one of them a message TTL above 0, or no length limit of 0"
	}
}

// possibleOfLanding is possibleOf over every route of l, less the queues
// that keep nothing; nil where a pick may lead to a queue that keeps
// nothing (its dead letters are not followed) or possibleOf is nil.
func possibleOfLanding(sim *route.Simulator, l route.Landing) []string {
	var out []string
	for _, res := range l.Results {
		for _, c := range res.OneOf {
			for _, t := range c.Among {
				if t.Type == topology.DestQueue && !sim.OnArrival(t.Name, res.Message).Keeps() {
					return nil
				}
			}
		}
		qs := possibleOf(res)
		if qs == nil {
			return nil
		}
		out = append(out, qs...)
	}
	out = slices.DeleteFunc(out, func(q string) bool {
		return !slices.Contains(l.Queues, q) && slices.ContainsFunc(l.Passed, func(ps route.Passage) bool { return ps.Queue == q })
	})
	slices.Sort(out)
	return slices.Compact(out)
}

// pathText renders one delivery's path: `orders [order.created] -> q`.
func pathText(steps []route.Step) string {
	var sb strings.Builder
	for i, s := range steps {
		if i == 0 {
			sb.WriteString(exchangeName(s.Exchange))
		}
		switch {
		case s.Via == route.ViaAlternate:
			sb.WriteString(" (alternate exchange)")
		case len(s.BindingArgs) > 0:
			sb.WriteString(" " + s.BindingArgs.Canonical())
		case s.ExchangeType == "fanout":
		default:
			fmt.Fprintf(&sb, " [%s]", s.BindingKey)
		}
		sb.WriteString(" -> " + s.To)
	}
	return sb.String()
}

func exchangeName(x string) string {
	if x == "" {
		return "(default exchange)"
	}
	return x
}

// deadLetterText renders where one queue's dead letter goes.
func deadLetterText(dl route.DeadLetterRoute) []string {
	head := fmt.Sprintf("%s %s", dl.Queue, dl.Reason)
	if !dl.Configured {
		if len(dl.Result.Problems) > 0 {
			return append([]string{head + ": dropped"}, dl.Result.Problems...)
		}
		return []string{fmt.Sprintf("%s: dropped (queue %q has no dead-letter exchange)", head, dl.Queue)}
	}
	var out []string
	for _, d := range dl.Result.Deliveries {
		out = append(out, head+": "+pathText(d.Path))
	}
	if len(dl.Result.Deliveries) == 0 {
		out = append(out, fmt.Sprintf("%s: dead-lettered to %s with key %q, which routes it nowhere", head, exchangeName(dl.Exchange), dl.RoutingKey))
	}
	return append(out, dl.Result.Problems...)
}

// laterFor is prediction.later for test tc, a plain publish of msg that
// lands in got: for each queue tc expects that got lacks, the test that
// checks how it gets the message after all. A delay tier returns what
// expires in it to its queue (retry: {queue, delay}); another queue's
// dead letters reach it when the message is rejected there (reject:, and
// expire: where the queue has a message TTL). Nil when there is none.
func laterFor(sim *route.Simulator, v *topology.Vhost, tc topology.Test, msg route.Message, got []string) map[string]laterHint {
	var later map[string]laterHint
	for _, want := range minus(tc.Expect, got) {
		for _, q := range got {
			advice := ""
			tier := v.Queues[q]
			switch {
			case tier != nil && tier.Role == topology.RoleDelay && tier.Origin == want && landsIn(sim, q, route.Expired, msg, want):
				advice = fmt.Sprintf("%q gets it only when delay tier %q returns it, after %s: to test that return, write retry: {queue: %s, delay: %s} in place of publish (or expect %s, where the publish lands)",
					want, q, loader.FormatDuration(tier.Delay), want, loader.FormatDuration(tier.Delay), list(got))
			case landsIn(sim, q, route.Rejected, msg, want):
				advice = fmt.Sprintf("%q gets it only as a dead letter of %q: to test that, add reject: %s to the test (the copy in %q is rejected, and expect.queues names where its dead letter lands)", want, q, q, q)
				if slices.Contains(sim.ReasonsFor(q, msg), route.Expired) && landsIn(sim, q, route.Expired, msg, want) {
					advice += fmt.Sprintf(", or expire: %s for one that expires there", q)
				}
			}
			if advice != "" {
				if later == nil {
					later = map[string]laterHint{}
				}
				later[want] = laterHint{from: q, advice: advice}
				break
			}
		}
	}
	return later
}

// laterHint is the advice for an expected queue the message reaches only
// as a dead letter of queue from, which it lands in.
type laterHint struct{ from, advice string }

// landsIn tells whether the dead letter of msg that dies in queue q for
// reason lands in queue want.
func landsIn(sim *route.Simulator, q string, reason route.Reason, msg route.Message, want string) bool {
	dl := sim.DeadLetter(q, reason, msg)
	return dl.Configured && slices.Contains(sim.Land(dl.Result).Queues, want)
}
