package lint

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mqctl/mqctl/pkg/loader"
	"github.com/mqctl/mqctl/pkg/topology"
)

// unboundedQueue is a topology with one finding of each of MQ101 and MQ301
// on queue "work".
func unboundedQueue() *builder {
	b := newBuilder()
	b.exchange("jobs", "direct")
	b.queue("work", nil)
	b.bind("jobs", "work", "work")
	return b
}

func TestSeverityFromConfig(t *testing.T) {
	b := unboundedQueue()
	b.t.Lint.Rules = map[string]string{"MQ101": "error", "MQ301": "off"}
	fs := b.run(t, Options{})
	if len(fs) != 1 || fs[0].ID != "MQ101" || fs[0].Severity != Error {
		t.Fatalf("want only MQ101 as an error, got %s", describe(fs))
	}
}

func TestSeverityOverrideByName(t *testing.T) {
	b := unboundedQueue()
	b.t.Lint.Rules = map[string]string{"MQ101": "error"}
	fs := b.run(t, Options{Rules: map[string]string{"no-dead-letter-exchange": "info", "unbounded-queue": "warning"}})
	got := map[string]Severity{}
	for _, f := range fs {
		got[f.ID] = f.Severity
	}
	if got["MQ101"] != Info || got["MQ301"] != Warning {
		t.Fatalf("options must override the file: got %v", got)
	}
}

func TestBadConfig(t *testing.T) {
	for _, tc := range []struct {
		rules map[string]string
		want  []string
	}{
		{map[string]string{"MQ999": "off"}, []string{"topology.yaml:3:1", `unknown rule "MQ999"`, "MQ101"}},
		{map[string]string{"MQ101": "loud"}, []string{"lint.rules.MQ101", `unknown severity "loud"`, "off, info, warning or error"}},
	} {
		b := unboundedQueue()
		b.t.Lint = topology.LintConfig{Rules: tc.rules, Pos: topology.Pos{File: "topology.yaml", Line: 3, Col: 1}}
		_, err := Run(b.t, Options{})
		if err == nil {
			t.Fatalf("%v: want an error", tc.rules)
		}
		for _, w := range tc.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%v: error %q lacks %q", tc.rules, err, w)
			}
		}
	}
}

func TestIgnoreComment(t *testing.T) {
	b := unboundedQueue()
	b.v.Queues["work"].Ignore = []string{"MQ101"}
	fs := b.run(t, Options{})
	if len(only(fs, "MQ101")) != 0 {
		t.Errorf("MQ101 is ignored on the queue but reported: %s", describe(fs))
	}
	if len(only(fs, "MQ301")) != 1 {
		t.Errorf("an ignore of MQ101 must not silence MQ301: %s", describe(fs))
	}

	// By rule name, and "all".
	b = unboundedQueue()
	b.v.Queues["work"].Ignore = []string{"unbounded-queue"}
	if fs := b.run(t, Options{}); len(only(fs, "MQ301")) != 0 || len(only(fs, "MQ101")) != 1 {
		t.Errorf("ignore by name: %s", describe(fs))
	}
	b = unboundedQueue()
	b.v.Queues["work"].Ignore = []string{"all"}
	if fs := b.run(t, Options{}); len(fs) != 0 {
		t.Errorf("ignore all: %s", describe(fs))
	}

	// An ignore on one object does not silence the same rule on another.
	b = unboundedQueue()
	b.queue("other", nil)
	b.bind("jobs", "other", "other")
	b.v.Queues["work"].Ignore = []string{"MQ101"}
	fs = only(b.run(t, Options{}), "MQ101")
	if len(fs) != 1 || fs[0].Object.Name != "other" {
		t.Errorf("ignore must apply to its object only: %s", describe(fs))
	}
}

func TestSortedByPositionThenID(t *testing.T) {
	b := newBuilder()
	b.exchange("jobs", "direct")
	b.queue("zeta", nil)
	b.queue("alpha", nil)
	b.bind("jobs", "zeta", "z")
	b.bind("jobs", "alpha", "a")
	b.v.Queues["alpha"].Pos = topology.Pos{} // no position: sorts last
	fs := b.run(t, Options{})
	var got []string
	for _, f := range fs {
		got = append(got, f.Object.Name+" "+f.ID)
	}
	want := []string{"zeta MQ101", "zeta MQ301", "alpha MQ101", "alpha MQ301"}
	if strings.Join(got, ",") != strings.Join(want, ",") {
		t.Errorf("order: got %v, want %v", got, want)
	}
}

func TestEveryVhost(t *testing.T) {
	tp := topology.New()
	for _, name := range []string{"b", "a"} {
		v := tp.Vhost(name)
		v.Queues["q"] = &topology.Queue{Name: "q", Type: topology.QueueClassic, Durable: true}
	}
	fs, err := Run(tp, Options{Rules: map[string]string{"MQ301": "off"}})
	if err != nil {
		t.Fatal(err)
	}
	if len(fs) != 2 || fs[0].Vhost != "a" || fs[1].Vhost != "b" {
		t.Fatalf("want MQ101 in vhost a then b, got %+v", fs)
	}
	if got := fs[0].Location(); got != `vhost "a" queue "q"` {
		t.Errorf("location without a position: %q", got)
	}
}

func TestRegistry(t *testing.T) {
	r := Builtin()
	ids := map[string]bool{}
	for _, a := range r.Analyzers() {
		if !strings.HasPrefix(a.ID, "MQ") || a.Summary == "" {
			t.Errorf("analyzer %s (%s) lacks an MQ ID or a summary", a.ID, a.Name)
		}
		ids[a.ID] = true
	}
	for _, id := range []string{"MQ101", "MQ102", "MQ103", "MQ104", "MQ105", "MQ201", "MQ202", "MQ301", "MQ302",
		"MQ401", "MQ402", "MQ501", "MQ502", "MQ601", "MQ701", "MQ702"} {
		if !ids[id] {
			t.Errorf("SPEC §6 rule %s is not registered", id)
		}
	}
	if a, ok := r.Lookup("dead-letters-unrouted"); !ok || a.ID != "MQ103" {
		t.Errorf("lookup by name: %v %v", a, ok)
	}
	run := func(*Pass) []Finding { return nil }
	if _, err := NewRegistry(&Analyzer{ID: "X1", Name: "x", Severity: Info, Run: run}, &Analyzer{ID: "X1", Name: "y", Severity: Info, Run: run}); err == nil {
		t.Error("a duplicate ID must be refused")
	}
	if _, err := NewRegistry(&Analyzer{ID: "X1", Name: "x", Run: run}); err == nil {
		t.Error("an analyzer without a default severity must be refused")
	}
}

// TestBrokenRetryExample loads testdata/broken-retry/topology.yaml, the
// classic broken retry pattern, and expects MQ201 on both tiers.
func TestBrokenRetryExample(t *testing.T) {
	path := filepath.Join("..", "..", "testdata", "broken-retry", "topology.yaml")
	tp, err := loader.Load([]string{path}, loader.Options{})
	if err != nil {
		var list loader.ErrorList
		if !errors.As(err, &list) && strings.Contains(err.Error(), "being written") {
			t.Skipf("loader not available yet: %v", err)
		}
		t.Fatalf("load %s: %v", path, err)
	}
	fs, err := Run(tp, Options{})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]Finding{}
	for _, f := range only(fs, "MQ201") {
		got[f.Object.Name] = f
	}
	for _, q := range []string{"orders.retry.10s", "orders.retry.1m"} {
		f, ok := got[q]
		if !ok {
			t.Errorf("no MQ201 for %s; findings:\n%s", q, describe(fs))
			continue
		}
		if f.Severity != Error || f.Pos.File != path || f.Pos.Line == 0 {
			t.Errorf("%s: severity %s at %q", q, f.Severity, f.Pos)
		}
		for _, s := range []string{`exchange "orders"`, `"orders.shipping" it matches no binding`, "x-dead-letter-routing-key"} {
			if !strings.Contains(f.Message, s) {
				t.Errorf("%s: message lacks %q: %s", q, s, f.Message)
			}
		}
	}
	if n := len(only(fs, "MQ201")); n != 2 {
		t.Errorf("want exactly 2 MQ201 findings, got %d", n)
	}
}

// bigVhost builds n working queues, each bound to a topic and a direct
// exchange and dead-lettering to its own DLQ through a shared DLX — the
// shape of internal/benchgen, expanded: 2n queues, 3n bindings.
func bigVhost(n int) *topology.Topology {
	tp := topology.New()
	v := tp.Vhost("bench")
	pos := func(line int) topology.Meta {
		return topology.Meta{Pos: topology.Pos{File: "topology.yaml", Line: line, Col: 7}}
	}
	for _, x := range []struct{ name, typ string }{{"events", "topic"}, {"jobs", "direct"}, {"events.dlx", "direct"}} {
		v.Exchanges[x.name] = &topology.Exchange{Name: x.name, Type: x.typ, Durable: true, Meta: pos(1)}
	}
	for i := 0; i < n; i++ {
		name := fmt.Sprintf("svc%03d.q%05d", i%100, i)
		v.Queues[name] = &topology.Queue{Name: name, Type: topology.QueueClassic, Durable: true, Role: topology.RoleWorking, Meta: pos(10 + 2*i),
			Arguments: topology.Args{argDLX: "events.dlx", argDLRK: name, argMaxLen: int64(10000 + i), argOverflow: "reject-publish", argTTL: int64(3600000)}}
		dlq := name + ".dlq"
		v.Queues[dlq] = &topology.Queue{Name: dlq, Type: topology.QueueClassic, Durable: true, Role: topology.RoleDeadLetter, Origin: name, Meta: pos(11 + 2*i)}
		v.Bindings = append(v.Bindings,
			&topology.Binding{Source: "events", Destination: name, DestinationType: topology.DestQueue, RoutingKey: fmt.Sprintf("svc%03d.event%d.#", i%100, i)},
			&topology.Binding{Source: "jobs", Destination: name, DestinationType: topology.DestQueue, RoutingKey: name},
			&topology.Binding{Source: "events.dlx", Destination: dlq, DestinationType: topology.DestQueue, RoutingKey: name},
		)
	}
	return tp
}

func TestLargeVhost(t *testing.T) {
	if testing.Short() {
		t.Skip("large topology: skipped with -short")
	}
	tp := bigVhost(10000)
	fs, err := Run(tp, Options{})
	if err != nil {
		t.Fatal(err)
	}
	// Every DLQ is unbounded (MQ301, info) and nothing else is wrong.
	if len(fs) != 10000 || len(only(fs, "MQ301")) != 10000 {
		e, w, i := Count(fs)
		t.Errorf("want 10000 MQ301 infos on the DLQs, got %d errors, %d warnings, %d infos; first: %s", e, w, i, describe(fs[:min(3, len(fs))]))
	}
}

func BenchmarkLint10k(b *testing.B) {
	tp := bigVhost(10000)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := Run(tp, Options{}); err != nil {
			b.Fatal(err)
		}
	}
}
