package route

import (
	"fmt"
	"testing"

	"github.com/mqctl/mqctl/pkg/rmqversion"
	"github.com/mqctl/mqctl/pkg/topology"
)

// vb builds a vhost in Go for tests.
type vb struct{ v *topology.Vhost }

func vhost() *vb { return &vb{v: topology.NewVhost("/")} }

// a builds an argument table from key, value pairs.
func a(kv ...any) topology.Args {
	out := topology.Args{}
	for i := 0; i+1 < len(kv); i += 2 {
		out[kv[i].(string)] = topology.Normalize(kv[i+1])
	}
	return out
}

func (b *vb) ex(name, typ string, args ...any) *vb {
	b.v.Exchanges[name] = &topology.Exchange{Name: name, Type: typ, Durable: true, Arguments: a(args...).Normalized()}
	return b
}

func (b *vb) internal(name, typ string) *vb {
	b.v.Exchanges[name] = &topology.Exchange{Name: name, Type: typ, Durable: true, Internal: true}
	return b
}

func (b *vb) q(name string, args ...any) *vb { return b.typed(name, topology.QueueClassic, args...) }

func (b *vb) typed(name, typ string, args ...any) *vb {
	b.v.Queues[name] = &topology.Queue{Name: name, Type: typ, Durable: true, Arguments: a(args...).Normalized()}
	return b
}

// bind binds queue dst to exchange src with key and optional arguments.
func (b *vb) bind(src, dst, key string, args ...any) *vb {
	b.v.Bindings = append(b.v.Bindings, &topology.Binding{Source: src, Destination: dst, DestinationType: topology.DestQueue, RoutingKey: key, Arguments: a(args...).Normalized()})
	return b
}

// bindX binds exchange dst to exchange src.
func (b *vb) bindX(src, dst, key string, args ...any) *vb {
	b.v.Bindings = append(b.v.Bindings, &topology.Binding{Source: src, Destination: dst, DestinationType: topology.DestExchange, RoutingKey: key, Arguments: a(args...).Normalized()})
	return b
}

func (b *vb) policy(name, pattern, applyTo string, prio int, def ...any) *vb {
	b.v.Policies[name] = &topology.Policy{Name: name, Pattern: pattern, ApplyTo: applyTo, Priority: prio, Definition: a(def...)}
	return b
}

func (b *vb) opPolicy(name, pattern, applyTo string, prio int, def ...any) *vb {
	b.v.OperatorPolicies[name] = &topology.Policy{Name: name, Pattern: pattern, ApplyTo: applyTo, Priority: prio, Definition: a(def...)}
	return b
}

func (b *vb) sim() *Simulator { return New(b.v) }

// simFor builds a simulator of RabbitMQ version ver ("3.10.8", "4.0").
func (b *vb) simFor(ver string) *Simulator {
	return NewWith(b.v, Options{Version: rmqversion.MustParse(ver)})
}

// deathList renders an x-death list as queue:reason:count, most recent
// first.
func deathList(h map[string]any) []string {
	var out []string
	deaths, _ := h["x-death"].([]any)
	for _, d := range deaths {
		t, _ := d.(map[string]any)
		n, _ := topology.Args(t).Int("count")
		out = append(out, fmt.Sprintf("%v:%v:%d", t["queue"], t["reason"], n))
	}
	return out
}

func msg(exchange, key string, headers ...any) Message {
	m := Message{Exchange: exchange, RoutingKey: key}
	if len(headers) > 0 {
		m.Headers = map[string]any(a(headers...))
	}
	return m
}

func equalStrings(x, y []string) bool {
	if len(x) != len(y) {
		return false
	}
	for i := range x {
		if x[i] != y[i] {
			return false
		}
	}
	return true
}

func wantQueues(t *testing.T, r Result, want ...string) {
	t.Helper()
	if got := r.Queues(); !equalStrings(got, want) {
		t.Errorf("queues = %q, want %q (problems: %q)", got, want, r.Problems)
	}
}
