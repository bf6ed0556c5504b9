package topotest_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/mqctl/mqctl/pkg/rmqversion"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/mqctl/mqctl/internal/testbroker"
	"github.com/mqctl/mqctl/pkg/broker"
	"github.com/mqctl/mqctl/pkg/topotest"
)

// liveBroker connects to the test broker (skipping without one, failing in
// CI) and returns the client with its AMQP URL.
func liveBroker(t *testing.T) (*broker.Client, string) {
	t.Helper()
	b := testbroker.New(t)
	c, err := broker.Connect(t.Context(), broker.Config{Server: b.URL, Username: b.Username, Password: b.Password})
	if err != nil {
		t.Fatalf("connect to the test broker: %v", err)
	}
	u, err := c.AMQPURL(context.Background(), "")
	if err != nil {
		t.Fatal(err)
	}
	return c, u
}

// logBuffer is a LiveOptions.Log that tests can read while RunLive runs.
type logBuffer struct {
	mu      sync.Mutex
	buf     bytes.Buffer
	onWrite func(string)
}

func (l *logBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	l.buf.Write(p)
	l.mu.Unlock()
	if l.onWrite != nil {
		l.onWrite(string(p))
	}
	return len(p), nil
}

func (l *logBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.String()
}

var throwaway = regexp.MustCompile(`"(` + topotest.VhostPrefix + `[0-9a-f]+)"`)

// throwawayVhosts are the vhosts RunLive said it created.
func throwawayVhosts(t *testing.T, log string) []string {
	t.Helper()
	var out []string
	for _, m := range throwaway.FindAllStringSubmatch(log, -1) {
		if !slices.Contains(out, m[1]) {
			out = append(out, m[1])
		}
	}
	if len(out) == 0 {
		t.Fatalf("the log names no throwaway vhost:\n%s", log)
	}
	return out
}

// assertDeleted checks that the throwaway vhosts are gone from the broker.
func assertDeleted(t *testing.T, c *broker.Client, vhosts []string) {
	t.Helper()
	names, err := c.VhostNames(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range vhosts {
		if slices.Contains(names, v) {
			t.Errorf("throwaway vhost %q is still on the broker", v)
		}
	}
}

// TestLiveAgreesWithSimulator runs the fixture's tests with real messages:
// every test passes or fails as its name says, and lands where the
// simulator says it lands.
func TestLiveAgreesWithSimulator(t *testing.T) {
	t.Parallel()
	c, amqpURL := liveBroker(t)
	top := loadFile(t, filepath.Join("testdata", "shop.yaml"))
	var log logBuffer
	live, err := topotest.RunLive(t.Context(), c, top, top.Tests, topotest.LiveOptions{AMQPURL: amqpURL, TLS: c.TLSConfig(), Wait: 3 * time.Second, Log: &log})
	if err != nil {
		t.Fatal(err)
	}
	assertDeleted(t, c, throwawayVhosts(t, log.String()))
	if !live.Live || len(live.Tests) != len(top.Tests) {
		t.Fatalf("live %v, %d outcomes for %d tests", live.Live, len(live.Tests), len(top.Tests))
	}
	sim := topotest.Simulate(top, top.Tests, rmqversion.Default)
	for i, o := range live.Tests {
		if want := strings.HasPrefix(o.Name, "pass "); o.Passed != want {
			t.Errorf("%s: passed = %v on the broker: %s", o.Name, o.Passed, o.Message)
		}
		if diff := cmp.Diff(sim.Tests[i].Got, o.Got); diff != "" {
			t.Errorf("%s: the broker and the simulator disagree (-simulator +broker):\n%s", o.Name, diff)
		}
	}
	var out bytes.Buffer
	if err := topotest.WriteText(&out, live); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"FAIL fail created reaches shipping only: expected [shipping], got [billing log shipping] on the broker, as the simulator predicts",
		`FAIL fail paid orders never reach shipping to be rejected: on the broker the message does not reach queue "shipping" (it reaches [billing log])`,
		"9 passed, 5 failed",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("report lacks %q:\n%s", want, out.String())
		}
	}
}

// TestLiveExampleOrders: examples/orders carries tests that pass on the
// broker.
func TestLiveExampleOrders(t *testing.T) {
	t.Parallel()
	c, amqpURL := liveBroker(t)
	top := loadFile(t, filepath.Join("..", "..", "examples", "orders"))
	if len(top.Tests) == 0 {
		t.Fatal("examples/orders has no tests")
	}
	var log logBuffer
	r, err := topotest.RunLive(t.Context(), c, top, top.Tests, topotest.LiveOptions{AMQPURL: amqpURL, Log: &log})
	if err != nil {
		t.Fatal(err)
	}
	assertDeleted(t, c, throwawayVhosts(t, log.String()))
	for _, o := range r.Tests {
		if !o.Passed {
			t.Errorf("FAIL %s: %s (hops: %s)", o.Name, o.Message, strings.Join(o.Hops, "; "))
		}
	}
}

// TestLiveBrokenWiring: a file whose dead letters are bound to the wrong
// key fails on the broker, saying where the message went instead.
func TestLiveBrokenWiring(t *testing.T) {
	t.Parallel()
	c, amqpURL := liveBroker(t)
	top := loadSrc(t, `version: 1
vhosts:
  /:
    exchanges:
      orders: { type: topic }
      orders.dlx: { type: topic }
    queues:
      shipping:
        bindings: [{ exchange: orders, routing_key: order.created }]
        dead_letter: { exchange: orders.dlx, routing_key: shipping.failed }
      shipping.dlq:
        bindings: [{ exchange: orders.dlx, routing_key: shipping }]
      catch-all:
        bindings: [{ exchange: orders.dlx, routing_key: "#" }]
tests:
  - name: rejected shipping messages land in the DLQ
    publish: { exchange: orders, routing_key: order.created }
    reject: shipping
    expect: { queues: [shipping.dlq] }
`)
	var log logBuffer
	r, err := topotest.RunLive(t.Context(), c, top, top.Tests, topotest.LiveOptions{AMQPURL: amqpURL, Log: &log})
	if err != nil {
		t.Fatal(err)
	}
	assertDeleted(t, c, throwawayVhosts(t, log.String()))
	o := r.Tests[0]
	want := `expected [shipping.dlq], got [catch-all] on the broker, as the simulator predicts; "catch-all" gets it (the hops show how): add it to expect.queues if that is right, else change the binding or dead-letter wiring that leads there; it does not reach "shipping.dlq" ("shipping.dlq" is bound from orders.dlx [shipping]): if it should, bind it to an exchange the message passes, with a key or headers it matches; else take it out of expect.queues, or fix the test's publish`
	if o.Passed || o.Message != want || r.OK() {
		t.Errorf("outcome %+v, want the message %q", o, want)
	}
}

// TestLiveCancelledDeletesVhost: a run interrupted (Ctrl-C) after the
// throwaway vhost was made still deletes it.
func TestLiveCancelledDeletesVhost(t *testing.T) {
	t.Parallel()
	c, amqpURL := liveBroker(t)
	top := loadFile(t, filepath.Join("testdata", "shop.yaml"))
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	log := &logBuffer{onWrite: func(line string) {
		if strings.HasPrefix(line, "applied") {
			cancel()
		}
	}}
	_, err := topotest.RunLive(ctx, c, top, top.Tests, topotest.LiveOptions{AMQPURL: amqpURL, Log: log})
	if !errors.Is(err, context.Canceled) {
		t.Errorf("err = %v, want context.Canceled", err)
	}
	assertDeleted(t, c, throwawayVhosts(t, log.String()))
	if !strings.Contains(log.String(), "deleted the throwaway vhost") {
		t.Errorf("log:\n%s", log.String())
	}
	// While it deletes the vhost, the user is told that another Ctrl-C
	// (which ends the process at once) would leave it behind, and how to
	// delete it then.
	if !strings.Contains(log.String(), "interrupted: deleting the throwaway vhost") || !strings.Contains(log.String(), "rabbitmqctl delete_vhost mqctl-test-") {
		t.Errorf("the log does not say that the vhost is being deleted:\n%s", log.String())
	}
}

// TestLiveBadAMQPURL: an AMQP URL that reaches no broker is an error
// naming the host, without the password, found before the throwaway
// vhost is made (the apply of its copy checks the URL first).
func TestLiveBadAMQPURL(t *testing.T) {
	t.Parallel()
	c, _ := liveBroker(t)
	top := loadFile(t, filepath.Join("..", "..", "examples", "orders"))
	var log logBuffer
	_, err := topotest.RunLive(t.Context(), c, top, top.Tests, topotest.LiveOptions{AMQPURL: "amqp://guest:s3cret-pw@127.0.0.1:1", Log: &log})
	if err == nil || !strings.Contains(err.Error(), "127.0.0.1:1") || strings.Contains(err.Error(), "s3cret-pw") || !strings.Contains(err.Error(), "nothing was changed") {
		t.Errorf("err = %v", err)
	}
	if log.String() != "" {
		t.Errorf("a throwaway vhost was made and deleted; want none made:\n%s", log.String())
	}
}

// TestLiveNeedsAnAdministrator: the throwaway vhosts take the
// administrator tag to make and delete. A user without it (management, or
// monitoring, with permissions on the vhost) is refused before anything is
// tried, told the tag and the offline alternative. Before, the run tried
// to make the vhost, and then told the user to delete it by hand,
// though none was made.
func TestLiveNeedsAnAdministrator(t *testing.T) {
	t.Parallel()
	b := testbroker.New(t)
	top := loadFile(t, filepath.Join("..", "..", "examples", "orders"))
	for _, tags := range [][]string{{"management"}, {"monitoring"}} {
		user, pw := b.User(t, tags...)
		c, err := broker.Connect(t.Context(), broker.Config{Server: b.URL, Username: user, Password: pw})
		if err != nil {
			t.Fatal(err)
		}
		var log logBuffer
		_, err = topotest.RunLive(t.Context(), c, top, top.Tests, topotest.LiveOptions{AMQPURL: fmt.Sprintf("amqp://%s:%d", b.AMQPHost, b.AMQPPort), Log: &log})
		want := fmt.Sprintf("which takes the administrator tag: user %q has the tags %s; nothing was changed. Run it as an administrator (an administrator can give the tag, keeping the user's own: rabbitmqctl set_user_tags %s %s administrator), or run mqctl test without --live", user, tags[0], user, tags[0])
		if err == nil || !strings.Contains(err.Error(), want) || strings.Contains(err.Error(), "delete") && strings.Contains(err.Error(), "delete_vhost") {
			t.Errorf("%s: err = %v\nwant it to hold %s", tags[0], err, want)
		}
		if log.String() != "" {
			t.Errorf("%s: log %q; want nothing made", tags[0], log.String())
		}
	}
}

// TestLiveRefusedAndTwoVhosts: a probe a queue refuses (a classic queue
// with a length limit of 0 and overflow reject-publish: basic.nack) lands
// nowhere, as the simulator predicts, so a test expecting it there fails
// and the run goes on; the tests of each vhost run in a throwaway copy of
// that vhost, all deleted afterwards.
func TestLiveRefusedAndTwoVhosts(t *testing.T) {
	t.Parallel()
	c, amqpURL := liveBroker(t)
	top := loadSrc(t, `version: 1
vhosts:
  a:
    queues:
      full: { limits: { max_length: 0, overflow: reject-publish } }
      jobs: {}
  b:
    exchanges:
      fan: { type: fanout }
    queues:
      one: { bindings: [{ exchange: fan }] }
      two: { bindings: [{ exchange: fan }] }
tests:
  - { name: full, vhost: a, publish: { exchange: "", routing_key: full }, expect: { queues: [full] } }
  - { name: fanout, vhost: b, publish: { exchange: fan }, expect: { queues: [one, two] } }
  - { name: jobs, vhost: a, publish: { exchange: "", routing_key: jobs }, expect: { queues: [jobs] } }
`)
	var log logBuffer
	r, err := topotest.RunLive(t.Context(), c, top, top.Tests, topotest.LiveOptions{AMQPURL: amqpURL, Log: &log})
	if err != nil {
		t.Fatal(err)
	}
	vhosts := throwawayVhosts(t, log.String())
	if len(vhosts) != 2 {
		t.Errorf("throwaway vhosts %v, want one per vhost", vhosts)
	}
	assertDeleted(t, c, vhosts)
	var got []string
	for _, o := range r.Tests {
		got = append(got, fmt.Sprintf("%s %v %s", o.Name, o.Passed, o.Message))
	}
	want := []string{
		`full false expected [full], got [] on the broker, as the simulator predicts; "full" gets it but keeps nothing (the hops say why): if it should keep it, change its limits or message TTL; else take it out of expect.queues`,
		"fanout true ",
		"jobs true ",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("outcomes in file order (-want +got):\n%s", diff)
	}
}

// TestLiveRandomPick: an x-local-random exchange with two queues (RabbitMQ
// 4.0+) picks one at random, so a test expecting one of them is unknown,
// offline and live (where the broker's pick this time decides nothing);
// one expecting a queue no pick reaches fails; one through an
// x-local-random exchange with a single queue passes. 3.10 has no such
// exchange type: the throwaway vhost cannot be made.
func TestLiveRandomPick(t *testing.T) {
	t.Parallel()
	c, amqpURL := liveBroker(t)
	top := loadSrc(t, `version: 1
vhosts:
  v:
    exchanges:
      rpc: { type: x-local-random }
      solo: { type: x-local-random }
    queues:
      w1: { bindings: [{ exchange: rpc }] }
      w2: { bindings: [{ exchange: rpc }] }
      only: { bindings: [{ exchange: solo }] }
tests:
  - name: rpc reaches w1
    publish: { exchange: rpc, routing_key: x }
    expect: { queues: [w1] }
  - name: rpc reaches only
    publish: { exchange: rpc, routing_key: x }
    expect: { queues: [only] }
  - name: solo reaches only
    publish: { exchange: solo, routing_key: x }
    expect: { queues: [only] }
`)
	check := func(r *topotest.Report, where string) {
		t.Helper()
		want := []struct{ passed, unknown, random bool }{{false, true, true}, {false, false, false}, {true, false, false}}
		for i, w := range want {
			o := r.Tests[i]
			if o.Passed != w.passed || o.Unknown != w.unknown || o.Random != w.random {
				t.Errorf("%s: %s: passed=%v unknown=%v random=%v (%s); want %v %v %v", where, o.Name, o.Passed, o.Unknown, o.Random, o.Message, w.passed, w.unknown, w.random)
			}
		}
		var out bytes.Buffer
		if err := topotest.WriteText(&out, r); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(out.String(), "1 passed, 1 failed, 1 unknown (a random pick: no run can tell)\n") || strings.Contains(out.String(), "--live") {
			t.Errorf("%s: the summary:\n%s", where, out.String())
		}
	}
	check(topotest.Simulate(top, top.Tests, rmqversion.MustParse("4.3")), "offline")
	var log logBuffer
	r, err := topotest.RunLive(t.Context(), c, top, top.Tests, topotest.LiveOptions{AMQPURL: amqpURL, Log: &log})
	v := c.RabbitMQVersion()
	if !v.LocalRandomExchange() {
		if err == nil || !strings.Contains(err.Error(), "x-local-random") {
			t.Errorf("RabbitMQ %s has no x-local-random: want RunLive to fail naming it, got %v", v, err)
		}
		return
	}
	if err != nil {
		t.Fatal(err)
	}
	assertDeleted(t, c, throwawayVhosts(t, log.String()))
	check(r, "live on RabbitMQ "+v.String())
	if o := r.Tests[0]; !strings.Contains(o.Message, "this time, which decides nothing") {
		t.Errorf("live: %s", o.Message)
	}
}

// TestLiveHeadersTableOrder: a headers binding whose criterion is a table
// of several fields matches a probe with an equal table every time, on
// every version: the probe goes through the management API, which sends
// the table's fields sorted by name, as the binding (declared through it)
// holds them. Sent over AMQP by amqp091-go, in Go's map order, the same
// probe matched about one time in two, so `mqctl test --live` passed or
// failed by chance.
func TestLiveHeadersTableOrder(t *testing.T) {
	t.Parallel()
	c, amqpURL := liveBroker(t)
	var sb strings.Builder
	sb.WriteString(`version: 1
vhosts:
  v:
    exchanges:
      hx: { type: headers }
    queues:
      match:
        bindings: [{ exchange: hx, arguments: { x-match: all, t: { a: 1, b: 2.5, c: "three", d: { e: 1, f: [1, 2] } } } }]
      other:
        bindings: [{ exchange: hx, arguments: { x-match: all, t: { a: 1, b: 2 } } }]
tests:
`)
	const runs = 12
	for i := range runs {
		fmt.Fprintf(&sb, "  - { name: run %d, publish: { exchange: hx, headers: { t: { c: three, a: 1, d: { f: [1, 2], e: 1 }, b: 2.5 } } }, expect: { queues: [match] } }\n", i)
	}
	top := loadSrc(t, sb.String())
	r, err := topotest.RunLive(t.Context(), c, top, top.Tests, topotest.LiveOptions{AMQPURL: amqpURL})
	if err != nil {
		t.Fatal(err)
	}
	passed := 0
	for _, o := range r.Tests {
		if o.Passed {
			passed++
		} else {
			t.Logf("%s: %s (got %v)", o.Name, o.Message, o.Got)
		}
	}
	if passed != runs {
		t.Errorf("%d of %d identical probes reached the queue whose binding their headers equal, want all", passed, runs)
	}
}

// TestLiveLeavesOutWhatReachesOut: the throwaway vhost holds no shovel,
// federation upstream or upstream set of the file. Copied there, a shovel
// moves the real messages of the queues its URIs name (here another
// vhost's: before, a test run moved its 3 messages to the shovel's
// destination), and a federation link takes messages from its upstream.
// The log names what was left out; the tests run as without them.
func TestLiveLeavesOutWhatReachesOut(t *testing.T) {
	t.Parallel()
	b := testbroker.New(t)
	c, amqpURL := liveBroker(t)
	real := b.Vhost(t)
	ch := b.Channel(t, real)
	for _, q := range []string{"src", "dst"} {
		if _, err := ch.QueueDeclare(q, true, false, false, false, nil); err != nil {
			t.Fatal(err)
		}
	}
	for i := range 3 {
		dc, err := ch.PublishWithDeferredConfirm("", "src", false, false, amqp.Publishing{Body: []byte(fmt.Sprint("real message ", i))})
		if err != nil || !dc.Wait() {
			t.Fatalf("publish: %v", err)
		}
	}
	top := loadSrc(t, fmt.Sprintf(`version: 1
vhosts:
  a:
    exchanges:
      orders: { type: topic }
    queues:
      orders.q: { bindings: [{ exchange: orders, routing_keys: ["#"] }] }
    shovels:
      move: { src-uri: "amqp:///%[1]s", src-queue: src, dest-uri: "amqp:///%[1]s", dest-queue: dst }
    federation_upstreams:
      dc2: { uri: %[2]q }
    federation_upstream_sets:
      both: [{ upstream: dc2 }]
    policies:
      fed: { pattern: "^orders$", apply_to: exchanges, definition: { federation-upstream-set: both } }
tests:
  - { name: any order, publish: { exchange: orders, routing_key: x }, expect: { queues: [orders.q] } }
`, real, b.AMQPURL(real)))
	var inVhost []string
	log := &logBuffer{onWrite: func(line string) {
		m := throwaway.FindStringSubmatch(line)
		if !strings.HasPrefix(line, "applied") || m == nil {
			return
		}
		for _, p := range []string{"parameters/shovel/", "parameters/federation-upstream/", "parameters/federation-upstream-set/"} {
			var objs []struct{ Component, Name string }
			if err := json.Unmarshal(b.GetAPI(t, p+m[1]), &objs); err != nil {
				t.Error(err)
			}
			for _, o := range objs {
				inVhost = append(inVhost, o.Component+" "+o.Name)
			}
		}
	}}
	r, err := topotest.RunLive(t.Context(), c, top, top.Tests, topotest.LiveOptions{AMQPURL: amqpURL, Log: log})
	if err != nil {
		t.Fatal(err)
	}
	assertDeleted(t, c, throwawayVhosts(t, log.String()))
	if len(inVhost) > 0 {
		t.Errorf("the throwaway vhost holds what reaches beyond it:\n%s", strings.Join(inVhost, "\n"))
	}
	if !r.OK() || r.Passed != 1 {
		t.Errorf("report: %+v", r.Tests)
	}
	want := `left out of the throwaway vhost`
	for _, n := range []string{`shovel "move"`, `federation upstream "dc2"`, `federation upstream set "both"`} {
		if !strings.Contains(log.String(), n) {
			t.Errorf("the log does not name %s as %s:\n%s", n, want, log.String())
		}
	}
	for q, n := range map[string]int{"src": 3, "dst": 0} {
		got, err := ch.QueueDeclarePassive(q, true, false, false, false, nil)
		if err != nil {
			t.Fatal(err)
		}
		if got.Messages != n {
			t.Errorf("queue %q of vhost %q holds %d messages after the run, want %d", q, real, got.Messages, n)
		}
	}
}

// TestLiveRefusalNamesTheFilesVhost: when the broker (or the plan) refuses
// an object of the copy, the error names the object in the file's vhost,
// where the user wrote it, not in the throwaway vhost, which is gone by
// then; no vhost is left behind. No broker here offers x-consistent-hash.
func TestLiveRefusalNamesTheFilesVhost(t *testing.T) {
	t.Parallel()
	c, amqpURL := liveBroker(t)
	top := loadSrc(t, `version: 1
vhosts:
  shop:
    exchanges:
      spread: { type: x-consistent-hash }
    queues:
      one: { bindings: [{ exchange: spread, routing_key: "1" }] }
tests:
  - { name: spread, publish: { exchange: spread, routing_key: k }, expect: { queues: [one] } }
`)
	var log logBuffer
	_, err := topotest.RunLive(t.Context(), c, top, top.Tests, topotest.LiveOptions{AMQPURL: amqpURL, Log: &log})
	if err == nil {
		t.Fatal("the broker took an x-consistent-hash exchange; this test needs one that does not")
	}
	m := throwaway.FindStringSubmatch(err.Error())
	if m == nil {
		t.Fatalf("the error does not name the throwaway vhost: %v", err)
	}
	assertDeleted(t, c, []string{m[1]})
	if !strings.Contains(err.Error(), `exchange "spread" in vhost "shop"`) || strings.Contains(err.Error(), `in vhost "`+m[1]+`"`) {
		t.Errorf("the error names the exchange in the throwaway vhost, not in vhost \"shop\": %v", err)
	}
}

// TestLiveLeavesOutVhostLimits: the vhost's limits bound connections and
// queues, not where a message goes, and the copy leaves them out: a limit
// that leaves no room for the apply's lock queue (max-queues as many as
// the file's queues) or the run's connection (max-connections: 0) refused
// the whole run before, where the offline run passes.
func TestLiveLeavesOutVhostLimits(t *testing.T) {
	t.Parallel()
	c, amqpURL := liveBroker(t)
	for _, limits := range []string{"{ max-queues: 1 }", "{ max-connections: 0 }"} {
		top := loadSrc(t, `version: 1
vhosts:
  tight:
    limits: `+limits+`
    queues:
      jobs: {}
tests:
  - { name: jobs, publish: { exchange: "", routing_key: jobs }, expect: { queues: [jobs] } }
`)
		var log logBuffer
		r, err := topotest.RunLive(t.Context(), c, top, top.Tests, topotest.LiveOptions{AMQPURL: amqpURL, Log: &log})
		if err != nil {
			t.Errorf("limits %s: %v", limits, err)
			continue
		}
		assertDeleted(t, c, throwawayVhosts(t, log.String()))
		if !r.OK() || r.Passed != 1 {
			t.Errorf("limits %s: %+v", limits, r.Tests)
		}
		if !strings.Contains(log.String(), "left out of the throwaway vhost") || !strings.Contains(log.String(), "its vhost limits") {
			t.Errorf("limits %s: the log does not say the limits were left out:\n%s", limits, log.String())
		}
	}
}

// TestLiveRefusedLaterVhost: when the copy of a later vhost is refused (no
// broker here offers x-consistent-hash), the run stops there, and the
// outcomes of the vhosts already tested come back with the error, the
// tests not run named; before, they were dropped with the report. Every
// throwaway vhost is deleted. The same on 4.3, 4.0 and 3.10.
func TestLiveRefusedLaterVhost(t *testing.T) {
	t.Parallel()
	c, amqpURL := liveBroker(t)
	top := loadSrc(t, `version: 1
vhosts:
  htt2-first:
    exchanges:
      fan: { type: fanout }
    queues:
      one: { bindings: [{ exchange: fan }] }
  htt2-later:
    exchanges:
      spread: { type: x-consistent-hash }
    queues:
      two: { bindings: [{ exchange: spread, routing_key: "1" }] }
tests:
  - { name: fanout, vhost: htt2-first, publish: { exchange: fan }, expect: { queues: [one] } }
  - { name: spread, vhost: htt2-later, publish: { exchange: spread, routing_key: k }, expect: { queues: [two] } }
  - { name: fanout wrong, vhost: htt2-first, publish: { exchange: fan }, expect: { queues: [] } }
`)
	var log logBuffer
	r, err := topotest.RunLive(t.Context(), c, top, top.Tests, topotest.LiveOptions{AMQPURL: amqpURL, Log: &log})
	if err == nil {
		t.Fatal("the broker took an x-consistent-hash exchange; this test needs one that does not")
	}
	vhosts := throwawayVhosts(t, log.String()+err.Error())
	if len(vhosts) != 2 {
		t.Errorf("throwaway vhosts %v, want one per vhost", vhosts)
	}
	assertDeleted(t, c, vhosts)
	if !strings.Contains(err.Error(), `exchange "spread" in vhost "htt2-later"`) {
		t.Errorf("the error does not name the refused exchange: %v", err)
	}
	if r == nil {
		t.Fatalf("no report of the vhost tested before the refusal; error: %v", err)
	}
	var got []string
	for _, o := range r.Tests {
		got = append(got, fmt.Sprintf("%s %v", o.Name, o.Passed))
	}
	if diff := cmp.Diff([]string{"fanout true", "fanout wrong false"}, got); diff != "" {
		t.Errorf("outcomes (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"spread"}, r.NotRun); diff != "" {
		t.Errorf("not run (-want +got):\n%s", diff)
	}
	if r.Passed != 1 || r.Failed != 1 || r.OK() {
		t.Errorf("passed %d, failed %d, OK %v; want 1, 1, false", r.Passed, r.Failed, r.OK())
	}
}
