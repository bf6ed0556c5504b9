package cli_test

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/mqctl/mqctl/internal/testbroker"
)

// throwawayRE finds the throwaway vhost mqctl test --live names on stderr.
var throwawayRE = regexp.MustCompile(`throwaway vhost "(mqctl-test-[0-9a-f]+)"`)

// checkThrowaway checks that the run named its throwaway vhost, created
// and deleted it, and that the vhost is gone.
func checkThrowaway(t *testing.T, b *testbroker.Broker, r result) {
	t.Helper()
	m := throwawayRE.FindStringSubmatch(r.stderr)
	if m == nil || !strings.Contains(r.stderr, "mqctl: deleted the throwaway vhost") {
		t.Fatalf("stderr does not report the throwaway vhost and its deletion:\n%s", r)
	}
	vhosts, err := b.RH.ListVhosts()
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range vhosts {
		if v.Name == m[1] {
			t.Errorf("throwaway vhost %s is still on the broker", m[1])
		}
	}
}

// TestTestLiveExampleOrders: the tests of examples/orders pass with real
// messages, through the command line.
func TestTestLiveExampleOrders(t *testing.T) {
	t.Parallel()
	b := testbroker.New(t)
	r := runMqctl(b, nil, "test", "--live", "-f", filepath.Join("..", "..", "examples", "orders"))
	if r.code != 0 || !strings.HasSuffix(r.stdout, "9 passed, 0 failed\n") || strings.Contains(r.stdout, "FAIL") {
		t.Fatalf("want every test to pass:\n%s", r)
	}
	checkThrowaway(t, b, r)
}

// TestTestLiveBrokenFile: a file whose delay tier sends messages back
// to the wrong queue, and whose DLQ is bound to the wrong key, fails on
// the broker with messages that say where the messages went.
func TestTestLiveBrokenFile(t *testing.T) {
	t.Parallel()
	b := testbroker.New(t)
	path := filepath.Join(t.TempDir(), "broken.yaml")
	broken := `version: 1
vhosts:
  /:
    exchanges:
      orders: { type: topic }
      orders.dlx: { type: topic }
    queues:
      shipping:
        bindings: [{ exchange: orders, routing_key: order.created }]
        dead_letter: { exchange: orders.dlx, queue: shipping.dlq }
      shipping.retry.10s:
        limits: { message_ttl: 10s }
        dead_letter: { exchange: "", routing_key: shiping }
      audit:
        bindings: [{ exchange: orders.dlx, routing_key: "#" }]
tests:
  - name: rejected shipping messages land in the DLQ only
    publish: { exchange: orders, routing_key: order.created }
    reject: shipping
    expect: { queues: [shipping.dlq] }
  - name: the 10s retry comes back
    expire: shipping.retry.10s
    expect: { queues: [shipping] }
`
	if err := os.WriteFile(path, []byte(broken), 0o644); err != nil {
		t.Fatal(err)
	}
	r := runMqctl(b, nil, "test", "--live", "-f", path)
	if r.code != 1 {
		t.Fatalf("want exit 1:\n%s", r)
	}
	for _, want := range []string{
		"FAIL rejected shipping messages land in the DLQ only: expected [shipping.dlq], got [audit shipping.dlq] on the broker, as the simulator predicts",
		"FAIL the 10s retry comes back: expected [shipping], got [] on the broker, as the simulator predicts",
		`shipping.retry.10s expired: dead-lettered to (default exchange) with key "shiping", which routes it nowhere`,
		"0 passed, 2 failed\n",
	} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("stdout lacks %q:\n%s", want, r)
		}
	}
	checkThrowaway(t, b, r)
}
