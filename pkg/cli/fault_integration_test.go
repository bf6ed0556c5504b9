package cli_test

import (
	"context"
	"crypto/rand"
	"fmt"
	mrand "math/rand/v2"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	rabbithole "github.com/michaelklishin/rabbit-hole/v2"
	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/mqctl/mqctl/internal/faultproxy"
	"github.com/mqctl/mqctl/internal/testbroker"
	"github.com/mqctl/mqctl/pkg/cli"
)

// Faults: the management API answering 5xx and timing out, the connection
// cut by a proxy in the middle of an apply and of a dlq replay, several
// management endpoints of which some are dead. In every case nothing is
// lost, each failure is reported in one line (never a stack trace), and a
// re-run converges.

// through runs mqctl against the management API at servers (repeatable
// --server), with the harness's credentials and its AMQP URL (straight to
// the broker).
func (h *harness) through(servers []string, args ...string) result {
	h.t.Helper()
	full := append([]string{}, args...)
	for _, s := range servers {
		full = append(full, "--server", s)
	}
	full = append(full, "--username", h.b.Username, "--password", h.b.Password, "--amqp-url", amqpURL(h.b))
	return runRaw(h.env, full...)
}

// noStackTrace fails when r's output looks like a crash.
func noStackTrace(t *testing.T, r result) {
	t.Helper()
	for _, bad := range []string{"goroutine ", "panic:", "runtime error", ".go:"} {
		if strings.Contains(r.stdout, bad) || strings.Contains(r.stderr, bad) {
			t.Errorf("output contains %q:\n%s", bad, r)
		}
	}
}

// lastLine is the last line of s.
func lastLine(s string) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	return lines[len(lines)-1]
}

func newProxy(t *testing.T, target string) *faultproxy.HTTP {
	t.Helper()
	p, err := faultproxy.NewHTTP(target)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p.Close)
	return p
}

func closedServer(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	return "http://" + addr
}

const faultSmallFile = `version: 1
vhosts:
  ${VHOST}:
    exchanges:
      orders: { type: topic }
    queues:
      shipping:
        bindings: [{ exchange: orders, routing_key: order.created }]
`

// The management API answers 500s and times out now and then: reads are
// retried and the commands succeed; a write whose answer is lost is read
// back, not sent again. When it keeps failing, one line says so.
func TestManagementAPIFaultsCLI(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	p := newProxy(t, h.b.URL)
	file := h.write("topology.yaml", faultSmallFile)
	server := []string{p.URL}

	p.Add(faultproxy.Rule{Match: faultproxy.Method("vhosts", http.MethodGet), Times: 2, Fault: faultproxy.Status, Status: 500})
	p.Add(faultproxy.Rule{Match: faultproxy.Method("definitions/", http.MethodGet), Times: 1, Fault: faultproxy.Stall})
	p.Add(faultproxy.Rule{Match: faultproxy.Method("queues/"+h.vhost+"/shipping", http.MethodPut), Times: 1, Fault: faultproxy.Drop})
	// The stalled read waits out --timeout; 1 s was too short for the
	// preflight's vhost creation on a loaded 4.3.6 (CI), which is not
	// retried: its outcome would be unknown.
	r := h.through(server, "apply", "-f", file, "--auto-approve", "--timeout", "3s")
	if r.code != 0 || !strings.Contains(r.stdout, "Apply complete: 3 created") {
		t.Fatalf("apply through a flaky management API:\n%s", r)
	}
	if n := p.Count(func(e faultproxy.Entry) bool {
		return e.Method == http.MethodPut && e.Path == "queues/"+h.vhost+"/shipping"
	}); n != 1 {
		t.Errorf("the queue's declaration was sent %d times, want once (its answer lost, then read back):\n%v", n, p.Log())
	}
	if r := h.through(server, "plan", "-f", file, "--detailed-exitcode"); r.code != 0 {
		t.Errorf("second plan:\n%s", r)
	}

	// 500 on every read: the budget runs out, one line says what happened.
	p.Add(faultproxy.Rule{Match: faultproxy.Method("", http.MethodGet), Fault: faultproxy.Status, Status: 500})
	r = h.through(server, "plan", "-f", file)
	noStackTrace(t, r)
	if r.code != 1 || strings.Count(r.stderr, "\n") != 1 ||
		!strings.HasPrefix(r.stderr, "mqctl: log in: the broker at "+p.URL+" refused (500): injected 500 (tried 4 times in ") {
		t.Errorf("plan against a management API answering 500:\n%s", r)
	}
}

// bigFile declares 5 exchanges and 65 queues with two bindings each: 200
// objects.
func bigFile(queues int) string {
	var b strings.Builder
	b.WriteString("version: 1\nvhosts:\n  ${VHOST}:\n    exchanges:\n")
	for i := range 5 {
		fmt.Fprintf(&b, "      e%d: { type: topic }\n", i)
	}
	b.WriteString("    queues:\n")
	for i := range queues {
		fmt.Fprintf(&b, "      q%04d:\n        bindings:\n          - { exchange: e%d, routing_key: k.%d }\n          - { exchange: e%d, routing_key: k.%d }\n",
			i, i%5, i, (i+1)%5, i)
	}
	return b.String()
}

// keepQueue declares a queue the file does not name, with n messages in it.
func keepQueue(t *testing.T, h *harness, name string, n int) *amqp.Channel {
	t.Helper()
	ch := h.channel(t)
	if _, err := ch.QueueDeclare(name, true, false, false, false, nil); err != nil {
		t.Fatal(err)
	}
	for i := range n {
		if err := ch.PublishWithContext(context.Background(), "", name, false, false, amqp.Publishing{MessageId: strconv.Itoa(i), Body: []byte("keep")}); err != nil {
			t.Fatal(err)
		}
	}
	waitReady(t, ch, name, n)
	return ch
}

// The proxy in front of the management API cuts every connection in the
// middle of an apply of 200 objects: apply reports what was done, what
// failed and what was left, exits 1; a re-run through the healed proxy
// converges, and the queue the file does not name keeps its messages.
func TestApplyCutMidway(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	ch := keepQueue(t, h, "keep", 7)
	p := newProxy(t, h.b.URL)
	content := bigFile(65)
	file := h.write("big.yaml", content)
	server := []string{p.URL}

	p.CutAfter(45)
	r := h.through(server, "apply", "-f", file, "--auto-approve", "--timeout", "2s")
	noStackTrace(t, r)
	if r.code != 1 {
		t.Fatalf("apply cut midway exited %d, want 1:\n%s", r.code, r)
	}
	for _, want := range []string{"\nApply did not finish.\n", "\nDone (", "\nFailed (", "\nNot done ("} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("the report lacks %q:\n%s", want, r.stdout)
		}
	}
	// The cut may also meet the deletion of the preflight's throwaway
	// vhost, which goes on while apply runs: a note says so (the next
	// apply deletes it).
	var rest []string
	for _, l := range strings.SplitAfter(r.stderr, "\n") {
		if !strings.HasPrefix(l, "mqctl: note: the preflight's throwaway vhost ") {
			rest = append(rest, l)
		}
	}
	if stderr := strings.Join(rest, ""); strings.Count(stderr, "\n") != 1 || !strings.HasPrefix(stderr, "mqctl: apply ") || !strings.Contains(stderr, "failed: the management API could not be reached after ") || !strings.Contains(stderr, " of 200 steps; nothing was lost") {
		t.Errorf("stderr is not one line saying how far apply got:\n%s", r.stderr)
	}
	failed := 0
	for _, l := range strings.Split(r.stdout, "\n") {
		if strings.HasPrefix(l, "  failed: ") {
			failed++
			if !strings.Contains(l, "management API") {
				t.Errorf("a failure line does not say what happened: %q", l)
			}
		}
	}
	// Once the management API is out of reach no new step starts: only
	// those in flight (--parallelism 8) fail.
	if failed == 0 || failed > 8 {
		t.Errorf("%d steps failed, want 1 to 8 (those in flight when the connection was cut)", failed)
	}

	p.Heal()
	if r := h.through(server, "apply", "-f", file, "--auto-approve"); r.code != 0 {
		t.Fatalf("re-run through the healed proxy:\n%s", r)
	}
	h.assertNoChanges(content)
	if _, rec := h.state(); rec == nil || len(rec.Managed) != 200 {
		n := 0
		if rec != nil {
			n = len(rec.Managed)
		}
		t.Errorf("the ownership record lists %d objects, want 200", n)
	}
	waitReady(t, ch, "keep", 7)
}

// The AMQP connection of `mqctl dlq replay` is cut by a proxy in the
// middle: every message is in the DLQ or back in its queue (at most one in
// both), and a second replay finishes the job.
func TestDLQReplayCutByProxy(t *testing.T) {
	t.Parallel()
	const n = 150
	ids := make([]string, n)
	for i := range ids {
		ids[i] = fmt.Sprintf("m-%03d", i)
	}
	h, file, ch := dlqHarness(t, ids...)
	tcp, err := faultproxy.NewTCP(net.JoinHostPort(h.b.AMQPHost, strconv.Itoa(h.b.AMQPPort)))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(tcp.Close)
	viaProxy := (&url.URL{Scheme: "amqp", User: url.UserPassword(h.b.Username, h.b.Password), Host: tcp.Addr}).String()

	// About a third of the way: each message moves a basic.get-ok and a
	// publish of some 150 bytes each, the handshake and checks ~2 KB.
	tcp.CutAfterBytes(16 << 10)
	r := runRaw(h.env, "dlq", "replay", "orders.shipping.dlq", "-f", file,
		"--server", h.b.URL, "--username", h.b.Username, "--password", h.b.Password, "--amqp-url", viaProxy)
	noStackTrace(t, r)
	if r.code != 1 || !strings.HasPrefix(lastLine(r.stderr), "mqctl: the replay was interrupted: ") || strings.Contains(r.stderr, h.b.Password+"@") {
		t.Fatalf("replay cut midway:\n%s", r)
	}
	if tcp.Cuts() != 1 {
		t.Fatalf("the proxy cut %d times, want once", tcp.Cuts())
	}
	waitNoReplay(t, h)

	origin := drainIDs(t, ch, "orders.shipping")
	inDLQ := peekIDs(t, h, "orders.shipping.dlq", n+1)
	if len(origin) == 0 || len(inDLQ) == 0 {
		t.Fatalf("the cut was not midway: %d messages back in their queue, %d in the DLQ", len(origin), len(inDLQ))
	}
	dup := partitionIDs(t, ids, origin, inDLQ)
	if dup > 1 {
		t.Errorf("%d messages are in both the DLQ and their queue, want at most 1", dup)
	}

	r = h.run("dlq", "replay", "orders.shipping.dlq", "-f", file)
	if r.code != 0 {
		t.Fatalf("second replay:\n%s", r)
	}
	waitReady(t, ch, "orders.shipping.dlq", 0)
	final := append(origin, drainIDs(t, ch, "orders.shipping")...)
	if twice := partitionIDs(t, ids, final, nil); twice != dup || len(final) != n+dup {
		t.Errorf("after the second replay the queue received %d messages (%d twice), want %d (+%d)", len(final), twice, n, dup)
	}
}

// waitNoReplay waits until the broker has closed the cut replay's
// connection, which puts its unacknowledged message back in the DLQ.
func waitNoReplay(t *testing.T, h *harness) {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for {
		open := 0
		for _, c := range h.b.Connections(t) {
			if name, _ := c.ClientProperties["connection_name"].(string); c.Vhost == h.vhost && strings.Contains(name, "dlq replay") {
				open++
			}
		}
		if open == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the broker still lists the cut replay's connection")
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// peekIDs reads the message ids of queue without removing them.
func peekIDs(t *testing.T, h *harness, queue string, limit int) []string {
	t.Helper()
	r := h.run("dlq", "peek", queue, "--vhost", h.vhost, "--limit", strconv.Itoa(limit), "-o", "json")
	if r.code != 0 {
		t.Fatalf("peek:\n%s", r)
	}
	var ids []string
	for _, l := range strings.Split(r.stdout, "\n") {
		if i := strings.Index(l, `"message_id": "`); i >= 0 {
			rest := l[i+len(`"message_id": "`):]
			ids = append(ids, rest[:strings.Index(rest, `"`)])
		}
	}
	return ids
}

// partitionIDs checks that every id is in origin or dlq (none lost), that
// nothing else is, and returns how many are in both (or twice in origin).
func partitionIDs(t *testing.T, all, origin, dlq []string) int {
	t.Helper()
	inO, inD := map[string]int{}, map[string]int{}
	for _, id := range origin {
		inO[id]++
	}
	for _, id := range dlq {
		inD[id]++
	}
	dup := 0
	for _, id := range all {
		switch o, d := inO[id], inD[id]; {
		case o+d == 0:
			t.Errorf("message %s is lost", id)
		case o+d > 2 || d > 1:
			t.Errorf("message %s is %d times in its queue and %d times in the DLQ", id, o, d)
		case o+d == 2:
			dup++
		}
		delete(inO, id)
		delete(inD, id)
	}
	if len(inO)+len(inD) > 0 {
		t.Errorf("unknown messages: %v %v", inO, inD)
	}
	return dup
}

// Several management endpoints: the dead ones (closed port, or answering
// 500) are skipped; all dead, one line names each, passwords masked.
func TestFailoverCLI(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	file := h.write("topology.yaml", faultSmallFile)
	dead := closedServer(t)
	failing := newProxy(t, h.b.URL)
	failing.Add(faultproxy.Rule{Fault: faultproxy.Status, Status: 503})

	r := h.through([]string{dead + "," + h.b.URL}, "apply", "-f", file, "--auto-approve")
	if r.code != 0 {
		t.Fatalf("apply with the first endpoint down:\n%s", r)
	}
	// The answering endpoint is behind a proxy that only logs, so that the
	// test can tell the client's straying from the broker's own failure:
	// a 5xx from the answering endpoint (a loaded broker, another test's
	// vhost deleted under a listing) rightly sends the next request back
	// to the first endpoint.
	answering := newProxy(t, h.b.URL)
	r = h.through([]string{failing.URL, answering.URL}, "plan", "-f", file, "--detailed-exitcode")
	if r.code != 0 {
		t.Fatalf("plan with the first endpoint answering 503:\n%s", r)
	}
	failed := 0
	for _, e := range answering.Log() {
		if e.Status >= 500 || e.Status == 0 {
			failed++
			t.Logf("the answering endpoint failed: %s", e)
		}
	}
	if l := failing.Log(); len(l) < 1 || len(l) > 1+failed {
		t.Errorf("the failing endpoint was asked %d times, want once, or once more after each failure of the one that answers (%d): the client stays on the one that answers; asked: %v", len(l), failed, l)
	}
	r = runRaw(map[string]string{"VHOST": h.vhost, "MQCTL_SERVER": h.b.URL + ", " + dead},
		"plan", "-f", file, "--username", h.b.Username, "--password", h.b.Password, "--detailed-exitcode")
	if r.code != 0 {
		t.Errorf("plan with MQCTL_SERVER listing two endpoints:\n%s", r)
	}

	const secret = "s3cret-Pw-77"
	dead2 := closedServer(t)
	r = runRaw(map[string]string{"VHOST": h.vhost, "MQCTL_SERVER": strings.Replace(dead, "http://", "http://guest:"+secret+"@", 1) + "," + dead2},
		"plan", "-f", file)
	noStackTrace(t, r)
	if r.code != 1 || strings.Count(r.stderr, "\n") != 1 || strings.Contains(r.stderr, secret) ||
		!strings.HasPrefix(r.stderr, "mqctl: no management API endpoint answered (8 tries in ") ||
		!strings.Contains(r.stderr, dead+": dial: connection refused") || !strings.Contains(r.stderr, dead2+": dial: connection refused") {
		t.Errorf("every endpoint down:\n%s", r)
	}
}

// freePort returns a port that nothing listens on, for a node of a test's
// own. It is taken from privatePorts, between the project's fixed broker
// ports (up to 27,700 with any MQCTL_PORT_OFFSET) and the kernel's range
// for the local ports of outgoing connections: a port from that range
// (what listening on port 0 gives) can be taken by one of the suite's
// thousands of connections in the seconds before the node binds it, and
// the node then stops itself half way through its boot (seen once in CI).
// handedOut keeps two parallel tests from being given the same port.
func freePort(t *testing.T) int {
	t.Helper()
	lo, hi := privatePorts()
	for range 500 {
		p := lo + mrand.IntN(hi-lo+1)
		if _, taken := handedOut.LoadOrStore(p, true); taken {
			continue
		}
		l, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", p))
		if err != nil {
			continue
		}
		l.Close()
		return p
	}
	t.Fatalf("no free port in %d-%d for a private node", lo, hi)
	return 0
}

var handedOut sync.Map

// privatePorts is the range freePort takes ports from: 28000-32767, ending
// below the first port /proc/sys/net/ipv4/ip_local_port_range gives
// outgoing connections on this machine when that is lower.
func privatePorts() (lo, hi int) {
	lo, hi = 28000, 32767
	b, err := os.ReadFile("/proc/sys/net/ipv4/ip_local_port_range")
	if err != nil {
		return lo, hi
	}
	if f := strings.Fields(string(b)); len(f) == 2 {
		if first, err := strconv.Atoi(f[0]); err == nil && first > lo && first <= hi {
			hi = first - 1
		}
	}
	return lo, hi
}

// privateNode is a RabbitMQ node of this test's own, started with
// scripts/broker on free ports with its data in a temporary folder (so
// that stopping it disturbs no other test).
type privateNode struct {
	t      *testing.T
	env    []string
	script string
	mgmt   string
}

func startPrivateNode(t *testing.T, extraEnv ...string) *privateNode {
	t.Helper()
	script, err := filepath.Abs("../../scripts/broker")
	if err != nil {
		t.Fatal(err)
	}
	var name [4]byte
	_, _ = rand.Read(name[:])
	mgmt := freePort(t)
	n := &privateNode{t: t, script: script, mgmt: fmt.Sprintf("http://127.0.0.1:%d", mgmt),
		env: append(os.Environ(),
			"MQCTL_BROKER_DIR="+t.TempDir(),
			fmt.Sprintf("MQCTL_NODENAME=fault-%x@localhost", name),
			fmt.Sprintf("MQCTL_AMQP_PORT=%d", freePort(t)),
			fmt.Sprintf("MQCTL_MGMT_PORT=%d", mgmt),
			fmt.Sprintf("MQCTL_DIST_PORT=%d", freePort(t)),
			fmt.Sprintf("MQCTL_AMQPS_PORT=%d", freePort(t)),
			fmt.Sprintf("MQCTL_MGMTS_PORT=%d", freePort(t)),
			"MQCTL_BROKER_TIMEOUT=90")}
	n.env = append(n.env, extraEnv...)
	t.Cleanup(func() { n.run("stop") })
	n.run("start")
	return n
}

// vhost creates vhost on the node with full permissions for guest, and
// returns a rabbit-hole client of the node and its AMQP port.
func (n *privateNode) vhost(vhost string) (*rabbithole.Client, int) {
	n.t.Helper()
	rh, err := rabbithole.NewClient(n.mgmt, "guest", "guest")
	if err != nil {
		n.t.Fatal(err)
	}
	if _, err := rh.PutVhost(vhost, rabbithole.VhostSettings{}); err != nil {
		n.t.Fatal(err)
	}
	if _, err := rh.UpdatePermissionsIn(vhost, "guest", rabbithole.Permissions{Configure: ".*", Write: ".*", Read: ".*"}); err != nil {
		n.t.Fatal(err)
	}
	amqpPort := 0
	for _, kv := range n.env {
		if v, ok := strings.CutPrefix(kv, "MQCTL_AMQP_PORT="); ok {
			amqpPort, _ = strconv.Atoi(v)
		}
	}
	return rh, amqpPort
}

// applyOnPrivateNode starts a node of the test's own, of the test broker's
// version, with the rabbitmq.conf lines conf, makes its vhost vhost and
// applies body (a file whose vhost is ${VHOST}) to it with
// --auto-approve. It returns what mqctl did and a rabbit-hole client of
// the node.
func applyOnPrivateNode(t *testing.T, conf, vhost, body string) (result, *rabbithole.Client) {
	t.Helper()
	file := filepath.Join(t.TempDir(), "topology.yaml")
	if err := os.WriteFile(file, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	node := startPrivateNode(t, "MQCTL_BROKER_CONF="+conf)
	rh, amqpPort := node.vhost(vhost)
	private := &testbroker.Broker{URL: node.mgmt, Username: "guest", Password: "guest", AMQPHost: "127.0.0.1", AMQPPort: amqpPort}
	return runMqctl(private, map[string]string{"VHOST": vhost}, "apply", "-f", file, "--auto-approve"), rh
}

func (n *privateNode) run(cmd string) {
	n.t.Helper()
	c := exec.Command(n.script, cmd)
	c.Env = n.env
	if out, err := c.CombinedOutput(); err != nil {
		n.t.Fatalf("scripts/broker %s: %v\n%s", cmd, err, out)
	}
}

// syncBuffer is a bytes.Buffer safe for one writer and concurrent readers.
type syncBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// The broker is stopped in the middle of an apply: apply reports what was
// done, what failed and what was left, exits 1 with one line saying the
// management API could not be reached; once the broker is back a re-run
// converges and the messages of a queue the file does not name are there.
//
// It starts, stops and restarts a node of its own (about 40 s), so it runs
// only with MQCTL_BROKER_FAULTS=1: make faults.
func TestBrokerStoppedMidApply(t *testing.T) {
	t.Parallel()
	if os.Getenv("MQCTL_BROKER_FAULTS") != "1" {
		t.Skip("starts and stops a RabbitMQ node of its own (about 40 s): run it with make faults (MQCTL_BROKER_FAULTS=1)")
	}
	node := startPrivateNode(t)
	const vhost = "faults"
	env := map[string]string{"VHOST": vhost, "HOME": t.TempDir()}
	conn := []string{"--server", node.mgmt, "--username", "guest", "--password", "guest"}
	_, amqpPort := node.vhost(vhost)
	keepURL := fmt.Sprintf("amqp://guest:guest@127.0.0.1:%d/%s", amqpPort, vhost)
	publishKeep := func() {
		c, err := amqp.Dial(keepURL)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		ch, err := c.Channel()
		if err != nil {
			t.Fatal(err)
		}
		if _, err := ch.QueueDeclare("keep", true, false, false, false, nil); err != nil {
			t.Fatal(err)
		}
		for i := range 7 {
			if err := ch.PublishWithContext(context.Background(), "", "keep", false, false,
				amqp.Publishing{DeliveryMode: amqp.Persistent, MessageId: strconv.Itoa(i), Body: []byte("keep")}); err != nil {
				t.Fatal(err)
			}
		}
		waitReady(t, ch, "keep", 7)
	}
	publishKeep()

	dir := t.TempDir()
	content := bigFile(665) // 2,000 objects
	file := filepath.Join(dir, "big.yaml")
	if err := os.WriteFile(file, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	var stdout, stderr syncBuffer
	e := cli.Env{Stdin: strings.NewReader(""), Stdout: &stdout, Stderr: &stderr,
		LookupEnv: func(k string) (string, bool) { v, ok := env[k]; return v, ok }}
	codec := make(chan int, 1)
	go func() {
		codec <- cli.Main(context.Background(), append([]string{"apply", "-f", file, "--auto-approve", "--parallelism", "2"}, conn...), e)
	}()
	deadline := time.Now().Add(2 * time.Minute)
	for strings.Count(stdout.String(), "\n  done: ") < 100 {
		if time.Now().After(deadline) {
			t.Fatalf("apply did not get through 100 steps:\n%s\n%s", stdout.String(), stderr.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
	node.run("stop")
	code := <-codec
	r := result{args: []string{"apply"}, stdout: stdout.String(), stderr: stderr.String(), code: code}
	noStackTrace(t, r)
	if code != 1 || !strings.Contains(r.stdout, "\nApply did not finish.\n") || !strings.Contains(r.stdout, "\nNot done (") {
		t.Fatalf("apply while the broker stops:\n%s", lastLines(r.String(), 40))
	}
	if strings.Count(r.stderr, "\n") != 1 || !strings.Contains(r.stderr, "the management API could not be reached after ") {
		t.Errorf("stderr is not one line saying the management API could not be reached:\n%s", r.stderr)
	}
	var failures []string
	for _, l := range strings.Split(r.stdout, "\n") {
		if strings.HasPrefix(l, "  failed: ") {
			failures = append(failures, l)
		}
	}
	t.Logf("apply stopped with the broker:\n%s\n%s", strings.Join(failures, "\n"), r.stderr)

	node.run("start")
	r = runRaw(env, append([]string{"apply", "-f", file, "--auto-approve", "--quiet"}, conn...)...)
	if r.code != 0 {
		t.Fatalf("re-run after the broker came back:\n%s", lastLines(r.String(), 30))
	}
	if r := runRaw(env, append([]string{"plan", "-f", file, "--detailed-exitcode"}, conn...)...); r.code != 0 {
		t.Errorf("second plan:\n%s", lastLines(r.String(), 30))
	}
	c, err := amqp.Dial(keepURL)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ch, err := c.Channel()
	if err != nil {
		t.Fatal(err)
	}
	waitReady(t, ch, "keep", 7)
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
