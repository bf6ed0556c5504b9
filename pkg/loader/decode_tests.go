package loader

import (
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/mqctl/mqctl/pkg/route"
	"github.com/mqctl/mqctl/pkg/topology"
)

// Field names of the `tests:` section; the JSON Schema lists the same.
var (
	testFields        = []string{"name", "vhost", "publish", "reject", "expire", "retry", "expect"}
	testPublishFields = []string{"exchange", "routing_key", "headers"}
	testRetryFields   = []string{"queue", "delay"}
	testExpectFields  = []string{"queues"}
)

// testsHint shows the shape of one test.
const testsHint = `write tests as a list such as [{name: "created reaches shipping", publish: {exchange: orders, routing_key: order.created}, expect: {queues: [orders.shipping]}}]`

// addTests records the entries of one file's `tests:` list; they are
// decoded once every vhost is built, since they name its queues.
func (fd *fileDecoder) addTests(n *node) {
	if n.isNull() {
		return
	}
	if n.kind != seqNode {
		fd.d.errs.addf(n.pos, "write tests as a list: tests: [ … ]", "tests: expected a list, got %s", describe(n))
		return
	}
	for i, it := range n.items {
		fd.tests = append(fd.tests, indexed{n: it, what: fmt.Sprintf("tests[%d]", i)})
	}
}

// buildTests decodes the tests against the expanded topology t.
func (l *load) buildTests(t *topology.Topology) []topology.Test {
	var out []topology.Test
	names := map[string]topology.Pos{}
	for _, it := range l.fd.tests {
		tc, ok := l.d.test(it, t)
		if !ok {
			continue
		}
		if prev, dup := names[tc.Name]; dup {
			l.errs.addf(tc.Pos, "give each test its own name", "%s: the name %q is already used by the test at %s", it.what, tc.Name, prev)
			continue
		}
		names[tc.Name] = tc.Pos
		out = append(out, tc)
	}
	return out
}

// test decodes one entry of `tests:`.
func (d *decoder) test(it indexed, t *topology.Topology) (topology.Test, bool) {
	n, what := it.n, it.what
	if nm := n.get("name"); nm != nil && textual(nm) && nm.value != "" {
		what = fmt.Sprintf("test %q", nm.value)
	}
	f, ok := d.fields(n, what, testFields)
	if !ok {
		return topology.Test{}, false
	}
	if n.isNull() {
		d.errs.addf(n.pos, testsHint, "%s: a test needs publish, reject, expire or retry, and expect", what)
		return topology.Test{}, false
	}
	tc := topology.Test{Pos: n.pos}
	ok = true
	if e, has := f.get("name"); has {
		tc.Name, ok = d.name(e.value, label(what, "name"), "name the test, or leave name out")
	}
	v, vok := d.testVhost(f, n, what, t)
	ok = ok && vok

	ok = d.testActions(f, n, what) && ok
	_, hasPublish := f.get("publish")

	if e, has := f.get("publish"); has && v != nil {
		msg, pok := d.testPublish(e.value, what, v)
		tc.Publish = msg
		ok = ok && pok
	}
	for _, a := range []struct {
		field  string
		action topology.TestAction
	}{{"reject", topology.ActionReject}, {"expire", topology.ActionExpire}} {
		e, has := f.get(a.field)
		if !has || v == nil {
			continue
		}
		q, qok := d.testQueue(e.value, label(what, a.field), v)
		ok = ok && qok
		tc.Action, tc.Queue = a.action, q
		if !hasPublish {
			tc.Publish = topology.TestMessage{RoutingKey: q}
		}
	}
	if e, has := f.get("retry"); has && v != nil {
		r, tier, rok := d.testRetry(e.value, what, v)
		ok = ok && rok
		tc.Retry, tc.Action, tc.Queue = r, topology.ActionExpire, tier
		tc.Publish = topology.TestMessage{RoutingKey: tier}
	}

	const expectExample = "expect: {queues: [QUEUE, …]} (an empty list, expect: {queues: []}: the message reaches no queue)"
	if e, has := f.get("expect"); !has && d.nullField(n, what, "expect", expectExample) {
		ok = false
	} else if !has {
		d.errs.addf(n.pos, "add expect: {queues: [QUEUE, …]} (an empty list: the message reaches no queue)", "%s: missing required field \"expect\"", what)
		ok = false
	} else if v != nil {
		q, eok := d.testExpect(e.value, what, v)
		tc.Expect = q
		ok = ok && eok
	}
	if !ok || v == nil {
		return topology.Test{}, false
	}
	tc.Vhost = v.Name
	if tc.Name == "" {
		tc.Name = testName(tc)
	}
	return tc, true
}

// testActions checks that test f (n, named what) has one thing to do:
// publish, reject or expire (with or without publish), or retry alone.
func (d *decoder) testActions(f fieldSet, n *node, what string) bool {
	_, hasPublish := f.get("publish")
	_, hasReject := f.get("reject")
	_, hasExpire := f.get("expire")
	_, hasRetry := f.get("retry")
	switch {
	case !hasPublish && !hasReject && !hasExpire && !hasRetry && d.nullAction(n, what):
		return false
	case !hasPublish && !hasReject && !hasExpire && !hasRetry:
		d.errs.addf(n.pos, "publish: {exchange, routing_key} checks where a publish lands; reject: QUEUE or expire: QUEUE where that queue's dead letters land; retry: {queue, delay} where a delay tier returns messages",
			"%s: nothing to test: add publish, reject, expire or retry", what)
		return false
	case hasReject && hasExpire:
		d.errs.addf(f.entry("expire").key.pos, "split it into two tests", "%s: a test rejects or expires the message, not both", what)
		return false
	case hasRetry && (hasPublish || hasReject || hasExpire):
		d.errs.addf(f.entry("retry").key.pos, "a retry test publishes to the delay tier itself and lets it expire; write the rest as another test",
			"%s: retry cannot be combined with publish, reject or expire", what)
		return false
	}
	return true
}

// nullAction reports the action fields of test n (named what) written
// with no value: the test says what to do, and leaves it empty. It says
// whether there was one.
func (d *decoder) nullAction(n *node, what string) bool {
	found := false
	for _, a := range []struct{ name, example string }{
		{"publish", "publish: {exchange: NAME, routing_key: KEY}"},
		{"reject", "reject: QUEUE"},
		{"expire", "expire: QUEUE"},
		{"retry", "retry: {queue: QUEUE, delay: 10s}"},
	} {
		found = d.nullField(n, what, a.name, a.example) || found
	}
	return found
}

// testVhost resolves the test's vhost: the one named, else the file's
// only one.
func (d *decoder) testVhost(f fieldSet, n *node, what string, t *topology.Topology) (*topology.Vhost, bool) {
	declared := t.VhostNames()
	if e, has := f.get("vhost"); has {
		name, ok := d.name(e.value, label(what, "vhost"), `the default vhost is named "/"`)
		if !ok {
			return nil, false
		}
		if v, ok := t.Vhosts[name]; ok {
			return v, true
		}
		d.errs.addf(e.value.pos, suggestHint(name, declared, "declared vhosts"), "%s: vhost %q is not declared in the file", label(what, "vhost"), name)
		return nil, false
	}
	switch len(declared) {
	case 1:
		return t.Vhosts[declared[0]], true
	case 0:
		d.errs.addf(n.pos, "declare the vhost under vhosts:", "%s: the file declares no vhost to test", what)
	default:
		d.errs.addf(n.pos, "add vhost: NAME, one of "+quoteAll(declared), "%s: the file declares several vhosts; say which one this test runs in", what)
	}
	return nil, false
}

func (d *decoder) testPublish(n *node, what string, v *topology.Vhost) (topology.TestMessage, bool) {
	var msg topology.TestMessage
	f, ok := d.fields(n, label(what, "publish"), testPublishFields)
	if !ok {
		return msg, false
	}
	if !d.require(f, n, label(what, "publish"), "exchange", `exchange: NAME (exchange: "" is the default exchange)`) {
		ok = false
	} else if x, xok := d.str(f.value("exchange"), label(what, "publish.exchange")); !xok {
		ok = false
	} else if x != "" && v.Exchanges[x] == nil && !builtinExchange(x) {
		d.errs.addf(f.valuePos("exchange"), suggestHint(x, v.ExchangeNames(), "declared exchanges"),
			"%s: exchange %q is not declared in vhost %q", label(what, "publish.exchange"), x, v.Name)
		ok = false
	} else if xd := v.Exchanges[x]; xd != nil && xd.Internal {
		// The broker closes the channel with ACCESS_REFUSED: a live run
		// could not go on, and no queue receives it.
		d.errs.addf(f.valuePos("exchange"), internalHint(v, x),
			"%s: exchange %q is internal: clients cannot publish to it (the broker refuses the publish and closes the channel with ACCESS_REFUSED)", label(what, "publish.exchange"), x)
		ok = false
	} else {
		msg.Exchange = x
	}
	if rk := f.value("routing_key"); rk != nil {
		if s, sok := d.str(rk, label(what, "publish.routing_key")); sok {
			msg.RoutingKey = s
		} else {
			ok = false
		}
	}
	if h := f.value("headers"); h != nil {
		args, _, hok := d.args(h, label(what, "publish.headers"), "{region: eu, format: pdf}")
		ok = ok && hok
		// RabbitMQ refuses a publish whose CC or BCC is not an array,
		// closing the channel: a live run could not go on.
		for _, k := range []string{"CC", "BCC"} {
			v, has := args[k]
			if err := route.HeadersRefused(map[string]any{k: v}); has && err != nil {
				fix := k + ": [ROUTING_KEY, …]"
				switch v.(type) {
				case string, int64, float64, bool:
					fix = fmt.Sprintf("%s: [%v]", k, v)
				}
				d.errs.addf(h.get(k).pos, fix, "%s: %v", label(what, "publish.headers"), err)
				ok = false
			}
		}
		if len(args) > 0 {
			msg.Headers = map[string]any(args)
		}
	}
	return msg, ok
}

// internalHint is the fix for a test that publishes to internal exchange
// x of v: publish to an exchange bound to it, naming those the file binds
// to it.
func internalHint(v *topology.Vhost, x string) string {
	var from []string
	for _, b := range v.Bindings {
		if b.DestinationType == topology.DestExchange && b.Destination == x && !slices.Contains(from, b.Source) {
			from = append(from, b.Source)
		}
	}
	slices.Sort(from)
	if len(from) == 0 {
		return fmt.Sprintf("messages reach an internal exchange only through exchanges bound to it, and the file binds none to %q: bind one to it and publish there, or set internal: false on it", x)
	}
	return fmt.Sprintf("publish to an exchange bound to it (%s), as messages reach it, or set internal: false on it", quoteAll(from))
}

// builtinExchange reports whether name is an exchange every vhost has.
func builtinExchange(name string) bool {
	switch name {
	case "amq.direct", "amq.fanout", "amq.topic", "amq.headers", "amq.match":
		return true
	}
	return false
}

// testQueue reads the name of a queue declared in v.
func (d *decoder) testQueue(n *node, what string, v *topology.Vhost) (string, bool) {
	name, ok := d.name(n, what, "name a queue of the vhost")
	if !ok {
		return "", false
	}
	if v.Queues[name] == nil {
		d.errs.addf(n.pos, suggestHint(name, v.QueueNames(), "declared queues"), "%s: queue %q is not declared in vhost %q", what, name, v.Name)
		return "", false
	}
	return name, true
}

// testRetry reads retry: {queue, delay} and finds the delay tier.
func (d *decoder) testRetry(n *node, what string, v *topology.Vhost) (*topology.TestRetry, string, bool) {
	f, ok := d.fields(n, label(what, "retry"), testRetryFields)
	if !ok {
		return nil, "", false
	}
	okQ := d.require(f, n, label(what, "retry"), "queue", "queue: NAME (the queue whose retry.delays declare the tier)")
	okD := d.require(f, n, label(what, "retry"), "delay", "delay: 10s (one of the queue's retry.delays)")
	if !okQ || !okD {
		return nil, "", false
	}
	q, qok := d.testQueue(f.value("queue"), label(what, "retry.queue"), v)
	ms, dok := d.duration(f.value("delay"), label(what, "retry.delay"), 1)
	if !qok || !dok {
		return nil, "", false
	}
	var tiers []*topology.Queue
	for _, name := range v.QueueNames() {
		if t := v.Queues[name]; t.Role == topology.RoleDelay && t.Origin == q {
			if t.Delay == ms {
				return &topology.TestRetry{Queue: q, Delay: ms}, t.Name, true
			}
			tiers = append(tiers, t)
		}
	}
	if len(tiers) == 0 && v.Queues[q].Backoff != nil {
		// Its retry is the broker's own delayed retry: tiers cannot be
		// added beside retry.backoff, and there is no tier to test.
		d.errs.addf(f.valuePos("queue"), fmt.Sprintf("a retry test publishes to a delay tier (retry.delays) and lets it expire; with retry.backoff the broker holds the message back in %[1]q itself between deliveries and dead-letters it after the last attempt: reject: %[1]s tests where that dead letter lands", q),
			"%s: queue %q retries with retry.backoff (the broker's delayed retry), which declares no delay tiers", label(what, "retry.queue"), q)
		return nil, "", false
	}
	if len(tiers) == 0 {
		d.errs.addf(f.valuePos("queue"), "declare tiers on it with retry: {delays: [10s, 1m]}", "%s: queue %q has no delay tiers", label(what, "retry.queue"), q)
		return nil, "", false
	}
	sort.Slice(tiers, func(i, j int) bool { return tiers[i].Delay < tiers[j].Delay })
	have := make([]string, len(tiers))
	for i, t := range tiers {
		have[i] = FormatDuration(t.Delay)
	}
	d.errs.addf(f.valuePos("delay"), "its tiers are "+strings.Join(have, ", "), "%s: queue %q has no %s delay tier", label(what, "retry.delay"), q, FormatDuration(ms))
	return nil, "", false
}

// testExpect reads expect: {queues: [...]}, sorted.
func (d *decoder) testExpect(n *node, what string, v *topology.Vhost) ([]string, bool) {
	f, ok := d.fields(n, label(what, "expect"), testExpectFields)
	if !ok {
		return nil, false
	}
	if !d.require(f, n, label(what, "expect"), "queues", "queues: [QUEUE, …] (an empty list: the message reaches no queue)") {
		return nil, false
	}
	qs := f.value("queues")
	if qs.kind != seqNode {
		d.errs.addf(qs.pos, "write a list such as [orders.shipping, orders.audit]; [] means no queue", "%s: expected a list of queue names, got %s", label(what, "expect.queues"), describe(qs))
		return nil, false
	}
	out := []string{}
	seen := map[string]topology.Pos{}
	for i, it := range qs.items {
		iw := fmt.Sprintf("%s[%d]", label(what, "expect.queues"), i)
		q, qok := d.testQueue(it, iw, v)
		if !qok {
			ok = false
			continue
		}
		if prev, dup := seen[q]; dup {
			d.errs.addf(it.pos, "list each queue once", "%s: queue %q is already listed at %s", iw, q, prev)
			ok = false
			continue
		}
		seen[q] = it.pos
		out = append(out, q)
	}
	slices.Sort(out)
	return out, ok
}

// testName names a test that has no name from what it does.
func testName(tc topology.Test) string {
	switch {
	case tc.Retry != nil:
		return fmt.Sprintf("retry %s after %s", tc.Retry.Queue, FormatDuration(tc.Retry.Delay))
	case tc.Action == topology.ActionReject:
		return "rejected from " + tc.Queue
	case tc.Action == topology.ActionExpire:
		return "expired from " + tc.Queue
	}
	x := tc.Publish.Exchange
	if x == "" {
		x = "(default exchange)"
	}
	return fmt.Sprintf("publish to %s with key %s", x, strconv.Quote(tc.Publish.RoutingKey))
}

func quoteAll(names []string) string {
	q := make([]string, len(names))
	for i, n := range names {
		q[i] = strconv.Quote(n)
	}
	return strings.Join(q, ", ")
}
