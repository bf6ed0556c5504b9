package difftest

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/mqctl/mqctl/internal/testbroker"
	"github.com/mqctl/mqctl/pkg/broker"
	"github.com/mqctl/mqctl/pkg/export"
	"github.com/mqctl/mqctl/pkg/rmqversion"
	"github.com/mqctl/mqctl/pkg/topology"
)

// The CI run: 60 topologies × 40 messages. `make difftest SEEDS=… MESSAGES=…`
// runs a longer one.
var (
	flagSeeds    = flag.Int("seeds", 60, "number of random topologies (seeds seed, seed+1, …)")
	flagMessages = flag.Int("messages", 40, "messages published through each topology")
	flagSeed     = flag.Uint64("seed", 1, "seed of the first topology")
	flagParallel = flag.Int("topologies-in-parallel", 4, "topologies run at the same time, each in its own vhost")
)

// TestDifferential generates random topologies, applies each to a fresh
// vhost of the real broker, publishes random messages, rejects some of the
// copies and lets TTLs expire others, and fails on every message whose
// fate the broker and the simulator disagree on.
func TestDifferential(t *testing.T) {
	t.Parallel()
	b, client, ver := connect(t)
	start := time.Now()
	var (
		mu    sync.Mutex
		total Stats
	)
	sem := make(chan struct{}, max(1, *flagParallel))
	t.Run("topologies", func(t *testing.T) {
		for i := range *flagSeeds {
			seed := *flagSeed + uint64(i)
			t.Run(fmt.Sprintf("seed=%d", seed), func(t *testing.T) {
				t.Parallel()
				sem <- struct{}{}
				defer func() { <-sem }()
				st := runSeed(t, b, client, ver, seed)
				mu.Lock()
				total.Add(st)
				mu.Unlock()
			})
		}
	})
	t.Logf("RabbitMQ %s: %d topologies, %d messages (%d refused, %d returned as unroutable), %d copies compared (dead letters: %d rejected, %d expired, %d maxlen), %d copies rejected (%d left alone: they would loop for ever), %d disagreements, in %s",
		ver, total.Topologies, total.Messages, total.Refused, total.Returned, total.Copies,
		total.DeadLetters["rejected"], total.DeadLetters["expired"], total.DeadLetters["maxlen"],
		total.Rejected, total.Looping, total.Disagreements, time.Since(start).Round(time.Millisecond))
}

func runSeed(t *testing.T, b *testbroker.Broker, client *broker.Client, ver rmqversion.Version, seed uint64) Stats {
	ctx := context.Background()
	vh := b.Vhost(t)
	cs := Generate(seed, vh, *flagMessages)
	conn, err := amqp.Dial(b.AMQPURL(vh))
	if err != nil {
		t.Fatalf("seed %d: AMQP connection: %v", seed, err)
	}
	defer conn.Close()
	if err := Apply(ctx, client, conn, cs); err != nil {
		t.Fatalf("seed %d: %v\n%s", seed, err, caseYAML(t, cs))
	}
	res, err := Run(ctx, conn, cs, Options{Version: ver})
	if err != nil {
		t.Fatalf("seed %d: %v\n%s", seed, err, caseYAML(t, cs))
	}
	if len(res.Disagreements) > 0 {
		var sb strings.Builder
		fmt.Fprintf(&sb, "seed %d: %d disagreements between the broker (RabbitMQ %s) and the simulator (rerun: go test -run TestDifferential ./internal/difftest/ -args -seed %d -seeds 1 -messages %d)\n",
			seed, len(res.Disagreements), ver, seed, *flagMessages)
		for _, d := range res.Disagreements {
			fmt.Fprintf(&sb, "\n%s — %s\n  simulator:\n", d.Stage, d.Message)
			for _, s := range d.Simulator {
				fmt.Fprintf(&sb, "    %s\n", s)
			}
			sb.WriteString("  broker:\n")
			for _, s := range d.Broker {
				fmt.Fprintf(&sb, "    %s\n", s)
			}
		}
		sb.WriteString("\ntopology:\n")
		sb.WriteString(caseYAML(t, cs))
		t.Error(sb.String())
	}
	return res.Stats
}

// caseYAML renders the case's topology as an mqctl file, its vhost named
// "difftest" so that reruns print the same text.
func caseYAML(t *testing.T, cs *Case) string {
	v := *cs.Vhost
	v.Name = "difftest"
	top := topology.New()
	top.Vhosts[v.Name] = &v
	var buf bytes.Buffer
	if err := export.WriteYAML(&buf, top, export.Options{}); err != nil {
		t.Errorf("render topology: %v", err)
	}
	return buf.String()
}
