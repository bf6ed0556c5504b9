package testbroker

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	crand "crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mqctl/mqctl/pkg/broker"
	"github.com/mqctl/mqctl/pkg/kind"
	"github.com/mqctl/mqctl/pkg/topology"
)

// Declare writes every object of v into vhost straight through the
// management API's write primitives: exchanges, queues, bindings,
// policies, operator policies. mqctl does not record them as managed.
func Declare(t testing.TB, c *broker.Client, vhost string, v *topology.Vhost) {
	t.Helper()
	if err := DeclareAll(context.Background(), c, vhost, v); err != nil {
		t.Fatal(err)
	}
}

// DeclareAll is Declare without a testing.TB: it stops at the first
// object the broker refuses.
func DeclareAll(ctx context.Context, c *broker.Client, vhost string, v *topology.Vhost) error {
	for _, n := range v.ExchangeNames() {
		if err := c.DeclareExchange(ctx, vhost, v.Exchanges[n]); err != nil {
			return err
		}
	}
	for _, n := range v.QueueNames() {
		if err := c.DeclareQueue(ctx, vhost, v.Queues[n]); err != nil {
			return err
		}
	}
	for _, b := range v.Bindings {
		if err := c.DeclareBinding(ctx, vhost, b); err != nil {
			return err
		}
	}
	for _, k := range kind.PolicyKinds() {
		for _, p := range v.PoliciesOf(k) {
			if err := c.PutPolicy(ctx, k, vhost, p); err != nil {
				return err
			}
		}
	}
	return nil
}

// WriteOtherCA writes a CA certificate that signed nothing the broker has,
// for tests of a wrong --ca-cert, and returns its path.
func WriteOtherCA(t testing.TB) string {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), crand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "some other CA"},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(time.Hour),
		IsCA:                  true,
		BasicConstraintsValid: true,
		KeyUsage:              x509.KeyUsageCertSign,
	}
	der, err := x509.CreateCertificate(crand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(t.TempDir(), "other-ca.pem")
	if err := os.WriteFile(p, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// ThrowawayHolding returns the name of the throwaway vhost (an apply's
// preflight's, broker.IsThrowaway) that holds a queue whose x-max-length
// is maxLength, or "": a test gives its queues lengths of its own to find
// its apply's vhost among those of the tests that run beside it.
func ThrowawayHolding(c *broker.Client, maxLength int64) string {
	ctx := context.Background()
	vs, err := c.ThrowawayVhosts(ctx)
	if err != nil {
		return ""
	}
	for _, v := range vs {
		var qs []struct {
			Arguments map[string]any `json:"arguments"`
		}
		if err := c.GetJSON(ctx, &qs, "list queues", v.Name, "queues", v.Name); err != nil {
			continue
		}
		for _, q := range qs {
			if fmt.Sprint(q.Arguments["x-max-length"]) == fmt.Sprint(maxLength) {
				return v.Name
			}
		}
	}
	return ""
}

// BreakQuorumQueue leaves quorum queue q of vhost without a running Raft
// server, as RabbitMQ leaves one whose servers stop for good or whose
// declaration was cut off: with keepLog its server is stopped
// (ra:stop_server: its log, and what it held, stay on disk, and
// rabbit_quorum_queue:restart_server starts it again), else deleted
// (ra:force_delete_server: no server and no log, as a declaration cut off
// before the servers' start leaves it). The broker still lists the queue.
func (b *Broker) BreakQuorumQueue(t testing.TB, vhost, q string, keepLog bool) {
	t.Helper()
	call := "ra:force_delete_server(quorum_queues, amqqueue:get_pid(Q))"
	if keepLog {
		call = "rabbit_quorum_queue:stop_server(amqqueue:get_pid(Q))"
	}
	esc := strings.NewReplacer(`\`, `\\`, `"`, `\"`)
	expr := fmt.Sprintf(`{ok,Q}=rabbit_amqqueue:lookup(rabbit_misc:r(<<"%s"/utf8>>,queue,<<"%s"/utf8>>)), %s.`, esc.Replace(vhost), esc.Replace(q), call)
	if err := b.Ctl("eval", expr); err != nil {
		t.Fatalf("stop the Raft server of quorum queue %q in vhost %q: %v", q, vhost, err)
	}
}

// RestartQuorumQueueAnew deletes the Raft server of quorum queue q of
// vhost and starts a new one the way a node's recovery does
// (rabbit_quorum_queue:recover/2: ra:force_delete_server, then
// rabbit_quorum_queue:recover starts a server from scratch and triggers
// an election). RabbitMQ 4.3.6 elects it leader; 4.0.5 and 3.10.8 leave
// it a follower at term 0, no leader ever elected, as a declaration cut
// off between its servers' start and their election leaves one.
func (b *Broker) RestartQuorumQueueAnew(t testing.TB, vhost, q string) {
	t.Helper()
	esc := strings.NewReplacer(`\`, `\\`, `"`, `\"`)
	v, n := esc.Replace(vhost), esc.Replace(q)
	expr := fmt.Sprintf(`{ok,Q}=rabbit_amqqueue:lookup(rabbit_misc:r(<<"%s"/utf8>>,queue,<<"%s"/utf8>>)), ra:force_delete_server(quorum_queues, amqqueue:get_pid(Q)), rabbit_quorum_queue:recover(<<"%s"/utf8>>, [Q]), ok.`, v, n, v)
	if err := b.Ctl("eval", expr); err != nil {
		t.Fatalf("start anew the Raft server of quorum queue %q in vhost %q: %v", q, vhost, err)
	}
}

// DeclareCutQuorumQueue declares quorum queue q of vhost and deletes its
// Raft server in one rabbitmqctl eval, well before the server's first tick
// (5 s): a queue with no Raft server nor log that never reported
// statistics, as a declaration cut off between the queue's record and its
// servers' start leaves it (an apply killed mid-way).
func (b *Broker) DeclareCutQuorumQueue(t testing.TB, vhost, q string) {
	t.Helper()
	esc := strings.NewReplacer(`\`, `\\`, `"`, `\"`)
	expr := fmt.Sprintf(`QN=rabbit_misc:r(<<"%s"/utf8>>,queue,<<"%s"/utf8>>), {new,_}=rabbit_amqqueue:declare(QN,true,false,[{<<"x-queue-type">>,longstr,<<"quorum">>}],none,<<"mqctl-test">>), {ok,Q}=rabbit_amqqueue:lookup(QN), ra:force_delete_server(quorum_queues, amqqueue:get_pid(Q)).`,
		esc.Replace(vhost), esc.Replace(q))
	if err := b.Ctl("eval", expr); err != nil {
		t.Fatalf("declare quorum queue %q in vhost %q without its Raft server: %v", q, vhost, err)
	}
}
