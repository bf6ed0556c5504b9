package lint

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/mqctl/mqctl/pkg/rmqversion"
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

// objectCase is what some rules (look) say about one object for one
// target version: every finding they make on it, each with the severity
// given, the messages holding contains and none of lacks.
type objectCase struct {
	name     string
	look     []string // the rules looked at
	version  string
	rules    map[string]string // Options.Rules
	build    func(b *builder)
	object   string
	ids      []string // the IDs of its findings, in order; none when empty
	severity Severity
	contains []string
	lacks    []string
}

func (tc objectCase) run(t *testing.T) {
	t.Helper()
	b := newBuilder()
	tc.build(b)
	var got []Finding
	for _, f := range b.run(t, Options{Version: rmqversion.MustParse(tc.version), Rules: tc.rules}) {
		if f.Object.Name == tc.object && slices.Contains(tc.look, f.ID) {
			got = append(got, f)
		}
	}
	var ids, msgs []string
	for _, f := range got {
		ids = append(ids, f.ID)
		msgs = append(msgs, f.Message)
		if f.Severity != tc.severity {
			t.Errorf("%s on %s: severity %s, want %s", f.ID, tc.object, f.Severity, tc.severity)
		}
	}
	if fmt.Sprint(ids) != fmt.Sprint(tc.ids) && (len(ids) > 0 || len(tc.ids) > 0) {
		t.Fatalf("findings on %s: %v, want %v:\n%s", tc.object, ids, tc.ids, describe(got))
	}
	joined := strings.Join(msgs, "\n")
	for _, s := range tc.contains {
		if !strings.Contains(joined, s) {
			t.Errorf("messages lack %q:\n%s", s, joined)
		}
	}
	for _, s := range tc.lacks {
		if strings.Contains(joined, s) {
			t.Errorf("messages say %q:\n%s", s, joined)
		}
	}
}
