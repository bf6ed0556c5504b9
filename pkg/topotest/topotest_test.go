package topotest_test

import (
	"bytes"
	"encoding/json"
	"github.com/mqctl/mqctl/pkg/rmqversion"
	"path/filepath"
	"strings"
	"testing"

	gold "github.com/mqctl/mqctl/internal/golden"

	"github.com/google/go-cmp/cmp"

	"github.com/mqctl/mqctl/pkg/loader"
	"github.com/mqctl/mqctl/pkg/topology"
	"github.com/mqctl/mqctl/pkg/topotest"
)

func loadFile(t *testing.T, path string) *topology.Topology {
	t.Helper()
	top, err := loader.Load([]string{path}, loader.Options{})
	if err != nil {
		t.Fatalf("load %s: %v", path, err)
	}
	return top
}

func loadSrc(t *testing.T, src string) *topology.Topology {
	t.Helper()
	top, err := loader.LoadBytes("t.yaml", []byte(src), loader.Options{})
	if err != nil {
		t.Fatalf("load:\n%v\nsource:\n%s", err, src)
	}
	return top
}

// TestSimulateShop: every test of the fixture passes or fails as its name
// says, and the report reads as the golden file.
func TestSimulateShop(t *testing.T) {
	top := loadFile(t, filepath.Join("testdata", "shop.yaml"))
	r := topotest.Simulate(top, top.Tests, rmqversion.Default)
	if len(r.Tests) != len(top.Tests) || r.Passed+r.Failed != len(top.Tests) {
		t.Fatalf("report has %d outcomes (%d passed, %d failed) for %d tests", len(r.Tests), r.Passed, r.Failed, len(top.Tests))
	}
	for _, o := range r.Tests {
		if want := strings.HasPrefix(o.Name, "pass "); o.Passed != want {
			t.Errorf("%s: passed = %v (%s)", o.Name, o.Passed, o.Message)
		}
	}
	if r.OK() {
		t.Error("report is OK although tests failed")
	}
	var out bytes.Buffer
	if err := topotest.WriteText(&out, r); err != nil {
		t.Fatal(err)
	}
	golden(t, filepath.Join("testdata", "shop.txt"), out.Bytes())
}

func golden(t *testing.T, path string, got []byte) {
	t.Helper()
	gold.Check(t, path, got)
}

const ordersVhost = `version: 1
vhosts:
  /:
    exchanges:
      orders: { type: topic }
      orders.dlx: { type: topic }
    queues:
      shipping:
        bindings: [{ exchange: orders, routing_key: order.created }]
        dead_letter: { exchange: orders.dlx, queue: shipping.dlq }
        retry: { delays: [10s] }
      audit:
        bindings: [{ exchange: orders, routing_key: "order.#" }]
        limits: { message_ttl: 7d }
`

// TestSimulate: what a user sees for each kind of test, passing and
// failing; a failure says what went where and why.
func TestSimulate(t *testing.T) {
	tests := []struct {
		name    string
		src     string // appended to ordersVhost
		passed  bool
		got     []string
		message string   // for a failure
		hops    []string // when given, the whole route
	}{
		{"publish reaches exactly the expected queues",
			"tests: [{publish: {exchange: orders, routing_key: order.created}, expect: {queues: [shipping, audit]}}]",
			true, []string{"audit", "shipping"}, "", []string{"orders [order.#] -> audit", "orders [order.created] -> shipping"}},
		{"publish reaches one queue more than expected",
			"tests: [{publish: {exchange: orders, routing_key: order.created}, expect: {queues: [shipping]}}]",
			false, []string{"audit", "shipping"}, `expected [shipping], got [audit shipping]; "audit" gets it (the hops show how): add it to expect.queues if that is right, else change the binding or dead-letter wiring that leads there`, nil},
		{"unroutable publish expected nowhere",
			"tests: [{publish: {exchange: orders, routing_key: invoice.sent}, expect: {queues: []}}]",
			true, []string{}, "", nil},
		{"unroutable publish explains why",
			"tests: [{publish: {exchange: orders, routing_key: invoice.sent}, expect: {queues: [audit]}}]",
			false, []string{}, `expected [audit], got []; it does not reach "audit" ("audit" is bound from orders [order.#]): if it should, bind it to an exchange the message passes, with a key or headers it matches; else take it out of expect.queues, or fix the test's publish`,
			[]string{`no binding of exchange "orders" matches routing key "invoice.sent" and it has no alternate exchange`}},
		{"reject lands in the DLQ",
			"tests: [{publish: {exchange: orders, routing_key: order.created}, reject: shipping, expect: {queues: [shipping.dlq]}}]",
			true, []string{"shipping.dlq"}, "",
			[]string{"orders [order.#] -> audit", "orders [order.created] -> shipping", "shipping rejected: orders.dlx [shipping] -> shipping.dlq"}},
		{"reject from a queue without dead-letter exchange drops it",
			"tests: [{publish: {exchange: orders, routing_key: order.paid}, reject: audit, expect: {queues: [shipping.dlq]}}]",
			false, []string{}, `expected [shipping.dlq], got []; it does not reach "shipping.dlq" ("shipping.dlq" is bound from orders.dlx [shipping])`,
			[]string{"orders [order.#] -> audit", `audit rejected: dropped (queue "audit" has no dead-letter exchange)`}},
		{"reject where the message never arrives",
			"tests: [{publish: {exchange: orders, routing_key: order.paid}, reject: shipping, expect: {queues: [shipping.dlq]}}]",
			false, nil, `the message does not reach queue "shipping" (it reaches [audit]), so it cannot be rejected there`, nil},
		{"reject without publish goes through the default exchange",
			"tests: [{reject: shipping, expect: {queues: [shipping.dlq]}}]",
			true, []string{"shipping.dlq"}, "",
			[]string{"(default exchange) [shipping] -> shipping", "shipping rejected: orders.dlx [shipping] -> shipping.dlq"}},
		{"expire needs a TTL",
			"tests: [{reject: shipping, expect: {queues: [shipping.dlq]}}, {name: x, expire: shipping, expect: {queues: [shipping.dlq]}}]",
			false, nil, `queue "shipping" has no message TTL`, nil},
		{"expire with a TTL and no dead-letter exchange drops it",
			"tests: [{expire: audit, expect: {queues: []}}]",
			true, []string{}, "", nil},
		{"retry returns to its queue",
			"tests: [{retry: {queue: shipping, delay: 10s}, expect: {queues: [shipping]}}]",
			true, []string{"shipping"}, "",
			[]string{"(default exchange) [shipping.retry.10s] -> shipping.retry.10s", "shipping.retry.10s expired: (default exchange) [shipping] -> shipping"}},
		{"publish expected in a DLQ says to reject it where it dies",
			"tests: [{publish: {exchange: orders, routing_key: order.created}, expect: {queues: [shipping.dlq]}}]",
			false, []string{"audit", "shipping"}, `expected [shipping.dlq], got [audit shipping]; "audit" gets it (the hops show how): add it to expect.queues if that is right, else change the binding or dead-letter wiring that leads there; "shipping.dlq" gets it only as a dead letter of "shipping": to test that, add reject: shipping to the test (the copy in "shipping" is rejected, and expect.queues names where its dead letter lands)`, nil},
		{"publish expected in the DLQ of a queue with a TTL says to reject or expire it",
			"      ledger: { bindings: [{ exchange: orders, routing_key: ledger }], dead_letter: { exchange: orders.dlx, queue: ledger.dlq }, limits: { message_ttl: 1h } }\ntests: [{publish: {exchange: orders, routing_key: ledger}, expect: {queues: [ledger.dlq]}}]",
			false, []string{"ledger"}, `expected [ledger.dlq], got [ledger]; "ledger.dlq" gets it only as a dead letter of "ledger": to test that, add reject: ledger to the test (the copy in "ledger" is rejected, and expect.queues names where its dead letter lands), or expire: ledger for one that expires there`, nil},
		{"publish to a delay tier expected in its queue says to test the retry",
			"tests: [{publish: {exchange: \"\", routing_key: shipping.retry.10s}, expect: {queues: [shipping]}}]",
			false, []string{"shipping.retry.10s"}, `expected [shipping], got [shipping.retry.10s]; "shipping" gets it only when delay tier "shipping.retry.10s" returns it, after 10s: to test that return, write retry: {queue: shipping, delay: 10s} in place of publish (or expect [shipping.retry.10s], where the publish lands)`, nil},
		{"retry expected elsewhere",
			"tests: [{retry: {queue: shipping, delay: 10s}, expect: {queues: [shipping.dlq]}}]",
			false, []string{"shipping"}, `expected [shipping.dlq], got [shipping]; "shipping" gets it (the hops show how): add it to expect.queues if that is right, else change the binding or dead-letter wiring that leads there; it does not reach "shipping.dlq" ("shipping.dlq" is bound from orders.dlx [shipping])`, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			top := loadSrc(t, ordersVhost+tt.src+"\n")
			r := topotest.Simulate(top, top.Tests, rmqversion.Default)
			o := r.Tests[len(r.Tests)-1]
			if o.Passed != tt.passed {
				t.Errorf("passed = %v, want %v (%s)", o.Passed, tt.passed, o.Message)
			}
			if diff := cmp.Diff(tt.got, o.Got); diff != "" {
				t.Errorf("got (-want +got):\n%s", diff)
			}
			if !strings.Contains(o.Message, tt.message) || (tt.passed && o.Message != "") {
				t.Errorf("message %q, want it to say %q", o.Message, tt.message)
			}
			if tt.hops != nil {
				if diff := cmp.Diff(tt.hops, o.Hops); diff != "" {
					t.Errorf("hops (-want +got):\n%s", diff)
				}
			}
		})
	}
}

func TestWriteJSON(t *testing.T) {
	top := loadSrc(t, ordersVhost+`tests:
  - {name: ok, publish: {exchange: orders, routing_key: order.paid}, expect: {queues: [audit]}}
  - {name: bad, publish: {exchange: orders, routing_key: order.paid}, expect: {queues: []}}
`)
	var out bytes.Buffer
	if err := topotest.WriteJSON(&out, topotest.Simulate(top, top.Tests, rmqversion.Default)); err != nil {
		t.Fatal(err)
	}
	var doc struct {
		FormatVersion string `json:"format_version"`
		Live          bool   `json:"live"`
		Passed        int    `json:"passed"`
		Failed        int    `json:"failed"`
		Tests         []struct {
			Name     string   `json:"name"`
			Passed   bool     `json:"passed"`
			Expected []string `json:"expected"`
			Got      []string `json:"got"`
			Message  string   `json:"message"`
			Pos      struct {
				File string `json:"file"`
				Line int    `json:"line"`
			} `json:"pos"`
		} `json:"tests"`
	}
	if err := json.Unmarshal(out.Bytes(), &doc); err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	if doc.FormatVersion != "1" || doc.Live || doc.Passed != 1 || doc.Failed != 1 || len(doc.Tests) != 2 {
		t.Fatalf("report: %s", out.String())
	}
	bad := doc.Tests[1]
	if bad.Name != "bad" || bad.Passed || bad.Expected == nil || len(bad.Expected) != 0 ||
		!cmp.Equal(bad.Got, []string{"audit"}) || !strings.HasPrefix(bad.Message, `expected [], got [audit]; "audit" gets it`) || bad.Pos.File != "t.yaml" || bad.Pos.Line != 17 {
		t.Errorf("failed test: %+v", bad)
	}
}

// TestNoTests: an empty run is a passing report of zero tests.
func TestNoTests(t *testing.T) {
	r := topotest.Simulate(topology.New(), nil, rmqversion.Default)
	var out bytes.Buffer
	if err := topotest.WriteText(&out, r); err != nil {
		t.Fatal(err)
	}
	if !r.OK() || out.String() != "0 passed, 0 failed\n" {
		t.Errorf("OK %v, output %q", r.OK(), out.String())
	}
}

// An x-modulus-hash exchange delivers to exactly one destination. From 4.3
// the simulator knows which; before, it cannot: a test that agrees with
// what it knows is unknown (never a failure, never a pass), and a test the
// certain part contradicts fails.
func TestModulusHashPickIsUnknownBefore43(t *testing.T) {
	top := loadSrc(t, `version: 1
vhosts:
  /:
    exchanges:
      work: { type: x-modulus-hash }
      orders: { type: topic }
      dlx: { type: fanout }
    queues:
      w1: { bindings: [{ exchange: work, routing_key: "" }], dead_letter: { exchange: dlx } }
      w2: { bindings: [{ exchange: work, routing_key: "" }], dead_letter: { exchange: dlx } }
      log: { bindings: [{ exchange: orders, routing_key: "#" }] }
      parked: { bindings: [{ exchange: dlx, routing_key: "" }] }
    bindings:
      - { source: orders, destination: work, destination_type: exchange, routing_key: "order.*" }
tests:
  - name: one worker
    publish: { exchange: orders, routing_key: order.1 }
    expect: { queues: [log, w2] }
  - name: the log is certain and missing
    publish: { exchange: orders, routing_key: order.1 }
    expect: { queues: [w1, w2] }
  - name: rejected by a worker
    publish: { exchange: work, routing_key: order.1 }
    reject: w1
    expect: { queues: [parked] }
`)
	rep43 := topotest.Simulate(top, top.Tests, rmqversion.MustParse("4.3"))
	// On 4.3 the pick is known: order.1 hashes to one of w1, w2; whichever
	// it is, the first test's verdict is definite.
	for _, o := range rep43.Tests {
		if o.Unknown {
			t.Errorf("4.3: %s is unknown (%s); 4.3's pick is known", o.Name, o.Message)
		}
	}
	rep40 := topotest.Simulate(top, top.Tests, rmqversion.MustParse("4.0"))
	want := []struct {
		unknown, passed bool
		msg             string
	}{
		{true, false, `cannot tell offline whether the message lands in [log w2]: exchange "work" (x-modulus-hash) delivers it to exactly one of [queue w1, queue w2]`},
		{false, false, `expected [w1 w2], got at least [log]`},
		{true, false, `it may not reach queue "w1" to be rejected there`},
	}
	for i, w := range want {
		o := rep40.Tests[i]
		if o.Unknown != w.unknown || o.Passed != w.passed || !strings.Contains(o.Message, w.msg) {
			t.Errorf("4.0: %s: unknown=%v passed=%v message %q; want unknown=%v passed=%v and %q", o.Name, o.Unknown, o.Passed, o.Message, w.unknown, w.passed, w.msg)
		}
	}
	if rep40.Unknown != 2 || rep40.Failed != 1 || rep40.OK() {
		t.Errorf("4.0: %d unknown, %d failed, OK=%v; want 2 unknown, 1 failed, not OK", rep40.Unknown, rep40.Failed, rep40.OK())
	}
	var out bytes.Buffer
	if err := topotest.WriteText(&out, rep40); err != nil {
		t.Fatal(err)
	}
	for _, line := range []string{"UNKNOWN one worker: ", "FAIL the log is certain and missing: ", "0 passed, 1 failed, 2 unknown offline (run with --live)\n"} {
		if !strings.Contains(out.String(), line) {
			t.Errorf("text report lacks %q:\n%s", line, out.String())
		}
	}
}

// TestLengthLimitInBytesIsUnknown: a queue with a length limit in bytes
// above 0 keeps a message only if it fits (internal/difftest
// TestMaxLengthBytesAgainstBroker). A test's message is the probe `mqctl
// test --live` publishes, a 16-byte body: a limit that holds it with its
// properties and headers at their largest (route.SizeBound) decides
// nothing, and a test through such a queue passes or fails as without
// the limit (a 1 KiB cap, as teams set them, left every such test
// unknown). Below that bound, a test that expects the message there, or
// its dead letter elsewhere, is unknown offline; a queue the message
// certainly reaches still fails a test that leaves it out, and a quorum
// queue with reject-publish, which takes a message while it holds none,
// is certain.
func TestLengthLimitInBytesIsUnknown(t *testing.T) {
	top := loadSrc(t, `version: 1
vhosts:
  /:
    exchanges:
      orders: { type: topic }
      small: { type: topic }
      dlx: { type: fanout }
      tinydlx: { type: fanout }
    queues:
      capped:
        bindings: [{ exchange: orders, routing_key: "#" }]
        limits: { max_length_bytes: 1KiB }
        dead_letter: { exchange: dlx, queue: capped.dlq }
      tiny:
        bindings: [{ exchange: small, routing_key: "#" }]
        limits: { max_length_bytes: 100 }
        dead_letter: { exchange: tinydlx, queue: tiny.dlq }
      refusing:
        limits: { max_length_bytes: 100, overflow: reject-publish }
      qq:
        type: quorum
        limits: { max_length_bytes: 100, overflow: reject-publish }
      log: { bindings: [{ exchange: orders, routing_key: "#" }, { exchange: small, routing_key: "#" }] }
tests:
  - name: kept in the capped queue, which holds the probe for certain
    publish: { exchange: orders, routing_key: order.1 }
    expect: { queues: [capped, log] }
  - name: rejected in the capped queue
    publish: { exchange: orders, routing_key: order.1 }
    reject: capped
    expect: { queues: [capped.dlq] }
  - name: kept in the tiny queue
    publish: { exchange: small, routing_key: order.1 }
    expect: { queues: [tiny, log] }
  - name: dead-lettered by the tiny queue
    publish: { exchange: small, routing_key: order.1 }
    expect: { queues: [tiny.dlq, log] }
  - name: the log is certain and missing
    publish: { exchange: small, routing_key: order.1 }
    expect: { queues: [tiny] }
  - name: rejected in the tiny queue
    publish: { exchange: small, routing_key: order.1 }
    reject: tiny
    expect: { queues: [tiny.dlq] }
  - name: refused by a classic queue
    publish: { exchange: "", routing_key: refusing }
    expect: { queues: [] }
  - name: a quorum queue with reject-publish takes it
    publish: { exchange: "", routing_key: qq }
    expect: { queues: [qq] }
`)
	for _, line := range []string{"4.3", "4.0", "3.10"} {
		rep := topotest.Simulate(top, top.Tests, rmqversion.MustParse(line))
		want := []struct {
			unknown, passed bool
			msg             string
		}{
			{false, true, ``},
			{false, true, ``},
			{true, false, `queue "tiny": its length limit in bytes is 100: it keeps the message only if its body fits in it, which the simulator cannot tell for this one (a 16-byte body, up to 536 bytes with its properties and headers)`},
			{true, false, `run ` + "`mqctl test --live`"},
			{false, false, `expected [tiny], got at least [log]`},
			{true, false, `queue "tiny" may not keep it to be rejected there`},
			{true, false, `a bigger one is refused (basic.nack)`},
			{false, true, ``},
		}
		for i, w := range want {
			o := rep.Tests[i]
			if o.Unknown != w.unknown || o.Passed != w.passed || !strings.Contains(o.Message, w.msg) {
				t.Errorf("%s: %s: unknown=%v passed=%v message %q; want unknown=%v passed=%v and %q", line, o.Name, o.Unknown, o.Passed, o.Message, w.unknown, w.passed, w.msg)
			}
		}
	}
}
