package lint

import (
	"testing"

	"github.com/mqctl/mqctl/pkg/topology"
)

// builder builds a one-vhost topology in Go; every object gets the next
// line of a pretend topology.yaml, so findings sort in declaration order.
type builder struct {
	t    *topology.Topology
	v    *topology.Vhost
	line int
}

func newBuilder() *builder {
	t := topology.New()
	return &builder{t: t, v: t.Vhost("/")}
}

func (b *builder) pos() topology.Pos {
	b.line++
	return topology.Pos{File: "topology.yaml", Line: b.line, Col: 7}
}

func (b *builder) exchange(name, typ string) *topology.Exchange {
	x := &topology.Exchange{Name: name, Type: typ, Durable: true, Meta: topology.Meta{Pos: b.pos()}}
	b.v.Exchanges[name] = x
	return x
}

// queue declares a durable classic queue with the given arguments.
func (b *builder) queue(name string, args topology.Args) *topology.Queue {
	q := &topology.Queue{Name: name, Type: topology.QueueClassic, Durable: true, Arguments: args.Normalized(), Role: topology.RoleWorking, Meta: topology.Meta{Pos: b.pos()}}
	b.v.Queues[name] = q
	return q
}

func (b *builder) typed(name, typ string, args topology.Args) *topology.Queue {
	q := b.queue(name, args)
	q.Type = typ
	return q
}

func (b *builder) bind(source, queue, key string) *topology.Binding {
	bd := &topology.Binding{Source: source, Destination: queue, DestinationType: topology.DestQueue, RoutingKey: key, Meta: topology.Meta{Pos: b.pos()}}
	b.v.Bindings = append(b.v.Bindings, bd)
	return bd
}

func (b *builder) policy(name, pattern string, def topology.Args) *topology.Policy {
	p := &topology.Policy{Name: name, Pattern: pattern, ApplyTo: "queues", Definition: def.Normalized(), Meta: topology.Meta{Pos: b.pos()}}
	b.v.Policies[name] = p
	return p
}

// dlqPair declares a working queue bound to exchange src with key, dead-
// lettering to dlx with its own name as routing key, and its DLQ bound to
// dlx for that key — what the dead_letter.queue sugar expands into.
func (b *builder) dlqPair(name, src, key, dlx string, extra topology.Args) (*topology.Queue, *topology.Queue) {
	args := topology.Args{argDLX: dlx, argDLRK: name}
	for k, v := range extra {
		args[k] = v
	}
	w := b.queue(name, args)
	if src != "" {
		b.bind(src, name, key)
	}
	d := b.queue(name+".dlq", nil)
	d.Role, d.Origin = topology.RoleDeadLetter, name
	b.bind(dlx, name+".dlq", name)
	return w, d
}

func (b *builder) run(t *testing.T, opts Options) []Finding {
	t.Helper()
	fs, err := Run(b.t, opts)
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	return fs
}

func only(fs []Finding, id string) []Finding {
	var out []Finding
	for _, f := range fs {
		if f.ID == id {
			out = append(out, f)
		}
	}
	return out
}
