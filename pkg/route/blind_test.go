package route_test

import (
	"encoding/json"
	"maps"
	"slices"
	"testing"

	"github.com/mqctl/mqctl/internal/randtopo"
	"github.com/mqctl/mqctl/pkg/rmqversion"
	"github.com/mqctl/mqctl/pkg/route"
	"github.com/mqctl/mqctl/pkg/topology"
)

// TestBlindExchanges checks which exchanges route every message alike:
// those whose result the simulator computes once.
func TestBlindExchanges(t *testing.T) {
	v := topology.NewVhost("/")
	ex := func(name, typ string, args topology.Args) {
		v.Exchanges[name] = &topology.Exchange{Name: name, Type: typ, Durable: true, Arguments: args}
	}
	bind := func(src, dst, dstType, key string, args topology.Args) {
		v.Bindings = append(v.Bindings, &topology.Binding{Source: src, Destination: dst, DestinationType: dstType, RoutingKey: key, Arguments: args})
	}
	v.Queues["q"] = &topology.Queue{Name: "q", Type: topology.QueueClassic, Durable: true}
	ex("fan", "fanout", nil)
	bind("fan", "q", topology.DestQueue, "", nil)
	ex("hash", "topic", nil) // every binding "#"
	bind("hash", "q", topology.DestQueue, "#", nil)
	ex("star", "topic", nil)
	bind("star", "q", topology.DestQueue, "a.*", nil)
	ex("hdr", "headers", nil) // no criteria: x- arguments are not criteria in all
	bind("hdr", "q", topology.DestQueue, "", topology.Args{"x-match": "all", "x-note": "n"})
	ex("hdrx", "headers", nil) // all-with-x: x-note is a criterion
	bind("hdrx", "q", topology.DestQueue, "", topology.Args{"x-match": "all-with-x", "x-note": "n"})
	ex("hdrc", "headers", nil)
	bind("hdrc", "q", topology.DestQueue, "", topology.Args{"kind": "a"})
	ex("fan2direct", "fanout", nil) // leads to one that reads the key
	ex("direct", "direct", nil)
	bind("direct", "q", topology.DestQueue, "k", nil)
	bind("fan2direct", "direct", topology.DestExchange, "", nil)
	ex("fan2fan", "fanout", nil)
	bind("fan2fan", "fan", topology.DestExchange, "", nil)
	ex("empty", "direct", nil) // no binding: nothing to pick
	ex("withAE", "direct", topology.Args{"alternate-exchange": "fan"})
	ex("emptyAE", "direct", topology.Args{"alternate-exchange": "fan"}) // no binding, a blind AE
	bind("withAE", "q", topology.DestQueue, "k", nil)
	ex("loopA", "fanout", nil) // a cycle of blind exchanges
	ex("loopB", "fanout", nil)
	bind("loopA", "loopB", topology.DestExchange, "", nil)
	bind("loopB", "loopA", topology.DestExchange, "", nil)
	bind("loopB", "q", topology.DestQueue, "", nil)
	ex("modulus", "x-modulus-hash", nil)

	got := route.Blind(route.NewWith(v, route.Options{Version: rmqversion.Default}))
	for name, want := range map[string]bool{
		"fan": true, "hash": true, "star": false, "hdr": true, "hdrx": false, "hdrc": false,
		"fan2direct": false, "direct": false, "fan2fan": true, "empty": true, "withAE": false,
		"emptyAE": true, "loopA": true, "loopB": true, "modulus": false, "amq.fanout": true, "amq.topic": true,
	} {
		if got[name] != want {
			t.Errorf("exchange %q blind = %v, want %v", name, got[name], want)
		}
	}
}

// TestSharedRoutesAreExact routes the messages of random topologies, with
// every reason and dead letter they lead to (Trace), once with the shared
// results of message-blind exchanges and once without: the results must
// be the same, whatever message filled the shared result first.
func TestSharedRoutesAreExact(t *testing.T) {
	shared := 0
	for seed := uint64(1); seed <= 200; seed++ {
		c := randtopo.Generate(seed, "/", 20)
		for _, ver := range []rmqversion.Version{rmqversion.Default, rmqversion.MustParse("3.10")} {
			s := route.NewWith(c.Vhost, route.Options{Version: ver})
			plain := route.Unshared(s)
			// Reversed order in one of the two runs: the first message
			// that fills a shared result differs.
			msgs := slices.Clone(c.Messages)
			if seed%2 == 0 {
				slices.Reverse(msgs)
			}
			for _, m := range msgs {
				m.Message.Expiration = m.Expiration
				got, want := trace(t, s, m.Message), trace(t, plain, m.Message)
				if got != want {
					t.Fatalf("seed %d, RabbitMQ %s, %s:\nwith shared routes %s\nwithout %s", seed, ver, m, got, want)
				}
			}
			// Every queue's dead letters, from a message of no particular key.
			for _, q := range slices.Sorted(maps.Keys(c.Vhost.Queues)) {
				for _, r := range []route.Reason{route.Rejected, route.Expired, route.MaxLen} {
					got, want := jsonOf(t, s.DeadLetter(q, r, route.Message{RoutingKey: "k"})), jsonOf(t, plain.DeadLetter(q, r, route.Message{RoutingKey: "k"}))
					if got != want {
						t.Fatalf("seed %d, RabbitMQ %s, dead letters of %s (%s):\nwith shared routes %s\nwithout %s", seed, ver, q, r, got, want)
					}
				}
			}
			shared += route.SharedRoutes(s)
		}
	}
	if shared < 25 {
		t.Errorf("only %d shared results in the random topologies: the test does not exercise them", shared)
	}
}

func trace(t *testing.T, s *route.Simulator, m route.Message) string {
	return jsonOf(t, s.Trace(m, 4))
}

func jsonOf(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestSharedRouteCycles dead-letters from each queue bound to one fanout
// exchange, which is also their dead-letter exchange: each dead letter
// leaves out only the queue it cycled back to, and the shared result is
// not changed by it.
func TestSharedRouteCycles(t *testing.T) {
	v := topology.NewVhost("/")
	v.Exchanges["dlx"] = &topology.Exchange{Name: "dlx", Type: "fanout", Durable: true}
	for _, q := range []string{"q1", "q2", "q3"} {
		v.Queues[q] = &topology.Queue{Name: q, Type: topology.QueueClassic, Durable: true, Arguments: topology.Args{"x-dead-letter-exchange": "dlx"}}
		v.Bindings = append(v.Bindings, &topology.Binding{Source: "dlx", Destination: q, DestinationType: topology.DestQueue})
	}
	s := route.NewWith(v, route.Options{})
	for _, q := range []string{"q1", "q2", "q3"} {
		d := s.DeadLetter(q, route.Expired, route.Message{RoutingKey: "k"})
		want := slices.DeleteFunc([]string{"q1", "q2", "q3"}, func(x string) bool { return x == q })
		if got := d.Result.Queues(); !slices.Equal(got, want) || !slices.Equal(d.Cycles, []string{q}) || len(d.Result.Problems) != 1 {
			t.Errorf("expired from %s: queues %v, cycles %v, problems %q; want %v, cycle [%s] and its one problem", q, got, d.Cycles, d.Result.Problems, want, q)
		}
		if r := s.DeadLetter(q, route.Rejected, route.Message{RoutingKey: "k"}); !slices.Equal(r.Result.Queues(), []string{"q1", "q2", "q3"}) {
			t.Errorf("rejected from %s: queues %v, want all three (a rejection is never a cycle)", q, r.Result.Queues())
		}
	}
	p := s.Publish(route.Message{Exchange: "dlx", RoutingKey: "other"})
	if !slices.Equal(p.Queues(), []string{"q1", "q2", "q3"}) || len(p.Problems) != 0 || p.Message.RoutingKey != "other" {
		t.Errorf("publish to dlx: queues %v, problems %q, key %q; want the three queues, no problem, key other", p.Queues(), p.Problems, p.Message.RoutingKey)
	}
	if route.SharedRoutes(s) != 1 {
		t.Errorf("%d shared results, want 1 (dlx)", route.SharedRoutes(s))
	}
}
