package cli_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/mqctl/mqctl/internal/brokerstate"
	"github.com/mqctl/mqctl/internal/testbroker"
	"github.com/mqctl/mqctl/pkg/broker"
	"github.com/mqctl/mqctl/pkg/cli"
	"github.com/mqctl/mqctl/pkg/loader"
	"github.com/mqctl/mqctl/pkg/ownership"
	"github.com/mqctl/mqctl/pkg/topology"
)

// The tests in the *_integration_test.go files drive the real mqctl
// command line (cli.Main) against the broker of scripts/broker, each in
// vhosts of its own. Topology files name their vhost ${VHOST}; the
// command's environment resolves it to the test's vhost.

// harness runs mqctl against one test vhost.
type harness struct {
	t     testing.TB
	b     *testbroker.Broker
	c     *broker.Client
	vhost string
	dir   string
	env   map[string]string
}

// newHarness returns a harness on a fresh vhost that exists before mqctl
// runs (so mqctl never adopts or deletes it).
func newHarness(t testing.TB) *harness {
	t.Helper()
	b := testbroker.New(t)
	h := &harness{t: t, b: b, c: connectBroker(t, b), dir: t.TempDir()}
	h.vhost = b.Vhost(t)
	h.env = map[string]string{"VHOST": h.vhost}
	return h
}

// freshVhostName returns a vhost name no broker object has yet; the vhost
// is deleted (if mqctl created it) when the test ends.
func freshVhostName(t testing.TB, b *testbroker.Broker) string {
	t.Helper()
	name := testbroker.Name(t, "mqctl-test")
	t.Cleanup(func() {
		// 1,000 quorum queues in the corpus: see testbroker's DeleteVhost.
		if err := b.DeleteVhost(name); err != nil {
			t.Errorf("delete test vhost %s: %v", name, err)
		}
	})
	return name
}

func connectBroker(t testing.TB, b *testbroker.Broker) *broker.Client {
	t.Helper()
	c, err := broker.Connect(context.Background(), broker.Config{Server: b.URL, Username: b.Username, Password: b.Password})
	if err != nil {
		t.Fatalf("connect to the test broker: %v", err)
	}
	return c
}

// amqpURL is the AMQP URL (no vhost) of the test broker.
func amqpURL(b *testbroker.Broker) string {
	u := url.URL{Scheme: "amqp", User: url.UserPassword(b.Username, b.Password), Host: fmt.Sprintf("%s:%d", b.AMQPHost, b.AMQPPort)}
	return u.String()
}

// result is what one mqctl run printed and returned.
type result struct {
	args           []string
	stdout, stderr string
	code           int
}

func (r result) String() string {
	return fmt.Sprintf("mqctl %s: exit %d\n--- stdout:\n%s--- stderr:\n%s", strings.Join(r.args, " "), r.code, r.stdout, r.stderr)
}

// run runs mqctl with args (connection flags added) in the harness's
// environment.
func (h *harness) run(args ...string) result {
	h.t.Helper()
	return runMqctl(h.b, h.env, args...)
}

func runMqctl(b *testbroker.Broker, env map[string]string, args ...string) result {
	var stdout, stderr bytes.Buffer
	full := append(append([]string{}, args...),
		"--server", b.URL, "--username", b.Username, "--password", b.Password, "--amqp-url", amqpURL(b))
	e := cli.Env{
		Stdin: strings.NewReader(""), Stdout: &stdout, Stderr: &stderr,
		LookupEnv: func(k string) (string, bool) { v, ok := env[k]; return v, ok },
	}
	code := cli.Main(context.Background(), full, e)
	return result{args: args, stdout: stdout.String(), stderr: stderr.String(), code: code}
}

// write saves a topology file into the harness's directory.
func (h *harness) write(name, content string) string {
	h.t.Helper()
	p := filepath.Join(h.dir, name)
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		h.t.Fatal(err)
	}
	return p
}

// mustApply applies file content (with extra flags) and fails the test
// unless it succeeds.
func (h *harness) mustApply(content string, flags ...string) result {
	h.t.Helper()
	f := h.write("apply.yaml", content)
	r := h.run(append([]string{"apply", "-f", f, "--auto-approve"}, flags...)...)
	if r.code != 0 {
		h.t.Fatalf("apply failed:\n%s", r)
	}
	return r
}

// assertNoChanges checks that `plan --detailed-exitcode` exits 0.
func (h *harness) assertNoChanges(content string) {
	h.t.Helper()
	f := h.write("again.yaml", content)
	if r := h.run("plan", "-f", f, "--detailed-exitcode"); r.code != 0 {
		h.t.Errorf("a second plan is not empty:\n%s", r)
	}
}

// load expands file content as the loader does (with ${VHOST} set).
func (h *harness) load(content string) *topology.Topology {
	h.t.Helper()
	t, err := loader.LoadBytes("file.yaml", []byte(content), loader.Options{LookupEnv: func(k string) (string, bool) { v, ok := h.env[k]; return v, ok }})
	if err != nil {
		h.t.Fatalf("load: %v", err)
	}
	return t
}

// state reads the test vhost from the broker without mqctl's ownership
// record (returned separately).
func (h *harness) state() (*topology.Vhost, *ownership.Record) {
	h.t.Helper()
	return readVhostState(h.t, h.c, h.vhost)
}

func readVhostState(t testing.TB, c *broker.Client, vhost string) (*topology.Vhost, *ownership.Record) {
	t.Helper()
	v, rec, err := brokerstate.Read(context.Background(), c, vhost)
	if err != nil {
		t.Fatal(err)
	}
	return v, rec
}

// depth returns the number of ready messages in queue (passive declare:
// exact, no statistics delay).
func depth(t testing.TB, b *testbroker.Broker, vhost, queue string) int {
	t.Helper()
	conn, err := amqp.Dial(b.AMQPURL(vhost))
	if err != nil {
		t.Fatalf("AMQP dial: %v", broker.MaskURL(err.Error()))
	}
	defer conn.Close()
	ch, err := conn.Channel()
	if err != nil {
		t.Fatal(err)
	}
	q, err := ch.QueueDeclarePassive(queue, false, false, false, false, nil)
	if err != nil {
		var ae *amqp.Error
		if errors.As(err, &ae) && ae.Code == amqp.NotFound {
			return -1
		}
		t.Fatalf("inspect queue %q: %v", queue, err)
	}
	return q.Messages
}

// definitionsOf reads GET /api/definitions/{vhost}: the broker's own
// export, numbers kept exact.
func definitionsOf(t testing.TB, b *testbroker.Broker, vhost string) map[string]any {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(b.GetAPI(t, "definitions/"+url.PathEscape(vhost))))
	dec.UseNumber()
	var doc map[string]any
	if err := dec.Decode(&doc); err != nil {
		t.Fatalf("GET definitions of %q: %v", vhost, err)
	}
	return doc
}

// channel is an AMQP channel into the harness's vhost, as the broker's
// administrator, closed with the test.
func (h *harness) channel(t testing.TB) *amqp.Channel {
	t.Helper()
	conn, err := amqp.Dial(h.b.AMQPURL(h.vhost))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	ch, err := conn.Channel()
	if err != nil {
		t.Fatal(err)
	}
	return ch
}
