package loader

import (
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/mqctl/mqctl/pkg/topology"
	"github.com/mqctl/mqctl/schema"
)

// testsVhost is a vhost with an orders exchange, two working queues (one
// with a DLQ and delay tiers) for the tests below.
const testsVhost = `version: 1
vhosts:
  /:
    exchanges:
      orders: {type: topic}
      orders.dlx: {type: topic}
      docs: {type: headers}
    queues:
      orders.shipping:
        bindings: [{exchange: orders, routing_keys: [order.created, order.paid]}]
        dead_letter: {exchange: orders.dlx, queue: orders.shipping.dlq}
        retry: {delays: [10s, 1m]}
      orders.audit:
        bindings: [{exchange: orders, routing_key: order.#}]
        limits: {message_ttl: 7d}
`

func TestTestsDecoded(t *testing.T) {
	src := testsVhost + `tests:
  - name: created reaches shipping and audit
    vhost: /
    publish: {exchange: orders, routing_key: order.created}
    expect: {queues: [orders.shipping, orders.audit]}
  - name: rejected shipping messages land in the DLQ
    publish: {exchange: orders, routing_key: order.created}
    reject: orders.shipping
    expect: {queues: [orders.shipping.dlq]}
  - retry: {queue: orders.shipping, delay: 10000}
    expect: {queues: [orders.shipping]}
  - expire: orders.audit
    expect: {queues: []}
  - publish: {exchange: docs, headers: {format: pdf, pages: 3}}
    expect: {queues: []}
  - publish: {exchange: "", routing_key: orders.audit}
    expect:
      queues:
        - orders.audit
`
	top := mustLoad(t, src)
	want := []topology.Test{
		{Name: "created reaches shipping and audit", Vhost: "/", Publish: topology.TestMessage{Exchange: "orders", RoutingKey: "order.created"},
			Expect: []string{"orders.audit", "orders.shipping"}, Pos: topology.Pos{File: "t.yaml", Line: 17, Col: 5}},
		{Name: "rejected shipping messages land in the DLQ", Vhost: "/", Publish: topology.TestMessage{Exchange: "orders", RoutingKey: "order.created"},
			Action: topology.ActionReject, Queue: "orders.shipping", Expect: []string{"orders.shipping.dlq"}, Pos: topology.Pos{File: "t.yaml", Line: 21, Col: 5}},
		{Name: "retry orders.shipping after 10s", Vhost: "/", Publish: topology.TestMessage{RoutingKey: "orders.shipping.retry.10s"},
			Action: topology.ActionExpire, Queue: "orders.shipping.retry.10s", Retry: &topology.TestRetry{Queue: "orders.shipping", Delay: 10000},
			Expect: []string{"orders.shipping"}, Pos: topology.Pos{File: "t.yaml", Line: 25, Col: 5}},
		{Name: "expired from orders.audit", Vhost: "/", Publish: topology.TestMessage{RoutingKey: "orders.audit"},
			Action: topology.ActionExpire, Queue: "orders.audit", Expect: []string{}, Pos: topology.Pos{File: "t.yaml", Line: 27, Col: 5}},
		{Name: `publish to docs with key ""`, Vhost: "/", Publish: topology.TestMessage{Exchange: "docs", Headers: map[string]any{"format": "pdf", "pages": int64(3)}},
			Expect: []string{}, Pos: topology.Pos{File: "t.yaml", Line: 29, Col: 5}},
		{Name: `publish to (default exchange) with key "orders.audit"`, Vhost: "/", Publish: topology.TestMessage{RoutingKey: "orders.audit"},
			Expect: []string{"orders.audit"}, Pos: topology.Pos{File: "t.yaml", Line: 31, Col: 5}},
	}
	if diff := cmp.Diff(want, top.Tests); diff != "" {
		t.Errorf("tests (-want +got):\n%s", diff)
	}
}

// TestTestsFromSeveralFiles: each file's tests are kept, in file order, and
// a test may name queues another file declares.
func TestTestsFromSeveralFiles(t *testing.T) {
	dir := writeFiles(t, map[string]string{
		"a.yaml": testsVhost + "tests:\n  - {name: one, expire: orders.audit, expect: {queues: []}}\n",
		"b.yaml": "version: 1\ntests:\n  - {name: two, reject: orders.shipping, expect: {queues: [orders.shipping.dlq]}}\n",
	})
	top, err := Load([]string{dir}, Options{})
	if err != nil {
		t.Fatal(errorLines(err))
	}
	var names []string
	for _, tc := range top.Tests {
		names = append(names, tc.Name)
	}
	if !slices.Equal(names, []string{"one", "two"}) {
		t.Errorf("tests = %v, want [one two]", names)
	}
}

// TestTestsErrors: each mistake is reported at its place, saying what is
// wrong and what would be right.
func TestTestsErrors(t *testing.T) {
	tests := []struct {
		name  string
		tests string // the tests: section
		extra string // another vhost, written before the tests
		want  string
	}{
		{"not a list", "tests: {a: 1}", "", `t.yaml:16:8: tests: expected a list, got a mapping (write tests as a list: tests: [ … ])`},
		{"test not a mapping", "tests: [orders]", "", `t.yaml:16:9: tests[0]: expected a mapping, got string "orders" (fields: name, vhost, publish, reject, expire, retry, expect)`},
		{"empty test", "tests: [null]", "", `t.yaml:16:9: tests[0]: a test needs publish, reject, expire or retry, and expect (write tests as a list such as [{name: "created reaches shipping", publish: {exchange: orders, routing_key: order.created}, expect: {queues: [orders.shipping]}}])`},
		{"unknown field with suggestion", "tests:\n  - {name: a, publish: {exchange: orders}, expected: {queues: []}}", "",
			`t.yaml:17:5: test "a": missing required field "expect" (add expect: {queues: [QUEUE, …]} (an empty list: the message reaches no queue))
t.yaml:17:44: test "a": unknown field "expected" (did you mean "expect"?)`},
		{"unknown publish field", "tests:\n  - {publish: {exchange: orders, key: order.created}, expect: {queues: []}}", "",
			`t.yaml:17:34: tests[0]: publish: unknown field "key" (fields: exchange, routing_key, headers)`},
		{"nothing to test", "tests:\n  - {name: a, expect: {queues: []}}", "",
			`t.yaml:17:5: test "a": nothing to test: add publish, reject, expire or retry (publish: {exchange, routing_key} checks where a publish lands; reject: QUEUE or expire: QUEUE where that queue's dead letters land; retry: {queue, delay} where a delay tier returns messages)`},
		{"unknown exchange", "tests:\n  - {name: a, publish: {exchange: order, routing_key: x}, expect: {queues: []}}", "",
			`t.yaml:17:35: test "a": publish.exchange: exchange "order" is not declared in vhost "/" (did you mean "orders"?)`},
		{"publish without exchange", "tests:\n  - {name: a, publish: {routing_key: x}, expect: {queues: []}}", "",
			`t.yaml:17:24: test "a": publish: missing required field "exchange" (add exchange: NAME (exchange: "" is the default exchange))`},
		{"routing key as a number", "tests:\n  - {name: a, publish: {exchange: orders, routing_key: 404}, expect: {queues: []}}", "",
			`t.yaml:17:56: test "a": publish.routing_key: expected a string, got integer 404 (quote it to use it as text: "404")`},
		{"unknown queue in expect", "tests:\n  - name: a\n    publish: {exchange: orders, routing_key: order.created}\n    expect: {queues: [orders.shiping]}", "",
			`t.yaml:19:23: test "a": expect.queues[0]: queue "orders.shiping" is not declared in vhost "/" (did you mean "orders.shipping"?)`},
		{"queue listed twice", "tests:\n  - name: a\n    publish: {exchange: orders}\n    expect: {queues: [orders.audit, orders.audit]}", "",
			`t.yaml:19:37: test "a": expect.queues[1]: queue "orders.audit" is already listed at t.yaml:19:23 (list each queue once)`},
		{"expect without queues", "tests:\n  - {name: a, publish: {exchange: orders}, expect: {}}", "",
			`t.yaml:17:52: test "a": expect: missing required field "queues" (add queues: [QUEUE, …] (an empty list: the message reaches no queue))`},
		// A field written with no value is there, empty: before, each was
		// reported as missing (or the test as having nothing to test).
		{"expect null", "tests:\n  - name: a\n    publish: {exchange: orders}\n    expect: null", "",
			`t.yaml:19:5: test "a": expect is empty (null) (write expect: {queues: [QUEUE, …]} (an empty list, expect: {queues: []}: the message reaches no queue))`},
		{"expect with no value", "tests:\n  - name: a\n    publish: {exchange: orders}\n    expect:\n", "",
			`t.yaml:19:5: test "a": expect is empty (null) (write expect: {queues: [QUEUE, …]} (an empty list, expect: {queues: []}: the message reaches no queue))`},
		{"expect queues null", "tests:\n  - {name: a, publish: {exchange: orders}, expect: {queues: ~}}", "",
			`t.yaml:17:53: test "a": expect: queues is empty (null) (write queues: [QUEUE, …] (an empty list: the message reaches no queue))`},
		{"reject null", "tests:\n  - {name: a, reject: null, expect: {queues: []}}", "",
			`t.yaml:17:15: test "a": reject is empty (null) (write reject: QUEUE)`},
		{"publish exchange null", "tests:\n  - {name: a, publish: {exchange: null}, expect: {queues: []}}", "",
			`t.yaml:17:25: test "a": publish: exchange is empty (null) (write exchange: NAME (exchange: "" is the default exchange))`},
		{"expect queues not a list", "tests:\n  - {name: a, publish: {exchange: orders}, expect: {queues: orders.audit}}", "",
			`t.yaml:17:61: test "a": expect.queues: expected a list of queue names, got string "orders.audit" (write a list such as [orders.shipping, orders.audit]; [] means no queue)`},
		{"unknown queue to reject", "tests:\n  - {name: a, reject: shipping, expect: {queues: []}}", "",
			`t.yaml:17:23: test "a": reject: queue "shipping" is not declared in vhost "/" (declared queues: orders.audit, orders.shipping, orders.shipping.dlq, orders.shipping.retry.10s, orders.shipping.retry.1m)`},
		{"reject and expire", "tests:\n  - {name: a, reject: orders.audit, expire: orders.audit, expect: {queues: []}}", "",
			`t.yaml:17:37: test "a": a test rejects or expires the message, not both (split it into two tests)`},
		{"retry with publish", "tests:\n  - {name: a, publish: {exchange: orders}, retry: {queue: orders.shipping, delay: 10s}, expect: {queues: []}}", "",
			`t.yaml:17:44: test "a": retry cannot be combined with publish, reject or expire (a retry test publishes to the delay tier itself and lets it expire; write the rest as another test)`},
		{"bad delay", "tests:\n  - {name: a, retry: {queue: orders.shipping, delay: 10 sec}, expect: {queues: []}}", "",
			`t.yaml:17:54: test "a": retry.delay: invalid duration "10 sec" (write 10s: one whole number and one unit; a duration such as 250ms, 10s, 1m, 2h, 7d, or an integer of milliseconds)`},
		{"delay without a tier", "tests:\n  - {name: a, retry: {queue: orders.shipping, delay: 30s}, expect: {queues: []}}", "",
			`t.yaml:17:54: test "a": retry.delay: queue "orders.shipping" has no 30s delay tier (its tiers are 10s, 1m)`},
		{"queue without tiers", "tests:\n  - {name: a, retry: {queue: orders.audit, delay: 10s}, expect: {queues: []}}", "",
			`t.yaml:17:30: test "a": retry.queue: queue "orders.audit" has no delay tiers (declare tiers on it with retry: {delays: [10s, 1m]})`},
		{"queue with the broker's delayed retry", "tests:\n  - {name: a, vhost: b, retry: {queue: inv, delay: 10s}, expect: {queues: [inv]}}",
			"  b:\n    queues:\n      inv: {type: quorum, retry: {backoff: {min: 10s}, attempts: 3}}\n",
			`t.yaml:20:40: test "a": retry.queue: queue "inv" retries with retry.backoff (the broker's delayed retry), which declares no delay tiers (a retry test publishes to a delay tier (retry.delays) and lets it expire; with retry.backoff the broker holds the message back in "inv" itself between deliveries and dead-letters it after the last attempt: reject: inv tests where that dead letter lands)`},
		{"internal exchange", "tests:\n  - {name: a, vhost: b, publish: {exchange: inner, routing_key: x}, expect: {queues: []}}",
			"  b:\n    exchanges:\n      front: {type: topic}\n      inner: {type: fanout, internal: true}\n    bindings: [{source: front, destination: inner, destination_type: exchange, routing_key: \"#\"}]\n",
			`t.yaml:22:45: test "a": publish.exchange: exchange "inner" is internal: clients cannot publish to it (the broker refuses the publish and closes the channel with ACCESS_REFUSED) (publish to an exchange bound to it ("front"), as messages reach it, or set internal: false on it)`},
		{"internal exchange nothing binds", "tests:\n  - {name: a, vhost: b, publish: {exchange: inner, routing_key: x}, expect: {queues: []}}",
			"  b:\n    exchanges:\n      inner: {type: fanout, internal: true}\n",
			`t.yaml:20:45: test "a": publish.exchange: exchange "inner" is internal: clients cannot publish to it (the broker refuses the publish and closes the channel with ACCESS_REFUSED) (messages reach an internal exchange only through exchanges bound to it, and the file binds none to "inner": bind one to it and publish there, or set internal: false on it)`},
		{"CC not a list", "tests:\n  - {name: a, publish: {exchange: orders, routing_key: order.created, headers: {CC: order.paid}}, expect: {queues: []}}", "",
			`t.yaml:17:85: test "a": publish.headers: header CC is the string "order.paid", not an array of routing keys: RabbitMQ refuses the publish (PRECONDITION_FAILED, unacceptable_type_in_header); send CC as an array of strings (CC: [order.paid])`},
		{"BCC null", "tests:\n  - {name: a, publish: {exchange: orders, routing_key: order.created, headers: {BCC: null}}, expect: {queues: []}}", "",
			`t.yaml:17:86: test "a": publish.headers: header BCC is void, not an array of routing keys: RabbitMQ refuses the publish (PRECONDITION_FAILED, unacceptable_type_in_header); send BCC as an array of strings (BCC: [ROUTING_KEY, …])`},
		{"headers not a mapping", "tests:\n  - {name: a, publish: {exchange: orders, headers: [format]}, expect: {queues: []}}", "",
			`t.yaml:17:52: test "a": publish.headers: expected a mapping, got a list (write a mapping such as {region: eu, format: pdf})`},
		{"retry without delay", "tests:\n  - {name: a, retry: {queue: orders.shipping}, expect: {queues: []}}", "",
			`t.yaml:17:22: test "a": retry: missing required field "delay" (add delay: 10s (one of the queue's retry.delays))`},
		{"empty name", "tests:\n  - {name: \"\", expire: orders.audit, expect: {queues: []}}", "",
			`t.yaml:17:12: tests[0]: name: must not be empty (name the test, or leave name out)`},
		{"duplicate name", "tests:\n  - {name: a, expire: orders.audit, expect: {queues: []}}\n  - {name: a, reject: orders.audit, expect: {queues: []}}", "",
			`t.yaml:18:5: tests[1]: the name "a" is already used by the test at t.yaml:17:5 (give each test its own name)`},
		{"unknown vhost", "tests:\n  - {name: a, vhost: prod, expire: orders.audit, expect: {queues: []}}", "",
			`t.yaml:17:22: test "a": vhost: vhost "prod" is not declared in the file (declared vhosts: /)`},
		{"vhost needed with several", "tests:\n  - {name: a, expire: orders.audit, expect: {queues: []}}", "  staging: {}\n",
			`t.yaml:18:5: test "a": the file declares several vhosts; say which one this test runs in (add vhost: NAME, one of "/", "staging")`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			src := testsVhost + tt.extra + tt.tests + "\n"
			_, err := LoadBytes("t.yaml", []byte(src), Options{})
			if err == nil {
				t.Fatalf("no error; want:\n%s\nsource:\n%s", tt.want, src)
			}
			if got := errorLines(err); got != strings.TrimSpace(tt.want) {
				t.Errorf("errors:\n%s\nwant:\n%s", got, strings.TrimSpace(tt.want))
			}
		})
	}
}

// TestTestsSchemaFields keeps the schema's test definitions and the
// loader's field lists in step.
func TestTestsSchemaFields(t *testing.T) {
	var doc map[string]any
	if err := json.Unmarshal(schema.JSON(), &doc); err != nil {
		t.Fatal(err)
	}
	props := func(path ...string) []string {
		var cur any = doc
		for _, p := range append(path, "properties") {
			cur = cur.(map[string]any)[p]
		}
		var names []string
		for k := range cur.(map[string]any) {
			names = append(names, k)
		}
		slices.Sort(names)
		return names
	}
	test := []string{"$defs", "test"}
	for _, tt := range []struct {
		path   []string
		fields []string
	}{
		{test, testFields},
		{append(test, "properties", "publish"), testPublishFields},
		{append(test, "properties", "retry"), testRetryFields},
		{append(test, "properties", "expect"), testExpectFields},
	} {
		if diff := cmp.Diff(slices.Sorted(slices.Values(tt.fields)), props(tt.path...)); diff != "" {
			t.Errorf("schema %v properties differ from the loader's (-loader +schema):\n%s", tt.path, diff)
		}
	}
}

// FuzzTests asserts that no tests: section makes the loader panic, and
// that a rejected one is explained at a position.
func FuzzTests(f *testing.F) {
	for _, s := range []string{
		"tests: [{publish: {exchange: orders, routing_key: order.created, headers: {a: [1, {b: c}]}}, expect: {queues: [orders.audit]}}]",
		"tests: [{reject: orders.shipping, expect: {queues: []}}, {expire: orders.audit, expect: {queues: [orders.shipping.dlq]}}]",
		"tests: [{retry: {queue: orders.shipping, delay: 1m}, expect: {queues: [orders.shipping]}, name: r, vhost: /}]",
		"tests: [~, {}, [], {retry: ~, expect: ~}, {publish: [], reject: {}, expect: {queues: {}}}]",
		"tests:\n  - name: ${N:-x}\n    retry: {queue: orders.shipping, delay: ${D:-10s}}\n    expect: {queues: [orders.shipping]}",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, section string) {
		_, err := LoadBytes("t.yaml", []byte(testsVhost+section), Options{})
		var list ErrorList
		if err != nil && (!errors.As(err, &list) || len(list) == 0 || list[0].Pos.File != "t.yaml") {
			t.Fatalf("unexplained error %v for:\n%s", err, section)
		}
	})
}
