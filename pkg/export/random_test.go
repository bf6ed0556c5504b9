package export

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/mqctl/mqctl/pkg/loader"
	"github.com/mqctl/mqctl/pkg/topology"
)

// randomTopology builds a vhost from small name pools, so that queues,
// exchanges and bindings collide into DLQ pairs, delay tiers and near
// misses of both.
func randomTopology(r *rand.Rand) *topology.Topology {
	pick := func(xs ...string) string { return xs[r.IntN(len(xs))] }
	queueNames := []string{"a", "b", "c", "a.dlq", "b.dlq", "a.retry.10s", "a.retry.1m", "a.retry.1500ms", "b.retry.10s", "a.retry.10s.retry.1m", "parking"}
	exchangeNames := []string{"x", "dlx", "t", "f", "h"}
	keys := append([]string{"", "#", "*", "a.*", "k", "dead"}, queueNames...)
	ttls := []int64{1500, 10000, 60000, 0, 90000}

	top := topology.New()
	v := top.Vhost(pick("/", "v"))
	v.DefaultQueueType = pick("", "", "classic", "quorum")
	for _, name := range exchangeNames {
		if r.IntN(4) == 0 {
			continue
		}
		x := &topology.Exchange{Name: name, Type: pick("direct", "topic", "fanout", "headers", "x-delayed-message"), Durable: r.IntN(8) > 0, AutoDelete: r.IntN(8) == 0, Internal: r.IntN(8) == 0}
		if r.IntN(5) == 0 {
			x.Arguments = topology.Args{"alternate-exchange": pick(exchangeNames...)}
		}
		v.Exchanges[name] = x
	}
	for _, name := range queueNames {
		if r.IntN(5) == 0 {
			continue
		}
		q := &topology.Queue{Name: name, Type: pick("classic", "classic", "quorum", "stream"), Durable: r.IntN(6) > 0, AutoDelete: r.IntN(10) == 0}
		args := topology.Args{}
		if r.IntN(2) == 0 {
			args["x-dead-letter-exchange"] = pick(append(exchangeNames, "")...)
		}
		if r.IntN(2) == 0 && args.Has("x-dead-letter-exchange") { // RabbitMQ refuses a routing key without an exchange
			args["x-dead-letter-routing-key"] = pick(keys...)
		}
		if r.IntN(3) == 0 {
			args["x-message-ttl"] = ttls[r.IntN(len(ttls))]
		}
		for _, extra := range []struct {
			key    string
			values []any
		}{
			{"x-max-length", []any{int64(10), int64(-1), "10"}},
			{"x-max-length-bytes", []any{int64(1 << 20), int64(1000), int64(7)}},
			{"x-overflow", []any{"drop-head", "reject-publish-dlx", "bogus"}},
			{"x-expires", []any{int64(0), int64(60000)}},
			{"x-max-priority", []any{int64(5), int64(300)}},
			{"x-single-active-consumer", []any{true, "true"}},
			{"x-delivery-limit", []any{int64(3), int64(-1)}},
			{"x-dead-letter-strategy", []any{"at-least-once", "sometimes"}},
			{"x-queue-mode", []any{"lazy"}},
		} {
			if r.IntN(12) == 0 {
				args[extra.key] = extra.values[r.IntN(len(extra.values))]
			}
		}
		q.Arguments = args.Normalized()
		v.Queues[name] = q
	}
	// Exact delay tiers, sometimes.
	for _, origin := range []string{"a", "b"} {
		o := v.Queues[origin]
		if o == nil || r.IntN(2) == 0 {
			continue
		}
		for _, d := range []int64{10000, 60000} {
			name := origin + ".retry." + loader.FormatDuration(d)
			v.Queues[name] = &topology.Queue{Name: name, Type: o.Type, Durable: o.Durable,
				Arguments: topology.Args{"x-message-ttl": d, "x-dead-letter-exchange": "", "x-dead-letter-routing-key": origin}}
		}
	}
	seen := map[string]bool{}
	// A dead-letter queue pair, sometimes, with random near misses around it.
	if c, parking := v.Queues["c"], v.Queues["parking"]; c != nil && parking != nil && r.IntN(2) == 0 {
		x := pick(exchangeNames...)
		if v.Exchanges[x] == nil {
			v.Exchanges[x] = &topology.Exchange{Name: x, Type: pick("direct", "topic", "fanout"), Durable: true}
		}
		key := pick("c", "dead")
		c.Arguments = topology.Args{"x-dead-letter-exchange": x, "x-dead-letter-routing-key": key}
		if r.IntN(3) == 0 {
			c.Arguments["x-dead-letter-strategy"] = pick("at-least-once", "at-most-once")
		}
		b := &topology.Binding{Source: x, Destination: "parking", DestinationType: topology.DestQueue, RoutingKey: key}
		seen[b.Key()] = true
		v.Bindings = append(v.Bindings, b)
	}
	for i := r.IntN(10); i > 0; i-- {
		b := &topology.Binding{Source: pick(append(exchangeNames, "amq.direct", "ghost")...), RoutingKey: pick(keys...)}
		if r.IntN(4) == 0 {
			b.DestinationType, b.Destination = topology.DestExchange, pick(exchangeNames...)
		} else {
			b.DestinationType, b.Destination = topology.DestQueue, pick(append(queueNames, "ghost")...)
		}
		if r.IntN(6) == 0 {
			b.Arguments = topology.Args{"x-match": pick("all", "any"), "k": pick("v", "w")}
		}
		if !seen[b.Key()] {
			seen[b.Key()] = true
			v.Bindings = append(v.Bindings, b)
		}
	}
	if r.IntN(3) == 0 {
		v.Policies["p"] = &topology.Policy{Name: "p", Pattern: pick("^a", ".*$"), ApplyTo: pick("all", "queues"), Priority: r.IntN(3), Definition: topology.Args{"max-length": int64(5)}}
	}
	return top
}

// TestRandomRoundTrip exports many generated vhosts, with and without
// sugar, and loads each export back.
func TestRandomRoundTrip(t *testing.T) {
	t.Parallel()
	for seed := uint64(1); seed <= 1000; seed++ {
		top := randomTopology(rand.New(rand.NewPCG(seed, 42)))
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			assertRoundTrip(t, top)
		})
		if t.Failed() {
			break
		}
	}
}
