package cli_test

import (
	"context"
	"encoding/json"
	"net/url"
	"strings"
	"testing"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/mqctl/mqctl/internal/testbroker"
)

// backoffFile is the seed recipe with the broker's own delayed retry: a
// quorum queue whose failed messages wait 2s, then 3s (min 2s × failed
// deliveries, at most 3s), and are dead-lettered to its DLQ at the 3rd
// failed delivery. No delay queue.
const backoffFile = `version: 1
vhosts:
  ${VHOST}:
    exchanges:
      jobs: {type: direct}
      jobs.dlx: {type: direct}
    queues:
      jobs.resize:
        type: quorum
        bindings: [{exchange: jobs, routing_key: resize}]
        dead_letter: {exchange: jobs.dlx, queue: jobs.resize.dlq}
        retry:
          backoff: {min: 2s, max: 3s}
          attempts: 3
`

// rawRetryFile declares what backoffFile expands into, as raw arguments:
// what a broker without delayed retry is given when the file says it so.
const rawRetryFile = `version: 1
vhosts:
  ${VHOST}:
    exchanges:
      jobs: {type: direct}
      jobs.dlx: {type: direct}
    queues:
      jobs.resize:
        type: quorum
        bindings: [{exchange: jobs, routing_key: resize}]
        dead_letter: {exchange: jobs.dlx, queue: jobs.resize.dlq}
        delivery_limit: 2
        arguments: {x-delayed-retry-type: failed, x-delayed-retry-min: 2000, x-delayed-retry-max: 3000}
`

// TestBackoffAgainstBroker applies retry.backoff and watches a message
// fail on the broker. What each version does, measured:
//
//   - 4.3.6: the queue takes the arguments and reports delayed_retry
//     "failed (min: 2000ms, max: 3000ms)" and delivery_limit 2. A message
//     rejected with requeue (a failed delivery) is not available again at
//     once: it waits, at least min × its failed deliveries, at most max
//     (the management statistics, sampled every 5 s, rarely catch a wait
//     of 2-3 s in messages_delayed, so the test reads the queue and the
//     clock instead), and comes back with x-delivery-count 1, then 2; the
//     3rd reject (attempts: 3, x-delivery-limit 2) dead-letters it at once
//     to the DLQ with reason delivery_limit. A
//     channel closed with the message unacknowledged is a failed delivery
//     too: it waits. A basic.nack with requeue is not: under when: failed it
//     is available again at once and does not count. A second plan shows no
//     changes, and export writes the queue back as retry.backoff.
//   - 4.0.5 and 3.10.8: plan refuses retry.backoff before anything changes
//     (the broker would ignore it). Given the same arguments raw, the
//     broker declares the quorum queue, keeps them (they read back) and
//     ignores them: a rejected message is available again at once, and
//     the 3rd reject dead-letters it (a burst, no wait).
func TestBackoffAgainstBroker(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	ver := h.b.Version()
	if !ver.DelayedRetry() {
		backoffIgnored(t, h)
		return
	}
	h.mustApply(backoffFile)
	h.assertNoChanges(backoffFile)

	info := queueInfo(t, h.b, h.vhost, "jobs.resize")
	args, _ := info["arguments"].(map[string]any)
	for k, want := range map[string]float64{"x-delayed-retry-min": 2000, "x-delayed-retry-max": 3000, "x-delivery-limit": 2} {
		if args[k] != want {
			t.Errorf("RabbitMQ %s: argument %s = %v, want %v (arguments %v)", ver, k, args[k], want, args)
		}
	}
	if args["x-delayed-retry-type"] != "failed" {
		t.Errorf("RabbitMQ %s: x-delayed-retry-type = %v", ver, args["x-delayed-retry-type"])
	}
	// What the queue itself says it does, once its statistics come in.
	if got := queueStat(t, h.b, h.vhost, "jobs.resize", "delayed_retry"); got != "failed (min: 2000ms, max: 3000ms)" {
		t.Errorf("RabbitMQ %s: delayed_retry %v, want failed (min: 2000ms, max: 3000ms)", ver, got)
	}
	if got := queueStat(t, h.b, h.vhost, "jobs.resize", "delivery_limit"); got != float64(2) {
		t.Errorf("RabbitMQ %s: delivery_limit %v, want 2", ver, got)
	}

	ch := h.b.Channel(t, h.vhost)
	publishTo(t, ch, "jobs", "resize", "resize-42")
	const q, dlq = "jobs.resize", "jobs.resize.dlq"
	waits := []time.Duration{2 * time.Second, 3 * time.Second} // min(2s × n, 3s)
	d, ok := getWithin(t, ch, q, 30*time.Second)
	if !ok {
		t.Fatalf("RabbitMQ %s: no delivery", ver)
	}
	for attempt := 1; ; attempt++ {
		failed, _ := d.Headers["x-delivery-count"].(int64)
		if int(failed) != attempt-1 {
			t.Errorf("RabbitMQ %s: delivery %d has x-delivery-count %v, want %d (failed deliveries so far)", ver, attempt, d.Headers["x-delivery-count"], attempt-1)
		}
		rejected := time.Now()
		if err := d.Reject(true); err != nil {
			t.Fatal(err)
		}
		if attempt == 3 {
			break
		}
		// Not available again at once: it waits in the queue.
		if _, ok, err := ch.Get(q, false); err != nil || ok {
			t.Fatalf("RabbitMQ %s: after the reject of delivery %d the message is available at once (ok=%t, err=%v): it should wait %s", ver, attempt, ok, err, waits[attempt-1])
		}
		if d, ok = getWithin(t, ch, q, time.Minute); !ok {
			t.Fatalf("RabbitMQ %s: the message did not come back after the reject of delivery %d", ver, attempt)
		}
		// A lower bound only: a slow machine makes the wait longer, never
		// shorter. The broker starts the wait after it takes the reject,
		// which is after the test's clock started.
		if waited := time.Since(rejected); waited < waits[attempt-1]*9/10 {
			t.Errorf("RabbitMQ %s: redelivered %s after the reject of delivery %d, want at least %s", ver, waited.Round(time.Millisecond), attempt, waits[attempt-1])
		}
	}
	// The 3rd failed delivery dead-letters it, with no wait.
	d, ok = getWithin(t, ch, dlq, 30*time.Second)
	if !ok {
		t.Fatalf("RabbitMQ %s: the message is not in %s after 3 failed deliveries", ver, dlq)
	}
	if reason := deathReason(d); reason != "delivery_limit" {
		t.Errorf("RabbitMQ %s: dead-letter reason %q, want delivery_limit", ver, reason)
	}
	d.Ack(false)
	if _, ok, _ := ch.Get(q, false); ok {
		t.Errorf("RabbitMQ %s: the message is still in %s", ver, q)
	}

	// A consumer gone with the message unacknowledged is a failed delivery:
	// it waits too.
	publishTo(t, ch, "jobs", "resize", "resize-43")
	c2 := h.b.Channel(t, h.vhost)
	if _, ok := getWithin(t, c2, q, 30*time.Second); !ok {
		t.Fatal("no delivery")
	}
	closed := time.Now()
	c2.Close()
	if _, ok, err := ch.Get(q, false); err != nil || ok {
		t.Errorf("RabbitMQ %s: a message whose channel closed is available at once (ok=%t, err=%v): it should wait", ver, ok, err)
	}
	d, ok = getWithin(t, ch, q, time.Minute)
	if !ok {
		t.Fatalf("RabbitMQ %s: the message did not come back after its channel closed", ver)
	}
	if waited := time.Since(closed); waited < waits[0]*9/10 {
		t.Errorf("RabbitMQ %s: redelivered %s after its channel closed, want at least %s", ver, waited.Round(time.Millisecond), waits[0])
	}
	if n, _ := d.Headers["x-delivery-count"].(int64); n != 1 {
		t.Errorf("RabbitMQ %s: after the channel closed, x-delivery-count %v, want 1", ver, d.Headers["x-delivery-count"])
	}
	// A basic.nack with requeue is not a failed delivery: under when:
	// failed it does not wait, and does not count.
	if err := d.Nack(false, true); err != nil {
		t.Fatal(err)
	}
	d, ok = getWithin(t, ch, q, 200*time.Millisecond)
	if !ok {
		t.Fatalf("RabbitMQ %s: a message nacked with requeue is not available at once", ver)
	}
	if n, _ := d.Headers["x-delivery-count"].(int64); n != 1 {
		t.Errorf("RabbitMQ %s: after a nack, x-delivery-count %v, want still 1", ver, d.Headers["x-delivery-count"])
	}
	d.Ack(false)

	// Nothing to change after all that; export writes the sugar back, and
	// the exported file plans no changes either.
	h.assertNoChanges(backoffFile)
	r := h.run("export", "--vhost", h.vhost)
	if r.code != 0 {
		t.Fatalf("export:\n%s", r)
	}
	if !strings.Contains(r.stdout, "retry: {backoff: {min: 2s, max: 3s}, attempts: 3}") {
		t.Errorf("RabbitMQ %s: export does not write retry.backoff:\n%s", ver, r.stdout)
	}
	// The export lists the broker's users last; this plan is about the vhost.
	vhostOnly, _, _ := strings.Cut(r.stdout, "\nusers:\n")
	exported := h.write("exported.yaml", vhostOnly+"\n")
	if r := h.run("plan", "-f", exported, "--detailed-exitcode"); r.code != 0 {
		t.Errorf("the exported file plans changes:\n%s", r)
	}
}

// backoffIgnored is TestBackoffAgainstBroker on a version without delayed
// retry.
func backoffIgnored(t *testing.T, h *harness) {
	ver := h.b.Version()
	f := h.write("backoff.yaml", backoffFile)
	r := h.run("plan", "-f", f)
	if r.code != 1 || !strings.Contains(r.stderr, "plan refused, nothing was changed: RabbitMQ "+ver.String()+" would refuse or ignore 1 object of the file:") ||
		!strings.Contains(r.stderr, `queue "jobs.resize" in vhost "`+h.vhost+`": retry.backoff: RabbitMQ `+ver.Line()+` has no delayed retry`) {
		t.Errorf("RabbitMQ %s: plan of retry.backoff:\n%s", ver, r)
	}
	if r := h.run("apply", "-f", f, "--auto-approve"); r.code != 1 {
		t.Errorf("RabbitMQ %s: apply of retry.backoff:\n%s", ver, r)
	}
	if n := depth(t, h.b, h.vhost, "jobs.resize"); n != -1 {
		t.Fatalf("RabbitMQ %s: the refused apply declared the queue", ver)
	}

	// The same arguments written raw: the broker declares the queue and
	// keeps them, and ignores them.
	h.mustApply(rawRetryFile)
	h.assertNoChanges(rawRetryFile)
	info := queueInfo(t, h.b, h.vhost, "jobs.resize")
	args, _ := info["arguments"].(map[string]any)
	if args["x-delayed-retry-type"] != "failed" || args["x-delayed-retry-min"] != float64(2000) || args["x-delayed-retry-max"] != float64(3000) {
		t.Errorf("RabbitMQ %s: the arguments do not read back: %v", ver, args)
	}
	if _, has := info["delayed_retry"]; has {
		t.Errorf("RabbitMQ %s reports delayed_retry %v", ver, info["delayed_retry"])
	}
	ch := h.b.Channel(t, h.vhost)
	publishTo(t, ch, "jobs", "resize", "resize-42")
	const q, dlq = "jobs.resize", "jobs.resize.dlq"
	d, ok := getWithin(t, ch, q, 30*time.Second)
	if !ok {
		t.Fatal("no delivery")
	}
	for attempt := 1; ; attempt++ {
		if err := d.Reject(true); err != nil {
			t.Fatal(err)
		}
		if attempt == 3 {
			break
		}
		// Available again at once: nothing waits.
		var ok bool
		var err error
		if d, ok, err = ch.Get(q, false); err != nil || !ok {
			t.Fatalf("RabbitMQ %s: after the reject of delivery %d the message is not available at once (ok=%t, err=%v)", ver, attempt, ok, err)
		}
	}
	d, ok = getWithin(t, ch, dlq, 30*time.Second)
	if !ok {
		t.Fatalf("RabbitMQ %s: the message is not in %s after 3 deliveries", ver, dlq)
	}
	if reason := deathReason(d); reason != "delivery_limit" {
		t.Errorf("RabbitMQ %s: dead-letter reason %q, want delivery_limit", ver, reason)
	}
	d.Ack(false)
}

// queueInfo reads GET /api/queues/{vhost}/{name}.
func queueInfo(t *testing.T, b *testbroker.Broker, vhost, name string) map[string]any {
	t.Helper()
	var info map[string]any
	if err := json.Unmarshal(b.GetAPI(t, "queues/"+url.PathEscape(vhost)+"/"+url.PathEscape(name)), &info); err != nil {
		t.Fatal(err)
	}
	return info
}

// queueStat polls queue q's JSON until it holds field (the queue's
// statistics come in after up to their interval, 5 s), and returns it; nil
// after 30 s.
func queueStat(t *testing.T, b *testbroker.Broker, vhost, q, field string) any {
	t.Helper()
	for start := time.Now(); time.Since(start) < 30*time.Second; time.Sleep(200 * time.Millisecond) {
		if v, ok := queueInfo(t, b, vhost, q)[field]; ok {
			return v
		}
	}
	return nil
}

func publishTo(t *testing.T, ch *amqp.Channel, exchange, key, body string) {
	t.Helper()
	conf, err := ch.PublishWithDeferredConfirmWithContext(context.Background(), exchange, key, true, false, amqp.Publishing{Body: []byte(body)})
	if err != nil {
		t.Fatal(err)
	}
	if ok, err := conf.WaitContext(context.Background()); err != nil || !ok {
		t.Fatalf("publish to %q with key %q not confirmed: %v", exchange, key, err)
	}
}

// getWithin gets one message from queue q (manual acknowledgement),
// polling for at most d.
func getWithin(t *testing.T, ch *amqp.Channel, q string, d time.Duration) (amqp.Delivery, bool) {
	t.Helper()
	for start := time.Now(); ; time.Sleep(20 * time.Millisecond) {
		m, ok, err := ch.Get(q, false)
		if err != nil {
			t.Fatalf("basic.get %s: %v", q, err)
		}
		if ok || time.Since(start) > d {
			return m, ok
		}
	}
}

// deathReason is the reason of a dead letter's latest x-death entry.
func deathReason(d amqp.Delivery) string {
	deaths, _ := d.Headers["x-death"].([]any)
	if len(deaths) == 0 {
		return ""
	}
	first, _ := deaths[0].(amqp.Table)
	r, _ := first["reason"].(string)
	return r
}

// TestBackoffWithoutAttemptsAgainstBroker: retry.backoff without attempts
// (nor a delivery limit) is ended by the broker's default limit, as lint
// MQ203 says. Measured: 4.3.6 dead-letters the message at its 21st failed
// delivery (the default limit of 20, each wait min × failed deliveries
// before). Before 4.3 the file is refused, and the same arguments raw are
// ignored: 4.0.5 dead-letters at the 21st reject too, with no wait; 3.10.8
// has no default limit and redelivers it for ever (25 here).
func TestBackoffWithoutAttemptsAgainstBroker(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	ver := h.b.Version()
	retry := "retry: {backoff: {min: 5ms, max: 20ms}}"
	if !ver.DelayedRetry() {
		retry = "arguments: {x-delayed-retry-type: failed, x-delayed-retry-min: 5, x-delayed-retry-max: 20}"
	}
	h.mustApply(`version: 1
vhosts:
  ${VHOST}:
    exchanges:
      dlx: {type: direct}
    queues:
      work:
        type: quorum
        dead_letter: {exchange: dlx, queue: work.dlq}
        ` + retry + "\n")
	ch := h.b.Channel(t, h.vhost)
	publishTo(t, ch, "", "work", "poison")
	// After each reject the message is either back in work (after its
	// wait) or in work.dlq.
	deliveries, inDLQ := 0, false
	for start := time.Now(); deliveries < 25 && !inDLQ && time.Since(start) < time.Minute; time.Sleep(5 * time.Millisecond) {
		d, ok, err := ch.Get("work", false)
		if err != nil {
			t.Fatal(err)
		}
		if ok {
			deliveries++
			if err := d.Reject(true); err != nil {
				t.Fatal(err)
			}
			continue
		}
		if _, inDLQ, err = ch.Get("work.dlq", true); err != nil {
			t.Fatal(err)
		}
	}
	want, wantDLQ := 21, true
	if !ver.AtLeast(4, 0) {
		want, wantDLQ = 25, false // no default limit: the loop gives up first
	}
	if deliveries != want || inDLQ != wantDLQ {
		t.Errorf("RabbitMQ %s: %d deliveries, dead-lettered %t; want %d, %t", ver, deliveries, inDLQ, want, wantDLQ)
	}
}
